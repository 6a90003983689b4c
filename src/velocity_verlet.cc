// velocity_verlet — compiled stepper with Octave's stepper calling convention.
#include "EigenConfig.hpp"
#include "binding/StepperDefun.h"

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("velocity_verlet", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("velocity_verlet", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (velocity_verlet, args, nargout,
           "-*- texinfo -*-\n@deftypefn {} {[@var{t_next}, @var{x_next}] =} velocity_verlet (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options})\n@deftypefnx {} {[@var{t_next}, @var{x_next}, @var{x_est}, @var{k}] =} velocity_verlet (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options}, @var{k_vals}, @var{t_next})\nVelocity Verlet step (order 2, symplectic) for x'' = a(t, x):\n\
here @var{x} = [x; v] and @var{f} (@var{t}, [x; v]) returns [v; a].  One call\n\
of @var{f} per step when @var{k_vals} (the acceleration) is passed back.\n\
@var{t} is the time of @var{x}.  @var{x_next} is one step of size @var{dt} (or\n\
@var{t_next} - @var{t}).  @var{x_est}, computed only when asked, is the result\n\
of two steps of @var{dt}/2: (@var{x_est} - @var{x_next}) / (2^p - 1) estimates\n\
its local error (step doubling).  @var{k} is the acceleration (the v-part of @var{f})\n\
at @var{x_next} when the method produced it; pass it back as @var{k_vals} to\n\
save one call of @var{f}.  @var{options} is a struct from @code{odepkgset} or\n\
@code{odeset}; extra arguments of @var{f} are taken from\n\
@var{options}.funarguments.\n\
\n\
@var{f} may be a model of @code{odepkg_model} with a quadratic kinetic energy,\n\
H = p' M^-1 p / 2 + V(q): @var{x} is then [q; v], v = M^-1 p (as in @code{odeVV}),\n\
its parameter values in @var{options}.funarguments.\n\
\n\
Example:\n\
@example\n\
f = @@(t, x) [x(2); -x(1)];   # harmonic oscillator\n\
[t1, x1] = velocity_verlet (f, 0, [1; 0], 0.1, odepkgset (\"Explicit\", \"yes\"))\n\
@end example\n\
@seealso{odeVV, stormer_verlet}\n@end deftypefn")
{
  return odepkg::binding::run_stepper ("velocity_verlet", args, nargout);
}

/*
%!shared f
%! f = @(t, x) [x(2); -x(1)];
%!test
%! ## closed-form velocity Verlet map for a = -x
%! h = 0.1;  x0 = [1; 0.5];
%! [~, x1] = velocity_verlet (f, 0, x0, h);
%! a0 = -x0(1);  xn = x0(1) + h * x0(2) + h^2 / 2 * a0;
%! assert (x1, [xn; x0(2) + h / 2 * (a0 - xn)], 1e-15);
%!test
%! ## the returned acceleration, passed back, gives the same next step
%! [~, x1, ~, k] = velocity_verlet (f, 0, [1; 0], 0.1);
%! assert (k, -x1(1), 1e-15);
%! [~, x2] = velocity_verlet (f, 0.1, x1, 0.1, [], k);
%! [~, x2b] = velocity_verlet (f, 0.1, x1, 0.1);
%! assert (x2, x2b, 1e-15);
%!error <X must be a real vector> velocity_verlet (f, 0, "ab", 0.1)
%!error <T must be a finite real scalar> velocity_verlet (f, NaN, [1; 0], 0.1)
%!error <must return a real column vector \[v; a\]> velocity_verlet (@(t, x) 1, 0, [1; 0], 0.1)
*/
