// StepperDefun.h — the body shared by the compiled steppers with Octave's
// stepper calling convention (as runge_kutta_45_dorpri):
//   [t_next, x_next, x_est, k] = stepper (f, t, x, dt, options, k_vals, t_next)
// x_next: one step of dt.  x_est (computed only when asked): two steps of
// dt/2, so (x_est - x_next) / (2^p - 1) estimates the local error of x_est;
// for a method with its own companion (SPVI), that more accurate solution.
// k: the force cache at x_next (the p-part of f, or the acceleration), which
// can be passed back as k_vals to save a call of f.  Extra arguments of f are
// read from options.funarguments (a cell), as Octave's steppers do.
// `[t, x, ~, k] = stepper (...)` takes k without x_est: an output ignored
// with ~ is not computed (the two half steps would triple the calls of f).
//
// Declaration only: run_stepper is defined in StepperDefun.cc, compiled once
// into the package's oct-file; the five stepper DEFUNs call it.
#ifndef ODEPKG_BINDING_STEPPER_DEFUN_H
#define ODEPKG_BINDING_STEPPER_DEFUN_H

#include <octave/oct.h>

namespace odepkg::binding {

/// The stepper `method` (a name make_stepper knows) applied with Octave's
/// stepper calling convention to the arguments of the DEFUN `method`.
octave_value_list run_stepper(const char* method, const octave_value_list& args, int nargout);

}  // namespace odepkg::binding

#endif
