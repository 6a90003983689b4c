// SchurLU.hpp — the Schur complement S = Bt J⁻¹ B_nᵀ of RATTLie's Newton
// system in (Ω, λ) (SparseRattLie), formed sparse and factorized by a
// sparse LU: S = C B_nᵀ with C = Bt P, P = T(hΩ) J⁻¹ block diagonal (C's
// column blocks by BlockRightProduct), O(nnz) for a chain (S is then block
// tridiagonal).  Once per pattern of (C, B_n): the pattern of S, the place
// in the LU's values of every product C(i, j) B_n(l, j) that sums into
// S(i, l), and the LU's ordering and fill (FixedPatternLU); a factorization
// then sums the products into those places and factorizes in place, with
// no allocation.
#ifndef ODEPKG_LIE_SCHUR_LU_HPP
#define ODEPKG_LIE_SCHUR_LU_HPP

#include "../FixedPatternLU.hpp"
#include "../SparsePatternUnion.hpp"
#include "BlockDiagonal.hpp"
#include "BlockRightProduct.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace odepkg::lie {

class SchurLU {
 public:
  /// Forms S = (Bex P) B0ᵀ, P = T Jinv (as blocks), and factorizes it;
  /// false if S is singular to working precision or not finite.
  bool factor(const SpMat& Bex, const BlockDiagonal& T, const BlockDiagonal& Jinv, const SpMat& B0,
              const std::vector<int>& sizes) {
    if (P_.blocks() != T.blocks()) P_ = BlockDiagonal(sizes);
    for (int b = 0; b < T.blocks(); ++b) P_.block(b).noalias() = T.block(b) * Jinv.block(b);
    const SpMat& C = BP_.compute(Bex, sizes, [this](int b) { return P_.block(b); });
    if (!analysed_ || !SparsePatternUnion::same_pattern(C, Cpattern_) ||
        !SparsePatternUnion::same_pattern(B0, B0pattern_))
      analyse(C, B0);
    lu_.zero();
    double* s = lu_.values();
    const int *co = C.outerIndexPtr(), *bo = B0.outerIndexPtr();
    const double *cv = C.valuePtr(), *bv = B0.valuePtr();
    const int* place = place_.data();
    for (int j = 0; j < C.outerSize(); ++j)
      for (int eb = bo[j]; eb < bo[j + 1]; ++eb) {
        const double b = bv[eb];
        for (int ec = co[j]; ec < co[j + 1]; ++ec) s[*place++] += cv[ec] * b;
      }
    if (!lu_.factorize()) return false;
    ++factorizations_;
    return true;
  }
  bool valid() const { return lu_.valid(); }
  /// x = S⁻¹ r for the factorized S (x may alias r).
  void solve(const ConstVecRef& r, VecRef x) { lu_.solve(r, x); }
  long factorizations() const { return factorizations_; }
  /// Symbolic analyses (one per pattern of B).
  long analyses() const { return analyses_; }

 private:
  /// S's pattern (the pairs (i, l) of C(i, j) B0(l, j)), the LU's analysis
  /// of it, and place_: for each product, in the order factor() sums them,
  /// its place in the LU's values.
  void analyse(const SpMat& C, const SpMat& B0) {
    Cpattern_ = C;
    B0pattern_ = B0;
    std::vector<Eigen::Triplet<double, int>> entries;
    for (int j = 0; j < C.outerSize(); ++j)
      for (SpMat::InnerIterator b(B0, j); b; ++b)
        for (SpMat::InnerIterator c(C, j); c; ++c) entries.emplace_back(c.row(), b.row(), 1.0);
    SpMat S(C.rows(), B0.rows());
    S.setFromTriplets(entries.begin(), entries.end());
    lu_.analyse(S);
    place_.clear();
    for (const auto& e : entries) place_.push_back(lu_.position(e.row(), e.col()));
    analysed_ = true;
    ++analyses_;
  }

  BlockDiagonal P_;
  BlockRightProduct BP_;
  SpMat Cpattern_, B0pattern_;
  FixedPatternLU lu_;
  std::vector<int> place_;
  bool analysed_ = false;
  long factorizations_ = 0, analyses_ = 0;
};

}  // namespace odepkg::lie

#endif
