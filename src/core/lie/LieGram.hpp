// LieGram.hpp — the multiplier matrix K = B M⁻¹ Bᵀ (m x m) of a Lie-group
// problem with a sparse B and a block-diagonal M (BlockMass), factorized by
// SparseGramSolver (sparse LDLᵀ, banded for a chain; tiny pivots dropped
// and reported as rank deficiency).  K = G diag(w) Gᵀ with G = B, w the
// diagonal of M⁻¹ for a diagonal M, else G = B L, M⁻¹ = L Lᵀ block by block
// (BlockRightProduct), w = 1.  O(nnz(B) · block size) per factorization.
//
// Rank deficiency (redundant constraints) with the AMD ordering: Eigen's
// SimplicialLDLT divides by the tiny pivot before the solve can drop it,
// so the later columns of L carry 1/pivot and a solution picks up a huge
// component in the null space of Bᵀ (measured 1e15 on a pin listed twice),
// whose product with Bᵀ then loses all digits.  From the first such
// factorization on, K + δI is factorized instead (the columns √δ I
// appended to G), δ = kShift · max_i K_ii: positive definite, its pivots
// bounded below, the null component of a solution δ⁻¹ times the round-off
// of b; the range components err by δ/λ_i relatively, which the callers'
// refinement sweeps remove.  A pivot below kDeficient · δ is then counted as
// rank deficiency.  (The banded LDLᵀ zeroes a dropped pivot's column as it
// goes and needs none of this.)
#ifndef ODEPKG_LIE_LIE_GRAM_HPP
#define ODEPKG_LIE_LIE_GRAM_HPP

#include "../constrained/SparseGramSolver.hpp"
#include "BlockMass.hpp"
#include "BlockRightProduct.hpp"

#include <cmath>
#include <limits>

namespace odepkg::lie {

class LieGram {
 public:
  LieGram(const BlockMass& M, double tol) : M_(M), K_(tol) {
    if (M_.diagonal())
      w_ = M_.inverse_diagonal();
    else
      w_ = Vec::Ones(M_.n());
  }

  static constexpr double kShift = 1e-8;
  static constexpr double kDeficient = 100.0;

  /// Factorizes K = B M⁻¹ Bᵀ; false if not finite.
  bool factor(const SpMat& B) {
    const SpMat& G = M_.diagonal() ? B : BL_.compute(B, M_.sizes(), [this](int b) { return M_.inverse_factor(b); });
    if (!shifted_) {
      if (!K_.factor(G, w_)) return false;
      if (!K_.rank_deficient() || K_.natural_ordering()) return true;
      shifted_ = true;
    }
    // K + δI = [G, √δ I] diag(w, 1) [G, √δ I]ᵀ
    const int m = static_cast<int>(G.rows()), n = static_cast<int>(G.cols());
    double kmax = 0.0;
    rows_.setZero(m);
    for (int j = 0; j < n; ++j)
      for (SpMat::InnerIterator it(G, j); it; ++it) rows_(it.row()) += w_(j) * it.value() * it.value();
    kmax = rows_.size() ? rows_.maxCoeff() : 0.0;
    const double delta = kShift * (kmax > 0.0 ? kmax : 1.0);
    Gs_.resize(m, n + m);
    Gs_.resizeNonZeros(G.nonZeros() + m);
    std::copy(G.outerIndexPtr(), G.outerIndexPtr() + n + 1, Gs_.outerIndexPtr());
    std::copy(G.innerIndexPtr(), G.innerIndexPtr() + G.nonZeros(), Gs_.innerIndexPtr());
    std::copy(G.valuePtr(), G.valuePtr() + G.nonZeros(), Gs_.valuePtr());
    for (int i = 0; i < m; ++i) {
      Gs_.outerIndexPtr()[n + i + 1] = static_cast<int>(G.nonZeros()) + i + 1;
      Gs_.innerIndexPtr()[G.nonZeros() + i] = i;
      Gs_.valuePtr()[G.nonZeros() + i] = std::sqrt(delta);
    }
    ws_.resize(n + m);
    ws_.head(n) = w_;
    ws_.tail(m).setOnes();
    if (!K_.factor(Gs_, ws_)) return false;
    deficient_ = K_.condition_estimate() > 1.0 / (kDeficient * kShift);  // a pivot below 100 δ
    return true;
  }
  /// x = K⁺ b (x may alias b).
  void solve(const ConstVecRef& b, VecRef x) { K_.solve(b, x); }
  bool valid() const { return K_.valid(); }
  void invalidate() { K_.invalidate(); }
  bool rank_deficient() const { return shifted_ ? deficient_ : K_.rank_deficient(); }
  double condition_estimate() const {
    return shifted_ && deficient_ ? std::numeric_limits<double>::infinity() : K_.condition_estimate();
  }

 private:
  const BlockMass& M_;
  SparseGramSolver K_;
  BlockRightProduct BL_;
  Vec w_, ws_, rows_;
  SpMat Gs_;                 ///< [G, √δ I] in the shifted mode
  bool shifted_ = false, deficient_ = false;
};

}  // namespace odepkg::lie

#endif
