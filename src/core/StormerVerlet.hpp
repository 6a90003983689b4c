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

#include "AffineVelocity.hpp"
#include "CompensatedSum.hpp"
#include "ImplicitStage.hpp"
#include "SeparabilityProbe.hpp"
#include "Stepper.hpp"

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
  StepStatus step_explicit(Point& from, double h, Point& to) {
    const int d = problem_.dim();
    if (!ensure_force(from, work_)) return StepStatus::NonFinite;
    to.t = from.t + h;
    y_.head(d) = from.x.head(d);
    y_.tail(d) = from.x.tail(d) + (0.5 * h) * from.force;   // p_{n+1/2}
    if (velocity_.prepare(problem_, from.t, from.x)) {
      // One call: H_p(p_{n+1/2}) predicted, checked by the call at q_{n+1}.
      move_q(from, h, velocity_.predict(y_.tail(d)));       // q_{n+1}
      if (problem_.field(to.t, y_, work_)) {
        if (velocity_.confirm(y_.tail(d), work_.head(d))) return finish(from, to, h);
        if (!velocity_.active()) recheck(to.t);  // the model failed: H_p moved with q?
      }
      y_.head(d) = from.x.head(d);  // redo the two-call way (confirm() dropped a wrong model)
    }
    if (!problem_.field(from.t + 0.5 * h, y_, work_)) return StepStatus::NonFinite;
    // the force at q_n again, with p_{n+1/2}: unchanged for separable H
    if (compare_forces_ && !SeparabilityProbe::agree(from.force, work_.tail(d))) {
      recheck(from.t + 0.5 * h);
      compare_forces_ = false;  // separable there: the force depends on t
    }
    move_q(from, h, work_.head(d));                           // q_{n+1}
    if (!problem_.field(to.t, y_, work_)) return StepStatus::NonFinite;
    return finish(from, to, h);
  }

  /// y_.head = q_{n+1} = q_n + h v (y_.head holds q_n); compensated, its
  /// rounding error goes to q_comp_ until finish() hands it to the point.
  template <class V>
  void move_q(const Point& from, double h, const V& v) {
    const int d = problem_.dim();
    if (!compensated_) {
      y_.head(d) += h * v;
      return;
    }
    increment_ = h * v;
    compensated_add(from.x.head(d), from.comp.head(d), increment_, y_.head(d), q_comp_);
  }

  /// p_{n+1} = p_{n+1/2} + h/2 f_p(t_{n+1}, q_{n+1}), with y_ = [q_{n+1};
  /// p_{n+1/2}] and work_ = f there; the force is kept for the next step.
  /// Compensated: p_{n+1} = p_n + h/2 (f_p(q_n) + f_p(q_{n+1})).
  StepStatus finish(const Point& from, Point& to, double h) {
    const int d = problem_.dim();
    to.force = work_.tail(d);
    to.has_force = true;
    to.x.head(d) = y_.head(d);
    if (compensated_) {
      to.comp.head(d) = q_comp_;
      increment_ = (0.5 * h) * (from.force + to.force);
      compensated_add(from.x.tail(d), from.comp.tail(d), increment_, to.x.tail(d), to.comp.tail(d));
    } else {
      to.x.tail(d) = y_.tail(d) + (0.5 * h) * to.force;
    }
    return to.x.allFinite() ? StepStatus::Success : StepStatus::NonFinite;
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
  Vec increment_, q_comp_;  ///< compensated summation: an increment, q_{n+1}'s rounding error
  bool compensated_ = false;
  double h_prev_ = 0.0;
  AffineVelocity velocity_;
  SeparabilityProbe separability_;
  bool compare_forces_ = true;  ///< the free check (off once the force proved t-dependent)
};

}  // namespace odepkg

#endif
