## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeSHAKE (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeSHAKE (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeSHAKE (@dots{})
## @deftypefnx {} {} odeSHAKE (@dots{})
## Solve a constrained Hamiltonian system with SHAKE: the RATTLE step of
## @code{odeRATTLE} without the final projection of the momenta onto
## G(q) H_p(q, p) = 0 (Ryckaert, Ciccotti, Berendsen 1977; McLachlan, Modin,
## Verdier, Wilkins, @cite{Geometric generalisations of SHAKE and RATTLE}, 2014).
## The positions are those of RATTLE; the momenta are not projected onto
## the hidden constraint.
##
## Holonomic constraints g(q) = 0 are given by the options
## @qcode{"ConstraintFcn"} (@code{g = fcn (q)}, m-by-1), @qcode{"ConstraintsNb"}
## (m < d), and optionally @qcode{"ConstraintGradFcn"} (@code{G = fcn (q)},
## m-by-d; finite differences otherwise), @qcode{"ConstraintHessFcn"}
## (d-by-d-by-m) and @qcode{"HamiltonianHessFcn"} (2d-by-2d Hessian of H in
## (q, p) order); Newton uses them as @code{odeRATTLE} does (see its help).
## A @qcode{"ConstraintGradFcn"} returning a sparse matrix keeps the Newton
## systems sparse, with @qcode{"Explicit"} and without it (then give a
## sparse @qcode{"HamiltonianHessFcn"}: the Hessian of H is otherwise
## differenced as a full 2d-by-2d matrix, refused beyond 4e6 entries with
## @code{odepkg:invalidOption}); @code{sol.stats.sparseconstraints} says
## whether the sparse path ran.
## @qcode{"Explicit"}, @qcode{"yes"} declares H = T(p) + V(q) separable: Newton
## then runs on the m position multipliers only and the velocity multipliers
## come from an m-by-m solve (Hairer, Lubich, Wanner, Sect. VII.1).  The
## claim is verified at t0 (two calls of f) and where the learned velocity
## model fails: a non-separable f is the error @code{odepkg:notSeparable}.
##
## With @qcode{"ConstraintVariables"}, @qcode{"qp"} (constraints g(q, p) = 0
## on coisotropic manifolds, @qcode{"ConstraintFlowFcn"},
## @qcode{"BaseMethod"}: see @code{odeRATTLE}) this is geometric SHAKE
## (McLachlan et al. 2014, Def. 1.3): the points stay on g = 0 to round-off, the hidden
## constraint @{g, H@} = 0 only to O(h); projected along their fibres, SHAKE
## and RATTLE points coincide (McLachlan et al. 2014, eq. (11)).
##
## Initial data violating g(q0) = 0 or G(q0) H_p(q0, p0) = 0 are projected onto
## the constraint manifold with a warning @code{odepkg:inconsistentInitialData}
## (an error with @qcode{"InitialProjection"}, @qcode{"error"}).  Where
## G H_pp G' is rank-deficient (singular configurations, redundant
## constraints) minimum-norm multipliers are used and the warning
## @code{odepkg:singularConstraints} names t and the condition estimate.
## @code{sol.stats} reports the largest |g(q)| and |G(q) H_p| met.  SHAKE
## does not enforce G(q) H_p = 0 (it is O(h)): @code{maxhiddenresidual} is
## measured at every returned point, by one more call of f per step, except
## on the separable path with quadratic kinetic energy, where the velocity
## model checked on that step gives H_p.
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
## [t, y] = odeSHAKE (pendulum, 0, [1; 0; 0; 0], opts);
## max (abs (sum (y(:,1:2).^2, 2) - 1))            # round-off
## @end example
## @strong{Models:} @var{fcn} may be a model of @code{odepkg_model} (H and g
## written once, derivatives derived, C kernels compiled): the run then has
## no interpreter between steps, its parameters are the extra arguments,
## and in ensemble mode an extra argument with K columns gives one value per
## member (the members run one after the other, each in the kernels).
## @strong{Ensembles:} a @var{y0} with K columns integrates K trajectories
## in one call, the user functions vectorised over the columns (column j is
## member j); the members run one after the other in the same call.  @var{y} is then N-by-n-by-K.  See @code{help odepkg},
## Ensembles.
##
## @seealso{odeRATTLE, odeSV, odepkgset}
## @end deftypefn

function varargout = odeSHAKE (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 4)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeSHAKE", "shake", nargout, fcn, tspan, y0, opts, varargin);

endfunction

%!shared f, o, y0
%! f = @(t, x) [x(3:4); 0; -1];
%! o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
%!                "ConstraintsNb", 1, "Explicit", "yes", "TimeStepSize", 0.01, ...
%!                "TimeStepNumber", 1000);
%! y0 = [sin(1); -cos(1); 0; 0];
%!test
%! ## SHAKE and RATTLE give the same positions; SHAKE keeps g(q) = 0
%! [~, ys] = odeSHAKE (f, 0, y0, o);
%! [~, yr] = odeRATTLE (f, 0, y0, o);
%! assert (ys(:,1:2), yr(:,1:2), 1e-12);
%! assert (max (abs (sum (ys(:,1:2).^2, 2) - 1)) <= 1e-12);
%!test
%! ## the momenta are not projected: the hidden constraint is violated
%! sol = odeSHAKE (f, 0, y0, o);
%! assert (sol.solver, "odeSHAKE");
%! hidden = abs (sum (sol.y(1:2,:) .* sol.y(3:4,:)));
%! assert (max (hidden) > 1e-6);
%!test
%! ## sol.stats.maxhiddenresidual is what SHAKE leaves, max |G(q) H_p| over
%! ## the output (it read 0; here |G H_p| reaches 1.8e-2): spherical
%! ## pendulum, G(q) H_p = 2 q'p computed here from the output, on the
%! ## separable path (quadratic T: the learned model) and the general one
%! fs = @(t, x) [x(4:6); 0; 0; -1];
%! ys0 = [sin(1); 0; -cos(1); 0; 1; 0];
%! os = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
%!                 "ConstraintsNb", 1, "TimeStepSize", 0.01, "TimeStepNumber", 1000);
%! for ex = {"yes", "no"}
%!   sol = odeSHAKE (fs, 0, ys0, odepkgset (os, "Explicit", ex{1}));
%!   hid = max (abs (2 * sum (sol.y(1:3,:) .* sol.y(4:6,:), 1)));
%!   assert (hid > 1e-2);
%!   assert (sol.stats.maxhiddenresidual, hid, 1e-10);
%! endfor
%! ## a non-quadratic T (relativistic, T = sqrt (1 + |p|^2)): the general
%! ## separable path measures it by a call of f at the returned point
%! fr = @(t, x) [x(4:6) / sqrt(1 + x(4:6)'*x(4:6)); 0; 0; -1];
%! sol = odeSHAKE (fr, 0, ys0, odepkgset (os, "Explicit", "yes", "TimeStepNumber", 200));
%! hp = sol.y(4:6,:) ./ sqrt (1 + sum (sol.y(4:6,:).^2, 1));
%! hid = max (abs (2 * sum (sol.y(1:3,:) .* hp, 1)));
%! assert (hid > 1e-3);
%! assert (sol.stats.maxhiddenresidual, hid, 1e-10);
%!test
%! ## general path gives the same positions as the separable one
%! [~, ya] = odeSHAKE (f, 0, y0, odepkgset (o, "TimeStepNumber", 100));
%! [~, yb] = odeSHAKE (f, 0, y0, odepkgset (o, "TimeStepNumber", 100, "Explicit", "no"));
%! assert (yb(:,1:2), ya(:,1:2), 1e-11);
%!error <Invalid call> odeSHAKE (f, [0 1], y0)
%!error <ConstraintFcn and ConstraintsNb are required> [t, y] = odeSHAKE (f, [0 1], y0, odepkgset ("TimeStepSize", 0.1))

%!test
%! ## geometric SHAKE, g(q, p) = |y|^2 - 1 (McLachlan et al. 2014, Sect. 5.4.2): g at round-off,
%! ## the hidden residual {g, H} = O(h) (fitted), the Hopf images of SHAKE and
%! ## RATTLE points equal (same fibres, eq. (11))
%! f = @(t, y) [y(3:4); 0; -1];
%! flow = @(y, s) [cos(2*s)*y(1:2) + sin(2*s)*y(3:4); -sin(2*s)*y(1:2) + cos(2*s)*y(3:4)];
%! oq = odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", @(y) y'*y - 1, ...
%!                 "ConstraintGradFcn", @(y) 2*y', "ConstraintFlowFcn", flow, "ConstraintsNb", 1);
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! za = [-0.78652612; -0.4043988; -0.3880746864163783; 0.2173391755798215];
%! hopf = @(y) [2 * (y(:,1) + 1i*y(:,3)) .* conj(y(:,2) + 1i*y(:,4)), ...
%!              abs(y(:,1) + 1i*y(:,3)).^2 - abs(y(:,2) + 1i*y(:,4)).^2];
%! h = [0.1 0.05 0.025];  hid = zeros (size (h));
%! for i = 1:3
%!   [~, ys] = odeSHAKE (f, [0 5], za, odepkgset (oq, "TimeStepSize", h(i)));
%!   [~, yr] = odeRATTLE (f, [0 5], za, odepkgset (oq, "TimeStepSize", h(i)));
%!   assert (max (abs (sum (ys.^2, 2) - 1)) <= 1e-13);
%!   assert (hopf (ys), hopf (yr), 1e-11);
%!   hid(i) = max (abs (2 * sum (ys .* [ys(:,3:4), zeros(rows (ys), 1), -ones(rows (ys), 1)], 2)));
%! endfor
%! assert (polyfit (log (h), log (hid), 1)(1), 1, 0.2);

%!test
%! ## adaptive geometric SHAKE (issue 13, defect 4): the error estimate compares
%! ## the fibres' points on M_H, which are RATTLE's (eq. (11)), so SHAKE takes
%! ## RATTLE's steps (it took 8840 for RATTLE's 72 at 1e-4) and its Hopf
%! ## images are RATTLE's to round-off
%! f = @(t, y) [y(3:4); 0; -1];
%! flow = @(y, s) [cos(2*s)*y(1:2) + sin(2*s)*y(3:4); -sin(2*s)*y(1:2) + cos(2*s)*y(3:4)];
%! oq = odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", @(y) y'*y - 1, ...
%!                 "ConstraintGradFcn", @(y) 2*y', "ConstraintFlowFcn", flow, "ConstraintsNb", 1, ...
%!                 "RelTol", 1e-6, "AbsTol", 1e-6);
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! za = [-0.78652612; -0.4043988; -0.3880746864163783; 0.2173391755798215];
%! hopf = @(y) [2 * (y(1,:) + 1i*y(3,:)) .* conj(y(2,:) + 1i*y(4,:)); ...
%!              abs(y(1,:) + 1i*y(3,:)).^2 - abs(y(2,:) + 1i*y(4,:)).^2];
%! ss = odeSHAKE (f, [0 5], za, oq);
%! sr = odeRATTLE (f, [0 5], za, oq);
%! assert (abs (ss.stats.nsteps - sr.stats.nsteps) <= 2);
%! assert (hopf (ss.y(:,end)), hopf (sr.y(:,end)), 1e-11);

%!test
%! ## INDEX lists the package's public functions (pkg describe), and not the
%! ## internal DEFUNs __odepkg_integrate__, __odepkg_rattlie__, ...
%! ## Only where this file is the installed package's (make sanitize runs the
%! ## tests from the source tree, where there is nothing to describe).
%! here = canonicalize_file_name (fileparts (which ("odeSHAKE")));
%! is_this = @(p) strcmp (p.name, "odepkg") && strcmp (canonicalize_file_name (p.dir), here);
%! installed = cellfun (is_this, pkg ("list"));
%! if (any (installed))
%!   d = pkg ("describe", "-verbose", "odepkg");
%!   fns = {};
%!   for k = 1:numel (d{1}.provides)
%!     fns = [fns, d{1}.provides{k}.functions];
%!   endfor
%!   assert (all (ismember ({"odeSV", "odeRATTLE", "odeRATTLie", "odeSPVI", "odepkgset", "rattle"}, fns)));
%!   assert (! any (strncmp (fns, "__", 2)));
%! endif

%!demo
%! ## SHAKE on the pendulum (g(q) = |q|^2 - 1, t up to 20): positions stay on
%! ## the circle to round-off, but the momenta are not projected, so the
%! ## hidden constraint G(q) H_p = 2 q.p is violated by O(h) (halving h halves
%! ## it); RATTLE's projection of the momenta keeps it at round-off.
%! f = @(t, x) [x(3:4); 0; -1];
%! o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1, ...
%!                "Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 2000);
%! y0 = [sin(1); -cos(1); 0; 0];
%! [t, y] = odeSHAKE (f, 0, y0, o);
%! [t2, y2] = odeSHAKE (f, 0, y0, odepkgset (o, "TimeStepSize", 0.005, "TimeStepNumber", 4000));
%! [~, yr] = odeRATTLE (f, 0, y0, o);
%! hidden = @(y) abs (2 * sum (y(:,1:2) .* y(:,3:4), 2)) + eps / 100;
%! hl = semilogy (t, hidden (y), t2, hidden (y2), t, abs (sum (y(:,1:2).^2, 2) - 1) + eps / 100, t, hidden (yr));
%! axis ([0 20 1e-17 1]);  set (gca, "ytick", 10.^(-15:3:0));
%! xlabel ("t");  ylabel ("constraint residual");
%! title ("SHAKE against RATTLE on the pendulum");
%! text (0.5, 0.1, "SHAKE, |G(q) H_p|, h = 0.01", "color", get (hl(1), "color"));
%! text (0.5, 2e-4, "SHAKE, |G(q) H_p|, h = 0.005", "color", get (hl(2), "color"));
%! text (0.5, 1e-12, "SHAKE |g(q)| and RATTLE |G(q) H_p|, h = 0.01: round-off", "color", "k");

%!test
%! ## Events under SHAKE: the pendulum released horizontally crosses the
%! ## vertical at a quarter period K(1/2) (ellipke); the event state is a
%! ## SHAKE state, on the constraint to round-off.
%! f = @(t, x) [x(3:4); 0; -1];
%! o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1,
%!                "Explicit", "yes", "TimeStepSize", 0.005, "Events", @(t, x) deal (x(1), true, -1));
%! [t, y, te, ye] = odeSHAKE (f, [0 5], [1; 0; 0; 0], o);
%! assert (te, ellipke (1/2), 1e-4);
%! assert (abs (ye(1)) < 1e-12);
%! assert (abs (ye(1:2) * ye(1:2)' - 1) < 1e-14);
%! assert (t(end), te);

%!test
%! ## adaptive SHAKE takes about RATTLE's steps (its estimate leaves out the
%! ## momenta's O(h) component along G(q)', which the next step absorbs),
%! ## not hundreds more, and stays on the constraint
%! f = @(t, x) [x(3:4); 0; -1];
%! o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1,
%!                "Explicit", "yes", "RelTol", 1e-6, "AbsTol", 1e-6);
%! s = odeSHAKE (f, [0 5], [1; 0; 0; 0], o);
%! r = odeRATTLE (f, [0 5], [1; 0; 0; 0], o);
%! assert (s.stats.nsteps <= 2 * r.stats.nsteps + 5);
%! assert (max (abs (sum (s.y(1:2, :) .^ 2) - 1)) < 1e-13);
%! assert (norm (s.y(1:2, end) - r.y(1:2, end)) < 1e-3);
