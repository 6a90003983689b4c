// StructureChecks.hpp — the assumptions of McLachlan, Modin, Verdier, Wilkins
// 2014 checked at the initial
// data, and the projection of initial data onto M_H:
//   coisotropy (Assumption 2, Prop. 3.5): {g_i, g_j} = 0 on M;
//   nondegeneracy (Assumption 1, Lemma 3.11): {g_i, {g_j, H}} invertible on M_H;
//   projection: onto M orthogonally (fibres lie inside M, so they cannot
//   reach it), then along the fibre exp(sigma X_g) onto M_H (Cor. 2.9).
// These run once, before the integration; they may allocate.
#ifndef ODEPKG_CONSTRAINED_STRUCTURE_CHECKS_HPP
#define ODEPKG_CONSTRAINED_STRUCTURE_CHECKS_HPP

#include "ConstraintProjection.hpp"
#include "constrained/ConstraintSet.hpp"
#include "constrained/FibreMap.hpp"

#include <cmath>
#include <limits>

namespace odepkg {

/// {a, b} = a_q . b_p - a_p . b_q for gradients a, b of length 2d.
inline double poisson_bracket(const ConstVecRef& a, const ConstVecRef& b) {
  const int d = static_cast<int>(a.size()) / 2;
  return a.head(d).dot(b.tail(d)) - a.tail(d).dot(b.head(d));
}

struct BracketCheck {
  double value = 0.0;  ///< largest |{g_i, g_j}(y)|
  int i = 0, j = 0;    ///< where (zero-based)
  double scale = 1.0;  ///< max_i |grad g_i|^2, to judge `value` against
};

/// Largest |{g_i, g_j}(y)| over i < j (0 for m = 1: one constraint is always coisotropic).
inline BracketCheck max_constraint_bracket(ConstraintSet& g, const ConstVecRef& y) {
  const int m = g.count(), n = 2 * g.dim();
  Mat Dg(m, n);
  BracketCheck c;
  if (!g.grad(y, Dg)) {
    c.value = std::numeric_limits<double>::quiet_NaN();
    return c;
  }
  for (int i = 0; i < m; ++i) c.scale = std::max(c.scale, Dg.row(i).squaredNorm());
  for (int i = 0; i < m; ++i)
    for (int j = i + 1; j < m; ++j) {
      const double b = std::abs(poisson_bracket(Dg.row(i).transpose(), Dg.row(j).transpose()));
      if (b > c.value) c = {b, i, j, c.scale};
    }
  return c;
}

/// M_ij = {{g_i, H}, g_j}(y) = (H_i f + Df^T grad g_i) . X_{g_j}, the
/// derivative of the hidden constraints along the fibre (Lemma 3.11).
inline bool hidden_constraint_matrix(HamiltonianProblem& problem, ConstraintSet& g, double t,
                                     const ConstVecRef& y, MatRef M) {
  const int d = g.dim(), n = 2 * d, m = g.count();
  Vec f(n);
  Mat Dg(m, n), Hg(n, n * m), hess(n, n), W(n, m);
  if (!problem.field(t, y, f) || !g.grad(y, Dg) || !g.hess(y, Hg) || !problem.hamiltonian_hessian(t, y, f, hess))
    return false;
  W.topRows(d) = Dg.rightCols(d).transpose();
  W.bottomRows(d) = -Dg.leftCols(d).transpose();
  const Mat V = hess * W;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      M(i, j) = f.dot(Hg.middleCols(i * n, n) * W.col(j)) + Dg.row(i).head(d).dot(V.col(j).tail(d)) -
                Dg.row(i).tail(d).dot(V.col(j).head(d));
  return M.allFinite();
}

/// Condition of {g_i, {g_j, H}}(y) measured against the natural size of its
/// entries, scale = |Dg|^2 |Hess H| + |Dg| |Hg| |f| (so that m = 1 is judged
/// too): max(sigma_max, scale) / sigma_min; infinity where it is singular
/// (Assumption 1 fails), NaN on non-finite callbacks.
inline double hidden_matrix_condition(HamiltonianProblem& problem, ConstraintSet& g, double t,
                                      const ConstVecRef& y) {
  const int n = 2 * g.dim(), m = g.count();
  Mat M(m, m), Dg(m, n), Hg(n, n * m), hess(n, n);
  Vec f(n);
  if (!hidden_constraint_matrix(problem, g, t, y, M)) return std::numeric_limits<double>::quiet_NaN();
  if (!problem.field(t, y, f) || !g.grad(y, Dg) || !g.hess(y, Hg) || !problem.hamiltonian_hessian(t, y, f, hess))
    return std::numeric_limits<double>::quiet_NaN();
  const double dg = Dg.norm();
  const double scale = dg * dg * hess.norm() + dg * Hg.norm() * f.norm();
  Eigen::JacobiSVD<Mat> svd(M);
  const auto sv = svd.singularValues();
  const double big = std::max(sv(0), scale), small = sv(m - 1);
  if (!(small > std::numeric_limits<double>::epsilon() * big)) return std::numeric_limits<double>::infinity();
  return big / small;
}

/// Gauss–Newton onto M: y <- y - Dg^T (Dg Dg^T)^+ g until |g| <= tol max(1, |y|).
/// Fills g_before/g_after/iterations/rank_deficient/finite of `res`.
inline void project_onto_constraints(ConstraintSet& g, VecRef y, ProjectionResult& res, double tol = 1e-13,
                                     int max_iterations = 30) {
  const int n = 2 * g.dim(), m = g.count();
  Vec gv(m), nu(m);
  Mat Dg(m, n), A(m, m);
  MinNormSolver solver(m);
  if (!g.value(y, gv) || !g.grad(y, Dg)) {
    res.finite = false;
    return;
  }
  res.g_before = res.g_after = gv.lpNorm<Eigen::Infinity>();
  const double scale = std::max(1.0, y.lpNorm<Eigen::Infinity>());
  while (res.g_after > tol * scale && res.iterations < max_iterations) {
    A.noalias() = Dg * Dg.transpose();
    solver.compute(A);
    res.rank_deficient |= solver.rank_deficient();
    solver.solve(gv, nu);
    y.noalias() -= Dg.transpose() * nu;
    ++res.iterations;
    if (!g.value(y, gv) || !g.grad(y, Dg)) {
      res.finite = false;
      return;
    }
    res.g_after = gv.lpNorm<Eigen::Infinity>();
  }
}

/// Newton along the fibre, y <- exp(sigma X_g) y with {g, H} = Dg f = 0 (the
/// matrix of Lemma 3.11 at the start).  Fills hidden_before/hidden_after.
inline void slide_onto_hidden_manifold(HamiltonianProblem& problem, ConstraintSet& g, FibreMap& fibre, double t,
                                       VecRef y, ProjectionResult& res, double tol = 1e-13,
                                       int max_iterations = 30) {
  const int n = 2 * g.dim(), m = g.count();
  Vec r(m), f(n), z(n), sigma = Vec::Zero(m), ds(m);
  Mat Dg(m, n), M(m, m);
  MinNormSolver solver(m);
  auto hidden = [&](const ConstVecRef& x) {
    if (!problem.field(t, x, f) || !g.grad(x, Dg)) return false;
    r.noalias() = Dg * f;
    return true;
  };
  if (!hidden(y)) {
    res.finite = false;
    return;
  }
  res.hidden_before = res.hidden_after = r.lpNorm<Eigen::Infinity>();
  const double scale = std::max(1.0, Dg.cwiseAbs().rowwise().sum().maxCoeff() * f.lpNorm<Eigen::Infinity>());
  if (res.hidden_after <= tol * scale) return;
  if (!hidden_constraint_matrix(problem, g, t, y, M)) {
    res.finite = false;
    return;
  }
  solver.compute(M);
  res.rank_deficient |= solver.rank_deficient();
  z = y;
  for (int it = 0; it < max_iterations && res.hidden_after > tol * scale; ++it) {
    solver.solve(r, ds);
    sigma -= ds;
    if (!fibre.flow(y, sigma, z) || !hidden(z)) {
      res.finite = false;
      return;
    }
    res.hidden_after = r.lpNorm<Eigen::Infinity>();
    ++res.iterations;
  }
  y = z;
}

/// Project y onto M_H = {g = 0, Dg f = 0} in place: orthogonally onto M
/// (the fibres lie inside M and cannot reach it), then along the fibre.
inline ProjectionResult project_onto_hidden_manifold(HamiltonianProblem& problem, ConstraintSet& g,
                                                     FibreMap& fibre, double t, VecRef y,
                                                     double tol = 1e-13, int max_iterations = 30) {
  ProjectionResult res;
  project_onto_constraints(g, y, res, tol, max_iterations);
  if (!res.finite) return res;
  slide_onto_hidden_manifold(problem, g, fibre, t, y, res, tol, max_iterations);
  if (!res.finite) return res;
  Vec gv(g.count());
  if (!g.value(y, gv)) {
    res.finite = false;
    return res;
  }
  res.g_after = gv.lpNorm<Eigen::Infinity>();
  const double scale = std::max(1.0, y.lpNorm<Eigen::Infinity>());
  res.converged = res.g_after <= 10 * tol * scale && res.hidden_after <= 10 * tol * scale * scale;
  return res;
}

}  // namespace odepkg

#endif
