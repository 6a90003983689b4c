// StormerVerlet.hpp — Störmer–Verlet (HLW (VI.3.4)), order 2, symmetric and
// symplectic:
//   p_{n+1/2} = p_n + h/2 f_p(t_n, q_n, p_{n+1/2})
//   q_{n+1}   = q_n + h/2 (f_q(t_n, q_n, p_{n+1/2}) + f_q(t_{n+1}, q_{n+1}, p_{n+1/2}))
//   p_{n+1}   = p_{n+1/2} + h/2 f_p(t_{n+1}, q_{n+1}, p_{n+1/2})
// Explicit (separable H = T(p) + V(q)): one call of f per step when T is
// quadratic (AffineVelocity predicts H_p(p_{n+1/2}) and the call for the
// force at q_{n+1}, reused by the next step, checks it); two otherwise — one
// for H_p(p_{n+1/2}), one for the force.  With a combined f(t, [q; p]) and a
// general T two calls are the minimum: each yields H_p or H_q at a point that
// depends on the previous call's result.
// The claim of separability is verified (SeparabilityProbe): probed before
// the first step (check_claims, 2 calls), again when the velocity model's
// check fails (2 calls, once), and for free on every two-call step, whose
// first call gives the force at q_n with a new p (a mismatch is probed).
// Implicit (general H): Newton on p_{n+1/2}, then on q_{n+1}; the values of f
// needed afterwards come from Newton's last residual evaluation.
// Compensated summation (explicit scheme): q_{n+1} = q_n + h H_p(p_{n+1/2})
// and p_{n+1} = p_n + h/2 (f_p(q_n) + f_p(q_{n+1})) are summed with the
// compensation of Point::comp (CompensatedSum.hpp); p_{n+1/2}, an
// intermediate value, is not.
#ifndef ODEPKG_STORMER_VERLET_HPP
#define ODEPKG_STORMER_VERLET_HPP

#include "unconstrained/AffineVelocity.hpp"
#include "unconstrained/CompensatedSum.hpp"
#include "Finite.hpp"
#include "unconstrained/ImplicitStage.hpp"
#include "unconstrained/SeparabilityProbe.hpp"
#include "Stepper.hpp"
#include "unconstrained/ClosingHalfKick.hpp"

namespace odepkg {

class StormerVerlet final : public Stepper {
 public:
  StormerVerlet(HamiltonianProblem& problem, bool explicit_scheme,
                NewtonSolver::Options newton = NewtonSolver::Options())
      : Stepper(problem),
        explicit_(explicit_scheme),
        // Newton's d x d matrices only for the implicit scheme (O(d) memory
        // for the explicit one).
        stage_p_(explicit_scheme ? 0 : problem.dim(), &problem.stats(), newton),
        stage_q_(explicit_scheme ? 0 : problem.dim(), &problem.stats(), newton),
        work_(problem.state_size()),
        y_(problem.state_size()),
        P_(problem.dim()),
        Q_(problem.dim()),
        phi_(problem.dim()),
        a_(problem.dim()),
        fq0_(problem.dim()),
        dp_(Vec::Zero(problem.dim())),
        dq_(Vec::Zero(problem.dim())),
        increment_(problem.dim()),
        q_comp_(problem.dim()),
        velocity_(problem.dim()),
        separability_(problem.dim()) {
    if (!explicit_) velocity_.disable();
  }

  const char* name() const override { return "stormer_verlet"; }
  void check_claims(double t, const ConstVecRef& x, const ConstVecRef& fx) override {
    if (!explicit_) return;
    const SeparabilityProbe::Finding r = separability_.probe(problem_, t, x, fx);
    if (!r.separable) SeparabilityProbe::refuse(r);
  }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }
  /// Both schemes check to.x before returning Success.
  bool checks_finite_state() const override { return true; }
  void reset() override {
    stage_p_.reset();
    stage_q_.reset();
    dp_.setZero();
    dq_.setZero();
  }

  StepStatus step(Point& from, double h, Point& to) override {
    return explicit_ ? step_explicit(from, h, to) : step_implicit(from, h, to);
  }

  /// The explicit scheme only (the implicit one's sums are Newton's).
  bool set_compensated_summation(bool on) override {
    compensated_ = on && explicit_;
    return !on || explicit_;
  }

 private:
  // The explicit scheme runs once per step (per stage of a composition) on
  // vectors of d numbers: plain loops over the storage, whose sizes are
  // fixed at construction and checked once per step (require_sizes), and
  // no Eigen block expressions, each of which costs a call with its own
  // run-time checks (the checks stay on: EigenConfig.hpp).  The arithmetic
  // is the same, operation by operation, as the vector expressions'.
  // The usual step (a learned velocity model, no compensation) is kept
  // apart from the others so that it stays small: one call of f, three
  // loops over d.
  StepStatus step_explicit(Point& from, double h, Point& to) {
    const int d = problem_.dim();
    if (!ensure_force(from, work_)) return StepStatus::NonFinite;
    require_sizes(from, to, d);
    to.t = from.t + h;
    const bool predicted = velocity_.prepare(problem_, from.t, from.x);
    if (!predicted || compensated_) return step_explicit_other(from, h, to, predicted);
    const double* x0 = from.x.data();
    double* y = y_.data();
    // One call: H_p(p_{n+1/2}) predicted, checked by the call at q_{n+1}.
    velocity_.kick_drift(x0 + d, 0.5 * h, from.force.data(), y + d, h, x0, y);  // p_{n+1/2}, q_{n+1}
    // Unchecked: confirm() checks H_p, finish_plain() the state the force moves.
    problem_.field_unchecked(to.t, y_view_, work_view_);
    if (velocity_.confirm(y + d, work_.data())) return finish_plain(to, h);
    if (!velocity_.active()) recheck(to.t);  // the model failed: H_p moved with q?
    return step_two_calls(from, h, to);
  }

  /// The explicit step without a velocity model, or compensated.
  StepStatus step_explicit_other(Point& from, double h, Point& to, bool predicted) {
    const int d = problem_.dim();
    const double half = 0.5 * h;
    const double* x0 = from.x.data();
    const double* f0 = from.force.data();
    double* y = y_.data();
    for (int i = 0; i < d; ++i) y[d + i] = x0[d + i] + half * f0[i];  // p_{n+1/2}
    if (predicted) {
      for (int i = 0; i < d; ++i) y[i] = x0[i];
      move_q(from, h, velocity_.predict(y + d).data());  // q_{n+1}
      problem_.field_unchecked(to.t, y_view_, work_view_);
      if (velocity_.confirm(y + d, work_.data())) return finish(from, to, h);
      if (!velocity_.active()) recheck(to.t);
    }
    return step_two_calls(from, h, to);
  }

  /// From y_.tail = p_{n+1/2}: H_p there, then the force at q_{n+1}.
  StepStatus step_two_calls(Point& from, double h, Point& to) {
    const int d = problem_.dim();
    const double* x0 = from.x.data();
    double* y = y_.data();
    for (int i = 0; i < d; ++i) y[i] = x0[i];  // q_n (again, if the model failed)
    if (!problem_.field(from.t + 0.5 * h, y_view_, work_view_)) return StepStatus::NonFinite;
    // the force at q_n again, with p_{n+1/2}: unchanged for separable H
    if (compare_forces_ && !SeparabilityProbe::agree(from.force, work_.tail(d))) {
      recheck(from.t + 0.5 * h);
      compare_forces_ = false;  // separable there: the force depends on t
    }
    move_q(from, h, work_.data());                             // q_{n+1}
    if (!problem_.field(to.t, y_view_, work_view_)) return StepStatus::NonFinite;
    return finish(from, to, h);
  }

  /// The points of a step hold 2d numbers, the start's force d: a caller's
  /// bug otherwise, thrown like Eigen's checks rather than read past the
  /// end.  The end's force is sized here if it has never been (a default
  /// Point), as the vector assignment did.
  static void require_sizes(const Point& from, Point& to, Eigen::Index d) {
    if (from.x.size() != 2 * d || to.x.size() != 2 * d || from.force.size() != d)
      throw EigenAssertion("StormerVerlet: a point of the wrong size");
    if (to.force.size() != d) to.force.resize(d);
  }

  /// y_.head = q_{n+1} = q_n + h v (y_.head holds q_n; v[0 .. d-1]);
  /// compensated, its rounding error goes to q_comp_ until finish() hands
  /// it to the point.
  void move_q(const Point& from, double h, const double* v) {
    const int d = problem_.dim();
    double* y = y_.data();
    if (!compensated_) {
      for (int i = 0; i < d; ++i) y[i] += h * v[i];
      return;
    }
    increment_ = h * Eigen::Map<const Vec>(v, d);
    compensated_add(from.x.head(d), from.comp.head(d), increment_, y_.head(d), q_comp_);
  }

  /// p_{n+1} = p_{n+1/2} + h/2 f_p(t_{n+1}, q_{n+1}), with y_ = [q_{n+1};
  /// p_{n+1/2}] and work_ = f there; the force is kept for the next step.
  /// Compensated: p_{n+1} = p_n + h/2 (f_p(q_n) + f_p(q_{n+1})).
  StepStatus finish(const Point& from, Point& to, double h) {
    if (!compensated_) return finish_plain(to, h);
    const int d = problem_.dim();
    const double* y = y_.data();
    const double* f1 = work_.data() + d;
    double* force = to.force.data();
    double* x1 = to.x.data();
    for (int i = 0; i < d; ++i) {
      force[i] = f1[i];
      x1[i] = y[i];
    }
    to.has_force = true;
    to.comp.head(d) = q_comp_;
    increment_ = (0.5 * h) * (from.force + to.force);
    compensated_add(from.x.tail(d), from.comp.tail(d), increment_, to.x.tail(d), to.comp.tail(d));
    return all_finite(to.x) ? StepStatus::Success : StepStatus::NonFinite;
  }

  /// finish() without compensation, to.x checked in the same pass.
  StepStatus finish_plain(Point& to, double h) {
    const int d = problem_.dim();
    const double half = 0.5 * h;
    const double* y = y_.data();
    return closing_half_kick(y, work_.data() + d, half, d, to);
  }

  /// Probe at (t, y_), work_ = f(t, y_) (2 calls); a coupling ends the run.
  void recheck(double t) {
    const SeparabilityProbe::Finding r = separability_.probe(problem_, t, y_, work_);
    if (!r.separable) SeparabilityProbe::refuse(r);
  }

  StepStatus step_implicit(Point& from, double h, Point& to) {
    const int d = problem_.dim();
    const double scale = h_prev_ != 0.0 ? h / h_prev_ : 0.0;
    to.t = from.t + h;
    to.has_force = false;
    // Stage 1: P = p_n + h/2 f_p(t_n, q_n, P).
    y_.head(d) = from.x.head(d);
    P_ = from.x.tail(d) + scale * dp_;
    auto phi_p = [&](const ConstVecRef& P, VecRef out) {
      y_.tail(d) = P;
      if (!problem_.field(from.t, y_, work_)) return false;
      out = work_.tail(d);
      return true;
    };
    auto dphi_p = [&](const ConstVecRef& P, MatRef B) {
      y_.tail(d) = P;
      return problem_.field_jacobian_block(from.t, y_, 1, 1, B);
    };
    StepStatus s = stage_p_.solve(from.x.tail(d), 0.5 * h, phi_p, dphi_p, P_, phi_);
    if (s != StepStatus::Success) return s;
    fq0_ = work_.head(d);  // f_q(t_n, q_n, P) from the last residual evaluation
    // Stage 2: Q = q_n + h/2 f_q(t_n, q_n, P) + h/2 f_q(t_{n+1}, Q, P).
    a_ = from.x.head(d) + (0.5 * h) * fq0_;
    y_.tail(d) = P_;
    Q_ = from.x.head(d) + scale * dq_;
    auto phi_q = [&](const ConstVecRef& Q, VecRef out) {
      y_.head(d) = Q;
      if (!problem_.field(to.t, y_, work_)) return false;
      out = work_.head(d);
      return true;
    };
    auto dphi_q = [&](const ConstVecRef& Q, MatRef B) {
      y_.head(d) = Q;
      return problem_.field_jacobian_block(to.t, y_, 0, 0, B);
    };
    s = stage_q_.solve(a_, 0.5 * h, phi_q, dphi_q, Q_, phi_);
    if (s != StepStatus::Success) return s;
    // work_ = f(t_{n+1}, Q, P): its p-part gives the final half kick.
    to.x.head(d) = Q_;
    to.x.tail(d) = P_ + (0.5 * h) * work_.tail(d);
    dp_ = P_ - from.x.tail(d);
    dq_ = Q_ - from.x.head(d);
    h_prev_ = h;
    return to.x.allFinite() ? StepStatus::Success : StepStatus::NonFinite;
  }

  bool explicit_;
  ImplicitStage stage_p_, stage_q_;
  Vec work_, y_, P_, Q_, phi_, a_, fq0_, dp_, dq_;
  // The arguments of the explicit scheme's calls of f, built once (a Ref
  // per call costs more than the loop's arithmetic); y_ and work_ are never
  // resized.
  const ConstVecRef y_view_{y_};
  VecRef work_view_{work_};
  Vec increment_, q_comp_;  ///< compensated summation: an increment, q_{n+1}'s rounding error
  bool compensated_ = false;
  double h_prev_ = 0.0;
  AffineVelocity velocity_;
  SeparabilityProbe separability_;
  bool compare_forces_ = true;  ///< the free check (off once the force proved t-dependent)
};

}  // namespace odepkg

#endif
