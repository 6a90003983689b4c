// VelocityVerlet.hpp — velocity Verlet for x'' = a(t, x), state [x; v],
// f(t, [x; v]) = [v; a]:
//   x_{n+1} = x_n + h v_n + h^2/2 a_n,
//   v_{n+1} = v_n + h/2 (a_n + a_{n+1}),  a_{n+1} = a(t_{n+1}, x_{n+1}).
// One evaluation of f per step: a_{n+1} is reused at the next step.  f is
// called at [x_{n+1}; v_n + h/2 a_n] (the 2013 odepkg velocity_verlet called it with v_n; for
// velocity-independent a both are exact).  Order 2, symplectic.
#ifndef ODEPKG_VELOCITY_VERLET_HPP
#define ODEPKG_VELOCITY_VERLET_HPP

#include "Stepper.hpp"

namespace odepkg {

class VelocityVerlet final : public Stepper {
 public:
  explicit VelocityVerlet(HamiltonianProblem& problem)
      : Stepper(problem), work_(problem.state_size()), y_(problem.state_size()) {}

  const char* name() const override { return "velocity_verlet"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }

  StepStatus step(Point& from, double h, Point& to) override {
    const int d = problem_.dim();
    if (!ensure_force(from, work_)) return StepStatus::NonFinite;
    // y = [x_{n+1}; v_{n+1/2}]
    y_.tail(d) = from.x.tail(d) + (0.5 * h) * from.force;
    y_.head(d) = from.x.head(d) + h * y_.tail(d);
    to.t = from.t + h;
    if (!problem_.field(to.t, y_, work_)) return StepStatus::NonFinite;
    to.force = work_.tail(d);
    to.has_force = true;
    to.x.head(d) = y_.head(d);
    to.x.tail(d) = y_.tail(d) + (0.5 * h) * to.force;
    return to.x.allFinite() ? StepStatus::Success : StepStatus::NonFinite;
  }

 private:
  Vec work_, y_;
};

}  // namespace odepkg

#endif
