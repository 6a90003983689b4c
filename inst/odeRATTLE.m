## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeRATTLE (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeRATTLE (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeRATTLE (@dots{})
## @deftypefnx {} {} odeRATTLE (@dots{})
## Solve a constrained Hamiltonian system
## q' = H_p, p' = -H_q - G(q)' lambda, g(q) = 0
## with the RATTLE method: order 2, symmetric, symplectic on the constraint
## manifold, with g(q) = 0 and G(q) H_p(q, p) = 0 held to the Newton
## tolerance at every step (Hairer, Lubich, Wanner, Sect. VII.1.4; seed 000).
## @var{y0} = [q0; p0] and @code{@var{fcn} (@var{t}, [q; p])} returns
## [dH/dp; -dH/dq] of the unconstrained H.
##
## Holonomic constraints g(q) = 0 are given by the options
## @qcode{"ConstraintFcn"} (@code{g = fcn (q)}, m-by-1), @qcode{"ConstraintsNb"}
## (m < d), and optionally @qcode{"ConstraintGradFcn"} (@code{G = fcn (q)},
## m-by-d; finite differences otherwise), @qcode{"ConstraintHessFcn"}
## (d-by-d-by-m) and @qcode{"HamiltonianHessFcn"} (2d-by-2d Hessian of H in
## (q, p) order).  Newton re-forms its Jacobian at every iterate from the
## current constraint gradients and the Hessians (the given functions, else
## finite differences of f and G), taken at each step's starting guess unless
## they turn out constant (quadratic H and constraints: then once, re-checked
## every 16 steps).  Systems with more than 64 unknowns (3d + 2m) keep one
## factorization across steps instead.
## @qcode{"Explicit"}, @qcode{"yes"} declares H = T(p) + V(q) separable: Newton
## then runs on the m position multipliers only and the velocity multipliers
## come from an m-by-m solve (Hairer, Lubich, Wanner, Sect. VII.1).
##
## Initial data violating g(q0) = 0 or G(q0) H_p(q0, p0) = 0 are projected onto
## the constraint manifold with a warning @code{odepkg:inconsistentInitialData}
## (an error with @qcode{"InitialProjection"}, @qcode{"error"}).  Where
## G H_pp G' is rank-deficient (singular configurations, redundant
## constraints) minimum-norm multipliers are used and the warning
## @code{odepkg:singularConstraints} names t and the condition estimate.
## Where minimum-norm multipliers cannot make g vanish (a zero gradient, a
## step across a singular configuration), leaving |g(q)| above
## sqrt(NewtonTol) |q|, the step is rejected (adaptive steps) or the run
## stops there with @code{odepkg:integrationFailed}; no step off the
## constraint manifold is returned.
## @code{sol.stats} reports the largest |g(q)| and |G(q) H_p| met: measured
## at the returned points, except where the last Newton iterate's values are
## already below 0.01 @qcode{"NewtonTol"} (ordinary steps) and are recorded
## instead (the last correction only reduces them); each value is raised to
## the round-off level of its evaluation, 4 eps |G| |q| (|G| |H_p|), so that
## it bounds the residuals of the returned points.
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
## pendulum = @@(t, x) [x(3:4); 0; -1];           # H = |p|^2/2 + q_2
## opts = odepkgset ("ConstraintFcn", @@(q) q'*q - 1, "ConstraintGradFcn", @@(q) 2*q', ...
##                   "ConstraintsNb", 1, "Explicit", "yes", ...
##                   "TimeStepSize", 0.01, "TimeStepNumber", 2000);
## [t, y] = odeRATTLE (pendulum, 0, [1; 0; 0; 0], opts);
## max (abs (sum (y(:,1:2).^2, 2) - 1))            # round-off
## @end example
## @seealso{odeSHAKE, rattle, odeSV, odepkgset}
## @end deftypefn

function varargout = odeRATTLE (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 4)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeRATTLE", "rattle", nargout, fcn, tspan, y0, opts, varargin);

endfunction

%!function o = pendulum_opts (varargin)
%!  o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
%!                 "ConstraintsNb", 1, varargin{:});
%!endfunction
%!function dx = pendulum (t, x)
%!  dx = [x(3:4); 0; -1];          # H = |p|^2/2 + q_2, unit mass and gravity
%!endfunction
%!function E = pendulum_energy (y)
%!  E = sum (y(:,3:4).^2, 2) / 2 + y(:,2);
%!endfunction
%!function [g, G, GH] = double_pendulum_constraints ()
%!  ## q = [x1; y1; x2; y2], rods of length 1 from the origin to 1 and 1 to 2
%!  g = @(q) [q(1:2)'*q(1:2) - 1; (q(3:4) - q(1:2))'*(q(3:4) - q(1:2)) - 1];
%!  G = @(q) 2 * [q(1:2)', 0, 0; (q(1:2) - q(3:4))', (q(3:4) - q(1:2))'];
%!  GH = @(q) cat (3, 2 * blkdiag (eye (2), zeros (2)), 2 * [eye(2), -eye(2); -eye(2), eye(2)]);
%!endfunction

%!test
%! ## constraints at round-off at every output; energy bounded, no drift
%! o = pendulum_opts ("Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 20000);
%! [t, y] = odeRATTLE (@pendulum, 0, [1; 0; 0; 0], o);
%! assert (max (abs (sum (y(:,1:2).^2, 2) - 1)) <= 1e-12);
%! assert (max (abs (sum (y(:,1:2) .* y(:,3:4), 2))) <= 1e-12);
%! dE = abs (pendulum_energy (y) - pendulum_energy (y(1,:)));
%! assert (max (dE) < 1e-3);
%! assert (max (dE(end-2000:end)) < 1.5 * max (dE(1:2000)));
%!test
%! ## order 2, fitted over four step sizes against a fine reference
%! o = pendulum_opts ("Explicit", "yes");
%! y0 = [sin(1); -cos(1); 0; 0];
%! [~, yr] = odeRATTLE (@pendulum, [0 1], y0, odepkgset (o, "TimeStepSize", 1e-4));
%! h = [0.04 0.02 0.01 0.005];  err = zeros (size (h));
%! for i = 1:4
%!   [~, y] = odeRATTLE (@pendulum, [0 1], y0, odepkgset (o, "TimeStepSize", h(i)));
%!   err(i) = norm (y(end,:) - yr(end,:));
%! endfor
%! assert (polyfit (log (h), log (err), 1)(1), 2, 0.2);
%!test
%! ## separable fast path = general path, with and without Hessians
%! o = pendulum_opts ("TimeStepSize", 0.02, "TimeStepNumber", 200);
%! y0 = [sin(1); -cos(1); 0.3*cos(1); 0.3*sin(1)];
%! [~, ys] = odeRATTLE (@pendulum, 0, y0, odepkgset (o, "Explicit", "yes"));
%! [~, yg] = odeRATTLE (@pendulum, 0, y0, odepkgset (o, "Explicit", "no"));
%! Hh = @(t, x) blkdiag (zeros (2), eye (2));
%! GH = @(q) 2 * eye (2);
%! [~, ya] = odeRATTLE (@pendulum, 0, y0, odepkgset (o, "HamiltonianHessFcn", Hh, "ConstraintHessFcn", GH));
%! assert (yg, ys, 1e-11);
%! assert (ya, ys, 1e-11);
%!test
%! ## double pendulum: two constraints at round-off, energy without drift
%! [g, G, GH] = double_pendulum_constraints ();
%! f = @(t, x) [x(5:8); 0; -1; 0; -1];
%! o = odepkgset ("ConstraintFcn", g, "ConstraintGradFcn", G, "ConstraintsNb", 2, ...
%!                "Explicit", "yes", "TimeStepSize", 0.005, "TimeStepNumber", 4000);
%! y0 = [1; 0; 2; 0; 0; 0; 0; 0];
%! [t, y] = odeRATTLE (f, 0, y0, o);
%! res = zeros (rows (y), 2);
%! for k = 1:rows (y)
%!   q = y(k,1:4)';  p = y(k,5:8)';
%!   res(k,:) = [norm(g (q), Inf), norm(G (q) * p, Inf)];
%! endfor
%! assert (max (res(:)) <= 1e-12);
%! E = sum (y(:,5:8).^2, 2) / 2 + y(:,2) + y(:,4);
%! assert (max (abs (E - E(1))) < 5e-3);
%!test
%! ## a constraint listed twice integrates exactly like the constraint once
%! o = pendulum_opts ("Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 300);
%! y0 = [1; 0; 0; 0; 0; 0];
%! f3 = @(t, x) [x(4:6); 0; -1; 0];
%! o3 = odepkgset (o, "ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q');
%! o4 = odepkgset (o, "ConstraintFcn", @(q) [q'*q - 1; q'*q - 1], ...
%!                 "ConstraintGradFcn", @(q) [2*q'; 2*q'], "ConstraintsNb", 2);
%! [~, y1] = odeRATTLE (f3, 0, y0, o3);
%! warning ("off", "odepkg:singularConstraints", "local");
%! [~, y2] = odeRATTLE (f3, 0, y0, o4);
%! assert (y2, y1, 1e-12);
%!warning <rank-deficient> [t, y] = odeRATTLE (@(t, x) [x(4:6); 0; -1; 0], 0, [1; 0; 0; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) [q'*q - 1; q'*q - 1], "ConstraintGradFcn", @(q) [2*q'; 2*q'], "ConstraintsNb", 2, "Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 10));
%!test
%! ## adaptive steps: constraints still at round-off at every output
%! o = pendulum_opts ("Explicit", "yes", "RelTol", 1e-8, "AbsTol", 1e-8);
%! sol = odeRATTLE (@pendulum, [0 5], [1; 0; 0; 0], o);
%! y = sol.y';
%! assert (sol.x(end), 5);
%! assert (max (abs (sum (y(:,1:2).^2, 2) - 1)) <= 1e-12);
%! assert (sol.stats.maxconstrresidual <= 1e-12);
%! assert (sol.stats.maxhiddenresidual <= 1e-12);
%!test
%! ## without ConstraintGradFcn: finite differences, same trajectory
%! o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "Explicit", "yes", ...
%!                "TimeStepSize", 0.01, "TimeStepNumber", 200);
%! sol = odeRATTLE (@pendulum, 0, [1; 0; 0; 0], o);
%! [~, y] = odeRATTLE (@pendulum, 0, [1; 0; 0; 0], pendulum_opts ("Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 200));
%! assert (sol.y', y, 1e-6);
%! assert (max (abs (sum (sol.y(1:2,:).^2) - 1)) <= 1e-12);
%! assert (sol.stats.nfdjacobians > 0);
%!test
%! ## inconsistent initial data are projected, with a warning
%! o = pendulum_opts ("Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 10);
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! [t, y] = odeRATTLE (@pendulum, 0, [1.1; 0; 0.5; 0.5], o);
%! assert (y(1,1:2) * y(1,1:2)', 1, 1e-12);
%! assert (y(1,1:2) * y(1,3:4)', 0, 1e-12);
%!warning <projected onto the constraint manifold> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], 0, [1.1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "TimeStepSize", 0.1, "TimeStepNumber", 2));
%!error <initial data violate the constraints> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], 0, [1.1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "InitialProjection", "error", "TimeStepSize", 0.1, "TimeStepNumber", 2));
%!error <ConstraintFcn and ConstraintsNb are required> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("TimeStepSize", 0.1))
%!error <ConstraintFcn must return a real vector of ConstraintsNb elements> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) [1; 2], "ConstraintsNb", 1, "TimeStepSize", 0.1))
%!error <ConstraintGradFcn must return a real m-by-d matrix> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) [2*q', 0], "ConstraintsNb", 1, "TimeStepSize", 0.1))
%!warning <constraints cannot be satisfied> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], 0, [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) [0, 0], "ConstraintsNb", 1, "Explicit", "yes", "TimeStepSize", 0.1, "TimeStepNumber", 10));
%!error <ConstraintGradFcn must return a real m-by-d matrix .* 4x2> [t, y] = odeRATTLE (@(t, x) [x(5:8); 0; -1; 0; -1], 0, [0; -1; 0; -2; zeros(4, 1)], odepkgset ("ConstraintFcn", @(q) [q(1:2)'*q(1:2) - 1; (q(3:4) - q(1:2))'*(q(3:4) - q(1:2)) - 1], "ConstraintGradFcn", @(q) [2*q(1:2)', 0, 0; -2*(q(3:4) - q(1:2))', 2*(q(3:4) - q(1:2))']', "ConstraintsNb", 2, "TimeStepSize", 0.1, "TimeStepNumber", 2))
%!error <TimeStepSize is too small for the time span> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "TimeStepSize", 1e-20))
%!error <option "ConstraintsNb" must be smaller than the dimension of q> odeRATTLE (@(t, x) x, [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q, "ConstraintsNb", 2))
%!error <Invalid call> odeRATTLE (@(t, x) x, [0 1], [1; 0])

%!demo
%! ## Pendulum in Cartesian coordinates: energy error and constraint residuals
%! f = @(t, x) [x(3:4); 0; -1];
%! opts = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
%!                   "ConstraintsNb", 1, "Explicit", "yes", "TimeStepSize", 0.01, ...
%!                   "TimeStepNumber", 5000);
%! [t, y] = odeRATTLE (f, 0, [sin(2); -cos(2); 0; 0], opts);
%! E = sum (y(:,3:4).^2, 2) / 2 + y(:,2);
%! subplot (2, 1, 1); plot (t, E - E(1)); title ("energy error");
%! subplot (2, 1, 2); semilogy (t, abs (sum (y(:,1:2).^2, 2) - 1) + eps, ...
%!                             t, abs (sum (y(:,1:2) .* y(:,3:4), 2)) + eps);
%! legend ("|g(q)|", "|G(q) H_p|"); title ("constraint residuals");
