## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{out} =} odepkg_ensemble (@var{solver}, @var{method}, @var{nout}, @var{fcn}, @var{tspan}, @var{y0}, @var{opts}, @var{extra})
## The ensemble mode of the odepkg solvers (@var{y0} with K columns, one
## trajectory each): validate, run the members as one batched compiled call
## (explicit schemes of odeSV, odeSE, odeVV and odeRATTLE), or one after the
## other (every other scheme), and shape the outputs: @var{y} N-by-n-by-K,
## event outputs as 1-by-K cells.
## @end deftypefn

function out = odepkg_ensemble (solver, method, nout, fcn, tspan, y0, opts, extra)

  lie = strcmp (method, "rattlie");
  if (! (isreal (y0) && all (isfinite (y0(:)))))
    error ("odepkg:invalidInput", "%s: Y0 must be a real, finite matrix (one initial state per column)", solver);
  endif
  if (! lie && mod (rows (y0), 2) != 0)
    error ("odepkg:invalidInput",
           "%s: Y0 (ensemble mode, one column per member) must have an even number of rows, %s per column (got %d)",
           solver, ifelse_vv (solver, "[x0; v0]", "[q0; p0]"), rows (y0));
  endif
  y0 = double (y0);
  [n, K] = size (y0);

  [o, opts, extra] = odepkg_parse_options (solver, opts, extra, n);
  ## a model (odepkg_model): its kernels run over the members, member k with
  ## its column k of parameters (fcn.par, np-by-K)
  model = isstruct (fcn) && isscalar (fcn) && isfield (fcn, "odepkg_model");
  if (model)
    fcn = odepkg_model_prepare (solver, method, fcn, opts, o, extra, n, K);
  elseif (isfield (o, "Threads") && ! isempty (o.Threads))
    error ("odepkg:invalidOption",
           '%s: option "Threads" is for ensembles of a model of odepkg_model (the kernels run without the interpreter); a function handle runs on the interpreter''s thread',
           solver);
  endif
  [times, o] = odepkg_time_mode (solver, tspan, o, opts);
  if (isempty (o.MaxStep))
    o.MaxStep = 0.1 * abs (times(end) - times(1));
  endif

  ## What a run of one trajectory offers and an ensemble does not (yet):
  ## refused by name, never ignored.
  unsupported = {"HamiltonianFcn", "InvariantFcn", "OutputSel"};
  for i = 1:numel (unsupported)
    if (isfield (o, unsupported{i}) && ! isempty (o.(unsupported{i})))
      refuse (solver, unsupported{i});
    endif
  endfor
  if (! strcmp (o.Progress, "off"))
    refuse (solver, "Progress");
  endif
  if (strcmp (o.MonitorMultipliers, "on"))
    refuse (solver, "MonitorMultipliers");
  endif
  if (o.Refine > 1)
    refuse (solver, "Refine");
  endif
  if (isfield (o, "StepControl") && strcmp (o.StepControl, "reversible"))
    refuse (solver, "StepControl");
  endif
  if (isfield (o, "CompensatedSummation") && strcmp (o.CompensatedSummation, "on"))
    refuse (solver, "CompensatedSummation");
  endif
  if (isfield (o, "NodeOutput") && strcmp (o.NodeOutput, "on"))
    refuse (solver, "NodeOutput");
  endif

  copts = rmfield (o, {"Stats", "HamiltonianFcn", "InvariantFcn", "Progress", "MonitorMultipliers", "OnFailure"});
  store = nout > 0;
  streamed = false;
  if (isempty (o.OutputFcn) && nout == 0)
    ## odeplot draws every component of every member
    copts.OutputFcn = @(t, y, flag, varargin) odeplot (t, y(:), flag);
    streamed = true;
  endif

  ## The batched call (it declines, running nothing, for schemes without a
  ## batched form).
  fallback = true;
  if (! lie)
    if (! model)
      check_constraint_gradient (solver, o, y0, extra);
    endif
    [t, Y, st, status, msg, te, ye, ie, fallback] = ...
      __odepkg_ensemble__ (method, fcn, times, y0, copts, extra, solver, store);
  endif
  if (fallback)
    if (model && isfield (o, "Threads") && ! isempty (o.Threads))
      error ("odepkg:invalidOption",
             ['%s: option "Threads" is for the batched ensembles (Explicit "yes" for odeSV, odeSE and odeRATTLE, ' ...
              'or odeVV); this scheme runs the members one after the other'], solver);
    endif
    if (! isempty (o.OutputFcn))
      error ("odepkg:invalidOption",
             ['%s: option "OutputFcn" in ensemble mode is called once per step with all members, ' ...
              'which needs a batched scheme (Explicit "yes" for odeSV, odeSE and odeRATTLE, or odeVV); ' ...
              'this one runs the members one after the other'], solver);
    endif
    if (numel (times) == 2 && isempty (o.TimeStepSize))
      error ("odepkg:invalidInput",
             ['%s: an ensemble run member by member (an implicit or general scheme) with adaptive ' ...
              'steps needs common output times: give TSPAN = [t0, t1, ..., tf] or fixed steps (TimeStepSize)'],
             solver);
    endif
    [t, Y, st, status, msg, te, ye, ie] = run_members (solver, method, fcn, times, y0, copts, extra, lie);
  endif

  failed = find (status < 0);
  if (! isempty (failed) && strcmp (o.OnFailure, "error"))
    error ("odepkg:integrationFailed", "%s: %d of %d members failed (members %s): %s",
           solver, numel (failed), K, num2str (failed(1:min(end, 10))), msg{failed(1)});
  endif
  if (! isempty (failed))
    warning ("odepkg:integrationFailed",
             "%s: %d of %d members failed (members %s): %s; their outputs are NaN from then on, the others went on",
             solver, numel (failed), K, num2str (failed(1:min(end, 10))), msg{failed(1)});
  endif

  if (strcmpi (o.Stats, "on"))
    printf ("Members:                      %d (%d failed, %d ended by a terminal event)\n",
            K, numel (failed), sum (status == 1));
    printf ("Number of successful steps:   %d\n", st.nsteps);
    printf ("Number of failed attempts:    %d\n", st.nfailed);
    printf ("Number of function calls:     %d (%d member evaluations)\n", st.nfevals, st.nfevalmembers);
    if (st.nnewtonsolves > 0)
      printf ("Number of Newton iterations:  %d over %d member solves (at most %d per solve)\n",
              st.nnewtoniter, st.nnewtonsolves, st.maxnewtoniter);
    endif
  endif

  ## n x K x N -> N x n x K (y) and n x N x K (sol.y)
  switch (nout)
    case 0
      out = {};
      if (fallback && ! streamed)
        ## nothing streamed (members ran one by one): draw the result
        plot (t, reshape (permute (Y, [3 1 2]), numel (t), []));
      endif
    case 1
      sol = struct ("x", t.', "y", permute (Y, [1 3 2]), "solver", solver, "stats", st,
                    "status", status, "messages", {msg});
      if (! isempty (o.Events))
        sol.xe = te;  sol.ye = ye;  sol.ie = ie;
      endif
      ## deval interpolates a composed run of order p through p points
      p = odepkg_composed_order (o);
      if (p > 4)
        sol.idata = struct ("order", p);
      endif
      out = {sol};
    otherwise
      out = {t, permute(Y, [3 1 2]), te, ye, ie}(1:nout);
  endswitch

endfunction

function txt = ifelse_vv (solver, vv, other)
  if (strcmp (solver, "odeVV"))
    txt = vv;
  else
    txt = other;
  endif
endfunction

function refuse (solver, name)
  error ("odepkg:invalidOption",
         '%s: option "%s" is not available in ensemble mode (Y0 with one column per member); run the members one at a time for it',
         solver, name);
endfunction

## ConstraintGradFcn against central differences of ConstraintFcn along one
## random direction per member, all members in 2 calls of g and 1 of G
## (what DerivativeCheck does for a single run).
function check_constraint_gradient (solver, o, y0, extra)
  if (isempty (o.ConstraintFcn) || isempty (o.ConstraintGradFcn) || strcmp (o.DerivativeCheck, "off"))
    return;
  endif
  d = rows (y0) / 2;
  K = columns (y0);
  m = o.ConstraintsNb;
  Q = y0(1:d, :);
  V = cos (0.7 * (1:d)' + 1.3 * (1:K));     # fixed directions (the user's RNG untouched)
  s = eps ^ (1/3) * max (1, max (abs (Q(:))));
  gp = o.ConstraintFcn (Q + s * V, extra{:});
  gm = o.ConstraintFcn (Q - s * V, extra{:});
  G = o.ConstraintGradFcn (Q, extra{:});
  if (numel (G) != m * d * K || numel (gp) != m * K)
    error ("odepkg:badFcnOutput",
           "%s: in ensemble mode ConstraintFcn (Q) must return m-by-K and ConstraintGradFcn (Q) m-by-d-by-K for Q = d-by-K (m = %d, d = %d, K = %d)",
           solver, m, d, K);
  endif
  G = reshape (G, m, d, K);
  GV = reshape (sum (G .* reshape (V, 1, d, K), 2), m, K);
  fd = (reshape (gp, m, K) - reshape (gm, m, K)) / (2 * s);
  err = max (abs (GV(:) - fd(:)));
  scale = max (1, max (abs (GV(:))));
  if (! (err <= 1e-6 * scale))
    error ("odepkg:derivativeCheck",
           "%s: ConstraintGradFcn disagrees with differences of ConstraintFcn by %g (relative %g) at the initial states; check it, or set DerivativeCheck \"off\"",
           solver, err, err / scale);
  endif
endfunction

## The members one after the other (schemes without a batched form): the
## single-run compiled loop per member, outputs on the common time grid.
function [t, Y, st, status, msg, te, ye, ie] = run_members (solver, method, fcn, times, y0, copts, extra, lie)
  [n, K] = size (y0);
  status = zeros (1, K);
  msg = repmat ({""}, 1, K);
  te = ye = ie = cell (1, K);
  ts = ys = cell (1, K);
  st = struct ("members", K, "nsteps", 0, "nfailed", 0, "nfevals", 0, "nfevalmembers", 0,
               "nnewtonsolves", 0, "nnewtoniter", 0, "maxnewtoniter", 0,
               "nnewtonretries", 0, "ndistantroots", 0);
  copts.OutputFcn = [];
  model = isstruct (fcn) && isfield (fcn, "odepkg_model");
  if (model)
    par = fcn.par;
  endif
  for k = 1:K
    if (model)
      fcn.par = par(:, k);      # member k's parameter values
    endif
    if (lie)
      [tk, yk, sk, ok, mk, ~, tek, yek, iek] = __odepkg_rattlie__ (fcn, times, y0(:, k), copts, extra, solver, false, true);
    else
      [tk, yk, sk, ok, mk, tek, yek, iek] = __odepkg_integrate__ (method, fcn, times, y0(:, k), copts, extra, solver, true);
    endif
    ts{k} = tk;  ys{k} = yk;
    te{k} = tek;  ye{k} = yek;  ie{k} = iek;
    if (! ok)
      status(k) = -1;
      msg{k} = mk;
    elseif (! isempty (tek) && tk(end) != times(end))
      status(k) = 1;       # ended by a terminal event
    endif
    st.nsteps = max (st.nsteps, sk.nsteps);
    st.nfailed += sk.nfailed;
    st.nfevals += sk.nfevals;
    st.nfevalmembers += sk.nfevals;
    if (isfield (sk, "nnewtonsolves"))
      st.nnewtonsolves += sk.nnewtonsolves;
      st.nnewtoniter += sk.nnewtoniter;
      st.maxnewtoniter = max (st.maxnewtoniter, sk.maxnewtoniter);
    endif
    if (isfield (sk, "nnewtonretries"))
      st.nnewtonretries += sk.nnewtonretries;
      st.ndistantroots += sk.ndistantroots;
    endif
  endfor
  ## the common grid: the longest run's times; a member that ended early
  ## keeps the rows on that grid, NaN after
  [~, longest] = max (cellfun (@numel, ts));
  t = ts{longest};
  N = numel (t);
  Y = NaN (n, K, N);
  for k = 1:K
    tk = ts{k};
    r = min (numel (tk), N);
    last = find (tk(1:r) != t(1:r), 1) - 1;     # the prefix on the common grid
    if (isempty (last))
      last = r;
    endif
    Y(:, k, 1:last) = reshape (ys{k}(1:last, :).', n, 1, last);
  endfor
endfunction
