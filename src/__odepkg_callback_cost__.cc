// __odepkg_callback_cost__ — seconds per call of a user's f made from C++
// exactly as the solvers make it (OctaveProblem: feval, result checks, copy
// into the core's buffer).  For bench/: the floor of any compiled solver's
// time is (number of callbacks) x (this cost).
#include "EigenConfig.hpp"
#include "binding/Conversions.h"
#include "binding/ErrorGuard.h"
#include "binding/OctaveCallbacks.h"

#include <chrono>

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("__odepkg_callback_cost__", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("__odepkg_callback_cost__", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (__odepkg_callback_cost__, args, ,
           "-*- texinfo -*-\n\
@deftypefn {} {@var{s} =} __odepkg_callback_cost__ (@var{f}, @var{t}, @var{x}, @var{M})\n\
Seconds per call of @code{@var{f} (@var{t}, @var{x})} (of @code{@var{f} (@var{x})}\n\
when @var{t} is empty, as for constraint functions) when called @var{M}\n\
times from C++ the way the odepkg solvers call it (for the benchmarks).\n\
@end deftypefn")
{
  using namespace odepkg;
  using namespace odepkg::binding;
  return guarded ("__odepkg_callback_cost__", [&]() -> octave_value_list {
    if (args.length () != 4) print_usage ();
    if (!args(0).is_function_handle ())
      error_with_id ("odepkg:invalidInput", "__odepkg_callback_cost__: F must be a function handle");
    const bool with_time = !args(1).isempty ();
    const double t = with_time ? real_scalar (args(1), "__odepkg_callback_cost__", "T") : 0.0;
    if (!args(2).isnumeric () || !args(2).isreal () || args(2).isempty ())
      error_with_id ("odepkg:invalidInput", "__odepkg_callback_cost__: X must be a real vector");
    const NDArray xa = args(2).array_value ();
    const Vec x = Eigen::Map<const Vec> (xa.data (), xa.numel ());
    const double M = real_scalar (args(3), "__odepkg_callback_cost__", "M");
    if (!(M >= 1))
      error_with_id ("odepkg:invalidInput", "__odepkg_callback_cost__: M must be at least 1");
    // The first output's size is whatever f returns the first time.
    UserFunction fn (args(0), octave_value_list (), "__odepkg_callback_cost__", "F", with_time);
    octave_value_list a0;
    if (with_time) a0.append (octave_value (t));
    a0.append (args(2));
    const octave_idx_type numel = octave::feval (args(0), a0, 1)(0).numel ();
    Vec out (numel);
    const auto start = std::chrono::steady_clock::now ();
    for (long k = 0; k < static_cast<long> (M); ++k)
      out = Eigen::Map<const Vec> (fn.call (t, x, numel, "array"), numel);
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now () - start;
    return octave_value (dt.count () / M);
  });
}

/*
%!function y = cc_counted (x)
%!  global __cc_count
%!  __cc_count += 1;
%!  y = -x;
%!endfunction
%!test
%! ## a positive, finite cost per call; the function is really called M times
%! global __cc_count
%! __cc_count = 0;
%! s = __odepkg_callback_cost__ (@(t, x) cc_counted (x), 0, [1; 2], 7);
%! assert (s > 0 && isfinite (s));
%! assert (__cc_count, 8);   # one sizing call + M
%! s = __odepkg_callback_cost__ (@(q) q' * q - 1, [], [1; 2; 3], 5);
%! assert (s > 0 && isfinite (s));
%! clear -global __cc_count
%!error <M must be at least 1> __odepkg_callback_cost__ (@(t, x) x, 0, [1; 2], 0)
%!error <F must be a function handle> __odepkg_callback_cost__ (1, 0, [1; 2], 3)
*/
