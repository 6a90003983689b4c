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

#include "unconstrained/CompensatedSum.hpp"
#include "Finite.hpp"
#include "Stepper.hpp"
#include "unconstrained/ClosingHalfKick.hpp"

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

  // Plain loops over the storage (sizes checked once per step), not Eigen
  // block expressions, each a call with run-time checks; the same
  // operations as the vector expressions, so the same results.  The
  // compensated step is kept apart, so that this one stays small.
  StepStatus step(Point& from, double h, Point& to) override {
    const int d = problem_.dim();
    if (!ensure_force(from, work_)) return StepStatus::NonFinite;
    require_sizes(from, to, d);
    if (compensated_) return step_compensated(from, h, to);
    const double half = 0.5 * h;
    const double* x0 = from.x.data();
    const double* a0 = from.force.data();
    double* y = y_.data();
    for (int i = 0; i < d; ++i) {
      y[d + i] = x0[d + i] + half * a0[i];  // v_{n+1/2}
      y[i] = x0[i] + h * y[d + i];          // x_{n+1}
    }
    to.t = from.t + h;
    if (!problem_.field(to.t, y_view_, work_view_)) return StepStatus::NonFinite;
    return closing_half_kick(y, work_.data() + d, half, d, to);
  }

 private:
  StepStatus step_compensated(Point& from, double h, Point& to) {
    const int d = problem_.dim();
    // y = [x_{n+1}; v_{n+1/2}]
    y_.tail(d) = from.x.tail(d) + (0.5 * h) * from.force;
    increment_ = h * y_.tail(d);
    compensated_add(from.x.head(d), from.comp.head(d), increment_, y_.head(d), x_comp_);
    to.t = from.t + h;
    if (!problem_.field(to.t, y_view_, work_view_)) return StepStatus::NonFinite;
    to.force = work_.tail(d);
    to.has_force = true;
    to.x.head(d) = y_.head(d);
    to.comp.head(d) = x_comp_;
    increment_ = (0.5 * h) * (from.force + to.force);
    compensated_add(from.x.tail(d), from.comp.tail(d), increment_, to.x.tail(d), to.comp.tail(d));
    return all_finite(to.x) ? StepStatus::Success : StepStatus::NonFinite;
  }

  /// As StormerVerlet::require_sizes: a caller's bug is thrown, not read
  /// past the end; a never-sized end force is sized.
  static void require_sizes(const Point& from, Point& to, Eigen::Index d) {
    if (from.x.size() != 2 * d || to.x.size() != 2 * d || from.force.size() != d)
      throw EigenAssertion("VelocityVerlet: a point of the wrong size");
    if (to.force.size() != d) to.force.resize(d);
  }

  Vec work_, y_;
  // f's arguments, built once (y_ and work_ are never resized).
  const ConstVecRef y_view_{y_};
  VecRef work_view_{work_};
  Vec increment_, x_comp_;  ///< compensated summation: an increment, x_{n+1}'s rounding error
  bool compensated_ = false;
};

}  // namespace odepkg

#endif
