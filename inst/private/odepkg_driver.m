## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{out} =} odepkg_driver (@var{solver}, @var{method}, @var{nout}, @var{fcn}, @var{tspan}, @var{y0}, @var{opts}, @var{extra})
## Shared body of the odepkg solvers: validate the inputs, choose the time
## mode, call the compiled integrator once, and shape the outputs as ode45
## does (a cell @var{out} of @var{nout} outputs).
## @end deftypefn

function out = odepkg_driver (solver, method, nout, fcn, tspan, y0, opts, extra)

  if (nout > 5)
    error ("odepkg:invalidInput",
           "%s: at most five outputs, [t, y, te, ye, ie] (or one: sol); %d were requested", solver, nout);
  endif

  ## --- the ODE function (or a native model of odepkg_model) ---------------
  model = isstruct (fcn) && isscalar (fcn) && isfield (fcn, "odepkg_model");
  if (ischar (fcn))
    if (! (isrow (fcn) && any (exist (fcn) == [2, 3, 5, 103])))
      error ("odepkg:invalidInput", '%s: FCN names no function: "%s"', solver, fcn);
    endif
    fcn = str2func (fcn);
  endif
  if (! model && ! is_function_handle (fcn))
    error ("odepkg:invalidInput",
           "%s: FCN must be a function handle, the name of a function or a model of odepkg_model",
           solver);
  endif

  ## --- tspan ---------------------------------------------------------------
  if (! (isnumeric (tspan) && isreal (tspan) && isvector (tspan)
         && all (isfinite (tspan))))
    error ("odepkg:invalidInput",
           "%s: TSPAN must be a real, finite vector of times", solver);
  endif
  tspan = double (tspan(:));
  if (numel (tspan) >= 2)
    dt = diff (tspan);
    if (! (all (dt > 0) || all (dt < 0)))
      error ("odepkg:invalidInput",
             "%s: TSPAN must be strictly increasing or strictly decreasing", solver);
    endif
  endif

  ## --- y0 ------------------------------------------------------------------
  ## Y0 with K > 1 columns (and more than one row): an ensemble of K
  ## trajectories, each column one initial state (odepkg_ensemble.m).
  if (isnumeric (y0) && ndims (y0) == 2 && rows (y0) > 1 && columns (y0) > 1)
    if (isstruct (opts) && isfield (opts, "NonholonomicFcn") && ! isempty (opts.NonholonomicFcn))
      error ("odepkg:unsupportedOption",
             '%s: option "NonholonomicFcn" is not implemented for ensembles (Y0 with several columns): integrate the members one by one',
             solver);
    endif
    opts = explicit_default (model, fcn, method, opts);
    out = odepkg_ensemble (solver, method, nout, fcn, tspan, y0, opts, extra);
    return;
  endif
  lie = strcmp (method, "rattlie");
  if (! (isnumeric (y0) && isreal (y0) && isvector (y0)))
    if (lie)
      error ("odepkg:invalidInput", "%s: Y0 must be a real vector [q0; v0]", solver);
    endif
    error ("odepkg:invalidInput", "%s: Y0 must be a real vector %s", solver, state_text (solver));
  endif
  if (! lie && mod (numel (y0), 2) != 0)
    error ("odepkg:invalidInput",
           "%s: Y0 must have even length, %s with both halves of equal size (got %d elements)",
           solver, state_text (solver), numel (y0));
  endif
  if (! all (isfinite (y0)))
    error ("odepkg:invalidInput", "%s: Y0 must be finite", solver);
  endif
  y0 = double (y0(:));
  n = numel (y0);

  ## --- options, model, time mode, output function: the same inputs (equal
  ## content, __odepkg_same__; y0 by its size only) give the same prepared
  ## call, so a loop of runs prepares it once (odepkg_prepare: about 0.3 ms
  ## of a short run); a preparation that warned is made again each time.
  ## The last four are kept (their inputs too, as shared values, not copies:
  ## a large parameter or a handle's workspace stays alive until replaced).
  persistent recent = {};
  key = {solver, method, nout, fcn, tspan, opts, extra, n};
  P = [];
  for i = 1:numel (recent)
    if (__odepkg_same__ (recent{i}.key, key))
      P = recent{i};
      break;
    endif
  endfor
  if (isempty (P))
    P = odepkg_prepare (solver, method, nout, fcn, tspan, opts, extra, n, model, lie);
    if (P.same_again)
      P.key = key;
      recent = [{P}, recent(1:min (end, 3))];
    endif
  endif
  ## (a model's kernels, maybe deleted since, are looked for by the compiled side)
  o = P.o;  o_m = P.o_m;  fcn = P.fcn;  fcn_m = P.fcn_m;  extra = P.extra;  times = P.times;
  monitor = P.monitor;  multipliers = P.multipliers;

  monitor_t0 = [];
  monitor_calls = struct ("f", 0, "g", 0, "G", 0, "H", 0, "I", 0, "A", 0);
  if (monitor)
    [monitor_t0, monitor_calls] = odepkg_monitor (solver, o_m, fcn_m, extra, times(1), y0.', "", 0);
    monitor_t0.t0 = times(1);           # reused at the first output: one call per output
    monitor_t0.y0 = y0;
  endif

  copts = P.copts;
  ## No output argument: the run streams through the OutputFcn (odeplot by
  ## default) and nothing is stored, so no output memory limit applies.
  store = nout > 0;
  ## "Progress": the compiled loop reads the clock every few thousand steps
  ## and calls the display at most four times a second; it is ended here
  ## whatever happens (error, Ctrl-C), so no line stays open, no waitbar up.
  progress = o.Progress;
  if (strcmp (progress, "on"))
    if (isguirunning ())
      progress = "waitbar";
    else
      progress = "text";
    endif
  endif
  finish_progress = [];
  if (! strcmp (progress, "off"))
    [copts.Progress, finish_progress] = odepkg_progress (solver, progress);
  endif
  unwind_protect
    if (lie)
      want_lambda = nout == 1 && (! isempty (o.ConstraintFcn) || ! isempty (o.NonholonomicFcn));
      [t, y, st, ok, msg, lambda, te, ye, ie] = __odepkg_rattlie__ (fcn, times, y0, copts, extra, solver, want_lambda, store);
    else
      ## odeSPVI's dense output is its own polynomial: with sol requested over
      ## steps, the compiled side also returns the Gauss-node states, kept in
      ## sol.idata for deval and removed from the output.
      spvi_nodes = (strcmp (method, "spectral_var_int") && numel (times) == 2
                    && strcmp (o.NodeOutput, "off") && (nout == 1 || o.Refine > 1));
      if (spvi_nodes)
        copts.NodeOutput = "on";
      endif
      ## sol alone, nothing to refine or monitor: the states come as sol.y's
      ## columns, as stored (a large output is not transposed twice)
      if (nout == 1 && ! spvi_nodes && ! monitor && ! multipliers && ! (o.Refine > 1 && numel (times) == 2))
        store = "columns";
      endif
      [t, y, st, ok, msg, te, ye, ie] = __odepkg_integrate__ (method, fcn, times, y0, copts, extra, solver, store);
      if (spvi_nodes)
        [t, y, nodes] = split_spvi_nodes (o, t, y);
      endif
    endif
  unwind_protect_cleanup
    if (! isempty (finish_progress))
      finish_progress ();
    endif
  end_unwind_protect

  if (! ok)
    ## A stop at a singular configuration (G(q) losing rank, where no
    ## continuation was found) says so: odepkg:singularConstraints naming
    ## sigma_min(G) (one call of G, counted)
    id = "odepkg:integrationFailed";
    if (any (strcmp (solver, {"odeRATTLE", "odeSHAKE"})) && ! isempty (o.ConstraintGradFcn))
      if (ischar (store))
        ylast = y(:, end);
      else
        ylast = y(end, :).';
      endif
      [sing, smin, smax] = singular_at (o, ylast, extra);
      st.nconstrgradevals += 1;
      if (sing)
        id = "odepkg:singularConstraints";
        msg = sprintf (["%s; G(q) is singular there (smallest singular value %.3g, largest %.3g): " ...
                        "no continuation of the constrained motion through this configuration was found"],
                       msg, smin, smax);
      endif
    endif
    ## OnFailure "error": a sampling loop sees the failure as an error (it
    ## would otherwise take the partial solution for a proposal)
    if (strcmp (o.OnFailure, "error"))
      error (id, "%s: integration stopped at t = %.15g: %s", solver, t(end), msg);
    endif
    warning (id, "%s: integration stopped at t = %.15g: %s; returning the solution computed so far",
             solver, t(end), msg);
  endif

  ## StepControl "reversible": where the density ended, for a continuation
  ## or a reversal (sol.stepdensity; the help of odeSV says how to use it)
  stepdensity = [];
  if (isfield (st, "stepdensityrho"))
    stepdensity = struct ("rho", st.stepdensityrho, "eps", st.stepdensityeps,
                          "lasteps", st.stepdensitylasteps);
    st = rmfield (st, {"stepdensityrho", "stepdensitylasteps"});
  endif

  nv = 0;
  if (isfield (st, "groupdim"))
    nv = st.groupdim;
    st = rmfield (st, "groupdim");
  endif

  ## Refine (ode45's meaning): with every step output, Refine - 1 more
  ## points inside each step, from the interpolant of deval.
  idata = [];
  if (! lie && spvi_nodes && ! isempty (nodes))
    idata = struct ("nodes", nodes);
  endif
  if (! isempty (P.idata))                   # odeRATTLE, odeSHAKE (odepkg_prepare)
    idata = P.idata;
  endif
  ## a composed run of order p interpolates through p output points, so
  ## deval and Refine keep the method's order (a cubic would give order 4)
  p = P.order;
  if (p > 4 && ! lie)
    if (isempty (idata))
      idata = struct ();
    endif
    idata.order = p;
  endif
  if (lie)
    ## what deval needs to interpolate on the group and project onto the
    ## constraints (and nothing that could run, such as the OutputFcn)
    lopts = struct ("LieGroup", {o.LieGroup}, "MassMatrix", {o.MassMatrix},
                    "ConstraintFcn", {o.ConstraintFcn}, "ConstraintGradFcn", {o.ConstraintGradFcn},
                    "ConstraintsNb", {o.ConstraintsNb}, "NonholonomicFcn", {o.NonholonomicFcn},
                    "NonholonomicsNb", {o.NonholonomicsNb});
    idata = struct ("lie", lopts, "fcn", fcn, "extra", {extra});
  endif
  refine = o.Refine > 1 && numel (times) == 2 && numel (t) > 1;
  if (refine)
    k = (0:o.Refine-1) / o.Refine;
    tr = t(1:end-1) + (t(2:end) - t(1:end-1)) .* k;       # rows: steps
    tr = [reshape(tr.', [], 1); t(end)];
  endif
  if (lie && refine)
    ## the group interpolant; sol.lambda at the new points by the index-1
    ## formula of the compiled multipliers
    want_lambda = ! isempty (lambda);
    try
      [yr, ~, lr] = __odepkg_rattlie__ ("interpolate", t.', y.', tr.', lopts, fcn, extra, want_lambda, solver);
      yr(:, 1:o.Refine:end) = y.';                        # the method's own states
      y = yr.';
      if (want_lambda)
        lr(:, 1:o.Refine:end) = lambda;
        lambda = lr;
      endif
      t = tr;
    catch err
      ## the integration itself succeeded: keep it, without the refinement
      warning ("odepkg:refineFailed", "%s: Refine failed (%s); returning the solver's own points",
               solver, err.message);
    end_try_catch
  elseif (refine)
    s = struct ("x", t.', "y", y.', "idata", idata);
    y = __odepkg_deval__ (s, tr).';
    y(1:o.Refine:end, :) = s.y(:, :).';                   # the method's own states
    t = tr;
  endif

  mon = [];
  if ((monitor || multipliers) && (nout == 1 || strcmpi (o.Stats, "on")))
    mode = "";                             # the invariants alone: their calls only
    if (multipliers && lie)
      mode = "lie";
    elseif (multipliers)                   # odeRATTLE, odeSHAKE
      mode = o.ConstraintVariables;
    endif
    try
      [mon, c] = odepkg_monitor (solver, o_m, fcn_m, extra, t, y, mode, nv, monitor_t0);
      monitor_calls = structfun_add (monitor_calls, c);
    catch err
      warning ("odepkg:monitorFailed", "%s: invariant monitoring failed: %s", solver, err.message);
    end_try_catch
  endif
  ## every user call counted: the monitor's calls of f, g and G with the
  ## method's, those of HamiltonianFcn and InvariantFcn on their own
  if (monitor || multipliers)                 # else all zero
    st.nfevals += monitor_calls.f;
    st.nconstrevals += monitor_calls.g;
    st.nconstrgradevals += monitor_calls.G;
    if (isfield (monitor_calls, "A") && isfield (st, "nnonholevals"))
      st.nnonholevals += monitor_calls.A;
    endif
  endif
  st.nhamiltonianevals = monitor_calls.H;
  st.ninvariantevals = monitor_calls.I;

  if (strcmpi (o.Stats, "on"))
    printf ("Number of successful steps:   %d\n", st.nsteps);
    printf ("Number of failed attempts:    %d\n", st.nfailed);
    printf ("Number of function calls:     %d\n", st.nfevals);
    if (st.nnewtonsolves > 0)
      printf ("Number of Newton iterations:  %d (at most %d per solve)\n",
              st.nnewtoniter, st.maxnewtoniter);
      printf ("Number of LU decompositions:  %d\n", st.ndecomps);
      printf ("Number of Jacobians:          %d (%s)\n", st.njacobians,
              differenced_text (solver, o, st));
    endif
    if (st.nhessevals > 0)
      printf ("Number of Hessian calls:      %d\n", st.nhessevals);
    endif
    if (isfield (st, "minstep"))       # StepControl "reversible"
      printf ("Step sizes:                   %g to %g (eps = %g)\n", st.minstep, st.maxstep,
              st.stepdensityeps);
    endif
  endif

  if (strcmpi (o.Stats, "on") && ! isempty (mon))
    for k = 1:numel (mon.invariants.names)
      printf ("Largest deviation of %-4s    %.3g\n", [mon.invariants.names{k} ":"],
              mon.invariants.deviation(k));
    endfor
  endif

  switch (nout)
    case 0
      out = {};
    case 1
      if (! strcmp (store, "columns"))
        y = y.';
      endif
      sol = struct ("x", t.', "y", y, "solver", solver, "stats", st);
      if (! isempty (idata))
        sol.idata = idata;      # lets deval project onto the constraints
      endif
      if (lie && ! isempty (o.NonholonomicFcn))
        ## [lambda; mu]: the m holonomic multipliers, then the k of B_nh v = 0
        m = 0;
        if (! isempty (o.ConstraintsNb))
          m = o.ConstraintsNb;
        endif
        sol.lambda = lambda(1:m, :);
        sol.mu = lambda(m+1:end, :);
      elseif (lie && ! isempty (o.ConstraintFcn))
        sol.lambda = lambda;
      endif
      if (! isempty (mon))
        if (monitor)
          sol.invariants = mon.invariants;
        endif
        if (isfield (mon, "residuals"))
          sol.residuals = mon.residuals;
        endif
        if (isfield (mon, "lambda"))
          sol.lambda = mon.lambda;
        endif
        if (isfield (mon, "mu"))
          sol.mu = mon.mu;
        endif
      endif
      if (! isempty (o.Events))
        sol.xe = te.';  sol.ye = ye.';  sol.ie = ie.';
      endif
      if (! isempty (stepdensity))
        sol.stepdensity = stepdensity;
      endif
      out = {sol};
    case 2
      out = {t, y};
    otherwise
      out = {t, y, te, ye, ie}(1:nout);
  endswitch

endfunction

## Everything of a call that depends on its inputs but not on y0's values:
## the options merged and checked, the model prepared, the output times,
## the options for the compiled side (copts) and the monitoring flags.
## same_again: false when a warning was given (not to be memoized).
function P = odepkg_prepare (solver, method, nout, fcn, tspan, opts, extra, n, model, lie)
  ## --- options (as ode45: a non-struct fourth argument is the first extra
  ## parameter) ---------------------------------------------------------------
  opts = explicit_default (model, fcn, method, opts);
  [o, opts, extra, same_again] = odepkg_parse_options (solver, opts, extra, n);
  if (isfield (o, "Threads") && ! isempty (o.Threads))
    error ("odepkg:invalidOption",
           '%s: option "Threads" is for ensembles of a model (Y0 with one column per member, FCN a model of odepkg_model); a single trajectory runs on one thread',
           solver);
  endif
  ## a model: its kernels run in the compiled loop (fcn, the struct with the
  ## parameter values); fcn_m, o_m: handles on the kernels for what runs here
  ## (invariant monitoring, deval's projection)
  fcn_m = fcn;
  cons_m = struct ();
  if (model)
    [fcn, fcn_m, o, cons_m] = odepkg_model_prepare (solver, method, fcn, opts, o, extra, n);
  endif
  if (lie)
    lie_options (solver, o);
  endif

  ## --- time mode (conflicting step options refused) -----------------------
  [times, o] = odepkg_time_mode (solver, tspan, o, opts);
  o_m = o;
  for [v, k] = cons_m
    o_m.(k) = v;
  endfor
  if (isempty (o.MaxStep))
    o.MaxStep = 0.1 * abs (times(end) - times(1));
  endif

  ## --- output function (odeplot when no output is requested) --------------
  ## The compiled side calls it ("init", every output, "done") after all of
  ## its own input checks: no plot window opens before an input error.
  if (isempty (o.OutputFcn) && nout == 0)
    o.OutputFcn = @odeplot;
  endif

  ## Invariant monitoring (HamiltonianFcn, InvariantFcn): their values at
  ## (t0, y0) are checked here, before any output function runs; off, no
  ## function is called.
  monitor = ! isempty (o.HamiltonianFcn) || ! isempty (o.InvariantFcn);
  ## MonitorMultipliers "on" (constrained solvers): residuals and
  ## multipliers at the output times, computed after the run
  multipliers = strcmp (o.MonitorMultipliers, "on");
  if (multipliers && isempty (o.ConstraintFcn) && isempty (o.NonholonomicFcn))
    error ("odepkg:invalidOption",
           '%s: option "MonitorMultipliers" is for constrained runs: give ConstraintFcn, or drop it', solver);
  endif
  copts = rmfield (o, {"Stats", "HamiltonianFcn", "InvariantFcn", "Progress", "MonitorMultipliers", "OnFailure"});
  ## what deval needs of a constrained run (it projects onto the constraints)
  idata = [];
  if (any (strcmp (solver, {"odeRATTLE", "odeSHAKE"})))
    idata = struct ("constraint", o_m.ConstraintFcn, "grad", o_m.ConstraintGradFcn, "fcn", fcn_m,
                    "extra", {extra}, "variables", o.ConstraintVariables);
    if (! isempty (o.NonholonomicFcn))
      idata.nonholonomic = o.NonholonomicFcn;     # deval projects onto A(q) H_p = 0 too
    endif
  endif
  P = struct ("o", o, "o_m", o_m, "fcn", fcn, "fcn_m", fcn_m, "extra", {extra}, "times", times,
              "monitor", monitor, "multipliers", multipliers, "copts", copts, "idata", idata,
              "order", odepkg_composed_order (o), "same_again", same_again);
endfunction

## A model with a separable H: "Explicit" unless the user gave it (before
## the options are checked: CompensatedSummation needs it; not for
## g(q, p): its geometric RATTLE has no explicit scheme).  Applied where the
## options are read (odepkg_prepare, the ensemble branch), so that the
## driver's memo is keyed on the user's own OPTS.
function opts = explicit_default (model, fcn, method, opts)
  if (model && isfield (fcn, "separable") && (islogical (fcn.separable) || isnumeric (fcn.separable))
      && isscalar (fcn.separable) && fcn.separable == true
      && any (strcmp (method, {"symplectic_euler", "stormer_verlet", "rattle", "shake"}))
      && ! (isfield (fcn, "constraint_variables") && strcmp (fcn.constraint_variables, "qp")))
    if (isnumeric (opts) && isempty (opts))
      opts = struct ("Explicit", "yes");
    elseif (isstruct (opts) && isscalar (opts) && ! (isfield (opts, "Explicit") && ! isempty (opts.Explicit)))
      opts.Explicit = "yes";
    endif
  endif
endfunction

## The initial state as the solver names it: odeVV [x0; v0], else [q0; p0].
function txt = state_text (solver)
  if (strcmp (solver, "odeVV"))
    txt = "[x0; v0]";
  else
    txt = "[q0; p0]";
  endif
endfunction

## Whether the constraint gradient is numerically singular at the state x
## ([q; p]): sigma_min(G) <= sqrt(eps) sigma_max(G).
function [sing, smin, smax] = singular_at (o, x, extra)
  d = numel (x) / 2;
  if (strcmp (o.ConstraintVariables, "qp"))
    G = o.ConstraintGradFcn (x, extra{:});
  else
    G = o.ConstraintGradFcn (x(1:d), extra{:});
  endif
  if (numel (G) > 4e6)   # a large sparse G: not densified for this message
    sing = false;
    smin = smax = NaN;
    return;
  endif
  s = svd (full (G));
  smin = min (s);
  smax = max (s);
  sing = ! (smin > sqrt (eps) * smax);
endfunction

## A + B, field by field (the monitor's call counts).
function a = structfun_add (a, b)
  for [v, k] = b
    a.(k) += v;
  endfor
endfunction

## What the Stats line of Jacobians says of those taken by finite
## differences: of f (H's Hessian, or df/dv for odeRATTLie) and of the
## constraints, each with the option that would avoid it.
function txt = differenced_text (solver, o, st)
  if (st.nfdjacobians == 0)
    txt = "none by finite differences";
    return;
  endif
  parts = {};
  nf = st.nfdfcnjacobians;
  if (nf > 0)
    if (strcmp (solver, "odeRATTLie"))
      parts{end+1} = sprintf ("%d of f (its dependence on v)", nf);
    elseif (isempty (o.HamiltonianHessFcn))
      parts{end+1} = sprintf ("%d of f (H's Hessian: give HamiltonianHessFcn)", nf);
    else
      parts{end+1} = sprintf ("%d of f", nf);
    endif
  endif
  ng = st.nfdjacobians - nf;
  if (ng > 0)
    parts{end+1} = sprintf ("%d of the constraints (give ConstraintGradFcn and ConstraintHessFcn)", ng);
  endif
  txt = ["by finite differences: " strjoin(parts, ", ")];
endfunction

## The P Gauss-node states between the end points of every step (as
## NodeOutput "on" returns them) split off: NODES.t (P-by-K), NODES.y
## (n-by-P-by-K) for K steps.  If the pattern does not hold (it always should),
## NODES is empty and deval falls back to its cubic.
function [t, y, nodes] = split_spvi_nodes (o, t, y)
  Q = o.Q_DoFs;  P = o.P_DoFs;
  if (isempty (Q) && isempty (P))
    P = 2;
  elseif (isempty (P))
    P = Q - 1;
  endif
  nodes = [];
  N = numel (t);
  if (N < 2 || mod (N - 1, P + 1) != 0)
    return;
  endif
  K = (N - 1) / (P + 1);
  ends = 1:(P + 1):N;
  inner = setdiff (1:N, ends);
  nodes = struct ("t", reshape (t(inner), P, K), "y", reshape (y(inner, :).', [], P, K));
  t = t(ends);
  y = y(ends, :);
endfunction

## odeRATTLie's own options: LieGroup (a name or a struct) and MassMatrix.
function lie_options (solver, o)
  g = o.LieGroup;
  if (isempty (g) || ! ((ischar (g) && isrow (g)) || (isstruct (g) && isscalar (g))))
    error ("odepkg:invalidOption",
           '%s: option "LieGroup" must name the configuration group (e.g. "SO3", "S3xR3", "Rn") or be a struct of its operations',
           solver);
  endif
  M = o.MassMatrix;
  ## nonzeros: M(:) of a sparse n-by-n M for 10^4 bodies has n^2 > 2^31 rows
  if (! isempty (M) && ! (isnumeric (M) && isreal (M) && ismatrix (M) && rows (M) == columns (M)
                          && all (isfinite (nonzeros (M)))))
    error ("odepkg:invalidOption",
           '%s: option "MassMatrix" must be a real, finite, square matrix (n-by-n, n the dimension of the group)',
           solver);
  endif
endfunction
