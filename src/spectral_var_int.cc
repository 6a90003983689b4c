// spectral_var_int — compiled spectral variational step (Hall & Leok 2015) with
// Octave's stepper calling convention.
#include "EigenConfig.hpp"
#include "binding/StepperDefun.h"

// In the package's one oct-file (src/Makefile):
// PKG_ADD: autoload ("spectral_var_int", "__odepkg_integrate__.oct");
// PKG_DEL: autoload ("spectral_var_int", "__odepkg_integrate__.oct", "remove");

DEFUN_DLD (spectral_var_int, args, nargout,
           "-*- texinfo -*-\n\
@deftypefn {} {[@var{t_next}, @var{x_next}] =} spectral_var_int (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options})\n\
@deftypefnx {} {[@var{t_next}, @var{x_next}, @var{x_est}, @var{k}] =} spectral_var_int (@var{f}, @var{t}, @var{x}, @var{dt}, @var{options}, @var{k_vals}, @var{t_next})\n\
One step of the spectral variational integrator (Hall and Leok 2015): q is a\n\
polynomial with @qcode{\"Q_DoFs\"} Legendre modes on the step, the action is\n\
integrated by Gauss--Legendre quadrature with @qcode{\"P_DoFs\"} nodes, and the\n\
discrete Hamilton equations are solved by Newton's method (Jacobian from\n\
@qcode{\"HamiltonianHessFcn\"} when given, finite differences otherwise).\n\
The order is min (2 (Q_DoFs - 1), 2 P_DoFs); P_DoFs >= Q_DoFs - 1 is\n\
required.  Defaults: P_DoFs = Q_DoFs - 1 (Gauss collocation), Q_DoFs = 3.\n\
@var{x_est}, computed only when asked, is the same step with one more mode\n\
and one more node (as the 2013 odepkg spectral_var_int), so @var{x_est} - @var{x_next} estimates the\n\
local error of @var{x_next}.  Options @qcode{\"Nodes\"}, @qcode{\"Weights\"},\n\
@qcode{\"Legendre\"}, @qcode{\"Derivatives\"}, @qcode{\"Extremes\"} of the 2013 code\n\
are accepted and checked against the tables computed here.\n\
\n\
@var{f} may be a model of @code{odepkg_model} in place of the function, its\n\
parameter values in @var{options}.funarguments (no interpreter in the step).\n\
\n\
Example:\n\
@example\n\
f = @@(t, x) [x(2); -x(1)];                  # harmonic oscillator\n\
o = odepkgset (\"Q_DoFs\", 4, \"P_DoFs\", 3);     # order 6\n\
[t1, x1] = spectral_var_int (f, 0, [1; 0], 0.5, o);\n\
x1 - [cos(0.5); -sin(0.5)]                  # about 1e-7\n\
@end example\n\
@seealso{odeSPVI, stormer_verlet}\n\
@end deftypefn")
{
  return odepkg::binding::run_stepper ("spectral_var_int", args, nargout);
}

/*
%!shared f, exact
%! f = @(t, x) [x(2); -x(1)];
%! exact = @(t) [cos(t); -sin(t)];
%!test
%! ## local error O(h^(order+1)) for the default (3, 2): order 4
%! for k = 1:3
%!   h = 0.4 / 2^k;
%!   [~, x1] = spectral_var_int (f, 0, [1; 0], h, struct ());
%!   e(k) = norm (x1 - exact (h));
%! endfor
%! assert (log2 (e(1:2) ./ e(2:3)), [5 5], 0.3);
%!test
%! ## (Q, P) = (4, 3): order 6, local error O(h^7)
%! o = struct ("Q_DoFs", 4, "P_DoFs", 3);
%! for k = 1:3
%!   h = 0.8 / 2^k;
%!   [~, x1] = spectral_var_int (f, 0, [1; 0], h, o);
%!   e(k) = norm (x1 - exact (h));
%! endfor
%! assert (log2 (e(1:2) ./ e(2:3)), [7 7], 0.4);
%!test
%! ## x_est is the (Q+1, P+1) step: much closer to the exact flow
%! o = struct ("Q_DoFs", 3, "P_DoFs", 2);
%! [~, x1, xe] = spectral_var_int (f, 0, [1; 0], 0.2, o);
%! assert (norm (xe - exact (0.2)) < 0.05 * norm (x1 - exact (0.2)));
%!test
%! ## the 2013 code's tables are accepted when right
%! z = [-1; 1] / sqrt (3);
%! o = struct ("Q_DoFs", 3, "P_DoFs", 2, "Nodes", z, "Weights", [1; 1], ...
%!             "Legendre", [ones(2,1), z, (3*z.^2 - 1)/2], ...
%!             "Derivatives", [zeros(2,1), ones(2,1), 3*z], ...
%!             "Extremes", [1 -1 1; 1 1 1]);
%! [~, a] = spectral_var_int (f, 0, [1; 0], 0.1, o);
%! [~, b] = spectral_var_int (f, 0, [1; 0], 0.1, struct ("Q_DoFs", 3, "P_DoFs", 2));
%! assert (a, b, 1e-15);
%!error <differ from the Gauss-Legendre> spectral_var_int (f, 0, [1; 0], 0.1, struct ("Q_DoFs", 3, "P_DoFs", 2, "Weights", [1; 0.9]))
%!error <"Weights" has size> spectral_var_int (f, 0, [1; 0], 0.1, struct ("Q_DoFs", 3, "P_DoFs", 2, "Weights", [1; 1; 1]))
%!error <"Q_DoFs" must be an integer> spectral_var_int (f, 0, [1; 0], 0.1, struct ("Q_DoFs", 1))
%!error <"P_DoFs" must be at least Q_DoFs - 1> spectral_var_int (f, 0, [1; 0], 0.1, struct ("Q_DoFs", 5, "P_DoFs", 2))
*/
