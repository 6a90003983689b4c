// OutputGuard.h — refuse up front a run whose stored output cannot fit in
// memory (issue 13's memory guard), instead of letting it grow until the
// machine swaps or the process is killed.
//
// What is counted: the output the DEFUNs store (nothing when the solver is
// called with no output argument: the output then streams through the
// OutputFcn and only the last point is kept), one time and one state of
// n doubles per output point, (n + 1) * 8 bytes a point.  The cap is
// min(physical memory / 4, 8 GiB), physical memory read from sysconf
// (_SC_PHYS_PAGES * _SC_PAGE_SIZE; 8 GiB assumed if sysconf cannot tell).
// A quarter of the memory because the stored output is copied once more
// into the returned matrices (and a growing buffer briefly holds two copies),
// and the caller's own arrays need room too.
//
// check_output_size is called before the integration with the number of
// points known in advance (requested times, or fixed steps with every step
// output); adaptive runs cannot know their step count up front, and the
// OutputCollector applies the same cap as the points arrive
// (output_too_large, from its observer call).
#ifndef ODEPKG_BINDING_OUTPUT_GUARD_H
#define ODEPKG_BINDING_OUTPUT_GUARD_H

#include <octave/oct.h>

#include <unistd.h>

#include <algorithm>
#include <cstddef>

namespace odepkg::binding {

/// The largest stored output in bytes: min(physical memory / 4, 8 GiB).
inline double output_cap_bytes() {
  static const double cap = [] {
    const double gib8 = 8.0 * 1024 * 1024 * 1024;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return gib8;
    return std::min(static_cast<double>(pages) * static_cast<double>(page) / 4.0, gib8);
  }();
  return cap;
}

/// Bytes stored for `points` output points of a state of `n` doubles.
inline double output_bytes(double points, double n) { return points * (n + 1.0) * 8.0; }

/// The largest number of output points of a state of `n` doubles under the cap.
inline std::size_t max_output_points(double n) {
  return static_cast<std::size_t>(output_cap_bytes() / ((n + 1.0) * 8.0));
}

/// odepkg:outputTooLarge: the output of `points` points (at least; `known`
/// false when the count is where an adaptive run got to) does not fit.
[[noreturn]] inline void output_too_large(double points, double n, bool known, const char* who) {
  const double gib = 1024.0 * 1024 * 1024;
  error_with_id("odepkg:outputTooLarge",
                "%s: the output would not fit in memory: %s%.4g points of %g values "
                "(%.3g GiB; at most %.3g GiB, a quarter of the physical memory up to 8 GiB, "
                "is stored).  Request output times (TSPAN = [t0, t1, ..., tf], fewer of them if "
                "already) instead of every step, take fewer steps (a larger TimeStepSize, a smaller "
                "TimeStepNumber or a shorter TSPAN), or stream the output through an OutputFcn "
                "without storing it (call the solver with no output argument)",
                who, known ? "" : "more than ", points, n + 1.0,
                output_bytes(points, n) / gib, output_cap_bytes() / gib);
}

/// Up-front check of a run with `points` expected output points of a state
/// of `n` doubles; nothing is refused when the output is not stored, nor
/// a count the Integrator refuses on its own (beyond 9e15 steps).
inline void check_output_size(double points, double n, bool stored, const char* who) {
  if (!stored) return;
  // Beyond 2^53 fixed steps the Integrator refuses the step count itself
  // (odepkg:invalidInput, "TimeStepSize is too small"), stored or not.
  if (points >= 9.0e15) return;
  if (!(output_bytes(points, n) <= output_cap_bytes())) output_too_large(points, n, true, who);
}

}  // namespace odepkg::binding

#endif
