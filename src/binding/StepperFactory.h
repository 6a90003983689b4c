// StepperFactory.h — the method name of a DEFUN to a core stepper.
//
// Declarations only: the factory is defined in StepperFactory.cc (the
// unconstrained methods, SPVI and compositions) and
// ConstrainedStepperFactory.cc (RATTLE/SHAKE and geometric RATTLE), each
// compiled once into the package's one oct-file.  A translation unit that
// constructs a stepper compiles all of its virtual functions and the Eigen
// code under them.  More: one that merely includes a stepper's header
// instantiates every template its inline functions use (GeometricRattle.hpp
// alone: 20 s of g++ -O2 with no line of code generated).  So the DEFUNs
// include none of the steppers' headers; what they need to know of a
// stepper's concrete type is asked through the functions below.
#ifndef ODEPKG_BINDING_STEPPER_FACTORY_H
#define ODEPKG_BINDING_STEPPER_FACTORY_H

#include "OctaveCallbacks.h"
#include "Settings.h"
#include "Stepper.hpp"
#include "loop/Integrator.hpp"

#include <memory>
#include <string>

namespace odepkg::binding {

/// The stepper of `method` ("symplectic_euler", "stormer_verlet",
/// "velocity_verlet", "rattle", "shake", "spectral_var_int"), composed with
/// the Composition/Order table if one is asked for, with
/// CompensatedSummation honoured, or refused with the option named where the
/// method does not implement it.  Throws InputError.
std::unique_ptr<Stepper> make_stepper(const std::string& method, OctaveProblem& op, const Settings& s);

/// RATTLE or SHAKE (ConstrainedStepperFactory.cc); used by make_stepper.
std::unique_ptr<Stepper> make_constrained(bool shake, OctaveProblem& op, const Settings& s);

/// Whether `stepper` is the classical RATTLE/SHAKE (class Rattle).
bool is_rattle(const Stepper& stepper);

/// A geometric RATTLE's constraints checked against differences at x
/// (odepkg:derivativeCheck); nothing for any other stepper (a composition
/// included).
void check_constraint_derivatives(Stepper& stepper, const ConstVecRef& x);

/// What a run reports of its RATTLE/SHAKE or geometric RATTLE (a
/// composition's base method): rank deficiencies met, sparse gradients.
struct ConstrainedReport {
  bool constrained = false;  // Rattle or GeometricRattle
  bool sparse = false;
  bool rank_deficiency_seen = false;
  double rank_deficiency_t = 0.0;
  double condition_estimate = 0.0;
  bool minimum_norm_position_multipliers = false;
  bool minimum_norm_velocity_multipliers = false;
};
ConstrainedReport constrained_report(Stepper& stepper);

/// SPVI's output at its Gauss nodes forwarded to `inner` (NodeOutput.h), or
/// null if `stepper` is not SPVI (StepperFactory.cc).
std::unique_ptr<Observer> make_node_output(const Stepper& stepper, Observer& inner, int d);

}  // namespace odepkg::binding

#endif
