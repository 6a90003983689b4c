## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeSE (@var{fcn}, @var{tspan}, @var{y0})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSE (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSE (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeSE (@dots{})
## @deftypefnx {} {} odeSE (@dots{})
## Solve Hamilton's equations with the symplectic Euler method (order 1,
## symplectic): p1 = p0 - h dH/dq (q0, p1), q1 = q0 + h dH/dp (q0, p1)
## (Hairer, Lubich, Wanner, Theorem VI.3.3).  @var{y0} = [q0; p0] and
## @code{@var{fcn} (@var{t}, [q; p])} returns [dH/dp; -dH/dq].
##
## With @qcode{"Explicit"}, @qcode{"yes"} (separable H) the scheme is explicit:
## one call of @var{fcn} per step for a quadratic kinetic energy (learned and
## checked on every step, as in @code{odeSV}), two otherwise.  Separability
## is verified at t0 (two calls) and during the run as in @code{odeSV}; a
## non-separable @var{fcn} is the error @code{odepkg:notSeparable}.
## Otherwise each step solves for p1 by
## Newton's method (@qcode{"HamiltonianHessFcn"}, @qcode{"NewtonTol"},
## @qcode{"MaxNewtonIterations"}).
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
## Example:
## @example
## f = @@(t, x, k, m) [x(2) / m; -k * x(1)];   # spring, extra args k, m
## opts = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes");
## [t, y] = odeSE (f, [0 1 2 3], [1; 0], opts, 4, 1);   # output at t = 0:3
## @end example
## @strong{Models:} @var{fcn} may be a model of @code{odepkg_model} (H
## written once, derivatives derived, C kernels compiled): the run then has
## no interpreter between steps, its parameters are the extra arguments,
## and in ensemble mode an extra argument with K columns gives one value per
## member, the members running on the machine's cores (@qcode{"Threads"}).
## @strong{Ensembles:} a @var{y0} with K columns integrates K trajectories
## in one call, the user functions vectorised over the columns (column j is
## member j); with @qcode{"Explicit"}, @qcode{"yes"} the callbacks are called once per stage for all members.  @var{y} is then N-by-n-by-K.  See @code{help odepkg},
## Ensembles.
##
## @seealso{odeSV, odeVV, symplectic_euler, odepkgset}
## @end deftypefn

function varargout = odeSE (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 3)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeSE", "symplectic_euler", nargout, fcn, tspan, y0, opts, varargin);

endfunction

%!test
%! ## order 1: harmonic oscillator against cos/sin, slope fitted over 4 step sizes
%! f = @(t, x) [x(2); -x(1)];
%! h = [0.02 0.01 0.005 0.0025];  err = zeros (size (h));
%! for i = 1:4
%!   [t, y] = odeSE (f, [0 1], [1; 0], odepkgset ("TimeStepSize", h(i), "Explicit", "yes"));
%!   err(i) = norm (y(end,:) - [cos(1), -sin(1)]);
%! endfor
%! assert (polyfit (log (h), log (err), 1)(1), 1, 0.1);
%!test
%! ## output exactly at requested times, extra arguments (k, m)
%! f = @(t, x, k, m) [x(2) / m; -k * x(1)];
%! [t, y] = odeSE (f, [0 1 2 3], [1; 0], odepkgset ("TimeStepSize", 1e-4, "Explicit", "yes"), 4, 1);
%! assert (t, (0:3)');
%! assert (y(:,1), cos (2 * t), 2e-3);
%!test
%! ## implicit branch (general H) agrees with explicit on a separable H
%! f = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! o = odepkgset ("TimeStepSize", 0.01);
%! [~, yi] = odeSE (f, [0 1], [0.5; 0; 0; 1.5], o);
%! [~, ye] = odeSE (f, [0 1], [0.5; 0; 0; 1.5], odepkgset (o, "Explicit", "yes"));
%! assert (yi, ye, 1e-11);
%!test
%! ## symplectic: the area of a small triangle in the (q, p) plane is kept
%! ## for the non-separable H = (1 + q^2) p^2 / 2 + q^2 / 2
%! f = @(t, x) [(1 + x(1)^2) * x(2); -x(1) * x(2)^2 - x(1)];
%! o = odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 50);
%! d = 1e-6;  Z = [0.3 0.3+d 0.3; 0.2 0.2 0.2+d];
%! for j = 1:3
%!   [~, y] = odeSE (f, 0, Z(:,j), o);  W(:,j) = y(end,:)';
%! endfor
%! A0 = det ([Z(:,2) - Z(:,1), Z(:,3) - Z(:,1)]);
%! A1 = det ([W(:,2) - W(:,1), W(:,3) - W(:,1)]);
%! assert (A1, A0, 1e-4 * abs (A0));
%!test
%! ## Stats are counted.  Explicit SE: 1 initial call, 2 probing separability
%! ## at t0, 2 per step for the first 8 steps, then d + 1 = 2 probes of H_p
%! ## (quadratic T detected) and 1 call per step; a non-quadratic T keeps 2
%! ## calls per step (+1 wasted, +2 re-probing separability where the model failed).
%! f = @(t, x) [x(2); -x(1)];
%! o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 1000, "Explicit", "yes");
%! sol = odeSE (f, 0, [1; 0], o);
%! assert (sol.stats.nsteps, 1000);
%! assert (sol.stats.nfevals, 1 + 2 + 2*8 + 2 + (1000 - 8));
%! g = @(t, x) [x(2) / sqrt(1 + x(2)^2); -x(1)];   # T = sqrt (1 + p^2)
%! sol = odeSE (g, 0, [1; 0], o);
%! assert (sol.stats.nfevals, 1 + 2 + 2*1000 + 2 + 1 + 2);
%!test
%! ## "Explicit" on a non-separable H = p^2 (1 + q^2) / 4 + q^2 / 2: refused
%! ## at t0 (it once ran silently); from y0 = [0; 0.5], where the probe at t0
%! ## sees nothing (H_qp = p q = 0), by the check of the first step
%! f = @(t, y) [y(2) * (1 + y(1)^2) / 2; -(y(2)^2 * y(1) / 2 + y(1))];
%! o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 100, "Explicit", "yes");
%! for y0 = {[1; 0.5], [0; 0.5]}
%!   try
%!     sol = odeSE (f, 0, y0{1}, o);
%!     error ("not refused");
%!   catch err
%!     assert (err.identifier, "odepkg:notSeparable");
%!   end_try_catch
%! endfor
%!error <Invalid call> odeSE ()
%!error <Y0 must have even length> odeSE (@(t, x) x, [0 1], 1)
%!error <unknown option> odeSE (@(t, x) x, [0 1], [1; 0], odepkgset ("Explict", "yes"))
%!test
%! ## a state that overflows (every value of f finite) ends the run with
%! ## integrationFailed; the returned rows are the finite ones
%! lastwarn ("");
%! f = @(t, x) ones (size (x));
%! o = odepkgset ("TimeStepSize", 1e307, "TimeStepNumber", 10, "Explicit", "yes");
%! evalc ('[t, y] = odeSE (f, 0, [1e308; 1e308], o);');   # the warning, captured
%! [msg, id] = lastwarn ();
%! assert (id, "odepkg:integrationFailed");
%! assert (! isempty (strfind (msg, "non-finite")));
%! assert (all (isfinite ([t(:); y(:)])));
%! assert (rows (y), 8);
%! assert (t(end) < 1e308);

%!test
%! ## an ensemble (Y0 with K columns, f vectorised) equals its members'
%! ## single runs, one batched call of f per step; a member's parameter (the
%! ## frequency w(j)) indexes the user's array by column
%! w = [1, 2, 3];
%! f = @(t, x) [x(3:4,:); -(w.^2) .* x(1:2,:)];
%! Y0 = [1 0 1; 0 1 0.5; 0 1 0; 1 0 -1];
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes");
%! [t, y] = odeSE (f, [0 3], Y0, o);
%! assert (size (y), [301, 4, 3]);
%! for k = 1:3
%!   [ts, ys] = odeSE (@(t, x) [x(3:4); -w(k)^2 * x(1:2)], [0 3], Y0(:, k), o);
%!   assert (ts, t);
%!   assert (y(:, :, k), ys, 1e-12);
%! endfor
%! sol = odeSE (f, [0 3], Y0, o);
%! assert (sol.stats.nfevals <= 300 + 6);

%!demo
%! ## Pendulum H = p^2/2 - cos q, h = 0.05, t up to 40: symplectic Euler against
%! ## explicit Euler, both first order at one call of f per step.  Symplectic
%! ## Euler's orbit closes and its energy error stays within 0.011; explicit
%! ## Euler's orbit spirals outwards, its energy grows without bound.
%! f = @(t, x) [x(2); -sin(x(1))];  h = 0.05;  n = 800;
%! [t, y] = odeSE (f, 0, [1; 0], odepkgset ("TimeStepSize", h, "TimeStepNumber", n, "Explicit", "yes"));
%! ye = zeros (n + 1, 2);  ye(1,:) = [1 0];
%! for k = 1:n
%!   ye(k+1,:) = ye(k,:) + h * f (0, ye(k,:).').';
%! endfor
%! H = @(y) y(:,2).^2 / 2 - cos (y(:,1));
%! axes ("position", [0.08 0.13 0.3 0.75]);
%! plot (y(:,1), y(:,2), ye(:,1), ye(:,2));  axis equal;  axis ([-2.5 2.5 -2 2]);
%! xlabel ("q");  ylabel ("p");  title ("phase portrait");
%! axes ("position", [0.54 0.13 0.43 0.75]);
%! plot (t, H (y) - H (y(1,:)), t, H (ye) - H (ye(1,:)));
%! xlabel ("t");  ylabel ("H - H_0");  title ("energy error, h = 0.05");
%! text (2, -0.15, "symplectic Euler (odeSE): bounded", "color", [0 0.447 0.741]);
%! text (2, 0.6, "explicit Euler: grows", "color", [0.85 0.325 0.098]);

%!test
%! ## Events with direction and terminal (ode45's meaning): q = cos t
%! ## decreasing through 0 at pi/2 ends the run there; the error of te is
%! ## the method's, O(h) (fitted ratio 2 for h/2); the last output is the event.
%! ev = @(t, x) deal (x(1), true, -1);
%! o = odepkgset ("Events", ev, "TimeStepSize", 0.002, "Explicit", "yes");
%! [t, y, te, ye, ie] = odeSE (@(t, x) [x(2); -x(1)], [0 10], [1; 0], o);
%! assert (ie, 1);
%! assert (te, pi / 2, 2e-3);
%! assert (abs (ye(1)) < 1e-12);
%! assert ([t(end), y(end, :)], [te, ye]);
%! [~, ~, te2] = odeSE (@(t, x) [x(2); -x(1)], [0 10], [1; 0], odepkgset (o, "TimeStepSize", 0.001));
%! assert (abs (te - pi / 2) / abs (te2 - pi / 2), 2, 0.1);
