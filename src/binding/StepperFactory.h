// StepperFactory.h — the method name of a DEFUN to a core stepper.
#ifndef ODEPKG_BINDING_STEPPER_FACTORY_H
#define ODEPKG_BINDING_STEPPER_FACTORY_H

#include "Rattle.hpp"
#include "Settings.h"
#include "StormerVerlet.hpp"
#include "SymplecticEuler.hpp"
#include "VelocityVerlet.hpp"

#include <memory>
#include <string>

namespace odepkg::binding {

inline std::unique_ptr<Stepper> make_stepper(const std::string& method, HamiltonianProblem& problem,
                                             const Settings& s) {
  if (method == "symplectic_euler")
    return std::make_unique<SymplecticEuler>(problem, s.explicit_scheme, s.newton);
  if (method == "stormer_verlet")
    return std::make_unique<StormerVerlet>(problem, s.explicit_scheme, s.newton);
  if (method == "velocity_verlet") return std::make_unique<VelocityVerlet>(problem);
  if (method == "rattle" || method == "shake") {
    if (problem.constraints() == 0)
      throw InputError("invalidOption",
                       "the options ConstraintFcn and ConstraintsNb are required (holonomic constraints g(q) = 0)");
    return std::make_unique<Rattle>(problem, s.explicit_scheme, method == "shake", s.newton);
  }
  throw InputError("invalidInput", "unknown method \"" + method + "\"");
}

}  // namespace odepkg::binding

#endif
