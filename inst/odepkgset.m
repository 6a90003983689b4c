## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{opts} =} odepkgset ()
## @deftypefnx {} {@var{opts} =} odepkgset (@var{name}, @var{value}, @dots{})
## @deftypefnx {} {@var{opts} =} odepkgset (@var{old}, @var{name}, @var{value}, @dots{})
## @deftypefnx {} {@var{opts} =} odepkgset (@var{old}, @var{new})
## Build an options struct for the odepkg solvers, like @code{odeset}.
##
## The result has every field of @code{odeset} plus the package's own options,
## so it can be passed to @code{ode45} too.  Unlike Octave's @code{odeset} it
## does not warn about the package's option names, and it @emph{rejects}
## misspelled names (error @code{odepkg:unknownOption}, naming the closest
## known option).  Names are matched case-insensitively.  With a struct
## @var{old} the given options are changed in a copy of it; with two structs,
## the non-empty fields of @var{new} override those of @var{old}.
##
## To change an options struct, call @code{odepkgset (@var{old}, @var{name},
## @var{value}, @dots{})}.  @code{odeset (@var{old}, @dots{})} works too but
## warns once (@qcode{"unknown option"}) for every package option in
## @var{old}, set or empty: Octave's @code{odeset} knows none of the
## package's names.  An empty @var{value}
## clears an option (e.g. @qcode{"TimeStepSize"}, @code{[]} to go from fixed
## to adaptive steps).
##
## Package options:
## @table @asis
## @item @qcode{"Explicit"}
## @qcode{"yes"} for separable H = T(p) + V(q): explicit schemes, fewest calls.
## Your claim, verified at t0 and during the run (@code{odepkg:notSeparable});
## never chosen automatically, since a probe at one point cannot prove it.
## @item @qcode{"TimeStepSize"}, @qcode{"TimeStepNumber"}
## Fixed steps of this size; with a scalar @var{tspan}, that many of them.
## @item @qcode{"StepControl"}
## Adaptive steps by @qcode{"doubling"} (default: step doubling, the energy
## error drifts) or @qcode{"reversible"} (odeSV, odeVV, odeRATTLE,
## odeRATTLie: a time-reversible step density, Hairer and Söderlind 2005, no
## drift).  @qcode{"reversible"} needs a symmetric method: also with
## @qcode{"Composition"}/@qcode{"Order"} (error O(eps^p) at order p) and
## with the geometric RATTLE (@qcode{"ConstraintVariables"}, @qcode{"qp"},
## or a @qcode{"BaseMethod"}) over @qcode{"midpoint"} or
## @qcode{"stormer_verlet"}; refused for odeSE, odeSHAKE, BaseMethod
## @qcode{"symplectic_euler"} and odeSPVI.
## @item @qcode{"StepDensityFcn"}
## With @qcode{"reversible"}: @code{G = fcn (@var{t}, y)}, the logarithmic
## derivative (d rho/dt) / rho of your step density rho(y) along the
## solution (steps h = eps / rho), or @code{[G; rho]}: with rho, a rate
## (1/time), the run starts from rho(y0) and eps comes from RelTol; default
## the rate rho = sqrt ((|q'|/|p|) (|p'|/|q|)), the same in any units
## (odeRATTLie: the speed |(v, v')| in the Lie algebra, see odeRATTLie).
## How RelTol, AbsTol and InitialStep set eps: @code{help odeSV}.
## @item @qcode{"StepDensityEps"}, @qcode{"InitialStepDensity"}
## With @qcode{"reversible"}: eps (or [first_eps, eps]) and rho at t0, to
## continue or reverse a run exactly from its @code{sol.stepdensity}.
## @item @qcode{"Progress"}
## Long runs say how far they are: @qcode{"text"} (one line in the terminal,
## rewritten: percent of the span, elapsed time, an estimate of the rest),
## @qcode{"waitbar"}, or @qcode{"on"} (a waitbar when the GUI runs, else
## text); @qcode{"off"} by default.  Driven by the compiled loop, at most four
## updates a second, with or without your own OutputFcn.
## @item @qcode{"HamiltonianHessFcn"}
## @code{@var{H} = fcn (@var{t}, [q; p])}, the 2d-by-2d Hessian of H in (q, p)
## order, used for Newton's Jacobian (finite differences otherwise).
## @item @qcode{"NewtonTol"}, @qcode{"MaxNewtonIterations"}
## Tolerance on the scaled Newton correction (default 1e-12) and the iteration
## budget per solve (default 30).
## @item @qcode{"DerivativeCheck"}
## @qcode{"on"} (default): the derivatives you give (HamiltonianHessFcn,
## ConstraintGradFcn, ConstraintHessFcn, a LieGroup struct) are checked once
## before the first step against differences along random directions (a few
## calls whatever the dimension); a mismatch is the error
## @code{odepkg:derivativeCheck}.  @qcode{"off"} skips the check.
## @item @qcode{"ConstraintFcn"}, @qcode{"ConstraintGradFcn"}, @qcode{"ConstraintHessFcn"}, @qcode{"ConstraintsNb"}
## Holonomic constraints g(q) = 0 (m-by-1), their gradient (m-by-d) and
## Hessians (d-by-d-by-m), and m (odeRATTLE, odeSHAKE).
## @item @qcode{"NonholonomicFcn"}, @qcode{"NonholonomicsNb"}
## odeRATTLE: velocity constraints A(q) H_p = 0 that are not derivatives of
## position constraints (rolling without slipping, skates, knife edges):
## @code{A = fcn (q)}, k-by-d, and k (k + m < d).  With or without the
## holonomic ConstraintFcn; H must be separable.  The multipliers mu of
## p' = -H_q - G' lambda - A' mu are @code{sol.mu} with
## @qcode{"MonitorMultipliers"} @qcode{"on"}.  odeRATTLie: B_nh(q) v = 0
## on the body velocities, @code{B = fcn (q)} k-by-n (k + m < n, the
## group's dimension); @code{sol.mu} always.
## @item @qcode{"ConstraintVariables"}
## @qcode{"q"} (default): the constraint functions take q; @qcode{"qp"}: they
## take the whole state y = [q; p] (coisotropic constraints g(q, p) = 0,
## geometric SHAKE/RATTLE of McLachlan, Modin, Verdier, Wilkins 2014),
## gradient m-by-2d, Hessians
## 2d-by-2d-by-m.
## @item @qcode{"ConstraintFlowFcn"}
## @code{z = fcn (y, s)}: the fibre flow exp(s_1 X_g1 + @dots{} + s_m X_gm)(y)
## of the Hamiltonian vector fields X_g = J grad g (q' = dg/dp, p' = -dg/dq),
## for @qcode{"qp"} constraints; integrated numerically when absent.
## @item @qcode{"BaseMethod"}
## The symplectic map under geometric SHAKE/RATTLE: @qcode{"stormer_verlet"}
## (default for g(q): classical RATTLE), @qcode{"midpoint"} (default for
## g(q, p)) or @qcode{"symplectic_euler"} (order 1).
## @item @qcode{"Composition"}, @qcode{"Order"}
## odeSV, odeVV, odeRATTLE, odeRATTLie: raise the order by a symmetric composition of
## the method's steps (Hairer, Lubich, Wanner, Sect. V.3), keeping it
## symplectic and symmetric: a table name (@qcode{"TripleJump4"},
## @qcode{"Suzuki4"}, @qcode{"McLachlan4"}, @qcode{"Yoshida6"},
## @qcode{"KahanLi6"}, @qcode{"McLachlan8"}, @qcode{"KahanLi8"},
## @qcode{"SofroniouSpaletta10"}), or an order 2, 4, 6, 8, 10 for the
## recommended table of that order.
## @item @qcode{"Threads"}
## odeSE, odeSV, odeVV, odeRATTLE: ensembles of a model of
## @code{odepkg_model} (@var{y0} with K columns): the number of threads
## evaluating the members' compiled kernels, which need no interpreter.
## Default: the machine's cores, at most one thread per 64 members.  The
## results do not depend on it (each member is computed by the same code
## whatever thread runs it).  Refused for a single trajectory, a function
## handle, and the schemes that run the members one after the other.
## @item @qcode{"CompensatedSummation"}
## odeSV (with @qcode{"Explicit"}), odeVV: @qcode{"on"} sums the state
## updates q_@{n+1@} = q_n + dq, p_@{n+1@} = p_n + dp with a compensation
## vector carried across steps and across a composition's substeps (Kahan;
## Hairer, McLachlan, Razakarivony, "Achieving Brouwer's law with implicit
## Runge-Kutta methods", BIT 48, 2008).  Over millions of fixed steps the
## round-off of the plain sums, a random walk, and not the method then
## limits the energy error (measured over 10^7 steps: @file{doc/high-order.md}).
## Default @qcode{"off"}.
## @item @qcode{"LieGroup"}, @qcode{"MassMatrix"}
## odeRATTLie: the configuration group (a name such as @qcode{"SO3"},
## @qcode{"S3xR3"}, @qcode{"Rn"}, or a struct of its operations) and the
## constant n-by-n mass matrix (default the identity).
## @item @qcode{"HamiltonianFcn"}, @qcode{"InvariantFcn"}
## Monitoring, off by default: @code{H = fcn (@var{t}, y)} and a vector of
## first integrals @code{I = fcn (@var{t}, y)}, evaluated at the output
## times only, at the cost of their own calls: @code{sol.invariants}
## (values and largest deviation).
## @item @qcode{"MonitorMultipliers"}
## Constrained solvers: @qcode{"on"} adds @code{sol.lambda} (the multipliers
## at the output times) and @code{sol.residuals} (|g| and |Dg f|), computed
## after the run (2m + 3 calls of f per output, counted in @code{sol.stats});
## default @qcode{"off"}.
## @item @qcode{"OnFailure"}
## A step that cannot be completed in the middle of a run (Newton fails, no
## root near the unconstrained step, a singular configuration, non-finite
## values): @qcode{"warning"} (default, as @code{ode45}: the solution so far
## with the warning @code{odepkg:integrationFailed}) or @qcode{"error"} (that
## identifier, or @code{odepkg:singularConstraints}, as an error; for
## sampling loops).
## @item @qcode{"InitialProjection"}
## What to do when the initial data violate the constraints:
## @qcode{"warn"} (project and warn, default) or @qcode{"error"}.
## @item @qcode{"Q_DoFs"}, @qcode{"P_DoFs"}, @qcode{"Nodes"}, @qcode{"Weights"}, @qcode{"Legendre"}, @qcode{"Derivatives"}, @qcode{"Extremes"}
## Spectral variational integrator (odeSPVI) settings.
## @item @qcode{"NodeOutput"}
## odeSPVI: @qcode{"on"} also outputs the states at the Gauss nodes inside
## every step (default @qcode{"off"}).
## @end table
##
## Example:
## @example
## opts = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 1000, "Explicit", "yes");
## [t, y] = odeSV (@@(t, x) [x(2); -x(1)], 0, [1; 0], opts);
## adaptive = odepkgset (opts, "TimeStepSize", [], "TimeStepNumber", [], "RelTol", 1e-8);
## @end example
## @seealso{odeset, odeSV, odeSE, odeVV}
## @end deftypefn

function opts = odepkgset (varargin)

  ## odeset's fields, then the package's own from its option table
  opts = odeset ();
  T = odepkg_option_table ();
  for i = 1:numel (T)
    if (! isfield (opts, T(i).name))
      opts.(T(i).name) = [];
    endif
  endfor
  names = fieldnames (opts);

  k = 1;
  while (k <= nargin && isstruct (varargin{k}))
    s = varargin{k};
    if (! isscalar (s))
      error ("odepkg:invalidInput", "odepkgset: struct arguments must be scalar");
    endif
    fn = fieldnames (s);
    for i = 1:numel (fn)
      if (k == 1 || ! isempty (s.(fn{i})))
        opts.(canonical (fn{i}, names)) = s.(fn{i});
      endif
    endfor
    k += 1;
  endwhile
  if (mod (nargin - k + 1, 2) != 0)
    error ("odepkg:invalidInput",
           "odepkgset: options must be given as NAME, VALUE pairs");
  endif
  for i = k:2:nargin
    if (! ischar (varargin{i}))
      error ("odepkg:invalidInput",
             "odepkgset: option name %d must be a string", (i - k) / 2 + 1);
    endif
    opts.(canonical (varargin{i}, names)) = varargin{i+1};
  endfor

endfunction

function name = canonical (name, names)
  idx = find (strcmpi (name, names), 1);
  if (isempty (idx))
    ## funarguments is set by the solvers themselves (Octave's convention)
    if (strcmp (name, "funarguments"))
      return;
    endif
    ## The hint is bounded: a name much longer than every option name is no
    ## typo of one (no hint, no distance computed), and the distance itself
    ## is vectorized over each row, so the cost is at most
    ## numel (names) * (L + 4) short vector operations, L the longest name.
    L = max (cellfun (@numel, names));
    shown = name;
    if (numel (shown) > 64)
      shown = [shown(1:60), "..."];
    endif
    if (numel (name) > L + 4)
      error ("odepkg:unknownOption",
             'odepkgset: unknown option "%s" (%d characters; no option name is longer than %d)',
             shown, numel (name), L);
    endif
    d = cellfun (@(n) edit_distance (lower (name), lower (n)), names);
    [~, j] = min (d);
    error ("odepkg:unknownOption",
           'odepkgset: unknown option "%s" (did you mean "%s"?)', shown, names{j});
  endif
  name = names{idx};
endfunction

function d = edit_distance (a, b)
  ## Levenshtein distance, for the "did you mean" hint: one row at a time,
  ## vectorized (insertions along the row are a running minimum:
  ## D(i,j) = min_k (c(k) + j - k) = j + cummin (c - k)).
  m = numel (a);  n = numel (b);
  prev = 0:n;
  k = 0:n;
  for i = 1:m
    c = [i, min(prev(2:end) + 1, prev(1:end-1) + (a(i) != b))];
    prev = k + cummin (c - k);
  endfor
  d = prev(end);
endfunction

%!test
%! o = odepkgset ("timestepsize", 0.1, "Explicit", "yes", "RelTol", 1e-6);
%! assert (o.TimeStepSize, 0.1);
%! assert (o.Explicit, "yes");
%! assert (o.RelTol, 1e-6);
%! assert (isfield (o, "AbsTol") && isempty (o.AbsTol));
%!test
%! ## no warning from odeset about the package's names
%! lastwarn ("");
%! o = odepkgset ("ConstraintsNb", 2, "Q_DoFs", 3);
%! assert (lastwarn (), "");
%! assert (o.ConstraintsNb, 2);
%!test
%! ## modify a copy; merge two structs (empties do not override)
%! a = odepkgset ("RelTol", 1e-4, "TimeStepSize", 0.5);
%! b = odepkgset (a, "TimeStepSize", 0.25);
%! assert ([b.RelTol, b.TimeStepSize, a.TimeStepSize], [1e-4, 0.25, 0.5]);
%! c = odepkgset (a, odepkgset ("AbsTol", 1e-9));
%! assert ([c.RelTol, c.AbsTol, c.TimeStepSize], [1e-4, 1e-9, 0.5]);
%!test
%! ## odepkgset (o, ...) changes an odepkgset struct without a single warning
%! ## (odeset (o, ...) warns once per package option in o), keeps every
%! ## field, and an empty value clears an option
%! o = odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 50, "Explicit", "yes");
%! lastwarn ("");
%! out = evalc ('o2 = odepkgset (o, "TimeStepSize", [], "TimeStepNumber", [], "RelTol", 1e-8);');
%! assert (out, "");
%! assert (lastwarn (), "");
%! assert (sort (fieldnames (o2)), sort (fieldnames (o)));
%! assert (isempty (o2.TimeStepSize) && isempty (o2.TimeStepNumber));
%! assert ([o2.RelTol, o.TimeStepSize], [1e-8, 0.1]);
%! assert (o2.Explicit, "yes");
%!test
%! ## the number of warnings odeset (o, ...) gives for an odepkgset struct,
%! ## as the help texts state it (odepkgset, odepkg, README): one per package
%! ## option; update those texts when an option is added
%!test
%! ## a struct that went through odeset (o, ...) comes back unchanged
%! o = odepkgset ("TimeStepSize", 0.1, "Q_DoFs", 4);
%! w = warning ("off", "Octave:invalid-input-arg");
%! unwind_protect
%!   o1 = odeset (o, "RelTol", 1e-3);
%! unwind_protect_cleanup
%!   warning (w);
%! end_unwind_protect
%! o2 = odepkgset (o1, "AbsTol", 1e-9);
%! assert ([o2.TimeStepSize, o2.Q_DoFs, o2.RelTol, o2.AbsTol], [0.1, 4, 1e-3, 1e-9]);
%!test
%! ## an odeset struct is accepted as OLD
%! o = odepkgset (odeset ("RelTol", 1e-5), "Explicit", "no");
%! assert (o.RelTol, 1e-5);
%!error <unknown option "TimeStepSise" \(did you mean "TimeStepSize"\?\)> odepkgset ("TimeStepSise", 0.1)
%!error <NAME, VALUE pairs> odepkgset ("RelTol")
%!error <option name 1 must be a string> odepkgset (3, 4)
%!error <must be scalar> odepkgset (struct ("a", {1, 2}))
%!test
%! ## the "did you mean" hint is bounded: a 3,000-character name in < 0.5 s
%! nm = repmat ("x", 1, 3000);
%! tic ();
%! try
%!   odepkgset (nm, 1);
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:unknownOption");
%! end_try_catch
%! assert (toc () < 0.5);
%!test
%! ## ordinary typos still get the right suggestion
%! try
%!   odepkgset ("RelTo", 1e-3);
%!   error ("not refused");
%! catch err
%!   assert (err.identifier, "odepkg:unknownOption");
%!   assert (! isempty (strfind (err.message, 'did you mean "RelTol"?')));
%! end_try_catch
%!error <did you mean "MaxStep"\?> odepkgset ("maxstp", 1)
%!error <did you mean "TimeStepNumber"\?> odepkgset ("TimeStepNumbr", 1)
