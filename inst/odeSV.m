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
## With @qcode{"Explicit"}, @qcode{"yes"} (separable H = T(p) + V(q)) the
## scheme is explicit: one call of @var{fcn} per step for a quadratic kinetic
## energy T (its velocity T_p is learned from d + 1 calls after max(8, d/2)
## steps and checked on every step), two per step otherwise and until then;
## measured on Kepler, 10^4 steps: 10,014 calls (20,009 with the
## relativistic T = sqrt (1 + |p|^2)).  The claim is verified, not
## trusted: two calls at t0 check that dH/dp does not move with q nor dH/dq
## with p (random moves of relative size sqrt(eps)), and again where the
## velocity check fails or the force at q_n changes with p; a non-separable
## @var{fcn} is the error @code{odepkg:notSeparable}, never a silently wrong
## answer.  The explicit scheme is not chosen by itself for an @var{fcn}
## that looks separable: a probe at one point cannot prove separability
## (H = p^2 (1 + q^2)/4 + q^2/2 passes it exactly at q = 0; the run's
## re-checks catch it a few steps later, and then an automatic choice would
## have to stop or silently change method), so the claim stays yours and the
## default is the implicit scheme, right for every H (Kepler, adaptive to
## t = 200: about 4 times the calls of f of the explicit scheme).
## Otherwise (general H) each step solves two
## nonlinear systems by Newton's method, with the Jacobian from
## @qcode{"HamiltonianHessFcn"} when given (finite differences otherwise),
## @qcode{"NewtonTol"} and @qcode{"MaxNewtonIterations"}.
##
## Higher orders: @qcode{"Order"}, 4, 6, 8 or 10 (or @qcode{"Composition"}, a
## table name: @qcode{"TripleJump4"}, @qcode{"Suzuki4"}, @qcode{"McLachlan4"},
## @qcode{"Yoshida6"}, @qcode{"KahanLi6"}, @qcode{"McLachlan8"},
## @qcode{"KahanLi8"}, @qcode{"SofroniouSpaletta10"}) makes each step the
## symmetric composition of s substeps of sizes g_1 h, @dots{}, g_s h (Hairer,
## Lubich, Wanner, Sects. II.4 and V.3), still symmetric and symplectic; the
## recommended tables are McLachlan4 (s = 5), KahanLi6 (9), KahanLi8 (17) and
## SofroniouSpaletta10 (35).  Explicit: one call of @var{fcn} per substep (once the quadratic kinetic
## energy is learned); implicit: Newton to round-off (NewtonTol 1e-14 unless
## given).  Adaptive steps estimate the error with the
## composed order.
##
## @qcode{"CompensatedSummation"}, @qcode{"on"} (explicit scheme): the
## updates q_@{n+1@} = q_n + dq and p_@{n+1@} = p_n + dp are summed with a
## compensation vector carried across steps and substeps (Kahan; Hairer,
## McLachlan, Razakarivony, BIT 48, 2008), so that over millions of fixed
## steps of a high-order method the round-off random walk of the sums no
## longer limits the energy error.
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
## @item @var{tspan} = [t0 tf] with @qcode{"StepControl"}, @qcode{"reversible"}:
## variable steps without energy drift (Hairer and Söderlind, @cite{Explicit,
## time reversible, adaptive step size control}, SIAM J. Sci. Comput. 26,
## 2005).  The steps h = eps / rho follow a step density rho carried with
## the state, rho(n+1/2) = rho(n) + eps/2 G(y(n)), rho(n+1) = rho(n+1/2) +
## eps/2 G(y(n+1)), with G = (d rho/dt) / rho: the whole map is symmetric, so
## the energy error stays bounded as with fixed steps while the steps adapt.
## No step is rejected.  The steps are a function of the state: rho(t0) is
## the density of y0 (not 1), so a run cut into chunks, or reversed (p ->
## -p), takes the steps of one run through those states.  eps is set, in
## this order, by @qcode{"StepDensityEps"}; by @qcode{"InitialStep"} h0:
## eps = h0 rho(y0), the first step about h0 (eps then depends on where the
## run starts); else, for a density that is a rate (1/time: the default,
## or a @qcode{"StepDensityFcn"} returning [G; rho]), eps = 2 RelTol^(1/(p+1))
## at order p, the fraction of the local time scale per step (for
## Störmer–Verlet the steps step doubling accepts at that RelTol on an
## oscillator; conservative for compositions), which depends on neither y0
## nor the units; AbsTol does not enter (a rate has no units of y).  A
## StepDensityFcn returning G alone (no scale): rho(t0) = 1 and eps is the
## step that step doubling accepts at t0 under RelTol/AbsTol.  The default
## density is the rate rho = sqrt ((|q'|/|p|) (|p'|/|q|)) (the inverse of
## the local time scale, even in p; G by a central difference: 3 more calls
## of @var{fcn} per step): Kepler's sqrt(GM) |q|^(-3/2) at every point of
## every orbit, w for an oscillator, the same steps in any units (a comet
## in AU and days takes the steps it takes with GM = 1).  It assumes the
## force centre at q = 0 and is 0 where the force or the motion vanishes
## (give your own density there).  @qcode{"StepDensityFcn"} gives your own
## as @code{G = fcn (@var{t}, y)} or @code{[G; rho]}, one call per step,
## e.g. for Kepler's problem @code{[-1.5 * (q' * p) / (q' * q); (q' *
## q)^(-3/4)]}.  @code{sol.stepdensity} returns where the density ended:
## @code{rho} (at the last state), @code{eps}, and @code{lasteps} (the eps
## of the last, shortened, step).  Continue a run with
## @code{odepkgset (o, "InitialStepDensity", sd.rho, "StepDensityEps",
## sd.eps)}; reverse it exactly (from the last state with p -> -p) with
## @code{"StepDensityEps", [sd.lasteps, sd.eps]}: back at y0 to round-off.
## @qcode{"MaxStep"} caps the steps; @code{sol.stats} adds @code{minstep},
## @code{maxstep} and @code{stepdensityeps}.  @qcode{"Events"} are located
## on these steps by the method's own shortened steps, which leave the step
## sequence as it is without events; a terminal event ends the run there.
## Compositions (@qcode{"Composition"}/@qcode{"Order"}) are symmetric and
## work with it: the density sets where the steps fall, each step is the
## composed method's, so the error at a fixed time falls as eps^p (Kepler:
## fitted order 3.99 for @qcode{"Order"}, 4) and the energy error stays
## bounded.
## @item @var{tspan} with more than two times: output exactly at those times
## (steps are shortened to land on them; no interpolation).  With
## @qcode{"StepControl"}, @qcode{"reversible"} an output time gets its own
## shortened step from the last state, and the steps go on unchanged.
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
## Which steps: fixed steps (@qcode{"TimeStepSize"}) when one step size
## suits the whole run and long times matter; @qcode{"StepControl"},
## @qcode{"reversible"} when the time scale varies along a long run
## (eccentric orbits, close encounters): bounded energy error at a fraction
## of the fixed steps (Kepler e = 0.9, 200 orbits: @file{doc/reversible-steps.md};
## @code{demo odeSV 2}); step doubling
## (the default) for short runs or a requested local accuracy, where the
## energy drift does not matter.
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
%! ## learned (after 8 steps, 3 probes), 2 probing separability at t0; a
%! ## dense n-by-n buffer would need 8 TB
%! d = 5e5;  w = 1 + mod ((1:d)', 7) / 7;  h = 0.01;  N = 20;
%! f = @(t, x) [x(d+1:end); -(w.^2) .* x(1:d)];
%! x0 = [cos(0.001 * (1:d)'); zeros(d, 1)];
%! sol = odeSV (f, [0 N*h], x0, odepkgset ("TimeStepSize", h, "Explicit", "yes"));
%! q = x0(1:d);  p = x0(d+1:end);
%! for k = 1:N
%!   p -= h/2 * w.^2 .* q;  q += h * p;  p -= h/2 * w.^2 .* q;
%! endfor
%! assert (sol.y(:,end), [q; p], 1e-13);
%! assert (sol.stats.nfevals, 1 + 2 + 2*8 + 3 + (N - 8));
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
%! assert (sol.stats.nfevals, 1 + 2 + 2*400 + 2 + 1 + 2);   # + separability at t0 and where the model failed
%! ## quadratic T: one call per step after learning, same steps as implicit
%! f = @(t, x) [x(2) / 2; -sin(x(1))];
%! sol = odeSV (f, 0, [1; 0.5], odepkgset (o, "Explicit", "yes"));
%! [~, yi] = odeSV (f, 0, [1; 0.5], odepkgset (o, "Explicit", "no", "NewtonTol", 1e-14));
%! assert (sol.y', yi, 1e-11);
%! assert (sol.stats.nfevals, 1 + 2 + 2*8 + 2 + (400 - 8));
%!test
%! ## "Explicit" on a non-separable H = p^2 (1 + q^2) / 4 + q^2 / 2 is refused
%! ## (it once ran: error 3.2e-2 at t = 10 and |dH| 2.6e-2, against 1.8e-4 and
%! ## 1.2e-5 for the implicit scheme, without a word): at t0 by the probe,
%! ## and from y0 = [0; 0.5], where H_qp = p q vanishes and the probe at t0
%! ## sees nothing, by the re-checks of the first steps
%! f = @(t, y) [y(2) * (1 + y(1)^2) / 2; -(y(2)^2 * y(1) / 2 + y(1))];
%! o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 1000, "Explicit", "yes");
%! for y0 = {[1; 0.5], [0; 0.5], [1; 0]}
%!   try
%!     sol = odeSV (f, 0, y0{1}, o);
%!     error ("not refused");
%!   catch err
%!     assert (err.identifier, "odepkg:notSeparable");
%!     assert (! isempty (strfind (err.message, 'option "Explicit"')));
%!     t = str2double (regexp (err.message, 'at t = ([-+.e0-9]+)', "tokens"){1}{1});
%!     assert (t <= 0.05);
%!   end_try_catch
%! endfor
%! ## the implicit scheme (no Explicit) gets it right: energy error 1.2e-5
%! [~, y] = odeSV (f, 0, [1; 0.5], odepkgset (o, "Explicit", "no"));
%! H = y(:,2).^2 .* (1 + y(:,1).^2) / 4 + y(:,1).^2 / 2;
%! assert (max (abs (H - H(1))) < 1e-4);
%!test
%! ## a separable H whose force depends on t (a driven oscillator) is not
%! ## refused: explicit and implicit steps agree; the calls: 1 at t0, 2
%! ## probing at t0, 2 probing where the force at q_n first changed (with t,
%! ## not p), 2 per step until the calls since the first step reach 16 (7
%! ## steps: the probe's 2 calls count), 2 learning T, 1 per step after
%! f = @(t, y) [y(2); -y(1) + cos(2*t)];
%! o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 1000);
%! sol = odeSV (f, 0, [1; 0], odepkgset (o, "Explicit", "yes"));
%! [~, yi] = odeSV (f, 0, [1; 0], odepkgset (o, "NewtonTol", 1e-14));
%! assert (sol.y', yi, 1e-11);
%! assert (sol.stats.nfevals, 1 + 2 + 2 + 2*7 + 2 + (1000 - 7));
## times in messages are printed with %.15g: t = 0.1 + 0.1 + 0.1 reads 0.3,
## not 0.30000000000000004
%!warning <stopped at t = 0\.3: .* in the step from t = 0\.3;> [t, y] = odeSV (@(t, x) [x(2); -x(1) / (t < 0.35)], [0 1], [1; 0], odepkgset ("TimeStepSize", 0.1, "Explicit", "yes"));
%!test
%! ## conflicting step options are refused, naming both (TimeStepNumber was
%! ## silently dropped for TimeStepSize): with a two-time TSPAN N h must be
%! ## the span; a multi-time TSPAN takes no TimeStepNumber; fixed steps take
%! ## no tolerances
%! f = @(t, x) [x(2); -x(1)];
%! bad = {{[0 1], {"TimeStepNumber", 10, "TimeStepSize", 0.3}, "TimeStepNumber.*TimeStepSize"}, ...
%!        {[0 0.5 1], {"TimeStepNumber", 10}, "TimeStepNumber"}, ...
%!        {[0 0.5 1], {"TimeStepNumber", 10, "TimeStepSize", 0.1}, "TimeStepNumber"}, ...
%!        {[0 1], {"TimeStepSize", 0.1, "RelTol", 1e-8}, "RelTol.*TimeStepSize"}, ...
%!        {[0 1], {"TimeStepNumber", 10, "AbsTol", 1e-8}, "AbsTol.*TimeStepNumber"}, ...
%!        {0, {"TimeStepNumber", 10, "TimeStepSize", 0.1, "MaxStep", 0.1}, "MaxStep.*TimeStepSize"}, ...
%!        {[0 1], {"TimeStepSize", 0.1, "InitialStep", 0.01}, "InitialStep"}, ...
%!        {[0 1], {"TimeStepSize", 0.1, "NormControl", "on"}, "NormControl"}};
%! for i = 1:numel (bad)
%!   try
%!     odeSV (f, bad{i}{1}, [1; 0], odepkgset (bad{i}{2}{:}, "Explicit", "yes"));
%!     error ("case %d not refused", i);
%!   catch err
%!     assert (err.identifier, "odepkg:invalidOption");
%!     assert (! isempty (regexp (err.message, bad{i}{3}, "once")), err.message);
%!   end_try_catch
%! endfor
%! ## consistent or meaningful combinations run
%! [t, y] = odeSV (f, [0 1], [1; 0], odepkgset ("TimeStepNumber", 10, "TimeStepSize", 0.1, "Explicit", "yes"));
%! assert (numel (t), 11);
%! [t, y] = odeSV (f, [0 1], [1; 0], odepkgset ("TimeStepNumber", 4, "Explicit", "yes"));
%! assert (t, (0:0.25:1)', 1e-15);
%! [t, y] = odeSV (f, [0 0.35 1], [1; 0], odepkgset ("TimeStepSize", 0.1, "Explicit", "yes"));
%! assert (t, [0; 0.35; 1]);
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

%!test
%! ## StepControl "reversible" (Hairer and Soederlind 2005): Kepler e = 0.9
%! ## over 20 orbits, the energy error of the last tenth at most 1.5 times
%! ## that of the first; step doubling at the same tolerance drifts
%! tf = 40*pi;  y0 = kepler_y0 (0.9);
%! o = odepkgset ("Explicit", "yes", "RelTol", 1e-6, "AbsTol", 1e-6);
%! for mode = {"reversible", "doubling"}
%!   sol = odeSV (@kepler, [0 tf], y0, odepkgset (o, "StepControl", mode{1}));
%!   assert (sol.x(end), tf);
%!   dH = abs (kepler_energy (sol.y.') - kepler_energy (y0.'));
%!   first = max (dH(sol.x <= tf/10));  last = max (dH(sol.x >= 0.9*tf));
%!   if (strcmp (mode{1}, "reversible"))
%!     assert (last <= 1.5 * first);
%!     assert (last < 1e-2);
%!     assert (sol.stats.minstep, min (diff (sol.x(1:end-1))), -1e-9);
%!     assert (sol.stats.maxstep, max (diff (sol.x(1:end-1))), -1e-9);
%!     assert (sol.stats.maxstep > 10 * sol.stats.minstep);
%!     assert (sol.stats.nfailed, 0);
%!   else
%!     assert (last > 1.5 * first);   # 1.85 (measured)
%!   endif
%! endfor
%!test
%! ## reversible: order 2 in eps (InitialStep = eps, the first step), fitted
%! ## from the error after one period of Kepler e = 0.6; Kepler's own density
%! ## rho = |q|^(-3/2) through StepDensityFcn, one call per step
%! G = @(t, x) -1.5 * (x(1:2).' * x(3:4)) / (x(1:2).' * x(1:2));
%! ep = [4e-3 2e-3 1e-3 5e-4];  err = zeros (size (ep));
%! for i = 1:numel (ep)
%!   o = odepkgset ("Explicit", "yes", "StepControl", "reversible", "StepDensityFcn", G, "InitialStep", ep(i));
%!   sol = odeSV (@kepler, [0 2*pi], kepler_y0 (0.6), o);
%!   err(i) = norm (sol.y(:,end) - kepler_y0 (0.6));
%!   assert (sol.x(2), ep(i), 1e-15);
%!   ## the last step is a side step; G once more at its end, for sol.stepdensity.rho
%!   assert (sol.stats.ndensityevals, sol.stats.nsteps + 1);
%! endfor
%! p = polyfit (log (ep), log (err), 1)(1);
%! assert (p, 2, 0.15);
%!test
%! ## reversible with a composition ("Order", 4: McLachlan's 5-stage
%! ## composition of Stormer-Verlet, symmetric): order 4 in eps (InitialStep
%! ## = eps), fitted from the error after one period of Kepler e = 0.6 with
%! ## rho = |q|^(-3/2); the density sets where the steps fall, each step is
%! ## the composed method's
%! G = @(t, x) -1.5 * (x(1:2).' * x(3:4)) / (x(1:2).' * x(1:2));
%! ep = [0.04 0.02 0.01 0.005];  err = zeros (size (ep));
%! for i = 1:numel (ep)
%!   o = odepkgset ("Explicit", "yes", "Order", 4, "StepControl", "reversible", "StepDensityFcn", G, "InitialStep", ep(i));
%!   sol = odeSV (@kepler, [0 2*pi], kepler_y0 (0.6), o);
%!   err(i) = norm (sol.y(:,end) - kepler_y0 (0.6));
%!   assert (sol.x(2), ep(i), 1e-15);
%! endfor
%! p = polyfit (log (ep), log (err), 1)(1);
%! assert (p, 4, 0.3);                    # 3.99 (measured)
%!test
%! ## reversible with "Order", 4 and the default density: Kepler
%! ## e = 0.9 over 20 orbits without drift (last tenth <= 1.5 x first)
%! tf = 40*pi;  y0 = kepler_y0 (0.9);
%! o = odepkgset ("Explicit", "yes", "Order", 4, "StepControl", "reversible", "RelTol", 1e-8, "AbsTol", 1e-8);
%! sol = odeSV (@kepler, [0 tf], y0, o);
%! assert (sol.x(end), tf);
%! dH = abs (kepler_energy (sol.y.') - kepler_energy (y0.'));
%! first = max (dH(sol.x <= tf/10));  last = max (dH(sol.x >= 0.9*tf));
%! assert (last <= 1.5 * first);
%! assert (last < 1e-3);
%! assert (sol.stats.maxstep > 10 * sol.stats.minstep);
%!test
%! ## reversible with output times: exactly those times, the same step
%! ## sequence (same end state) as with every step output; implicit scheme
%! o = odepkgset ("StepControl", "reversible", "RelTol", 1e-5, "AbsTol", 1e-5);
%! [t1, y1] = odeSV (@kepler, [0 10], kepler_y0 (0.6), o);
%! [t2, y2] = odeSV (@kepler, [0 1 2.5 5 10], kepler_y0 (0.6), o);
%! assert (t2, [0; 1; 2.5; 5; 10]);
%! assert (y2(end,:), y1(end,:), 1e-10);
%! [t3, y3] = odeSV (@kepler, [0 10], kepler_y0 (0.6), odepkgset (o, "Explicit", "yes"));
%! assert (y3(end,:), y1(end,:), 1e-9);
%!test
%! ## reversible with deval and Refine: the interpolant between the variable
%! ## steps adds nothing visible to the method's error (Kepler e = 0.6, one
%! ## orbit, 1399 steps: 5.3e-4 at the steps and at the mid-steps, against
%! ## ode45 at 1e-12), and Refine keeps the solver's own states
%! o = odepkgset ("Explicit", "yes", "StepControl", "reversible", "RelTol", 1e-8, "AbsTol", 1e-8);
%! sol = odeSV (@kepler, [0 2*pi], kepler_y0 (0.6), o);
%! ref = ode45 (@kepler, [0 2*pi], kepler_y0 (0.6), odeset ("RelTol", 1e-12, "AbsTol", 1e-12));
%! tm = (sol.x(1:end-1) + sol.x(2:end)) / 2;
%! es = max (max (abs (sol.y - deval (ref, sol.x))));
%! em = max (max (abs (deval (sol, tm) - deval (ref, tm))));
%! assert (es < 1e-3);
%! assert (em < 1.1 * es);
%! [t, y] = odeSV (@kepler, [0 2*pi], kepler_y0 (0.6), odepkgset (o, "Refine", 4));
%! assert (numel (t), 4 * (numel (sol.x) - 1) + 1);
%! assert (y(1:4:end, :), sol.y.');
%!test
%! ## reversible: OutputFcn sees every step and can stop the run
%! stopper = @(t, y, flag) isempty (flag) && t(end) >= 1;
%! o = odepkgset ("StepControl", "reversible", "Explicit", "yes", "OutputFcn", stopper);
%! [t, y] = odeSV (@kepler, [0 10], kepler_y0 (0.6), o);
%! assert (t(end) >= 1 && t(end - 1) < 1);
%!test
%! ## reversible with Events: Kepler e = 0.9 from the pericentre, q2 crossing
%! ## 0 upward at the pericentre passages t = 2 pi k.  The event times are
%! ## spaced by the method's period, 2 pi up to its phase error (measured
%! ## 2 pi - 0.0067 at this eps = 0.02), the same for every orbit to 2.2e-8
%! ## (measured; 1.6e-12 at RelTol 1e-8); the steps, every one output, are bitwise those of the run
%! ## without events; a terminal event ends the run at the first passage,
%! ## and output times after it are not reached.
%! o = odepkgset ("Explicit", "yes", "StepControl", "reversible", "RelTol", 1e-6, "AbsTol", 1e-6);
%! tf = 21*pi;  y0 = kepler_y0 (0.9);
%! [t0, y0s] = odeSV (@kepler, [0 tf], y0, o);
%! [t, y, te, ye, ie] = odeSV (@kepler, [0 tf], y0, odepkgset (o, "Events", @(t, y) deal (y(2), false, 1)));
%! assert ([t, y], [t0, y0s]);
%! assert (ie, ones (10, 1));
%! d = diff ([0; te]);
%! assert (d, 2*pi * ones (10, 1), 0.04);
%! assert (max (d) - min (d) < 5e-8);
%! assert (max (abs (ye(:, 2))) < 1e-12);
%! assert (all (ye(:, 1) > 0));
%! term = odepkgset (o, "Events", @(t, y) deal (y(2), true, 1));
%! sol = odeSV (@kepler, [0 tf], y0, term);
%! assert (sol.xe, te(1));
%! assert ([sol.x(end), sol.y(:, end).'], [te(1), ye(1, :)]);
%! n = numel (sol.x) - 1;
%! assert ([sol.x(1:n).', sol.y(:, 1:n).'], [t0(1:n), y0s(1:n, :)]);
%! [tt, yt, tet] = odeSV (@kepler, [0:10, tf], y0, term);
%! assert (tt, [(0:6).'; te(1)]);
%! assert (yt(end, :), ye(1, :));
%!test
%! ## reversible, the steps a function of the state (rho(t0) = rho(y0), eps
%! ## = 2 RelTol^(1/3) whatever the start): Kepler e = 0.9, 10 orbits; two
%! ## chunks take at most 1.25 times the steps of one run, the reversed run
%! ## (from the end, p -> -p, the same options) its steps +-25 % (measured:
%! ## 4251; 2136 + 2116; 4250)
%! tf = 20*pi;  y0 = kepler_y0 (0.9);
%! o = odepkgset ("Explicit", "yes", "StepControl", "reversible", "RelTol", 1e-6);
%! one = odeSV (@kepler, [0 tf], y0, o);
%! a = odeSV (@kepler, [0 tf/2], y0, o);
%! b = odeSV (@kepler, [tf/2 tf], a.y(:,end), o);
%! back = odeSV (@kepler, [0 tf], one.y(:,end) .* [1; 1; -1; -1], o);
%! assert (a.stats.nsteps + b.stats.nsteps <= 1.25 * one.stats.nsteps);
%! assert (back.stats.nsteps, one.stats.nsteps, 0.25 * one.stats.nsteps);
%! assert (one.stepdensity.eps, 2 * 1e-6^(1/3), 1e-15);
%! assert ([a.stepdensity.eps, b.stepdensity.eps, back.stepdensity.eps], one.stepdensity.eps * [1 1 1]);
%! ## the integrated rho against rho(y(tf)) = |q|^(-3/2): O(eps^2)
%! assert (one.stepdensity.rho, norm (one.y(1:2,end))^-1.5, -1e-2);
%!test
%! ## reversible: with the returned sol.stepdensity (rho, and the last
%! ## step's eps first) the reversal retraces the run to round-off, amplified
%! ## by Kepler's error growth (measured 1.6e-9 after 4,345 steps; without
%! ## it 1.6e-3, the method's error); a continuation with rho and eps takes
%! ## the steps of one run (+-1)
%! tf = 20*pi + 1;  y0 = kepler_y0 (0.9);
%! o = odepkgset ("Explicit", "yes", "StepControl", "reversible", "RelTol", 1e-6);
%! s = odeSV (@kepler, [0 tf], y0, o);
%! sd = s.stepdensity;
%! r = odeSV (@kepler, [0 tf], s.y(:,end) .* [1; 1; -1; -1],
%!            odepkgset (o, "InitialStepDensity", sd.rho, "StepDensityEps", [sd.lasteps, sd.eps]));
%! assert (r.y(:,end) .* [1; 1; -1; -1], y0, 1e-8);
%! plain = odeSV (@kepler, [0 tf], s.y(:,end) .* [1; 1; -1; -1], o);
%! assert (norm (plain.y(:,end) .* [1; 1; -1; -1] - y0, Inf) > 1e-5);
%! a = odeSV (@kepler, [0 tf/2], y0, o);
%! b = odeSV (@kepler, [tf/2 tf], a.y(:,end), odepkgset (o, "InitialStepDensity", a.stepdensity.rho,
%!                                                     "StepDensityEps", a.stepdensity.eps));
%! assert (a.stats.nsteps + b.stats.nsteps, s.stats.nsteps, 1);
%!test
%! ## reversible: the default density sqrt ((|q'|/|p|) (|p'|/|q|)) is a rate
%! ## and the same in any units: a comet e = 0.97 in AU and days (GM_sun)
%! ## and with GM = 1, a = 1 take the same steps (measured 995 both; rho =
%! ## |f| 1761 and 414 from the aphelion)
%! mu = 2.959122082855911e-4;  e = 0.97;
%! steps = zeros (1, 2);
%! for u = 1:2
%!   m = [1 mu](u);  a = [1 17.8](u);  ra = a * (1 + e);
%!   f = @(t, y) [y(3:4); -m * y(1:2) / norm(y(1:2))^3];
%!   s = odeSV (f, [0 4*pi*sqrt(a^3/m)], [-ra; 0; 0; -sqrt(m*(1-e)/ra)],
%!              odepkgset ("Explicit", "yes", "StepControl", "reversible", "RelTol", 1e-6));
%!   steps(u) = s.stats.nsteps;
%! endfor
%! assert (steps(2), steps(1), 0.02 * steps(1));
%!test
%! ## reversible: a StepDensityFcn returning [G; rho] starts from rho(y0)
%! ## with eps from RelTol (rho a rate), the same run as the default density
%! ## for Kepler's rho = |q|^(-3/2); InitialStep h0 gives eps = h0 rho(y0)
%! G = @(t, x) [-1.5 * (x(1:2).' * x(3:4)) / (x(1:2).' * x(1:2)); norm(x(1:2))^-1.5];
%! o = odepkgset ("Explicit", "yes", "StepControl", "reversible", "RelTol", 1e-6);
%! y0 = kepler_y0 (0.9);
%! s1 = odeSV (@kepler, [0 2*pi], y0, odepkgset (o, "StepDensityFcn", G));
%! s0 = odeSV (@kepler, [0 2*pi], y0, o);
%! assert (s1.stats.nsteps, s0.stats.nsteps, 2);
%! assert (s1.x(2), s1.stepdensity.eps / 0.1^-1.5, 1e-15);
%! s2 = odeSV (@kepler, [0 2*pi], y0, odepkgset (o, "StepDensityFcn", G, "InitialStep", 1e-3));
%! assert (s2.x(2), 1e-3, 1e-15);
%! assert (s2.stepdensity.eps, 1e-3 * 0.1^-1.5, 1e-12);
%!error <option "StepDensityEps" must be given with StepControl "reversible"> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepDensityEps", 0.1))
%!error <option "InitialStepDensity" must be given with StepControl "reversible"> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("InitialStepDensity", 2))
%!error <option "StepDensityEps" must be a positive finite eps, or \[first_eps, eps\]> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "reversible", "StepDensityEps", [1 2 3]))
%!error <option "StepDensityEps" must be a positive finite eps> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "reversible", "StepDensityEps", -1))
%!error <option "InitialStepDensity" must be a positive finite scalar> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "reversible", "InitialStepDensity", 0))
%!error <StepControl "reversible" needs a symmetric method; odeSE is not symmetric> odeSE (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "reversible"))
%!error <not yet implemented for odeSPVI> odeSPVI (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "reversible"))
%!error <remove TimeStepSize> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "reversible", "TimeStepSize", 0.1))
%!error <"StepDensityFcn" must be given with StepControl "reversible"> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepDensityFcn", @(t, x) 0))
%!error <option "StepControl" must be one of "doubling", "reversible"> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "symmetric"))
%!error <StepDensityFcn must return a real scalar G = \(d rho/dt\) / rho, or \[G; rho\]> [t, y] = odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("StepControl", "reversible", "StepDensityFcn", @(t, x) [x; 1]))

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

%!## ---- ensembles: Y0 with K columns ----
%!function dx = kepler_batch (t, x, mu)
%!  if (nargin < 3)
%!    mu = 1;
%!  endif
%!  dx = [x(3:4,:); -mu .* x(1:2,:) ./ sum(x(1:2,:).^2, 1).^1.5];
%!endfunction

%!test
%! ## every member of an ensemble equals its own single run (fixed steps),
%! ## y is N-by-2d-by-K, sol.y 2d-by-N-by-K; one batched call of f per step
%! Y0 = [kepler_y0(0.1), kepler_y0(0.5), kepler_y0(0.7)];
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes");
%! [t, y] = odeSV (@kepler_batch, [0 5], Y0, o);
%! assert (size (y), [501, 4, 3]);
%! for k = 1:3
%!   [ts, ys] = odeSV (@kepler, [0 5], Y0(:, k), o);
%!   assert (ts, t);
%!   assert (y(:, :, k), ys, 1e-12);
%! endfor
%! sol = odeSV (@kepler_batch, [0 5], Y0, o);
%! assert (size (sol.y), [4, 501, 3]);
%! assert (sol.status, [0 0 0]);
%! assert (sol.stats.nfevals <= 500 + 10);
%! assert (sol.stats.nfevalmembers, 3 * sol.stats.nfevals);
%! ## deval: each member's interpolant, 4-by-numel(t)-by-K
%! tm = [0.005, 1.234, 4.999];
%! ym = deval (sol, tm);
%! assert (size (ym), [4, 3, 3]);
%! for k = 1:3
%!   sk = odeSV (@kepler, [0 5], Y0(:, k), o);
%!   assert (ym(:, :, k), deval (sk, tm), 1e-12);
%! endfor

%!test
%! ## a member's parameters live in the user's arrays, column j member j:
%! ## Kepler with GM = mu(j), each member equal to its run with that mu
%! mu = [1, 2, 0.5];
%! Y0 = [kepler_y0(0.3), kepler_y0(0.3), kepler_y0(0.3)];
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes");
%! [t, y] = odeSV (@(t, x) kepler_batch (t, x, mu), [0 3], Y0, o);
%! for k = 1:3
%!   [~, ys] = odeSV (@(t, x) kepler_batch (t, x, mu(k)), [0 3], Y0(:, k), o);
%!   assert (y(:, :, k), ys, 1e-12);
%! endfor

%!test
%! ## events per member (perihelion passages, q2 = 0 upwards: t = 2 pi k for
%! ## every eccentricity), each as its single run reports them; a terminal
%! ## event ends only its member
%! ev = @(t, x) deal (x(2,:), 0, 1);
%! Y0 = [kepler_y0(0.2), kepler_y0(0.6)];
%! o = odepkgset ("TimeStepSize", 0.02, "Explicit", "yes", "Composition", "KahanLi8", "Events", ev);
%! [t, y, te, ye, ie] = odeSV (@kepler_batch, [0 20], Y0, o);
%! assert (iscell (te) && numel (te) == 2);
%! for k = 1:2
%!   assert (te{k}, 2 * pi * (1:3)', 1e-6);
%!   [~, ~, te1, ye1, ie1] = odeSV (@kepler, [0 20], Y0(:, k), o);
%!   assert (te{k}, te1, 1e-10);
%!   assert (ye{k}, ye1, 1e-9);
%!   assert (ie{k}, ie1);
%! endfor
%! ## terminal for the member whose q1 falls below 0 first (e = 0.6, faster at perihelion? no: the
%! ## one with the lower q1 crossing): q1 = 0 downwards ends its member only
%! ev2 = @(t, x) deal (x(1,:), 1, -1);
%! sol = odeSV (@kepler_batch, [0 3], Y0, odepkgset (o, "Events", ev2));
%! assert (sol.status, [1 1]);
%! for k = 1:2
%!   [~, ~, te1] = odeSV (@kepler, [0 3], Y0(:, k), odepkgset (o, "Events", ev2));
%!   assert (sol.xe{k}, te1, 1e-10);
%!   after = sol.x > te1 + 0.02;
%!   assert (all (isnan (sol.y(1, after, k))));
%!   assert (! any (isnan (sol.y(1, sol.x < te1, k))));
%! endfor

%!test
%! ## one failing member does not stop the others: member 2 falls into the
%! ## centre, where this f is NaN (r < 0.3); a warning names it, its outputs
%! ## are NaN from then on, the others equal their single runs
%! f = @(t, x) kepler_batch (t, x) ./ (sum (x(1:2,:).^2, 1) >= 0.09);
%! Y0 = [kepler_y0(0.2), [1; 0; 0; 0], kepler_y0(0.4)];
%! o = odepkgset ("TimeStepSize", 0.05, "Explicit", "yes");
%! lastwarn ("");
%! sol = odeSV (f, [0 10], Y0, o);
%! [msg, id] = lastwarn ();
%! assert (id, "odepkg:integrationFailed");
%! assert (! isempty (strfind (msg, "members 2")));
%! assert (sol.status, [0 -1 0]);
%! assert (any (isnan (sol.y(1, :, 2))) && ! isnan (sol.y(1, 2, 2)));
%! for k = [1 3]
%!   [~, ys] = odeSV (@kepler, [0 10], Y0(:, k), o);
%!   assert (sol.y(:, :, k).', ys, 1e-12);
%! endfor

%!test
%! ## adaptive steps: one step size for all members (the error the largest
%! ## over them): oscillators of frequencies w(j), each within the tolerance
%! ## of its closed form
%! w = [1, 3, 5];
%! f = @(t, x) [x(2,:); -w.^2 .* x(1,:)];
%! o = odepkgset ("RelTol", 1e-8, "AbsTol", 1e-8, "Explicit", "yes", "Composition", "KahanLi8");
%! [t, y] = odeSV (f, [0 1 2], [1 1 1; 0 0 0], o);
%! assert (t, [0; 1; 2]);
%! for k = 1:3
%!   assert (y(:, 1, k), cos (w(k) * t), 1e-6);
%! endfor

%!test
%! ## schemes without a batched form (here the implicit one) run member by
%! ## member: the same results as single runs
%! Y0 = [kepler_y0(0.1), kepler_y0(0.5)];
%! o = odepkgset ("TimeStepSize", 0.05);
%! [t, y] = odeSV (@kepler_batch, [0 2], Y0, o);
%! for k = 1:2
%!   [~, ys] = odeSV (@kepler, [0 2], Y0(:, k), o);
%!   assert (y(:, :, k), ys, 1e-13);
%! endfor

%!function stop = record_size (t, y, flag)
%!  global odepkg_ens_sizes
%!  odepkg_ens_sizes{end+1} = size (y);
%!  stop = false;
%!endfunction
%!test
%! ## the OutputFcn sees all members, 2d-by-K, at every output
%! global odepkg_ens_sizes
%! odepkg_ens_sizes = {};
%! o = odepkgset ("TimeStepSize", 0.1, "Explicit", "yes", "OutputFcn", @record_size);
%! [t, y] = odeSV (@kepler_batch, [0 1], [kepler_y0(0.1), kepler_y0(0.2)], o);
%! assert (numel (odepkg_ens_sizes), numel (t) + 1);     # init, 10 steps, done
%! assert (odepkg_ens_sizes{1}, [4 2]);
%! assert (odepkg_ens_sizes{5}, [4 2]);
%! clear -global odepkg_ens_sizes

%!error <even number of rows> odeSV (@kepler_batch, [0 1], ones (3, 2))
%!error <"Refine" is not available in ensemble mode> odeSV (@kepler_batch, [0 1], ones (4, 2), odepkgset ("Refine", 4))
%!error <adaptive steps needs common output times> odeSV (@kepler_batch, [0 1], [kepler_y0(0.1), kepler_y0(0.2)])
%!error <"OutputFcn" in ensemble mode> odeSV (@kepler_batch, [0 1], [kepler_y0(0.1), kepler_y0(0.2)], odepkgset ("TimeStepSize", 0.1, "OutputFcn", @(varargin) false))
%!error <must return a real matrix> odeSV (@(t, x) [1; 2; 3; 4], [0 1], [kepler_y0(0.1), kepler_y0(0.2)], odepkgset ("TimeStepSize", 0.1, "Explicit", "yes"))

%!demo
%! ## Kepler problem (e = 0.6) up to t = 1000: odeSV with a fixed step against
%! ## ode45 at the same cost (the same number of calls of f).  ode45's energy
%! ## error grows like t, odeSV's stays bounded; from t = 44 on the
%! ## symplectic method is the more accurate, at t = 1000 by a factor of 30.
%! ## Its last revolution has the ellipse's size and shape, turned by the
%! ## method's phase error; ode45's (dots: its steps) has shrunk.
%! kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! e = 0.6;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];  T = 1000;
%! H = @(y) sum (y(3:4,:).^2, 1) / 2 - 1 ./ sqrt (sum (y(1:2,:).^2, 1));
%! evalc ('s45 = ode45 (kepler, [0 T], y0, odeset ("RelTol", 1e-4, "AbsTol", 1e-6, "Refine", 1, "Stats", "on"));');
%! n = s45.stats.nfevals;       # explicit odeSV: one call of f per step
%! sv = odeSV (kepler, 0, y0, odepkgset ("TimeStepSize", T / n, "TimeStepNumber", n, "Explicit", "yes"));
%! blue = [0 0.447 0.741];  red = [0.85 0.325 0.098];
%! axes ("position", [0.08 0.13 0.24 0.75]);
%! th = linspace (0, 2*pi, 200);  last = @(s) s.y(:, s.x >= T - 2*pi);
%! ysv = last (sv);  y45 = last (s45);
%! plot (cos (th) - e, sqrt (1 - e^2) * sin (th), "k--", ysv(1,:), ysv(2,:), "color", blue, ...
%!       y45(1,:), y45(2,:), ".-", "color", red, 0, 0, "k+");
%! axis equal;  axis ([-1.8 1.8 -1.8 1.8]);  xlabel ("q_1");  ylabel ("q_2");
%! title ("last revolution (exact: dashed)");
%! axes ("position", [0.42 0.13 0.55 0.75]);
%! loglog (sv.x(2:end), cummax (abs (H (sv.y(:,2:end)) - H (y0))), "color", blue, ...
%!         s45.x(2:end), cummax (abs (H (s45.y(:,2:end)) - H (y0))), "color", red);
%! axis ([0.1 T 1e-7 1]);  xlabel ("t");  ylabel ("energy error");
%! text (0.15, 1.2e-2, sprintf ("odeSV, h = %.3f: %d calls of f", T / n, sv.stats.nfevals), "color", blue);
%! text (1, 2e-5, sprintf ("ode45, RelTol = 1e-4: %d calls of f", n), "color", red);
%! title ("max over [0, t] of |H - H_0|, at equal cost");

%!demo
%! ## Kepler e = 0.9 over 50 orbits, three step modes at comparable numbers
%! ## of steps: the largest |H - H_0| in each orbit.  Step doubling
%! ## (RelTol 1e-6) drifts (2.0e-4 in the first orbit, 6.7e-4 in the last);
%! ## the reversible steps (StepControl "reversible", Hairer and Soederlind
%! ## 2005, with Kepler's density rho = |q|^(-3/2)) keep it bounded at 4.0e-4,
%! ## as fixed steps do at the same number of steps, but these cannot follow
%! ## the pericentre (r = 0.1): 0.15.
%! kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
%! e = 0.9;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];  N = 50;  T = 2*pi*N;
%! H = @(y) sum (y(3:4,:).^2, 1) / 2 - 1 ./ sqrt (sum (y(1:2,:).^2, 1));
%! o = odepkgset ("Explicit", "yes", "RelTol", 1e-6, "AbsTol", 1e-6);
%! G = @(t, x) -1.5 * (x(1:2)' * x(3:4)) / (x(1:2)' * x(1:2));
%! sd = odeSV (kepler, [0 T], y0, o);
%! sr = odeSV (kepler, [0 T], y0, odepkgset (o, "StepControl", "reversible", "StepDensityFcn", G));
%! n = sr.stats.nsteps;
%! sf = odeSV (kepler, 0, y0, odepkgset ("Explicit", "yes", "TimeStepSize", T / n, "TimeStepNumber", n));
%! orbit_max = @(s) accumarray (min (floor (s.x(:) / (2*pi)) + 1, N), ...
%!                              abs (H (s.y) - H (y0)).', [N 1], @max);
%! grey = [0.3 0.3 0.3];  red = [0.85 0.325 0.098];  blue = [0 0.447 0.741];
%! semilogy (2*pi*(1:N), orbit_max (sf), "o-", "color", grey, ...
%!           2*pi*(1:N), orbit_max (sd), "s-", "color", red, ...
%!           2*pi*(1:N), orbit_max (sr), "d-", "color", blue);
%! axis ([0 T 1e-4 1]);  xlabel ("t");  ylabel ("max |H - H_0| over each orbit");
%! text (0.03*T, 0.4, sprintf ("fixed steps, h = %.4f: %d steps", T / n, sf.stats.nsteps), "color", grey);
%! text (0.45*T, 2.2e-4, sprintf ("step doubling, RelTol 1e-6: %d steps", sd.stats.nsteps), "color", red);
%! text (0.03*T, 9e-4, sprintf ("reversible, rho = |q|^{-3/2}, RelTol 1e-6: %d steps", n), "color", blue);
%! title (sprintf ("Kepler e = %.1f, %d orbits: energy error per orbit", e, N));

%!demo
%! ## Poincare section of the Henon-Heiles system (Henon and Heiles 1964;
%! ## Hairer, Lubich, Wanner, GNI, Sect. I.3), H = |p|^2/2 + |q|^2/2 +
%! ## q1^2 q2 - q2^3/3 at E = 1/8: 174 orbits started on the section q1 = 0
%! ## (a grid of (q2, p2) inside the energy curve, p1 > 0 from H = E),
%! ## integrated to t = 300 in one ensemble call (Y0 4-by-K, f and the event
%! ## function vectorised over the columns; McLachlan's order-4 composition
%! ## at h = 0.1).  Each dot is a crossing of q1 = 0 with p1 > 0 (event q1,
%! ## direction +1, not terminal).  A second call, without events, runs a
%! ## neighbour 1e-8 away of each orbit.  What to see: regular orbits (blue:
%! ## the neighbour stays close) draw closed curves, the islands around the
%! ## fixed points of the section map; chaotic ones (grey: the neighbour
%! ## separates exponentially) scatter their dots over the sea between them.
%! E = 1/8;
%! f = @(t, Y) [Y(3:4,:); -Y(1,:) .* (1 + 2*Y(2,:)); Y(2,:).^2 - Y(1,:).^2 - Y(2,:)];
%! H = @(y) sum (y.^2, 2) / 2 + y(:,1).^2 .* y(:,2) - y(:,2).^3 / 3;   # rows [q1 q2 p1 p2]
%! crossing = @(t, Y) deal (Y(1,:), false, 1);      # q1 = 0 upwards: p1 > 0
%! [q2, p2] = meshgrid (linspace (-0.42, 0.68, 17), linspace (-0.52, 0.52, 16));
%! r = 2*E - p2.^2 - q2.^2 + 2*q2.^3/3;             # p1^2 on the section
%! in = r > 1e-3;
%! Y0 = [zeros(1, nnz (in)); q2(in).'; sqrt(r(in)).'; p2(in).'];
%! K = columns (Y0);  T = 300;
%! o = odepkgset ("Explicit", "yes", "Composition", "McLachlan4", "TimeStepSize", 0.1);
%! tic ();
%! [~, y, ~, ye] = odeSV (f, [0 T/2 T], Y0, odepkgset (o, "Events", crossing));
%! tc = toc ();  tic ();
%! [~, yn] = odeSV (f, [0 T/2 T], Y0 + [0; 1e-8; 0; 0], o);   # the neighbours
%! tn = toc ();                                     # y, yn: 3-by-4-by-K; ye: 1-by-K cell
%! chaotic = squeeze (sqrt (sum ((y(end,:,:) - yn(end,:,:)).^2, 2))).' > 1e-5;
%! Yc = vertcat (ye{find(chaotic)});  Yr = vertcat (ye{find(! chaotic)});
%! qb = linspace (-0.4, 0.68, 400);  pb = 2*E - qb.^2 + 2*qb.^3/3;
%! qb = qb(pb >= 0);  pb = sqrt (pb(pb >= 0));      # the energy curve (p1 = 0)
%! blue = [0 0.447 0.741];  grey = [0.45 0.45 0.45];
%! axes ("position", [0.07 0.12 0.5 0.78]);
%! plot (Yc(:,2), Yc(:,4), ".", "markersize", 2, "color", [0.6 0.6 0.6], ...
%!       Yr(:,2), Yr(:,4), ".", "markersize", 2, "color", blue, ...
%!       [qb, fliplr(qb)], [pb, -fliplr(pb)], "k-");
%! axis equal;  axis ([-0.45 0.72 -0.52 0.52]);  xlabel ("q_2");  ylabel ("p_2");
%! title ("Henon-Heiles, E = 1/8: crossings of q_1 = 0 with p_1 > 0");
%! x = 0.82;
%! text (x, 0.42, sprintf ("%d orbits to t = %d in one call of odeSV", K, T));
%! text (x, 0.35, sprintf ("(McLachlan4, h = 0.1, events): %.1f s;", tc));
%! text (x, 0.28, sprintf ("their neighbours, no events: %.1f s", tn));
%! text (x, 0.21, sprintf ("%d crossings, max |H - 1/8| = %.1e", rows ([Yc; Yr]),
%!                         max (abs (H ([Yc; Yr]) - E))));
%! text (x, 0.06, sprintf ("blue: %d regular orbits, the neighbour", nnz (! chaotic)), "color", blue);
%! text (x, -0.01, sprintf ("1e-8 away stays within 1e-5 up to t = %d", T), "color", blue);
%! text (x, -0.16, sprintf ("grey: %d chaotic orbits, the neighbour", nnz (chaotic)), "color", grey);
%! text (x, -0.23, sprintf ("separates beyond 1e-5 by t = %d", T), "color", grey);

%!test
%! ## The demo's Poincare section, checked independently on 6 members to
%! ## t = 20 (one ensemble call each at h = 0.1 and 0.05): every crossing is
%! ## on the section (|q1| <= 1e-10) upwards (p1 > 0), in (0, T] and in
%! ## order; H at the crossings is E = 1/8 to the order-4 method's error
%! ## (<= 2e-7 at h = 0.1, at least 10 times less at h/2); and ode45 at
%! ## RelTol 1e-11 finds as many crossings, at the same times and states
%! ## (1e-5; ode45 also reports the start on the section, t = 0, left out);
%! ## a member run alone gives the same crossings.
%! E = 1/8;
%! f = @(t, Y) [Y(3:4,:); -Y(1,:) .* (1 + 2*Y(2,:)); Y(2,:).^2 - Y(1,:).^2 - Y(2,:)];
%! H = @(y) sum (y(:,3:4).^2, 2)/2 + sum (y(:,1:2).^2, 2)/2 + y(:,1).^2 .* y(:,2) - y(:,2).^3/3;
%! q2 = [-0.3, -0.1, 0.1, 0.3, 0.5, 0.6];  p2 = [0, 0.3, 0.1, -0.3, 0, 0.05];
%! Y0 = [zeros(1, 6); q2; sqrt(2*E - p2.^2 - q2.^2 + 2*q2.^3/3); p2];
%! T = 20;  K = columns (Y0);  dH = [0 0];  h = [0.1 0.05];
%! for i = 1:2
%!   o = odepkgset ("Explicit", "yes", "Composition", "McLachlan4", "TimeStepSize", h(i),
%!                  "Events", @(t, Y) deal (Y(1,:), false, 1));
%!   [~, ~, te, ye] = odeSV (f, [0 T], Y0, o);
%!   assert (size (te), [1 K]);
%!   for k = 1:K
%!     assert (numel (te{k}) >= 2);
%!     assert (all (te{k} > 0 & te{k} <= T) && all (diff (te{k}) > 0));
%!     assert (max (abs (ye{k}(:,1))) <= 1e-10);
%!     assert (all (ye{k}(:,3) > 0));
%!     dH(i) = max (dH(i), max (abs (H (ye{k}) - E)));
%!   endfor
%! endfor
%! assert (dH(1) <= 2e-7);
%! assert (dH(2) <= dH(1) / 10);
%! [~, ~, te3, ye3] = odeSV (f, [0 T], Y0(:,3), o);  # member 3 run alone
%! assert (te3, te{3}, 1e-12);
%! assert (ye3, ye{3}, 1e-12);
%! oo = odeset ("RelTol", 1e-11, "AbsTol", 1e-11);
%! for k = 1:K
%!   [~, ~, t45] = ode45 (f, [0 T], Y0(:,k), odeset (oo, "Events", @(t, y) deal (y(1), false, 1)));
%!   t45 = t45(t45 > 0);
%!   assert (numel (t45), numel (te{k}));
%!   assert (t45(:), te{k}(:), 1e-5);
%!   [~, y45] = ode45 (f, [0; te{k}(:)], Y0(:,k), oo);
%!   assert (y45(2:end,:), ye{k}, 1e-5);
%! endfor

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
%!test
%! ## stormer_verlet with [t, x, ~, k]: one step, 3 calls of f (2 with
%! ## k_vals), not the 7 (6) of the step-doubling estimate x_est; asked for,
%! ## x_est costs the two half steps (4 more calls)
%! global odepkg_sv_calls
%! o = odepkgset ("Explicit", "yes");
%! odepkg_sv_calls = 0;
%! [~, x1, ~, k] = stormer_verlet (@counted_oscillator, 0, [1; 0], 0.1, o);
%! assert (odepkg_sv_calls, 3);
%! odepkg_sv_calls = 0;
%! [~, x2, ~, k2] = stormer_verlet (@counted_oscillator, 0.1, x1, 0.1, o, k);
%! assert (odepkg_sv_calls, 2);
%! odepkg_sv_calls = 0;
%! [~, x1e, xest, ke] = stormer_verlet (@counted_oscillator, 0, [1; 0], 0.1, o);
%! assert (odepkg_sv_calls, 7);
%! assert ([x1e; ke], [x1; k]);
%! odepkg_sv_calls = 0;
%! [~, ~, xest2] = stormer_verlet (@counted_oscillator, 0.1, x1, 0.1, o, k);
%! assert (odepkg_sv_calls, 6);
%! clear -global odepkg_sv_calls

## Composition methods ("Order", "Composition"): Hairer, Lubich, Wanner, V.3
%!test
%! ## fitted order on Kepler (e = 0.5; after one period the exact state is y0)
%! e = 0.5;  y0 = kepler_y0 (e);
%! for p = [4 6 8]
%!   Ns = [40 56 80];
%!   err = zeros (size (Ns));
%!   for k = 1:numel (Ns)
%!     o = odepkgset ("TimeStepSize", 2*pi/Ns(k), "TimeStepNumber", Ns(k), "Explicit", "yes", "Order", p);
%!     [~, y] = odeSV (@kepler, 0, y0, o);
%!     err(k) = norm (y(end,:)' - y0, Inf);
%!   endfor
%!   c = polyfit (log (2*pi ./ Ns), log (err), 1);
%!   assert (c(1), p, 0.4);
%! endfor
%!test
%! ## the implicit scheme (Newton per substep) composed: the same order
%! e = 0.5;  y0 = kepler_y0 (e);  Ns = [40 56 80];  err = zeros (size (Ns));
%! for k = 1:numel (Ns)
%!   o = odepkgset ("TimeStepSize", 2*pi/Ns(k), "TimeStepNumber", Ns(k), "Composition", "KahanLi6");
%!   [~, y] = odeSV (@kepler, 0, y0, o);
%!   err(k) = norm (y(end,:)' - y0, Inf);
%! endfor
%! c = polyfit (log (2*pi ./ Ns), log (err), 1);
%! assert (c(1), 6, 0.4);
%!test
%! ## order 8: energy error bounded without drift over 200 periods, and one
%! ## call of f per substep (17 per step) once the velocity model is learned
%! e = 0.5;  y0 = kepler_y0 (e);  N = 100;
%! o = odepkgset ("TimeStepSize", 2*pi/N, "TimeStepNumber", 200*N, "Explicit", "yes", "Order", 8);
%! sol = odeSV (@kepler, 0, y0, o);
%! H = sum (sol.y(3:4,:).^2, 1) / 2 - 1 ./ sqrt (sum (sol.y(1:2,:).^2, 1));
%! dH = abs (H - H(1));
%! assert (max (dH) < 1e-9);
%! assert (max (dH(end-N:end)) < 2 * max (dH(1:N+1)) + 1e-14);
%! assert (sol.stats.nfevals <= 17 * 200 * N + 30);
%!test
%! ## adaptive: step doubling with p = 8 meets the tolerance in far fewer calls
%! e = 0.5;  y0 = kepler_y0 (e);
%! o = odepkgset ("Explicit", "yes", "RelTol", 1e-10, "AbsTol", 1e-10);
%! s8 = odeSV (@kepler, [0 2*pi], y0, odepkgset (o, "Order", 8));
%! s2 = odeSV (@kepler, [0 2*pi], y0, o);
%! assert (norm (s8.y(:,end) - y0, Inf) < 1e-7);
%! assert (s8.stats.nfevals < s2.stats.nfevals / 5);
%!test
%! ## "Order" 2 is the plain method; a table name in any case is accepted;
%! ## order 10 (Sofroniou-Spaletta, 35 stages) beats order 8 at equal steps
%! y0 = kepler_y0 (0.5);
%! o = odepkgset ("TimeStepSize", 2*pi/60, "TimeStepNumber", 60, "Explicit", "yes");
%! [~, y2] = odeSV (@kepler, 0, y0, o);
%! [~, y2o] = odeSV (@kepler, 0, y0, odepkgset (o, "Order", 2));
%! assert (y2o, y2);
%! [~, y8] = odeSV (@kepler, 0, y0, odepkgset (o, "Composition", "kahanli8"));
%! [~, y10] = odeSV (@kepler, 0, y0, odepkgset (o, "Order", 10));
%! assert (norm (y10(end,:)' - y0, Inf) < norm (y8(end,:)' - y0, Inf) / 5);
%!error <option "Order" must be 2, 4, 6, 8 or 10> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("Order", 5))
%!error <option "Composition" must be one of> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("Composition", "Yoshida8"))
%!error <disagree> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("Composition", "KahanLi8", "Order", 6))
%!error <option "Order" is not used by odeSE> odeSE (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("Order", 4))
%!test
%! ## deval and Refine keep a composed run's order: mid-step errors on the
%! ## oscillator (exact cos t) fall as h^8 for KahanLi8 (measured 7.97:
%! ## 7.8e-6, 3.2e-8, 1.2e-10 at h = 0.4, 0.2, 0.1), where a cubic through 4
%! ## points leaves O(h^4) (h^4/384 = 2.6e-7 at h = 0.1)
%! f = @(t, x) [x(2); -x(1)];
%! h = [0.4, 0.2, 0.1];  em = zeros (size (h));
%! for k = 1:numel (h)
%!   sol = odeSV (f, [0 4], [1; 0], odepkgset ("TimeStepSize", h(k), "Explicit", "yes", "Order", 8));
%!   tm = sol.x(1:end-1) + h(k) / 2;
%!   em(k) = max (max (abs (deval (sol, tm) - [cos(tm); -sin(tm)])));
%! endfor
%! pm = polyfit (log (h), log (em), 1)(1);
%! assert (pm > 7.3, "deval order %.2f", pm);
%! assert (em(end) < 1e-9);
%! ## Refine: the new points from the same interpolant
%! [t, y] = odeSV (f, [0 4], [1; 0], odepkgset ("TimeStepSize", 0.1, "Explicit", "yes", "Order", 8, "Refine", 4));
%! assert (numel (t), 4 * 40 + 1);
%! assert (max (max (abs (y - [cos(t), -sin(t)]))) < 1e-9);
%!test
%! ## events of a composed run are located on its own steps re-taken from
%! ## the step's start, so their times have its order: the zeros of cos t
%! ## (pi/2, 3 pi/2) with KahanLi8 off by 3.8e-9, 1.5e-11, 5.8e-14 at
%! ## h = 0.4, 0.2, 0.1 (fitted 8.00)
%! f = @(t, x) [x(2); -x(1)];
%! h = [0.4, 0.2, 0.1];  ee = zeros (size (h));
%! for k = 1:numel (h)
%!   o = odepkgset ("TimeStepSize", h(k), "Explicit", "yes", "Order", 8, "Events", @(t, x) deal (x(1), false, 0));
%!   [~, ~, te] = odeSV (f, [0 5], [1; 0], o);
%!   ee(k) = max (abs (te(:) - [pi/2; 3*pi/2]));
%! endfor
%! assert (polyfit (log (h(1:2)), log (ee(1:2)), 1)(1) > 7.3);
%! assert (ee(end) < 1e-12);

## Compensated summation ("CompensatedSummation")
%!test
%! ## honoured: the compensated run differs from the plain one by round-off
%! ## only (oscillator, KahanLi8, 500 steps), and its energy error is at
%! ## round-off; refused by the implicit scheme and with StepControl
%! ## "reversible"
%! f = @(t, x) [x(2); -x(1)];
%! o = odepkgset ("TimeStepSize", 0.05, "TimeStepNumber", 500, "Explicit", "yes", "Order", 8);
%! [~, yp] = odeSV (f, 0, [1; 0], o);
%! [~, yc] = odeSV (f, 0, [1; 0], odepkgset (o, "CompensatedSummation", "on"));
%! d = max (abs (yc(:) - yp(:)));
%! assert (d > 0 && d < 1e-12);
%! assert (max (abs (sum (yc.^2, 2) / 2 - 0.5)) < 10 * eps);
%!error <option "CompensatedSummation" is implemented for the explicit scheme only> odeSV (@(t, x) [x(2); -x(1)], 0, [1; 0], odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 3, "CompensatedSummation", "on"))
%!error <"CompensatedSummation" is not yet implemented with StepControl "reversible"> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("Explicit", "yes", "StepControl", "reversible", "CompensatedSummation", "on"))
%!error <option "CompensatedSummation" is not used by odeRATTLE> odeRATTLE (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "CompensatedSummation", "on"))
%!error <option "CompensatedSummation" must be> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("Explicit", "yes", "CompensatedSummation", "maybe"))

## a repeated call is prepared once (odepkg_driver's memo, keyed on the
## inputs' content), yet every input is honoured: the same call gives the
## same bits; a changed option, TSPAN, parameter or Y0 its own run (against
## the closed form of x'' = -k x); an option that warns warns every time
%!test
%! f = @(t, y, k) [y(2); -k*y(1)];
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes");
%! [t1, y1] = odeSV (f, [0 1], [1; 0], o, 4);
%! [t2, y2] = odeSV (f, [0 1], [1; 0], o, 4);
%! assert (isequal ([t2, y2], [t1, y1]));
%! assert (y1(end, 1), cos (2), 1e-4);
%! o.TimeStepSize = 0.02;
%! [t3, y3] = odeSV (f, [0 1], [1; 0], o, 4);
%! assert (numel (t3), 51);
%! assert (y3(end, 1), cos (2), 1e-3);
%! [t4, y4] = odeSV (f, [0 2], [1; 0], o, 4);
%! assert (t4(end), 2);
%! assert (y4(end, 1), cos (4), 1e-3);
%! [~, y5] = odeSV (f, [0 1], [1; 0], o, 1);
%! assert (y5(end, 1), cos (1), 1e-3);
%! [~, y6] = odeSV (f, [0 1], [0; 1], o, 4);
%! assert (y6(end, 1), sin (2) / 2, 1e-3);
%! oa = odepkgset ("RelTol", 1e-17, "AbsTol", 1e-6);
%! for k = 1:2
%!   lastwarn ("");
%!   [~, ~] = odeSV (f, [0 0.01], [1; 0], oa, 4);
%!   [~, id] = lastwarn ();
%!   assert (id, "odepkg:relTolTooSmall");
%! endfor

## Models of odepkg_model (octave-symbolic and a C compiler needed): the
## native run equals the function-handle run with hand-written derivatives,
## step for step, to round-off
%!shared have, dir, hh, fhh, Y0, lam, kepler, fk
%! have = ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))));
%! dir = tempname ();
%! ## Hénon–Heiles with the cubic's strength lam a parameter, member by member
%! fhh = @(t, Y, lam) [Y(3:4,:); -Y(1,:) - 2 * lam .* Y(1,:) .* Y(2,:); -Y(2,:) - lam .* (Y(1,:).^2 - Y(2,:).^2)];
%! K = 40;  lam = linspace (0.5, 1.5, K);
%! Y0 = [0.1 * cos(1:K); 0.1 * sin(1:K); 0.3 * ones(1, K); 0.05 * cos(2:K+1)];
%! fk = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];
%! hh = kepler = [];
%! if (have)
%!   pkg load symbolic
%!   syms q1 q2 p1 p2 l real
%!   hh = odepkg_model ("H", (p1^2 + p2^2)/2 + (q1^2 + q2^2)/2 + l * (q1^2*q2 - q2^3/3), "q", [q1 q2],
%!                      "p", [p1 p2], "Parameters", l, "CacheDir", dir);
%!   kepler = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2], "p", [p1 p2],
%!                          "CacheDir", dir);
%! endif
%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## Hénon–Heiles as an ensemble, one parameter value per member (a row of
%! ## K values): native over the K columns = the vectorised handle, fixed
%! ## and adaptive (common) steps, and order 6.  The kernels' sums are
%! ## ordered by SymPy, the handle's as written: f differs in its last bits,
%! ## and the adaptive steps' sizes, each from an error estimate, carry that
%! ## into the step sequence (at 1e-12 after 450 steps, growing): fixed
%! ## steps step for step, adaptive ones to the tolerance at the end
%! for oo = {odepkgset("TimeStepSize", 0.01), odepkgset("RelTol", 1e-8, "AbsTol", 1e-10), ...
%!           odepkgset("TimeStepSize", 0.05, "Order", 6)}
%!   [tn, yn] = odeSV (hh, [0 5], Y0, oo{1}, lam);
%!   [th, yh] = odeSV (fhh, [0 5], Y0, odepkgset (oo{1}, "Explicit", "yes"), lam);
%!   if (isempty (oo{1}.TimeStepSize))
%!     assert (abs (numel (tn) - numel (th)) <= 0.01 * numel (th));
%!     assert (yn(end, :, :), yh(end, :, :), 1e-6);
%!   else
%!     assert (tn, th, 1e-13);
%!     assert (yn, yh, 1e-12);
%!   endif
%! endfor
%! ## member k alone (a single run with lam(k)) is column k of the ensemble
%! [t1, y1] = odeSV (hh, [0 5], Y0(:, 7), odepkgset ("TimeStepSize", 0.01), lam(7));
%! [tn, yn] = odeSV (hh, [0 5], Y0, odepkgset ("TimeStepSize", 0.01), lam);
%! assert (yn(:, :, 7), y1, 1e-13);
%! ## a shared value (scalar) for all members
%! [~, ys] = odeSV (hh, [0 1], Y0, odepkgset ("TimeStepSize", 0.01), 0.8);
%! [~, yh] = odeSV (fhh, [0 1], Y0, odepkgset ("TimeStepSize", 0.01, "Explicit", "yes"), 0.8);
%! assert (ys, yh, 1e-13);
%! ## odeSE and odeVV too (Hénon–Heiles has T = |p|^2/2: v = p)
%! [~, yn] = odeSE (hh, [0 1], Y0, odepkgset ("TimeStepSize", 0.01), lam);
%! [~, yh] = odeSE (fhh, [0 1], Y0, odepkgset ("TimeStepSize", 0.01, "Explicit", "yes"), lam);
%! assert (yn, yh, 1e-13);
%! [~, yn] = odeVV (hh, [0 1], Y0, odepkgset ("TimeStepSize", 0.01), lam);
%! [~, yh] = odeVV (fhh, [0 1], Y0, odepkgset ("TimeStepSize", 0.01), lam);
%! assert (yn, yh, 1e-13);
%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## the threads ("Threads") change nothing: bit for bit, K = 301 members
%! K = 301;  Y = [0.1 * cos(1:K); 0.1 * sin(1:K); 0.3 * ones(1, K); 0.05 * cos(2:K+1)];
%! l = linspace (0.5, 1.5, K);
%! o = odepkgset ("TimeStepSize", 0.01);
%! s1 = odeSV (hh, [0 2], Y, odepkgset (o, "Threads", 1), l);
%! for th = [2 3]
%!   s = odeSV (hh, [0 2], Y, odepkgset (o, "Threads", th), l);
%!   assert (s.stats.threads, th);
%!   assert (s.y, s1.y, 0);
%! endfor
%! assert (s1.stats.threads, 1);
%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## StepControl "reversible" with a model: the native run is the handle's
%! ## (Kepler, e = 0.5, two periods: the same steps; times and states agree
%! ## to the round-off of the forces, grown by Kepler's shear along the orbit)
%! y0 = [0.5; 0; 0; sqrt(3)];
%! o = odepkgset ("StepControl", "reversible", "RelTol", 1e-6, "AbsTol", 1e-6);
%! sn = odeSV (kepler, [0 4*pi], y0, o);
%! sh = odeSV (fk, [0 4*pi], y0, odepkgset (o, "Explicit", "yes"));
%! assert (sn.stats.nsteps, sh.stats.nsteps);
%! assert (sn.x, sh.x, 1e-10);
%! assert (sn.y, sh.y, 1e-9);
%! assert (sn.stepdensity.rho, sh.stepdensity.rho, 1e-9);
%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## bad input in ensemble mode: the parameter count per member; Threads
%! ## for a single run, a handle, or a bad value
%! o = odepkgset ("TimeStepSize", 0.1);
%! fail ('odeSV (hh, [0 1], Y0, o, [lam; lam])', "got 2 value\\(s\\) per member");
%! fail ('odeSV (hh, [0 1], Y0, o)', "got 0 value");
%! fail ('odeSV (hh, [0 1], Y0(:, 1), odepkgset (o, "Threads", 2), 1)', '"Threads" is for ensembles of a model');
%! fail ('odeSV (fhh, [0 1], Y0, odepkgset (o, "Explicit", "yes", "Threads", 2), lam)', "a function handle runs on the interpreter");
%! fail ('odeSV (hh, [0 1], Y0, odepkgset (o, "Threads", 0), lam)', "Threads");
%!test
%! if (exist (dir, "dir"))
%!   confirm_recursive_rmdir (false, "local");
%!   rmdir (dir, "s");
%! endif
