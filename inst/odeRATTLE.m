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
## tolerance at every step (Hairer, Lubich, Wanner, Sect. VII.1.4).
## @var{y0} = [q0; p0] and @code{@var{fcn} (@var{t}, [q; p])} returns
## [dH/dp; -dH/dq] of the unconstrained H.
##
## Holonomic constraints g(q) = 0 are given by the options
## @qcode{"ConstraintFcn"} (@code{g = fcn (q)}, m-by-1), @qcode{"ConstraintsNb"}
## (m < d), and optionally @qcode{"ConstraintGradFcn"} (@code{G = fcn (q)},
## m-by-d; finite differences otherwise), @qcode{"ConstraintHessFcn"}
## (d-by-d-by-m) and @qcode{"HamiltonianHessFcn"} (2d-by-2d Hessian of H in
## (q, p) order).  For general H the step is geometric RATTLE (below) over
## Stormer-Verlet on the fibres p - G(q)' s: Newton on (p_1/2, q_1, s) for
## SHAKE's g(q_1) = 0, then on the velocity multiplier for G(q_1) H_p = 0.
## Its matrices are re-formed at every iterate from the current constraint
## gradients and the Hessians (the given functions, else finite differences
## of f and G), taken at each step's start unless they turn out constant
## (quadratic H and constraints: then once, re-checked every 16 steps).
## @qcode{"Explicit"}, @qcode{"yes"} declares H = T(p) + V(q) separable: Newton
## then runs on the m position multipliers only and the velocity multipliers
## come from an m-by-m solve (Hairer, Lubich, Wanner, Sect. VII.1).  The
## claim is verified at t0 (two calls of f) and where the learned velocity
## model fails: a non-separable f is the error @code{odepkg:notSeparable}.
##
## @strong{Sparse constraint gradients.}  Chains, ropes, polymers, molecular
## and multibody models have thousands of constraints, each on a few
## coordinates.  A @qcode{"ConstraintGradFcn"} returning a sparse matrix
## (built, say, by @code{sparse (i, j, v, m, d)}) takes, with
## @qcode{"Explicit"}, @qcode{"yes"}, a sparse path: no full m-by-d, m-by-m or
## d-by-d matrix is formed, the Newton matrices G W G' (W the diagonal of
## T_pp: diagonal masses are assumed) are factorized by a sparse LDL' whose
## ordering is analysed once per pattern, and a step of a chain costs O(m)
## time and O(nnz (G)) memory, where a full G costs O(m^3) time and O(m d)
## memory.  It pays from about a hundred constraints; above a few hundred
## the full path is slow (a chain of 1000 links: about 0.3 to 0.6 ms per
## step sparse, 2.4 s full).
## A chain's systems are tridiagonal: they are factorized in O(m) (a banded
## LDL').  The position Newton reuses the factorization of the last step's
## velocity system (a simplified Newton); only where that converges more
## slowly than the exact Newton matrix G_1 W G_0' would, that nonsymmetric
## matrix is factorized (a banded LU) for the next steps.
## The sparsity pattern must stay the same from call to call: entries that
## happen to be exactly zero may be left out (Octave's @code{sparse} drops
## them; the union of the patterns met is kept, and seeded by one extra call
## of the gradient at a point near q0, where such entries are nonzero), but
## every entry that appears for the first time costs a new analysis.
## Without @qcode{"Explicit"} (a general, non-separable H) a sparse G stays
## sparse too: the SHAKE Newton system in the (2d + m) unknowns and the
## m-by-m RATTLE system -G H_pp G' are assembled on fixed sparsity patterns
## and factorized by a sparse LU (COLAMD ordering, analysed once per
## pattern, one numeric factorization per refresh of the Newton matrix,
## reused while Newton converges fast); a chain's RATTLE system is
## tridiagonal and costs O(m).  Give @qcode{"HamiltonianHessFcn"} returning
## a sparse 2d-by-2d matrix (a full one is made sparse): without it the
## Hessian of H is formed by 2d differences of f as a full matrix, allowed
## while (2d)^2 <= 4e6 (d <= 1000), refused above with
## @code{odepkg:invalidOption}.  @code{sol.stats.sparseconstraints} says
## whether the sparse path ran (RATTLE and SHAKE).  With constraints g(q, p)
## (@qcode{"ConstraintVariables"}, @qcode{"qp"}) a sparse m-by-2d
## @qcode{"ConstraintGradFcn"} keeps the geometric RATTLE/SHAKE's systems
## sparse in the same way; @qcode{"ConstraintHessFcn"} then returns the
## Hessians side by side, [H_1 @dots{} H_m], as a 2d-by-2dm matrix (sparse or
## full), and without it they are differenced as a full 2d-by-2dm matrix.
## The initial checks of g(q, p) (projection, coisotropy, the fibre flow)
## and a differenced fibre flow (no @qcode{"ConstraintFlowFcn"}) still use
## a full Dg: refused (@code{odepkg:sparseGradient}) where any of these full
## matrices would have more than 4e6 entries.
## Redundant constraints and singular configurations are warned as on the
## full path (@code{odepkg:singularConstraints}), but with @qcode{"Explicit"}
## only the velocity multipliers are minimum-norm (while the rank deficiency
## is at most 32) and the position multipliers one solution of the singular
## system; without it both are one solution (a rank-revealing sparse QR
## where the sparse LU meets a tiny pivot): the constraint forces, and so
## the trajectory, are the same.  With
## @qcode{"MonitorMultipliers"}, @qcode{"on"}, @code{sol.residuals}
## come from sparse products and no @code{sol.lambda} is computed (it would
## take 2m calls of f per output).  A planar chain of 1000 unit links pinned at the
## origin, q = [x_1; y_1; x_2; y_2; @dots{}], released horizontally:
## @example
## n = 1000;
## D = @@(q) diff ([zeros(2, 1), reshape(q, 2, [])], 1, 2);   # links x_k - x_(k-1)
## I = [kron(1:n, [1 1]), kron(2:n, [1 1])];  J = [1:2*n, 1:2*n-2];
## G = @@(q) sparse (I, J, 2 * [D(q)(:); -reshape(D(q)(:,2:end), [], 1)], n, 2*n);
## opts = odepkgset ("ConstraintFcn", @@(q) (sum (D (q) .^ 2, 1) - 1).', ...
##                   "ConstraintGradFcn", G, "ConstraintsNb", n, "Explicit", "yes", ...
##                   "TimeStepSize", 0.01, "TimeStepNumber", 100);
## f = @@(t, y) [y(2*n+1:end); repmat([0; -1], n, 1)];     # H = |p|^2/2 + sum y_k
## y0 = [reshape([1:n; zeros(1, n)], [], 1); zeros(2*n, 1)];
## sol = odeRATTLE (f, 0, y0, opts);
## sol.stats.maxconstrresidual                     # round-off
## @end example
##
## Higher orders: @qcode{"Order"}, 4, 6, 8 or 10 (or @qcode{"Composition"}, a
## table name, see @code{odeSV}) composes s RATTLE substeps of sizes g_1 h,
## @dots{}, g_s h (Hairer, Lubich, Wanner, Sects. II.4 and V.3): RATTLE is
## symmetric, so the composition is of that order, symplectic, symmetric, and
## every substep ends on the constraint manifold (g and G H_p at round-off).
## Separable and general paths alike (Newton to round-off, NewtonTol 1e-14
## unless given), and geometric RATTLE (@qcode{"ConstraintVariables"},
## @qcode{"qp"}) over @qcode{"midpoint"} or @qcode{"stormer_verlet"}, which
## are symmetric; not over @qcode{"symplectic_euler"}.
##
## @strong{Constraints on positions and momenta} (McLachlan, Modin, Verdier,
## Wilkins, @cite{Geometric generalisations of SHAKE and RATTLE}, 2014): with @qcode{"ConstraintVariables"}, @qcode{"qp"} every
## constraint function takes the whole state y = [q; p]: g(y) (m-by-1),
## @qcode{"ConstraintGradFcn"} m-by-2d, @qcode{"ConstraintHessFcn"}
## 2d-by-2d-by-m.  The constraint manifold M = @{g = 0@} must be coisotropic,
## @{g_i, g_j@} = 0 on M (always true for m = 1 and for g(q)), and H
## nondegenerate along its fibres, @{g_i, @{g_j, H@}@} invertible; both are
## checked at the initial data (errors @code{odepkg:notCoisotropic},
## @code{odepkg:degenerateHamiltonian}).  Geometric SHAKE slides along the
## fibre exp(s X_g) z0, X_g = J grad g (q' = dg/dp, p' = -dg/dq), so that the
## base method lands on M; RATTLE then slides along the fibre of that point
## onto the hidden constraint @{g, H@} = grad g . f = 0.  The fibre flow is
## @qcode{"ConstraintFlowFcn"} (@code{z = fcn (y, s)}, checked at the initial
## data: identity at s = 0, derivative X_g), else integrated to round-off by
## a 6-stage Gauss method.  @qcode{"BaseMethod"} chooses the underlying
## symplectic map: @qcode{"midpoint"} (default for @qcode{"qp"}),
## @qcode{"stormer_verlet"} or @qcode{"symplectic_euler"} (order 1).  RATTLE
## is symplectic on M_H, symmetric and of order 2 over the symmetric ones.
## Over those, @qcode{"StepControl"}, @qcode{"reversible"} applies too
## (symmetric map, Prop. 4.9 of the paper; refused over
## @qcode{"symplectic_euler"}).  Its default density, the rate
## sqrt ((|q'|/|p|) (|p'|/|q|)) of @code{odeSV}, takes G from the
## unconstrained f, which along a constrained motion does not see the
## constraint force: rho stays a function of the state and the map
## reversible, but rho follows the time scale of the constrained motion only
## roughly (a Cartesian pendulum of length L about q = 0: sqrt(g/L),
## constant steps).  Give @qcode{"StepDensityFcn"} when the steps should
## follow a time scale of the constrained motion.
## For g(q) the default is the classical method above (Störmer–Verlet base,
## fibres p - G(q)' s in closed form); @qcode{"midpoint"} and
## @qcode{"symplectic_euler"} apply there too.  @code{sol.stats} then counts
## @code{nflowevals} (ConstraintFlowFcn calls), @code{nnewtoniter} (SHAKE, s)
## and @code{nprojectioniter} (RATTLE, sigma); @code{maxhiddenresidual} is
## the largest |@{g, H@}|.
##
## Initial data violating g(q0) = 0 or G(q0) H_p(q0, p0) = 0 are projected onto
## the constraint manifold with a warning @code{odepkg:inconsistentInitialData}
## (an error with @qcode{"InitialProjection"}, @qcode{"error"}).  Where
## G H_pp G' is rank-deficient (singular configurations, redundant
## constraints) minimum-norm multipliers are used (on the sparse path: see
## above) and the warning @code{odepkg:singularConstraints} names t, the
## condition estimate and which multipliers were minimum-norm.
## Where the multipliers cannot make g vanish (a zero gradient, a
## step across a singular configuration), leaving |g(q)| above
## sqrt(NewtonTol) |q|, the step is rejected (adaptive steps) or the run
## stops there with @code{odepkg:integrationFailed}; no step off the
## constraint manifold is returned.
##
## @strong{The Newton iteration at the edges.}  RATTLE's position equations
## g(q_1) = 0 have several roots; the method is the one that tends to the
## unconstrained step as h -> 0.  The fast iteration (a chord Newton from the
## multipliers extrapolated from the last steps) is checked: a root whose
## multipliers move q_1 further than the curvature of the manifold allows
## (their displacement, less the normal part of the free step, beyond half
## the free step) is solved again, and a failed iteration is retried, by a
## globalised Newton: the Jacobian at every iterate, minimum-norm
## corrections through rank loss of G, a backtracking line search on |g|,
## from the warm start and from zero multipliers (the unconstrained step),
## keeping the root nearest the unconstrained step.  A step is refused only
## when neither start finds such a root (adaptive steps: a smaller step;
## fixed steps: the run stops, the message saying whether only a distant
## root was found).  Iterations stop once |g| is at the round-off of its own
## evaluation, 4 eps |G| |q| (on small steps the Newton matrix grows like
## 1/h^2 and asks for no more).  Near singular configurations (a
## parallelogram linkage through its collinear positions) the general path
## retries with singular values below sqrt(eps) of the largest dropped.
## @code{sol.stats.nnewtonretries} counts the steps so retried,
## @code{ndistantroots} the roots rejected as off the branch.  An ensemble
## (Y0 with K columns, @qcode{"Explicit"}) does the same for each member on
## its own: the members retried iterate together (one call of the
## constraint functions per iteration for all of them), the others are
## unaffected, a member with no root near its unconstrained step is refused
## (@code{sol.status} -1) while the others go on, and the counts are of
## member steps.  With
## @qcode{"OnFailure"}, @qcode{"error"} a step that cannot be completed is
## an error (@code{odepkg:integrationFailed}) instead of a warning with the
## partial solution: a sampling loop (constrained Hamiltonian Monte Carlo)
## then cannot take a partial trajectory for a proposal.
## @code{sol.stats} reports the largest |g(q)| and |G(q) H_p| met: measured
## at the returned points, except where the last Newton iterate's values are
## already below 0.01 @qcode{"NewtonTol"} (ordinary steps) and are recorded
## instead (the last correction only reduces them); each value is raised to
## the round-off level of its evaluation, 4 eps |G| |q| (|G| |H_p|), so that
## it bounds the residuals of the returned points.
##
## Given derivatives (@qcode{"ConstraintGradFcn"}, @qcode{"ConstraintHessFcn"},
## @qcode{"HamiltonianHessFcn"}) are checked once before the first step
## against Richardson-extrapolated central differences of the functions they
## differentiate, along two random directions (four calls per direction,
## whatever the dimension); a mismatch is the error
## @code{odepkg:derivativeCheck} naming the function, the relative discrepancy
## and the accuracy of the check.  @qcode{"DerivativeCheck"}, @qcode{"off"}
## skips it.  The check is made on every call, not cached per problem: a
## function handle may close over other data, or a named function change on
## disk, between two calls with the same handles, so no key short of the
## functions' values is sound; at O(1) calls (8 of g and 1 of G for
## ConstraintGradFcn) it costs less than looking such a key up would.  Its
## calls are counted in @code{sol.stats}.  Without @qcode{"ConstraintGradFcn"} the gradient is taken by
## central differences (2d calls of g, error about 1e-10 relative);
## @code{sol.stats.maxgraderror} is their estimated largest error, and
## @code{maxhiddenresidual} then includes what |G(q) H_p| may be off by
## through it (a bound on the residual with the exact gradient).
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
## @strong{Monitoring and multipliers.}  @qcode{"HamiltonianFcn"} (and
## @qcode{"InvariantFcn"}) give @code{sol.invariants}, at the cost of their
## own calls, one per output time (@code{sol.stats.nhamiltonianevals},
## @code{ninvariantevals}).  The multipliers lambda of
## q' = H_p, p' = -H_q - G(q)' lambda at the output times
## (@code{sol.lambda}, m-by-N) and the residuals |g| and |G H_p|
## (@code{sol.residuals}) are computed when asked for, with
## @qcode{"MonitorMultipliers"}, @qcode{"on"}, with or without
## @qcode{"HamiltonianFcn"}: after the run, in one vectorised pass over the
## output points, from the index-1 condition d/dt (G H_p) = 0 (central
## differences of G H_p: 2m + 3 calls of f and 3 of G per output time,
## added to @code{sol.stats.nfevals} and @code{nconstrgradevals}).  They are
## the multipliers of the exact flow at the returned states, not RATTLE's
## per-step multipliers of the discrete scheme (which approximate them only
## to the method's accuracy); the scheme's velocity multipliers mu are not
## returned.
##
## @strong{Nonholonomic constraints} (rolling without slipping, skates,
## knife edges): velocity constraints A(q) H_p = 0 that are not derivatives
## of position constraints, given by @qcode{"NonholonomicFcn"}
## (@code{A = fcn (q)}, k-by-d) and @qcode{"NonholonomicsNb"} (k, with
## k + m < d), alone or with the holonomic @qcode{"ConstraintFcn"}.  The
## equations are q' = H_p, p' = -H_q - G(q)' lambda - A(q)' mu,
## g(q) = 0, A(q) H_p = 0, and the step is a symmetric RATTLE-type scheme
## for separable H = T(p) + V(q) (verified at t0, @code{odepkg:notSeparable}
## otherwise): with C = [G; A],
## p_1/2 = p_0 - h/2 V_q(q_0) - C(q_0)' L, q_1 = q_0 + h T_p(p_1/2),
## g(q_1) = 0 and A((q_0 + q_1)/2) T_p(p_1/2) = 0 (the velocity constraint at
## the midpoint, as in the reversible integrators of McLachlan and
## Perlmutter, J. Nonlinear Sci. 16, 2006), then
## p_1 = p_1/2 - h/2 V_q(q_1) - C(q_1)' M with C(q_1) T_p(p_1) = 0.  It is
## of order 2 and time-reversible (a step with -h undoes a step with h), and
## composes to orders 4 to 10 with @qcode{"Order"}; adaptive steps,
## @qcode{"StepControl"} @qcode{"reversible"}, events and @code{deval} work
## as for holonomic constraints.  Nonholonomic systems are not Hamiltonian:
## the flow conserves the energy (for a time-independent H) and is
## reversible, but is not symplectic, and neither is the method; its
## reversibility keeps the energy error bounded without drift over long runs
## (Modin and Verdier, Numer. Math. 145, 2020).  A(q) H_p = 0 holds at every
## step to round-off (@code{sol.stats.maxnonholresidual}); inconsistent
## initial velocities are projected with a warning (an error with
## @qcode{"InitialProjection"}, @qcode{"error"}).  With
## @qcode{"MonitorMultipliers"}, @qcode{"on"}, @code{sol.mu} (k-by-N) holds
## the multipliers mu at the output times and @code{sol.residuals.nonholonomic}
## |A H_p|.  @code{sol.stats.nnonholevals} counts the calls of A.
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
## with a warning @code{odepkg:integrationFailed} naming t and the cause
## (an error with @qcode{"OnFailure"}, @qcode{"error"}).
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
##
## Constraints on q and p: the harmonic constraint |q|^2 + |p|^2 = 1 of
## McLachlan et al. 2014, Sect. 5.4, under a linear potential:
## @example
## g = @@(y) y'*y - 1;
## flow = @@(y, s) [cos(2*s)*y(1:2) + sin(2*s)*y(3:4); -sin(2*s)*y(1:2) + cos(2*s)*y(3:4)];
## opts = odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", g, ...
##                   "ConstraintGradFcn", @@(y) 2*y', "ConstraintFlowFcn", flow, ...
##                   "ConstraintsNb", 1, "TimeStepSize", 0.1, "TimeStepNumber", 2500);
## y0 = [-0.78652612; -0.4043988; -0.3880746864163783; 0.2173391755798215];
## [t, y] = odeRATTLE (@@(t, y) [y(3:4); 0; -1], 0, y0 / norm (y0), opts);
## max (abs (sum (y.^2, 2) - 1))                   # round-off
## @end example
## @strong{Models:} @var{fcn} may be a model of @code{odepkg_model} (H and g
## written once, derivatives derived, C kernels compiled): the run then has
## no interpreter between steps, its parameters are the extra arguments,
## and in ensemble mode an extra argument with K columns gives one value per
## member, the members running on the machine's cores (@qcode{"Threads"}).
## The vertical rolling disk, q = (x, y, phi, theta), x' = R cos(phi) theta',
## y' = R sin(phi) theta': the contact point runs on a circle of radius
## R theta'/phi':
## @example
## R = 0.5;  f = @@(t, y) [y(5:8); 0; 0; 0; 0];     # unit masses, no potential
## A = @@(q) [1, 0, 0, -R*cos(q(3)); 0, 1, 0, -R*sin(q(3))];
## y0 = [0; 0; 0; 0; R*2; 0; 1; 2];                 # phi' = 1, theta' = 2
## opts = odepkgset ("NonholonomicFcn", A, "NonholonomicsNb", 2, ...
##                   "TimeStepSize", 0.01, "TimeStepNumber", 700);
## [t, y] = odeRATTLE (f, 0, y0, opts);
## max (abs (hypot (y(:,1), y(:,2) - R*2) - R*2))    # the circle, to O(h^2)
## @end example
## @strong{Ensembles:} a @var{y0} with K columns integrates K trajectories
## in one call, the user functions vectorised over the columns (column j is
## member j); with @qcode{"Explicit"}, @qcode{"yes"} (a quadratic kinetic energy) the callbacks are called once per stage for all members, each member with its own Newton iteration.  @var{y} is then N-by-n-by-K.  See @code{help odepkg},
## Ensembles.
##
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
%! ## StepControl "reversible" (Hairer and Soederlind 2005): a pendulum
%! ## released 0.05 rad from the top (from rest):
%! ## constraints at round-off, no energy drift (last tenth <= 1.5 x first)
%! o = pendulum_opts ("Explicit", "yes", "StepControl", "reversible", "RelTol", 1e-5, "AbsTol", 1e-5);
%! y0 = [sin(0.05); cos(0.05); 0; 0];
%! sol = odeRATTLE (@pendulum, [0 200], y0, o);
%! y = sol.y.';
%! assert (sol.x(end), 200);
%! assert (max (abs (sum (y(:,1:2).^2, 2) - 1)) < 1e-13);
%! assert (max (abs (sum (y(:,1:2) .* y(:,3:4), 2))) < 1e-13);
%! dE = abs (pendulum_energy (y) - pendulum_energy (y(1,:)));
%! assert (max (dE(sol.x >= 180)) <= 1.5 * max (dE(sol.x <= 20)));
%! ## the default density is sqrt(g/L) = 1 for this pendulum (it was |f|,
%! ## whose steps varied by more than 1.5): constant steps eps = 2 RelTol^(1/3)
%! assert (sol.stats.maxstep, sol.stats.minstep, -1e-9);
%! assert (sol.stats.maxstep, 2 * 1e-5^(1/3), -1e-9);
%!error <odeSHAKE is not symmetric> odeSHAKE (@pendulum, [0 1], [1; 0; 0; 0], pendulum_opts ("StepControl", "reversible"))
%!error <RATTLE over BaseMethod "symplectic_euler" is not \(use BaseMethod "midpoint" or "stormer_verlet"\)> odeRATTLE (@pendulum, [0 1], [1; 0; 0; 0], pendulum_opts ("StepControl", "reversible", "BaseMethod", "symplectic_euler"))
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
%! ## the Stats text says what was differenced and what would avoid it: with
%! ## ConstraintGradFcn and ConstraintHessFcn given, Explicit RATTLE still
%! ## differences f for T_pp (it printed "1 (1 by finite differences)"); with
%! ## HamiltonianHessFcn too, nothing is differenced
%! o = pendulum_opts ("ConstraintHessFcn", @(q) 2 * eye (2), "Explicit", "yes", ...
%!                    "TimeStepSize", 0.01, "TimeStepNumber", 20, "Stats", "on");
%! txt = evalc ("sol = odeRATTLE (@pendulum, 0, [1; 0; 0; 0], o);");
%! assert (sol.stats.nfdfcnjacobians, 1);
%! assert (! isempty (strfind (txt, "by finite differences: 1 of f (H's Hessian: give HamiltonianHessFcn)")), txt);
%! txt = evalc ("sol = odeRATTLE (@pendulum, 0, [1; 0; 0; 0], odepkgset (o, 'HamiltonianHessFcn', @(t, x) blkdiag (zeros (2), eye (2))));");
%! assert (sol.stats.nfdjacobians, 0);
%! assert (! isempty (regexp (txt, 'Number of Jacobians: +1 \(none by finite differences\)', "once")), txt);
%! assert (isempty (strfind (txt, "1 by finite differences")));
%! ## constraints differenced: named as such
%! oc = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "Stats", "on", ...
%!                 "HamiltonianHessFcn", @(t, x) blkdiag (zeros (2), eye (2)), ...
%!                 "TimeStepSize", 0.01, "TimeStepNumber", 20);
%! txt = evalc ("sol = odeRATTLE (@pendulum, 0, [1; 0; 0; 0], oc);");
%! assert (sol.stats.nfdfcnjacobians, 0);
%! assert (! isempty (strfind (txt, sprintf ("by finite differences: %d of the constraints", sol.stats.nfdjacobians))), txt);
%!test
%! ## "Explicit" claims a separable H: a non-separable one, H = (1 + q_1^2)
%! ## |p|^2 / 2 + q_2 on the circle, is refused (odeRATTLE and odeSHAKE)
%! f = @(t, x) [(1 + x(1)^2) * x(3:4); -x(1) * (x(3:4)'*x(3:4)); -1];
%! o = pendulum_opts ("Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 100);
%! for solver = {@odeRATTLE, @odeSHAKE}
%!   try
%!     solver{1} (f, 0, [1; 0; 0; 1], o);
%!     error ("not refused");
%!   catch err
%!     assert (err.identifier, "odepkg:notSeparable");
%!     assert (! isempty (strfind (err.message, '"Explicit"')));
%!   end_try_catch
%! endfor
%! sol = odeRATTLE (f, 0, [1; 0; 0; 1], odepkgset (o, "Explicit", "no"));
%! assert (sol.x(end), 1, 1e-12);
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
%!warning <constraints cannot be satisfied> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], 0, [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) [0, 0], "ConstraintsNb", 1, "Explicit", "yes", "TimeStepSize", 0.1, "TimeStepNumber", 10, "DerivativeCheck", "off"));
%!error <ConstraintGradFcn must return a real m-by-d matrix .* 4x2> [t, y] = odeRATTLE (@(t, x) [x(5:8); 0; -1; 0; -1], 0, [0; -1; 0; -2; zeros(4, 1)], odepkgset ("ConstraintFcn", @(q) [q(1:2)'*q(1:2) - 1; (q(3:4) - q(1:2))'*(q(3:4) - q(1:2)) - 1], "ConstraintGradFcn", @(q) [2*q(1:2)', 0, 0; -2*(q(3:4) - q(1:2))', 2*(q(3:4) - q(1:2))']', "ConstraintsNb", 2, "TimeStepSize", 0.1, "TimeStepNumber", 2))
%!error <TimeStepSize is too small for the time span> [t, y] = odeRATTLE (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "TimeStepSize", 1e-20))
%!error <option "ConstraintsNb" must be smaller than the dimension of q> odeRATTLE (@(t, x) x, [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q, "ConstraintsNb", 2))
%!error <Invalid call> odeRATTLE (@(t, x) x, [0 1], [1; 0])

%!function o = sphere_opts (varargin)
%!  ## the harmonic constraint |q|^2 + |p|^2 = 1 of McLachlan et al. 2014, Sect. 5.4
%!  flow = @(y, s) [cos(2*s)*y(1:2) + sin(2*s)*y(3:4); -sin(2*s)*y(1:2) + cos(2*s)*y(3:4)];
%!  o = odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", @(y) y'*y - 1, ...
%!                 "ConstraintGradFcn", @(y) 2*y', "ConstraintHessFcn", @(y) 2*eye (4), ...
%!                 "ConstraintFlowFcn", flow, "ConstraintsNb", 1, varargin{:});
%!endfunction
%!function y0 = table1_za ()
%!  ## McLachlan et al. 2014, Table 1, za: on {g, H} = 0 but |za|^2 = 0.98; projected by the solver
%!  y0 = [-0.7865261200000000; -0.4043988000000000; -0.3880746864163783; 0.2173391755798215];
%!endfunction

%!test
%! ## g(q, p): |g| and |{g, H}| at round-off over 2500 steps (McLachlan et al. 2014, Sect. 5.4.2),
%! ## energy without drift; the integrated fibre flow gives the same trajectory
%! f = @(t, y) [y(3:4); 0; -1];                 # H = |p|^2/2 + q_2
%! o = sphere_opts ("TimeStepSize", 0.1, "TimeStepNumber", 2500);
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! sol = odeRATTLE (f, 0, table1_za (), o);
%! y = sol.y';
%! assert (max (abs (sum (y.^2, 2) - 1)) <= 1e-13);
%! hid = max (abs (2 * sum (y .* [y(:,3:4), zeros(rows (y), 1), -ones(rows (y), 1)], 2)));
%! assert (hid <= 1e-13);
%! ## the recorded residuals bound the measured ones (Newton's contraction bound)
%! assert (sol.stats.maxhiddenresidual >= hid && sol.stats.maxhiddenresidual <= 1e-11);
%! assert (sol.stats.nflowevals > 0);
%! E = sum (y(:,3:4).^2, 2) / 2 + y(:,2);
%! dE = abs (E - E(1));
%! assert (max (dE) < 1e-2);
%! assert (max (dE(end-250:end)) < 1.5 * max (dE(1:250)));
%! oi = o;  oi.ConstraintFlowFcn = [];
%! soli = odeRATTLE (f, 0, table1_za (), oi);
%! assert (soli.stats.nflowevals, 0);
%! assert (soli.y, sol.y, 1e-8);         # per step 1e-14; 2500 steps amplify it
%!test
%! ## holonomic g written as g(y): geometric RATTLE over Störmer–Verlet is the
%! ## classical RATTLE (McLachlan et al. 2014, Sect. 5.1.3), step by step
%! f = @(t, x) [x(3:4); 0; -1];
%! y0 = [sin(1); -cos(1); 0.3*cos(1); 0.3*sin(1)];
%! o = odepkgset ("TimeStepSize", 0.02, "TimeStepNumber", 300, "ConstraintsNb", 1);
%! [~, yc] = odeRATTLE (f, 0, y0, odepkgset (o, "ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q'));
%! [~, yg] = odeRATTLE (f, 0, y0, odepkgset (o, "ConstraintVariables", "qp", "BaseMethod", "stormer_verlet", ...
%!                                           "ConstraintFcn", @(y) y(1:2)'*y(1:2) - 1, ...
%!                                           "ConstraintGradFcn", @(y) [2*y(1:2)', 0, 0]));
%! assert (yg, yc, 1e-12);
%!test
%! ## order 2 over the midpoint rule, order 1 over symplectic Euler (fitted)
%! f = @(t, y) [y(3:4); 0; -1];
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! [~, y1] = odeRATTLE (f, 0, table1_za (), sphere_opts ("TimeStepSize", 0.1, "TimeStepNumber", 1));
%! y0 = y1(1,:)';                               # za projected onto M_H
%! h = [0.02 0.01 0.005 0.0025];
%! for base = {"midpoint", "symplectic_euler"}
%!   o = sphere_opts ("BaseMethod", base{1});
%!   [~, yr] = odeRATTLE (f, [0 1], y0, odepkgset (o, "TimeStepSize", 1e-4));
%!   err = zeros (size (h));
%!   for i = 1:numel (h)
%!     [~, y] = odeRATTLE (f, [0 1], y0, odepkgset (o, "TimeStepSize", h(i)));
%!     err(i) = norm (y(end,:) - yr(end,:));
%!   endfor
%!   p = polyfit (log (h), log (err), 1)(1);
%!   assert (p, 1 + strcmp (base{1}, "midpoint"), 0.2);
%! endfor
%!test
%! ## adaptive steps with g(q, p): constraints at round-off at every output
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! sol = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 20], table1_za (), sphere_opts ("RelTol", 1e-8, "AbsTol", 1e-8));
%! assert (sol.x(end), 20);
%! assert (max (abs (sum (sol.y.^2, 1) - 1)) <= 1e-13);
%! y = sol.y';
%! assert (max (abs (2 * sum (y .* [y(:,3:4), zeros(rows (y), 1), -ones(rows (y), 1)], 2))) <= 1e-13);
%! assert (sol.stats.maxhiddenresidual <= 1e-11);
%!test
%! ## StepControl "reversible" with g(q, p) (geometric RATTLE over a
%! ## symmetric base, McLachlan et al. 2014, Prop. 4.9): S^3 with the
%! ## potential q_2 + q_1^4/4; |g| and |{g, H}| at round-off, energy without
%! ## drift, for both symmetric bases and for the default density and a
%! ## user's, rho = 1 + q_1^2 (G = d log rho/dt = 2 q_1 p_1 / (1 + q_1^2))
%! f = @(t, y) [y(3:4); -y(1)^3; -1];
%! hidden = @(y) 2 * sum (y .* [y(:,3:4), -y(:,1).^3, -ones(rows (y), 1)], 2);
%! G = @(t, y) 2 * y(1) * y(3) / (1 + y(1)^2);
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! [~, y1] = odeRATTLE (f, 0, table1_za (), sphere_opts ("TimeStepSize", 1e-3, "TimeStepNumber", 1));
%! y0 = y1(1,:)';                               # za projected onto M_H
%! for base = {"midpoint", "stormer_verlet"}
%!   for user = [false true]
%!     o = sphere_opts ("BaseMethod", base{1}, "StepControl", "reversible", "RelTol", 1e-6, "AbsTol", 1e-6, ...
%!                      "NewtonTol", 1e-14, "HamiltonianHessFcn", @(t, y) diag ([3*y(1)^2, 0, 1, 1]));
%!     if (user)
%!       o = odepkgset (o, "StepDensityFcn", G);
%!     endif
%!     sol = odeRATTLE (f, [0 60], y0, o);
%!     y = sol.y';
%!     assert (sol.x(end), 60);
%!     assert (max (abs (sum (y.^2, 2) - 1)) <= 1e-14);
%!     assert (max (abs (hidden (y))) <= 5e-12);
%!     E = sum (y(:,3:4).^2, 2) / 2 + y(:,2) + y(:,1).^4 / 4;
%!     dE = abs (E - E(1));
%!     assert (max (dE(sol.x >= 54)) <= 1.5 * max (dE(sol.x <= 6)));
%!     if (user)
%!       assert (sol.stats.maxstep > 1.15 * sol.stats.minstep);   # 1.24 (measured)
%!     endif
%!   endfor
%! endfor
%!test
%! ## reversible with g(q, p): output times and events are side steps from
%! ## y_n that leave the step sequence (and its Newton warm start) alone: the
%! ## same end state as the run with every step output
%! f = @(t, y) [y(3:4); -y(1)^3; -1];
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! [~, y1] = odeRATTLE (f, 0, table1_za (), sphere_opts ("TimeStepSize", 1e-3, "TimeStepNumber", 1));
%! y0 = y1(1,:)';
%! o = sphere_opts ("StepControl", "reversible", "InitialStep", 0.02, ...
%!                  "HamiltonianHessFcn", @(t, y) diag ([3*y(1)^2, 0, 1, 1]));
%! [t1, y1] = odeRATTLE (f, [0 20], y0, o);
%! [t2, y2] = odeRATTLE (f, [0 1 2.5 13 20], y0, o);
%! assert (t2, [0; 1; 2.5; 13; 20]);
%! assert (y2(end,:), y1(end,:));          # bitwise (measured)
%! [t3, y3, te, ye] = odeRATTLE (f, [0 20], y0, odepkgset (o, "Events", @(t, y) deal (y(1), false, 0)));
%! assert (numel (te) >= 3);
%! assert (max (abs (ye(:,1))) < 1e-12);
%! assert ([t3, y3], [t1, y1]);            # every step bitwise that of the run without events
%!error <not coisotropic: \{g_1, g_2\} = 1> [t, y] = odeRATTLE (@(t, y) [y(4:6); 0; 0; -1], [0 1], [0; 0; 1; 0; 0; 0], odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", @(y) [y(1); y(4)], "ConstraintsNb", 2, "TimeStepSize", 0.1))
%!error <degenerate along the constraint fibres> [t, y] = odeRATTLE (@(t, y) [y(3); y(1); -y(4); 0], [0 1], [0; 0; 1; 0], odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", @(y) y(2), "ConstraintsNb", 1, "TimeStepSize", 0.1))
%!error <ConstraintFlowFcn is not a flow: fcn \(y0, 0\) differs> [t, y] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 1], [1; 0; 0; 0], sphere_opts ("ConstraintFlowFcn", @(y, s) y + 1, "TimeStepSize", 0.1))
%!error <not the flow of X_g> [t, y] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 1], [1; 0; 0; 0], sphere_opts ("ConstraintFlowFcn", @(y, s) [cos(s)*y(1:2) + sin(s)*y(3:4); -sin(s)*y(1:2) + cos(s)*y(3:4)], "TimeStepSize", 0.1))
%!error <ConstraintFlowFcn must return a real column vector> [t, y] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 1], [1; 0; 0; 0], sphere_opts ("ConstraintFlowFcn", @(y, s) [1; 2], "TimeStepSize", 0.1))
%!error <option "ConstraintVariables" must be one of "q", "qp"> [t, y] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 1], [1; 0; 0; 0], sphere_opts ("ConstraintVariables", "pq"))
%!error <option "BaseMethod" must be> [t, y] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 1], [1; 0; 0; 0], sphere_opts ("BaseMethod", "gauss"))
%!error <ConstraintFlowFcn" must be given with ConstraintVariables "qp" only> [t, y] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 1], [1; 0; 0; 0], sphere_opts ("ConstraintVariables", "q"))
%!error <are for odeRATTLE and odeSHAKE> [t, y] = odeSV (@(t, y) [y(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("BaseMethod", "midpoint"))

%!test
%! ## Events under RATTLE: the Cartesian pendulum released at 1 rad crosses
%! ## the vertical (q1 = 0) at the quarter period K(sin^2(1/2)) (g = L = 1).
%! ## The event state is a RATTLE state: |q| = 1 and q.p = 0 to round-off;
%! ## te within the method's O(h^2) error (ratio 4 when h halves).
%! f = @(t, x) [x(3:4); 0; -1];
%! o = odepkgset ("ConstraintFcn", @(q) (q'*q - 1) / 2, "ConstraintGradFcn", @(q) q', ...
%!                "ConstraintsNb", 1, "Events", @(t, x) deal (x(1), true, -1), "TimeStepSize", 0.02);
%! y0 = [sin(1); -cos(1); 0; 0];
%! exact = ellipke (sin (0.5)^2);
%! [t, y, te, ye] = odeRATTLE (f, [0 5], y0, o);
%! [~, ~, te2] = odeRATTLE (f, [0 5], y0, odepkgset (o, "TimeStepSize", 0.01));
%! assert (t(end), te);
%! assert (abs (ye(1)) < 1e-12);
%! assert (abs (norm (ye(1:2)) - 1) < 1e-14);
%! assert (abs (ye(1:2) * ye(3:4)') < 1e-14);
%! assert (abs (te - exact) < 1e-3);
%! assert (abs (te - exact) / abs (te2 - exact), 4, 0.3);

%!test
%! ## deval on a RATTLE solution: exact at the steps; at mid-steps the
%! ## interpolant, projected, satisfies |q| = 1 and q.p = 0 to round-off and
%! ## is within the method's error of a fine-step solution; Refine uses it.
%! f = @(t, x) [x(3:4); 0; -1];
%! o = odepkgset ("ConstraintFcn", @(q) (q'*q - 1) / 2, "ConstraintGradFcn", @(q) q', ...
%!                "ConstraintsNb", 1, "TimeStepSize", 0.05, "TimeStepNumber", 100);
%! y0 = [sin(1); -cos(1); 0; 0];
%! sol = odeRATTLE (f, 0, y0, o);
%! assert (__odepkg_deval__ (sol, sol.x), sol.y, 1e-14);
%! tm = (sol.x(1:end-1) + sol.x(2:end)) / 2;
%! y = __odepkg_deval__ (sol, tm);
%! assert (max (abs (sum (y(1:2,:) .^ 2) - 1)) < 1e-14);
%! assert (max (abs (sum (y(1:2,:) .* y(3:4,:)))) < 1e-14);
%! fine = odeRATTLE (f, 0, y0, odepkgset (o, "TimeStepSize", 0.0025, "TimeStepNumber", 2000));
%! assert (max (max (abs (y - fine.y(:, 11:20:end)))) < 1e-2);
%! [t, yr] = odeRATTLE (f, 0, y0, odepkgset (o, "Refine", 2));
%! assert (numel (t), 201);
%! assert (max (abs (sum (yr(:,1:2) .^ 2, 2) - 1)) < 1e-14);

%!test
%! ## an ensemble of pendulums of lengths L(j) (g(q) = |q|^2 - L(j)^2 for the
%! ## member in column j): every member equals its single run, keeps |g| and
%! ## |G H_p| at round-off, and its energy has no drift over 4000 steps
%! L = [0.5, 1, 2, 3];
%! th = [0.3, 1, 2, 2.8];
%! Y0 = [L .* sin(th); -L .* cos(th); zeros(2, 4)];
%! f = @(t, y) [y(3:4,:); zeros(1, columns (y)); -ones(1, columns (y))];
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintsNb", 1, ...
%!                "ConstraintFcn", @(Q) sum (Q.^2, 1) - L.^2, ...
%!                "ConstraintGradFcn", @(Q) reshape (2 * Q, 1, 2, []));
%! sol = odeRATTLE (f, [0 40], Y0, o);
%! assert (sol.status, zeros (1, 4));
%! for k = 1:4
%!   y = sol.y(:, :, k).';
%!   assert (max (abs (sum (y(:, 1:2).^2, 2) - L(k)^2)) < 1e-14 * L(k)^2 * 4);
%!   assert (max (abs (sum (y(:, 1:2) .* y(:, 3:4), 2))) < 1e-13 * L(k));
%!   H = sum (y(:, 3:4).^2, 2) / 2 + y(:, 2);
%!   dH = abs (H - H(1));
%!   n5 = floor (numel (H) / 5);
%!   assert (max (dH(end-n5:end)) < 1.5 * max (dH(1:n5)) + 1e-12);
%!   os = odepkgset (o, "ConstraintFcn", @(q) q' * q - L(k)^2, "ConstraintGradFcn", @(q) 2 * q');
%!   [~, ys] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 2], Y0(:, k), os);
%!   assert (y(1:201, :), ys, 1e-11);
%! endfor
%! ## one call of f and G per step for all members, g a few times
%! st = sol.stats;
%! assert (st.nconstrgradevals <= 4000 + 2);
%! assert (st.nfevals <= 4000 + 8);
%! assert (st.nconstrevals < 4 * 4000);
%!test
%! ## events per member: a pendulum family released at rest from angles
%! ## th(j), terminal at the first pass through the bottom (q1 = 0, down)
%! th = [0.2, 0.8, 1.6];
%! Y0 = [sin(th); -cos(th); zeros(2, 3)];
%! f = @(t, y) [y(3:4,:); zeros(1, columns (y)); -ones(1, columns (y))];
%! ev = @(t, y) deal (y(1,:), 1, -1);
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintsNb", 1, ...
%!                "ConstraintFcn", @(Q) sum (Q.^2, 1) - 1, ...
%!                "ConstraintGradFcn", @(Q) reshape (2 * Q, 1, 2, []), "Events", ev);
%! [t, y, te, ye] = odeRATTLE (f, [0 5], Y0, o);
%! for k = 1:3
%!   os = odepkgset (o, "ConstraintFcn", @(q) q' * q - 1, "ConstraintGradFcn", @(q) 2 * q');
%!   [~, ~, te1, ye1] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 5], Y0(:, k), os);
%!   assert (te{k}, te1, 1e-10);
%!   assert (ye{k}, ye1, 1e-10);
%!   assert (abs (ye{k}(1)) < 1e-12);
%! endfor
%! ## larger amplitude, longer quarter period
%! assert (te{1} < te{2} && te{2} < te{3});
%!error <violate the constraints> odeRATTLE (@(t, y) [y(3:4,:); 0*y(1:2,:)], [0 1], [1 0.9; 0 0; 0 0; 1 1], odepkgset ("TimeStepSize", 0.1, "Explicit", "yes", "ConstraintsNb", 1, "ConstraintFcn", @(Q) sum (Q.^2, 1) - 1, "ConstraintGradFcn", @(Q) reshape (2 * Q, 1, 2, [])))
%!error <ConstraintGradFcn disagrees> odeRATTLE (@(t, y) [y(3:4,:); 0*y(1:2,:)], [0 1], [1 0; 0 1; 0 0; 0 0], odepkgset ("TimeStepSize", 0.1, "Explicit", "yes", "ConstraintsNb", 1, "ConstraintFcn", @(Q) sum (Q.^2, 1) - 1, "ConstraintGradFcn", @(Q) reshape (3 * Q, 1, 2, [])))

%!demo
%! ## Pendulum in Cartesian coordinates (g(q) = |q|^2 - 1, h = 0.01, t up to
%! ## 50): the energy error is bounded (6e-5) and periodic, and both
%! ## constraints, on positions g(q) and on velocities G(q) H_p (the hidden
%! ## one), hold to round-off at every step.
%! f = @(t, x) [x(3:4); 0; -1];
%! opts = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
%!                   "ConstraintsNb", 1, "Explicit", "yes", "TimeStepSize", 0.01, ...
%!                   "TimeStepNumber", 5000);
%! [t, y] = odeRATTLE (f, 0, [sin(2); -cos(2); 0; 0], opts);
%! E = sum (y(:,3:4).^2, 2) / 2 + y(:,2);
%! subplot (2, 1, 1);  plot (t, (E - E(1)) / 1e-5);
%! ylabel ("(H - H_0) / 10^{-5}");  title ("energy error, RATTLE, h = 0.01");
%! subplot (2, 1, 2);
%! semilogy (t, abs (sum (y(:,1:2).^2, 2) - 1) + eps / 100, t, abs (2 * sum (y(:,1:2) .* y(:,3:4), 2)) + eps / 100);
%! axis ([0 50 1e-17 1]);  set (gca, "ytick", 10.^(-15:5:0));
%! xlabel ("t");  ylabel ("residual");
%! title ("constraints: |g(q)| (blue) and |G(q) H_p| (red), at round-off");

%!demo
%! ## Geometric SHAKE and RATTLE for a constraint on positions AND momenta:
%! ## g(q, p) = |q|^2 + |p|^2 - 1 (M = S^3, its fibres the circles of the Hopf
%! ## fibration), H = |p|^2/2 - gvec.q with gvec = (0, -1), implicit midpoint
%! ## rule as base method, h = 0.1 (McLachlan, Modin, Verdier, Wilkins,
%! ## Sect. 5.4.2, Fig. 4 and 5).  The initial data of their Table 1 have
%! ## |z|^2 = 0.98: the solvers project them onto M and along the fibre onto
%! ## {g, H} = 0 (the warning is silenced here).
%! f = @(t, y) [y(3:4); 0; -1];
%! gH = @(y) 2 * (sum (y(:,1:2) .* y(:,3:4), 2) - y(:,4));   # {g, H} = grad g . f
%! energy = @(y) sum (y(:,3:4).^2, 2) / 2 + y(:,2);
%! opts = odepkgset ("ConstraintVariables", "qp", "ConstraintsNb", 1, ...
%!                   "ConstraintFcn", @(y) y' * y - 1, "ConstraintGradFcn", @(y) 2 * y', ...
%!                   "ConstraintFlowFcn", @(y, s) [cos(2*s) * y(1:2) + sin(2*s) * y(3:4); ...
%!                                                -sin(2*s) * y(1:2) + cos(2*s) * y(3:4)], ...
%!                   "BaseMethod", "midpoint", "TimeStepSize", 0.1, "TimeStepNumber", 2500);
%! Z = [-0.7865261200000000, -0.4963624948824013,  0.3477491188213400;   # za, zb, zc:
%!      -0.4043988000000000, -0.7319740436366664, -0.8131619010029159;   # [q0; q1; p0; p1]
%!      -0.3880746864163783, -0.4275775933953260, -0.4368285559113795;
%!       0.2173391755798215,  0.1225384882604160, -0.0837800227934176];
%! ws = warning ("off", "odepkg:inconsistentInitialData");
%! ## Hopf map (z0, z1) -> (2 z0 conj (z1), |z0|^2 - |z1|^2), z_k = q_k + i p_k,
%! ## then the stereographic projection (zeta, rho) -> zeta / (sqrt (|zeta|^2 + rho^2) + rho):
%! ## from the pole rho = -1.  (The paper's caption prints "- rho", the other pole;
%! ## with it [z_a] passes through infinity, and the picture of its Fig. 4, [z_a]
%! ## innermost, is this one's inversion w -> 1/conj (w).)
%! axes ("position", [0.06 0.13 0.34 0.75]);  hold on;
%! for k = 1:3
%!   [t, y] = odeRATTLE (f, 0, Z(:,k), opts);
%!   if (k == 1)
%!     yr = y;
%!   endif
%!   z0 = y(:,1) + 1i * y(:,3);  z1 = y(:,2) + 1i * y(:,4);
%!   zeta = 2 * z0 .* conj (z1);  rho = abs (z0).^2 - abs (z1).^2;
%!   w = zeta ./ (sqrt (abs (zeta).^2 + rho.^2) + rho);
%!   plot (real (w), imag (w), ".", "markersize", 2);
%! endfor
%! hold off;  axis ("equal");  xlabel ("Re w");  ylabel ("Im w");
%! title ("RATTLE orbits on [M] = CP^1");
%! [~, ys] = odeSHAKE (f, 0, Z(:,1), opts);
%! warning (ws);
%! blue = [0 0.447 0.741];  red = [0.85 0.325 0.098];
%! axes ("position", [0.55 0.58 0.42 0.32]);
%! plot (t, energy (ys) - energy (ys(1,:)), "color", blue, t, energy (yr) - energy (yr(1,:)), "color", red);
%! ylabel ("H - H_0");  title ("energy error: SHAKE (blue), RATTLE (red)");
%! axes ("position", [0.55 0.13 0.42 0.32]);
%! semilogy (t, abs (gH (ys)) + eps / 100, "color", blue, t, abs (gH (yr)) + eps / 100, "color", red);
%! axis ([0 t(end) 1e-17 1]);  set (gca, "ytick", 10.^(-15:5:0));
%! xlabel ("t");  ylabel ("|{g, H}|", "interpreter", "none");
%! title ("|{g, H}|: SHAKE O(h), RATTLE round-off", "interpreter", "none");

%!demo
%! ## Work-precision: the Cartesian pendulum (m = L = g = 1, theta0 = 1.2,
%! ## omega0 = 0.3) to t = 10 by odeRATTLE ("Explicit") of order 2 and of
%! ## orders 4, 6, 8 ("Order": McLachlan4, KahanLi6, KahanLi8) at several
%! ## fixed steps, against ode45 on the angle ODE theta'' = -sin theta at
%! ## tolerances 1e-4 ... 1e-12.  Error: max norm of [q; p] at t = 10 against
%! ## ode45 at 1e-13; CPU time: the least of 2 runs.
%! th0 = 1.2;  w0 = 0.3;  T = 10;
%! angle = @(t, a) [a(2); -sin(a(1))];
%! cart = @(a) [sin(a(1)); -cos(a(1)); a(2)*cos(a(1)); a(2)*sin(a(1))];
%! ref = ode45 (angle, [0 T], [th0; w0], odeset ("RelTol", 1e-13, "AbsTol", 1e-13));
%! ref = cart (ref.y(:,end));
%! pend = @(t, x) [x(3:4); 0; -1];
%! base = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
%!                   "ConstraintsNb", 1, "Explicit", "yes");
%! runs = {};                          # rows {label, run returning the error}
%! for p = [2 4 6 8]
%!   Ns = {[250 500 1000 2000 4000], [40 80 160 320 640], [20 40 80 160 320], [12 25 50 100 200]}{p/2};
%!   for N = Ns
%!     o = odepkgset (base, "TimeStepSize", T / N, "TimeStepNumber", N, "Order", p);
%!     runs(end+1,:) = {sprintf("odeRATTLE order %d", p), ...
%!                      @() norm (getfield (odeRATTLE (pend, 0, cart ([th0; w0]), o), "y")(:,end) - ref, Inf)};
%!   endfor
%! endfor
%! for tol = 10 .^ (-4:-2:-12)
%!   o = odeset ("RelTol", tol, "AbsTol", tol);
%!   runs(end+1,:) = {"ode45, angle ODE", ...
%!                    @() norm (cart (getfield (ode45 (angle, [0 T], [th0; w0], o), "y")(:,end)) - ref, Inf)};
%! endfor
%! ct = et = zeros (rows (runs), 1);
%! for k = 1:rows (runs)
%!   ct(k) = Inf;
%!   for r = 1:2                        # the least CPU time of 2 runs
%!     t0 = cputime ();  et(k) = runs{k,2} ();  ct(k) = min (ct(k), cputime () - t0);
%!   endfor
%! endfor
%! names = {"odeRATTLE order 2", "odeRATTLE order 4", "odeRATTLE order 6", ...
%!          "odeRATTLE order 8", "ode45, angle ODE"};
%! styles = {"o-", "o-", "o-", "o-", "ks--"};
%! clf;
%! for i = 1:numel (names)              # each curve labelled at its costliest run
%!   k = find (strcmp (runs(:,1), names{i}));
%!   hl = loglog (ct(k), et(k), styles{i}, "linewidth", 1.5);  hold on;
%!   text (1.15 * ct(k(end)), et(k(end)), names{i}, "color", get (hl, "color"));
%! endfor
%! hold off;  grid on;  xlim ([5e-3 1]);
%! xlabel ("CPU time [s]");  ylabel ("error at t = 10");
%! title ("Cartesian pendulum to t = 10: error against CPU time");

%!demo
%! ## A chain of 1000 unit links (unit masses, pinned at the origin, unit
%! ## gravity) released straight and horizontal at rest, t up to 30, h = 0.01:
%! ## odeRATTLE ("Explicit") with a sparse ConstraintGradFcn, built by
%! ## sparse (i, j, v, m, d), q = [x_1; y_1; x_2; y_2; ...].  Left: the chain
%! ## at t = 0, 10, 20, 30 (its far part falls freely, y = -t^2/2, until the
%! ## pin's pull reaches it); right: max |g(q)| and |G(q) H_p| over the links,
%! ## at round-off (|q| ~ 10^3: 10^3 eps), and the energy error (H_0 = 0),
%! ## which grows as h^2 while the motion near the pin speeds up, -0.02 at
%! ## t = 30 against the -3.3e5 of potential energy turned into motion.
%! n = 1000;  h = 0.01;  tout = 0:0.1:30;
%! D = @(q) diff ([zeros(2, 1), reshape(q, 2, [])], 1, 2);   # links x_k - x_(k-1)
%! g = @(q) (sum (D (q) .^ 2, 1) - 1).';
%! I = [kron(1:n, [1 1]), kron(2:n, [1 1])];                  # the pattern of G:
%! J = [1:2*n, 1:2*n-2];                                      # row k, columns 2k-3 ... 2k
%! Gv = @(L) 2 * [L(:); -reshape(L(:,2:end), [], 1)];
%! G = @(q) sparse (I, J, Gv (D (q)), n, 2*n);
%! f = @(t, y) [y(2*n+1:end); repmat([0; -1], n, 1)];         # H = |p|^2/2 + sum y_k
%! y0 = [reshape([1:n; zeros(1, n)], [], 1); zeros(2*n, 1)];
%! opts = odepkgset ("ConstraintFcn", g, "ConstraintGradFcn", G, "ConstraintsNb", n, ...
%!                   "Explicit", "yes", "TimeStepSize", h);
%! sol = odeRATTLE (f, tout, y0, opts);
%! Y = sol.y;  nt = columns (Y);
%! res = zeros (nt, 2);
%! for k = 1:nt
%!   q = Y(1:2*n,k);
%!   res(k,:) = [norm(g (q), Inf), norm(G (q) * Y(2*n+1:end,k), Inf)];
%! endfor
%! E = sum (Y(2*n+1:end,:) .^ 2, 1) / 2 + sum (Y(2:2:2*n,:), 1);
%! clf;
%! axes ("position", [0.09 0.13 0.40 0.75]);  hold on;
%! for ts = [0 10 20 30]
%!   k = find (abs (sol.x - ts) < h / 2, 1);
%!   plot ([0, Y(1:2:2*n,k).'], [0, Y(2:2:2*n,k).'], "linewidth", 1.5);
%!   text (Y(2*n-1,k) + 20, Y(2*n,k) + 25 * (ts == 0) - 25 * (ts == 10), sprintf ("t = %g", ts));
%! endfor
%! hold off;  axis ("equal");  axis ([-100 1250 -900 100]);  set (gca, "xtick", 0:250:1000);
%! xlabel ("x");  ylabel ("y");
%! title (sprintf ("%d-link chain, %d steps of h = %g", n, sol.stats.nsteps, h));
%! axes ("position", [0.64 0.58 0.34 0.32]);
%! semilogy (sol.x, res(:,1) + eps / 100, sol.x, res(:,2) + eps / 100);
%! axis ([0 30 1e-17 1]);  set (gca, "ytick", 10.^(-15:5:0));
%! ylabel ("residual");  title ("max |g| (blue), max |G H_p| (red)");
%! axes ("position", [0.64 0.13 0.34 0.32]);
%! plot (sol.x, E - E(1));
%! xlabel ("t");  ylabel ("H - H_0");
%! title ("energy error");
%! text (0.03, 0.2, sprintf ("V(t = 30) = %.1e", sum (Y(2:2:2*n,end))), "units", "normalized");

%!demo
%! ## The vertical rolling disk (nonholonomic): q = (x, y, phi, theta), radius
%! ## R = 0.7, masses m = 2 (x, y), I = 0.4 (phi), J = 0.9 (theta), rolling
%! ## without slipping, x' = R cos(phi) theta', y' = R sin(phi) theta'
%! ## ("NonholonomicFcn").  Exact motion: phi' = 1.3 and theta' = 2.1 constant,
%! ## the contact point on a circle of radius R theta'/phi' (Bloch,
%! ## Nonholonomic Mechanics and Control).  odeRATTLE, h = 0.05, to t = 200,
%! ## against ode45 (RelTol 1e-6) on the index-reduced ODE, the multipliers
%! ## eliminated, mu = (A M^-1 A^T)^-1 (dA/dt) v.  Left: the contact path
%! ## over the last turn, on the exact circle.  Right: odeRATTLE keeps |A v| at
%! ## round-off where ode45's grows (2e-7 at t = 200); the energy error of
%! ## both grows linearly, odeRATTLE's by round-off (1e-16 of E per step,
%! ## 2e-12 at t = 200), ode45's by truncation (7e-7).
%! R = 0.7;  Mq = [2; 2; 0.4; 0.9];  wp = 1.3;  wt = 2.1;  T = 200;  h = 0.05;
%! A = @(q) [1, 0, 0, -R*cos(q(3)); 0, 1, 0, -R*sin(q(3))];
%! f = @(t, y) [y(5:8) ./ Mq; 0; 0; 0; 0];             # H = p' M^-1 p / 2
%! v0 = [R*wt; 0; wp; wt];
%! opts = odepkgset ("NonholonomicFcn", A, "NonholonomicsNb", 2, "TimeStepSize", h);
%! sol = odeRATTLE (f, [0 T], [0; 0; 0; 0; Mq .* v0], opts);
%! Adot = @(q, v) [0, 0, 0, R*sin(q(3))*v(3); 0, 0, 0, -R*cos(q(3))*v(3)];
%! acc = @(q, v) -(A (q)' * ((A (q) * (A (q)' ./ Mq)) \ (Adot (q, v) * v))) ./ Mq;
%! s45 = ode45 (@(t, z) [z(5:8); acc(z(1:4), z(5:8))], [0 T], [0; 0; 0; 0; v0],
%!              odeset ("RelTol", 1e-6, "AbsTol", 1e-8));
%! resid = @(q, v) hypot (v(1,:) - R*cos(q(3,:)).*v(4,:), v(2,:) - R*sin(q(3,:)).*v(4,:));
%! energy = @(v) sum (Mq .* v.^2, 1) / 2;
%! v = sol.y(5:8,:) ./ Mq;
%! E0 = energy (v0);
%! rho = R * wt / wp;  phi = linspace (0, 2*pi, 200);
%! blue = [0 0.447 0.741];  red = [0.85 0.325 0.098];
%! clf;
%! axes ("position", [0.10 0.13 0.34 0.75]);
%! last = find (sol.x >= T - 2*pi/wp);                 # the last turn, every 2nd step
%! plot (rho * sin (phi), rho * (1 - cos (phi)), "k-", "linewidth", 1.5, ...
%!       sol.y(1,last(1:2:end)), sol.y(2,last(1:2:end)), "o", "color", red, "markersize", 4);
%! axis ("equal");  axis ([-1.5 1.5 -0.8 2.5]);
%! xlabel ("x");  ylabel ("y");
%! title (sprintf ("contact path, last turn: t = %.1f to %g", T - 2*pi/wp, T));
%! text (0.04, 0.12, "exact circle (black), odeRATTLE (red)", "units", "normalized");
%! text (0.04, 0.05, sprintf ("%d steps of h = %g; ode45: %d", sol.stats.nsteps, h,
%!                            numel (s45.x) - 1), "units", "normalized");
%! axes ("position", [0.59 0.58 0.38 0.32]);
%! semilogy (sol.x, resid (sol.y(1:4,:), v) + eps / 100, "color", red,
%!           s45.x, resid (s45.y(1:4,:), s45.y(5:8,:)) + eps / 100, "color", blue);
%! axis ([0 T 1e-17 1e-3]);  set (gca, "ytick", 10.^(-15:5:-5));
%! ylabel ("|A(q) v|");
%! title ("|A v|: odeRATTLE (red), ode45 (blue)");
%! axes ("position", [0.59 0.13 0.38 0.32]);
%! semilogy (sol.x, abs (energy (v) - E0) + eps / 100, "color", red,
%!           s45.x, abs (energy (s45.y(5:8,:)) - E0) + eps / 100, "color", blue);
%! axis ([0 T 1e-17 1e-3]);  set (gca, "ytick", 10.^(-15:5:-5));
%! xlabel ("t");  ylabel ("|E - E_0|");
%! title ("energy error");

%!test
%! ## Monitoring with constraints: residuals |g| and |G H_p| and the index-1
%! ## multipliers at every output time.  Pendulum, g = |q|^2 - 1, p' = -e2 -
%! ## 2 q lambda: lambda = (|p|^2 - q2) / (2 |q|^2) on the state itself.
%! f = @(t, x) [x(3:4); 0; -1];
%! lam = @(y) (sum (y(3:4, :) .^ 2) - y(2, :)) ./ (2 * sum (y(1:2, :) .^ 2));
%! o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1,
%!                "Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 500,
%!                "HamiltonianFcn", @(t, x) (x(3:4)'*x(3:4)) / 2 + x(2), "MonitorMultipliers", "on");
%! s = odeRATTLE (f, 0, [1; 0; 0; 0], o);
%! assert (s.lambda, lam (s.y), 1e-9);
%! assert (s.lambda(1), 0, 1e-9);                       # consistent at t0
%! assert (max (s.residuals.constraint) < 1e-14 && max (s.residuals.hidden) < 1e-14);
%! H = sum (s.y(3:4, :) .^ 2) / 2 + s.y(2, :);
%! assert (s.invariants.deviation, max (abs (H - H(1))), 1e-15);
%! ## the same with g(q, p) written on phase space ("qp", base Stormer-Verlet)
%! oq = odepkgset (o, "Explicit", "no", "ConstraintVariables", "qp", "BaseMethod", "stormer_verlet",
%!                 "ConstraintFcn", @(y) y(1:2)'*y(1:2) - 1, "ConstraintGradFcn", @(y) [2*y(1:2)', 0, 0]);
%! sq = odeRATTLE (f, 0, [1; 0; 0; 0], oq);
%! assert (sq.lambda, lam (sq.y), 1e-9);
%! assert (max (sq.residuals.hidden) < 1e-12);
%! ## SHAKE leaves the hidden constraint O(h): the monitor sees it
%! ss = odeSHAKE (f, 0, [1; 0; 0; 0], o);
%! assert (max (ss.residuals.constraint) < 1e-14);
%! assert (max (ss.residuals.hidden) > 1e-3 && max (ss.residuals.hidden) < 0.1);
%! ## no ConstraintGradFcn: G by differences, lambda to ~1e-6
%! sd = odeRATTLE (f, 0, [1; 0; 0; 0], odepkgset (o, "ConstraintGradFcn", []));
%! assert (sd.lambda, lam (sd.y), 1e-5);

%!function r = counted (name, varargin)
%!  ## pendulum functions that count their calls; counted (name) returns the
%!  ## count and resets it
%!  persistent n = struct ("H", 0, "I", 0, "f", 0, "G", 0, "s", 0, "g", 0);
%!  if (nargin == 1)
%!    r = n.(name);
%!    n.(name) = 0;
%!    return;
%!  endif
%!  n.(name) += 1;
%!  switch (name)
%!    case "H"
%!      x = varargin{2};  r = (x(3:4)'*x(3:4)) / 2 + x(2);
%!    case "I"
%!      x = varargin{2};  r = [x(1:2)'*x(1:2); x(1)];
%!    case "f"
%!      x = varargin{2};  r = [x(3:4); 0; -1];
%!    case "G"
%!      r = 2 * varargin{1}';
%!    case "g"
%!      r = varargin{1}' * varargin{1} - 1;
%!    case "s"                            # the sphere, H = |p|^2/2 - 5 q3
%!      x = varargin{2};  r = [x(4:6); 0; 0; 5];
%!  endswitch
%!endfunction
%!test
%! ## Monitoring's calls, counted: H and InvariantFcn exactly once per output
%! ## (t0's value, checked before the run, is reused) and nothing else: f
%! ## and G as often as without monitoring; the run itself is unchanged
%! base = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) counted ("G", q),
%!                   "ConstraintsNb", 1, "Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 300);
%! f = @(t, x) counted ("f", t, x);
%! counted ("f");  counted ("G");
%! s0 = odeRATTLE (f, 0, [1; 0; 0; 0], base);
%! f0 = counted ("f");  G0 = counted ("G");
%! assert ([s0.stats.nfevals, s0.stats.nconstrgradevals], [f0, G0]);
%! assert ([s0.stats.nhamiltonianevals, s0.stats.ninvariantevals], [0, 0]);
%! assert (! isfield (s0, "lambda") && ! isfield (s0, "residuals") && ! isfield (s0, "invariants"));
%! s = odeRATTLE (f, 0, [1; 0; 0; 0], odepkgset (base, "HamiltonianFcn", @(t, x) counted ("H", t, x),
%!                                                "InvariantFcn", @(t, x) counted ("I", t, x)));
%! N = numel (s.x);
%! assert (N, 301);
%! assert (counted ("H"), N);
%! assert (counted ("I"), N);
%! assert (counted ("f"), f0);
%! assert (counted ("G"), G0);
%! assert ([s.stats.nhamiltonianevals, s.stats.ninvariantevals], [N, N]);
%! assert (s.stats.nfevals, f0);
%! assert (! isfield (s, "lambda") && ! isfield (s, "residuals"));
%! assert ([s.x; s.y], [s0.x; s0.y], 0);
%! assert (s.invariants.values(2:3, :), [sum(s.y(1:2, :) .^ 2); s.y(1, :)], 0);
%! ## MonitorMultipliers "on": for g(q) with m = 1, f 2m + 3 = 5 and G 3
%! ## times per output more, and sol.stats counts them
%! sm = odeRATTLE (f, 0, [1; 0; 0; 0], odepkgset (base, "MonitorMultipliers", "on"));
%! assert (counted ("f") - f0, 5 * N);
%! assert (counted ("G") - G0, 3 * N);
%! assert (sm.stats.nfevals, f0 + 5 * N);
%! assert (sm.stats.nconstrgradevals, G0 + 3 * N);
%! assert ([sm.x; sm.y], [s0.x; s0.y], 0);
%! assert (! isfield (sm, "invariants"));
%! ## ... and sol.lambda without monitoring equals the monitored one
%! sh = odeRATTLE (f, 0, [1; 0; 0; 0], odepkgset (base, "MonitorMultipliers", "on",
%!                                                 "HamiltonianFcn", @(t, x) counted ("H", t, x)));
%! assert (counted ("H"), N);
%! assert (sm.lambda, sh.lambda, 0);
%! assert (sm.residuals, sh.residuals);
%! ## the pendulum's closed form, lambda = (|p|^2 - q2) / (2 |q|^2)
%! assert (sm.lambda, (sum (sm.y(3:4, :) .^ 2) - sm.y(2, :)) ./ (2 * sum (sm.y(1:2, :) .^ 2)), 1e-9);
%! ## no ConstraintGradFcn: the monitor's G by central differences, 2d + 1
%! ## = 5 calls of g each: per output g 1 + 3 x 5 = 16 times, counted
%! ofd = odepkgset (base, "ConstraintFcn", @(q) counted ("g", q), "ConstraintGradFcn", []);
%! counted ("g");
%! s1 = odeRATTLE (f, 0, [1; 0; 0; 0], ofd);
%! g1 = counted ("g");
%! s2 = odeRATTLE (f, 0, [1; 0; 0; 0], odepkgset (ofd, "MonitorMultipliers", "on"));
%! g2 = counted ("g");
%! assert ([s1.stats.nconstrevals, s2.stats.nconstrevals], [g1, g2]);
%! assert (g2 - g1, 16 * N);
%! assert (s2.stats.nconstrgradevals, 0);
%!error <option "MonitorMultipliers" is for constrained runs> odeRATTLie (@(t, y) [0; 0], [0 1], [0; 0; 1; 0], odepkgset ("LieGroup", "Rn", "MonitorMultipliers", "on"))
%!error <option "MonitorMultipliers" is not used by odeSV> odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("MonitorMultipliers", "on"))
%!error <option "MonitorMultipliers" must be "on"/"yes" or "off"/"no"> odeRATTLE (@(t, x) [x(3:4); 0; -1], [0 1], [1; 0; 0; 0], odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "MonitorMultipliers", "maybe"))

%!test
%! ## The overhead of a short run, in calls (issue 40): a 10-step call on
%! ## the unit sphere (H = |p|^2/2 - 5 q3, Explicit, h = 0.1) makes at most
%! ## N (calls per step of a long run) + a constant.  Per step (measured
%! ## by the difference of two long runs): 1 call of f, 1 of G and about
%! ## 9 of g.  The constant, once per call: the derivative check of
%! ## ConstraintGradFcn (8 of g, 1 of G), the initial consistency check
%! ## (g, G and f once each), f at t0, the separability probe (2 of f), T_pp
%! ## by differences (d = 3 of f): 7 of f; then the first 3 steps' Newton on
%! ## the position multipliers, f at every iteration (about 8 per step)
%! ## until the quadratic kinetic energy is learned before the 4th step,
%! ## and learning it (d + 1 = 4 of f): 7 + 3 (8 - 1) + 4 = 32 + a few
%! ## iterations of slack.  (Before issue 40 the model was learned after 8
%! ## steps: 92 calls of f for these 10 steps, now 43.)
%! f = @(t, y) counted ("s", t, y);
%! o = odepkgset ("Explicit", "yes", "TimeStepSize", 0.1, "ConstraintsNb", 1,
%!                "ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) counted ("G", q));
%! runs = [10, 200, 400];
%! c = zeros (numel (runs), 3);
%! for k = 1:numel (runs)
%!   counted ("s");  counted ("G");
%!   s = odeRATTLE (f, [0, runs(k) / 10], [1; 0; 0; 0; 1; 0], o);
%!   c(k, :) = [counted("s"), s.stats.nconstrevals, counted("G")];
%!   assert ([s.stats.nfevals, s.stats.nconstrgradevals], c(k, [1 3]));
%!   assert (s.stats.nsteps, runs(k));
%! endfor
%! per_step = (c(3, :) - c(2, :)) / 200;
%! assert (per_step(1), 1);
%! assert (per_step(3), 1);
%! assert (per_step(2) < 10);
%! ## the 10-step call: f at most 10 + 36; G 10 + 4 (the derivative check
%! ## and the consistency check 1 each, and the first step's G at q0 and
%! ## q1, with no earlier step to extrapolate G(q1) from); g 10 per_step + 14
%! assert (c(1, 1) <= 10 * per_step(1) + 36);
%! assert (c(1, 3) <= 10 * per_step(3) + 4);
%! assert (c(1, 2) <= 10 * per_step(2) + 14);

%!test
%! ## deval for g(q, p) ("qp"): interpolated states projected onto M and M_H
%! ## (|g| and |{g, H}| at round-off at mid-steps), within the method's error
%! ## of the trajectory; odeRATTLie solutions are refused (they live on a group)
%! f = @(t, y) [y(3:4); 0; -1];
%! warning ("off", "odepkg:inconsistentInitialData", "local");
%! sol = odeRATTLE (f, 0, table1_za (), sphere_opts ("TimeStepSize", 0.05, "TimeStepNumber", 40));
%! tm = (sol.x(1:end-1) + sol.x(2:end)) / 2;
%! y = __odepkg_deval__ (sol, tm).';
%! assert (max (abs (sum (y.^2, 2) - 1)) <= 1e-14);
%! assert (max (abs (2 * sum (y .* [y(:,3:4), zeros(rows (y), 1), -ones(rows (y), 1)], 2))) <= 1e-14);
%! fine = odeRATTLE (f, 0, sol.y(:, 1), sphere_opts ("TimeStepSize", 0.025, "TimeStepNumber", 80));
%! err_steps = max (max (abs (sol.y - fine.y(:, 1:2:end))));     # the method's own error
%! assert (max (max (abs (y - fine.y(:, 2:2:end).'))) < 3 * err_steps);

## Composition methods ("Order", "Composition"): Hairer, Lubich, Wanner, V.3
%!function y = pendulum_reference (T)
%!  ## the angle ODE th'' = -sin th, by odeSV of order 8 at h = T/2000
%!  o = odepkgset ("TimeStepSize", T/2000, "TimeStepNumber", 2000, "Explicit", "yes", "Order", 8);
%!  [~, a] = odeSV (@(t, x) [x(2); -sin(x(1))], 0, [1.2; 0.3], o);
%!  th = a(end,1);  w = a(end,2);
%!  y = [sin(th); -cos(th); w*cos(th); w*sin(th)];
%!endfunction
%!test
%! ## fitted orders 4, 6, 8 on the Cartesian pendulum, separable and general
%! ## paths; constraints g and G H_p at round-off.  The reference (the angle
%! ## ODE by odeSV of order 8, h = T/2000: error ~1e-22 by the h^8 law) agrees
%! ## with ode45 at 1e-13 on the angle ODE, an independent solver
%! T = 5;  ref = pendulum_reference (T);
%! [~, a] = ode45 (@(t, x) [x(2); -sin(x(1))], [0 T/2 T], [1.2; 0.3], odeset ("RelTol", 1e-13, "AbsTol", 1e-13));
%! assert (norm (ref - [sin(a(end,1)); -cos(a(end,1)); a(end,2)*cos(a(end,1)); a(end,2)*sin(a(end,1))], Inf) < 1e-11);
%! y0 = [sin(1.2); -cos(1.2); 0.3*cos(1.2); 0.3*sin(1.2)];
%! for explicit = {"yes", "no"}
%!   for p = [4 6 8]
%!     Ns = [25 35 50];  err = zeros (size (Ns));
%!     for k = 1:numel (Ns)
%!       o = pendulum_opts ("Explicit", explicit{1}, "TimeStepSize", T/Ns(k), "TimeStepNumber", Ns(k), "Order", p);
%!       sol = odeRATTLE (@pendulum, 0, y0, o);
%!       err(k) = norm (sol.y(:,end) - ref, Inf);
%!       assert (max (abs (sum (sol.y(1:2,:).^2, 1) - 1)) < 1e-14);
%!       assert (max (abs (sum (sol.y(1:2,:) .* sol.y(3:4,:), 1))) < 1e-14);
%!     endfor
%!     c = polyfit (log (T ./ Ns), log (err), 1);
%!     assert (c(1), p, 0.4);
%!   endfor
%! endfor
%!test
%! ## order 6: energy bounded without drift over 2000 time units
%! y0 = [sin(1.2); -cos(1.2); 0.3*cos(1.2); 0.3*sin(1.2)];
%! o = pendulum_opts ("Explicit", "yes", "TimeStepSize", 0.1, "TimeStepNumber", 20000, "Order", 6);
%! [t, y] = odeRATTLE (@pendulum, 0, y0, o);
%! dE = abs (pendulum_energy (y) - pendulum_energy (y0'));
%! assert (max (dE) < 1e-8);
%! assert (max (dE(end-1000:end)) < 2 * max (dE(1:1001)) + 1e-14);
%! assert (max (abs (sum (y(:,1:2).^2, 2) - 1)) < 1e-14);
%!error <option "Order" is not used by odeSHAKE> odeSHAKE (@pendulum, [0 1], [1; 0; 0; 0], pendulum_opts ("Order", 4))
%!error <geometric RATTLE over symplectic Euler is not: use BaseMethod "midpoint"> odeRATTLE (@pendulum, [0 1], [1; 0; 0; 0], pendulum_opts ("BaseMethod", "symplectic_euler", "TimeStepSize", 0.1, "Order", 4))
%!test
%! ## geometric RATTLE composed: over Störmer-Verlet with holonomic g written as
%! ## g(y) it is the classical composed RATTLE, step by step
%! f = @(t, x) [x(3:4); 0; -1];
%! y0 = [sin(1); -cos(1); 0.3*cos(1); 0.3*sin(1)];
%! o = odepkgset ("TimeStepSize", 0.05, "TimeStepNumber", 100, "ConstraintsNb", 1, "Order", 6);
%! [~, yc] = odeRATTLE (f, 0, y0, odepkgset (o, "ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q'));
%! [~, yg] = odeRATTLE (f, 0, y0, odepkgset (o, "ConstraintVariables", "qp", "BaseMethod", "stormer_verlet", ...
%!                      "ConstraintFcn", @(y) y(1:2)'*y(1:2) - 1, "ConstraintGradFcn", @(y) [2*y(1:2)', 0, 0]));
%! assert (yg, yc, 1e-12);
%!test
%! ## g(q, p) (the sphere |q|^2 + |p|^2 = 1 of McLachlan et al. 2014, Sect. 5.4) over the midpoint rule,
%! ## composed: fitted orders 4 and 6 against order 8 at small steps; |g| at round-off
%! f = @(t, y) [y(3:4); 0; -1];
%! z0 = table1_za ();  z0 = z0 / norm (z0);
%! T = 2;
%! [~, yr] = odeRATTLE (f, 0, z0, sphere_opts ("TimeStepSize", T/400, "TimeStepNumber", 400, "Order", 8));
%! for p = [4 6]
%!   Ns = [60 85 120];  err = zeros (size (Ns));
%!   for k = 1:numel (Ns)
%!     [~, y] = odeRATTLE (f, 0, z0, sphere_opts ("TimeStepSize", T/Ns(k), "TimeStepNumber", Ns(k), "Order", p));
%!     err(k) = norm (y(end,:) - yr(end,:), Inf);
%!     assert (max (abs (sum (y.^2, 2) - 1)) < 1e-14);
%!   endfor
%!   c = polyfit (log (T ./ Ns), log (err), 1);
%!   assert (c(1), p, 0.5);
%! endfor

%!shared pend_f, pend_o
%! pend_f = @(t, x) [x(3:4); 0; -1];
%! pend_o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintsNb", 1, "Explicit", "yes", ...
%!                     "TimeStepSize", 0.01, "TimeStepNumber", 2000);
%!test
%! ## Issue 22: a gradient with a wrong sign or a missing factor 2 is an
%! ## odepkg:derivativeCheck error naming ConstraintGradFcn (was: a Newton
%! ## failure at t = 0 and a one-row result); with the check off it runs.
%! for G = {@(q) -2*q', @(q) q'}
%!   try
%!     sol = odeRATTLE (pend_f, 0, [1; 0; 0; 1], odepkgset (pend_o, "ConstraintGradFcn", G{1}));
%!     error ("no error raised");
%!   catch err
%!     assert (err.identifier, "odepkg:derivativeCheck");
%!     assert (! isempty (strfind (err.message, "ConstraintGradFcn")));
%!     assert (! isempty (regexp (err.message, "accurate to [0-9.e-]+")));
%!   end_try_catch
%! endfor
%! ## two constraints (a point on a circle in the plane z = 0), the second
%! ## row's sign flipped
%! g2 = @(q) [q'*q - 1; q(3)];
%! o2 = odepkgset (pend_o, "ConstraintFcn", g2, "ConstraintsNb", 2, "TimeStepNumber", 10, ...
%!                 "ConstraintGradFcn", @(q) [2*q'; 0 0 -1]);
%! f3 = @(t, x) [x(4:6); 0; -1; 0];
%! fail ("odeRATTLE (f3, 0, [1; 0; 0; 0; 1; 0], o2)", "ConstraintGradFcn does not match");
%! [t, y] = odeRATTLE (f3, 0, [1; 0; 0; 0; 1; 0], odepkgset (o2, "ConstraintGradFcn", @(q) [2*q'; 0 0 1]));
%! assert (rows (y), 11);
%! ## the first step's Newton failure says what was (not) checked
%! warning ("error", "odepkg:integrationFailed", "local");
%! try
%!   sol = odeRATTLE (pend_f, 0, [1; 0; 0; 1], odepkgset (pend_o, "ConstraintGradFcn", @(q) [-2*q(1), 2*q(2)], ...
%!                                                  "DerivativeCheck", "off", "TimeStepNumber", 5));
%!   error ("no failure");
%! catch err
%!   assert (err.identifier, "odepkg:integrationFailed");
%!   assert (! isempty (strfind (err.message, "\"DerivativeCheck\" is off, so a wrong ConstraintGradFcn")));
%!   assert (! isempty (strfind (err.message, "a step too large")));
%! end_try_catch
%! ## a right gradient, checked, and a step of 3 that Newton cannot do in two
%! ## iterations: the message says the gradient agrees and names the step;
%! ## without the gradient it gives the differences' accuracy
%! o = odepkgset (pend_o, "ConstraintGradFcn", @(q) 2*q', "TimeStepSize", 3, "TimeStepNumber", 5, ...
%!                "MaxNewtonIterations", 2, "Explicit", "no");
%! try
%!   sol = odeRATTLE (pend_f, 0, [1; 0; 0; 1], o);
%!   error ("no failure");
%! catch err
%!   assert (err.identifier, "odepkg:integrationFailed");
%!   assert (! isempty (strfind (err.message, "ConstraintGradFcn was checked against differences at the initial data and agrees")));
%!   assert (! isempty (strfind (err.message, "likely causes: a step too large")));
%! end_try_catch
%! try
%!   sol = odeRATTLE (pend_f, 0, [1; 0; 0; 1], odepkgset (o, "ConstraintGradFcn", []));
%!   error ("no failure");
%! catch err
%!   assert (err.identifier, "odepkg:integrationFailed");
%!   assert (! isempty (regexp (err.message, "taken by differences \\(constraint gradients accurate to [0-9.e+-]+\\)")));
%! end_try_catch
%!error <ConstraintHessFcn does not match> odeRATTLE (pend_f, 0, [1; 0; 0; 1], odepkgset (pend_o, "Explicit", "no", "ConstraintGradFcn", @(q) 2*q', "ConstraintHessFcn", @(q) eye (2), "TimeStepNumber", 2))
%!error <HamiltonianHessFcn does not match> odeRATTLE (pend_f, 0, [1; 0; 0; 1], odepkgset (pend_o, "Explicit", "no", "ConstraintGradFcn", @(q) 2*q', "HamiltonianHessFcn", @(t, x) -eye (4), "TimeStepNumber", 2))
%!error <"DerivativeCheck" is not used by odeVV> odeVV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("DerivativeCheck", "off"))
%!test
%! ## Issue 22: without ConstraintGradFcn, exactly consistent data are not
%! ## called inconsistent, and the reported hidden residual bounds the true
%! ## max |G(q) H_p| = |2 q . p| on the output (was 6.5e-8 true against 3.6e-15
%! ## reported, with forward differences).
%! lastwarn ("");
%! sol = odeRATTLE (pend_f, [0 20], [1; 0; 0; 1], odepkgset (pend_o, "TimeStepNumber", []));
%! [~, id] = lastwarn ();
%! assert (! strcmp (id, "odepkg:inconsistentInitialData"));
%! y = sol.y.';
%! hid = max (abs (2 * sum (y(:, 1:2) .* y(:, 3:4), 2)));
%! assert (hid < 1e-9);
%! assert (sol.stats.maxhiddenresidual >= hid);
%! assert (sol.stats.maxhiddenresidual < 1e-8);
%! assert (sol.stats.maxgraderror > 0 && sol.stats.maxgraderror < 1e-9);
%! ## with the exact gradient the residual is at round-off, maxgraderror 0
%! sol = odeRATTLE (pend_f, [0 20], [1; 0; 0; 1], odepkgset (pend_o, "TimeStepNumber", [], "ConstraintGradFcn", @(q) 2*q'));
%! assert (sol.stats.maxgraderror, 0);
%! assert (sol.stats.maxhiddenresidual < 1e-13);
%!test
%! ## Issue 22: a double pendulum (two unit rods) without gradients: the true
%! ## hidden residual, from the exact gradient, is bounded by the reported one
%! ## and is near 1e-10 (was 9.9e-8 true against 8.5e-15 reported).
%! g = @(q) [q(1:2)'*q(1:2) - 1; (q(3:4) - q(1:2))'*(q(3:4) - q(1:2)) - 1];
%! G = @(q) [2*q(1:2)', 0, 0; -2*(q(3:4) - q(1:2))', 2*(q(3:4) - q(1:2))'];
%! f = @(t, x) [x(5:8); 0; -1; 0; -1];
%! o = odepkgset ("ConstraintFcn", g, "ConstraintsNb", 2, "Explicit", "yes", "TimeStepSize", 0.005, ...
%!                "TimeStepNumber", 1000);
%! lastwarn ("");
%! [t, y] = odeRATTLE (f, 0, [1; 0; 2; 0; 0; 1; 0; 2], o);
%! [~, id] = lastwarn ();
%! assert (! strcmp (id, "odepkg:inconsistentInitialData"));
%! sol = odeRATTLE (f, [0 5], [1; 0; 2; 0; 0; 1; 0; 2], odepkgset (o, "TimeStepNumber", []));
%! hid = 0;
%! for k = 1:columns (sol.y)
%!   hid = max (hid, max (abs (G (sol.y(1:4, k)) * sol.y(5:8, k))));
%! endfor
%! assert (hid < 2e-9);
%! assert (sol.stats.maxhiddenresidual >= hid && sol.stats.maxhiddenresidual < 2e-8);

## Sparse constraint gradients: the planar hanging chain of n unit links and
## unit masses, the first link pinned at the origin, H = |p|^2/2 + sum y_k,
## g_k = |x_k - x_(k-1)|^2 - 1 (x_0 = 0); q = [x_1; y_1; x_2; y_2; ...]
## interleaved, so that G is banded (row k: columns 2k-3 ... 2k).  With an
## anchor a the last mass is linked to it too, g_(n+1) = |a - x_n|^2 - 1.
%!function g = chain_cons (q, anchor)
%!  X = reshape (q, 2, []);
%!  D = diff ([zeros(2, 1), X, anchor], 1, 2);
%!  g = (D(1,:).^2 + D(2,:).^2).' - 1;
%!endfunction
%!function G = chain_grad (q, anchor)
%!  ## sparse (i, j, v, m, d): row k holds 2 (x_k - x_(k-1)) in columns
%!  ## 2k-1, 2k and its negative in columns 2k-3, 2k-2
%!  n = numel (q) / 2;  m = n + ! isempty (anchor);  k = 2:n;
%!  D = 2 * diff ([zeros(2, 1), reshape(q, 2, n), anchor], 1, 2);
%!  i = [1:n, 1:n, k, k];
%!  j = [1:2:2*n, 2:2:2*n, 2*k-3, 2*k-2];
%!  v = [D(1,1:n), D(2,1:n), -D(1,k), -D(2,k)];
%!  if (! isempty (anchor))
%!    i = [i, m, m];  j = [j, 2*n-1, 2*n];  v = [v, -D(:,m).'];
%!  endif
%!  G = sparse (i, j, v, m, 2*n);
%!endfunction
%!function dy = chain_f (t, y)
%!  d = numel (y) / 2;
%!  dy = [y(d+1:end); repmat([0; -1], d/2, 1)];
%!endfunction
%!function E = chain_energy (Y)
%!  ## H of each row of Y = [q', p']
%!  d = columns (Y) / 2;
%!  E = sum (Y(:,d+1:end).^2, 2) / 2 + sum (Y(:,2:2:d), 2);
%!endfunction
%!function o = chain_opts (n, anchor, varargin)
%!  o = odepkgset ("ConstraintFcn", @(q) chain_cons (q, anchor), ...
%!                 "ConstraintGradFcn", @(q) chain_grad (q, anchor), ...
%!                 "ConstraintsNb", n + ! isempty (anchor), "Explicit", "yes", varargin{:});
%!endfunction
%!function y0 = chain_horizontal (n)
%!  ## straight along the x axis, at rest: g = 0 and G H_p = 0 exactly
%!  y0 = [reshape([1:n; zeros(1, n)], [], 1); zeros(2*n, 1)];
%!endfunction
%!function varargout = chain_memo (name, varargin)
%!  ## f, g or G of the chain through a memo, as users write for costly
%!  ## functions: each keeps its last argument and result, and returns the
%!  ## result again for an equal argument; chain_memo ("reset") forgets
%!  persistent args vals
%!  if (strcmp (name, "reset"))
%!    args = vals = struct ("f", [], "g", [], "G", []);
%!    return;
%!  endif
%!  x = varargin{1 + strcmp (name, "f")};    # f (t, y), g (q, anchor), G (q, anchor)
%!  if (! isequal (x, args.(name)))
%!    args.(name) = x;
%!    switch (name)
%!      case "f"
%!        vals.f = chain_f (varargin{:});
%!      case "g"
%!        vals.g = chain_cons (varargin{:});
%!      case "G"
%!        vals.G = chain_grad (varargin{:});
%!    endswitch
%!  endif
%!  varargout{1} = vals.(name);
%!endfunction
%!function [cmax, hmax] = chain_residuals (Y, anchor)
%!  ## max over the rows of Y of |g(q)|_inf and |G(q) H_p|_inf, evaluated here
%!  d = columns (Y) / 2;  cmax = hmax = 0;
%!  for k = 1:rows (Y)
%!    q = Y(k,1:d).';
%!    cmax = max (cmax, norm (chain_cons (q, anchor), Inf));
%!    hmax = max (hmax, norm (chain_grad (q, anchor) * Y(k,d+1:end).', Inf));
%!  endfor
%!endfunction

%!test
%! ## a sparse ConstraintGradFcn gives the trajectory of the same gradient
%! ## as a full matrix (chain of 20 links falling from the horizontal)
%! o = chain_opts (20, [], "TimeStepSize", 0.01, "TimeStepNumber", 100);
%! [ts, ys] = odeRATTLE (@chain_f, 0, chain_horizontal (20), o);
%! of = odepkgset (o, "ConstraintGradFcn", @(q) full (chain_grad (q, [])));
%! [tf, yf] = odeRATTLE (@chain_f, 0, chain_horizontal (20), of);
%! assert (ts, tf);
%! assert (norm (ys - yf, Inf) <= 1e-12 * norm (yf, Inf));
%! [cmax, hmax] = chain_residuals (ys, []);
%! assert (cmax <= 1e-13 && hmax <= 1e-13);
%! assert (min (ys(end,2:2:40)) < -0.4);       # it fell (free fall: -t^2/2 = -0.5)
%!test
%! ## functions that keep their argument (memos) see the values they were
%! ## given, unchanged afterwards (the solver builds the points in the
%! ## arrays it passes, and must not write into one a function kept): the
%! ## trajectory is the one without memos, bit for bit
%! chain_memo ("reset");
%! o = chain_opts (30, [], "TimeStepSize", 0.01, "TimeStepNumber", 60);
%! [t1, y1] = odeRATTLE (@chain_f, 0, chain_horizontal (30), o);
%! om = odepkgset (o, "ConstraintFcn", @(q) chain_memo ("g", q, []), ...
%!                 "ConstraintGradFcn", @(q) chain_memo ("G", q, []));
%! [t2, y2] = odeRATTLE (@(t, y) chain_memo ("f", t, y), 0, chain_horizontal (30), om);
%! assert (t2, t1);
%! assert (y2, y1);
%! assert (min (y1(end,2:2:60)) < -0.1);       # it fell
%!test
%! ## order 2, fitted over three step sizes against a run at h = 2.5e-4
%! ## (chain of 10 links falling from the horizontal, t in [0, 1])
%! o = chain_opts (10, []);
%! y0 = chain_horizontal (10);
%! [~, yr] = odeRATTLE (@chain_f, [0 1], y0, odepkgset (o, "TimeStepSize", 2.5e-4));
%! h = [0.02 0.01 0.005];  err = zeros (size (h));
%! for i = 1:numel (h)
%!   [~, y] = odeRATTLE (@chain_f, [0 1], y0, odepkgset (o, "TimeStepSize", h(i)));
%!   err(i) = norm (y(end,:) - yr(end,:), Inf);
%! endfor
%! assert (polyfit (log (h), log (err), 1)(1), 2, 0.2);
%!test
%! ## monitoring with a sparse gradient (HamiltonianFcn): the residuals from
%! ## sparse products, against those evaluated here, one call of G per
%! ## output, no multipliers (they would take 2m calls of f per output)
%! n = 300;
%! o = chain_opts (n, [], "TimeStepSize", 0.01, "TimeStepNumber", 50,
%!                 "HamiltonianFcn", @(t, y) chain_energy (y.'), "MonitorMultipliers", "on");
%! sol = odeRATTLE (@chain_f, 0, chain_horizontal (n), o);
%! assert (! isfield (sol, "lambda"));
%! Y = sol.y.';  d = 2 * n;
%! for k = [1, 26, 51]
%!   q = Y(k,1:d).';
%!   assert (sol.residuals.constraint(k), norm (chain_cons (q, []), Inf), 0);
%!   assert (sol.residuals.hidden(k), norm (chain_grad (q, []) * Y(k,d+1:end).', Inf), 1e-15);
%! endfor
%! assert (max (sol.residuals.constraint) <= 1e-12 && max (sol.residuals.hidden) <= 1e-13);
%! assert (sol.invariants.deviation < 1e-2 * n);
%!test
%! ## without "Explicit" (the general path) a sparse gradient stays sparse:
%! ## the separable path's trajectory; without a HamiltonianHessFcn the
%! ## Hessian of H is differenced as a full matrix, refused where that would
%! ## have more than 4e6 entries (2d = 6000)
%! o = chain_opts (10, [], "TimeStepSize", 0.01, "TimeStepNumber", 50);
%! [~, ys] = odeRATTLE (@chain_f, 0, chain_horizontal (10), o);
%! sol = odeRATTLE (@chain_f, 0, chain_horizontal (10), odepkgset (o, "Explicit", "no"));
%! assert (sol.y.', ys, 1e-11);
%! assert (sol.stats.sparseconstraints, true);
%! try
%!   odeRATTLE (@chain_f, 0, chain_horizontal (1500), chain_opts (1500, [], "Explicit", "no", ...
%!              "TimeStepSize", 0.01, "TimeStepNumber", 2));
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:invalidOption");
%!   assert (! isempty (strfind (err.message, "HamiltonianHessFcn")));
%! end_try_catch
%!function dy = mobile_chain_f (y, e)
%!  ## the chain with a height-dependent mobility c(y) = 1 + e sin (y):
%!  ## H = sum (c(y_k) |p_k|^2 / 2 + y_k), not separable
%!  d = numel (y) / 2;  P = reshape (y(d+1:end), 2, []);  Y = y(2:2:d).';
%!  dq = P .* (1 + e * sin (Y));
%!  dp = [zeros(1, d/2); -(0.5 * e * cos (Y) .* sum (P .^ 2, 1) + 1)];
%!  dy = [dq(:); dp(:)];
%!endfunction
%!function H = mobile_chain_hess (y, e)
%!  ## its Hessian in (q, p) order, 7 entries per mass (sparse)
%!  d = numel (y) / 2;  k = (1:d/2).';
%!  iy = 2*k;  ipx = d + 2*k - 1;  ipy = d + 2*k;
%!  Y = y(iy);  px = y(ipx);  py = y(ipy);
%!  c1 = e * cos (Y);
%!  i = [iy; iy; iy; ipx; ipy; ipx; ipy];
%!  j = [iy; ipx; ipy; iy; iy; ipx; ipy];
%!  v = [-0.5 * e * sin(Y) .* (px.^2 + py.^2); c1 .* px; c1 .* py; c1 .* px; c1 .* py; ...
%!       1 + e * sin(Y); 1 + e * sin(Y)];
%!  H = sparse (i, j, v, 2*d, 2*d);
%!endfunction
%!function o = mobile_chain_opts (n, e, sparse_fcns, varargin)
%!  if (sparse_fcns)
%!    G = @(q) chain_grad (q, []);  H = @(t, y) mobile_chain_hess (y, e);
%!  else
%!    G = @(q) full (chain_grad (q, []));  H = @(t, y) full (mobile_chain_hess (y, e));
%!  endif
%!  o = odepkgset ("ConstraintFcn", @(q) chain_cons (q, []), "ConstraintGradFcn", G, ...
%!                 "ConstraintsNb", n, "HamiltonianHessFcn", H, varargin{:});
%!endfunction
%!test
%! ## a non-separable H on the general path: sparse ConstraintGradFcn and
%! ## HamiltonianHessFcn (sparse Newton systems) give the trajectory of the
%! ## full ones, to round-off; sol.stats.sparseconstraints says which ran
%! n = 12;  e = 0.1;  f = @(t, y) mobile_chain_f (y, e);
%! y0 = [reshape([cos(1.3) * (1:n); -sin(1.3) * (1:n)], [], 1); zeros(2*n, 1)];
%! for solver = {@odeRATTLE, @odeSHAKE}
%!   ss = solver{1} (f, 0, y0, mobile_chain_opts (n, e, true, "TimeStepSize", 0.01, "TimeStepNumber", 200));
%!   sd = solver{1} (f, 0, y0, mobile_chain_opts (n, e, false, "TimeStepSize", 0.01, "TimeStepNumber", 200));
%!   assert (ss.stats.sparseconstraints, true);
%!   assert (sd.stats.sparseconstraints, false);
%!   assert (ss.y, sd.y, 1e-12 * max (abs (sd.y(:))));
%!   [cmax, hmax] = chain_residuals (ss.y.', []);
%!   assert (cmax <= 1e-13);
%! endfor
%!test
%! ## a link listed twice on the sparse general path: rank deficiency found
%! ## by the sparse factorization, odepkg:singularConstraints warned, the
%! ## run goes on, on the constraints
%! n = 12;  e = 0.1;  f = @(t, y) mobile_chain_f (y, e);
%! y0 = [reshape([cos(1.3) * (1:n); -sin(1.3) * (1:n)], [], 1); zeros(2*n, 1)];
%! o = mobile_chain_opts (n, e, true, "TimeStepSize", 0.01, "TimeStepNumber", 100, ...
%!                        "ConstraintFcn", @(q) chain_cons (q, [])([1:end, 1]), ...
%!                        "ConstraintGradFcn", @(q) chain_grad (q, [])([1:end, 1], :), "ConstraintsNb", n + 1);
%! lastwarn ("");
%! txt = evalc ("sol = odeRATTLE (f, 0, y0, o);");
%! [msg, id] = lastwarn ();
%! assert (id, "odepkg:singularConstraints");
%! assert (! isempty (strfind (msg, "one solution of each singular multiplier system")));
%! assert (sol.stats.sparseconstraints, true);
%! assert (sol.stats.nrankdeficient >= 1);
%! assert (sol.x(end), 1, 1e-12);
%! [cmax, hmax] = chain_residuals (sol.y.', []);
%! assert (cmax <= 1e-13);
%!error id=odepkg:derivativeCheck
%! ## a sparse HamiltonianHessFcn is checked (against differences of f) by
%! ## sparse products: here its H_pp is wrong by a factor 2
%! n = 12;  e = 0.1;  f = @(t, y) mobile_chain_f (y, e);
%! y0 = [reshape([cos(1.3) * (1:n); -sin(1.3) * (1:n)], [], 1); zeros(2*n, 1)];
%! o = mobile_chain_opts (n, e, true, "TimeStepSize", 0.01, "TimeStepNumber", 2, ...
%!                        "HamiltonianHessFcn", @(t, y) mobile_chain_hess (y, e) + [sparse(2*n, 4*n); sparse(2*n, 2*n), speye(2*n)]);
%! odeRATTLE (f, 0, y0, o);
%!test
%! ## constraints g(q, p) (ConstraintVariables "qp": the chain's g written on
%! ## phase space, with its fibre flow): a sparse ConstraintGradFcn keeps the
%! ## geometric RATTLE's systems sparse, the full one's trajectory to round-off
%! n = 8;  d = 2*n;  e = 0.1;  f = @(t, y) mobile_chain_f (y, e);
%! y0 = [reshape([cos(1.3) * (1:n); -sin(1.3) * (1:n)], [], 1); zeros(2*n, 1)];
%! Dg = @(y) [chain_grad(y(1:d), []), sparse(n, d)];
%! o = odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", @(y) chain_cons (y(1:d), []), ...
%!                "ConstraintFlowFcn", @(y, s) [y(1:d); y(d+1:end) - chain_grad(y(1:d), [])' * s], ...
%!                "ConstraintsNb", n, "TimeStepSize", 0.01, "TimeStepNumber", 100);
%! ss = odeRATTLE (f, 0, y0, odepkgset (o, "ConstraintGradFcn", Dg, ...
%!                                      "HamiltonianHessFcn", @(t, y) mobile_chain_hess (y, e)));
%! sd = odeRATTLE (f, 0, y0, odepkgset (o, "ConstraintGradFcn", @(y) full (Dg (y)), ...
%!                                      "HamiltonianHessFcn", @(t, y) full (mobile_chain_hess (y, e))));
%! assert (ss.stats.sparseconstraints, true);
%! assert (sd.stats.sparseconstraints, false);
%! assert (ss.y, sd.y, 1e-12 * max (abs (sd.y(:))));
%!test
%! ## a closed ring (n = 19 masses, 20 links, both ends of the chain at the
%! ## origin) released folded flat along the x axis: there every link is
%! ## parallel, the closing link's constraint is redundant (rank 19 of 20).
%! ## odepkg:singularConstraints is warned and the run goes on to the end,
%! ## on the constraints; by the ring's mirror symmetry k <-> n+1-k (initial
%! ## data included) its two strands stay together as it swings down.
%! n = 19;  M = (n + 1) / 2;  a = [0; 0];
%! y0 = [reshape([1:M, M-1:-1:1; zeros(1, n)], [], 1); zeros(2*n, 1)];
%! o = chain_opts (n, a, "TimeStepSize", 0.01, "TimeStepNumber", 300);
%! lastwarn ("");
%! txt = evalc ("sol = odeRATTLE (@chain_f, 0, y0, o);");   # the warning, caught
%! [~, id] = lastwarn ();
%! assert (id, "odepkg:singularConstraints");
%! assert (! isempty (strfind (txt, "rank-deficient")));
%! assert (sol.x(end), 3, 1e-12);
%! assert (sol.stats.nrankdeficient >= 1);
%! Y = sol.y.';
%! [cmax, hmax] = chain_residuals (Y, a);
%! assert (cmax <= 1e-13 && hmax <= 1e-13);
%! mirror = reshape ([2*(n:-1:1)-1; 2*(n:-1:1)], 1, []);         # x_k -> x_(n+1-k)
%! assert (max (max (abs (Y(:,1:2*n) - Y(:,mirror)))) <= 1e-10);
%! assert (min (Y(end,2:2:2*n)) < -2);          # it swung down
%! E = chain_energy (Y);
%! assert (max (abs (E - E(1))) < 1e-2);
%!test
%! ## a fully stretched chain: 9 masses, 10 links, pinned at the origin and
%! ## at (0, -10), hanging straight down at rest.  Every gradient has a y
%! ## component only: rank 9 of 10 (the tensions are determined up to a
%! ## common one).  Warned, and the chain stays at rest to the end.
%! n = 9;  a = [0; -(n+1)];
%! y0 = [reshape([zeros(1, n); -(1:n)], [], 1); zeros(2*n, 1)];
%! o = chain_opts (n, a, "TimeStepSize", 0.01, "TimeStepNumber", 300);
%! lastwarn ("");
%! txt = evalc ("sol = odeRATTLE (@chain_f, 0, y0, o);");   # the warning, caught
%! [~, id] = lastwarn ();
%! assert (id, "odepkg:singularConstraints");
%! assert (! isempty (strfind (txt, "rank-deficient")));
%! assert (sol.x(end), 3, 1e-12);
%! assert (max (max (abs (sol.y - y0))) <= 1e-12);
%!test
%! ## 10^4 links (sparse path: O(m) per step), hanging straight down, a
%! ## transverse wave packet (speed 0.1, wavelength 50 links) started near
%! ## the top; t up to 2.5.  |g| and |G H_p| at round-off at every output:
%! ## |q| ~ n, so the links x_k - x_(k-1) carry n eps.  Energy bounded, no
%! ## drift: the last fifth's largest error no more than 1.5 x the first's.
%! ## (The potential sum y_k ~ -n^2/2 is taken from the rest state, sum
%! ## (y_k + k), whose round-off is below the method's error; the top's
%! ## transverse waves reach omega ~ 2 sqrt (n) = 200, and h = 0.005 keeps
%! ## h omega = 1 below Stormer-Verlet's bound 2.)
%! n = 1e4;  k = 1:n;
%! v = 0.1 * exp (-((k - 100) / 30) .^ 2) .* sin (2 * pi * k / 50);
%! y0 = [reshape([zeros(1, n); -k], [], 1); reshape([v; zeros(1, n)], [], 1)];
%! T = 2.5;  tout = linspace (0, T, 201);
%! sol = odeRATTLE (@chain_f, tout, y0, chain_opts (n, [], "TimeStepSize", 0.005));
%! assert (sol.x(end), T, 1e-12);
%! Y = sol.y.';
%! [cmax, hmax] = chain_residuals (Y, []);
%! assert (cmax <= 10 * eps * n);
%! assert (hmax <= eps * n);
%! E = sum (Y(:,2*n+1:end) .^ 2, 2) / 2 + sum (Y(:,2:2:2*n) + k, 2);
%! dE = abs (E - E(1));
%! assert (max (dE) < 1e-3 * E(1));
%! assert (max (dE(161:201)) <= 1.5 * max (dE(1:41)));

## --- the constrained Newton at the edges ----------------------------------
## Explicit RATTLE on the unit sphere, H = |p|^2/2 - kappa q_3: the position
## equation is a quadratic in s (q_1 = a - s q_0); RATTLE takes its root
## nearest 0.  The closed form, step by step (the reference of the tests).
%!function [Y, ok] = sphere_closed_form (y0, h, n, kappa)
%!  F = [0; 0; kappa]; q = y0(1:3); p = y0(4:6); Y = y0(:).'; ok = true;
%!  for k = 1:n
%!    a = q + h * (p + h/2 * F);            # q_1 at zero multipliers
%!    b = a' * q; c = a' * a - 1; disc = b^2 - (q' * q) * c;
%!    if (disc < 0)
%!      ok = false;
%!      return;
%!    endif
%!    s = (b - sqrt (disc)) / (q' * q);     # the root nearest s = 0
%!    q1 = a - s * q;
%!    ps = (q1 - q) / h + h/2 * F;
%!    p = ps - (ps' * q1) / (q1' * q1) * q1;
%!    q = q1;
%!    Y(end+1, :) = [q; p].';
%!  endfor
%!endfunction
%!function o = sphere_opts (explicit, h)
%!  o = odepkgset ("Explicit", explicit, "ConstraintFcn", @(q) q'*q - 1, ...
%!                 "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1, "TimeStepSize", h);
%!endfunction

%!test
%! ## A solvable step is never refused: kappa = 5, h = 0.3 from x0 = e1 (the
%! ## warm-started chord failed at step 4, where the quadratic has the roots
%! ## 0.46 and 1.91); both paths do the 10 steps of the closed form
%! kappa = 5; f = @(t, y) [y(4:6); 0; 0; kappa]; y0 = [1; 0; 0; 0; 0.5; 0];
%! [Yc, okc] = sphere_closed_form (y0, 0.3, 10, kappa);
%! assert (okc);
%! for e = {"yes", "no"}
%!   sol = odeRATTLE (f, [0 3], y0, sphere_opts (e{1}, 0.3));
%!   assert (numel (sol.x), 11);
%!   assert (sol.y.', Yc, 1e-11);      # Newton to NewtonTol 1e-12 a step
%! endfor

%!test
%! ## A seeded sweep of random starts at h = 0.25 (steps of up to a radius):
%! ## every start whose closed form completes 10 steps is completed, on the
%! ## branch the closed form follows (to 1e-10), never on another root; the
%! ## sweep meets steps where the warm start reaches the other root.  The
%! ## explicit path, the general path, the sparse separable path (a
%! ## sparse ConstraintGradFcn; its quadratic-T step from the ninth step on),
%! ## and the geometric RATTLE with the sphere written as g(q, p) over
%! ## Störmer-Verlet (RATTLE; its roots checked on z_1, the chord's part
%! ## normal to {g = 0})
%! kappa = 5; f = @(t, y) [y(4:6); 0; 0; kappa]; h = 0.25;
%! qp = odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", @(y) y(1:3)'*y(1:3) - 1,
%!                 "ConstraintGradFcn", @(y) [2*y(1:3)', 0, 0, 0], "ConstraintsNb", 1,
%!                 "ConstraintFlowFcn", @(y, s) [y(1:3); y(4:6) - 2*s*y(1:3)],
%!                 "TimeStepSize", h, "BaseMethod", "stormer_verlet");
%! paths = {sphere_opts("yes", h), sphere_opts("no", h), ...
%!          odepkgset(sphere_opts("yes", h), "ConstraintGradFcn", @(q) sparse (2*q')), qp};
%! for k = 1:numel (paths)
%!   randn ("state", 7);
%!   ncf = 0; retried = 0;
%!   for trial = 1:150
%!     x = randn (3, 1); x /= norm (x); p = randn (3, 1); p -= (p' * x) * x;
%!     [Yc, okc] = sphere_closed_form ([x; p], h, 10, kappa);
%!     if (! okc)
%!       continue;
%!     endif
%!     ncf++;
%!     sol = odeRATTLE (f, [0 10*h], [x; p], paths{k});
%!     assert (numel (sol.x), 11);
%!     assert (sol.y.', Yc, 1e-10);
%!     retried += sol.stats.nnewtonretries;
%!   endfor
%!   assert (ncf > 110);
%!   assert (retried > 0);
%! endfor

%!test
%! ## The same seeded sweep as one ensemble (Explicit: the batched RATTLE,
%! ## each member with its own Newton iteration and its own retries): every
%! ## member's every step is the closed form's step from the member's own
%! ## last point (1e-11), so the completed members follow the closed form's
%! ## trajectory (2e-10: its sensitivity near the folds amplifies round-off,
%! ## the single runs meet 9.9e-11); members with no real root at some step
%! ## are refused there (status -1, NaN after) and the others go on
%! kappa = 5; h = 0.25; randn ("state", 7);
%! Y0 = zeros (6, 120); okc = false (1, 120); Yc = cell (1, 120);
%! for trial = 1:120
%!   x = randn (3, 1); x /= norm (x); p = randn (3, 1); p -= (p' * x) * x;
%!   Y0(:, trial) = [x; p];
%!   [Yc{trial}, okc(trial)] = sphere_closed_form ([x; p], h, 10, kappa);
%! endfor
%! f = @(t, y) [y(4:6,:); zeros(2, columns (y)); kappa * ones(1, columns (y))];
%! o = odepkgset ("Explicit", "yes", "ConstraintFcn", @(Q) sum (Q.^2, 1) - 1, ...
%!                "ConstraintGradFcn", @(Q) reshape (2 * Q, 1, 3, []), ...
%!                "ConstraintsNb", 1, "TimeStepSize", h);
%! warning ("off", "odepkg:integrationFailed", "local");
%! sol = odeRATTLE (f, [0 10*h], Y0, o);
%! assert (numel (sol.x), 11);
%! assert (sum (okc) > 90);
%! assert (sol.status, -double (! okc));
%! for k = 1:120
%!   y = sol.y(:, :, k);
%!   for i = 1:10
%!     [yi, ok] = sphere_closed_form (y(:, i), h, 1, kappa);
%!     if (! ok)
%!       assert (! okc(k) && all (isnan (y(:, i+1:end))(:)));
%!       break;
%!     endif
%!     assert (y(:, i+1).', yi(2, :), 1e-11);
%!   endfor
%!   if (okc(k))
%!     assert (y.', Yc{k}, 2e-10);
%!   endif
%! endfor
%! assert (sol.stats.nnewtonretries > 0);
%! assert (sol.stats.nfailedmembers, sum (! okc));

%!test
%! ## No solution near the unconstrained step (the quadratic has no real
%! ## root): the run stops with the partial solution and a warning, or with
%! ## OnFailure "error" an error; bad values of OnFailure are refused
%! kappa = 5; f = @(t, y) [y(4:6); 0; 0; kappa]; h = 0.25;
%! y0 = [0.091984864725110554; -0.49805965992952461; 0.86225017240496338; ...
%!       -1.2918617356584829; 3.2820304827597901; 2.0336078428711866];
%! [~, okc] = sphere_closed_form (y0, h, 1, kappa);
%! assert (! okc);
%! lastwarn ("");
%! txt = evalc ("sol = odeRATTLE (f, [0 h], y0, sphere_opts (\"yes\", h));");
%! [~, id] = lastwarn ();
%! assert (id, "odepkg:integrationFailed");
%! assert (numel (sol.x), 1);
%! assert (sol.stats.nnewtonretries, 1);
%! o = odepkgset (sphere_opts ("yes", h), "OnFailure", "error");
%! try
%!   odeRATTLE (f, [0 h], y0, o);
%!   error ("no error");
%! catch err
%!   assert (err.identifier, "odepkg:integrationFailed");
%! end_try_catch
%!error <OnFailure> odeRATTLE (@(t, y) [y(4:6); 0; 0; 1], [0 1], [1; 0; 0; 0; 1; 0], odepkgset (sphere_opts ("yes", 0.1), "OnFailure", "stop"))

%!function [y0, f, g, G] = fourbar (theta0, coupler)
%!  ## natural coordinates: the moving joints A (crank 1 from the origin) and
%!  ## B (coupler to A, rocker 2 from C = (4, 0)); the crank turns at 6 rad/s
%!  C = [4; 0]; A = [cos(theta0); sin(theta0)];
%!  d = norm (C - A); a = (coupler^2 - 4 + d^2) / (2 * d); e = (C - A) / d;
%!  B = A + a * e + sqrt (coupler^2 - a^2) * [-e(2); e(1)];
%!  Ad = 6 * [-sin(theta0); cos(theta0)];
%!  Bd = [(B - A)'; (B - C)'] \ [(B - A)' * Ad; 0];
%!  y0 = [A; B; Ad; Bd];
%!  f = @(t, y) [y(5:8); zeros(4, 1)];
%!  g = @(q) [q(1:2)'*q(1:2) - 1; (q(3:4)-q(1:2))'*(q(3:4)-q(1:2)) - coupler^2; (q(3:4)-C)'*(q(3:4)-C) - 4];
%!  G = @(q) 2 * [q(1) q(2) 0 0; -(q(3:4)-q(1:2))' (q(3:4)-q(1:2))'; 0 0 (q(3:4)-C)'];
%!endfunction

%!test
%! ## A four-bar linkage 1e-4 from its change point (ground 4, crank 1,
%! ## coupler 3 + 1e-4, rocker 2), through the near-fold: smaller steps
%! ## must pass where larger ones do (h = 5e-5 ... 1e-5 stopped there, the
%! ## convergence test asking below the round-off of g once the Newton
%! ## matrix grows like 1/h^2); the end states agree as h^2; G keeps full
%! ## rank, so no singular-constraints warning
%! [y0, f, g, G] = fourbar (pi - 0.1, 3 + 1e-4);
%! hs = [1e-4 5e-5 2e-5 1e-5]; T = 0.03; Y = zeros (8, numel (hs));
%! for e = {"yes", "no"}
%!   for k = 1:numel (hs)
%!     o = odepkgset ("Explicit", e{1}, "ConstraintFcn", g, "ConstraintGradFcn", G, ...
%!                    "ConstraintsNb", 3, "TimeStepSize", hs(k));
%!     lastwarn ("");
%!     sol = odeRATTLE (f, [0 T], y0, o);
%!     [msg, id] = lastwarn ();
%!     assert (id, "");
%!     assert (sol.x(end), T, 1e-12);
%!     assert (norm (g (sol.y(1:4, end))), 0, 1e-13);
%!     Y(:, k) = sol.y(:, end);
%!   endfor
%!   d = vecnorm (Y(:, 1:end-1) - Y(:, end));   # against the finest
%!   assert (d(1) / d(2), ((1e-4^2 - 1e-5^2) / (5e-5^2 - 1e-5^2)), 0.3 * (d(1) / d(2)));
%! endfor

%!test
%! ## A parallelogram linkage (ground 4, crank 1, coupler 4, rocker 1; unit
%! ## masses at the joints, gravity) released from rest passes through
%! ## collinear configurations where G loses rank; on the parallelogram
%! ## branch the crank angle is a pendulum, theta'' = -g cos theta.  Three
%! ## passages, g at round-off, theta against ode45 at 1e-12, order 2.
%! grav = 9.81; th0 = 0.3; C = [4; 0];
%! A = [cos(th0); sin(th0)]; y0 = [A; A + [4; 0]; zeros(4, 1)];
%! f = @(t, y) [y(5:8); 0; -grav; 0; -grav];
%! g = @(q) [q(1:2)'*q(1:2) - 1; (q(3:4)-q(1:2))'*(q(3:4)-q(1:2)) - 16; (q(3:4)-C)'*(q(3:4)-C) - 1];
%! G = @(q) 2 * [q(1) q(2) 0 0; -(q(3:4)-q(1:2))' (q(3:4)-q(1:2))'; 0 0 (q(3:4)-C)'];
%! T = 2;
%! [~, th] = ode45 (@(t, x) [x(2); -grav * cos(x(1))], [0 T], [th0; 0], odeset ("RelTol", 1e-12, "AbsTol", 1e-12));
%! for e = {"yes", "no"}
%!   err = [];
%!   for h = [1e-3 5e-4]
%!     o = odepkgset ("Explicit", e{1}, "ConstraintFcn", g, "ConstraintGradFcn", G, ...
%!                    "ConstraintsNb", 3, "TimeStepSize", h);
%!     warning ("off", "odepkg:singularConstraints", "local");
%!     sol = odeRATTLE (f, [0 T], y0, o);
%!     assert (sol.x(end), T, 1e-12);
%!     Ay = sol.y(2, :);
%!     assert (sum (abs (diff (sign (Ay))) > 0), 3);   # three collinear passages
%!     gmax = max (abs (cellfun (@(k) norm (g (sol.y(1:4, k))), num2cell (1:numel (sol.x)))));
%!     assert (gmax < 2e-13);      # round-off of g: 4 eps |G| |q| = 1.2e-13 at (1, 0, 5, 0)
%!     err(end+1) = abs (unwrap (atan2 (sol.y(2, :), sol.y(1, :)))(end) - th(end, 1));
%!   endfor
%!   assert (err(1) < 5e-5);
%!   assert (log2 (err(1) / err(2)), 2, 0.2);
%! endfor

%!test
%! ## No continuation: the unit spheres about 0 and (0, 0, 2) meet only at
%! ## (0, 0, 1), where G = [0 0 2; 0 0 -2] has rank 1; with a velocity along
%! ## their common tangent the data are consistent but no step exists.  The
%! ## run stops at t = 0 with odepkg:singularConstraints naming
%! ## sigma_min(G), and with OnFailure "error" it is that error.
%! f = @(t, y) [y(4:6); 0; 0; 0];
%! c = [0; 0; 2];
%! o = odepkgset ("ConstraintFcn", @(q) [q'*q - 1; (q-c)'*(q-c) - 1], ...
%!                "ConstraintGradFcn", @(q) 2 * [q'; (q-c)'], "ConstraintsNb", 2, "TimeStepSize", 0.1);
%! y0 = [0; 0; 1; 1; 0; 0];
%! for e = {"yes", "no"}
%!   oe = odepkgset (o, "Explicit", e{1});
%!   lastwarn ("");
%!   txt = evalc ("sol = odeRATTLE (f, [0 1], y0, oe);");
%!   [msg, id] = lastwarn ();
%!   assert (id, "odepkg:singularConstraints");
%!   assert (! isempty (strfind (msg, "smallest singular value 0")), msg);
%!   assert (numel (sol.x), 1);
%!   try
%!     odeRATTLE (f, [0 1], y0, odepkgset (oe, "OnFailure", "error"));
%!     error ("no error");
%!   catch err
%!     assert (err.identifier, "odepkg:singularConstraints");
%!   end_try_catch
%! endfor

%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## an ensemble of a model (pendulums of lengths L(k), L a parameter of g):
%! ## the native RATTLE over the members equals the vectorised handles step
%! ## for step to round-off; odeSHAKE (members one after the other, each in
%! ## the kernels with its own L) equals its handle run too
%! pkg load symbolic
%! dir = tempname ();
%! unwind_protect
%!   syms q1 q2 p1 p2 L real
%!   m = odepkg_model ("H", (p1^2 + p2^2)/2 + q2, "q", [q1 q2], "p", [p1 p2], "g", q1^2 + q2^2 - L^2,
%!                     "Parameters", L, "CacheDir", dir);
%!   Ls = [0.5 1 2 1.5];  th = [0.3 1 2 2.5];
%!   Y0 = [Ls .* sin(th); -Ls .* cos(th); zeros(2, 4)];
%!   f = @(t, y, L) [y(3:4,:); zeros(1, columns (y)); -ones(1, columns (y))];
%!   oh = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintsNb", 1,
%!                   "ConstraintFcn", @(Q, L) sum (Q.^2, 1) - L.^2,
%!                   "ConstraintGradFcn", @(Q, L) reshape (2 * Q, 1, 2, []));
%!   [tn, yn] = odeRATTLE (m, [0 5], Y0, odepkgset ("TimeStepSize", 0.01), Ls);
%!   [th, yh] = odeRATTLE (f, [0 5], Y0, oh, Ls);
%!   assert (tn, th);
%!   assert (yn, yh, 1e-12);
%!   for k = 1:4
%!     assert (sum (yn(:, 1:2, k).^2, 2), Ls(k)^2 * ones (numel (tn), 1), 1e-12);
%!   endfor
%!   [~, ys] = odeSHAKE (m, [0 1], Y0, odepkgset ("TimeStepSize", 0.01), Ls);
%!   for k = 1:4
%!     ok = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes", "ConstraintsNb", 1,
%!                     "ConstraintFcn", @(q) q.' * q - Ls(k)^2, "ConstraintGradFcn", @(q) 2 * q.');
%!     [~, yk] = odeSHAKE (@(t, y) [y(3:4); 0; -1], [0 1], Y0(:, k), ok);
%!     assert (ys(:, :, k), yk, 1e-12);
%!   endfor
%! unwind_protect_cleanup
%!   confirm_recursive_rmdir (false, "local");
%!   if (exist (dir, "dir"))
%!     rmdir (dir, "s");
%!   endif
%! end_unwind_protect
## --- nonholonomic constraints (NonholonomicFcn) ------------------------------
## vertical rolling disk q = (x, y, phi, theta), T = (m |v_xy|^2 + I phi'^2 + J theta'^2)/2:
## exact solution phi' = wp, theta' = wt constant, the contact point on a
## circle of radius R wt / wp
%!function o = disk_opts (varargin)
%!  R = 0.7;
%!  o = odepkgset ("NonholonomicFcn", @(q) [1, 0, 0, -R*cos(q(3)); 0, 1, 0, -R*sin(q(3))],
%!                 "NonholonomicsNb", 2, varargin{:});
%!endfunction
%!function dy = disk_f (t, y)
%!  dy = [y(5:6) / 2; y(7) / 0.4; y(8) / 0.9; 0; 0; 0; 0];
%!endfunction
%!function y = disk_exact (t)
%!  R = 0.7; wp = 1.3; wt = 2.1; rho = R * wt / wp;
%!  phi = 0.2 + wp * t;
%!  y = [0.5 + rho * (sin(phi) - sin(0.2)); -0.3 - rho * (cos(phi) - cos(0.2)); phi; -0.1 + wt * t;
%!       2 * R * cos(phi) * wt; 2 * R * sin(phi) * wt; 0.4 * wp; 0.9 * wt];
%!endfunction
## A first step that fails on a run with nonholonomic constraints only: the
## advice speaks of what was differenced, not of constraint gradients
## (there are none); the free Chaplygin sleigh at h = 2, order 6
%!warning <the first step; the Jacobians the iteration needs were taken by differences; likely causes: a step too large>
%! A = @(q) [-sin(q(3)), cos(q(3)), -0.5];
%! y0 = [0.3; -0.2; 0.4; 0.6*cos(0.4) - 0.4*sin(0.4); 0.6*sin(0.4) + 0.4*cos(0.4); 0.24];
%! o = odepkgset ("NonholonomicFcn", A, "NonholonomicsNb", 1, "Order", 6, "TimeStepSize", 2);
%! [t, y] = odeRATTLE (@(t, y) [y(4:5); y(6) / 0.3; 0; 0; 0], [0 100], y0, o);
%! assert (t, 0);
%!test
%! ## order 2 fitted against the closed form; orders 4 and 6 composed ("Order")
%! hs = [0.1, 0.05, 0.025];
%! for p = [2, 4, 6]
%!   err = [];
%!   for h = hs * (1 + (p > 2))
%!     [t, y] = odeRATTLE (@disk_f, [0 2], disk_exact (0), disk_opts ("TimeStepSize", h, "Order", p));
%!     err(end+1) = norm (y(end, :).' - disk_exact (2), Inf);
%!   endfor
%!   c = polyfit (log (hs), log (err), 1);
%!   assert (c(1), p, 0.35);
%! endfor
%!test
%! ## the contact point on its circle; |A v| at round-off at every step; sol.mu
%! ## against the closed form mu = m R wp wt [sin(phi); -cos(phi)] (p_xy' = -mu)
%! sol = odeRATTLE (@disk_f, [0 5], disk_exact (0), disk_opts ("TimeStepSize", 0.01, "MonitorMultipliers", "on"));
%! R = 0.7; wp = 1.3; wt = 2.1; rho = R * wt / wp;
%! c = [0.5 - rho * sin(0.2); -0.3 + rho * cos(0.2)];
%! assert (hypot (sol.y(1,:) - c(1), sol.y(2,:) - c(2)), rho * ones (1, columns (sol.y)), 1e-4);
%! assert (sol.stats.maxnonholresidual < 1e-14);
%! assert (max (sol.residuals.nonholonomic) < 1e-14);
%! phi = sol.y(3, :);
%! assert (sol.mu, 2 * R * wp * wt * [sin(phi); -cos(phi)], 1e-6);
%! assert (! isfield (sol, "lambda") || isempty (sol.lambda));
%! assert (sol.stats.nnonholevals > 0);
%!test
%! ## Chaplygin sleigh (centre of mass (x, y), heading th, knife edge a behind it,
%! ## -sin(th) x' + cos(th) y' - a th' = 0) on a spring: energy bounded without
%! ## drift over 2e4 steps, |A v| at round-off, forward then back to the start
%! a = 0.5;  Is = 0.3;
%! f = @(t, y) [y(4:5); y(6) / Is; -y(1:2); 0];
%! o = odepkgset ("NonholonomicFcn", @(q) [-sin(q(3)), cos(q(3)), -a], "NonholonomicsNb", 1);
%! th = 0.4;  w = 0.8;  u = 0.6;
%! y0 = [0.3; -0.2; th; u*cos(th) - a*w*sin(th); u*sin(th) + a*w*cos(th); Is*w];
%! E = @(y) 0.5 * sum (y(:,4:5).^2, 2) + 0.5 * y(:,6).^2 / Is + 0.5 * sum (y(:,1:2).^2, 2);
%! sol = odeRATTLE (f, [0 1000], y0, odepkgset (o, "TimeStepSize", 0.05));
%! dE = abs (E (sol.y.') - E (y0.'));
%! n = numel (dE);
%! assert (max (dE) < 1e-2);
%! assert (max (dE(ceil (n/2):end)) < 1.5 * max (dE(1:floor (n/2))));
%! assert (sol.stats.maxnonholresidual < 1e-14);
%! ## |A v| measured on the returned states, v = (p_x, p_y, p_th / Is)
%! y = sol.y.';
%! assert (max (abs (-sin (y(:,3)) .* y(:,4) + cos (y(:,3)) .* y(:,5) - a * y(:,6) / Is)) < 1e-14);
%! ## symmetric: a step of -h undoes a step of h ...
%! [~, yf] = odeRATTLE (f, [0 5], y0, odepkgset (o, "TimeStepSize", 0.05));
%! [~, yb] = odeRATTLE (f, [5 0], yf(end, :).', odepkgset (o, "TimeStepSize", 0.05));
%! assert (yb(end, :).', y0, 1e-13);
%! ## ... and reversible: forward to T, p negated, forward to T again, p
%! ## negated gives y0 back (the sleigh is reversible, not volume preserving:
%! ## backward it contracts what forward expands, so T stays short)
%! z = yf(end, :).';  z(4:6) = -z(4:6);
%! [~, yb] = odeRATTLE (f, [0 5], z, odepkgset (o, "TimeStepSize", 0.05));
%! z = yb(end, :).';  z(4:6) = -z(4:6);
%! assert (z, y0, 1e-13);
%! assert (norm (yf(end, :).' - y0, Inf) > 1);         # it went somewhere
## knife edge on a plane inclined by alpha (Bloch, Nonholonomic Mechanics and
## Control; Neimark and Fufaev, Dynamics of Nonholonomic Systems): q = (x, y, phi), x down the slope,
## T = m |v_xy|^2/2 + J phi'^2/2, V = -m g sin(alpha) x, the blade moving along
## its heading, -sin(phi) x' + cos(phi) y' = 0.  Then phi = phi0 + w t and the
## speed u along the heading obeys u' = g sin(alpha) cos(phi):
## u = b + c sin(phi), c = g sin(alpha)/w, b = u0 - c sin(phi0), and
## x = x0 + b (sin phi - sin phi0)/w + c (sin^2 phi - sin^2 phi0)/(2 w),
## y = y0 - b (cos phi - cos phi0)/w + c (t/2 - (sin 2phi - sin 2phi0)/(4 w)):
## x oscillates, y drifts sideways at c/2 (checked against ode45 at 1e-12 on
## the index-reduced ODE: 5e-13 up to t = 10).
%!function dy = knife_f (t, y)
%!  m = 1.5;  J = 0.4;  gs = 9.81 * sin (0.3);
%!  dy = [y(4:5) / m; y(6) / J; m * gs; 0; 0];
%!endfunction
%!function o = knife_opts (varargin)
%!  o = odepkgset ("NonholonomicFcn", @(q) [-sin(q(3)), cos(q(3)), 0], "NonholonomicsNb", 1, varargin{:});
%!endfunction
%!function y = knife_exact (t)
%!  m = 1.5;  J = 0.4;  gs = 9.81 * sin (0.3);
%!  w = 1.7;  ph0 = 0.4;  u0 = 0.8;  x0 = 0.1;  y0 = -0.2;
%!  c = gs / w;  b = u0 - c * sin (ph0);
%!  ph = ph0 + w * t;  u = b + c * sin (ph);
%!  x = x0 + b * (sin (ph) - sin (ph0)) / w + c * (sin (ph).^2 - sin (ph0)^2) / (2*w);
%!  y = y0 - b * (cos (ph) - cos (ph0)) / w + c * (t / 2 - (sin (2*ph) - sin (2*ph0)) / (4*w));
%!  px = m * u .* cos (ph);  py = m * u .* sin (ph);
%!  y = [x; y; ph; px; py; J*w*ones(size(t))];
%!endfunction
%!function E = knife_energy (y)
%!  m = 1.5;  J = 0.4;  gs = 9.81 * sin (0.3);
%!  E = sum (y(:,4:5).^2, 2) / (2*m) + y(:,6).^2 / (2*J) - m * gs * y(:,1);
%!endfunction
%!test
%! ## knife edge: order 2, and 4 with "Order", fitted against the closed form at t = 2
%! hs = [0.04, 0.02, 0.01, 0.005];
%! for p = [2, 4]
%!   err = [];
%!   for h = hs * (1 + 2 * (p > 2))
%!     [t, y] = odeRATTLE (@knife_f, [0 2], knife_exact (0), knife_opts ("TimeStepSize", h, "Order", p));
%!     err(end+1) = norm (y(end, :).' - knife_exact (2), Inf);
%!   endfor
%!   c = polyfit (log (hs), log (err), 1);
%!   assert (c(1), p, 0.1);                             # 2.000, 3.998 (measured)
%! endfor
%!test
%! ## knife edge, 2e4 steps of h = 0.05 to t = 1000 (270 turns of the blade; 1e5
%! ## steps take 4 s, too long for the suite): the energy error bounded, 7e-3,
%! ## and no larger over the second half than over the first; the same for the
%! ## error of x (bounded and periodic in the closed form); |A v| at round-off
%! sol = odeRATTLE (@knife_f, [0 1000], knife_exact (0), knife_opts ("TimeStepSize", 0.05));
%! y = sol.y.';
%! n = rows (y);  h1 = 1:floor (n/2);  h2 = ceil (n/2):n;
%! assert (n, 20001);
%! dE = abs (knife_energy (y) - knife_energy (knife_exact (0).'));
%! assert (max (dE) < 1e-2);
%! assert (max (dE(h2)) < 1.1 * max (dE(h1)));
%! ye = knife_exact (sol.x);
%! ex = abs (y(:,1) - ye(1,:).');
%! assert (max (ex) < 2e-3);
%! assert (max (ex(h2)) < 1.1 * max (ex(h1)));
%! assert (max (abs (-sin (y(:,3)) .* y(:,4) + cos (y(:,3)) .* y(:,5))) / 1.5 < 1e-14);
%! assert (sol.stats.maxnonholresidual < 1e-14);
%!test
%! ## knife edge, forward then back to round-off, orders 2 and 4: to t = 5,
%! ## p negated, again to t = 5, p negated
%! y0 = knife_exact (0);
%! for p = [2, 4]
%!   o = knife_opts ("TimeStepSize", 0.05, "Order", p);
%!   [~, yf] = odeRATTLE (@knife_f, [0 5], y0, o);
%!   z = yf(end, :).';  z(4:6) = -z(4:6);
%!   [~, yb] = odeRATTLE (@knife_f, [0 5], z, o);
%!   z = yb(end, :).';  z(4:6) = -z(4:6);
%!   assert (z, y0, 1e-13);                            # 8e-15 (measured)
%!   assert (norm (yf(end, :).' - y0, Inf) > 1);
%! endfor
%!test
%! ## the contact oscillator of McLachlan and Perlmutter: x' + y z' = 0,
%! ## V = (x^2 + y^2)/2 + eps x^2 z^2/2; E and (y^2 + y'^2)/2 bounded
%! ep = 0.1;
%! f = @(t, s) [s(4:6); -s(1) - ep*s(1)*s(3)^2; -s(2); -ep*s(1)^2*s(3)];
%! o = odepkgset ("NonholonomicFcn", @(q) [1, 0, q(2)], "NonholonomicsNb", 1, "TimeStepSize", 0.05);
%! y0 = [0.5; 0.8; -0.4; -0.56; 0.3; 0.7];
%! [t, y] = odeRATTLE (f, [0 500], y0, o);
%! E = 0.5 * sum (y(:,4:6).^2, 2) + 0.5 * (y(:,1).^2 + y(:,2).^2) + 0.5 * ep * y(:,1).^2 .* y(:,3).^2;
%! I = 0.5 * (y(:,2).^2 + y(:,5).^2);
%! n = numel (t);  h1 = 1:floor (n/2);  h2 = ceil (n/2):n;
%! assert (max (abs (E - E(1))) < 1e-2);
%! assert (max (abs (E(h2) - E(1))) < 1.5 * max (abs (E(h1) - E(1))));
%! assert (max (abs (I - I(1))) < 1e-3);
%! assert (max (abs (I(h2) - I(1))) < 1.5 * max (abs (I(h1) - I(1))) + 1e-15);
%! assert (max (abs (y(:,4) + y(:,2) .* y(:,6))) < 1e-13);
%!test
%! ## mixed: a particle on the unit sphere (holonomic) with 0.3 v1 + q3 v2 - q2 v3 = 0:
%! ## both constraints and G v at round-off, sol.lambda and sol.mu returned
%! o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1,
%!                "NonholonomicFcn", @(q) [0.3, q(3), -q(2)], "NonholonomicsNb", 1,
%!                "TimeStepSize", 0.02, "MonitorMultipliers", "on");
%! sol = odeRATTLE (@(t, y) [y(4:6); 0; 0; -1], [0 20], [0.6; 0; -0.8; 0; 0; 0], o);
%! q = sol.y(1:3, :);  v = sol.y(4:6, :);
%! assert (max (abs (sum (q.^2) - 1)) < 1e-13);
%! assert (max (abs (sum (q.*v))) < 1e-13);
%! assert (max (abs (0.3*v(1,:) + q(3,:).*v(2,:) - q(2,:).*v(3,:))) < 1e-13);
%! assert (size (sol.lambda), [1, columns(sol.y)]);
%! assert (size (sol.mu), [1, columns(sol.y)]);
%! E = 0.5 * sum (v.^2) + q(3, :);
%! assert (max (abs (E - E(1))) < 1e-2);
%!test
%! ## adaptive steps (step doubling) and the reversible step control: the closed form
%! ## to the tolerance; deval's points on A(q) H_p = 0
%! sol = odeRATTLE (@disk_f, [0 2], disk_exact (0), disk_opts ("RelTol", 1e-8, "AbsTol", 1e-10));
%! assert (sol.y(:, end), disk_exact (2), 1e-5);
%! assert (sol.stats.maxnonholresidual < 1e-14);
%! ym = deval (sol, 0.5 * (sol.x(1:end-1) + sol.x(2:end)));
%! R = 0.7;
%! v = ym(5:8, :) ./ [2; 2; 0.4; 0.9];
%! assert (max (abs (v(1,:) - R*cos(ym(3,:)).*v(4,:))) < 1e-12);
%! ## (no force: the default density has no time scale; a constant one given)
%! sr = odeRATTLE (@disk_f, [0 2], disk_exact (0), disk_opts ("StepControl", "reversible", "StepDensityEps", 0.01,
%!                                                           "StepDensityFcn", @(t, y) 0, "InitialStepDensity", 1));
%! assert (sr.y(:, end), disk_exact (2), 1e-3);
%! assert (sr.stats.maxnonholresidual < 1e-14);
%!test
%! ## an event on a nonholonomic run: the rolling disk's contact point
%! ## reaching x = 0.9, its time against the closed form, the event state
%! ## on A(q) H_p = 0
%! ev = @(t, y) deal (y(1) - 0.9, true, 1);
%! [t, y, te, ye, ie] = odeRATTLE (@disk_f, [0 2], disk_exact (0), disk_opts ("TimeStepSize", 0.01, "Order", 4, "Events", ev));
%! R = 0.7;  rho = R * 2.1 / 1.3;
%! t_exact = (asin (sin (0.2) + 0.4 / rho) - 0.2) / 1.3;
%! assert (te, t_exact, 1e-8);
%! assert (t(end), te);  assert (ie, 1);
%! v = ye(5:8) ./ [2, 2, 0.4, 0.9];
%! assert (abs (v(1) - R * cos (ye(3)) * v(4)) < 1e-12);
%! assert (abs (v(2) - R * sin (ye(3)) * v(4)) < 1e-12);
%!test
%! ## a redundant velocity constraint (A with a repeated row): minimum-norm
%! ## multipliers, the same motion, a warning
%! R = 0.7;
%! A3 = @(q) [1, 0, 0, -R*cos(q(3)); 0, 1, 0, -R*sin(q(3)); 1, 0, 0, -R*cos(q(3))];
%! [~, y2] = odeRATTLE (@disk_f, [0 1], disk_exact (0), disk_opts ("TimeStepSize", 0.05));
%! warning ("off", "odepkg:singularConstraints", "local");
%! [~, y3] = odeRATTLE (@disk_f, [0 1], disk_exact (0), odepkgset ("NonholonomicFcn", A3, "NonholonomicsNb", 3, "TimeStepSize", 0.05));
%! assert (y3, y2, 1e-12);
%!warning <rank-deficient> [t, y] = odeRATTLE (@disk_f, [0 0.1], disk_exact (0), odepkgset ("NonholonomicFcn", @(q) [1, 0, 0, -0.7*cos(q(3)); 1, 0, 0, -0.7*cos(q(3))], "NonholonomicsNb", 2, "TimeStepSize", 0.05));
%!warning <velocity constraints> [t, y] = odeRATTLE (@disk_f, [0 0.1], disk_exact (0) + [0; 0; 0; 0; 0.1; 0; 0; 0], disk_opts ("TimeStepSize", 0.05));
%!error id=odepkg:inconsistentInitialData odeRATTLE (@disk_f, [0 0.1], disk_exact (0) + [0; 0; 0; 0; 0.1; 0; 0; 0], disk_opts ("TimeStepSize", 0.05, "InitialProjection", "error"));
%!error id=odepkg:badFcnOutput odeRATTLE (@disk_f, [0 0.1], disk_exact (0), odepkgset ("NonholonomicFcn", @(q) [1, 0, 0, 0], "NonholonomicsNb", 2, "TimeStepSize", 0.05));
%!error <NonholonomicsNb" \+ "ConstraintsNb" \(2 \+ 2\) must be smaller> odeRATTLE (@disk_f, [0 0.1], disk_exact (0), disk_opts ("ConstraintFcn", @(q) q(1:2), "ConstraintsNb", 2, "TimeStepSize", 0.05));
%!error <are given together> odeRATTLE (@disk_f, [0 0.1], disk_exact (0), odepkgset ("NonholonomicFcn", @(q) [1, 0, 0, 0], "TimeStepSize", 0.05));
%!error id=odepkg:notSeparable odeRATTLE (@(t, y) [(1 + y(1)^2) * y(5:8); -y(1) * sum(y(5:8).^2); 0; 0; 0], [0 0.1], disk_exact (0), disk_opts ("TimeStepSize", 0.05));
%!error id=odepkg:unsupportedOption odeSHAKE (@disk_f, [0 0.1], disk_exact (0), disk_opts ("TimeStepSize", 0.05));
%!error id=odepkg:unsupportedOption odeRATTLE (@disk_f, [0 0.1], [disk_exact(0), disk_exact(0)], disk_opts ("TimeStepSize", 0.05));
