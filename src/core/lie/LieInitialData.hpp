// LieInitialData.hpp — consistent initial data for odeRATTLie: Φ(q0) = 0 and
// B(q0) v0 = 0.  Off the manifold, q0 moves along the group by M-orthogonal
// Gauss–Newton steps q ← q ∘ exp(−M⁻¹Bᵀ(BM⁻¹Bᵀ)⁺ Φ) (minimum-norm in the
// kinetic metric, so q0 stays on G exactly), and v0 is projected
// M-orthogonally onto ker B: v ← v − M⁻¹Bᵀ(BM⁻¹Bᵀ)⁺ B v.  With a sparse B
// the same in O(nnz(B) + n): BM⁻¹Bᵀ by a sparse LDLᵀ (LieGram), its tiny
// pivots dropped (a solution of the consistent singular system: M⁻¹Bᵀx is
// the same for all of them).
#ifndef ODEPKG_LIE_LIE_INITIAL_DATA_HPP
#define ODEPKG_LIE_LIE_INITIAL_DATA_HPP

#include "../ConstraintProjection.hpp"
#include "LieGram.hpp"
#include "LieGroupProblem.hpp"

#include <algorithm>

namespace odepkg::lie {

struct LieProjectionResult {
  double phi_before = 0.0, hidden_before = 0.0;  ///< |Φ(q0)|, |B(q0) v0| before
  double phi_after = 0.0, hidden_after = 0.0;    ///< ... after
  bool converged = false;
  bool finite = true;
};

/// The normal-equation solves of the projection with a dense B:
/// (BM⁻¹Bᵀ)⁺ by a complete orthogonal decomposition (minimum-norm).
class DenseNormalSolve {
 public:
  explicit DenseNormalSolve(LieGroupProblem& lp)
      : lp_(lp), B_(lp.constraints(), lp.n()), X_(lp.n(), lp.constraints()), S_(lp.constraints(), lp.constraints()),
        ms_(lp.constraints()), sigma_(lp.constraints()) {}
  /// Φ(q) and B(q); false if not finite.
  bool evaluate(const ConstVecRef& q, Vec& phi) {
    valid_ = false;
    return lp_.constraint(q, phi) && lp_.constraint_grad(q, B_);
  }
  void apply(const ConstVecRef& v, Vec& bv) const { bv.noalias() = B_ * v; }
  /// out = M⁻¹Bᵀ(BM⁻¹Bᵀ)⁺ rhs.
  bool solve(const Vec& rhs, Vec& out) {
    if (!valid_) {
      X_.noalias() = lp_.mass_inverse() * B_.transpose();
      S_.noalias() = B_ * X_;
      if (!(valid_ = ms_.compute(S_))) return false;
    }
    ms_.solve(rhs, sigma_);
    out.noalias() = X_ * sigma_;
    return out.allFinite();
  }

 private:
  LieGroupProblem& lp_;
  Mat B_, X_, S_;
  MinNormSolver ms_;
  Vec sigma_;
  bool valid_ = false;
};

/// The same with a sparse B (LieGroupProblem::constraint_grad_sparse) and
/// a block M, in O(nnz(B) + n): BM⁻¹Bᵀ by LieGram.
class SparseNormalSolve {
 public:
  explicit SparseNormalSolve(LieGroupProblem& lp)
      : lp_(lp), K_(lp.block_mass(), 1e-10), sigma_(lp.constraints()), u_(lp.n()) {}
  bool evaluate(const ConstVecRef& q, Vec& phi) {
    K_.invalidate();
    return lp_.constraint(q, phi) && lp_.constraint_grad_sparse(q, B_);
  }
  void apply(const ConstVecRef& v, Vec& bv) const { bv.noalias() = B_ * v; }
  bool solve(const Vec& rhs, Vec& out) {
    if (!K_.valid() && !K_.factor(B_)) return false;
    K_.solve(rhs, sigma_);
    u_.noalias() = B_.transpose() * sigma_;
    lp_.block_mass().solve(u_, out);
    return out.allFinite();
  }

 private:
  LieGroupProblem& lp_;
  SpMat B_;
  LieGram K_;
  Vec sigma_, u_;
};

/// Projects y = [q; v] in place when a residual exceeds tol (relative to
/// max(1, |q|∞) for Φ, max(1, |v|∞) for B v), with the normal solves of
/// `normal` (DenseNormalSolve, SparseNormalSolve).
template <class NormalSolve>
LieProjectionResult project_along_group(LieGroupProblem& lp, NormalSolve& normal, VecRef y, double tol,
                                        int max_iterations) {
  LieProjectionResult r;
  Vec phi(lp.constraints()), bv(lp.constraints()), w(lp.n()), q1(lp.nq());
  auto q = y.head(lp.nq());
  auto v = y.tail(lp.n());
  if (!normal.evaluate(q, phi)) {
    r.finite = false;
    return r;
  }
  r.phi_before = phi.lpNorm<Eigen::Infinity>();
  normal.apply(v, bv);
  r.hidden_before = bv.lpNorm<Eigen::Infinity>();
  const double tol_q = tol * std::max(1.0, q.lpNorm<Eigen::Infinity>());
  const double tol_v = tol * std::max(1.0, v.lpNorm<Eigen::Infinity>());
  bool moved = false;
  for (int it = 0; it < max_iterations && phi.lpNorm<Eigen::Infinity>() > tol_q; ++it) {
    if (!normal.solve(phi, w)) {
      r.finite = false;
      return r;
    }
    w = -w;
    lp.group().compose_exp(q, w, q1);
    q = q1;
    moved = true;
    if (!normal.evaluate(q, phi)) {
      r.finite = false;
      return r;
    }
  }
  r.phi_after = phi.lpNorm<Eigen::Infinity>();
  normal.apply(v, bv);
  // a second projection when the first leaves more than round-off (the
  // dropped pivots of an ill-conditioned sparse K)
  for (int k = 0; k < 2 && (moved || bv.lpNorm<Eigen::Infinity>() > tol_v); ++k) {
    if (!normal.solve(bv, w)) {
      r.finite = false;
      return r;
    }
    v -= w;
    normal.apply(v, bv);
    if (bv.lpNorm<Eigen::Infinity>() <= 0.1 * tol_v) break;
  }
  r.hidden_after = bv.lpNorm<Eigen::Infinity>();
  r.converged = r.phi_after <= 10 * tol_q && r.hidden_after <= 10 * tol_v;
  return r;
}

/// project_along_group with B dense or sparse as the problem gives it.
inline LieProjectionResult project_initial_data(LieGroupProblem& lp, VecRef y, double tol = 1e-13,
                                                int max_iterations = 30) {
  if (lp.constraints() == 0) {
    LieProjectionResult r;
    r.converged = true;
    return r;
  }
  if (lp.has_sparse_constraint_grad()) {
    const SingleThreadedEigen single;
    SparseNormalSolve normal(lp);
    return project_along_group(lp, normal, y, tol, max_iterations);
  }
  DenseNormalSolve normal(lp);
  return project_along_group(lp, normal, y, tol, max_iterations);
}

}  // namespace odepkg::lie

#endif
