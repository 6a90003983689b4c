// StepDensityCallback.h — the option "StepDensityFcn" as the core's control
// function of the reversible step control: G = fcn (t, y, extra...), the
// logarithmic derivative (d rho/dt) / rho of the user's step density rho(y)
// along the solution (steps h = eps / rho; Hairer and Söderlind 2005).
#ifndef ODEPKG_BINDING_STEP_DENSITY_CALLBACK_H
#define ODEPKG_BINDING_STEP_DENSITY_CALLBACK_H

#include "OctaveCallbacks.h"
#include "loop/ReversibleStepDensity.hpp"

#include <cmath>
#include <string>

namespace odepkg::binding {

class OctaveStepDensity final : public StepDensityRate {
 public:
  OctaveStepDensity(const octave_value& fcn, const octave_value_list& extra, const std::string& who)
      : fcn_(fcn, extra, who, "StepDensityFcn", true) {}

  bool operator()(double t, const ConstVecRef& x, double& G) override {
    ++calls_;
    G = *fcn_.call(t, x, 1, "scalar G = (d rho/dt) / rho");
    return std::isfinite(G);
  }

  long calls() const { return calls_; }

 private:
  UserFunction fcn_;
  long calls_ = 0;
};

}  // namespace odepkg::binding

#endif
