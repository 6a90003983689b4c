// VelocityVerlet.hpp — velocity Verlet for x'' = a(t, x), state [x; v],
// f(t, [x; v]) = [v; a]:
//   x_{n+1} = x_n + h v_n + h^2/2 a_n,
//   v_{n+1} = v_n + h/2 (a_n + a_{n+1}),  a_{n+1} = a(t_{n+1}, x_{n+1}).
// One evaluation of f per step: a_{n+1} is reused at the next step.  f is
// called at [x_{n+1}; v_n + h/2 a_n] (the 2013 odepkg velocity_verlet called it with v_n; for
// velocity-independent a both are exact).  Order 2, symplectic.
// Compensated summation: x_{n+1} = x_n + h v_{n+1/2} and v_{n+1} = v_n +
// h/2 (a_n + a_{n+1}) summed with the compensation of Point::comp
// (CompensatedSum.hpp).
#ifndef ODEPKG_VELOCITY_VERLET_HPP
#define ODEPKG_VELOCITY_VERLET_HPP

#include "CompensatedSum.hpp"
#include "Stepper.hpp"

namespace odepkg {

class VelocityVerlet final : public Stepper {
 public:
  explicit VelocityVerlet(HamiltonianProblem& problem)
      : Stepper(problem),
        work_(problem.state_size()),
        y_(problem.state_size()),
        increment_(problem.dim()),
        x_comp_(problem.dim()) {}

  const char* name() const override { return "velocity_verlet"; }
  int order() const override { return 2; }
  /// For a velocity-independent a(t, x) (with a(t, x, v) it is evaluated at
  /// v_{n+1/2} and the map is not symmetric).
  bool symmetric() const override { return true; }
  /// step() checks to.x before returning Success.
  bool checks_finite_state() const override { return true; }
  bool set_compensated_summation(bool on) override {
    compensated_ = on;
    return true;
  }

  StepStatus step(Point& from, double h, Point& to) override {
    const int d = problem_.dim();
    if (!ensure_force(from, work_)) return StepStatus::NonFinite;
    // y = [x_{n+1}; v_{n+1/2}]
    y_.tail(d) = from.x.tail(d) + (0.5 * h) * from.force;
    if (compensated_) {
      increment_ = h * y_.tail(d);
      compensated_add(from.x.head(d), from.comp.head(d), increment_, y_.head(d), x_comp_);
    } else {
      y_.head(d) = from.x.head(d) + h * y_.tail(d);
    }
    to.t = from.t + h;
    if (!problem_.field(to.t, y_, work_)) return StepStatus::NonFinite;
    to.force = work_.tail(d);
    to.has_force = true;
    to.x.head(d) = y_.head(d);
    if (compensated_) {
      to.comp.head(d) = x_comp_;
      increment_ = (0.5 * h) * (from.force + to.force);
      compensated_add(from.x.tail(d), from.comp.tail(d), increment_, to.x.tail(d), to.comp.tail(d));
    } else {
      to.x.tail(d) = y_.tail(d) + (0.5 * h) * to.force;
    }
    return to.x.allFinite() ? StepStatus::Success : StepStatus::NonFinite;
  }

 private:
  Vec work_, y_;
  Vec increment_, x_comp_;  ///< compensated summation: an increment, x_{n+1}'s rounding error
  bool compensated_ = false;
};

}  // namespace odepkg

#endif
