// SymplecticEuler.hpp — symplectic Euler (HLW Theorem VI.3.3), order 1:
//   p_{n+1} = p_n + h f_p(t_n, q_n, p_{n+1}),
//   q_{n+1} = q_n + h f_q(t_n, q_n, p_{n+1}),
// with f = [f_q; f_p] = [H_p; -H_q].  Explicit for separable H (f_p
// independent of p): two calls of f per step, the force at q_{n+1} being
// reused by the next step; one when T(p) is quadratic (AffineVelocity).
// Separability is verified as in StormerVerlet.hpp (SeparabilityProbe): at
// t0, when the velocity model fails, and for free on every two-call step
// (its first call is the force at q_n, at the same t, with p_{n+1}).
// Implicit (general H): Newton on p_{n+1}.
#ifndef ODEPKG_SYMPLECTIC_EULER_HPP
#define ODEPKG_SYMPLECTIC_EULER_HPP

#include "unconstrained/AffineVelocity.hpp"
#include "unconstrained/ImplicitStage.hpp"
#include "unconstrained/SeparabilityProbe.hpp"
#include "Stepper.hpp"

namespace odepkg {

class SymplecticEuler final : public Stepper {
 public:
  SymplecticEuler(HamiltonianProblem& problem, bool explicit_scheme,
                  NewtonSolver::Options newton = NewtonSolver::Options())
      : Stepper(problem),
        explicit_(explicit_scheme),
        stage_(explicit_scheme ? 0 : problem.dim(), &problem.stats(), newton),  // O(d) if explicit
        work_(problem.state_size()),
        y_(problem.state_size()),
        P_(problem.dim()),
        phi_(problem.dim()),
        dp_(Vec::Zero(problem.dim())),
        velocity_(problem.dim()),
        separability_(problem.dim()) {
    if (!explicit_) velocity_.disable();
  }

  const char* name() const override { return "symplectic_euler"; }
  void check_claims(double t, const ConstVecRef& x, const ConstVecRef& fx) override {
    if (!explicit_) return;
    const SeparabilityProbe::Finding r = separability_.probe(problem_, t, x, fx);
    if (!r.separable) SeparabilityProbe::refuse(r);
  }
  int order() const override { return 1; }
  void reset() override {
    stage_.reset();
    dp_.setZero();
  }

  StepStatus step(Point& from, double h, Point& to) override {
    const int d = problem_.dim();
    to.t = from.t + h;
    if (explicit_) {
      if (!ensure_force(from, work_)) return StepStatus::NonFinite;
      y_.head(d) = from.x.head(d);
      y_.tail(d) = from.x.tail(d) + h * from.force;       // p_{n+1}
      if (velocity_.prepare(problem_, from.t, from.x)) {
        // One call: H_p(p_{n+1}) predicted, checked by the call at q_{n+1}.
        to.x.head(d) = from.x.head(d) + h * velocity_.predict(y_.tail(d));
        to.x.tail(d) = y_.tail(d);
        if (problem_.field(to.t, to.x, work_)) {
          if (velocity_.confirm(y_.tail(d), work_.head(d))) {
            to.force = work_.tail(d);
            to.has_force = true;
            return StepStatus::Success;
          }
          if (!velocity_.active()) recheck(to.t, to.x);  // the model failed: H_p moved with q?
        }
      }  // else the two-call way (confirm() dropped a wrong model)
      if (!problem_.field(from.t, y_, work_)) return StepStatus::NonFinite;
      // the force at (t_n, q_n) again, with p_{n+1}: unchanged for separable H
      if (compare_forces_ && !SeparabilityProbe::agree(from.force, work_.tail(d))) {
        recheck(from.t, y_);
        compare_forces_ = false;  // separable there (the first force came from elsewhere)
      }
      to.x.head(d) = from.x.head(d) + h * work_.head(d);  // q_{n+1}
      to.x.tail(d) = y_.tail(d);
      if (!problem_.field(to.t, to.x, work_)) return StepStatus::NonFinite;
      to.force = work_.tail(d);
      to.has_force = true;
      return StepStatus::Success;
    }
    // Implicit: P = p_n + h f_p(t_n, q_n, P); guess from the last increment.
    y_.head(d) = from.x.head(d);
    P_ = from.x.tail(d) + (h_prev_ != 0.0 ? h / h_prev_ : 0.0) * dp_;
    auto phi = [&](const ConstVecRef& P, VecRef out) {
      y_.tail(d) = P;
      if (!problem_.field(from.t, y_, work_)) return false;
      out = work_.tail(d);
      return true;
    };
    auto dphi = [&](const ConstVecRef& P, MatRef B) {
      y_.tail(d) = P;
      return problem_.field_jacobian_block(from.t, y_, 1, 1, B);
    };
    const StepStatus s = stage_.solve(from.x.tail(d), h, phi, dphi, P_, phi_);
    if (s != StepStatus::Success) return s;
    // work_ holds f(t_n, q_n, P) from Newton's last residual evaluation.
    to.x.head(d) = from.x.head(d) + h * work_.head(d);
    to.x.tail(d) = P_;
    to.has_force = false;
    dp_ = P_ - from.x.tail(d);
    h_prev_ = h;
    return to.x.allFinite() ? StepStatus::Success : StepStatus::NonFinite;
  }

 private:
  /// Probe at (t, x), work_ = f(t, x) (2 calls); a coupling ends the run.
  void recheck(double t, const ConstVecRef& x) {
    const SeparabilityProbe::Finding r = separability_.probe(problem_, t, x, work_);
    if (!r.separable) SeparabilityProbe::refuse(r);
  }

  bool explicit_;
  ImplicitStage stage_;
  Vec work_, y_, P_, phi_, dp_;
  double h_prev_ = 0.0;
  AffineVelocity velocity_;
  SeparabilityProbe separability_;
  bool compare_forces_ = true;  ///< the free check (off after a mismatch the probe explained)
};

}  // namespace odepkg

#endif
