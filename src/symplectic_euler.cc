// symplectic_euler — compiled stepper with Octave's stepper calling convention.
#include "EigenConfig.hpp"
#include "binding/StepperDefun.h"

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("symplectic_euler", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("symplectic_euler", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (symplectic_euler, args, nargout,
           "-*- texinfo -*-\n@deftypefn {} {[@var{t_next}, @var{x_next}] =} symplectic_euler (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options})\n@deftypefnx {} {[@var{t_next}, @var{x_next}, @var{x_est}, @var{k}] =} symplectic_euler (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options}, @var{k_vals}, @var{t_next})\nSymplectic Euler step (order 1, symplectic):\n\
p_1 = p_0 - h dH/dq (q_0, p_1), q_1 = q_0 + h dH/dp (q_0, p_1).\n\
Explicit for @var{options}.Explicit = \"yes\" (separable H: three calls of\n\
@var{f}, two with @var{k_vals}; separability checked on the way, error\n\
@code{odepkg:notSeparable}), otherwise one Newton solve per step.\n\
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
[t1, x1] = symplectic_euler (f, 0, [1; 0], 0.1, odepkgset (\"Explicit\", \"yes\"))\n\
@end example\n\
@seealso{odeSE, stormer_verlet}\n@end deftypefn")
{
  return odepkg::binding::run_stepper ("symplectic_euler", args, nargout);
}

/*
%!shared f
%! f = @(t, x) [x(2); -x(1)];
%!test
%! ## the explicit map is p1 = p0 - h q0, q1 = q0 + h p1 (closed form)
%! h = 0.1;  x0 = [0.4; -0.2];
%! [t1, x1] = symplectic_euler (f, 0, x0, h, struct ("Explicit", "yes"));
%! p1 = x0(2) - h * x0(1);
%! assert (x1, [x0(1) + h * p1; p1], 1e-15);
%!test
%! ## implicit branch (Newton) on a non-separable H = (1 + q^2) p^2 / 2
%! g = @(t, x) [(1 + x(1)^2) * x(2); -x(1) * x(2)^2];
%! h = 0.05;  x0 = [0.5; 0.8];
%! [~, x1] = symplectic_euler (g, 0, x0, h, struct ("Explicit", "no"));
%! ## residual of the defining equations
%! p1 = x1(2);
%! assert (p1 - x0(2) + h * x0(1) * p1^2, 0, 1e-12);
%! assert (x1(1) - x0(1) - h * (1 + x0(1)^2) * p1, 0, 1e-12);
%!test
%! ## with the analytic Hessian the same result
%! g = @(t, x) [(1 + x(1)^2) * x(2); -x(1) * x(2)^2];
%! H = @(t, x) [x(2)^2, 2*x(1)*x(2); 2*x(1)*x(2), 1 + x(1)^2];
%! [~, a] = symplectic_euler (g, 0, [0.5; 0.8], 0.05, struct ("Explicit", "no"));
%! [~, b] = symplectic_euler (g, 0, [0.5; 0.8], 0.05, struct ("Explicit", "no", "HamiltonianHessFcn", H));
%! assert (b, a, 1e-13);
%!error <HamiltonianHessFcn must return> symplectic_euler (@(t, x) [(1 + x(1)^2) * x(2); -x(1) * x(2)^2], 0, [0.5; 0.8], 0.05, struct ("HamiltonianHessFcn", @(t, x) 1))
%!error <finite> symplectic_euler (f, 0, [Inf; 0], 0.1)
%!error <a function handle> symplectic_euler (f, 0, [1; 0], 0.1, struct ("HamiltonianHessFcn", 3))
*/
