## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{model}, @var{fcn}, @var{o}, @var{cons}] =} odepkg_model_prepare (@var{solver}, @var{method}, @var{model}, @var{opts}, @var{o}, @var{extra}, @var{n})
## A native model (odepkg_model) checked for @var{solver} and made ready for
## the compiled loop: @var{model}.par holds the parameter values, read from
## the extra arguments @var{extra}; "Explicit" for a non-separable H is
## refused (the driver sets it for a separable one).  @var{fcn} and
## @var{cons} (ConstraintFcn, ConstraintGradFcn, ConstraintsNb) are handles
## on the kernels for what runs in Octave (monitoring, deval).
## @end deftypefn

function [model, fcn, o, cons] = odepkg_model_prepare (solver, method, model, opts, o, extra, n)

  ## The last call's result, returned again for the same inputs (equal
  ## content, __odepkg_same__): a loop of runs of one model checks it once.
  ## Its kernels' file is looked for on every call (a cleared cache).
  persistent last = [];
  key = {solver, method, model, o.Explicit, extra, n};
  if (! isempty (last) && __odepkg_same__ (last.key, key))
    if (! exist (model.file, "file"))
      error ("odepkg:nativeModel",
             "%s: the model's kernels %s are gone (the cache was cleared?): build the model again with odepkg_model",
             solver, model.file);
    endif
    model = last.model;  fcn = last.fcn;  cons = last.cons;
    if (last.qp)
      o.ConstraintVariables = "qp";
    endif
    return;
  endif

  if (! any (strcmp (method, {"symplectic_euler", "stormer_verlet", "rattle", "shake"})))
    error ("odepkg:invalidInput",
           "%s: does not take a model of odepkg_model yet (odeSE, odeSV, odeRATTLE and odeSHAKE do): pass a function handle",
           solver);
  endif
  need = {"file", "d", "m", "parameters", "separable"};
  if (! all (isfield (model, need)) || ! ischar (model.file))
    error ("odepkg:invalidInput", "%s: FCN is not a model built by odepkg_model", solver);
  endif
  if (! exist (model.file, "file"))
    error ("odepkg:nativeModel",
           "%s: the model's kernels %s are gone (the cache was cleared?): build the model again with odepkg_model",
           solver, model.file);
  endif
  if (n != 2 * model.d)
    error ("odepkg:invalidInput", "%s: Y0 must have 2 d = %d elements for this model (got %d)",
           solver, 2 * model.d, n);
  endif
  if (model.m > 0 && ! any (strcmp (method, {"rattle", "shake"})))
    error ("odepkg:invalidInput", "%s: the model has constraints g: use odeRATTLE or odeSHAKE", solver);
  endif
  if (model.m == 0 && any (strcmp (method, {"rattle", "shake"})))
    error ("odepkg:invalidInput", '%s: the model has no constraints: give "g" to odepkg_model', solver);
  endif

  ## parameters: the extra arguments, real numbers, one per name
  np = numel (model.parameters);
  ok = all (cellfun (@(v) isnumeric (v) && isreal (v), extra));
  par = [];
  if (ok)
    par = cellfun (@(v) double (v(:)), extra, "UniformOutput", false);
    par = vertcat (zeros (0, 1), par{:});
  endif
  if (! ok || numel (par) != np || ! all (isfinite (par)))
    error ("odepkg:invalidInput",
           "%s: the model's %d parameter(s) (%s) must follow the options as %d real, finite value(s) (got %d)",
           solver, np, strjoin (model.parameters, ", "), np, numel (par));
  endif
  model.par = par;

  ## "Explicit" (set by the driver for a separable H unless given) asked
  ## for a non-separable one
  if (strcmp (o.Explicit, "on") && ! model.separable)
    error ("odepkg:notSeparable",
           '%s: option "Explicit" asks for a separable H = T(p) + V(q), but the model''s H has H_pq != 0',
           solver);
  endif

  ## g(q, p): the options that say so, for the compiled side and for what
  ## runs here (deval's projection, monitoring)
  qp = isfield (model, "constraint_variables") && strcmp (model.constraint_variables, "qp");
  if (qp)
    o.ConstraintVariables = "qp";
  endif

  fcn = @(t, y, varargin) __odepkg_model_eval__ (model, "f", t, y, par);
  cons = struct ();
  if (model.m > 0)
    cons = struct ("ConstraintFcn", @(q, varargin) __odepkg_model_eval__ (model, "g", 0, q, par),
                   "ConstraintGradFcn", @(q, varargin) __odepkg_model_eval__ (model, "G", 0, q, par),
                   "ConstraintsNb", model.m);
    if (qp)
      cons.ConstraintVariables = "qp";
    endif
  endif
  last = struct ("key", {key}, "model", model, "fcn", fcn, "cons", cons, "qp", qp);

endfunction
