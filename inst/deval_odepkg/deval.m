## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{y} =} deval (@var{sol}, @var{t})
## @deftypefnx {} {@var{y} =} deval (@var{sol}, @var{t}, @var{idx})
## @deftypefnx {} {[@var{y}, @var{yp}] =} deval (@dots{})
## Evaluate the solution @var{sol} of an odepkg solver (or any struct with
## increasing or decreasing times @code{x} (1-by-N) and states @code{y}
## (n-by-N)) at the times @var{t}, with its time derivative @var{yp}.
##
## The interpolant is the cubic through the four output points around each
## interval (fewer at the ends of short solutions): exact at the output
## points, interpolation error O(h^4).  For a composed run of order p > 4
## (@qcode{"Order"} or @qcode{"Composition"}) it is the polynomial of degree
## p - 1 through the p output points around the interval, with error
## O(h^p), the method's own.  For odeRATTLE and odeSHAKE with
## holonomic constraints g(q) = 0 the interpolated states are projected
## onto g(q) = 0 and G(q) H_p(q, p) = 0 (Newton, a few calls of the
## constraint functions and f per time), so they satisfy the constraints to
## round-off like the solver's own states.  For odeRATTLie the interpolant
## lives on the group: between output points (q_k, v_k) and (q_k+1, v_k+1),
## q(t_k + s) = q_k o exp(xi(s)) with xi the cubic Hermite interpolant in the
## Lie algebra (xi(0) = 0, xi'(0) = v_k, q_k+1 = q_k o exp(xi(h)), matching
## v_k+1) and v = T(xi) xi', so a rotation stays a rotation to round-off (a
## quaternion keeps norm 1), error O(h^4); constrained states are then
## projected along the group onto Phi(q) = 0 and B(q) v = 0.  @var{yp} is the
## interpolant's derivative (before that projection; for group coordinates,
## their time derivative).  Output points whose increment turns by nearly a
## full turn (more than about 5.2 rad: the chart of exp degenerates at 2 pi)
## are refused with an error; output more points.
##
## Octave 7 has no @code{deval}: odepkg installs this one (from its PKG_ADD)
## only when the running Octave has none, so it never shadows a core
## function.
##
## Example:
## @example
## sol = odeSV (@@(t, x) [x(2); -x(1)], [0 10], [1; 0]);
## y = deval (sol, [2.5, 7.5]);     # close to [cos(t); -sin(t)]
## @end example
## @seealso{odeSV, odeRATTLE}
## @end deftypefn

function [y, yp] = deval (sol, t, idx = [])

  if (nargin < 2)
    print_usage ();
  endif
  [y, yp] = __odepkg_deval__ (sol, t, idx);

endfunction

%!test
%! ## exact at the output points; between them the harmonic oscillator's
%! ## solution up to the method's error
%! sol = odeSV (@(t, x) [x(2); -x(1)], [0 10], [1; 0], odepkgset ("RelTol", 1e-8, "AbsTol", 1e-10));
%! assert (deval (sol, sol.x), sol.y, 1e-14);
%! [y, yp] = deval (sol, [2.5, 7.5]);
%! assert (y, [cos([2.5 7.5]); -sin([2.5 7.5])], 1e-5);
%! assert (yp, [-sin([2.5 7.5]); -cos([2.5 7.5])], 1e-4);
%!error <span of the solution> deval (struct ("x", [0 1], "y", [1 2]), 2)
