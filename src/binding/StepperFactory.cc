// StepperFactory.cc — make_stepper (StepperFactory.h): the unconstrained
// methods, SPVI and compositions; RATTLE/SHAKE are built in
// ConstrainedStepperFactory.cc.  One translation unit of the package's
// oct-file: the steppers constructed here are compiled here only.
#include "EigenConfig.hpp"
#include "StepperFactory.h"

#include "Composition.h"
#include "NodeOutput.h"
#include "unconstrained/SpectralVariational.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "unconstrained/VelocityVerlet.hpp"

#include <memory>
#include <string>

namespace odepkg::binding {

namespace {

/// SPVI with Q_DoFs modes and P_DoFs nodes.  Defaults: P = Q - 1 (the
/// P-stage Gauss collocation method, order 2P, the best order for its Q and
/// the Jacobian's condition independent of h); Q = 3, P = 2 (order 4) when
/// neither is given.  Q >= 4 asks for a tighter Newton tolerance by default:
/// the step's error falls below 1e-12 long before the run's error does.
inline std::unique_ptr<Stepper> make_spectral(HamiltonianProblem& problem, const Settings& s) {
  int q = s.q_dofs, p = s.p_dofs;
  if (q == 0 && p == 0) q = 3, p = 2;
  else if (p == 0) p = q - 1;
  else if (q == 0) q = p + 1;
  NewtonOptions newton = s.newton;
  if (!s.newton_tol_given && q >= 4) newton.tol = 1e-14;
  auto stepper = std::make_unique<SpectralVariational>(problem, q, p, newton);
  auto given = [](const Mat& m) { return m.size() > 0 ? &m : nullptr; };
  UserSpectralTables user{given(s.nodes), given(s.weights), given(s.legendre), given(s.derivatives),
                          given(s.extremes)};
  const double dev = max_table_deviation(stepper->tables(), user);
  if (dev > 1e-9)
    throw InputError("invalidOption",
                     "the given Nodes/Weights/Legendre/Derivatives/Extremes differ from the Gauss-Legendre "
                     "tables for Q_DoFs = " + std::to_string(q) + ", P_DoFs = " + std::to_string(p) +
                         " by " + std::to_string(dev) + " (omit them: they are computed)");
  return stepper;
}

inline std::unique_ptr<Stepper> make_base_stepper(const std::string& method, OctaveProblem& op, const Settings& s) {
  HamiltonianProblem& problem = op.problem();
  if (method != "rattle" && method != "shake") {
    if (s.fns.phase_space)
      throw InputError("invalidOption", "option \"ConstraintVariables\" is for odeRATTLE and odeSHAKE");
    if (!s.base_method.empty())
      throw InputError("invalidOption", "option \"BaseMethod\" is for odeRATTLE and odeSHAKE");
  }
  if (method == "symplectic_euler")
    return std::make_unique<SymplecticEuler>(problem, s.explicit_scheme, s.newton);
  if (method == "stormer_verlet")
    return std::make_unique<StormerVerlet>(problem, s.explicit_scheme, s.newton);
  if (method == "velocity_verlet") return std::make_unique<VelocityVerlet>(problem);
  if (method == "rattle" || method == "shake") return make_constrained(method == "shake", op, s);
  if (method == "spectral_var_int") return make_spectral(problem, s);
  throw InputError("invalidInput", "unknown method \"" + method + "\"");
}

/// The method, composed with the Composition/Order table if one is asked
/// for: symmetric methods only (Störmer–Verlet, velocity Verlet, RATTLE and
/// geometric RATTLE over midpoint or Störmer–Verlet).
inline std::unique_ptr<Stepper> make_composed_stepper(const std::string& method, OctaveProblem& op,
                                                      const Settings& s) {
  if (!s.composition) return make_base_stepper(method, op, s);
  const std::string what = std::string("options \"Composition\"/\"Order\" (") + s.composition->name + ")";
  if (method == "symplectic_euler")
    throw InputError("invalidOption", what + " need a symmetric method; symplectic Euler is not: use odeSV "
                                             "(Stormer-Verlet, the symmetric composition of symplectic Euler and its adjoint)");
  if (method == "shake")
    throw InputError("invalidOption", what + " need a symmetric method; SHAKE is not: use odeRATTLE");
  if (method == "spectral_var_int")
    throw InputError("invalidOption", what + " are not for odeSPVI: raise its order with Q_DoFs and P_DoFs");
  if (method == "rattle" && s.base_method == "symplectic_euler")
    throw InputError("invalidOption", what + " need a symmetric method; geometric RATTLE over symplectic Euler "
                                             "is not: use BaseMethod \"midpoint\" or \"stormer_verlet\"");
  Settings composed = s;
  composed.newton = base_newton_options(s);
  return compose(make_base_stepper(method, op, composed), s);
}

}  // namespace

/// make_composed_stepper with CompensatedSummation honoured, or refused
/// with the option named where the method does not implement it.
std::unique_ptr<Stepper> make_stepper(const std::string& method, OctaveProblem& op, const Settings& s) {
  std::unique_ptr<Stepper> stepper = make_composed_stepper(method, op, s);
  if (!stepper->set_compensated_summation(s.compensated_summation))
    throw InputError("unsupportedOption",
                     std::string("option \"CompensatedSummation\" is implemented for the explicit Stormer-Verlet "
                                 "(odeSV with \"Explicit\", \"yes\") and velocity Verlet (odeVV), with or "
                                 "without Composition/Order; not for ") + stepper->name());
  return stepper;
}

std::unique_ptr<Observer> make_node_output(const Stepper& stepper, Observer& inner, int d) {
  const auto* spvi = dynamic_cast<const SpectralVariational*>(&stepper);
  if (!spvi) return nullptr;
  return std::make_unique<SpectralNodeOutput>(*spvi, inner, d);
}

}  // namespace odepkg::binding
