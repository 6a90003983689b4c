## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeVV (@var{fcn}, @var{tspan}, @var{y0})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeVV (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeVV (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeVV (@dots{})
## @deftypefnx {} {} odeVV (@dots{})
## Solve Newton's equations x'' = a(t, x) with the velocity Verlet method:
## order 2, symplectic, one call of @var{fcn} per fixed step.  @var{y0} =
## [x0; v0] and @code{@var{fcn} (@var{t}, [x; v])} returns [v; a].  The
## acceleration should not depend on v: it is evaluated at
## [x_@{n+1@}; v_n + h/2 a_n].
##
## Higher orders: @qcode{"Order"}, 4, 6, 8 or 10 (or @qcode{"Composition"}, a
## table name, see @code{odeSV}): each step is the symmetric composition of s
## velocity Verlet substeps (Hairer, Lubich, Wanner, Sects. II.4 and V.3),
## one call of @var{fcn} per substep (for an acceleration independent of v,
## for which velocity Verlet is symmetric).
##
## @qcode{"CompensatedSummation"}, @qcode{"on"}: the updates x_@{n+1@} =
## x_n + dx and v_@{n+1@} = v_n + dv summed with compensation (see
## @code{odeSV}).
##
## Time modes, as in odepkg:
## @itemize
## @item @var{tspan} = [t0 tf]: adaptive steps, the local error estimated by
## step doubling (one step of h against two of h/2, the latter kept) and
## controlled with @qcode{"RelTol"}, @qcode{"AbsTol"}, @qcode{"NormControl"},
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
## @var{fcn} may be a model of @code{odepkg_model} whose kinetic energy is
## quadratic, H = p'' M^-1 p / 2 + V(q) with M constant (the model's flag
## @code{quadratic_kinetic}; another H is the error
## @code{odepkg:kineticNotQuadratic}): the state is then [q; v] with the
## velocities v = dq/dt = M^-1 p, not the momenta, and a = M^-1 (-dV/dq)
## runs in the model's compiled kernels (for M = I, v = p).  Its parameters
## are the extra arguments; in ensemble mode an extra argument with K columns
## gives one value per member (a mass per member, say), the members running
## on the machine's cores (@qcode{"Threads"}).
##
## Example:
## @example
## sol = odeVV (@@(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3], [0 10], [1; 0; 0; 1]);
## plot (sol.y(1,:), sol.y(2,:))   # a circular orbit
## @end example
## @strong{Ensembles:} a @var{y0} with K columns integrates K trajectories
## in one call, the user functions vectorised over the columns (column j is
## member j); the callbacks are called once per step for all members.  @var{y} is then N-by-n-by-K.  See @code{help odepkg},
## Ensembles.
##
## @seealso{odeSV, odeSE, velocity_verlet, odepkgset}
## @end deftypefn

function varargout = odeVV (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 3)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeVV", "velocity_verlet", nargout, fcn, tspan, y0, opts, varargin);

endfunction

%!test
%! ## ode45's convention, parameters right after Y0: the same run as with
%! ## odepkgset () before them
%! f = @(t, x, w) [x(2); -w^2 * x(1)];
%! [t1, y1] = odeVV (f, [0 2], [1; 0], 3);
%! [t2, y2] = odeVV (f, [0 2], [1; 0], odepkgset (), 3);
%! assert ([t1, y1], [t2, y2], 0);
%! assert (y1(end, 1), cos (6), 5e-2);
%!test
%! ## a state of n = 10^6 numbers in O(n) memory (issue 13, defect 3):
%! ## velocity Verlet against a plain loop, one call of f per step
%! d = 5e5;  w = 1 + mod ((1:d)', 7) / 7;  h = 0.01;  N = 20;
%! f = @(t, x) [x(d+1:end); -(w.^2) .* x(1:d)];
%! x0 = [cos(0.001 * (1:d)'); zeros(d, 1)];
%! sol = odeVV (f, [0 N*h/2 N*h], x0, odepkgset ("TimeStepSize", h));
%! q = x0(1:d);  v = x0(d+1:end);
%! for k = 1:N
%!   v -= h/2 * w.^2 .* q;  q += h * v;  v -= h/2 * w.^2 .* q;
%! endfor
%! assert (sol.y(:,end), [q; v], 1e-13);
%! assert (sol.stats.nfevals, N + 1);
%!test
%! ## StepControl "reversible": for Kepler (separable, T = |v|^2/2) velocity
%! ## Verlet is explicit Stormer-Verlet, so the steps and states agree
%! kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! y0 = [0.1; 0; 0; sqrt(19)];
%! o = odepkgset ("StepControl", "reversible", "RelTol", 1e-6, "AbsTol", 1e-6);
%! vv = odeVV (kepler, [0 20*pi], y0, o);
%! sv = odeSV (kepler, [0 20*pi], y0, odepkgset (o, "Explicit", "yes"));
%! assert (vv.stats.nsteps, sv.stats.nsteps);
%! assert (vv.x, sv.x, 1e-10);
%! assert (vv.y, sv.y, 1e-8);
%! assert (vv.stats.nfevals, 1 + 4 * (vv.stats.nsteps - 1) + 1, 30);
%!test
%! ## order 2 on the harmonic oscillator (closed form), slope over 4 step sizes
%! f = @(t, x) [x(2); -x(1)];
%! h = [0.04 0.02 0.01 0.005];  err = zeros (size (h));
%! for i = 1:4
%!   [t, y] = odeVV (f, [0 2], [1; 0], odepkgset ("TimeStepSize", h(i)));
%!   err(i) = norm (y(end,:) - [cos(2), -sin(2)]);
%! endfor
%! assert (polyfit (log (h), log (err), 1)(1), 2, 0.1);
%!test
%! ## one call of the function per fixed step (the acceleration is reused)
%! f = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! sol = odeVV (f, 0, [1; 0; 0; 1], odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 1000));
%! assert (sol.stats.nfevals, 1001);
%! ## circular orbit of radius 1: the radius stays close to 1
%! assert (max (abs (sqrt (sum (sol.y(1:2,:).^2)) - 1)) < 1e-4);
%!test
%! ## adaptive run agrees with the exact circular orbit
%! f = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! sol = odeVV (f, [0 10], [1; 0; 0; 1], odepkgset ("RelTol", 1e-8, "AbsTol", 1e-10));
%! assert (sol.x(end), 10);
%! assert (sol.y(1:2,end), [cos(10); sin(10)], 1e-4);
%! assert (sol.solver, "odeVV");
%!test
%! ## Every odeset field is honoured or refused, never ignored (table-driven):
%! ## each field set alone to a value that would change the result is either
%! ## used (the run differs from the default one, or is the documented
%! ## no-op) or refused with odepkg:unsupportedOption; the tolerances, which
%! ## fixed steps would ignore, are refused as conflicting with TimeStepSize
%! ## (odepkg:invalidOption).
%! f = @(t, x) [x(2); -x(1)];
%! base = {"TimeStepSize", 0.1, "TimeStepNumber", 10};
%! [~, y0] = odeVV (f, 0, [1; 0], odepkgset (base{:}));
%! values = struct ("AbsTol", 1e-3, "BDF", "on", "Events", @(t, x) deal (x(1), false, 0), ...
%!                  "InitialSlope", [0; 0], "InitialStep", 0.01, "JConstant", "on", ...
%!                  "JPattern", [1 1; 1 1], "Jacobian", @(t, x) [0 1; -1 0], ...
%!                  "MStateDependence", "none", "Mass", eye (2), "MassSingular", "no", ...
%!                  "MaxOrder", 3, "MaxStep", 0.5, "MvPattern", [1 1; 1 1], "NonNegative", 1, ...
%!                  "NormControl", "on", "OutputFcn", @(t, y, flag) false, "OutputSel", 1, ...
%!                  "Refine", 4, "RelTol", 1e-6, "Stats", "off", "Vectorized", "on");
%! refused = {"BDF", "InitialSlope", "JConstant", "JPattern", "Jacobian", ...
%!            "MStateDependence", "Mass", "MassSingular", "MaxOrder", "MvPattern", ...
%!            "NonNegative"};
%! conflicting = {"AbsTol", "InitialStep", "MaxStep", "NormControl", "RelTol"};
%! fn = fieldnames (odeset ());
%! for i = 1:numel (fn)
%!   assert (isfield (values, fn{i}), ["no value in the table for odeset field " fn{i}]);
%!   o = odepkgset (odepkgset (base{:}), fn{i}, values.(fn{i}));
%!   if (any (strcmp (fn{i}, refused)))
%!     try
%!       [~, y] = odeVV (f, 0, [1; 0], o);
%!       error ("odeset field %s was accepted", fn{i});
%!     catch err
%!       assert (err.identifier, "odepkg:unsupportedOption", fn{i});
%!       assert (! isempty (strfind (err.message, fn{i})));
%!     end_try_catch
%!   elseif (any (strcmp (fn{i}, conflicting)))
%!     try
%!       [~, y] = odeVV (f, 0, [1; 0], o);
%!       error ("odeset field %s was accepted with fixed steps", fn{i});
%!     catch err
%!       assert (err.identifier, "odepkg:invalidOption", fn{i});
%!       assert (! isempty (strfind (err.message, sprintf ('"%s" conflicts with "TimeStepSize"', fn{i}))));
%!     end_try_catch
%!     [~, y] = odeVV (f, [0 1], [1; 0], odepkgset (fn{i}, values.(fn{i})));  # adaptive: honoured
%!     assert (all (isfinite (y(:))));
%!   else
%!     [~, y] = odeVV (f, 0, [1; 0], o);          # honoured
%!     assert (all (isfinite (y(:))));
%!   endif
%! endfor
%! ## a package option of another solver, and an unknown field
%! fail ('odeVV (f, 0, [1; 0], odepkgset (base{:}, "Q_DoFs", 3))', "option of odeSPVI");
%! fail ('odeVV (f, 0, [1; 0], setfield (odepkgset (base{:}), "Reltol", 1e-3))', "unknown option");
%! fail ('odeSV (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q''*q - 1, "ConstraintsNb", 1))', ...
%!       "option of odeRATTLE");
%!test
%! ## Events (ode45's meaning): q = cos t crosses 0 at pi/2 + k pi.  Every
%! ## crossing is found, in time order; the event function vanishes at the
%! ## reported (method) state; te is exact up to the method's O(h^2) error;
%! ## one event call per step plus the location.
%! f = @(t, x) [x(2); -x(1)];
%! ev = @(t, x) deal (x(1), false, 0);
%! o = odepkgset ("Events", ev, "TimeStepSize", 0.01);
%! [t, y, te, ye, ie] = odeVV (f, [0 10], [1; 0], o);
%! assert (te, pi / 2 + pi * (0:2)', 1e-4);
%! assert (abs (ye(:, 1)) < 1e-12);
%! assert (ie, ones (3, 1));
%! sol = odeVV (f, [0 10], [1; 0], o);
%! assert (sol.xe, te.', 0);
%! assert (sol.ye, ye.', 0);
%! assert (sol.stats.neventevals < numel (sol.x) + 3 * 40);
%! ## halving h divides the error of te by 4 (order 2)
%! [~, ~, te2] = odeVV (f, [0 10], [1; 0], odepkgset (o, "TimeStepSize", 0.005));
%! r = abs (te - (pi / 2 + pi * (0:2)')) ./ abs (te2 - (pi / 2 + pi * (0:2)'));
%! assert (r, 4 * ones (3, 1), 0.2);
%!function [v, term, dir] = counted_event (t, x)
%!  global odepkg_vv_evcalls
%!  odepkg_vv_evcalls += 1;
%!  v = x(1) - 2;  term = false;  dir = 0;
%!endfunction
%!test
%! ## no crossing: exactly one event call per step and one at t0 (counted,
%! ## and what stats reports)
%! global odepkg_vv_evcalls
%! odepkg_vv_evcalls = 0;
%! sol = odeVV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("Events", @counted_event, "TimeStepSize", 0.1, "TimeStepNumber", 50));
%! assert (odepkg_vv_evcalls, 51);
%! assert (sol.stats.neventevals, 51);
%! assert (isempty (sol.xe));
%! clear -global odepkg_vv_evcalls
%!test
%! ## direction and terminal: only increasing crossings of q (t = 3 pi / 2),
%! ## terminal: the run ends there, the event state as last output; two
%! ## event functions crossing in one step are both reported in time order.
%! f = @(t, x) [x(2); -x(1)];
%! ev = @(t, x) deal (x(1), true, 1);
%! [t, y, te, ye, ie] = odeVV (f, [0 10], [1; 0], odepkgset ("Events", ev, "TimeStepSize", 0.1));
%! assert (t(end), 3 * pi / 2, 1e-2);
%! assert ([te, ie], [t(end), 1]);
%! assert (ye, y(end, :));
%! ev2 = @(t, x) deal ([x(1); x(1) - 0.001], [false; false], [0; 0]);
%! [~, ~, te, ~, ie] = odeVV (f, [0 2], [1; 0], odepkgset ("Events", ev2, "TimeStepSize", 0.1));
%! assert (ie.', [2 1]);                 # both in the step [1.5, 1.6], in time order
%! assert (te, [acos(0.001); pi / 2], 1e-3);
%! [t, y, te] = odeVV (f, [0 10], [1; 0], odepkgset ("Events", ev, "RelTol", 1e-8, "AbsTol", 1e-10));
%! assert (te(end), 3 * pi / 2, 1e-5);   # adaptive steps
%!error <Events function must return> [t, y] = odeVV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odeset ("Events", @(t, x) x(1)));
%!test
%! ## CompensatedSummation honoured (fixed steps and step doubling): the
%! ## compensated runs differ from the plain ones by round-off only
%! f = @(t, x) [x(2); -x(1)];
%! o = odepkgset ("TimeStepSize", 0.05, "TimeStepNumber", 500, "Order", 8);
%! [~, yp] = odeVV (f, 0, [1; 0], o);
%! [~, yc] = odeVV (f, 0, [1; 0], odepkgset (o, "CompensatedSummation", "on"));
%! d = max (abs (yc(:) - yp(:)));
%! assert (d > 0 && d < 1e-12);
%! a = odepkgset ("RelTol", 1e-8, "AbsTol", 1e-8, "Order", 4);
%! sp = odeVV (f, [0 10], [1; 0], a);
%! sc = odeVV (f, [0 10], [1; 0], odepkgset (a, "CompensatedSummation", "on"));
%! assert (sc.y(:,end), sp.y(:,end), 1e-10);
%! assert (sc.y(:,end), [cos(10); -sin(10)], 1e-6);
%!error <at most five outputs> [a, b, c, d, e, f] = odeVV (@(t, x) [x(2); -x(1)], [0 1], [1; 0]);
%!error <Invalid call> odeVV (1)
%!error <TSPAN must be strictly increasing> odeVV (@(t, x) x, [0 0], [1; 0])
## odeVV's messages name its own state, [x; v], and f's value, [v; a]
%!error <must return a real column vector \[v; a\]> odeVV (@(t, x) 1, [0 1], [1; 0])
%!error <one column \[v; a\] per state> odeVV (@(t, x) 1, [0 1], [1 2; 0 0])
%!error <Y0 must have even length, \[x0; v0\]> odeVV (@(t, x) x, [0 1], [1; 0; 0])
%!error <Y0 must be a real vector \[x0; v0\]> odeVV (@(t, x) x, [0 1], [1; 1i])
%!error <must have an even number of rows, \[x0; v0\] per column> odeVV (@(t, x) x, [0 1], ones (3, 2))
%!error <Y0 must be a real 2d-by-K matrix, \[x0; v0\] per column> __odepkg_ensemble__ ("velocity_verlet", @(t, x) x, [0 1], ones (3, 2), struct (), {}, "odeVV")
%!error <column vector \[dH/dp; -dH/dq\]> odeSV (@(t, x) 1, [0 1], [1; 0])
## an f that fails inside itself in ensemble mode: the message says that f
## got all members as columns, and keeps f's own message
%!error id=odepkg:ensembleFcnFailed odeVV (@(t, x) [x(2, :); -x(1, :)'], [0 1], [1 2 3; 0 0 0])
%!test
%! try
%!   odeVV (@(t, x) [x(2, :); -x(1, :)'], [0 1], [1 2 3; 0 0 0]);
%! catch err
%!   msg = err.message;
%! end_try_catch
%! assert (! isempty (strfind (msg, "called with all 3 members at once, one state per column (a 2x3 matrix")));
%! assert (! isempty (strfind (msg, "vertical dimensions mismatch (1x3 vs 3x1)")));

%!test
%! ## an ensemble (Y0 with K columns, f vectorised) equals its members'
%! ## single runs, one batched call of f per step; a member's parameter (the
%! ## frequency w(j)) indexes the user's array by column
%! w = [1, 2, 3];
%! f = @(t, x) [x(3:4,:); -(w.^2) .* x(1:2,:)];
%! Y0 = [1 0 1; 0 1 0.5; 0 1 0; 1 0 -1];
%! o = odepkgset ("TimeStepSize", 0.01);
%! [t, y] = odeVV (f, [0 3], Y0, o);
%! assert (size (y), [301, 4, 3]);
%! for k = 1:3
%!   [ts, ys] = odeVV (@(t, x) [x(3:4); -w(k)^2 * x(1:2)], [0 3], Y0(:, k), o);
%!   assert (ts, t);
%!   assert (y(:, :, k), ys, 1e-12);
%! endfor
%! sol = odeVV (f, [0 3], Y0, o);
%! assert (sol.stats.nfevals <= 300 + 6);

%!demo
%! ## Velocity Verlet on the circular Kepler orbit up to t = 100 against ode45
%! ## at its default tolerances, at about the same cost (h = 0.1, one call of
%! ## f per step): ode45's orbit spirals inwards as its energy drifts, odeVV's
%! ## stays on the circle and its energy error stays bounded.
%! f = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! sol = odeVV (f, 0, [1; 0; 0; 1], odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 1000));
%! evalc ('s45 = ode45 (f, [0 100], [1; 0; 0; 1], odeset ("Stats", "on"));');   # counts calls
%! [~, y45] = ode45 (f, linspace (0, 100, 2001), [1; 0; 0; 1]);   # the same steps, interpolated
%! H = @(y) sum (y(3:4,:).^2, 1) / 2 - 1 ./ sqrt (sum (y(1:2,:).^2, 1));
%! blue = [0 0.447 0.741];  red = [0.85 0.325 0.098];
%! axes ("position", [0.1 0.13 0.26 0.75]);
%! plot (y45(:,1), y45(:,2), "color", red, sol.y(1,:), sol.y(2,:), "color", blue, 0, 0, "k+");
%! axis equal;  axis ([-1.2 1.2 -1.2 1.2]);  xlabel ("q_1");  ylabel ("q_2");  title ("orbits");
%! axes ("position", [0.48 0.13 0.49 0.75]);
%! semilogy (sol.x, abs (H (sol.y) + 0.5) + eps, "color", blue, s45.x, abs (H (s45.y) + 0.5) + eps, "color", red);
%! axis ([0 100 1e-10 1]);  xlabel ("t");  ylabel ("|H - H_0|");  title ("energy error");
%! text (3, 3e-4, sprintf ("odeVV, h = 0.1: %d calls of f", sol.stats.nfevals), "color", blue);
%! text (20, 2e-3, sprintf ("ode45, default tolerances: %d calls of f", s45.stats.nfevals), "color", red);

%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## a model of odepkg_model: the state is [q; v], v = M^-1 p.  Kepler
%! ## (M = I): the native run equals the handle run step for step to
%! ## round-off (fixed steps, Order 4, StepControl "reversible"); a mass
%! ## m as a parameter, H = p^2/(2 m) + k q^2/2 (v = p/m, a = -k q/m): the
%! ## handle [v; -k q/m]; T not quadratic (H = p^4/4 + q^2/2) refused
%! pkg load symbolic
%! dir = tempname ();
%! unwind_protect
%!   syms q1 q2 p1 p2 q p mass k real
%!   kep = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2], "p", [p1 p2], "CacheDir", dir);
%!   fk = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%!   y0 = [0.5; 0; 0; sqrt(3)];
%!   for o = {odepkgset("TimeStepSize", 0.01), odepkgset("TimeStepSize", 0.05, "Order", 4)}
%!     [tn, yn] = odeVV (kep, [0 10], y0, o{1});
%!     [th, yh] = odeVV (fk, [0 10], y0, o{1});
%!     assert (tn, th);
%!     assert (yn, yh, 1e-11);
%!   endfor
%!   o = odepkgset ("StepControl", "reversible", "RelTol", 1e-6, "AbsTol", 1e-6);
%!   sn = odeVV (kep, [0 4*pi], y0, o);
%!   sh = odeVV (fk, [0 4*pi], y0, o);
%!   assert (sn.stats.nsteps, sh.stats.nsteps);
%!   assert (sn.y, sh.y, 1e-10);
%!   osc = odepkg_model ("H", p^2/(2*mass) + k*q^2/2, "q", q, "p", p, "Parameters", [mass k], "CacheDir", dir);
%!   assert (osc.quadratic_kinetic);
%!   [t, yn] = odeVV (osc, [0 10], [1; 0], odepkgset ("TimeStepSize", 0.01), 2, 8);
%!   [~, yh] = odeVV (@(t, x, m, k) [x(2); -k * x(1) / m], [0 10], [1; 0], odepkgset ("TimeStepSize", 0.01), 2, 8);
%!   assert (yn, yh, 1e-13);
%!   assert (yn(:, 1), cos (2 * t), 1e-3);          # omega^2 = k/m = 4
%!   assert (yn(:, 2), -2 * sin (2 * t), 2e-3);     # v, not p = m v
%!   ## an ensemble, one mass per member (M^-1 per member): the vectorised handle
%!   ms = [1 2 4 0.5];
%!   [~, yn] = odeVV (osc, [0 5], [1 0 0.5 1; 0 1 0 -1], odepkgset ("TimeStepSize", 0.01), ms, 8);
%!   [~, yh] = odeVV (@(t, x, m, k) [x(2,:); -k * x(1,:) ./ m], [0 5], [1 0 0.5 1; 0 1 0 -1],
%!                    odepkgset ("TimeStepSize", 0.01), ms, 8);
%!   assert (yn, yh, 1e-13);
%!   quart = odepkg_model ("H", p^4/4 + q^2/2, "q", q, "p", p, "CacheDir", dir);
%!   assert (! quart.quadratic_kinetic);
%!   fail ('odeVV (quart, [0 1], [1; 0], odepkgset ("TimeStepSize", 0.1))', "kinetic energy is quadratic");
%! unwind_protect_cleanup
%!   confirm_recursive_rmdir (false, "local");
%!   if (exist (dir, "dir"))
%!     rmdir (dir, "s");
%!   endif
%! end_unwind_protect
