// FirstStepAdvice.h — when the very first step fails, the bare status
// ("Newton iteration did not converge in the step from t = 0") says nothing
// about the cause: this adds what was checked before the step and what is
// likely wrong (a derivative, the step size, the initial data).
#ifndef ODEPKG_BINDING_FIRST_STEP_ADVICE_H
#define ODEPKG_BINDING_FIRST_STEP_ADVICE_H

#include "Settings.h"
#include "Stats.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace odepkg::binding {

/// The user's derivative options present in `s` (`lie_group_struct`: the
/// LieGroup option is a struct of the user's operations).
inline std::vector<std::string> given_derivatives(const Settings& s, bool lie_group_struct = false) {
  std::vector<std::string> names;
  if (s.fns.native) return names;  // a model's derivatives are derived exactly, not the user's
  if (s.fns.hessian.is_defined()) names.push_back("HamiltonianHessFcn");
  if (s.fns.G.is_defined()) names.push_back("ConstraintGradFcn");
  if (s.fns.GH.is_defined()) names.push_back("ConstraintHessFcn");
  if (lie_group_struct) names.push_back("the LieGroup struct");
  return names;
}

/// `message` extended when no step was accepted (stats.steps == 0).
inline std::string first_step_advice(const std::string& message, const Stats& stats, const Settings& s,
                                     const std::vector<std::string>& given, bool projected) {
  if (stats.steps > 0 || message.empty()) return message;
  std::string list;
  for (std::size_t i = 0; i < given.size(); ++i)
    list += (i == 0 ? "" : (i + 1 == given.size() ? " and " : ", ")) + given[i];
  std::string m = message + ", the first step; ";
  if (given.empty()) {
    if (stats.fd_jacobians > 0 && s.fns.m > 0) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "the derivatives were taken by differences (constraint gradients accurate "
                                     "to %.2g)", stats.max_grad_error);
      m += buf;
    } else if (stats.fd_jacobians > 0) {  // no constraint gradient to speak of (f's Jacobian, a nonholonomic run)
      m += "the Jacobians the iteration needs were taken by differences";
    } else {
      m += "no user derivative was involved";
    }
  } else if (s.derivative_check) {
    m += list + (given.size() > 1 ? " were" : " was") + " checked against differences at the initial data and " +
         (given.size() > 1 ? "agree" : "agrees");
  } else {
    m += "option \"DerivativeCheck\" is off, so a wrong " + list +
         " is a likely cause (turn the check on to find out)";
  }
  if (s.fns.m > 0)
    m += projected ? "; the initial data were projected onto the constraints"
                   : "; the initial data satisfy the constraints";
  m += std::string(s.derivative_check || given.empty() ? "; likely causes: " : "; other causes: ") +
       "a step too large for the problem (try a smaller TimeStepSize, or adaptive steps with RelTol)" +
       (projected ? ", initial data far from the constraints" : "") +
       (s.fns.m > 0 ? ", a singular constraint Jacobian at the start" : "");
  return m;
}

}  // namespace odepkg::binding

#endif
