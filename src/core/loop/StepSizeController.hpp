// StepSizeController.hpp — the standard controller for a method of order p
// whose local error estimate err (already weighted, accept if err <= 1) is
// O(h^{p+1}) (Hairer, Nørsett & Wanner I, §II.4):
//   h_new = h * min(fac_max, max(fac_min, safety * err^{-1/(p+1)})),
// with fac_max = 1 right after a rejection, and |h_new| <= MaxStep.
#ifndef ODEPKG_STEP_SIZE_CONTROLLER_HPP
#define ODEPKG_STEP_SIZE_CONTROLLER_HPP

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

struct ControllerOptions {
  double safety = 0.9;
  double fac_min = 0.2;
  double fac_max = 5.0;
  double max_step = std::numeric_limits<double>::infinity();
};

class StepSizeController {
 public:
  using Options = ControllerOptions;


  StepSizeController(int order, Options opts = Options()) : order_(order), opts_(opts) {}

  bool accept(double err) const { return err <= 1.0; }

  /// New step size after an attempt with step h and weighted error err.
  double next(double h, double err, bool after_rejection) const {
    double fac;
    if (err == 0.0)
      fac = opts_.fac_max;
    else if (!std::isfinite(err))
      fac = opts_.fac_min;
    else
      fac = opts_.safety * std::pow(err, -1.0 / (order_ + 1));
    const double hi = after_rejection || err > 1.0 ? 1.0 : opts_.fac_max;
    fac = std::min(hi, std::max(opts_.fac_min, fac));
    const double hn = h * fac;
    return std::copysign(std::min(std::abs(hn), opts_.max_step), h);
  }

  int order() const { return order_; }
  const Options& options() const { return opts_; }

 private:
  int order_;
  Options opts_;
};

}  // namespace odepkg

#endif
