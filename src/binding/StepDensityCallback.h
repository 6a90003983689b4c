// StepDensityCallback.h — the option "StepDensityFcn" as the core's control
// function of the reversible step control: fcn (t, y, extra...) returns the
// logarithmic derivative G = (d rho/dt) / rho of the user's step density
// rho(y) along the solution (steps h = eps / rho; Hairer and Söderlind
// 2005), or [G; rho]: with rho itself the run starts from rho(y0), which
// makes its steps a function of the state (ReversibleIntegrator.hpp).  The
// form is read from the first call (a probe that costs no extra call).
#ifndef ODEPKG_BINDING_STEP_DENSITY_CALLBACK_H
#define ODEPKG_BINDING_STEP_DENSITY_CALLBACK_H

#include "OctaveCallbacks.h"
#include "loop/ReversibleStepDensity.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace odepkg::binding {

class OctaveStepDensity final : public StepDensityRate {
 public:
  OctaveStepDensity(const octave_value& fcn, const octave_value_list& extra, const std::string& who)
      : fcn_(fcn, extra, who, "StepDensityFcn", true) {}

  bool operator()(double t, const ConstVecRef& x, double& G) override {
    ++calls_;
    if (numel_ == 0) numel_ = fcn_.prime(t, x).numel() == 2 ? 2 : 1;
    const double* r = fcn_.call(t, x, numel_, "scalar G = (d rho/dt) / rho, or [G; rho] from the first call on");
    G = r[0];
    rho_ = numel_ == 2 ? r[1] : std::numeric_limits<double>::quiet_NaN();
    return std::isfinite(G);
  }

  /// rho from [G; rho] (NaN for G alone); taken to be a rate (1/time).
  double last_density() const override { return rho_; }
  bool density_is_rate() const override { return true; }

  long calls() const { return calls_; }

 private:
  UserFunction fcn_;
  int numel_ = 0;  ///< 1: G; 2: [G; rho] (0: not yet called)
  double rho_ = std::numeric_limits<double>::quiet_NaN();
  long calls_ = 0;
};

}  // namespace odepkg::binding

#endif
