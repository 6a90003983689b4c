## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{o} =} odepkg_options (@var{solver}, @var{opts}, @var{n})
## Merge the user's options over the package defaults and validate every one
## the solvers read, with an @code{odepkg:invalidOption} error naming it.
## Fields absent from @var{opts} (odeget errors on them) read as empty.
## @end deftypefn

function o = odepkg_options (solver, opts, n)

  defaults = struct ("RelTol", 1e-3, "AbsTol", 1e-6, "NormControl", "off",
                     "InitialStep", [], "MaxStep", [], "OutputFcn", [],
                     "OutputSel", [], "Stats", "off", "Explicit", "no",
                     "TimeStepSize", [], "TimeStepNumber", [],
                     "HamiltonianHessFcn", [], "NewtonTol", [],
                     "MaxNewtonIterations", 30, "ConstraintFcn", [],
                     "ConstraintGradFcn", [], "ConstraintHessFcn", [],
                     "ConstraintsNb", [], "InitialProjection", "warn",
                     "Q_DoFs", [], "P_DoFs", [], "Nodes", [], "Weights", [],
                     "Legendre", [], "Derivatives", [], "Extremes", [], "NodeOutput", "off",
                     "ConstraintVariables", "q", "ConstraintFlowFcn", [], "BaseMethod", [],
                     "LieGroup", [], "MassMatrix", [], "Events", [], "Refine", 1);
  o = defaults;
  fn = fieldnames (defaults);
  for i = 1:numel (fn)
    if (isfield (opts, fn{i}) && ! isempty (opts.(fn{i})))
      o.(fn{i}) = opts.(fn{i});
    endif
  endfor

  positive_scalar (solver, o, {"RelTol", "InitialStep", "MaxStep", ...
                                "TimeStepSize", "NewtonTol"});
  positive_integer (solver, o, {"TimeStepNumber", "MaxNewtonIterations", ...
                                 "ConstraintsNb", "Refine"});
  if (o.RelTol < 100 * eps)
    ## As MATLAB's solvers: below this the step-doubling estimate is round-off
    ## and the steps would creep (an error of exactly 0 is "accepted").
    warning ("odepkg:relTolTooSmall",
             "%s: RelTol = %g is below 100*eps; using 100*eps = %g", solver, o.RelTol, 100 * eps);
    o.RelTol = 100 * eps;
  endif
  if (! (isnumeric (o.AbsTol) && isreal (o.AbsTol) && all (o.AbsTol(:) > 0)
         && any (numel (o.AbsTol) == [1, n])))
    bad (solver, "AbsTol", "a positive scalar or a vector with one entry per state component");
  endif
  on_off (solver, o, {"NormControl", "Stats", "Explicit", "NodeOutput"});
  handles (solver, o, {"OutputFcn", "Events", "HamiltonianHessFcn", "ConstraintFcn", ...
                       "ConstraintGradFcn", "ConstraintHessFcn", "ConstraintFlowFcn"});
  if (! (ischar (o.ConstraintVariables) && any (strcmp (o.ConstraintVariables, {"q", "qp"}))))
    bad (solver, "ConstraintVariables", '"q" (g(q), the default) or "qp" (g(q, p))');
  endif
  if (! isempty (o.BaseMethod)
      && ! (ischar (o.BaseMethod)
            && any (strcmp (o.BaseMethod, {"stormer_verlet", "midpoint", "symplectic_euler"}))))
    bad (solver, "BaseMethod", '"stormer_verlet", "midpoint" or "symplectic_euler"');
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
      && ! (isnumeric (o.OutputSel) && all (o.OutputSel(:) == fix (o.OutputSel(:)))
            && all (o.OutputSel(:) >= 1 & o.OutputSel(:) <= n)))
    bad (solver, "OutputSel", sprintf ("a vector of indices between 1 and %d", n));
  endif
  if (! any (strcmpi (o.InitialProjection, {"warn", "error"})))
    bad (solver, "InitialProjection", '"warn" or "error"');
  endif
  if (! isempty (o.ConstraintFcn) && isempty (o.ConstraintsNb))
    bad (solver, "ConstraintsNb", "given with ConstraintFcn (the number of constraints)");
  endif
  if (! isempty (o.ConstraintsNb) && o.ConstraintsNb >= n / 2 && ! strcmp (solver, "odeRATTLie"))
    bad (solver, "ConstraintsNb",
         sprintf ("smaller than the dimension of q (%d)", n / 2));
  endif
  honoured_or_refused (solver, opts);

endfunction

function bad (solver, name, what)
  error ("odepkg:invalidOption", '%s: option "%s" must be %s', solver, name, what);
endfunction

function positive_scalar (solver, o, names)
  for i = 1:numel (names)
    v = o.(names{i});
    if (! isempty (v) && ! (isnumeric (v) && isreal (v) && isscalar (v) && v > 0
                            && v < Inf))
      bad (solver, names{i}, "a positive finite scalar");
    endif
  endfor
endfunction

function positive_integer (solver, o, names)
  for i = 1:numel (names)
    v = o.(names{i});
    if (! isempty (v) && ! (isnumeric (v) && isreal (v) && isscalar (v) && v >= 1
                            && v == fix (v) && v < Inf))
      bad (solver, names{i}, "a positive integer");
    endif
  endfor
endfunction

function on_off (solver, o, names)
  for i = 1:numel (names)
    v = o.(names{i});
    ok = ((ischar (v) && any (strcmpi (v, {"on", "off", "yes", "no"})))
          || ((islogical (v) || isnumeric (v)) && isscalar (v)));
    if (! ok)
      bad (solver, names{i}, '"on"/"yes" or "off"/"no"');
    endif
  endfor
endfunction

function handles (solver, o, names)
  for i = 1:numel (names)
    v = o.(names{i});
    if (! isempty (v) && ! is_function_handle (v))
      bad (solver, names{i}, "a function handle");
    endif
  endfor
endfunction

## Every option is honoured or refused, never ignored: a non-empty field of
## OPTS that SOLVER does not honour is an odepkg:unsupportedOption error
## naming it and what to do instead.  The table: options every solver
## honours, then each solver's own.
function honoured_or_refused (solver, opts)
  common = {"RelTol", "AbsTol", "NormControl", "InitialStep", "MaxStep", "OutputFcn", ...
            "OutputSel", "Stats", "TimeStepSize", "TimeStepNumber", "Vectorized", "Events", ...
            "Refine"};
  newton = {"NewtonTol", "MaxNewtonIterations"};
  constraints = {"ConstraintFcn", "ConstraintGradFcn", "ConstraintsNb", "InitialProjection"};
  own = struct ("odeSE", {[{"Explicit", "HamiltonianHessFcn"}, newton]},
                "odeSV", {[{"Explicit", "HamiltonianHessFcn"}, newton]},
                "odeVV", {{}},
                "odeRATTLE", {[{"Explicit", "HamiltonianHessFcn", "ConstraintHessFcn", ...
                                "ConstraintVariables", "ConstraintFlowFcn", "BaseMethod"}, ...
                               newton, constraints]},
                "odeSHAKE", {[{"Explicit", "HamiltonianHessFcn", "ConstraintHessFcn", ...
                               "ConstraintVariables", "ConstraintFlowFcn", "BaseMethod"}, ...
                              newton, constraints]},
                "odeSPVI", {[{"HamiltonianHessFcn", "Q_DoFs", "P_DoFs", "Nodes", "Weights", ...
                              "Legendre", "Derivatives", "Extremes", "NodeOutput"}, newton]},
                "odeRATTLie", {[{"LieGroup", "MassMatrix"}, newton, constraints]});
  if (! isfield (own, solver))
    return;
  endif
  honoured = [common, own.(solver)];
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
  fn = fieldnames (opts);
  for i = 1:numel (fn)
    name = fn{i};
    v = opts.(name);
    if (isempty (v) || any (strcmp (name, honoured)))
      continue;
    endif
    if (strcmp (name, "Explicit") && ((ischar (v) && any (strcmpi (v, {"no", "off"})))
                                      || ((islogical (v) || isnumeric (v)) && isscalar (v) && ! v)))
      continue;                          # "no": the implicit scheme, all these solvers have
    endif
    if (isfield (foreign, name))
      error ("odepkg:unsupportedOption", '%s: option "%s" is not supported: %s', solver, name,
             foreign.(name));
    endif
    others = {};
    sol = fieldnames (own);
    for k = 1:numel (sol)
      if (any (strcmp (name, own.(sol{k}))))
        others{end+1} = sol{k};
      endif
    endfor
    if (isempty (others))
      error ("odepkg:unsupportedOption",
             '%s: unknown option "%s" (build the options with odepkgset, which checks the names)',
             solver, name);
    endif
    error ("odepkg:unsupportedOption", '%s: option "%s" is not used by %s; it is an option of %s',
           solver, name, solver, strjoin (others, ", "));
  endfor
endfunction
