## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {} odepkg ()
## @deftypefnx {} {@var{table} =} odepkg ()
## The conventions shared by every odepkg solver; without an output argument,
## print the table of all options with the solvers that honour each.
##
## @strong{Solvers.}  @code{odeSE} (symplectic Euler), @code{odeSV}
## (Störmer--Verlet), @code{odeVV} (velocity Verlet), @code{odeRATTLE} and
## @code{odeSHAKE} (holonomic g(q) = 0, or coisotropic g(q, p) = 0 with
## @qcode{"ConstraintVariables"}, @qcode{"qp"}), @code{odeRATTLie} (RATTLE on
## Lie groups) and @code{odeSPVI} (spectral variational integrators).  All are
## called as @code{ode45}:
## @example
## [t, y] = solver (fcn, tspan, y0, opts, par1, ...)
## sol = solver (...)
## [t, y, te, ye, ie] = solver (...)          # with "Events"
## @end example
## @var{y0} = [q0; p0] and @code{fcn (t, [q; p], par1, ...)} returns
## [dH/dp; -dH/dq] (odeVV: [v; a]; odeRATTLie: [q0; v0] with group coordinates
## q, and fcn returns the @emph{negative} applied forces, see @code{odeRATTLie}).  Extra arguments are passed to
## every user function; as in @code{ode45}, they may follow @var{y0} directly
## (@code{solver (fcn, tspan, y0, par1, ...)}, default options) when
## @var{par1} is not a struct, and an empty @code{[]} for @var{opts} means
## the default options.
##
## @strong{Choosing a solver.}  Problem, solver and options, and the cost
## per step in calls of the user functions (fcn; g = ConstraintFcn,
## G = ConstraintGradFcn), measured with @code{sol.stats} at fixed steps:
## @itemize
## @item Separable H = T(p) + V(q), no constraints: @code{odeSV} with
## @qcode{"Explicit"}, @qcode{"yes"} (order 2): 1 fcn.  @code{odeVV} when fcn
## returns accelerations [v; a]: 1 fcn.  (@code{odeSE}: the same cost,
## order 1.)
## @item General H(q, p): @code{odeSV} (implicit, Newton; order 2): 4 to 9
## fcn.  @code{odeSPVI} for smooth problems and high accuracy: order
## 2 (Q_DoFs @minus{} 1) with P_DoFs = Q_DoFs @minus{} 1; 6 fcn at the default
## order 4, 12 fcn at order 8 (@qcode{"Q_DoFs"}, 5).
## @item Holonomic constraints g(q) = 0: @code{odeRATTLE}; give
## @qcode{"ConstraintGradFcn"}, and for separable H @qcode{"Explicit"},
## @qcode{"yes"}: 1 fcn + 2 g + 1 G@.  General H: 6 fcn + 2 g + 3 G@.
## @code{odeSHAKE} gives the same positions at the same cost; only its
## momenta leave the hidden constraint G H_p = 0 (by O(h)).
## @item Constraints g(q, p) = 0: @code{odeRATTLE} with
## @qcode{"ConstraintVariables"}, @qcode{"qp"}; give the fibre flow
## @qcode{"ConstraintFlowFcn"} if you know it (8 fcn + 5 g + 12 G + 8 flows
## on a sphere in R^4; integrated instead: 68 G).
## @item Tight tolerances (errors of 1e-8 and below) with @code{odeSV},
## @code{odeVV}, @code{odeRATTLE} or @code{odeRATTLie}: @qcode{"Order"}, 8 (or 4, 6, 10)
## composes s steps of the method (Hairer, Lubich, Wanner, Sect. V.3), s
## times its cost per step (17 fcn for explicit order 8), with far fewer
## steps: the pendulum to 1e-12 at t = 10 in 100 steps.
## @item Rigid bodies, rotations, configuration on a Lie group:
## @code{odeRATTLie} with @qcode{"LieGroup"}; give B(q) as
## @qcode{"ConstraintGradFcn"}: 1 fcn + 3 Phi + 4 B (heavy top on S3 x R3;
## by differences: 51 Phi).
## @item Fixed or adaptive: fixed steps (@qcode{"TimeStepSize"}) for
## long-time behaviour: the energy error of a symplectic method stays
## bounded.  Adaptive steps (step doubling) cost 3 times as much per step
## (odeSV explicit: 3 to 4 fcn) and the energy error drifts; @code{odeSPVI}
## estimates with its own higher-order step instead.
## @qcode{"StepControl"}, @qcode{"reversible"} (odeSV, odeVV, odeRATTLE):
## variable steps from a time-reversible step density (Hairer and Söderlind
## 2005) that keep the bounded energy error of fixed steps; 3 more fcn per
## step for the default density (a local rate, the same in any units), one
## call of @qcode{"StepDensityFcn"} with your own.  Use it for long runs whose time scale varies.  It takes
## compositions (@qcode{"Order"}) and the geometric RATTLE for g(q, p) over
## a symmetric base method too.
## @end itemize
##
## @strong{Time modes.}
## @itemize
## @item @var{tspan} = [t0 tf]: adaptive steps controlled by a step-doubling
## estimate of the local error (@qcode{"RelTol"}, @qcode{"AbsTol"},
## @qcode{"NormControl"}, @qcode{"InitialStep"}, @qcode{"MaxStep"}); every
## accepted step is output.  With @qcode{"TimeStepSize"} (or
## @qcode{"TimeStepNumber"}): fixed steps, which keep the long-time energy
## behaviour of a symplectic method.
## @item @var{tspan} with more than two times: output exactly at those times.
## @item scalar @var{tspan} = t0 with @qcode{"TimeStepSize"} and
## @qcode{"TimeStepNumber"}: that many fixed steps, every one output.
## @end itemize
## Conflicting step options are refused (@code{odepkg:invalidOption}, naming
## both): @qcode{"TimeStepNumber"} with more than two times, or with
## @qcode{"TimeStepSize"} and a span other than their product; tolerances
## (@qcode{"RelTol"}, @qcode{"AbsTol"}, @qcode{"NormControl"},
## @qcode{"InitialStep"}, @qcode{"MaxStep"}) with fixed steps.
##
## @strong{Outputs.}  A column @var{t} and one row of @var{y} per output
## time, or @var{sol} with fields @code{x}, @code{y}, @code{solver},
## @code{stats} (steps, rejected steps, calls of each user function, Newton
## iterations, largest constraint residuals); with @qcode{"Events"} also
## @code{xe}, @code{ye}, @code{ie}.  @code{deval (sol, t)} interpolates
## (constrained states projected onto the constraints; odeRATTLie's on the
## group, in its Lie algebra); @qcode{"Refine"}
## adds interpolated points inside each step as in @code{ode45}.
##
## @strong{Ensembles.}  A @var{y0} with K columns integrates K trajectories
## of one system in one call, e.g. a Poincaré section from a grid of initial
## states, a pendulum family, short RATTLE runs for Hamiltonian Monte Carlo:
## @example
## f = @@(t, y) [y(3:4,:); -y(1:2,:) ./ sum(y(1:2,:).^2, 1).^1.5];
## e = [0.1 0.5 0.7];                              # three Kepler orbits
## Y0 = [1 - e; 0*e; 0*e; sqrt((1 + e) ./ (1 - e))];
## [t, y] = odeSV (f, [0 10], Y0, odepkgset ("TimeStepSize", 0.01, "Explicit", "yes"));
## size (y)                                        # N-by-4-by-3: y(:,:,k) is member k
## @end example
## The user functions are vectorised as MATLAB's @qcode{"Vectorized"}
## means: called with all K states as columns (column j is always member j,
## so a member's parameters can sit in your own arrays: @code{L(j)} in
## @code{g = @@(Q) sum (Q.^2, 1) - L.^2}), fcn returns 2d-by-K, ConstraintFcn
## m-by-K, ConstraintGradFcn m-by-d-by-K, the Events function nev-by-K
## values, and the OutputFcn receives 2d-by-K.  With the explicit schemes
## (odeSV, odeSE with @qcode{"Explicit"}, @qcode{"yes"}, odeVV) and the
## separable RATTLE (odeRATTLE with @qcode{"Explicit"}, @qcode{"yes"} and a
## quadratic kinetic energy), compositions included, each callback is called
## once per stage for the whole ensemble, so the cost of a call (5 to 10
## microseconds in the interpreter) is shared by the K members
## (@file{doc/ensembles.md}; @code{demo odeSV 3} integrates 174 orbits in one
## ensemble call).
## With a model of @code{odepkg_model} in place of fcn, the members run in
## the model's compiled kernels (no interpreter between steps), member k with
## its own parameter values: an extra argument with K columns gives one
## column per member (@code{odeSV (model, tspan, Y0, opts, lambda)} with
## @code{lambda} 1-by-K), any other is shared; the members' kernels are
## evaluated on the machine's cores (@qcode{"Threads"}; the results do not
## depend on the number of threads).
## Every other scheme runs the members one after the other in the same call
## (adaptive steps then need common output times, @var{tspan} with more than
## two times, and the @qcode{"OutputFcn"} is refused).
## The members are independent: each has its own Newton iteration, its own
## events (a terminal event ends only its member) and its own failure (a
## warning names the failed members; their outputs are NaN from then on,
## the others go on).  Adaptive steps use one step size for all members, the
## error of a step being the largest over them: the member that needs the
## smallest steps sets them for all, and the callbacks stay batched (steps
## of their own would give each member calls of its own).  Outputs:
## @var{y} N-by-2d-by-K; @var{te}, @var{ye}, @var{ie} 1-by-K cells;
## @var{sol}.y 2d-by-N-by-K, @var{sol}.status (0 reached the end, 1 ended by
## a terminal event, @minus{}1 failed), @var{sol}.messages, and in
## @var{sol}.stats the batched calls (nfevals) and member evaluations
## (nfevalmembers).  Ensemble runs refuse @qcode{"Refine"},
## @qcode{"HamiltonianFcn"}, @qcode{"InvariantFcn"}, @qcode{"OutputSel"},
## @qcode{"Progress"}, @qcode{"StepControl"} @qcode{"reversible"} and
## compensated summation, and start on the constraint manifold (a single run
## projects its @var{y0}; an ensemble's inconsistent members are an error
## naming them).  To spread a large ensemble or a parameter sweep over cores
## or machines, see @code{odepkg_sweep}.
##
## @strong{Monitoring} (off by default, no extra call when off):
## @qcode{"HamiltonianFcn"} H(t, y) and @qcode{"InvariantFcn"} (a vector of
## first integrals) give @code{sol.invariants} (@code{names}, @code{values} at
## the output times, largest @code{deviation} from t0), at the cost of their
## own calls.  Constrained solvers add @code{sol.residuals} (|g| and |Dg f|
## per output time) and the multipliers @code{sol.lambda} with
## @qcode{"MonitorMultipliers"}, @qcode{"on"} (with or without
## @qcode{"HamiltonianFcn"}; 2m + 3 calls of f per output, counted in
## @code{sol.stats}; odeRATTLie returns @code{sol.lambda} always).
##
## @strong{Options} come from @code{odepkgset} (or @code{odeset}).  Every
## option is honoured or refused: one a solver does not use is an
## @code{odepkg:unsupportedOption} error naming it, never silently ignored.
## Errors carry @code{odepkg:} identifiers; a failure in the middle of a run
## returns what was computed so far with the warning
## @code{odepkg:integrationFailed}.
##
## @strong{Modifying options.}  Change a struct from @code{odepkgset} with
## @code{odepkgset (@var{opts}, @var{name}, @var{value}, @dots{})}, not with
## @code{odeset (@var{opts}, @dots{})}: Octave's @code{odeset} warns once for
## every package option in the struct.  An empty value clears an option.
##
## @strong{Documentation.}  The package's @file{doc} folder has one page per
## topic.  @code{pkg install} copies it into the installed package, at
## @code{fullfile (pkg ("list", "odepkg")@{1@}.dir, "doc")}; in the source
## tree it is @file{doc/}.
## @table @file
## @item doc/solvers.md
## Every solver's method, order and notes; the compiled steppers; calls per
## step measured for each kind of problem; fixed against adaptive steps.
## @item doc/usage.md
## Calls, @code{odepkgset}, time modes, events, @code{deval} and
## @qcode{"Refine"}, monitoring, @qcode{"Stats"}, @qcode{"Progress"}.
## @item doc/constraints.md
## g(q) = 0 and g(q, p) = 0 with @code{odeRATTLE} and @code{odeSHAKE}.
## @item doc/lie-groups.md
## Rigid bodies with @code{odeRATTLie}.
## @item doc/reversible-steps.md
## @qcode{"StepControl"}, @qcode{"reversible"}: measured against fixed steps
## and step doubling.
## @item doc/high-order.md
## @qcode{"Order"}/@qcode{"Composition"}, @qcode{"CompensatedSummation"}.
## @item doc/ensembles.md
## K trajectories in one call.
## @item doc/parallel-sweeps.md
## @code{odepkg_sweep} over cores and machines.
## @item doc/robustness.md
## Errors, warnings, derivative checks, initial data off the constraints,
## singular configurations, Ctrl-C, fuzzing, sanitizers.
## @item doc/figures.md
## The demo figures and what each shows.
## @item doc/cpp-core.md
## The Octave-free C++ core as a CMake package.
## @item doc/layout.md
## The source tree.
## @item doc/benchmarks.md
## Measured cost per step.
## @end table
##
## Example:
## @example
## odepkg ()                                   # the options and who honours them
## T = odepkg ();  @{T(strcmp (@{T.solvers@}, "all")).name@}   # options of every solver
## @end example
## @seealso{odepkgset, odeSV, odeRATTLE, odeRATTLie, odeSPVI}
## @end deftypefn

function table = odepkg ()

  T = odepkg_option_table ();
  if (nargout > 0)
    table = T;
    return;
  endif
  printf ("%-20s %-11s %-34s %s\n", "option", "default", "solvers", "meaning");
  for i = 1:numel (T)
    s = T(i).solvers;
    if (iscell (s))
      s = strjoin (s, " ");
    endif
    printf ("%-20s %-11s %-34s %s\n", T(i).name, shown (T(i).default), s, T(i).help);
  endfor

endfunction

function s = shown (v)
  if (isempty (v))
    s = "[]";
  elseif (ischar (v))
    s = ['"' v '"'];
  else
    s = num2str (v);
  endif
endfunction

%!test
%! ## the printed list is the option table: every option, its solvers
%! T = odepkg ();
%! out = evalc ("odepkg ()");
%! for i = 1:numel (T)
%!   assert (! isempty (regexp (out, ["\n" T(i).name " "], "once")), T(i).name);
%! endfor
%! assert (numel (strsplit (strtrim (out), "\n")), numel (T) + 1);
%!test
%! ## the table drives odepkgset (every name accepted, a field of its result)
%! ## and odepkgset's help documents every option of the package
%! T = odepkg ();
%! o = odepkgset ();
%! txt = evalc ("help odepkgset");
%! for i = 1:numel (T)
%!   assert (isfield (o, T(i).name), T(i).name);
%!   assert (! isempty (strfind (txt, T(i).name)) || isfield (odeset (), T(i).name), T(i).name);
%! endfor
%!test
%! ## and it drives the refusals: an option is honoured by exactly the
%! ## solvers the table names (the others refuse it with its name)
%! T = odepkg ();
%! row = T(strcmp ({T.name}, "NodeOutput"));
%! assert (row.solvers, {"odeSPVI"});
%! try
%!   odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0], odepkgset ("NodeOutput", "on"));
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:unsupportedOption");
%!   assert (! isempty (strfind (err.message, "odeSPVI")));
%! end_try_catch
%!test
%! ## every doc page the help text names exists: in the installed package
%! ## (pkg install copies doc/) or, in the source tree, beside inst/
%! here = fileparts (which ("odepkg"));
%! d = fullfile (here, "doc");
%! if (! isfolder (d))
%!   d = fullfile (here, "..", "doc");
%! endif
%! txt = evalc ("help odepkg");
%! pages = unique (cellfun (@(c) c{1}, regexp (txt, 'doc/([a-z-]+\.md)', "tokens"), "UniformOutput", false));
%! assert (numel (pages) >= 13);
%! for i = 1:numel (pages)
%!   assert (isfile (fullfile (d, pages{i})), pages{i});
%! endfor
%!test
%! ## citation ("odepkg") prints the package's CITATION (installed package only)
%! if (! isempty (pkg ("list", "odepkg")))
%!   txt = evalc ("citation ('odepkg')");
%!   assert (! isempty (strfind (txt, "Hairer")));
%!   assert (! isempty (strfind (txt, "McLachlan")));
%! endif
