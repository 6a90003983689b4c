## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odeRATTLie (@var{fcn}, @var{tspan}, @var{y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}] =} odeRATTLie (@dots{}, @var{par1}, @var{par2}, @dots{})
## @deftypefnx {} {@var{sol} =} odeRATTLie (@dots{})
## @deftypefnx {} {} odeRATTLie (@dots{})
## Integrate a mechanical system whose configuration space is a Lie group G
## (rigid bodies, tops, multibody chains) with RATTLie, the RATTLE method on
## Lie groups (Hante and Arnold; seed 003):
## @example
## q' = dL_q(e) v~,   M v' = hat(v)' M v - f(t, q, v) - B(q)' lambda,   0 = Phi(q)
## @end example
## q in G, v in R^n (n = dim G; body velocities: left-trivialised), M the
## constant mass matrix, f the @emph{negative} applied generalized forces (not
## the inertial term hat(v)' M v, which the package forms itself, nor the
## constraint forces), B(q) w = dPhi(q) (q o w~).  Without constraints it is
## the Störmer–Verlet method on G.  Order 2, symmetric, symplectic; q stays on
## G to round-off (products of exponentials, no renormalisation).
##
## @var{y0} = [q0; v0]: the group coordinates of q0, then v0; the rows of
## @var{y} are [q, v] likewise.  @code{@var{fcn} (@var{t}, @var{y})} returns
## the n-vector f(t, q, v), with q = y(1:nq) and v = y(nq+1:end).
##
## Options (@code{odepkgset}):
## @table @asis
## @item @qcode{"LieGroup"} (required)
## A built-in group: @qcode{"Rn"} (q in R^n, n = numel (y0) / 2),
## @qcode{"R3"} (any @qcode{"R<k>"}), @qcode{"SO3"} (q = the rotation matrix R
## column-major, 9 numbers, v = body angular velocity), @qcode{"S3"} (q = unit
## quaternion [p0; p1; p2; p3], scalar first, v as for SO3), @qcode{"SE3"}
## (q = [R(:); x], 12 numbers, v = [body angular; body translational
## velocity], product (R1, x1)(R2, x2) = (R1 R2, x1 + R1 x2)),
## @qcode{"S3sdR3"} (the semidirect product: q = [p; x], v as for SE3), and
## direct products of them in order, @qcode{"S3xR3"} (q = [p; x], v =
## [body angular velocity; x']), @qcode{"SO3xR3"}, @qcode{"S3xR3^2"} (a factor
## repeated), and so on.  Or a struct of the group's operations, with the
## conventions above: @code{dim} (n), @code{compose_exp (q, w)} = q o exp(w~),
## @code{tangent (w)} = T(w) with d/de exp(w~ + e dw~) = exp(w~) o (T(w) dw)~,
## @code{ad (v)} = hat(v) (hat(v) w = [v~, w~]), optional
## @code{tangent_inv_transpose (w)} = T(w)^-T,
## @code{d_tangent_inv_transpose (w, x)} (its derivative in w applied to x,
## differences otherwise) and @code{structure_defect (q)}.
## @item @qcode{"MassMatrix"}
## The constant, symmetric positive definite n-by-n M (default the identity).
## Configuration-dependent mass matrices are refused (an error, not a
## silently wrong answer): RATTLie's discrete Legendre transforms assume a
## constant M.
## @item @qcode{"ConstraintFcn"}, @qcode{"ConstraintGradFcn"}, @qcode{"ConstraintsNb"}
## Phi(q) (m-vector; called with the coordinates q), B(q) (m-by-n, the
## derivative along left translations; central differences along the group
## when absent), m.  Inconsistent initial data are projected onto Phi = 0
## and B v = 0 with a warning (@qcode{"InitialProjection"}, @qcode{"error"}
## to refuse them).
## @item @qcode{"TimeStepSize"}, @qcode{"TimeStepNumber"}, @qcode{"RelTol"}, @qcode{"AbsTol"}, @dots{}
## The time modes of the other solvers (see @code{odeSV}): fixed steps, or
## adaptive steps by step doubling, output at every step or at requested
## times; @qcode{"NewtonTol"}, @qcode{"MaxNewtonIterations"},
## @qcode{"OutputFcn"}, @qcode{"OutputSel"}, @qcode{"Stats"}.
## @end table
##
## @var{sol} has the fields @code{x}, @code{y}, @code{solver}, @code{stats}
## and, with constraints, @code{lambda} (m-by-numel (x)): the multipliers at
## the output times, from the index-1 equations at the computed states
## (consistent at t0 too; two extra calls of B per output time).
##
## Each step solves (A) T(-h W)^-T M W = M v0 - h/2 (f0 + B0' lambda) with
## q1 = q0 o exp(h W) and Phi(q1) = 0 by Newton's method (one call of Phi per
## iteration), then (B) M v1 = T(h W)^-T M W - h/2 (f1 + B1' mu), B1 v1 = 0:
## one call of f and one of B per step when f does not depend on v (probed
## on the first step and re-checked every 16 steps), Newton on v otherwise.
##
## Example (a free rigid body on SO(3): energy and |J Omega| conserved):
## @example
## J = diag ([1 2 3]);  R0 = eye (3);  w0 = [1; 0.1; 0.5];
## opts = odepkgset ("LieGroup", "SO3", "MassMatrix", J, ...
##                   "TimeStepSize", 0.01, "TimeStepNumber", 1000);
## [t, y] = odeRATTLie (@@(t, y) zeros (3, 1), 0, [R0(:); w0], opts);
## W = y(:, 10:12);
## E = 0.5 * sum ((W * J) .* W, 2);  max (abs (E - E(1)))   # round-off
## @end example
## @seealso{odeRATTLE, odeSV, odepkgset}
## @end deftypefn

function varargout = odeRATTLie (fcn, tspan, y0, opts = [], varargin)

  if (nargin < 3)
    print_usage ();
  endif
  varargout = odepkg_driver ("odeRATTLie", "rattlie", nargout, fcn, tspan, y0, opts, varargin);

endfunction

%!shared pend, y0p, gp
%! ## Cartesian pendulum, H = |p|^2/2 + q2, Phi = (|q|^2 - 1)/2
%! pend = odepkgset ("ConstraintFcn", @(q) (q'*q - 1) / 2, "ConstraintGradFcn", @(q) q', ...
%!                   "ConstraintsNb", 1, "TimeStepSize", 0.01, "TimeStepNumber", 500);
%! y0p = [sin(1); -cos(1); 0.3*cos(1); 0.3*sin(1)];
%! gp = [0; 1];

%!test
%! ## Free rigid body (Euler top) on SO(3): |J Omega| (the norm of the
%! ## spatial momentum R J Omega, a discrete Noether invariant) to round-off,
%! ## energy bounded, R orthogonal to round-off.
%! J = diag ([1 2 3]);  w0 = [1; 0.1; 0.5];  R0 = eye (3);
%! opts = odepkgset ("LieGroup", "SO3", "MassMatrix", J, "TimeStepSize", 0.01, "TimeStepNumber", 2000);
%! [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [R0(:); w0], opts);
%! W = y(:, 10:12);
%! E = 0.5 * sum ((W * J) .* W, 2);
%! L = sqrt (sum ((W * J) .^ 2, 2));
%! assert (max (abs (L - L(1))) < 1e-12);
%! assert (max (abs (E - E(1))) < 1e-3 * E(1));
%! R = reshape (y(end, 1:9), 3, 3);
%! assert (norm (R' * R - eye (3)) < 1e-13);

%!test
%! ## G = R^n is classical RATTLE: odeRATTLie on "Rn" reproduces odeRATTLE
%! ## (y0 = [q; p], M = I so p = v) to round-off.
%! [~, ya] = odeRATTLE (@(t, y) [y(3:4); 0; -1], 0, y0p, pend);
%! [~, yb] = odeRATTLie (@(t, y) gp, 0, y0p, odepkgset (pend, "LieGroup", "Rn"));
%! assert (max (abs (ya(:) - yb(:))) < 1e-12);

%!test
%! ## sol.lambda: consistent at t0 (closed form of the pendulum: lambda =
%! ## |v|^2 - f.q for M = I, Phi = (|q|^2-1)/2) and at every output time,
%! ## O(h^2) accurate (against a run with h/4).
%! o = odepkgset (pend, "LieGroup", "Rn", "TimeStepNumber", []);
%! s1 = odeRATTLie (@(t, y) gp, [0 1], y0p, o);
%! s2 = odeRATTLie (@(t, y) gp, [0 1], y0p, odepkgset (o, "TimeStepSize", 0.0025));
%! lam = @(y) sum (y(3:4, :) .^ 2, 1) - gp' * y(1:2, :);
%! assert (s1.lambda(1), lam (y0p), 1e-11);      # Z by central differences: ~1e-12
%! assert (s1.lambda, lam (s1.y), 1e-10);         # the index-1 multiplier of the state
%! e1 = abs (s1.lambda(end) - s2.lambda(end));
%! assert (e1 < 1e-3 && e1 > 0);

%!test
%! ## Adaptive steps (step doubling) and output at requested times; the
%! ## constraints stay at round-off on every output state.
%! o = odepkgset (pend, "LieGroup", "Rn", "TimeStepSize", [], "TimeStepNumber", [], "RelTol", 1e-8, "AbsTol", 1e-10);
%! [t, y] = odeRATTLie (@(t, y) gp, [0 1 2 3], y0p, o);
%! assert (t, [0; 1; 2; 3]);
%! assert (max (abs (sum (y(:, 1:2) .^ 2, 2) - 1)) < 1e-14);
%! assert (max (abs (sum (y(:, 1:2) .* y(:, 3:4), 2))) < 1e-13);
%! [~, yf] = odeRATTLE (@(t, y) [y(3:4); 0; -1], 0, y0p, odepkgset (pend, "TimeStepSize", 1e-4, "TimeStepNumber", 30000));
%! assert (norm (y(end, :) - yf(end, :)) < 1e-6);

%!test
%! ## A user-defined group (SO(3) by its operations) reproduces the built-in one.
%! hat = @(w) [0 -w(3) w(2); w(3) 0 -w(1); -w(2) w(1) 0];
%! ex = @(w) expm (hat (w));
%! Tfun = @(w) eye (3) - (1 - cos (norm (w))) / max (norm (w), eps)^2 * hat (w) ...
%!             + (norm (w) - sin (norm (w))) / max (norm (w), eps)^3 * hat (w)^2;
%! G = struct ("dim", 3, "compose_exp", @(q, w) reshape (reshape (q, 3, 3) * ex (w), 9, 1), ...
%!             "tangent", Tfun, "ad", hat);
%! J = diag ([1 2 3]);  y0 = [reshape(eye (3), 9, 1); 1; 0.1; 0.5];
%! o = odepkgset ("MassMatrix", J, "TimeStepSize", 0.05, "TimeStepNumber", 40);
%! [~, ya] = odeRATTLie (@(t, y) zeros (3, 1), 0, y0, odepkgset (o, "LieGroup", "SO3"));
%! [~, yb] = odeRATTLie (@(t, y) zeros (3, 1), 0, y0, odepkgset (o, "LieGroup", G));
%! assert (max (abs (ya(:) - yb(:))) < 1e-12);

%!test
%! ## A force depending on v (a damped oscillator q'' = -q - c q'): detected,
%! ## solved by Newton, order 2 against the closed form.
%! c = 0.5;  wd = sqrt (1 - c^2 / 4);
%! ex = exp (-c) * (cos (2 * wd) + c / (2 * wd) * sin (2 * wd));
%! for k = 1:3
%!   h = 2^-(4 + k);
%!   sol = odeRATTLie (@(t, y) y(1) + c * y(2), [0 2], [1; 0], odepkgset ("LieGroup", "Rn", "TimeStepSize", h));
%!   err(k) = abs (sol.y(1, end) - ex);
%! endfor
%! assert (sol.stats.velocitydependent, true);
%! assert (log2 (err(1:2) ./ err(2:3)), [2 2], 0.1);

%!test
%! ## Inconsistent initial data are projected along the group with a warning.
%! y0 = [1.1 * sin(1); -cos(1); 0.3*cos(1); 0.4*sin(1)];
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! sol = odeRATTLie (@(t, y) gp, [0 0.1], y0, odepkgset (pend, "LieGroup", "Rn"));
%! assert (abs (norm (sol.y(1:2, 1)) - 1) < 1e-14);
%! assert (abs (sol.y(1:2, 1)' * sol.y(3:4, 1)) < 1e-14);

%!test
%! ## A redundant (rank-deficient) constraint: minimum-norm multipliers, a
%! ## warning, and the motion of the non-redundant problem.
%! g1 = @(q) (q'*q - 1) / 2;
%! o1 = odepkgset ("LieGroup", "Rn", "ConstraintFcn", g1, "ConstraintGradFcn", @(q) q', ...
%!                 "ConstraintsNb", 1, "TimeStepSize", 0.01, "TimeStepNumber", 100);
%! o2 = odepkgset (o1, "ConstraintFcn", @(q) [g1(q); g1(q)], "ConstraintGradFcn", @(q) [q'; q'], ...
%!                 "ConstraintsNb", 2);
%! y0 = [sin(1); 0; -cos(1); 0.3*cos(1); 0.1; 0.3*sin(1)];
%! f = @(t, y) [0; 0; 1];
%! [~, ya] = odeRATTLie (f, 0, y0, o1);
%! warning ("off", "odepkg:singularConstraints", "local");
%! sol = odeRATTLie (f, [0 1], y0, odepkgset (o2, "TimeStepNumber", []));
%! assert (sol.stats.nrankdeficient > 0);
%! assert (max (max (abs (ya - sol.y.'))) < 1e-12);

%!error <unknown group> [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1; 0; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "SU2", "TimeStepSize", 0.1, "TimeStepNumber", 1));
%!error <"LieGroup" must name> [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1; 0; 0; 0; 0; 0; 0], odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 1));
%!error <7 numbers> [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "S3", "TimeStepSize", 0.1, "TimeStepNumber", 1));
%!error <positive definite> [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1; 0; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "S3", "MassMatrix", -eye (3), "TimeStepSize", 0.1, "TimeStepNumber", 1));
%!error <not an element of S3> [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1.1; 0; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "S3", "TimeStepSize", 0.1, "TimeStepNumber", 1));
%!error <HamiltonianHessFcn> [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1; 0; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "S3", "HamiltonianHessFcn", @(t, y) eye (6), "TimeStepSize", 0.1, "TimeStepNumber", 1));
%!error <"MassMatrix" must be a real> [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1; 0; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "S3", "MassMatrix", @(q) eye (3), "TimeStepSize", 0.1, "TimeStepNumber", 1));
%!error <for odeRATTLie> [t, y] = odeSV (@(t, y) [y(2); -y(1)], [0 1], [1; 0], odepkgset ("LieGroup", "Rn"));
%!error <generalized forces> [t, y] = odeRATTLie (@(t, y) zeros (2, 1), 0, [1; 0; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "S3", "TimeStepSize", 0.1, "TimeStepNumber", 1));
%!test
%! ## identifiers
%! try
%!   [t, y] = odeRATTLie (@(t, y) zeros (3, 1), 0, [1; 0; 0; 0; 0; 0; 0], odepkgset ("LieGroup", "SU2", "TimeStepSize", 0.1, "TimeStepNumber", 1));
%! catch err
%!   assert (err.identifier, "odepkg:invalidOption");
%! end_try_catch

%!demo
%! ## The heavy top of seed 003 (fast top), constrained on S3 x R3:
%! ## q = [p; x] (unit quaternion, centre of mass), v = [Omega; x'],
%! ## Phi(q) = x - R(p) X keeps the support point fixed at the origin.
%! m = 15;  Jc = diag ([0.234375, 0.46875, 0.234375]);  X = [0; 1; 0];  g = [0; 0; -9.81];
%! rot = @(p) [p(1)^2+p(2)^2-p(3)^2-p(4)^2, 2*(p(2)*p(3)-p(1)*p(4)), 2*(p(2)*p(4)+p(1)*p(3));
%!             2*(p(2)*p(3)+p(1)*p(4)), p(1)^2-p(2)^2+p(3)^2-p(4)^2, 2*(p(3)*p(4)-p(1)*p(2));
%!             2*(p(2)*p(4)-p(1)*p(3)), 2*(p(3)*p(4)+p(1)*p(2)), p(1)^2-p(2)^2-p(3)^2+p(4)^2];
%! hatX = [0 -X(3) X(2); X(3) 0 -X(1); -X(2) X(1) 0];
%! opts = odepkgset ("LieGroup", "S3xR3", "MassMatrix", blkdiag (Jc, m * eye (3)), ...
%!                   "ConstraintFcn", @(q) q(5:7) - rot (q(1:4)) * X, ...
%!                   "ConstraintGradFcn", @(q) [rot(q(1:4)) * hatX, eye(3)], ...
%!                   "ConstraintsNb", 3, "TimeStepSize", 2^-10, "TimeStepNumber", 2048);
%! W0 = [0; 150; -4.61538];
%! [t, y] = odeRATTLie (@(t, y) [0; 0; 0; -m * g], 0, [1; 0; 0; 0; X; W0; cross(W0, X)], opts);
%! E = 0.5 * sum ((y(:, 8:10) * Jc) .* y(:, 8:10), 2) + 0.5 * m * sum (y(:, 11:13) .^ 2, 2) ...
%!     - m * y(:, 5:7) * g;
%! subplot (1, 2, 1);  plot3 (y(:, 5), y(:, 6), y(:, 7));  grid on;
%! title ("centre of mass of the fast heavy top");  xlabel ("x");  ylabel ("y");  zlabel ("z");
%! subplot (1, 2, 2);  plot (t, E - E(1));
%! title ("energy error (bounded)");  xlabel ("t");
