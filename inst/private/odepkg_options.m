## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{o}, @var{same_again}] =} odepkg_options (@var{solver}, @var{opts}, @var{n})
## Merge the user's options over the package defaults and validate every one
## the solvers read, with an @code{odepkg:invalidOption} error naming it.
## Fields absent from @var{opts} (odeget errors on them) read as empty.
## @var{same_again}: false when this call warned (a caller's memo of @var{o}
## must not skip the warning next time).
## @end deftypefn

function [o, same_again] = odepkg_options (solver, opts, n)

  ## Work done once per solver, not per call (issue 40): the defaults,
  ## validated and in the table's spelling, the index of every name, and
  ## the names SOLVER honours.  A call then reads and validates only the
  ## options given (non-empty fields of OPTS), so its cost grows with them,
  ## not with the table.
  persistent cache = struct ();
  ## The last few calls' results per solver, returned again for the same
  ## OPTS (equal content, __odepkg_same__) and N: a loop of runs with a few
  ## options structs validates each once (about 0.3 ms of a short run).
  persistent memo = struct ();
  if (isfield (memo, solver))
    recent = memo.(solver);
    for i = 1:numel (recent)
      if (recent{i}.n == n && __odepkg_same__ (recent{i}.opts, opts))
        o = recent{i}.o;
        same_again = true;
        return;
      endif
    endfor
  endif
  if (isfield (cache, solver))
    c = cache.(solver);
  else
    c = solver_table (solver);
    if (isvarname (solver))
      cache.(solver) = c;
    endif
  endif
  T = c.T;
  o = c.defaults;

  fn = fieldnames (opts);
  given = ! cellfun ("isempty", struct2cell (opts));
  fn = fn(given);
  known = isfield (c.index, fn);       # builtin lookups: no ismember
  for j = find (known(:).')
    name = fn{j};
    v = opts.(name);
    i = c.index.(name);
    ## Validation by kind; on/off and choice values are returned in the
    ## table's spelling, so the compiled side (case-sensitive) reads what
    ## this check accepted.
    switch (T(i).kind)
      case "positive"
        positive_scalar (solver, name, v);
      case "count"
        positive_integer (solver, name, v);
      case "onoff"
        v = on_off (solver, name, v);
      case "handle"
        if (! is_function_handle (v))
          bad (solver, name, "a function handle");
        endif
      case "choice"
        v = choice (solver, name, v, T(i).values);
    endswitch
    o.(name) = v;
  endfor

  if (! isempty (o.Order) && ! (isnumeric (o.Order) && isreal (o.Order) && isscalar (o.Order)
                                && any (o.Order == [2, 4, 6, 8, 10])))
    bad (solver, "Order", "2, 4, 6, 8 or 10 (the order of the recommended composition method)");
  endif

  warned = false;
  if (o.RelTol < 100 * eps)
    ## As MATLAB's solvers: below this the step-doubling estimate is round-off
    ## and the steps would creep (an error of exactly 0 is "accepted").
    warning ("odepkg:relTolTooSmall",
             "%s: RelTol = %g is below 100*eps; using 100*eps = %g", solver, o.RelTol, 100 * eps);
    o.RelTol = 100 * eps;
    warned = true;                     # not memoized: the warning is given on every call
  endif
  if (! (isnumeric (o.AbsTol) && isreal (o.AbsTol) && all (o.AbsTol(:) > 0)
         && any (numel (o.AbsTol) == [1, n])))
    bad (solver, "AbsTol", "a positive scalar or a vector with one entry per state component");
  endif
  constrained = any (strcmp (solver, {"odeRATTLE", "odeSHAKE"}));
  if (! constrained && (! strcmp (o.ConstraintVariables, "q") || ! isempty (o.BaseMethod)
                        || ! isempty (o.ConstraintFlowFcn)))
    error ("odepkg:invalidOption",
           "%s: options ConstraintVariables, BaseMethod and ConstraintFlowFcn are for odeRATTLE and odeSHAKE",
           solver);
  endif
  if (! strcmp (solver, "odeRATTLie") && (! isempty (o.LieGroup) || ! isempty (o.MassMatrix)))
    error ("odepkg:unsupportedOption",
           "%s: options LieGroup and MassMatrix are for odeRATTLie (configuration spaces that are Lie groups)",
           solver);
  endif
  if (! isempty (o.ConstraintFlowFcn) && ! strcmp (o.ConstraintVariables, "qp"))
    bad (solver, "ConstraintFlowFcn",
         'given with ConstraintVariables "qp" only (holonomic fibres p - G(q)'' s are taken in closed form)');
  endif
  if (! isempty (o.OutputSel)
      && ! (isnumeric (o.OutputSel) && isreal (o.OutputSel)
            && all (o.OutputSel(:) == fix (o.OutputSel(:)))
            && all (o.OutputSel(:) >= 1 & o.OutputSel(:) <= n)))
    bad (solver, "OutputSel", sprintf ("a vector of indices between 1 and %d", n));
  endif
  if (! isempty (o.ConstraintFcn) && isempty (o.ConstraintsNb))
    bad (solver, "ConstraintsNb", "given with ConstraintFcn (the number of constraints)");
  endif
  if (isempty (o.NonholonomicFcn) != isempty (o.NonholonomicsNb))
    error ("odepkg:invalidOption",
           '%s: options "NonholonomicFcn" (A(q), k-by-d) and "NonholonomicsNb" (k) are given together', solver);
  endif
  ## (odeRATTLie: against the group's dimension, in the compiled code)
  if (! isempty (o.NonholonomicsNb) && ! strcmp (solver, "odeRATTLie")
      && o.NonholonomicsNb + ifelse_empty (o.ConstraintsNb, 0) >= n / 2)
    error ("odepkg:invalidOption",
           '%s: options "NonholonomicsNb" + "ConstraintsNb" (%d + %d) must be smaller than the dimension of q (%d)',
           solver, o.NonholonomicsNb, ifelse_empty (o.ConstraintsNb, 0), n / 2);
  endif
  if (! isempty (o.ConstraintsNb) && o.ConstraintsNb >= n / 2 && ! strcmp (solver, "odeRATTLie"))
    bad (solver, "ConstraintsNb",
         sprintf ("smaller than the dimension of q (%d)", n / 2));
  endif
  reversible_step_control (solver, o);
  compensated_summation (solver, o);
  ## options given that SOLVER does not honour: refused, with the reason
  refuse = ! isfield (c.honoured, fn);
  if (c.refuses && any (refuse))
    honoured_or_refused (solver, opts, fn(refuse), T);
  endif

  same_again = ! warned;
  if (! warned && isvarname (solver))
    recent = {};
    if (isfield (memo, solver))
      recent = memo.(solver)(1:min (end, 3));
    endif
    memo.(solver) = [{struct("opts", {opts}, "n", n, "o", {o})}, recent];
  endif

endfunction

## What odepkg_options computes once per solver: the table T, its names,
## the defaults validated and normalised as a given value would be, and the
## names SOLVER honours (all of them for a caller that is not a solver).
function c = solver_table (solver)
  T = odepkg_option_table ();
  names = {T.name};
  o = cell2struct ({T.default}(:), names(:), 1);
  for i = 1:numel (T)
    v = o.(names{i});
    if (isempty (v))
      continue;
    endif
    switch (T(i).kind)
      case "onoff"
        o.(names{i}) = on_off (solver, names{i}, v);
      case "choice"
        o.(names{i}) = choice (solver, names{i}, v, T(i).values);
    endswitch
  endfor
  solvers = {"odeSE", "odeSV", "odeVV", "odeRATTLE", "odeSHAKE", "odeSPVI", "odeRATTLie"};
  refuses = any (strcmp (solver, solvers));
  honoured = names;
  if (refuses)
    honours = @(row) ischar (row.solvers) || any (strcmp (solver, row.solvers));
    honoured = names(arrayfun (honours, T));
  endif
  ## name -> row of T, and the honoured names, as structs for isfield
  c = struct ("T", T, "index", cell2struct (num2cell (1:numel (T)), names, 2), "defaults", o,
              "honoured", cell2struct (cell (size (honoured)), honoured, 2), "refuses", refuses);
endfunction

## StepControl "reversible" (Hairer and Söderlind 2005) needs a symmetric
## method and its own steps: refused, with the reason, elsewhere.
function reversible_step_control (solver, o)
  for name = {"StepDensityFcn", "StepDensityEps", "InitialStepDensity"}
    if (! isempty (o.(name{1})) && ! strcmp (o.StepControl, "reversible"))
      bad (solver, name{1}, 'given with StepControl "reversible"');
    endif
  endfor
  e = o.StepDensityEps;
  if (! isempty (e) && ! (isnumeric (e) && isreal (e) && any (numel (e) == [1, 2])
                          && all (e(:) > 0 & e(:) < Inf)))
    bad (solver, "StepDensityEps", "a positive finite eps, or [first_eps, eps] (from sol.stepdensity)");
  endif
  if (! strcmp (o.StepControl, "reversible"))
    return;
  endif
  switch (solver)
    case {"odeSE", "odeSHAKE"}
      error ("odepkg:unsupportedOption",
             '%s: StepControl "reversible" needs a symmetric method; %s is not symmetric (use odeSV or odeRATTLE)',
             solver, solver);
    case "odeSPVI"
      error ("odepkg:unsupportedOption",
             '%s: StepControl "reversible" is not yet implemented for %s (it is for odeSV, odeVV, odeRATTLE and odeRATTLie)',
             solver, solver);
    case "odeRATTLE"
      ## Geometric RATTLE is symmetric over a symmetric base method
      ## (McLachlan, Modin, Verdier, Wilkins 2014, Prop. 4.9)
      if (strcmp (o.BaseMethod, "symplectic_euler"))
        error ("odepkg:unsupportedOption",
               '%s: StepControl "reversible" needs a symmetric method; RATTLE over BaseMethod "symplectic_euler" is not (use BaseMethod "midpoint" or "stormer_verlet")',
               solver);
      endif
  endswitch
  if (! isempty (o.TimeStepSize) || ! isempty (o.TimeStepNumber))
    error ("odepkg:invalidOption",
           '%s: StepControl "reversible" chooses the steps itself: remove TimeStepSize and TimeStepNumber',
           solver);
  endif
endfunction

## CompensatedSummation: implemented in the explicit Störmer-Verlet and
## velocity Verlet (and compositions of them), under fixed steps and step
## doubling.
function compensated_summation (solver, o)
  if (! strcmp (o.CompensatedSummation, "on"))
    return;
  endif
  if (strcmp (solver, "odeSV") && ! strcmp (o.Explicit, "on"))
    error ("odepkg:unsupportedOption",
           '%s: option "CompensatedSummation" is implemented for the explicit scheme only (add "Explicit", "yes" for a separable H)',
           solver);
  endif
  if (strcmp (o.StepControl, "reversible"))
    error ("odepkg:unsupportedOption",
           '%s: option "CompensatedSummation" is not yet implemented with StepControl "reversible" (fixed steps or step doubling)',
           solver);
  endif
endfunction

function bad (solver, name, what)
  error ("odepkg:invalidOption", '%s: option "%s" must be %s', solver, name, what);
endfunction

function positive_scalar (solver, name, v)
  if (! (isnumeric (v) && isreal (v) && isscalar (v) && v > 0 && v < Inf))
    bad (solver, name, "a positive finite scalar");
  endif
endfunction

function positive_integer (solver, name, v)
  if (! (isnumeric (v) && isreal (v) && isscalar (v) && v >= 1 && v == fix (v) && v < Inf))
    bad (solver, name, "a positive integer");
  endif
endfunction

## "on"/"yes" or "off"/"no" in any case, or a logical/numeric scalar:
## returned as "on" or "off".
function v = on_off (solver, name, v)
  if (ischar (v) && any (strcmpi (v, {"on", "yes"})))
    v = "on";
  elseif (ischar (v) && any (strcmpi (v, {"off", "no"})))
    v = "off";
  elseif ((islogical (v) || isnumeric (v)) && isscalar (v) && isreal (v) && ! isnan (v))
    v = ifelse_onoff (v != 0);
  else
    bad (solver, name, '"on"/"yes" or "off"/"no"');
  endif
endfunction

function s = ifelse_onoff (b)
  if (b)
    s = "on";
  else
    s = "off";
  endif
endfunction

## One of VALUES, in any case (empty: the solver's default); returned as
## spelled in the table.
function v = choice (solver, name, v, values)
  if (isempty (v))
    return;
  endif
  k = [];
  if (ischar (v) && isrow (v))
    k = find (strcmpi (v, values), 1);
  endif
  if (isempty (k))
    list = sprintf ('"%s", ', values{:});
    bad (solver, name, sprintf ("one of %s", list(1:end-2)));
  endif
  v = values{k};
endfunction

## Every option is honoured or refused, never ignored: the non-empty fields
## NAMES of OPTS that SOLVER does not honour (per odepkg_option_table) are an
## odepkg:unsupportedOption error naming the first of them and what to do
## instead.
function honoured_or_refused (solver, opts, names, T)
  ## odeset's options the package has no use for, with the remedy
  foreign = struct (
    "Mass", "put the kinetic energy (the mass matrix) into f (odeRATTLie: option MassMatrix)",
    "MassSingular", "mass matrices are not supported: put the kinetic energy into f",
    "MStateDependence", "mass matrices are not supported: put the kinetic energy into f",
    "MvPattern", "mass matrices are not supported: put the kinetic energy into f",
    "Jacobian", "give the Hessian of H with HamiltonianHessFcn",
    "JPattern", "the Newton matrices are dense; give HamiltonianHessFcn for speed",
    "JConstant", "a constant Hessian is detected and reused automatically",
    "NonNegative", "it is not meaningful for a symplectic map (it would break symplecticity)",
    "BDF", "it is an option of ode15s",
    "MaxOrder", "it is an option of ode15s",
    "InitialSlope", "it is an option of ode15i");
  for i = 1:numel (names)
    name = names{i};
    v = opts.(name);
    if (any (strcmp (name, {"Explicit", "CompensatedSummation"}))
        && ((ischar (v) && any (strcmpi (v, {"no", "off"})))
            || ((islogical (v) || isnumeric (v)) && isscalar (v) && ! v)))
      continue;                          # "no": what all these solvers do without the option
    endif
    if (isfield (foreign, name))
      error ("odepkg:unsupportedOption", '%s: option "%s" is not supported: %s', solver, name,
             foreign.(name));
    endif
    row = T(strcmp (name, {T.name}));
    if (isempty (row))
      error ("odepkg:unsupportedOption",
             '%s: unknown option "%s" (build the options with odepkgset, which checks the names)',
             solver, name);
    endif
    error ("odepkg:unsupportedOption", '%s: option "%s" is not used by %s; it is an option of %s',
           solver, name, solver, strjoin (row.solvers, ", "));
  endfor
endfunction

## V, or D where V is empty.
function v = ifelse_empty (v, d)
  if (isempty (v))
    v = d;
  endif
endfunction
