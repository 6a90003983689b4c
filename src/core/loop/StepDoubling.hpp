// StepDoubling.hpp — local error estimate by step doubling (HNW I, §II.4):
// one step of h and two of h/2 from the same point; with a method of order p,
//   err = (x_{h/2,h/2} - x_h) / (2^p - 1)
// estimates the local error of the two-half-step result, which is the one
// kept (no Richardson extrapolation: it would destroy symplecticity and the
// constraints).  The cached force at the start point serves both branches.
#ifndef ODEPKG_STEP_DOUBLING_HPP
#define ODEPKG_STEP_DOUBLING_HPP

#include "Stepper.hpp"

#include <cmath>

namespace odepkg {

class StepDoubling {
 public:
  explicit StepDoubling(Stepper& stepper)
      : stepper_(stepper),
        full_(stepper.problem().state_size()),
        mid_(stepper.problem().state_size()),
        err_(stepper.problem().state_size()),
        denom_(std::ldexp(1.0, stepper.order()) - 1.0) {}

  /// Attempt from `from` with step h; on success `to` is the two-half-step
  /// result and error() the estimate of its local error.
  StepStatus attempt(Point& from, double h, Point& to) {
    StepStatus s = stepper_.step(from, h, full_);
    if (s != StepStatus::Success) return s;
    s = stepper_.step(from, 0.5 * h, mid_);
    if (s != StepStatus::Success) return s;
    s = stepper_.step(mid_, 0.5 * h, to);
    if (s != StepStatus::Success) return s;
    to.t = from.t + h;  // exactly, not from.t + h/2 + h/2
    err_ = (to.x - full_.x) / denom_;
    if (!stepper_.restrict_error(to, full_, denom_, err_)) return StepStatus::NonFinite;
    return StepStatus::Success;
  }

  const Vec& error() const { return err_; }
  const Point& full_step() const { return full_; }

 private:
  Stepper& stepper_;
  Point full_, mid_;
  Vec err_;
  double denom_;
};

}  // namespace odepkg

#endif
