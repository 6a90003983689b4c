## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeSPVI (@var{fcn}, @var{tspan}, @var{y0})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSPVI (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSPVI (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeSPVI (@dots{})
## @deftypefnx {} {} odeSPVI (@dots{})
## Solve Hamilton's equations with a spectral variational integrator
## (Hall and Leok, @cite{Spectral variational integrators}, 2015; Marsden and
## West, @cite{Discrete mechanics and variational integrators}): on each step
## q is a polynomial with @qcode{"Q_DoFs"}
## Legendre modes and the action is approximated by Gauss--Legendre
## quadrature with @qcode{"P_DoFs"} nodes; the discrete Hamilton equations
## are solved by a quasi-Newton method whose Jacobian is built from the
## Hessians of H at the quadrature nodes: taken from
## @qcode{"HamiltonianHessFcn"} when given, by finite differences otherwise,
## then kept current by secant updates from the iterates (no extra calls of
## @var{fcn}; systems of more than 64 unknowns, (Q_DoFs + P_DoFs + 2) d,
## keep one factorization per step size instead).
## The map is symplectic for any general H(q, p).  @var{y0} = [q0; p0] and
## @code{@var{fcn} (@var{t}, [q; p])} returns [dH/dp; -dH/dq].
##
## The order is min (2 (Q_DoFs @minus{} 1), 2 P_DoFs), and P_DoFs >=
## Q_DoFs @minus{} 1 is required (with fewer nodes the discrete equations are
## ill-posed).  P_DoFs = Q_DoFs @minus{} 1 gives the P-stage Gauss collocation
## method, the highest order for the work; it is the default when only
## Q_DoFs is given, and Q_DoFs = 3, P_DoFs = 2 (order 4) when neither is.
## For Q_DoFs >= 4 the default @qcode{"NewtonTol"} is 1e-14 instead of 1e-12.
## Q_DoFs and P_DoFs are at most 30 (order 58).
##
## The tables of the 2013 odepkg @code{spectral_var_int} (the blog post
## @cite{Spectral Variational Integrators}, December 2013) @qcode{"Nodes"},
## @qcode{"Weights"}, @qcode{"Legendre"},
## @qcode{"Derivatives"} and @qcode{"Extremes"} may still be given: they are
## checked against the tables computed in C++ (an error if they differ).
## In adaptive mode the local error is estimated as in the 2013 code, by the same
## step with one more mode and one more node, started from the step's own
## solution.
##
## With @qcode{"NodeOutput"}, @qcode{"on"} the states at the P_DoFs Gauss
## nodes inside every step are output too, between the steps' end points
## (the 2013 @code{spectral_var_int} returned them; for dense output).
## Their accuracy is
## O(h^Q_DoFs), below the order of the step end points.  Not with
## output at requested times.
##
## Time modes, as in odepkg:
## @itemize
## @item @var{tspan} = [t0 tf]: adaptive steps, the local error estimated by
## the step with one more mode and one more node (above) and controlled with
## @qcode{"RelTol"}, @qcode{"AbsTol"}, @qcode{"NormControl"},
## @qcode{"InitialStep"} and @qcode{"MaxStep"} as in @code{ode45}; every
## accepted step is output.  With @qcode{"TimeStepSize"} (or
## @qcode{"TimeStepNumber"}) fixed steps instead, the last one shortened to
## end on tf.  Fixed steps keep the long-time energy behaviour of a
## symplectic method; variable steps give it up.
## @item @var{tspan} with more than two times: output exactly at those times
## (steps are shortened to land on them; no interpolation).
## @item scalar @var{tspan} = t0 with @qcode{"TimeStepSize"} h and
## @qcode{"TimeStepNumber"} N: N fixed steps, every one output.
## @end itemize
##
## @var{opts} is a struct from @code{odepkgset} (or @code{odeset}).  Extra
## arguments @var{par1}, @dots{} are passed to every user function.  The
## outputs are those of @code{ode45}: a column @var{t} and one row of
## @var{y} per time, or a struct @var{sol} with fields @code{x}, @code{y},
## @code{solver} and @code{stats} (counted calls, steps, Newton iterations).
## @qcode{"OutputFcn"}/@qcode{"OutputSel"} are honoured (@code{odeplot}
## when there is no output argument); @qcode{"Stats"}, @qcode{"on"} prints
## the counts.  If a step fails midway (Newton diverges, step size
## underflow, non-finite values), the solution computed so far is returned
## with a warning @code{odepkg:integrationFailed} naming t and the cause.
##
## Example:
## @example
## f = @@(t, x) [x(2); -sin(x(1))];               # pendulum H = p^2/2 - cos q
## opts = odepkgset ("Q_DoFs", 4, "P_DoFs", 3, "TimeStepSize", 0.1, "TimeStepNumber", 1000);
## [t, y] = odeSPVI (f, 0, [1; 0], opts);
## max (abs (y(:,2).^2/2 - cos (y(:,1)) + cos (1)))   # bounded energy error
## @end example
## @strong{Models:} @var{fcn} may be a model of @code{odepkg_model} (H
## written once, derivatives derived, C kernels compiled): the run then has
## no interpreter between steps (the Hessians of the quasi-Newton Jacobian
## are its exact derived ones), its parameters are the extra arguments,
## and in ensemble mode an extra argument with K columns gives one value per
## member (the members run one after the other, each in the kernels).
## @strong{Ensembles:} a @var{y0} with K columns integrates K trajectories
## in one call, the user functions vectorised over the columns (column j is
## member j); the members run one after the other in the same call.  @var{y} is then N-by-n-by-K.  See @code{help odepkg},
## Ensembles.
##
## @seealso{odeSV, spectral_var_int, odepkgset}
## @end deftypefn

function varargout = odeSPVI (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 3)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeSPVI", "spectral_var_int", nargout, fcn, tspan, y0, opts, varargin);

endfunction

%!shared kepler, x0, H
%! ## Kepler problem, eccentricity 0.5: H = |p|^2/2 - 1/|q|, period 2 pi
%! kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! x0 = [0.5; 0; 0; sqrt(3)];
%! H = @(y) sum (y(:,3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:,1:2).^2, 2));

%!test
%! ## global order min(2(Q-1), 2P), fitted over three step sizes, one period
%! for qp = [2 2 2; 3 2 4; 4 3 6].'
%!   for k = 1:3
%!     N = 50 * 2^k;
%!     o = odepkgset ("Q_DoFs", qp(1), "P_DoFs", qp(2), "TimeStepSize", 2*pi/N,
%!                    "TimeStepNumber", N);
%!     [~, y] = odeSPVI (kepler, 0, x0, o);
%!     e(k) = norm (y(end,:)' - x0);
%!   endfor
%!   p = polyfit (log ([1 2 4]), -log (e), 1)(1);
%!   assert (p, qp(3), 0.35);
%! endfor

%!test
%! ## symplectic: energy error bounded, no drift over 200 periods
%! o = odepkgset ("TimeStepSize", 2*pi/100, "TimeStepNumber", 20000);
%! [t, y] = odeSPVI (kepler, 0, x0, o);
%! dH = abs (H (y) - H (x0'));
%! assert (max (dH) < 1e-3);
%! assert (max (dH(end-2000:end)) < 1.5 * max (dH(1:2000)) + 1e-12);

%!test
%! ## adaptive, error per step controlled: the global error falls like
%! ## tol^(p/(p+1)) = tol^0.8 for the default order p = 4
%! tols = [1e-6 1e-10];
%! for k = 1:2
%!   sol = odeSPVI (kepler, [0 2*pi], x0, odepkgset ("RelTol", tols(k), "AbsTol", tols(k)));
%!   e(k) = norm (sol.y(:,end) - x0);
%!   n(k) = sol.stats.nsteps;
%!   assert (sol.x(end), 2*pi, 1e-12);
%! endfor
%! assert (log (e(1) / e(2)) / log (tols(1) / tols(2)), 0.8, 0.15);
%! assert (n(2) / n(1), 10^(4/5), 2);

%!test
%! ## analytic Hessian and finite differences give the same steps
%! hess = @(t, x) blkdiag ((eye(2) - 3 * x(1:2) * x(1:2)' / norm(x(1:2))^2) / norm(x(1:2))^3, eye(2));
%! o = odepkgset ("TimeStepSize", 0.05, "TimeStepNumber", 40);
%! [~, a] = odeSPVI (kepler, 0, x0, o);
%! sol = odeSPVI (kepler, 0, x0, odepkgset (o, "HamiltonianHessFcn", hess));
%! assert (sol.y', a, 1e-9);
%! assert (sol.stats.nhessevals > 0);
%! assert (sol.stats.nfdjacobians, 0);

%!test
%! ## output at requested times, extra parameters passed to f
%! f = @(t, x, w) [x(2); -w^2 * x(1)];
%! [t, y] = odeSPVI (f, [0 0.5 1 2], [1; 0], odepkgset ("TimeStepSize", 0.01), 3);
%! assert (t, [0; 0.5; 1; 2]);
%! assert (y(:,1), cos (3 * t), 1e-8);

%!test
%! ## NodeOutput: P nodes inside every step, in time order; their values
%! ## converge like h^Q (fitted), the step end points like h^(2P)
%! f = @(t, x) [x(2); -x(1)];
%! for k = 1:3
%!   h = 0.4 / 2^k;  N = round (2 / h);
%!   o = odepkgset ("Q_DoFs", 3, "P_DoFs", 2, "TimeStepSize", h, "TimeStepNumber", N,
%!                  "NodeOutput", "on");
%!   [t, y] = odeSPVI (f, 0, [1; 0], o);
%!   assert (numel (t), 3 * N + 1);
%!   assert (all (diff (t) > 0));
%!   ends = 1:3:numel (t);
%!   assert (t(ends), h * (0:N)', 1e-12);
%!   nodes = setdiff (1:numel (t), ends);
%!   en(k) = max (abs (y(nodes,1) - cos (t(nodes))));
%! endfor
%! assert (polyfit (log ([1 2 4]), -log (en), 1)(1), 3, 0.3);
%!error <"NodeOutput" is not used by odeSV; it is an option of odeSPVI> [t, y] = odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("NodeOutput", "on"))
%!error <option "NodeOutput" is for odeSPVI> [t, y] = odeSPVI (@(t, x) [x(2); -x(1)], [0 0.5 1], [1; 0], odepkgset ("NodeOutput", "on"))
%!error <"Q_DoFs" must be an integer> [t, y] = odeSPVI (kepler, [0 1], x0, odepkgset ("Q_DoFs", 1))
%!error <"Q_DoFs" must be an integer from 2 to 30> [t, y] = odeSPVI (kepler, [0 1], x0, odepkgset ("Q_DoFs", 3000))
%!error <"P_DoFs" must be an integer from 1 to 30> [t, y] = odeSPVI (kepler, [0 1], x0, odepkgset ("P_DoFs", 1e5))
%!error <"P_DoFs" must be at least Q_DoFs - 1> [t, y] = odeSPVI (kepler, [0 1], x0, odepkgset ("Q_DoFs", 5, "P_DoFs", 2))
%!error <differ from the Gauss-Legendre> [t, y] = odeSPVI (kepler, [0 1], x0, odepkgset ("Q_DoFs", 3, "P_DoFs", 2, "Nodes", [-0.5; 0.5]))
%!error <Y0 must have even length> [t, y] = odeSPVI (kepler, [0 1], [1; 2; 3])

%!test
%! ## deval uses SPVI's own polynomial (end points and Gauss-node states of
%! ## each step): with Q = 6, P = 5 (order 10) the mid-step error falls as
%! ## h^6, the order of q's degree-5 polynomial (a cubic through the step
%! ## points would give h^4); at the node times it returns exactly the node
%! ## states of NodeOutput, at the steps the steps; sol has no node rows.
%! f = @(t, x) [x(2); -x(1)];
%! hs = [0.4, 0.2, 0.1];  err = [];
%! for h = hs
%!   o = odepkgset ("Q_DoFs", 6, "P_DoFs", 5, "TimeStepSize", h, "TimeStepNumber", round (4 / h));
%!   sol = odeSPVI (f, 0, [1; 0], o);
%!   assert (numel (sol.x), round (4 / h) + 1);
%!   tm = (sol.x(1:end-1) + sol.x(2:end)) / 2;
%!   err(end+1) = max (abs (__odepkg_deval__ (sol, tm)(1,:) - cos (tm)));
%! endfor
%! assert (polyfit (log (hs), log (err), 1)(1), 6, 0.3);
%! assert (__odepkg_deval__ (sol, sol.x), sol.y, 0);
%! [tn, yn] = odeSPVI (f, 0, [1; 0], odepkgset (o, "NodeOutput", "on"));
%! assert (__odepkg_deval__ (sol, tn.'), yn.', 1e-14);
%!test
%! ## Refine with adaptive SPVI steps (about 1 long): the refined points
%! ## follow the exact solution to 1e-4 where the cubic would miss by 1e-2
%! [t, y] = odeSPVI (@(t, x) [x(2); -x(1)], [0 10], [1; 0], odepkgset ("Q_DoFs", 5, "RelTol", 1e-10, "Refine", 3));
%! assert (max (abs (y(:, 1) - cos (t))) < 1e-4);
%! assert (numel (t), 3 * (numel (unique (t(1:3:end))) - 1) + 1);
%!test
%! ## The interpolant's own order: with an order-6 SPVI (Q = 4, P = 3) the
%! ## method's error is negligible and the mid-step error of the cubic
%! ## interpolant against the exact solution falls as h^4 (fitted > 3).
%! f = @(t, x) [x(2); -x(1)];
%! hs = [0.2, 0.1, 0.05];  err = [];
%! for h = hs
%!   sol = odeSPVI (f, 0, [1; 0], odepkgset ("Q_DoFs", 4, "P_DoFs", 3, "TimeStepSize", h, ...
%!                                           "TimeStepNumber", round (4 / h)));
%!   tm = (sol.x(1:end-1) + sol.x(2:end)) / 2;
%!   err(end+1) = max (abs (__odepkg_deval__ (rmfield (sol, "idata"), tm)(1,:) - cos (tm)));
%! endfor
%! p = polyfit (log (hs), log (err), 1)(1);
%! assert (p > 3);

%!demo
%! ## Kepler orbit (e = 0.5) over 100 periods T = 2 pi with a 6th-order SPVI,
%! ## 50 steps a period: the orbit stays on its ellipse, the energy error
%! ## (largest at each pericentre passage) stays bounded, within 4e-7.
%! kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! x0 = [0.5; 0; 0; sqrt(3)];
%! opts = odepkgset ("Q_DoFs", 4, "P_DoFs", 3, "TimeStepSize", 2*pi/50, "TimeStepNumber", 5000);
%! [t, y] = odeSPVI (kepler, 0, x0, opts);
%! H = sum (y(:,3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:,1:2).^2, 2));
%! axes ("position", [0.1 0.13 0.22 0.75]);
%! plot (y(:,1), y(:,2), 0, 0, "k+");  axis equal;  axis ([-1.8 0.8 -1.3 1.3]);
%! xlabel ("q_1");  ylabel ("q_2");  title ("orbit, 100 periods");
%! axes ("position", [0.42 0.13 0.55 0.75]);
%! plot (t, (H - H(1)) / 1e-7);  xlim ([0 t(end)]);
%! xlabel ("t");  ylabel ("(H - H_0) / 10^{-7}");  title ("odeSPVI (Q = 4, P = 3), h = T/50: energy error");

%!test
%! ## Events on SPVI steps: every zero of q = cos t in [0, 10] (both
%! ## directions), te to the method's order-4 accuracy, event states exact
%! ## zeros of the event function.
%! ev = @(t, x) deal (x(1), false, 0);
%! o = odepkgset ("Events", ev, "TimeStepSize", 0.1);
%! [~, ~, te, ye, ie] = odeSPVI (@(t, x) [x(2); -x(1)], [0 10], [1; 0], o);
%! exact = pi / 2 + pi * (0:2)';
%! assert (te, exact, 3e-6);
%! assert (max (abs (ye(:, 1))) < 1e-12);
%! assert (ie, ones (3, 1));
%! [~, ~, te2] = odeSPVI (@(t, x) [x(2); -x(1)], [0 10], [1; 0], odepkgset (o, "TimeStepSize", 0.05));
%! assert (log2 (abs (te(2:3) - exact(2:3)) ./ abs (te2(2:3) - exact(2:3))), [4; 4], 0.3);
%!demo
%! ## Order of the spectral variational integrators: error after one period
%! ## of the oscillator against h, fitted slopes min (2 (Q - 1), 2 P)
%! f = @(t, x) [x(2); -x(1)];
%! N = [8 16 32 64];  h = 2*pi ./ N;  QP = [2 1; 3 2; 4 3];  err = zeros (rows (QP), numel (N));
%! for i = 1:rows (QP)
%!   for j = 1:numel (N)
%!     [~, y] = odeSPVI (f, 0, [1; 0], odepkgset ("Q_DoFs", QP(i,1), "P_DoFs", QP(i,2), ...
%!                                              "TimeStepSize", h(j), "TimeStepNumber", N(j)));
%!     err(i, j) = norm (y(end,:) - [1 0]);
%!   endfor
%! endfor
%! hl = loglog (h, err, "o-");  axis ([0.01 1 1e-11 1]);
%! xlabel ("step size h");  ylabel ("error after one period");
%! for i = 1:rows (QP)
%!   slope = polyfit (log (h), log (err(i,:)), 1)(1);
%!   text (0.09, err(i,end), sprintf ("Q = %d, P = %d: slope %.2f (expected %d)", QP(i,:), slope, ...
%!                                     min (2 * (QP(i,1) - 1), 2 * QP(i,2))), ...
%!         "horizontalalignment", "right", "color", get (hl(i), "color"));
%! endfor
%! title ("odeSPVI: order min (2 (Q - 1), 2 P), fitted slopes");

%!test
%! ## Many nodes, adaptive, non-separable H = p^2 (1 + q^2)/2 + q^2/2: Newton
%! ## converges at every step size the error estimate asks for (an explicit
%! ## RK4 guess where the extrapolated polynomial is far off; before, 38 of
%! ## 115 attempts failed in Newton), and the energy is kept.
%! f = @(t, y) [y(2) * (1 + y(1)^2); -(y(2)^2 * y(1) + y(1))];
%! H = @(y) y(2, :) .^ 2 .* (1 + y(1, :) .^ 2) / 2 + y(1, :) .^ 2 / 2;
%! sol = odeSPVI (f, [0 50], [1; 0], odepkgset ("Q_DoFs", 8, "P_DoFs", 8, "RelTol", 1e-6, "AbsTol", 1e-8));
%! assert (sol.x(end), 50);
%! assert (sol.stats.nfailedsolves, 0);
%! assert (sol.stats.nfailed < sol.stats.nsteps / 2);
%! assert (max (abs (H (sol.y) - H (sol.y(:, 1)))) < 1e-5);

%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## a model of odepkg_model (the pendulum, w^2 a parameter): the native
%! ## run equals the handle run with the hand-written Hessian, step for step
%! ## to round-off, fixed and adaptive steps; energy error bounded
%! pkg load symbolic
%! dir = tempname ();
%! unwind_protect
%!   syms q p w2 real
%!   m = odepkg_model ("H", p^2/2 - w2 * cos (q), "q", q, "p", p, "Parameters", w2, "CacheDir", dir);
%!   f = @(t, y, w2) [y(2); -w2 * sin(y(1))];
%!   hess = @(t, y, w2) [w2 * cos(y(1)), 0; 0, 1];
%!   y0 = [2; 0];
%!   for o = {odepkgset("TimeStepSize", 0.1, "Q_DoFs", 4), odepkgset("RelTol", 1e-8, "AbsTol", 1e-10)}
%!     [tn, yn] = odeSPVI (m, [0 10], y0, o{1}, 4);
%!     [th, yh] = odeSPVI (f, [0 10], y0, odepkgset (o{1}, "HamiltonianHessFcn", hess), 4);
%!     assert (tn, th, 1e-12);
%!     assert (yn, yh, 1e-11);
%!     E = yn(:,2).^2 / 2 - 4 * cos (yn(:,1));
%!     assert (max (abs (E - E(1))) < 1e-5);
%!   endfor
%! unwind_protect_cleanup
%!   confirm_recursive_rmdir (false, "local");
%!   if (exist (dir, "dir"))
%!     rmdir (dir, "s");
%!   endif
%! end_unwind_protect
