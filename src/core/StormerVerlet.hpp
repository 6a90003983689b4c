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
// Implicit (general H): Newton on p_{n+1/2}, then on q_{n+1}; the values of f
// needed afterwards come from Newton's last residual evaluation.
#ifndef ODEPKG_STORMER_VERLET_HPP
#define ODEPKG_STORMER_VERLET_HPP

#include "AffineVelocity.hpp"
#include "ImplicitStage.hpp"
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
        velocity_(problem.dim()) {
    if (!explicit_) velocity_.disable();
  }

  const char* name() const override { return "stormer_verlet"; }
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

 private:
  StepStatus step_explicit(Point& from, double h, Point& to) {
    const int d = problem_.dim();
    if (!ensure_force(from, work_)) return StepStatus::NonFinite;
    to.t = from.t + h;
    y_.head(d) = from.x.head(d);
    y_.tail(d) = from.x.tail(d) + (0.5 * h) * from.force;   // p_{n+1/2}
    if (velocity_.prepare(problem_, from.t, from.x)) {
      // One call: H_p(p_{n+1/2}) predicted, checked by the call at q_{n+1}.
      y_.head(d) += h * velocity_.predict(y_.tail(d));      // q_{n+1}
      if (problem_.field(to.t, y_, work_) && velocity_.confirm(y_.tail(d), work_.head(d)))
        return finish(to, h);
      y_.head(d) = from.x.head(d);  // redo the two-call way (confirm() dropped a wrong model)
    }
    if (!problem_.field(from.t + 0.5 * h, y_, work_)) return StepStatus::NonFinite;
    y_.head(d) += h * work_.head(d);                          // q_{n+1}
    if (!problem_.field(to.t, y_, work_)) return StepStatus::NonFinite;
    return finish(to, h);
  }

  /// p_{n+1} = p_{n+1/2} + h/2 f_p(t_{n+1}, q_{n+1}), with y_ = [q_{n+1};
  /// p_{n+1/2}] and work_ = f there; the force is kept for the next step.
  StepStatus finish(Point& to, double h) {
    const int d = problem_.dim();
    to.force = work_.tail(d);
    to.has_force = true;
    to.x.head(d) = y_.head(d);
    to.x.tail(d) = y_.tail(d) + (0.5 * h) * to.force;
    return to.x.allFinite() ? StepStatus::Success : StepStatus::NonFinite;
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
  double h_prev_ = 0.0;
  AffineVelocity velocity_;
};

}  // namespace odepkg

#endif
