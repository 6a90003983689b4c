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

/// Projects y = [q; v] in place when a residual exceeds tol (relative to
/// max(1, |q|∞) for Φ, max(1, |v|∞) for B v).
inline LieProjectionResult project_initial_data_sparse(LieGroupProblem& lp, VecRef y, double tol,
                                                       int max_iterations);

inline LieProjectionResult project_initial_data(LieGroupProblem& lp, VecRef y, double tol = 1e-13,
                                                int max_iterations = 30) {
  if (lp.has_sparse_constraint_grad()) return project_initial_data_sparse(lp, y, tol, max_iterations);
  LieProjectionResult r;
  const int nq = lp.nq(), n = lp.n(), m = lp.constraints();
  if (m == 0) {
    r.converged = true;
    return r;
  }
  Vec phi(m), sigma(m), w(n), q1(nq);
  Mat B(m, n), X(n, m), S(m, m);
  MinNormSolver ms(m);
  auto q = y.head(nq);
  auto v = y.tail(n);
  const Mat& Minv = lp.mass_inverse();
  auto normal_solve = [&](const Vec& rhs, Vec& out) {
    X.noalias() = Minv * B.transpose();
    S.noalias() = B * X;
    if (!ms.compute(S)) return false;
    ms.solve(rhs, sigma);
    out.noalias() = X * sigma;  // M⁻¹Bᵀ(BM⁻¹Bᵀ)⁺ rhs
    return true;
  };
  if (!lp.constraint(q, phi) || !lp.constraint_grad(q, B)) {
    r.finite = false;
    return r;
  }
  r.phi_before = phi.lpNorm<Eigen::Infinity>();
  r.hidden_before = (B * v).lpNorm<Eigen::Infinity>();
  const double tol_q = tol * std::max(1.0, q.lpNorm<Eigen::Infinity>());
  const double tol_v = tol * std::max(1.0, v.lpNorm<Eigen::Infinity>());
  bool moved = false;
  for (int it = 0; it < max_iterations && phi.lpNorm<Eigen::Infinity>() > tol_q; ++it) {
    if (!normal_solve(phi, w)) {
      r.finite = false;
      return r;
    }
    w = -w;
    lp.group().compose_exp(q, w, q1);
    q = q1;
    moved = true;
    if (!lp.constraint(q, phi) || !lp.constraint_grad(q, B)) {
      r.finite = false;
      return r;
    }
  }
  r.phi_after = phi.lpNorm<Eigen::Infinity>();
  Vec bv = B * v;
  if (moved || bv.lpNorm<Eigen::Infinity>() > tol_v) {
    Vec dv(n);
    if (!normal_solve(bv, dv)) {
      r.finite = false;
      return r;
    }
    v -= dv;
    bv = B * v;
  }
  r.hidden_after = bv.lpNorm<Eigen::Infinity>();
  r.converged = r.phi_after <= 10 * tol_q && r.hidden_after <= 10 * tol_v;
  return r;
}

/// project_initial_data for a sparse B (LieGroupProblem::constraint_grad_sparse).
inline LieProjectionResult project_initial_data_sparse(LieGroupProblem& lp, VecRef y, double tol,
                                                       int max_iterations) {
  LieProjectionResult r;
  const int nq = lp.nq(), n = lp.n(), m = lp.constraints();
  const SingleThreadedEigen single;
  Vec phi(m), sigma(m), w(n), u(n), q1(nq), bv(m);
  SpMat B;
  LieGram K(lp.block_mass(), 1e-10);
  auto q = y.head(nq);
  auto v = y.tail(n);
  // out = M⁻¹Bᵀ(BM⁻¹Bᵀ)⁺ rhs
  auto normal_solve = [&](const Vec& rhs, Vec& out) {
    if (!K.valid() && !K.factor(B)) return false;
    K.solve(rhs, sigma);
    u.noalias() = B.transpose() * sigma;
    lp.block_mass().solve(u, out);
    return out.allFinite();
  };
  auto evaluate = [&]() {
    K.invalidate();
    return lp.constraint(q, phi) && lp.constraint_grad_sparse(q, B);
  };
  if (!evaluate()) {
    r.finite = false;
    return r;
  }
  r.phi_before = phi.lpNorm<Eigen::Infinity>();
  bv.noalias() = B * v;
  r.hidden_before = bv.lpNorm<Eigen::Infinity>();
  const double tol_q = tol * std::max(1.0, q.lpNorm<Eigen::Infinity>());
  const double tol_v = tol * std::max(1.0, v.lpNorm<Eigen::Infinity>());
  bool moved = false;
  for (int it = 0; it < max_iterations && phi.lpNorm<Eigen::Infinity>() > tol_q; ++it) {
    if (!normal_solve(phi, w)) {
      r.finite = false;
      return r;
    }
    w = -w;
    lp.group().compose_exp(q, w, q1);
    q = q1;
    moved = true;
    if (!evaluate()) {
      r.finite = false;
      return r;
    }
  }
  r.phi_after = phi.lpNorm<Eigen::Infinity>();
  bv.noalias() = B * v;
  // two projections when the first leaves more than round-off (dropped
  // pivots of an ill-conditioned K)
  for (int k = 0; k < 2 && (moved || bv.lpNorm<Eigen::Infinity>() > tol_v); ++k) {
    if (!normal_solve(bv, w)) {
      r.finite = false;
      return r;
    }
    v -= w;
    bv.noalias() = B * v;
    if (bv.lpNorm<Eigen::Infinity>() <= 0.1 * tol_v) break;
  }
  r.hidden_after = bv.lpNorm<Eigen::Infinity>();
  r.converged = r.phi_after <= 10 * tol_q && r.hidden_after <= 10 * tol_v;
  return r;
}

}  // namespace odepkg::lie

#endif
