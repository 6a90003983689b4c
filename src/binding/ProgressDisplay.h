// ProgressDisplay.h — the progress meter of the core (ProgressMeter.hpp)
// reporting to an Octave function: fcn (t, t0, tf, elapsed, done), called at
// most four times a wall second and once at the end (done true).  The m-file
// driver passes the display of the option "Progress" (a line in the terminal
// or a waitbar, inst/private/odepkg_progress.m) as the internal option field
// "Progress"; the compiled loop only counts steps and reads the clock every
// few thousand of them, so the display costs nothing measurable.
#ifndef ODEPKG_BINDING_PROGRESS_DISPLAY_H
#define ODEPKG_BINDING_PROGRESS_DISPLAY_H

#include "loop/Integrator.hpp"
#include "loop/ProgressMeter.hpp"

#include <octave/oct.h>
#include <octave/parse.h>

#include <memory>

namespace odepkg::binding {

class ProgressDisplay {
 public:
  /// The display function of OPTIONS.Progress, or none (null) when the field
  /// is absent or empty.  Any other value is refused: the drivers turn the
  /// user's "Progress" choice into a function before the compiled call.
  static std::unique_ptr<ProgressDisplay> from_options(const octave_value& opts, const char* who) {
    if (!opts.isstruct() || opts.numel() != 1) return nullptr;
    const octave_scalar_map m = opts.scalar_map_value();
    if (!m.isfield("Progress")) return nullptr;
    const octave_value v = m.getfield("Progress");
    if (v.isempty()) return nullptr;
    if (!v.is_function_handle())
      error_with_id("odepkg:invalidOption",
                    "%s: option \"Progress\" reaches the compiled integrator as a display function "
                    "(the solvers odeSV, odeRATTLE, ... take \"off\", \"on\", \"text\" or \"waitbar\")",
                    who);
    return std::make_unique<ProgressDisplay>(v);
  }

  explicit ProgressDisplay(const octave_value& fcn)
      : fcn_(fcn), meter_([this](const ProgressReport& r) { show(r); }) {}

  /// Report the steps of a loop (Integrator, ReversibleIntegrator) to this display.
  template <class Loop>
  void attach(Loop& loop) {
    loop.set_progress(&meter_);
  }

 private:
  void show(const ProgressReport& r) {
    octave_value_list a(5);
    a(0) = r.t;
    a(1) = r.t0;
    a(2) = r.tf;
    a(3) = r.elapsed;
    a(4) = r.done;
    octave::feval(fcn_, a, 0);
  }

  octave_value fcn_;
  ProgressMeter meter_;
};

}  // namespace odepkg::binding

#endif
