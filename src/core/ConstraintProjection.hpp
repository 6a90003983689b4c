// ConstraintProjection.hpp — projection of initial data onto the constraint
// manifold  M = { (q, p) : g(q) = 0,  G(q) H_p(q, p) = 0 }  (HLW §VII.1.1),
// and the allocation-free minimum-norm solver it shares with RATTLE.
//
// Redundant or momentarily dependent constraints ("singular
// configurations", where G(q) loses rank) make the multiplier systems rank-deficient; there the
// minimum-norm multipliers x = A^+ b of a rank-revealing complete orthogonal
// decomposition still satisfy the (consistent) constraints, and a constraint
// listed twice acts exactly like the constraint listed once.
#ifndef ODEPKG_CONSTRAINT_PROJECTION_HPP
#define ODEPKG_CONSTRAINT_PROJECTION_HPP

#include "HamiltonianProblem.hpp"
#include "Types.hpp"
#include "constrained/SparseGramSolver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

/// x = A^+ b for a square n x n matrix A through Eigen's complete orthogonal
/// decomposition A P = Q [T11 0; 0 0] Z.  All storage is sized in the
/// constructor; compute() and solve() do not allocate (Eigen's own
/// COD::solve would).  Pivots below `threshold` times the largest count as zero.
class MinNormSolver {
 public:
  explicit MinNormSolver(int n, double threshold = 1e-10)
      : n_(n), cod_(n, n), c_(n), y_(n), threshold_(threshold) {
    cod_.setThreshold(threshold);
  }

  /// Factorize A; returns false if A is not finite.
  bool compute(const Eigen::Ref<const Mat>& A) {
    if (!A.allFinite()) return false;
    if (n_ == 1) return compute_scalar(A(0, 0));
    cod_.compute(A);
    rank_ = static_cast<int>(cod_.rank());
    // Condition estimate: ratio of the largest kept pivot to the smallest
    // kept one (full rank) or to the first dropped one (rank-deficient).
    const Mat& qtz = cod_.matrixQTZ();
    double big = 0.0, small = std::numeric_limits<double>::infinity();
    for (int i = 0; i < rank_; ++i) {
      big = std::max(big, std::abs(qtz(i, i)));
      small = std::min(small, std::abs(qtz(i, i)));
    }
    if (rank_ < n_) small = std::abs(qtz(rank_, rank_));
    cond_ = rank_ == 0 ? std::numeric_limits<double>::infinity()
                       : (small > 0.0 ? big / small : std::numeric_limits<double>::infinity());
    return true;
  }

  /// Pivots below this fraction of the largest count as zero (next compute).
  void set_threshold(double threshold) {
    cod_.setThreshold(threshold);
    threshold_ = threshold;
  }

  int rank() const { return rank_; }
  bool rank_deficient() const { return rank_ < n_; }
  double condition_estimate() const { return cond_; }

  /// x = A^+ b (the minimum-norm least-squares solution).  x may alias b.
  void solve(const ConstVecRef& b, VecRef x) {
    const int r = rank_;
    if (r == 0) {
      x.setZero();
      return;
    }
    if (n_ == 1) {
      x(0) = b(0) / a_;
      return;
    }
    const Mat& qtz = cod_.matrixQTZ();
    // c = Q^T b = H_{n-1} ... H_0 b; only c(0:r) is needed.
    c_ = b;
    for (int i = 0; i < r; ++i)
      reflect(c_.tail(n_ - i), qtz.col(i).tail(n_ - i - 1), cod_.hCoeffs()(i));
    // z = T11^{-1} c(0:r)
    qtz.topLeftCorner(r, r).triangularView<Eigen::Upper>().solveInPlace(c_.head(r));
    // y = Z^T [z; 0]  (as COD::applyZAdjointOnTheLeftInPlace)
    y_.head(r) = c_.head(r);
    y_.tail(n_ - r).setZero();
    if (r < n_) {
      for (int k = 0; k < r; ++k) {
        if (k != r - 1) std::swap(y_(k), y_(r - 1));
        reflect(y_.segment(r - 1, n_ - r + 1), qtz.row(k).tail(n_ - r).transpose(),
                cod_.zCoeffs()(k));
        if (k != r - 1) std::swap(y_(k), y_(r - 1));
      }
    }
    // x = P y
    const auto& perm = cod_.colsPermutation().indices();
    for (int i = 0; i < n_; ++i) x(perm(i)) = y_(i);
  }

 private:
  /// The 1 x 1 case (one constraint) without the decomposition, with its
  /// results: Eigen's column-pivoted QR of [a] is [a] itself (no
  /// reflection: tau = 0), its rank |a| > threshold |a|, its solve b / a.
  bool compute_scalar(double a) {
    a_ = a;
    rank_ = std::abs(a) > std::abs(a) * threshold_ ? 1 : 0;
    cond_ = rank_ == 1 ? 1.0 : std::numeric_limits<double>::infinity();
    return true;
  }

  /// x <- (I - tau v v^T) x with v = [1; essential], without temporaries
  /// (Eigen's applyHouseholderOnTheLeft allocates for strided essentials).
  template <class Seg, class Ess>
  static void reflect(Seg&& x, const Ess& essential, double tau) {
    if (tau == 0.0) return;
    const Eigen::Index k = x.size() - 1;
    const double w = tau * (x(0) + (k > 0 ? essential.dot(x.tail(k)) : 0.0));
    x(0) -= w;
    if (k > 0) x.tail(k) -= w * essential;
  }

  int n_;
  Eigen::CompleteOrthogonalDecomposition<Mat> cod_;
  Vec c_, y_;
  double threshold_;
  double a_ = 0.0;  // n = 1: the matrix
  int rank_ = 0;
  double cond_ = 1.0;
};

/// Residuals of initial data before and after projection.
struct ProjectionResult {
  double g_before = 0.0;        ///< ||g(q)||_inf before
  double hidden_before = 0.0;   ///< ||G(q) H_p(q, p)||_inf before
  double g_after = 0.0;         ///< ... after
  double hidden_after = 0.0;
  /// What hidden_before may be off by through a differenced G (0 with
  /// ConstraintGradFcn): a bound on |(G_fd - G) H_p|.
  double hidden_accuracy = 0.0;
  int iterations = 0;           ///< Gauss-Newton + Newton iterations used
  bool converged = false;       ///< both residuals <= tol
  bool rank_deficient = false;  ///< a rank-deficient G G^T or G H_pp G^T was met
  bool finite = true;           ///< false if a callback returned NaN/Inf
};

inline ProjectionResult project_onto_manifold_sparse(HamiltonianProblem& problem, double t, VecRef x,
                                                     double tol, int max_iterations);

/// Project x = [q; p] onto M (in place):
///   q <- q - G^T (G G^T)^+ g(q)               (Gauss-Newton, until |g| <= tol),
///   p <- p - G^T nu,  G H_p(q, p - G^T nu) = 0 (Newton with G H_pp G^T).
/// Allocates (it runs once, before the integration).
inline ProjectionResult project_onto_manifold(HamiltonianProblem& problem, double t, VecRef x,
                                              double tol = 1e-13, int max_iterations = 30) {
  ProjectionResult res;
  const int d = problem.dim(), m = problem.constraints();
  if (m == 0) {
    res.converged = true;
    return res;
  }
  if (problem.has_sparse_constraint_grad()) return project_onto_manifold_sparse(problem, t, x, tol, max_iterations);
  Vec gv(m), nu(m), hid(m), f(2 * d);
  Mat G(m, d), A(m, m), Hpp(d, d);
  MinNormSolver solver(m);
  auto q = x.head(d);
  auto p = x.tail(d);
  auto fail = [&]() {
    res.finite = false;
    return res;
  };
  // Residuals of the data as given.
  if (!problem.constraint(q, gv) || !problem.constraint_grad(q, G) || !problem.field(t, x, f))
    return fail();
  hid.noalias() = G * f.head(d);
  res.g_before = res.g_after = gv.lpNorm<Eigen::Infinity>();
  res.hidden_before = hid.lpNorm<Eigen::Infinity>();
  res.hidden_accuracy = problem.constraint_grad_error(f.head(d));
  // Positions: Gauss-Newton q <- q - G^T (G G^T)^+ g.
  bool moved = false;
  while (res.g_after > tol && res.iterations < max_iterations) {
    if (moved && !problem.constraint_grad(q, G)) return fail();
    A.noalias() = G * G.transpose();
    solver.compute(A);
    res.rank_deficient |= solver.rank_deficient();
    solver.solve(gv, nu);
    q.noalias() -= G.transpose() * nu;
    moved = true;
    ++res.iterations;
    if (!problem.constraint(q, gv)) return fail();
    res.g_after = gv.lpNorm<Eigen::Infinity>();
  }
  // Momenta: Newton on nu for G H_p(q, p - G^T nu) = 0, Jacobian -G H_pp G^T.
  if (moved) {
    if (!problem.constraint_grad(q, G) || !problem.field(t, x, f)) return fail();
    hid.noalias() = G * f.head(d);
  }
  res.hidden_after = hid.lpNorm<Eigen::Infinity>();
  bool have_jac = false;
  int it = 0;
  while (res.hidden_after > tol && it < max_iterations) {
    if (!have_jac) {
      if (!problem.field_jacobian_block(t, x, 0, 1, Hpp)) return fail();
      A.noalias() = G * Hpp * G.transpose();
      solver.compute(A);
      res.rank_deficient |= solver.rank_deficient();
      have_jac = true;
    }
    solver.solve(hid, nu);
    p.noalias() -= G.transpose() * nu;
    ++it;
    if (!problem.field(t, x, f)) return fail();
    hid.noalias() = G * f.head(d);
    res.hidden_after = hid.lpNorm<Eigen::Infinity>();
  }
  res.iterations += it;
  res.converged = res.g_after <= tol && res.hidden_after <= tol;
  return res;
}

/// project_onto_manifold for a sparse G, in O(nnz(G) + d) memory: the
/// same Gauss-Newton on q with K = G G^T, then Newton on the momenta with
/// K = G W G^T, W the diagonal of H_pp from one probe of f (2 calls; exact
/// for diagonal masses, a simplified Newton otherwise), both factorized by
/// the sparse LDL^T of SparseGramSolver (tiny pivots dropped and reported
/// as rank deficiency).  Unlike the dense one, both iterations also stop
/// when a step no longer halves the residual: at the round-off of g, about
/// eps |q| (10^-12 for a 10^4-link chain), tol = 1e-13 cannot be reached,
/// and 30 iterations, each a call of G, would be spent for nothing.
inline ProjectionResult project_onto_manifold_sparse(HamiltonianProblem& problem, double t, VecRef x,
                                                     double tol, int max_iterations) {
  const SingleThreadedEigen single;
  ProjectionResult res;
  const int d = problem.dim(), m = problem.constraints();
  Vec gv(m), nu(m), hid(m), f(2 * d), f2(2 * d), x2(2 * d), w = Vec::Ones(d);
  SpMat G;
  SparseGramSolver solver;
  auto q = x.head(d);
  auto p = x.tail(d);
  auto fail = [&]() {
    res.finite = false;
    return res;
  };
  if (!problem.constraint(q, gv) || !problem.constraint_grad_sparse(q, G) || !problem.field(t, x, f))
    return fail();
  hid.noalias() = G * f.head(d);
  res.g_before = res.g_after = gv.lpNorm<Eigen::Infinity>();
  res.hidden_before = hid.lpNorm<Eigen::Infinity>();
  bool moved = false;
  while (res.g_after > tol && res.iterations < max_iterations) {
    if (moved && !problem.constraint_grad_sparse(q, G)) return fail();
    if (!solver.factor(G, w)) return fail();
    res.rank_deficient |= solver.rank_deficient();
    solver.solve(gv, nu);
    q.noalias() -= G.transpose() * nu;
    moved = true;
    ++res.iterations;
    if (!problem.constraint(q, gv)) return fail();
    const double before = res.g_after;
    res.g_after = gv.lpNorm<Eigen::Infinity>();
    if (!(res.g_after < 0.5 * before)) break;  // at the round-off of g (large |q|): no further progress
  }
  if (moved) {
    if (!problem.constraint_grad_sparse(q, G) || !problem.field(t, x, f)) return fail();
    hid.noalias() = G * f.head(d);
  }
  res.hidden_after = hid.lpNorm<Eigen::Infinity>();
  bool have_jac = false;
  int it = 0;
  while (res.hidden_after > tol && it < max_iterations) {
    if (!have_jac) {
      x2 = x;
      for (int i = 0; i < d; ++i) x2(d + i) += std::max(1.0, std::abs(x(d + i)));
      if (!problem.field(t, x2, f2)) return fail();
      for (int i = 0; i < d; ++i) w(i) = (f2(i) - f(i)) / (x2(d + i) - x(d + i));
      const double wmax = w.maxCoeff();
      for (int i = 0; i < d; ++i)
        if (!(w(i) > 0.0)) w(i) = wmax > 0.0 ? wmax : 1.0;
      if (!solver.factor(G, w)) return fail();
      res.rank_deficient |= solver.rank_deficient();
      have_jac = true;
    }
    solver.solve(hid, nu);
    p.noalias() -= G.transpose() * nu;
    ++it;
    if (!problem.field(t, x, f)) return fail();
    hid.noalias() = G * f.head(d);
    const double before = res.hidden_after;
    res.hidden_after = hid.lpNorm<Eigen::Infinity>();
    if (!(res.hidden_after < 0.5 * before)) break;
  }
  res.iterations += it;
  res.converged = res.g_after <= tol && res.hidden_after <= tol;
  return res;
}

}  // namespace odepkg

#endif
