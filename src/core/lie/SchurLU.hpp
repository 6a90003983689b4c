// SchurLU.hpp — the Schur complement S = Bt J⁻¹ B_nᵀ of RATTLie's Newton
// system in (Ω, λ) (SparseRattLie), formed sparse and factorized by a
// sparse LU: S = (Bt P) B_nᵀ with P = T(hΩ) J⁻¹ block diagonal (the column
// blocks of Bt P by BlockRightProduct), O(nnz) for a chain (S is then
// block tridiagonal).  Eigen's SparseLU with the COLAMD ordering: the
// symbolic analysis once per pattern of S (fixed while the pattern of B is),
// the numeric factorization when asked for.
#ifndef ODEPKG_LIE_SCHUR_LU_HPP
#define ODEPKG_LIE_SCHUR_LU_HPP

#include "../SparsePatternUnion.hpp"
#include "BlockDiagonal.hpp"
#include "BlockRightProduct.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseLU>

namespace odepkg::lie {

class SchurLU {
 public:
  /// Forms S = (Bt P) B0ᵀ, Bt = Bex T (T, J⁻¹ as blocks), and factorizes
  /// it; false if S is singular to working precision or not finite.
  bool factor(const SpMat& Bex, const BlockDiagonal& T, const BlockDiagonal& Jinv, const SpMat& B0,
              const std::vector<int>& sizes) {
    valid_ = false;
    for (int b = 0; b < T.blocks(); ++b) {
      if (P_.blocks() != T.blocks()) P_ = BlockDiagonal(sizes);
      P_.block(b).noalias() = T.block(b) * Jinv.block(b);
    }
    const SpMat& C = BP_.compute(Bex, sizes, [this](int b) { return P_.block(b); });
    B0t_ = B0.transpose();
    S_ = C * B0t_;
    S_.makeCompressed();
    if (!Eigen::Map<const Vec>(S_.valuePtr(), S_.nonZeros()).allFinite()) return false;
    if (!analysed_ || !SparsePatternUnion::same_pattern(S_, pattern_)) {
      lu_.analyzePattern(S_);
      pattern_ = S_;
      analysed_ = true;
    }
    lu_.factorize(S_);
    if (lu_.info() != Eigen::Success) return false;
    ++factorizations_;
    valid_ = true;
    return true;
  }
  bool valid() const { return valid_; }
  void invalidate() { valid_ = false; }
  /// x = S⁻¹ r for the factorized S.
  void solve(const ConstVecRef& r, VecRef x) { x = lu_.solve(r); }
  /// The factorized S (for the residual r − S x).
  const SpMat& matrix() const { return S_; }
  long factorizations() const { return factorizations_; }

 private:
  BlockDiagonal P_;
  BlockRightProduct BP_;
  SpMat B0t_, S_, pattern_;
  Eigen::SparseLU<SpMat, Eigen::COLAMDOrdering<int>> lu_;
  bool analysed_ = false, valid_ = false;
  long factorizations_ = 0;
};

}  // namespace odepkg::lie

#endif
