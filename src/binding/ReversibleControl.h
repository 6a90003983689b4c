// ReversibleControl.h — StepControl "reversible" in a binding: the
// ReversibleIntegrator over the solver's symmetric stepper (Hairer and
// Söderlind 2005), the density's control function G (the user's
// StepDensityFcn, else the solver's default), and the statistics the
// reversible runs report.
#ifndef ODEPKG_BINDING_REVERSIBLE_CONTROL_H
#define ODEPKG_BINDING_REVERSIBLE_CONTROL_H

#include "loop/ReversibleIntegrator.hpp"
#include "Settings.h"
#include "StepDensityCallback.h"

#include <octave/oct.h>

#include <cmath>
#include <memory>
#include <string>

namespace odepkg::binding {

class ReversibleControl {
 public:
  /// `default_rate` serves without a StepDensityFcn (nullptr: rho = |f| of
  /// the stepper's problem, FieldSpeedDensity); it must outlive this.
  ReversibleControl(Stepper& stepper, const Settings& s, const octave_value_list& extra,
                    const std::string& who, StepDensityRate* default_rate = nullptr) {
    if (s.step_density.is_defined()) density_ = std::make_unique<OctaveStepDensity>(s.step_density, extra, who);
    StepDensityRate* rate = density_ ? static_cast<StepDensityRate*>(density_.get()) : default_rate;
    integrator_ = std::make_unique<ReversibleIntegrator>(stepper, s.integrator, rate);
    integrator_->set_density_start(s.density_start);
  }

  ReversibleIntegrator& integrator() { return *integrator_; }

  /// minstep, maxstep (the density's steps, 0 and 0 when none was taken),
  /// stepdensityeps = |eps|, ndensityevals (calls of StepDensityFcn), and
  /// for the continuation (the driver moves them to sol.stepdensity)
  /// stepdensityrho = rho at the last state, stepdensitylasteps = |e| of
  /// the step that reached it.
  void add_stats(octave_scalar_map& st) const {
    const ReversibleIntegrator& r = *integrator_;
    st.assign("minstep", r.min_step() <= r.max_step() ? r.min_step() : 0.0);
    st.assign("maxstep", r.max_step());
    st.assign("stepdensityeps", std::abs(r.eps()));
    st.assign("stepdensityrho", r.final_rho());
    st.assign("stepdensitylasteps", std::abs(r.last_eps()));
    if (density_) st.assign("ndensityevals", static_cast<double>(density_->calls()));
  }

 private:
  std::unique_ptr<OctaveStepDensity> density_;
  std::unique_ptr<ReversibleIntegrator> integrator_;
};

}  // namespace odepkg::binding

#endif
