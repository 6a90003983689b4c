// Composition.h — options "Composition"/"Order" (read by Settings.h's
// read_composition) applied to any symmetric base stepper: shared by the
// method factory (StepperFactory.h) and RATTLie's own DEFUN.
#ifndef ODEPKG_BINDING_COMPOSITION_H
#define ODEPKG_BINDING_COMPOSITION_H

#include "Settings.h"
#include "composition/CompositionStepper.hpp"

#include <memory>

namespace odepkg::binding {

/// The base method's Newton options: a composed step adds up its s
/// substeps' Newton errors, so they converge to round-off (NewtonTol 1e-14)
/// unless the user set NewtonTol.
inline NewtonOptions base_newton_options(const Settings& s) {
  NewtonOptions n = s.newton;
  if (s.composition && !s.newton_tol_given) n.tol = 1e-14;
  return n;
}

/// `base` composed with the asked table, or `base` itself without one.
/// Throws InputError("invalidOption") if `base` is not symmetric.
inline std::unique_ptr<Stepper> compose(std::unique_ptr<Stepper> base, const Settings& s) {
  if (!s.composition) return base;
  return std::make_unique<CompositionStepper>(std::move(base), *s.composition);
}

}  // namespace odepkg::binding

#endif
