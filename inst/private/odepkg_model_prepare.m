## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{model}, @var{fcn}, @var{o}, @var{cons}] =} odepkg_model_prepare (@var{solver}, @var{method}, @var{model}, @var{opts}, @var{o}, @var{extra}, @var{n}, @var{K})
## A native model (odepkg_model) checked for @var{solver} and made ready for
## the compiled loop: @var{model}.par holds the parameter values, read from
## the extra arguments @var{extra} (np-by-@var{K} for an ensemble of @var{K}
## members: an argument with @var{K} columns gives one column per member,
## any other is shared by all); "Explicit" for a non-separable H is
## refused (the driver sets it for a separable one); odeVV needs a
## quadratic kinetic energy.  @var{fcn} and @var{cons} (ConstraintFcn,
## ConstraintGradFcn, ConstraintsNb) are handles on the kernels for what
## runs in Octave (monitoring, deval; member 1's parameters).
## @end deftypefn

function [model, fcn, o, cons] = odepkg_model_prepare (solver, method, model, opts, o, extra, n, K = 1)

  ## The last call's result, returned again for the same inputs (equal
  ## content, __odepkg_same__): a loop of runs of one model checks it once.
  ## Its kernels' file is looked for on every call (a cleared cache).
  persistent last = [];
  key = {solver, method, model, o.Explicit, extra, n, K};
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

  if (! any (strcmp (method, {"symplectic_euler", "stormer_verlet", "velocity_verlet", "rattle", "shake", ...
                              "spectral_var_int"})))
    error ("odepkg:invalidInput",
           "%s: does not take a model of odepkg_model yet (odeSE, odeSV, odeVV, odeRATTLE, odeSHAKE and odeSPVI do): pass a function handle",
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

  ## parameters: the extra arguments, real numbers, one per name (per
  ## member: np-by-K)
  np = numel (model.parameters);
  ok = all (cellfun (@(v) isnumeric (v) && isreal (v) && ismatrix (v), extra));
  par = zeros (0, K);
  if (ok)
    for i = 1:numel (extra)
      v = double (extra{i});
      if (K > 1 && columns (v) == K)
        par = [par; v];                   # one column per member
      else
        par = [par; repmat(v(:), 1, K)];  # shared
      endif
    endfor
  endif
  if (! ok || rows (par) != np || ! all (isfinite (par(:))))
    if (K > 1)
      error ("odepkg:invalidInput",
             ["%s: the model's %d parameter(s) (%s) must follow the options as real, finite values: " ...
              "in ensemble mode an argument with K = %d columns gives one value per member, any other " ...
              "is shared (got %d value(s) per member)"],
             solver, np, strjoin (model.parameters, ", "), K, rows (par));
    endif
    error ("odepkg:invalidInput",
           "%s: the model's %d parameter(s) (%s) must follow the options as %d real, finite value(s) (got %d)",
           solver, np, strjoin (model.parameters, ", "), np, rows (par));
  endif
  model.par = par;
  par = par(:, 1);

  ## odeVV: the state [q; v], v = H_p = M^-1 p, needs T = p' M^-1 p / 2
  ## with M constant (the model's quadratic_kinetic)
  if (strcmp (method, "velocity_verlet") && ! (isfield (model, "quadratic_kinetic")
                                               && isequal (model.quadratic_kinetic, true)))
    error ("odepkg:kineticNotQuadratic",
           ["%s: takes a model whose kinetic energy is quadratic, H = p'' M^-1 p / 2 + V(q) with M constant " ...
            "(its state is [q; v], v = M^-1 p); this model's is not (quadratic_kinetic false): use odeSV"],
           solver);
  endif

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
  if (strcmp (method, "velocity_verlet"))
    ## odeVV's f = [v; a], a = H_pp (-H_q) (H_pp = M^-1 constant: taken at 0)
    d = model.d;
    Hpp = __odepkg_model_eval__ (model, "hess", 0, zeros (2 * d, 1), par)(d+1:end, d+1:end);
    fcn = @(t, y, varargin) vv_field (model, t, y, par, Hpp);
  endif
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

function f = vv_field (model, t, y, par, Hpp)
  d = model.d;
  f = __odepkg_model_eval__ (model, "f", t, y, par);
  f = [y(d+1:end); Hpp * f(d+1:end)];
endfunction
