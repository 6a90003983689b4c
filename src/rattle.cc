// rattle — compiled RATTLE step with Octave's stepper calling convention.
#include "EigenConfig.hpp"
#include "binding/StepperDefun.h"

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("rattle", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("rattle", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (rattle, args, nargout,
           "-*- texinfo -*-\n\
@deftypefn {} {[@var{t_next}, @var{x_next}] =} rattle (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options})\n\
@deftypefnx {} {[@var{t_next}, @var{x_next}, @var{x_est}, @var{k}] =} rattle (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options}, @var{k_vals}, @var{t_next})\n\
One RATTLE step (order 2, symmetric, symplectic on the constraint manifold)\n\
for q' = H_p, p' = -H_q - G(q)' lambda, g(q) = 0.  @var{options} must give\n\
@qcode{\"ConstraintFcn\"} and @qcode{\"ConstraintsNb\"}, and may give\n\
@qcode{\"ConstraintGradFcn\"}, @qcode{\"ConstraintHessFcn\"},\n\
@qcode{\"HamiltonianHessFcn\"}, @qcode{\"Explicit\"} (separable H: Newton on\n\
the multipliers only; separability probed at @var{x} by three calls of @var{f},\n\
error @code{odepkg:notSeparable}), @qcode{\"NewtonTol\"}, @qcode{\"MaxNewtonIterations\"}.\n\
@var{x} = [q; p] should lie on the constraint manifold (see @code{odeRATTLE},\n\
which checks and projects initial data).  @var{x_next} is one step of\n\
@var{dt}; @var{x_est}, computed only when asked, two steps of @var{dt}/2\n\
(step doubling: (@var{x_est} - @var{x_next}) / 3 estimates its local error);\n\
@var{k} is the force at @var{x_next} when the method produced it.\n\
\n\
@var{f} may be a model of @code{odepkg_model} in place of the function, its\n\
parameter values in @var{options}.funarguments (no interpreter in the step).\n\
\n\
Example:\n\
@example\n\
f = @@(t, x) [x(3:4); 0; -1];      # pendulum, H = |p|^2/2 + q_2\n\
o = odepkgset (\"ConstraintFcn\", @@(q) q'*q - 1, \"ConstraintsNb\", 1, \"Explicit\", \"yes\");\n\
[t1, x1] = rattle (f, 0, [1; 0; 0; 0], 0.1, o);\n\
x1(1:2)' * x1(1:2) - 1             # round-off\n\
@end example\n\
@seealso{odeRATTLE, odeSHAKE, stormer_verlet}\n\
@end deftypefn")
{
  return odepkg::binding::run_stepper ("rattle", args, nargout);
}

/*
%!shared f, o
%! f = @(t, x) [x(3:4); 0; -1];
%! o = struct ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
%!             "ConstraintsNb", 1, "Explicit", "yes");
%!test
%! ## both constraints hold after the step; local error O(h^3)
%! x0 = [sin(1); -cos(1); 0; 0];
%! [t1, x1] = rattle (f, 0, x0, 0.1, o);
%! assert (t1, 0.1);
%! assert (x1(1:2)' * x1(1:2), 1, 1e-13);
%! assert (x1(1:2)' * x1(3:4), 0, 1e-13);
%! [~, xr] = rattle (f, 0, x0, 1e-3, o);
%! for k = 2:100
%!   [~, xr] = rattle (f, (k-1) * 1e-3, xr, 1e-3, o);
%! endfor
%! e1 = norm (x1 - xr);
%! [~, x2] = rattle (f, 0, x0, 0.05, o);
%! [~, xr2] = rattle (f, 0, x0, 1e-3, o);
%! for k = 2:50
%!   [~, xr2] = rattle (f, (k-1) * 1e-3, xr2, 1e-3, o);
%! endfor
%! e2 = norm (x2 - xr2);
%! assert (log2 (e1 / e2), 3, 0.3);
%!test
%! ## general (implicit) path equals the separable one
%! x0 = [sin(1); -cos(1); 0.2*cos(1); 0.2*sin(1)];
%! [~, a] = rattle (f, 0, x0, 0.05, o);
%! oo = o;  oo.Explicit = "no";
%! [~, b] = rattle (f, 0, x0, 0.05, oo);
%! assert (b, a, 1e-12);
%!test
%! ## x_est: two half steps
%! x0 = [sin(1); -cos(1); 0; 0];
%! [~, x1, xe] = rattle (f, 0, x0, 0.1, o);
%! [~, xa] = rattle (f, 0, x0, 0.05, o);
%! [~, xb] = rattle (f, 0.05, xa, 0.05, o);
%! assert (xe, xb, 1e-14);
%!test
%! ## constraints on the whole state (McLachlan et al. 2014, Sect. 5.4.2): g(y) = |y|^2 - 1
%! ## with "ConstraintVariables" "qp", the midpoint rule and the fibre flow:
%! ## one step is odeRATTLE's, on M and on M_H to round-off; x_est = two half
%! ## steps; BaseMethod "symplectic_euler" is another (first-order) map
%! fq = @(t, y) [y(3:4); 0; -1];
%! fl = @(y, s) [cos(2*s)*y(1:2) + sin(2*s)*y(3:4); -sin(2*s)*y(1:2) + cos(2*s)*y(3:4)];
%! oq = struct ("ConstraintVariables", "qp", "ConstraintFcn", @(y) y'*y - 1, ...
%!              "ConstraintGradFcn", @(y) 2*y', "ConstraintsNb", 1, "ConstraintFlowFcn", fl);
%! y0 = [-0.7953784145671681; -0.4080167885583751; -0.3902524154027006; 0.2204507431774412];
%! [t1, x1, xe] = rattle (fq, 0, y0, 0.1, oq);
%! [~, y] = odeRATTLE (fq, [0 0.1], y0, odepkgset (oq, "TimeStepSize", 0.1));
%! assert (x1, y(end,:).', 1e-14);
%! assert (x1' * x1, 1, 1e-14);
%! assert (2 * x1' * fq (0, x1), 0, 1e-13);
%! [~, xa] = rattle (fq, 0, y0, 0.05, oq);
%! [~, xb] = rattle (fq, 0.05, xa, 0.05, oq);
%! assert (xe, xb, 1e-12);
%! oq.BaseMethod = "symplectic_euler";
%! [~, xs] = rattle (fq, 0, y0, 0.1, oq);
%! assert (xs' * xs, 1, 1e-14);
%! assert (norm (xs - x1) > 1e-4 && norm (xs - x1) < 0.1);
## "Explicit" on a non-separable H = (1 + q_1^2) |p|^2 / 2 + q_2: refused (it was stepped)
%!error id=odepkg:notSeparable rattle (@(t, x) [(1 + x(1)^2) * x(3:4); -x(1) * (x(3:4)'*x(3:4)); -1], 0, [1; 0; 0; 1], 0.1, o)
%!error <ConstraintFcn and ConstraintsNb are required> rattle (f, 0, [1; 0; 0; 0], 0.1, struct ())
%!error <ConstraintsNb> rattle (f, 0, [1; 0; 0; 0], 0.1, struct ("ConstraintFcn", @(q) q'*q - 1))
%!error <ConstraintsNb" \(2\) must be smaller> rattle (f, 0, [1; 0; 0; 0], 0.1, struct ("ConstraintFcn", @(q) q, "ConstraintsNb", 2))
*/
