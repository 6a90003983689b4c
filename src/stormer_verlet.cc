// stormer_verlet — compiled stepper with Octave's stepper calling convention.
#include "EigenConfig.hpp"
#include "binding/StepperDefun.h"

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("stormer_verlet", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("stormer_verlet", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (stormer_verlet, args, nargout,
           "-*- texinfo -*-\n@deftypefn {} {[@var{t_next}, @var{x_next}] =} stormer_verlet (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options})\n@deftypefnx {} {[@var{t_next}, @var{x_next}, @var{x_est}, @var{k}] =} stormer_verlet (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options}, @var{k_vals}, @var{t_next})\nStörmer–Verlet step (order 2, symmetric, symplectic).\n\
With @var{options}.Explicit = \"yes\" (separable H = T(p) + V(q)) it costs three\n\
calls of @var{f}, two when @var{k_vals} gives the force at @var{x}; @var{x_est}\n\
four more (@code{[t, x, ~, k] = @dots{}} skips it).  Separability is checked on\n\
the way (the force at q must not change with p; a change is probed with two\n\
more calls) and a non-separable @var{f} is the error @code{odepkg:notSeparable}.\n\
Otherwise two Newton solves (general H), using\n\
@var{options}.HamiltonianHessFcn when given.\n\
@var{x} = [q; p] is the state at time @var{t}, @var{f} (@var{t}, [q; p])\n\
returns [dH/dp; -dH/dq].  @var{x_next} is one step of size @var{dt} (or\n\
@var{t_next} - @var{t}).  @var{x_est}, computed only when asked, is the result\n\
of two steps of @var{dt}/2: (@var{x_est} - @var{x_next}) / (2^p - 1) estimates\n\
its local error (step doubling).  @var{k} is the force (the p-part of @var{f})\n\
at @var{x_next} when the method produced it; pass it back as @var{k_vals} to\n\
save one call of @var{f}.  @var{options} is a struct from @code{odepkgset} or\n\
@code{odeset}; extra arguments of @var{f} are taken from\n\
@var{options}.funarguments.\n\
\n\
@var{f} may be a model of @code{odepkg_model} in place of the function, its\n\
parameter values in @var{options}.funarguments (no interpreter in the step).\n\
\n\
Example:\n\
@example\n\
f = @@(t, x) [x(2); -x(1)];   # harmonic oscillator\n\
[t1, x1] = stormer_verlet (f, 0, [1; 0], 0.1, odepkgset (\"Explicit\", \"yes\"))\n\
@end example\n\
@seealso{odeSV, symplectic_euler, velocity_verlet}\n@end deftypefn")
{
  return odepkg::binding::run_stepper ("stormer_verlet", args, nargout);
}

/*
%!shared f, o
%! f = @(t, x) [x(2); -x(1)];
%! o = struct ("Explicit", "yes");
%!test
%! ## local error O(h^3) on the harmonic oscillator against cos/sin
%! e = zeros (1, 3);  h = [0.1 0.05 0.025];
%! for i = 1:3
%!   [~, x1] = stormer_verlet (f, 0, [1; 0], h(i), o);
%!   e(i) = norm (x1 - [cos(h(i)); -sin(h(i))]);
%! endfor
%! p = polyfit (log (h), log (e), 1)(1);
%! assert (p, 3, 0.1);
%!test
%! ## explicit and implicit branches agree on a separable H
%! [~, xe] = stormer_verlet (f, 0, [0.3; 0.7], 0.1, o);
%! [~, xi] = stormer_verlet (f, 0, [0.3; 0.7], 0.1, struct ("Explicit", "no"));
%! assert (xi, xe, 1e-13);
%!test
%! ## step doubling estimate: x_est is the two-half-step result
%! [t1, x1, xest, k] = stormer_verlet (f, 0, [1; 0], 0.2, o);
%! [~, xa, ~, ka] = stormer_verlet (f, 0, [1; 0], 0.1, o);
%! [~, xb] = stormer_verlet (f, 0.1, xa, 0.1, o, ka);
%! assert (t1, 0.2);
%! assert (xest, xb, 1e-15);
%! assert (k, -x1(1), 1e-15);
%!test
%! ## t_next overrides dt; funarguments reach f
%! g = @(t, x, w) [x(2); -w^2 * x(1)];
%! oo = struct ("Explicit", "yes", "funarguments", {{2}});
%! [t1, x1] = stormer_verlet (g, 0, [1; 0], 99, oo, [], 1e-3);
%! assert (t1, 1e-3);
%! assert (x1(1), cos (2e-3), 1e-9);
%!error <even length> stormer_verlet (f, 0, [1; 0; 0], 0.1, o)
%!error <DT must be nonzero> stormer_verlet (f, 0, [1; 0], 0, o)
%!error <F must be a function handle> stormer_verlet (1, 0, [1; 0], 0.1, o)
%!error <K_VALS> stormer_verlet (f, 0, [1; 0], 0.1, o, [1 2 3])
%!error <Explicit> stormer_verlet (f, 0, [1; 0], 0.1, struct ("Explicit", "maybe"))
%!error <Invalid call> stormer_verlet (f, 0)
*/
