// EnsembleProblem.hpp — one Hamiltonian system, K independent trajectories
// ("members"), its callbacks called once per stage on many members at a
// time: the meaning MATLAB's `Vectorized` gives to f.
//
// The user's functions always see all K members, column j member j, so that
// a member's parameters can live in the user's own arrays (L(j) for the
// pendulum of member j): f(t, X) with X = n x K (n = 2d, [q; p] per column)
// returns n x K; g(Q) (Q = d x K) returns m x K; G(Q) returns the K
// Jacobians side by side, m x (d K) (the column-major layout of Octave's
// m x d x K array).  The methods ask for a subset of the members (those
// still in a Newton iteration, the one whose event is located): the other
// columns then hold those members' current states (the "background", set
// by the integrator), and only the subset's results are used.  Without G, G
// is taken by central differences of g: 2d calls, each moving coordinate i
// of every member at once (the members are independent).
#ifndef ODEPKG_ENSEMBLE_PROBLEM_HPP
#define ODEPKG_ENSEMBLE_PROBLEM_HPP

#include "DerivativeCheck.hpp"
#include "Interrupt.hpp"
#include "ensemble/MemberThreads.hpp"
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
  long newton_retries = 0;      ///< member steps whose position solve was retried (globalised Newton)
  long distant_roots = 0;       ///< member roots rejected as far from the unconstrained step
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
    full_x_.resize(2 * d, members);
    full_f_.resize(2 * d, members);
  }

  /// The members' current states (n x K), for the columns a call on a
  /// subset does not set.  Must stay valid until the next call.
  void set_background(const Mat* X) { background_ = X; }

  void set_constraints(int m, Constraint g, ConstraintGrad G) {
    if (m < 1 || m >= d_)
      throw InputError("invalidInput", "the number of constraints must satisfy 1 <= m < d");
    m_ = m;
    g_ = std::move(g);
    G_ = std::move(G);
    // the workspace of differenced gradients, sized once for all K members
    full_q_.resize(d_, K_);
    full_g_.resize(m_, K_);
    full_G_.resize(m_, d_ * K_);
    if (!G_) {
      q_pert_.resize(d_, K_);
      g_plus_.resize(m_, K_);
      g_minus_.resize(m_, K_);
    }
  }

  /// f of one member alone, f(context, t, j, x, out) for member j (x and
  /// out 2d numbers), callable for different members at once (a compiled
  /// model: NativeModel.h): a method may then run its per-member work, f
  /// included, across `threads` (EnsembleSplitting).  The batched Field
  /// stays the one the other callers use.
  using MemberField = void (*)(const void* context, double t, int j, const double* x, double* out);
  void set_member_field(MemberField f, const void* context, MemberThreads* threads) {
    member_f_ = f;
    member_context_ = context;
    threads_ = threads;
  }
  bool has_member_field() const { return member_f_ != nullptr && threads_ != nullptr; }
  MemberThreads* threads() const { return threads_; }
  /// One batched call's worth of member_field calls: polled and counted as
  /// field() counts them (on the calling thread, before they run).
  void count_member_field_call() {
    poll_interrupt();
    ++stats_.field_calls;
    stats_.field_members += K_;
  }
  void member_field(double t, int j, const double* x, double* out) const { member_f_(member_context_, t, j, x, out); }

  int dim() const { return d_; }
  int members() const { return K_; }
  int constraints() const { return m_; }
  bool has_constraint_grad() const { return static_cast<bool>(G_); }
  EnsembleStats& stats() { return stats_; }
  const EnsembleStats& stats() const { return stats_; }

  /// DX = f(t, X) for the k = X.cols() members ids[0..k-1] (null: all K
  /// in order).
  void field(double t, const ConstMatRef& X, MatRef DX, const int* ids = nullptr) {
    poll_interrupt();
    ++stats_.field_calls;
    stats_.field_members += K_;
    if (all_members(X.cols(), ids)) {
      f_(t, X, DX);
      return;
    }
    full_x_ = background();
    for (Eigen::Index u = 0; u < X.cols(); ++u) full_x_.col(ids[u]) = X.col(u);
    f_(t, full_x_, full_f_);
    for (Eigen::Index u = 0; u < X.cols(); ++u) DX.col(u) = full_f_.col(ids[u]);
  }

  /// g (m x k) at the positions Q (d x k) of the members ids.
  void constraint(const ConstMatRef& Q, MatRef g, const int* ids = nullptr) {
    poll_interrupt();
    ++stats_.constraint_calls;
    stats_.constraint_members += K_;
    if (all_members(Q.cols(), ids)) {
      g_(Q, g);
      return;
    }
    full_q_ = background().topRows(d_);
    for (Eigen::Index u = 0; u < Q.cols(); ++u) full_q_.col(ids[u]) = Q.col(u);
    g_(full_q_, full_g_);
    for (Eigen::Index u = 0; u < Q.cols(); ++u) g.col(u) = full_g_.col(ids[u]);
  }

  /// G (m x d k): the user's, or central differences of g with the step of
  /// HamiltonianProblem::constraint_grad (eps^(1/3) max(1, |q_i|)).
  void constraint_grad(const ConstMatRef& Q, MatRef G, const int* ids = nullptr) {
    const Eigen::Index k = Q.cols();
    if (G_) {
      poll_interrupt();
      ++stats_.grad_calls;
      stats_.grad_members += K_;
      if (all_members(k, ids)) {
        G_(Q, G);
        return;
      }
      full_q_ = background().topRows(d_);
      for (Eigen::Index u = 0; u < k; ++u) full_q_.col(ids[u]) = Q.col(u);
      G_(full_q_, full_G_);
      for (Eigen::Index u = 0; u < k; ++u) G.middleCols(u * d_, d_) = full_G_.middleCols(ids[u] * d_, d_);
      return;
    }
    auto qp = q_pert_.leftCols(k);
    auto gp = g_plus_.leftCols(k);
    auto gm = g_minus_.leftCols(k);
    for (int i = 0; i < d_; ++i) {
      qp = Q;
      for (Eigen::Index j = 0; j < k; ++j) qp(i, j) = Q(i, j) + DerivativeCheck::step(std::abs(Q(i, j)));
      constraint(qp, gp, ids);
      for (Eigen::Index j = 0; j < k; ++j) qp(i, j) = Q(i, j) - DerivativeCheck::step(std::abs(Q(i, j)));
      constraint(qp, gm, ids);
      for (Eigen::Index j = 0; j < k; ++j) {
        const double up = Q(i, j) + DerivativeCheck::step(std::abs(Q(i, j)));
        const double span = up - qp(i, j);  // the step actually taken
        G.col(j * d_ + i) = (gp.col(j) - gm.col(j)) / span;
      }
    }
  }

 private:
  /// k = K and ids 0..K-1 (or null): the call needs no background.
  bool all_members(Eigen::Index k, const int* ids) const {
    if (k != K_) {
      if (!ids || !background_) throw EigenAssertion("EnsembleProblem: a subset call without ids or background");
      return false;
    }
    if (ids)
      for (int u = 0; u < K_; ++u)
        if (ids[u] != u) throw EigenAssertion("EnsembleProblem: K members out of order");
    return true;
  }
  const Mat& background() const { return *background_; }

  int d_, K_;
  int m_ = 0;
  Field f_;
  Constraint g_;
  ConstraintGrad G_;
  EnsembleStats stats_;
  Mat q_pert_, g_plus_, g_minus_;
  const Mat* background_ = nullptr;
  Mat full_x_, full_f_, full_q_, full_g_, full_G_;
  MemberField member_f_ = nullptr;
  const void* member_context_ = nullptr;
  MemberThreads* threads_ = nullptr;
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
