## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeSV (@var{fcn}, @var{tspan}, @var{y0})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSV (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSV (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeSV (@dots{})
## @deftypefnx {} {} odeSV (@dots{})
## Solve Hamilton's equations q' = dH/dp, p' = -dH/dq with the Störmer–Verlet
## method: order 2, symmetric and symplectic (Hairer, Lubich, Wanner,
## @cite{Geometric Numerical Integration}, (VI.3.4)).  @var{y0} = [q0; p0] and
## @code{@var{fcn} (@var{t}, [q; p])} returns [dH/dp; -dH/dq].
##
## With @qcode{"Explicit"}, @qcode{"yes"} (separable H = T(p) + V(q)) each step
## costs two calls of @var{fcn}.  Otherwise (general H) each step solves two
## nonlinear systems by Newton's method, with the Jacobian from
## @qcode{"HamiltonianHessFcn"} when given (finite differences otherwise),
## @qcode{"NewtonTol"} and @qcode{"MaxNewtonIterations"}.
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
## arguments @var{par1}, @dots{} are passed to every user function; as in
## @code{ode45} they may follow @var{y0} directly when @var{par1} is not a
## struct (default options), and @var{opts} = [] means the defaults.  The
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
## kepler = @@(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
## e = 0.6;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
## opts = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 10000, "Explicit", "yes");
## [t, y] = odeSV (kepler, 0, y0, opts);
## H = sum (y(:,3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:,1:2).^2, 2));
## max (abs (H - H(1)))   # bounded, no drift
## @end example
## @seealso{odeSE, odeVV, stormer_verlet, odepkgset, ode45}
## @end deftypefn

function varargout = odeSV (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 3)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeSV", "stormer_verlet", nargout, fcn, tspan, y0, opts, varargin);

endfunction

%!function dx = kepler (t, x)
%!  dx = [x(3:4); -x(1:2) / norm(x(1:2))^3];
%!endfunction
%!function y0 = kepler_y0 (e)
%!  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
%!endfunction
%!function H = kepler_energy (y)
%!  H = sum (y(:,3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:,1:2).^2, 2));
%!endfunction

%!test
%! ## order 2: global error after one period (exact: back at y0), fitted slope
%! h = 2*pi ./ [400 800 1600 3200];
%! err = zeros (size (h));
%! for i = 1:numel (h)
%!   o = odepkgset ("TimeStepSize", h(i), "Explicit", "yes");
%!   [t, y] = odeSV (@kepler, [0 2*pi], kepler_y0 (0.6), o);
%!   assert (t(end), 2*pi, 1e-12);
%!   err(i) = norm (y(end,:).' - kepler_y0 (0.6));
%! endfor
%! p = polyfit (log (h), log (err), 1)(1);
%! assert (p, 2, 0.1);
%!test
%! ## energy bounded without drift over 10^4 fixed steps from a scalar tspan
%! o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 10000, "Explicit", "yes");
%! [t, y] = odeSV (@kepler, 0, kepler_y0 (0.6), o);
%! assert (numel (t), 10001);
%! assert (t(end), 100, 1e-10);
%! dH = abs (kepler_energy (y) - kepler_energy (y(1,:)));
%! assert (max (dH) < 1e-2);
%! assert (max (dH(end-1000:end)) < 1.5 * max (dH(1:1000)));
%!test
%! ## a state of n = 10^6 numbers in O(n) memory (issue 13, defect 3): 10^6
%! ## decoupled oscillators, explicit Stormer-Verlet against a plain loop of
%! ## (VI.3.4); one call of f per step once the diagonal velocity model is
%! ## learned (after 8 steps, 3 probes); a dense n-by-n buffer would need 8 TB
%! d = 5e5;  w = 1 + mod ((1:d)', 7) / 7;  h = 0.01;  N = 20;
%! f = @(t, x) [x(d+1:end); -(w.^2) .* x(1:d)];
%! x0 = [cos(0.001 * (1:d)'); zeros(d, 1)];
%! sol = odeSV (f, [0 N*h], x0, odepkgset ("TimeStepSize", h, "Explicit", "yes"));
%! q = x0(1:d);  p = x0(d+1:end);
%! for k = 1:N
%!   p -= h/2 * w.^2 .* q;  q += h * p;  p -= h/2 * w.^2 .* q;
%! endfor
%! assert (sol.y(:,end), [q; p], 1e-13);
%! assert (sol.stats.nfevals, 1 + 2*8 + 3 + (N - 8));
%! if (exist ("/proc/self/status", "file"))
%!   hwm = str2double (regexp (fileread ("/proc/self/status"), 'VmHWM:\s*(\d+)', "tokens"){1}{1});
%!   assert (hwm < 4e6);   # kB: the whole Octave process below 4 GB
%! endif
%!test
%! ## MaxNewtonIterations 1 (issue 13, defect 4): Newton converges only at
%! ## h ~ 1e-8, so the adaptive run ends early with the partial result (it
%! ## crawled through 28,877+ steps); with 2 iterations it completes
%! o = odepkgset ("RelTol", 1e-6, "AbsTol", 1e-6);
%! warning ("off", "odepkg:integrationFailed", "local");
%! sol = odeSV (@kepler, [0 2], kepler_y0 (0.6), odepkgset (o, "MaxNewtonIterations", 1));
%! assert (sol.stats.nsteps <= 50);
%! assert (sol.x(end) < 1e-3);
%! sol = odeSV (@kepler, [0 2], kepler_y0 (0.6), odepkgset (o, "MaxNewtonIterations", 2));
%! assert (sol.x(end), 2);
%!warning <raise MaxNewtonIterations or NewtonTol>
%! [t, y] = odeSV (@kepler, [0 2], kepler_y0 (0.6), odepkgset ("RelTol", 1e-6, "MaxNewtonIterations", 1));
%!test
%! ## implicit (general H) branch agrees with the explicit one on Kepler
%! o = odepkgset ("TimeStepSize", 0.01);
%! [~, yi] = odeSV (@kepler, [0 1], kepler_y0 (0.5), o);
%! [~, ye] = odeSV (@kepler, [0 1], kepler_y0 (0.5), odepkgset (o, "Explicit", "yes"));
%! assert (yi, ye, 1e-11);
%!test
%! ## adaptive: error decreases with RelTol; sol struct like ode45's
%! e = zeros (1, 3);  tol = [1e-4 1e-6 1e-8];
%! for i = 1:3
%!   sol = odeSV (@kepler, [0 2*pi], kepler_y0 (0.3), odepkgset ("RelTol", tol(i), "AbsTol", tol(i), "Explicit", "yes"));
%!   e(i) = norm (sol.y(:,end) - kepler_y0 (0.3));
%! endfor
%! assert (sol.solver, "odeSV");
%! assert (size (sol.x, 1), 1);
%! assert (size (sol.y, 1), 4);
%! assert (sol.x(end), 2*pi, 1e-14);
%! assert (all (diff (log10 (e)) < -0.5));
%! assert (e(3) < 2e-4);
%! assert (sol.stats.nfevals > sol.stats.nsteps);
%!test
%! ## explicit SV with a non-quadratic T (relativistic pendulum,
%! ## H = sqrt (1 + p^2) - cos q): the learned-velocity shortcut must notice
%! ## and fall back, giving the same steps as the general (implicit) scheme
%! f = @(t, x) [x(2) / sqrt(1 + x(2)^2); -sin(x(1))];
%! o = odepkgset ("TimeStepSize", 0.05, "TimeStepNumber", 400);
%! sol = odeSV (f, 0, [1; 0.5], odepkgset (o, "Explicit", "yes"));
%! [~, yi] = odeSV (f, 0, [1; 0.5], odepkgset (o, "Explicit", "no", "NewtonTol", 1e-14));
%! assert (sol.y', yi, 1e-11);
%! assert (sol.stats.nfevals, 1 + 2*400 + 2 + 1);
%! ## quadratic T: one call per step after learning, same steps as implicit
%! f = @(t, x) [x(2) / 2; -sin(x(1))];
%! sol = odeSV (f, 0, [1; 0.5], odepkgset (o, "Explicit", "yes"));
%! [~, yi] = odeSV (f, 0, [1; 0.5], odepkgset (o, "Explicit", "no", "NewtonTol", 1e-14));
%! assert (sol.y', yi, 1e-11);
%! assert (sol.stats.nfevals, 1 + 2*8 + 2 + (400 - 8));
%!test
%! ## output exactly at requested times; backward in time
%! f = @(t, x) [x(2); -x(1)];
%! o = odepkgset ("TimeStepSize", 1e-3, "Explicit", "yes");
%! [t, y] = odeSV (f, [0 -0.5 -1], [1; 0], o);
%! assert (t, [0; -0.5; -1]);
%! assert (y(:,1), cos (t), 1e-6);
%!test
%! ## non-separable H = (1 + q^2) p^2 / 2 + q^2 / 2: energy conserved, Hessian optional
%! f = @(t, x) [(1 + x(1)^2) * x(2); -x(1) * x(2)^2 - x(1)];
%! Hs = @(t, x) [x(2)^2 + 1, 2*x(1)*x(2); 2*x(1)*x(2), 1 + x(1)^2];
%! E = @(y) (1 + y(:,1).^2) .* y(:,2).^2 / 2 + y(:,1).^2 / 2;
%! o = odepkgset ("TimeStepSize", 0.05, "TimeStepNumber", 2000);
%! [~, y1] = odeSV (f, 0, [0.5; 0.5], o);
%! [~, y2] = odeSV (f, 0, [0.5; 0.5], odepkgset (o, "HamiltonianHessFcn", Hs));
%! assert (y2, y1, 1e-9);
%! assert (max (abs (E (y1) - E (y1(1,:)))) < 2e-3);
%!test
%! ## OutputFcn stops the integration at t >= 0.5
%! f = @(t, x) [x(2); -x(1)];
%! stopper = @(t, y, flag) isempty (flag) && t(end) >= 0.5;
%! [t, y] = odeSV (f, [0 1], [1; 0], odepkgset ("TimeStepSize", 0.1, "OutputFcn", stopper));
%! assert (t(end), 0.5, 1e-12);
%!test
%! ## a failure midway returns the solution so far with a warning
%! f = @(t, x) [x(2); -x(1) + 0 / (t <= 0.5)];
%! lastwarn ("");
%! o = odepkgset ("TimeStepSize", 0.1, "Explicit", "yes");
%! evalc ('[t, y] = odeSV (f, [0 1], [1; 0], o);');   # the warning, captured
%! [msg, id] = lastwarn ();
%! assert (id, "odepkg:integrationFailed");
%! assert (t(end), 0.5, 1e-12);
%! assert (! isempty (strfind (msg, "t = 0.5")));
%!test
%! ## ode45's convention: parameters right after Y0 (no options struct) give
%! ## the run of default options with those parameters; [] means no options
%! f = @(t, x, k, m) [x(2) / m; -k * x(1)];
%! y = @(sol) sol.y(:, end);
%! ref = odeSV (f, [0 1], [1; 0], odepkgset (), 4, 2);
%! assert (y (odeSV (f, [0 1], [1; 0], 4, 2)), y (ref), 0);
%! assert (y (odeSV (f, [0 1], [1; 0], [], 4, 2)), y (ref), 0);
%! assert (numel (odeSV (f, [0 1], [1; 0], 4, 2).x), numel (ref.x));
%! ## a harmonic oscillator of frequency sqrt (k / m): the parameters arrived
%! assert (y (ref)(1), cos (sqrt (2)), 1e-2);
%! ## a single non-struct parameter, fixed steps in a later call form
%! g = @(t, x, w) [x(2); -w^2 * x(1)];
%! [t1, y1] = odeSV (g, [0 0.5 1], [1; 0], 3);
%! [t2, y2] = odeSV (g, [0 0.5 1], [1; 0], odepkgset (), 3);
%! assert ([t1, y1], [t2, y2], 0);
%!test
%! ## "Progress", "text": the same run as without it (the compiled loop only
%! ## reads the clock); a line rewritten with carriage returns, at most four
%! ## per wall second plus the last one, which says 100 % at tf and ends
%! ## the line
%! o = odepkgset ("TimeStepSize", 1e-3, "Explicit", "yes");
%! ref = odeSV (@kepler, [0 20], kepler_y0 (0.6), o);
%! tic ();
%! s = evalc ("sol = odeSV (@kepler, [0 20], kepler_y0 (0.6), odepkgset (o, 'Progress', 'text'));");
%! wall = toc ();
%! assert ([sol.x; sol.y], [ref.x; ref.y], 0);
%! assert (sol.stats, ref.stats);
%! lines = strsplit (s, "\r")(2:end);
%! assert (numel (lines) >= 1 && numel (lines) <= wall / 0.25 + 1);
%! assert (! isempty (regexp (lines{end}, '^odeSV: 100 %  t = 20  in \d+\.\d s *\n$', "once")));
%! for k = 1:numel (lines) - 1
%!   assert (! isempty (regexp (lines{k}, '^odeSV: +\d+\.\d %  t = \S+  elapsed .* remaining .* *$', "once")));
%! endfor
%!function stop = stop_at_5 (t, y, flag)
%!  stop = isempty (flag) && t(end) >= 5;
%!endfunction
%!test
%! ## "Progress" with the user's OutputFcn: both run; a run the OutputFcn
%! ## stops at t = 5 reports where it stopped, at 25 % of the span
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes", "Progress", "text", "OutputFcn", @stop_at_5);
%! s = evalc ("[t, y] = odeSV (@kepler, [0 20], kepler_y0 (0.6), o);");
%! assert (t(end), 5, 1e-12);
%! assert (! isempty (regexp (s, '\rodeSV: stopped at t = 5 \(25\.0 %\) after \d+\.\d s *\n$', "once")));
%!test
%! ## extra parameters reach the function
%! f = @(t, x, w) [x(2); -w^2 * x(1)];
%! [t, y] = odeSV (f, [0 1], [1; 0], odepkgset ("TimeStepSize", 1e-3, "Explicit", "yes"), 3);
%! assert (y(end,1), cos (3), 1e-5);

%!shared f
%! f = @(t, x) [x(2); -x(1)];
%!warning <integration stopped at t = 0.5> [t, y] = odeSV (@(t, x) [x(2); 0 / (t <= 0.5)], [0 1], [1; 0], odepkgset ("TimeStepSize", 0.1, "Explicit", "yes"));
%!error <Invalid call> odeSV (f, [0 1])
%!error <FCN must be a function handle> odeSV (1, [0 1], [1; 0])
%!error <TSPAN must be a real, finite vector> odeSV (f, [0 Inf], [1; 0])
%!error <TSPAN must be strictly increasing> odeSV (f, [0 1 0.5], [1; 0])
%!error <Y0 must be a real vector> odeSV (f, [0 1], [1i; 0])
%!error <Y0 must have even length> odeSV (f, [0 1], [1; 0; 0])
%!error <Y0 must be finite> odeSV (f, [0 1], [NaN; 0])
%!error <option "Progress" must be one of "off", "on", "text", "waitbar"> odeSV (f, [0 1], [1; 0], odepkgset ("Progress", "bar"))
%!error <OPTS must be a scalar struct> odeSV (f, [0 1], [1; 0], struct ("RelTol", {1e-3, 1e-4}))
%!error <called with too many inputs> odeSV (f, [0 1], [1; 0], 3)
%!error <scalar TSPAN needs the options TimeStepSize and TimeStepNumber> odeSV (f, 0, [1; 0], odepkgset ("TimeStepSize", 0.1))
%!warning <RelTol = 1e-30 is below 100\*eps> [t, y] = odeSV (f, [0 0.1], [1; 0], odepkgset ("RelTol", 1e-30, "AbsTol", 1e-30));
%!error <option "RelTol" must be a positive finite scalar> odeSV (f, [0 1], [1; 0], odepkgset ("RelTol", -1))
%!error <option "TimeStepSize"> odeSV (f, [0 1], [1; 0], odepkgset ("TimeStepSize", 0))
%!error <option "TimeStepNumber" must be a positive integer> odeSV (f, 0, [1; 0], odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 2.5))
%!error <option "AbsTol"> odeSV (f, [0 1], [1; 0], odepkgset ("AbsTol", [1 2 3]))
%!error <option "Explicit"> odeSV (f, [0 1], [1; 0], odepkgset ("Explicit", "maybe"))
%!error <option "OutputSel"> odeSV (f, [0 1], [1; 0], odepkgset ("OutputSel", 3))
%!error <option "HamiltonianHessFcn" must be a function handle> odeSV (f, [0 1], [1; 0], odepkgset ("HamiltonianHessFcn", 1))
%!error <option "ConstraintsNb" must be smaller> odeSV (f, [0 1], [1; 0], odepkgset ("ConstraintFcn", @(q) q, "ConstraintsNb", 1))
%!error <option "ConstraintsNb" must be given with ConstraintFcn> odeSV (f, [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q(1)))
%!error <option "InitialProjection"> odeSV (f, [0 1], [1; 0], odepkgset ("InitialProjection", "maybe"))
%!error <option "NormControl"> odeSV (f, [0 1], [1; 0], odepkgset ("NormControl", "sometimes"))
%!error <must return a real column vector> [t, y] = odeSV (@(t, x) [1; 2; 3], [0 1], [1; 0])
%!error <non-finite value at t0> [t, y] = odeSV (@(t, x) [NaN; 0], [0 1], [1; 0])
## a span or a fixed step below the time resolution eps(t) is an error up
## front (it once looped forever or repeated the output times silently)
%!error <TimeStepSize = 0.05 is below the time resolution> [t, y] = odeSV (@(t, x) [x(2); -x(1)], [1e16 1e16+2], [1; 0], odepkgset ("TimeStepSize", 0.05))
%!error <TSPAN .* below the time resolution> [t, y] = odeSV (@(t, x) [x(2); -x(1)], [0 4.9e-324], [1; 0], odepkgset ("MaxStep", 1))
%!error <TSPAN\(2\) .* below the time resolution> [t, y] = odeSV (@(t, x) [x(2); -x(1)], [0 1 1+eps 2], [1; 0])
%!test
%! try
%!   [t, y] = odeSV (@(t, x) [x(2); -x(1)], [1e16 1e16+2], [1; 0], odepkgset ("TimeStepSize", 0.05));
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:invalidInput");
%! end_try_catch
## the memory guard: every one of 1e9 fixed steps stored is refused at once
%!error <would not fit in memory: 1e\+09 points .*Request output times .*fewer steps> [t, y] = odeSV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("TimeStepSize", 1e-3, "TimeStepNumber", 1e9))
%!test
%! tic ();
%! try
%!   [t, y] = odeSV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("TimeStepSize", 1e-3, "TimeStepNumber", 1e9));
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:outputTooLarge");
%! end_try_catch
%! assert (toc () < 1);
%!function stop = stop_after_100 (t, y, flag)
%!  global odepkg_sv_seen
%!  if (isempty (flag))
%!    odepkg_sv_seen += numel (t);
%!  endif
%!  stop = odepkg_sv_seen >= 100;
%!endfunction
%!test
%! ## with no output argument the output streams through the OutputFcn and
%! ## is not stored: the same 1e9 steps are not refused (the OutputFcn stops
%! ## the run after 100 points), and no memory is reserved for them
%! global odepkg_sv_seen
%! odepkg_sv_seen = 0;
%! odeSV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("TimeStepSize", 1e-3, "TimeStepNumber", 1e9, "OutputFcn", @stop_after_100));
%! assert (odepkg_sv_seen, 100);
%! clear -global odepkg_sv_seen

%!demo
%! ## Kepler orbit (e = 0.6) for 10^4 fixed steps: the energy error stays bounded
%! kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! e = 0.6;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
%! opts = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 10000, "Explicit", "yes");
%! [t, y] = odeSV (kepler, 0, y0, opts);
%! [t45, y45] = ode45 (kepler, [0 100], y0, odeset ("RelTol", 1e-6, "AbsTol", 1e-8));
%! H = @(y) sum (y(:,3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:,1:2).^2, 2));
%! subplot (1, 2, 1); plot (y(:,1), y(:,2)); axis equal; title ("Kepler orbit, e = 0.6");
%! subplot (1, 2, 2); semilogy (t, abs (H (y) - H (y(1,:))) + eps, t45, abs (H (y45) - H (y45(1,:))) + eps);
%! ylim ([1e-10 1e-2]);
%! title ("|H - H_0|: odeSV (blue), ode45 (red)");  xlabel ("t");

%!function dx = counted_oscillator (t, x)
%!  global odepkg_sv_calls
%!  odepkg_sv_calls += 1;
%!  dx = [x(2); -x(1)];
%!endfunction
%!test
%! ## Invariant monitoring: off, not one call beyond the method's (counted);
%! ## on, H and the invariants at the output times only, and the deviation
%! ## reported is the one a user computes from the output.
%! global odepkg_sv_calls
%! o = odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 200, "Explicit", "yes");
%! odepkg_sv_calls = 0;
%! sol = odeSV (@counted_oscillator, 0, [1; 0], o);
%! assert (odepkg_sv_calls, sol.stats.nfevals);
%! assert (! isfield (sol, "invariants"));
%! odepkg_sv_calls = 0;
%! om = odepkgset (o, "HamiltonianFcn", @(t, x) (x'*x) / 2, "InvariantFcn", @(t, x) [x(1); x'*x]);
%! sm = odeSV (@counted_oscillator, 0, [1; 0], om);
%! assert (odepkg_sv_calls, sm.stats.nfevals);
%! assert (sm.y, sol.y);
%! Hu = sum (sol.y .^ 2, 1) / 2;
%! assert (sm.invariants.names, {"H", "I1", "I2"});
%! assert (sm.invariants.values, [Hu; sol.y(1, :); 2 * Hu], 1e-15);
%! assert (sm.invariants.deviation, max (abs ([Hu; sol.y(1, :); 2 * Hu] - [Hu(1); 1; 2 * Hu(1)]), [], 2), 1e-15);
%! ## Stormer-Verlet: the energy error is O(h^2) and bounded (no drift over 200 steps)
%! assert (sm.invariants.deviation(1) > 1e-4 && sm.invariants.deviation(1) < 0.1^2 / 4);
%! clear -global odepkg_sv_calls
%!error id=odepkg:badFcnOutput odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("HamiltonianFcn", @(t, x) x))
%!error id=odepkg:invalidOption odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("InvariantFcn", 3))
%!test
%! ## a monitoring function that fails is refused at t0, before any output
%! ## function runs
%! try
%!   odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("HamiltonianFcn", @(t, x) [1 2], "OutputFcn", @(varargin) error ("called")));
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:badFcnOutput");
%! end_try_catch
%!test
%! ## Events: Kepler pericentre passages (q.p increasing through 0) from the
%! ## apocentre, at t = pi, 3 pi, 5 pi; the event function vanishes at the
%! ## reported state; te's error is the method's, O(h^2) (fitted ratio 4).
%! e = 0.6;  y0 = [-(1 + e); 0; 0; -sqrt((1 - e) / (1 + e))];
%! ev = @(t, y) deal (y(1:2)' * y(3:4), false, 1);
%! o = odepkgset ("Events", ev, "TimeStepSize", 0.004, "Explicit", "yes");
%! [~, ~, te, ye, ie] = odeSV (@kepler, [0 17], y0, o);
%! exact = pi * [1; 3; 5];
%! assert (ie, ones (3, 1));
%! assert (te, exact, 1e-3);
%! assert (max (abs (sum (ye(:, 1:2) .* ye(:, 3:4), 2))) < 1e-10);
%! [~, ~, te2] = odeSV (@kepler, [0 17], y0, odepkgset (o, "TimeStepSize", 0.002));
%! assert (abs (te - exact) ./ abs (te2 - exact), 4 * ones (3, 1), 0.4);
%!error <FCN names no function: "no_such_function_xyz"> odeSV ("no_such_function_xyz", [0 1], [1; 0])
%!error id=odepkg:badFcnOutput [t, y] = odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("OutputFcn", @(t, y, flag) {1}))
%!error id=odepkg:badFcnOutput [t, y] = odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("OutputFcn", @(t, y, flag) NaN))
%!error <an integer class> [t, y] = odeSV (@(t, x) int32 (10 * [x(2); -x(1)]), [0 1], [1; 0], odepkgset ("TimeStepSize", 0.1))
%!error <TIMES must be finite> [t, y, s, ok, msg] = __odepkg_integrate__ ("stormer_verlet", @(t, x) [x(2); -x(1)], [0; NaN], [1; 0], odepkgset ("TimeStepSize", 0.1), {}, "odeSV");
%!error <is not a finite number> [t, y] = odeSV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("TimeStepSize", 1e300, "TimeStepNumber", 1e10))
%!test
%! ## an OutputFcn returning true stops the run there (ode45), false or nothing goes on
%! [t, y] = odeSV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 20, "OutputFcn", @(t, y, flag) ! isempty (t) && isempty (flag) && t(end) >= 0.95));
%! assert (t(end), 1, 1e-12);
%! [t, y] = odeSV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 20, "OutputFcn", @(t, y, flag) []));
%! assert (numel (t), 21);
