// EnsembleProblem.hpp — one Hamiltonian system, K independent trajectories
// ("members"), its callbacks called once per stage on many members at a
// time: the meaning MATLAB's `Vectorized` gives to f.
//
// States are the columns of an n x k matrix (n = 2d, [q; p] per column,
// k <= K the members stepped together).  f(t, X) returns n x k, column j the
// field at X(:, j); g(Q) (Q = d x k) returns m x k; G(Q) returns the k
// Jacobians side by side, m x (d k) (the column-major layout of Octave's
// m x d x k array).  Without G, G is taken by central differences of g: 2d
// calls, each moving coordinate i of every member at once (the members are
// independent, so one call serves all of them).
#ifndef ODEPKG_ENSEMBLE_PROBLEM_HPP
#define ODEPKG_ENSEMBLE_PROBLEM_HPP

#include "DerivativeCheck.hpp"
#include "Interrupt.hpp"
#include "Types.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace odepkg::ensemble {

using ConstMatRef = Eigen::Ref<const Mat>;

/// Counters of an ensemble run: batched calls, and the member evaluations
/// they carried (calls x members per call).
struct EnsembleStats {
  long steps = 0;               ///< accepted (common) steps
  long rejected = 0;            ///< rejected step attempts (step doubling, failures)
  long field_calls = 0;         ///< calls of f (each on several members)
  long field_members = 0;       ///< member evaluations of f
  long constraint_calls = 0;    ///< calls of ConstraintFcn
  long constraint_members = 0;
  long grad_calls = 0;          ///< calls of ConstraintGradFcn
  long grad_members = 0;
  long event_calls = 0;         ///< calls of the Events function
  long newton_solves = 0;       ///< member solves (one per member and step)
  long newton_iterations = 0;   ///< summed over the members
  long newton_max_iterations = 0;
  long rank_deficient = 0;      ///< member multiplier systems found singular
  long failed_members = 0;
  /// max |G(q_1) H_p(p_1)| over the accepted RATTLE steps (computed from
  /// the step's own G and velocity model, so exact up to round-off)
  double max_hidden_residual = 0.0;
};

class EnsembleProblem {
 public:
  using Field = std::function<void(double t, const ConstMatRef& X, MatRef DX)>;
  using Constraint = std::function<void(const ConstMatRef& Q, MatRef g)>;
  using ConstraintGrad = std::function<void(const ConstMatRef& Q, MatRef G)>;

  EnsembleProblem(int d, int members, Field f) : d_(d), K_(members), f_(std::move(f)) {
    if (d < 1) throw InputError("invalidInput", "the dimension d of q must be at least 1");
    if (members < 1) throw InputError("invalidInput", "an ensemble needs at least one member");
  }

  void set_constraints(int m, Constraint g, ConstraintGrad G) {
    if (m < 1 || m >= d_)
      throw InputError("invalidInput", "the number of constraints must satisfy 1 <= m < d");
    m_ = m;
    g_ = std::move(g);
    G_ = std::move(G);
    // the workspace of differenced gradients, sized once for all K members
    if (!G_) {
      q_pert_.resize(d_, K_);
      g_plus_.resize(m_, K_);
      g_minus_.resize(m_, K_);
    }
  }

  int dim() const { return d_; }
  int members() const { return K_; }
  int constraints() const { return m_; }
  bool has_constraint_grad() const { return static_cast<bool>(G_); }
  EnsembleStats& stats() { return stats_; }
  const EnsembleStats& stats() const { return stats_; }

  /// DX = f(t, X) for the k = X.cols() members in X.
  void field(double t, const ConstMatRef& X, MatRef DX) {
    poll_interrupt();
    ++stats_.field_calls;
    stats_.field_members += X.cols();
    f_(t, X, DX);
  }

  void constraint(const ConstMatRef& Q, MatRef g) {
    poll_interrupt();
    ++stats_.constraint_calls;
    stats_.constraint_members += Q.cols();
    g_(Q, g);
  }

  /// G (m x d k): the user's, or central differences of g with the step of
  /// HamiltonianProblem::constraint_grad (eps^(1/3) max(1, |q_i|)).
  void constraint_grad(const ConstMatRef& Q, MatRef G) {
    if (G_) {
      poll_interrupt();
      ++stats_.grad_calls;
      stats_.grad_members += Q.cols();
      G_(Q, G);
      return;
    }
    const Eigen::Index k = Q.cols();
    auto qp = q_pert_.leftCols(k);
    auto gp = g_plus_.leftCols(k);
    auto gm = g_minus_.leftCols(k);
    for (int i = 0; i < d_; ++i) {
      qp = Q;
      for (Eigen::Index j = 0; j < k; ++j) qp(i, j) = Q(i, j) + DerivativeCheck::step(std::abs(Q(i, j)));
      constraint(qp, gp);
      for (Eigen::Index j = 0; j < k; ++j) qp(i, j) = Q(i, j) - DerivativeCheck::step(std::abs(Q(i, j)));
      constraint(qp, gm);
      for (Eigen::Index j = 0; j < k; ++j) {
        const double up = Q(i, j) + DerivativeCheck::step(std::abs(Q(i, j)));
        const double span = up - qp(i, j);  // the step actually taken
        G.col(j * d_ + i) = (gp.col(j) - gm.col(j)) / span;
      }
    }
  }

 private:
  int d_, K_;
  int m_ = 0;
  Field f_;
  Constraint g_;
  ConstraintGrad G_;
  EnsembleStats stats_;
  Mat q_pert_, g_plus_, g_minus_;
};

/// True if column j of A is all finite.
inline bool column_finite(const ConstMatRef& A, Eigen::Index j) {
  const double* a = A.data() + j * A.outerStride();  // no Block: this runs per member and step
  double zero = 0.0;
  for (Eigen::Index i = 0; i < A.rows(); ++i) zero += a[i] * 0.0;
  return zero == 0.0;
}

}  // namespace odepkg::ensemble

#endif
