## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}] =} odepkg_sweep (@var{solver}, @var{fcn}, @var{tspan}, @var{Y0})
## @deftypefnx {} {[@var{t}, @var{y}] =} odepkg_sweep (@var{solver}, @var{fcn}, @var{tspan}, @var{Y0}, @var{opts})
## @deftypefnx {} {[@var{t}, @var{y}, @var{te}, @var{ye}, @var{ie}] =} odepkg_sweep (@dots{})
## @deftypefnx {} {@var{sol} =} odepkg_sweep (@dots{})
## @deftypefnx {} {@var{R} =} odepkg_sweep (@var{fun}, @var{params})
## @deftypefnx {} {@dots{} =} odepkg_sweep (@dots{}, @var{name}, @var{value}, @dots{})
## Split an ensemble or a parameter sweep over local processes or over the
## machines of a cluster with Octave's package @code{parallel} (Debian:
## @code{octave-parallel}): @code{parcellfun} for local workers,
## @code{netcellfun} over the connections of @code{pconnect}.  odepkg has
## no scheduler of its own and does not depend on the package: it is loaded
## (@code{pkg load parallel}) when a parallel run is asked for, and if it is
## not installed the error is @code{odepkg:parallelMissing}.
##
## @strong{Ensemble form.}  @var{solver} is an odepkg solver (@code{@@odeSV},
## @qcode{"odeRATTLE"}, @dots{}), @var{fcn}, @var{tspan} and @var{opts} are
## its arguments, and the columns of @var{Y0} (2d-by-K) are the K members
## of the ensemble, [q0; p0] each.  The members are split into contiguous
## chunks of columns, each chunk is one call of @var{solver} (an ensemble
## call, or a plain run for a chunk of one column) in a worker, and the
## results are joined along the member dimension as one ensemble call
## returns them: @var{t} N-by-1 (the common times), @var{y} N-by-2d-by-K;
## @var{te}, @var{ye}, @var{ie} 1-by-K cells; @var{sol} with @code{x}
## (1-by-N), @code{y} (2d-by-N-by-K), @code{xe}, @code{ye}, @code{ie}
## (1-by-K cells, with @qcode{"Events"}), @code{status} (1-by-K: 0 reached
## the end, 1 terminal event, -1 failed), @code{messages} (1-by-K, why a
## member failed), @code{solver}, @code{stats} and @code{sweep} (below).  A
## member that ended early has NaN rows after its end; its state at a
## terminal event is in @var{te}/@var{ye}.  The
## callbacks must therefore be vectorised as for an ensemble call (each
## column of @code{Y} a member, any number of columns).  With K = 1, or a
## single chunk, the solver is called once in this process and its outputs
## are returned as they are.
##
## Chunks can only be joined on common times: @var{tspan} = [t0 tf] needs
## fixed steps (@qcode{"TimeStepSize"} or @qcode{"TimeStepNumber"}), since
## with variable steps each chunk would choose its own (@var{tspan} with
## more than two times is accepted: the outputs fall on those times, and each
## chunk's steps keep its own members within the tolerances).  With fixed
## steps the joined result is the one ensemble call's: the members are
## independent, and every chunk steps the same times (bit for bit where the
## chunks are calls of the same kind; a plain run, a chunk of one column,
## sums its fixed steps differently from an ensemble call, and the two
## agree to round-off).  @code{sol.stats}
## sums the counts of the chunks (@code{nfevals}: calls of @var{fcn} in all
## workers) and keeps the largest @code{nsteps} and @code{max*} fields;
## @code{sol.sweep} has @code{chunks} (the members of each chunk, a cell),
## @code{stats} (each chunk's, a cell) and @code{mode} (@qcode{"serial"},
## @qcode{"local"} or @qcode{"remote"}).  @qcode{"Stats"}, @qcode{"on"}
## prints these sums here.  Options that would run in the workers and
## cannot be joined are refused: @qcode{"OutputFcn"}, @qcode{"Progress"},
## @qcode{"HamiltonianFcn"}, @qcode{"InvariantFcn"} and
## @qcode{"MonitorMultipliers"} (compute the invariants from the joined
## @var{y}).  Extra solver parameters after
## @var{opts} are not taken: give them as @qcode{"MemberParameters"}
## (below), or capture them in @var{fcn}.
##
## The workers receive a handle to a named function by its name:
## @var{fcn}, the callbacks in @var{opts} and @var{fun} must be anonymous
## functions (they travel with the values they capture) or functions in
## files on the workers' path, not functions defined on the command line
## or in a script.
##
## @strong{Parameter form.}  @var{R}@{i@} = @var{fun} (@var{params}@{i@})
## (or @var{params}(i) for a numeric, logical or struct array), evaluated
## in parallel; @var{R} is a cell of the size of @var{params}.  @var{fun}
## returns one output, typically the result of a solver run for that
## parameter (a mass, an eccentricity, an option set).  It is the
## @code{parcellfun} idiom with the same options, error reporting and
## package check as the ensemble form.
##
## Options of the sweep itself, as name/value pairs after @var{opts} (or
## after @var{Y0} or @var{params}):
## @table @asis
## @item @qcode{"Workers"}
## Number of local processes (@code{parcellfun}; at most the number of
## cores is used).  Default @code{nproc ()}.  1 runs every chunk in this
## process, one after the other, without the @code{parallel} package.
## @item @qcode{"Connections"}
## The connections returned by @code{pconnect}: the chunks are evaluated by
## @code{netcellfun} on the servers (each server runs its chunks in as
## many local processes as it has cores, or as its @qcode{"nlocaljobs"}
## of @code{network_set}).  Excludes @qcode{"Workers"}.  odepkg must be on
## each server's path (e.g. @code{reval ("pkg load odepkg", conns)}), and
## @var{fcn} and the callbacks in @var{opts} must be anonymous functions
## or functions on the servers' path.
## @item @qcode{"Chunks"}
## Number of chunks.  Default (ensemble form): one per worker (local), or
## the servers' local processes summed (remote), at most K; more chunks
## than workers balance uneven members (some end early) at the price of
## more, smaller batched calls.  Parameter form: one per parameter.
## @item @qcode{"MemberParameters"}
## (Ensemble form.)  An array with one column per member, or a cell of
## such arrays: the extra arguments of every user function, split with the
## members.  In an ensemble call every user function sees all its members,
## column j member j, so per-member data (masses, coupling constants)
## index with the columns of @code{Y}; a chunk holds only some members, and
## each chunk's call gets the columns of these arrays that belong to its
## members: @code{@var{fcn} (t, Y, P1, P2, @dots{})}, as the one call
## @code{@var{solver} (@var{fcn}, @var{tspan}, @var{Y0}, @var{opts}, P1, P2,
## @dots{})} would make it.
## @end table
##
## @var{fcn} may be a model of @code{odepkg_model}: each chunk then runs
## natively, and @qcode{"MemberParameters"} carries the model's parameter
## values, one column per member, split with the members.  Its compiled
## kernels are a file in the per-user cache: remote servers need the same
## file at the same path (a shared home, or the model built there).
##
## Errors in a worker are raised here with their identifier, prefixed with
## the members (or parameters) of the chunk.  Random numbers drawn in the
## workers differ between runs: draw them beforehand and pass them in.
##
## Example: 8 Kepler orbits of eccentricities 0 to 0.7 on 2 local
## processes, each chunk of 4 orbits one batched call of explicit
## Störmer--Verlet:
## @example
## kepler = @@(t, Y) [Y(3:4,:); -Y(1:2,:) ./ sum(Y(1:2,:).^2, 1).^1.5];
## e = linspace (0, 0.7, 8);
## Y0 = [1 - e; zeros(1, 8); zeros(1, 8); sqrt((1 + e) ./ (1 - e))];
## opts = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 2000, "Explicit", "yes");
## [t, y] = odepkg_sweep (@@odeSV, kepler, 0, Y0, opts, "Workers", 2);
## size (y)                        # 2001 x 4 x 8: y(:,:,k) is orbit k
## @end example
## The same ensemble on the machines of a cluster (servers started with
## @code{pserver}; see @code{help pconnect} for its authentication, and
## odepkg's @file{doc/parallel-sweeps.md} for Debian's build without TLS):
## @example
## conns = pconnect (@{"node1", "node2"@});
## reval ("pkg load odepkg", conns);
## sol = odepkg_sweep (@@odeSV, kepler, 0, Y0, opts, "Connections", conns);
## sclose (conns);
## @end example
## A parameter sweep: the largest energy error of Störmer--Verlet on one
## Kepler orbit (e = 0.6, t up to 20) for three step sizes, one per process:
## @example
## f = @@(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
## y0 = [0.4; 0; 0; 2];
## H = @@(Y) sum (Y(3:4,:).^2, 1) / 2 - 1 ./ sqrt (sum (Y(1:2,:).^2, 1));
## o = @@(h) odepkgset ("TimeStepSize", h, "TimeStepNumber", round (20 / h), "Explicit", "yes");
## dH = @@(h) max (abs (H (odeSV (f, 0, y0, o (h)).y) - H (y0)));
## R = odepkg_sweep (dH, [0.004 0.002 0.001], "Workers", 2);
## [R@{:@}]                        # falls as h^2
## @end example
## @seealso{parcellfun, netcellfun, pconnect, odeSV, odeRATTLE}
## @end deftypefn

function varargout = odepkg_sweep (varargin)

  ## What the workers evaluate: a public entry, so that a server (which
  ## sees the package's public functions, not this file's subfunctions)
  ## can run it.
  if (nargin >= 1 && ischar (varargin{1}))
    switch (varargin{1})
      case "__chunk__"
        varargout{1} = run_chunk (varargin{2:end});
        return;
      case "__params__"
        varargout{1} = run_params (varargin{2:end});
        return;
    endswitch
  endif

  if (nargin < 2)
    print_usage ();
  endif
  ## the ensemble form: FCN a function (handle or name) or a model of odepkg_model
  model = isstruct (varargin{2}) && isscalar (varargin{2}) && isfield (varargin{2}, "odepkg_model");
  if (is_function_handle (varargin{2}) || ischar (varargin{2}) || model)
    if (nargin < 4)
      print_usage ();
    endif
    [varargout{1:max (nargout, 1)}] = ensemble_sweep (max (nargout, 1), varargin{:});
  else
    if (nargout > 1)
      error ("odepkg:invalidInput",
             "odepkg_sweep: a parameter sweep returns one output, the cell R of results");
    endif
    varargout{1} = parameter_sweep (varargin{:});
  endif

endfunction

## ---------------------------------------------------------------------------
## The ensemble form
function varargout = ensemble_sweep (nout, solver, fcn, tspan, Y0, varargin)

  if (nout > 5)
    error ("odepkg:invalidInput",
           "odepkg_sweep: at most five outputs, [t, y, te, ye, ie] (or one: sol); %d were requested", nout);
  endif
  if (ischar (solver))
    if (! (isrow (solver) && any (exist (solver) == [2, 3, 5, 103])))
      error ("odepkg:invalidInput", 'odepkg_sweep: SOLVER names no function: "%s"', solver);
    endif
    solver = str2func (solver);
  endif
  if (! is_function_handle (solver))
    error ("odepkg:invalidInput",
           "odepkg_sweep: SOLVER must be a solver's function handle or name (e.g. @odeSV)");
  endif
  if (! (isnumeric (Y0) && isreal (Y0) && ismatrix (Y0) && ! isempty (Y0)))
    error ("odepkg:invalidInput",
           "odepkg_sweep: Y0 must be a real matrix whose columns are the members [q0; p0]");
  endif
  if (isrow (Y0))
    Y0 = Y0(:);                    # one member, as the solvers take a row
  endif

  opts = struct ();
  args = varargin;
  if (! isempty (args) && ! ischar (args{1}))
    opts = args{1};
    args(1) = [];
    if (isnumeric (opts) && isempty (opts))
      opts = struct ();
    elseif (! (isstruct (opts) && isscalar (opts)))
      error ("odepkg:invalidInput",
             ["odepkg_sweep: OPTS must be a scalar struct from odepkgset (or []); extra " ...
              "parameters of the user functions go in \"MemberParameters\" or in FCN"]);
    endif
  endif
  so = sweep_options (args);
  refuse_worker_options (opts);
  [opts, stats_on] = take_stats (opts);

  K = columns (Y0);
  mp = member_parameters (so.MemberParameters, K);
  [mode, nworkers] = run_mode (so);
  C = so.Chunks;
  if (isempty (C))
    if (strcmp (mode, "remote"))
      C = remote_jobs (so.Connections);
    else
      C = nworkers;
    endif
  endif
  C = min (C, K);

  if (C == 1)
    ## one chunk: the solver's own call, in this process
    if (stats_on)
      opts.Stats = "on";
    endif
    [varargout{1:nout}] = solver (fcn, tspan, Y0, opts, mp{:});
    return;
  endif

  if (numel (tspan) == 2 && ! fixed_steps (opts))
    error ("odepkg:invalidInput",
           ["odepkg_sweep: TSPAN = [t0 tf] with variable steps: each chunk would take its own " ...
            "steps and the chunks could not be joined on common times; give fixed steps " ...
            "(\"TimeStepSize\" or \"TimeStepNumber\"), output times (TSPAN with more than two " ...
            "times), or \"Chunks\", 1"]);
  endif

  ## contiguous chunks of columns, sizes differing by at most one
  edges = round (linspace (0, K, C + 1));
  cols = arrayfun (@(c) edges(c)+1:edges(c+1), 1:C, "UniformOutput", false);
  ## a chunk: its columns of Y0 and of every member parameter
  blocks = cellfun (@(j) [{Y0(:, j)}, cellfun(@(P) P(:, j), mp, "UniformOutput", false)],
                    cols, "UniformOutput", false);
  job = @(b) odepkg_sweep ("__chunk__", solver, fcn, tspan, opts, b);
  res = evaluate (mode, nworkers, so, job, blocks);

  for c = 1:C
    if (! isempty (res{c}.identifier) || ! isempty (res{c}.message))
      raise (res{c}, member_text (cols{c}));
    endif
  endfor
  sol = join_chunks (res, cols, K, mode);

  if (strcmp (mode, "remote"))
    ## the workers' warnings stayed on the servers
    for k = find (sol.status < 0)
      warning ("odepkg:integrationFailed",
               "odepkg_sweep: member %d stopped early on its server (t = %.15g): %s",
               k, last_time (sol, k), sol.messages{k});
    endfor
  endif
  if (stats_on)
    print_stats (sol);
  endif

  if (nout == 1)
    varargout{1} = sol;
  else
    t = sol.x.';
    y = permute (sol.y, [2 1 3]);
    if (isfield (sol, "xe"))
      te = sol.xe;  ye = sol.ye;  ie = sol.ie;
    else
      te = ye = ie = cell (1, K);          # as an ensemble call without Events
    endif
    out = {t, y, te, ye, ie};
    varargout = out(1:nout);
  endif

endfunction

## One chunk in a worker: the solver's sol, with the status of a plain run
## (one column) derived as the ensemble mode reports it; an error is
## returned as data (message and identifier), so that it reaches the caller
## with its identifier from any worker, local or remote.
function r = run_chunk (solver, fcn, tspan, opts, b)
  r = struct ("sol", [], "message", "", "identifier", "", "warning", "");
  try
    lastwarn ("");
    sol = solver (fcn, tspan, b{1}, opts, b{2:end});
    [wmsg, wid] = lastwarn ();
    if (! isfield (sol, "status"))
      ## a plain run: failed (its warning), ended at a terminal event (the
      ## last output is an event's, before the end of TSPAN), or complete
      failed = strcmp (wid, "odepkg:integrationFailed");
      terminal = (! failed && isfield (sol, "xe") && ! isempty (sol.xe)
                  && sol.xe(end) == sol.x(end)
                  && ! (numel (tspan) >= 2 && sol.x(end) == tspan(end)));
      sol.status = -failed + terminal;
      sol.messages = {""};
      if (failed)
        sol.messages = {wmsg};
      endif
      ## as an ensemble call counts: one member, each call of f one member's
      sol.stats.members = 1;
      sol.stats.nfevalmembers = sol.stats.nfevals;
      if (isfield (sol, "xe"))
        ## an ensemble call's orientation: times and indices in columns, one
        ## state per row (a plain run's sol has them the other way round)
        sol.xe = {sol.xe.'};  sol.ye = {sol.ye.'};  sol.ie = {sol.ie.'};
      endif
    endif
    if (! isempty (wid))
      r.warning = wmsg;
    endif
    r.sol = sol;
  catch err
    r.message = err.message;
    r.identifier = err.identifier;
  end_try_catch
endfunction

## Join the chunks' sol structs along the member dimension.  Every chunk
## steps the same times; a chunk whose members have all ended returns fewer
## of them, and a plain run that ended at a terminal event adds the event's
## time as its last output: that row is dropped (the state is in xe/ye, as
## for a member of an ensemble call) and the member has NaN after its end.
function sol = join_chunks (res, cols, K, mode)
  C = numel (res);
  sols = cellfun (@(r) r.sol, res, "UniformOutput", false);
  xs = cell (1, C);
  for c = 1:C
    s = sols{c};
    x = s.x;
    ended = all (s.status != 0);
    if (ended && isfield (s, "xe") && numel (x) > 1)
      lastev = -Inf;
      for k = 1:numel (s.xe)
        if (! isempty (s.xe{k}))
          lastev = max (lastev, abs (s.xe{k}(end) - x(1)));
        endif
      endfor
      if (abs (x(end) - x(1)) == lastev)
        x(end) = [];
      endif
    endif
    xs{c} = x;
  endfor
  ## the times of the longest chunk (the first of those, the largest
  ## chunk); the others must be its first times, up to round-off (a plain
  ## run and an ensemble call may sum their fixed steps differently):
  ## a millionth of the smallest step never takes one time for another
  [~, ref] = max (cellfun (@numel, xs));
  T = xs{ref};
  N = numel (T);
  tol = 0;
  if (N > 1)
    tol = 1e-6 * min (abs (diff (T)));
  endif
  for c = 1:C
    n = numel (xs{c});
    if (n > N || any (abs (xs{c} - T(1:n)) > tol))
      error ("odepkg:sweepTimesDiffer",
             ["odepkg_sweep: the output times of %s differ from those of %s " ...
              "(variable steps?); give fixed steps (\"TimeStepSize\") or output times " ...
              "(TSPAN with more than two times)"], member_text (cols{c}), member_text (cols{ref}));
    endif
  endfor

  nr = rows (sols{1}.y);
  y = NaN (nr, N, K);
  status = zeros (1, K);
  has_events = isfield (sols{1}, "xe");
  if (has_events)
    xe = cell (1, K);  ye = cell (1, K);  ie = cell (1, K);
  endif
  messages = repmat ({""}, 1, K);
  has_lambda = isfield (sols{1}, "lambda");
  if (has_lambda)
    lambda = NaN (rows (sols{1}.lambda), N, K);
  endif
  for c = 1:C
    s = sols{c};
    n = numel (xs{c});
    j = cols{c};
    y(:, 1:n, j) = reshape (s.y(:, 1:n, :), nr, n, numel (j));
    status(j) = s.status;
    if (isfield (s, "messages"))
      messages(j) = s.messages;
    endif
    if (has_events)
      xe(j) = s.xe;  ye(j) = s.ye;  ie(j) = s.ie;
    endif
    if (has_lambda)
      lambda(:, 1:n, j) = reshape (s.lambda(:, 1:n, :), rows (lambda), n, numel (j));
    endif
  endfor

  sol = struct ("x", T, "y", y, "solver", sols{1}.solver, "stats", join_stats (sols));
  if (isfield (sols{1}, "idata"))
    sol.idata = sols{1}.idata;
  endif
  if (has_lambda)
    sol.lambda = lambda;
  endif
  if (has_events)
    sol.xe = xe;  sol.ye = ye;  sol.ie = ie;
  endif
  sol.status = status;
  sol.messages = messages;
  chunkstats = cellfun (@(s) s.stats, sols, "UniformOutput", false);
  sol.sweep = struct ("chunks", {cols}, "stats", {chunkstats}, "mode", mode);
endfunction

## Counts summed over the chunks; the steps and the max* fields (largest
## Newton count, step, residuals) the largest of the chunks', min* the
## smallest.
function st = join_stats (sols)
  st = struct ();
  names = {};
  for c = 1:numel (sols)
    names = [names; setdiff(fieldnames (sols{c}.stats), names, "stable")];
  endfor
  for f = names.'
    name = f{1};
    v = [];                        # over the chunks that count it
    for c = 1:numel (sols)
      if (isfield (sols{c}.stats, name))
        v(end+1) = sols{c}.stats.(name);
      endif
    endfor
    if (any (strcmp (name, {"nsteps", "stepdensityeps"})) || strncmp (name, "max", 3))
      st.(name) = max (v);
    elseif (strncmp (name, "min", 3))
      st.(name) = min (v);
    else
      st.(name) = sum (v);
    endif
  endfor
endfunction

function print_stats (sol)
  st = sol.stats;
  printf ("odepkg_sweep: %d members in %d chunks (%s)\n", numel (sol.status),
          numel (sol.sweep.chunks), sol.sweep.mode);
  printf ("Number of successful steps:   %d (the most of a chunk)\n", st.nsteps);
  printf ("Number of failed attempts:    %d (all chunks)\n", st.nfailed);
  printf ("Number of function calls:     %d (all chunks)\n", st.nfevals);
  if (isfield (st, "nnewtoniter") && st.nnewtoniter > 0)
    printf ("Number of Newton iterations:  %d (all chunks)\n", st.nnewtoniter);
  endif
endfunction

function t = last_time (sol, k)
  alive = find (! isnan (sol.y(1, :, k)));
  t = sol.x(alive(end));
endfunction

## ---------------------------------------------------------------------------
## The parameter form
function R = parameter_sweep (fun, params, varargin)
  if (ischar (fun))
    fun = str2func (fun);
  endif
  if (! is_function_handle (fun))
    error ("odepkg:invalidInput",
           "odepkg_sweep: FUN must be a function handle of one parameter");
  endif
  if (iscell (params))
    P = params;
  elseif (isnumeric (params) || islogical (params) || isstruct (params))
    P = num2cell (params);
  else
    error ("odepkg:invalidInput",
           "odepkg_sweep: PARAMS must be a cell, numeric, logical or struct array (one parameter per element)");
  endif
  so = sweep_options (varargin);
  if (! isempty (so.MemberParameters))
    error ("odepkg:invalidOption",
           'odepkg_sweep: option "MemberParameters" belongs to the ensemble form (SOLVER, FCN, TSPAN, Y0); FUN takes one parameter');
  endif
  R = cell (size (P));
  M = numel (P);
  if (M == 0)
    return;
  endif
  [mode, nworkers] = run_mode (so);
  C = M;
  if (! isempty (so.Chunks))
    C = min (so.Chunks, M);
  endif
  edges = round (linspace (0, M, C + 1));
  idx = arrayfun (@(c) edges(c)+1:edges(c+1), 1:C, "UniformOutput", false);
  blocks = cellfun (@(j) P(j), idx, "UniformOutput", false);
  job = @(p) odepkg_sweep ("__params__", fun, p);
  res = evaluate (mode, nworkers, so, job, blocks);
  for c = 1:C
    r = res{c};
    if (! isempty (r.identifier) || ! isempty (r.message))
      raise (r, sprintf ("parameter %d", idx{c}(r.index)));
    endif
    R(idx{c}) = r.values;
  endfor
endfunction

function r = run_params (fun, p)
  r = struct ("values", {cell(size (p))}, "message", "", "identifier", "", "index", 0);
  for i = 1:numel (p)
    try
      r.values{i} = fun (p{i});
    catch err
      r.message = err.message;
      r.identifier = err.identifier;
      r.index = i;
      return;
    end_try_catch
  endfor
endfunction

## "MemberParameters": one array with K columns, or a cell of them, as the
## extra arguments of every user function (column j: member j's)
function mp = member_parameters (v, K)
  if (isempty (v))
    mp = {};
    return;
  endif
  mp = v;
  if (! iscell (mp))
    mp = {mp};
  endif
  for i = 1:numel (mp)
    P = mp{i};
    if (! ((isnumeric (P) || islogical (P)) && ndims (P) == 2 && columns (P) == K))
      error ("odepkg:invalidOption",
             ['odepkg_sweep: option "MemberParameters" must be an array with one column per ' ...
              'member (%d), or a cell of such arrays (item %d is %s %s)'], K, i,
             mat2str (size (P)), class (P));
    endif
  endfor
  mp = reshape (mp, 1, []);
endfunction

## ---------------------------------------------------------------------------
## Shared pieces

function so = sweep_options (args)
  so = struct ("Workers", [], "Connections", [], "Chunks", [], "MemberParameters", []);
  names = fieldnames (so);
  if (mod (numel (args), 2) != 0)
    error ("odepkg:invalidInput",
           "odepkg_sweep: options of the sweep come as name/value pairs (%s)", strjoin (names.', ", "));
  endif
  for i = 1:2:numel (args)
    name = args{i};
    k = [];
    if (ischar (name) && isrow (name))
      k = find (strcmpi (name, names));
    endif
    if (isempty (k))
      if (ischar (name))
        shown = sprintf ('"%s"', name);
      else
        shown = sprintf ("a %s", class (name));
      endif
      error ("odepkg:invalidOption",
             "odepkg_sweep: unknown option %s (the sweep's options: %s; solver options go in OPTS)",
             shown, strjoin (names.', ", "));
    endif
    so.(names{k}) = args{i+1};
  endfor
  for name = {"Workers", "Chunks"}
    v = so.(name{1});
    if (! isempty (v) && ! (isnumeric (v) && isreal (v) && isscalar (v) && isfinite (v)
                             && v >= 1 && v == fix (v)))
      error ("odepkg:invalidOption",
             'odepkg_sweep: option "%s" must be a positive integer (the number of %s)', name{1},
             ifelse_text (strcmp (name{1}, "Workers"), "local processes", "chunks"));
    endif
    so.(name{1}) = double (v);
  endfor
  if (! isempty (so.Connections))
    if (! strcmp (class (so.Connections), "pconnections"))
      error ("odepkg:invalidOption",
             'odepkg_sweep: option "Connections" must be the connections returned by pconnect (got a %s)',
             class (so.Connections));
    endif
    if (! isempty (so.Workers))
      error ("odepkg:invalidOption",
             ['odepkg_sweep: options "Workers" and "Connections" exclude each other (the servers ' ...
              'choose their own local processes: network_set''s "nlocaljobs")']);
    endif
  endif
endfunction

function s = ifelse_text (c, a, b)
  if (c)
    s = a;
  else
    s = b;
  endif
endfunction

## serial (this process), local (parcellfun) or remote (netcellfun); the
## package is loaded only for the last two
function [mode, nworkers] = run_mode (so)
  nworkers = 1;
  if (! isempty (so.Connections))
    mode = "remote";
    odepkg_parallel ("odepkg_sweep");
    return;
  endif
  nworkers = so.Workers;
  if (isempty (nworkers))
    nworkers = nproc ();
  endif
  if (nworkers == 1)
    mode = "serial";
  else
    mode = "local";
    odepkg_parallel ("odepkg_sweep");
  endif
endfunction

## the servers' local processes summed (nlocaljobs where set, else cores)
function n = remote_jobs (conns)
  info = network_get_info (conns);
  n = 0;
  for i = 1:numel (info)
    if (! info(i).local_machine)
      if (info(i).nlocaljobs > 0)
        n += info(i).nlocaljobs;
      else
        n += info(i).nproc;
      endif
    endif
  endfor
  n = max (n, 1);
endfunction

## The workers that parcellfun forks inherit the pipes of octave-symbolic's
## Python process (odepkg_model starts it): Python then never sees the end
## of its input, and Octave's exit waits for it forever while the workers
## wait for Octave.  The link is closed first (the next symbolic call opens
## a new one).
function close_symbolic_link ()
  if (exist ("sympref") == 2)
    evalc ("sympref ('reset')");
  endif
endfunction

## Every chunk's errors come back as data (run_chunk, run_params); what is
## caught here is a failure of the machinery itself (a worker that died, a
## server without odepkg on its path).
function res = evaluate (mode, nworkers, so, job, blocks)
  switch (mode)
    case "serial"
      res = cellfun (job, blocks, "UniformOutput", false);
    case "local"
      close_symbolic_link ();
      try
        res = parcellfun (nworkers, job, blocks, "UniformOutput", false, "VerboseLevel", 0);
      catch err
        error ("odepkg:workerFailed", "odepkg_sweep: parcellfun failed: %s", err.message);
      end_try_catch
    case "remote"
      try
        res = netcellfun (so.Connections, job, blocks, "UniformOutput", false, "ChunkSize", 1);
      catch err
        error ("odepkg:workerFailed",
               ["odepkg_sweep: netcellfun failed: %s (is odepkg on every server's path? " ...
                "e.g. reval (\"pkg load odepkg\", conns))"], err.message);
      end_try_catch
  endswitch
endfunction

function raise (r, where)
  e.message = sprintf ("odepkg_sweep: %s: %s", where, r.message);
  e.identifier = r.identifier;
  if (isempty (e.identifier))
    e.identifier = "odepkg:workerFailed";
  endif
  error (e);
endfunction

function s = member_text (j)
  if (isscalar (j))
    s = sprintf ("member %d", j);
  else
    s = sprintf ("members %d-%d", j(1), j(end));
  endif
endfunction

function v = opt_value (opts, name)
  v = [];
  f = fieldnames (opts);
  k = find (strcmpi (f, name), 1);
  if (! isempty (k))
    v = opts.(f{k});
  endif
endfunction

function tf = fixed_steps (opts)
  tf = ! isempty (opt_value (opts, "TimeStepSize")) || ! isempty (opt_value (opts, "TimeStepNumber"));
endfunction

## options whose effect happens in the workers and cannot be joined
function refuse_worker_options (opts)
  for name = {"OutputFcn", "HamiltonianFcn", "InvariantFcn", "MonitorMultipliers"}
    v = opt_value (opts, name{1});
    if (! isempty (v) && ! (ischar (v) && any (strcmpi (v, {"off", "no"}))))
      error ("odepkg:invalidOption",
             'odepkg_sweep: option "%s" is not taken by a sweep (it would run in the workers); %s',
             name{1}, ifelse_text (strcmp (name{1}, "OutputFcn"),
                                   "plot or observe the joined result",
                                   "compute the invariants from the joined y"));
    endif
  endfor
  p = opt_value (opts, "Progress");
  if (! isempty (p) && ! (ischar (p) && strcmpi (p, "off")))
    error ("odepkg:invalidOption",
           'odepkg_sweep: option "Progress" is not taken by a sweep (it would display in the workers)');
  endif
endfunction

## "Stats", "on" is printed here for the joined run, not by each worker
function [opts, on] = take_stats (opts)
  s = opt_value (opts, "Stats");
  on = ischar (s) && strcmpi (s, "on");
  f = fieldnames (opts);
  k = find (strcmpi (f, "Stats"), 1);
  if (! isempty (k))
    opts = rmfield (opts, f{k});
  endif
endfunction

%!## The callbacks are anonymous functions: parcellfun's workers receive a
%!## handle to a named function by its name, and functions defined in a test
%!## block (or on the command line) are not known there
%!function f = kepler ()
%!  f = @(t, Y) [Y(3:4,:); -Y(1:2,:) ./ sum(Y(1:2,:).^2, 1).^1.5];
%!endfunction
%!function Y0 = kepler_y0 (e)
%!  e = e(:).';
%!  Y0 = [1 - e; zeros(size (e)); zeros(size (e)); sqrt((1 + e) ./ (1 - e))];
%!endfunction
%!function f = pendulum ()
%!  f = @(t, Y) [Y(3:4,:); zeros(1, columns (Y)); -ones(1, columns (Y))];
%!endfunction
%!function o = pendulum_opts (varargin)
%!  o = odepkgset ("ConstraintFcn", @(Q) sum(Q.^2, 1) - 1,
%!                 "ConstraintGradFcn", @(Q) reshape (2 * Q, 1, 2, []),
%!                 "ConstraintsNb", 1, "Explicit", "yes", varargin{:});
%!endfunction
%!function [t, y, te, ye, ie] = member_by_member (solver, f, tspan, Y0, o)
%!  ## the reference: each member alone, as a plain run
%!  for k = 1:columns (Y0)
%!    [t{k}, y{k}, te{k}, ye{k}, ie{k}] = solver (f, tspan, Y0(:,k), o);
%!  endfor
%!endfunction
%!function ok = have_parallel ()
%!  ok = ! isempty (pkg ("list", "parallel"));
%!  if (! ok)
%!    puts ("odepkg_sweep: skipping the parallel tests: octave-parallel is not installed\n");
%!  endif
%!endfunction

%!## A pserver on the loopback interface (octave-parallel's cluster server).
%!## Debian's octave-parallel is built without GnuTLS (pconnect: "TLS not
%!## available"; no parallel_generate_srp_data), so the server runs without
%!## authentication ("--no-auth", use_tls false): for the few seconds of the
%!## test it takes commands on ports 12501/12502 of every interface (pconnect
%!## has no port option).  It refuses to run as root, so under root it runs
%!## as the user nobody (setpriv), from a world-readable copy of the package.
%!## pserver (OPTIONS) of 4.0.1 rejects every struct (print_usage), so the
%!## server binary is started as pserver.m starts it.
%!function why = loopback_obstacle ()
%!  why = "";
%!  if (isempty (pkg ("list", "parallel")))
%!    why = "octave-parallel is not installed";
%!    return;
%!  endif
%!  ## Under make sanitize libasan is preloaded into every process started
%!  ## from this Octave, and the server's own Octave then fails to open its
%!  ## command stream: a limit of that environment, not of netcellfun.
%!  if (! isempty (strfind (getenv ("LD_PRELOAD"), "libasan")))
%!    why = "libasan is preloaded (make sanitize)";
%!    return;
%!  endif
%!  if (! isunix () || ! exist ("/proc/net/tcp", "file"))
%!    why = "not a Linux system (/proc/net/tcp)";
%!    return;
%!  endif
%!  if (isempty (pserver_binary ()))
%!    why = "the server program octave-pserver was not found";
%!    return;
%!  endif
%!  needed = {"setsid", "sh"};
%!  if (geteuid () == 0)
%!    needed{end+1} = "setpriv";
%!  endif
%!  for c = needed
%!    if (isempty (file_in_path (getenv ("PATH"), c{1})))
%!      why = sprintf ("%s (util-linux) not found", c{1});
%!      return;
%!    endif
%!  endfor
%!  pidfile = sprintf ("/tmp/.octave-%s.pid", gethostname ());
%!  if (exist (pidfile, "file"))
%!    why = sprintf ("a pserver is already running on this machine (%s)", pidfile);
%!    return;
%!  endif
%!  ## ports 12501, 12502 (0x30D5, 0x30D6) listened on (state 0A)
%!  for f = {"/proc/net/tcp", "/proc/net/tcp6"}
%!    if (exist (f{1}, "file") && ! isempty (regexp (fileread (f{1}), ':30D[56] [0-9A-F:]+ 0A', "once")))
%!      why = "port 12501 or 12502 is in use";
%!      return;
%!    endif
%!  endfor
%!endfunction
%!function b = pserver_binary ()
%!  b = "";
%!  pkg load parallel
%!  ## where pserver.m looks: the package's bin/, Debian's /usr/libexec, PATH
%!  for c = {fullfile(fileparts (which ("pserver")), "bin", "octave-pserver"), ...
%!           "/usr/libexec/octave-pserver", file_in_path(getenv ("PATH"), "octave-pserver")}
%!    if (! isempty (c{1}) && exist (c{1}, "file"))
%!      b = c{1};
%!      return;
%!    endif
%!  endfor
%!endfunction
%!function ok = can_serve_loopback ()
%!  why = loopback_obstacle ();
%!  ok = isempty (why);
%!  if (! ok)
%!    puts (["odepkg_sweep: skipping the loopback pserver test: " why "\n"]);
%!  endif
%!endfunction
%!function srv = loopback_start ()
%!  host = gethostname ();
%!  srv = struct ("dir", tempname (), "pgid", NaN, "path", {{}},
%!                "pidfile", sprintf ("/tmp/.octave-%s.pid", host),
%!                "logs", {{}});
%!  ## the server's logs in /tmp: its own, and one per network (cleanup)
%!  for f = {sprintf("/tmp/octave_error-%s.log", host), sprintf("/tmp/octave_error-%s.bak", host)}
%!    if (! exist (f{1}, "file"))
%!      srv.logs{end+1} = f{1};
%!    endif
%!  endfor
%!  mkdir (srv.dir);
%!  ## the package (m-files and oct-files) where the server's user can read it
%!  mdir = fileparts (which ("odepkg_sweep"));
%!  odir = fileparts (which ("__odepkg_integrate__"));
%!  m = fullfile (srv.dir, "m");
%!  copyfile (mdir, m);
%!  if (strncmp (odir, [mdir filesep], numel (mdir) + 1))
%!    srv.path = {m, fullfile(m, odir(numel (mdir)+2:end))};
%!  else
%!    mkdir (fullfile (srv.dir, "oct"));
%!    copyfile (fullfile (odir, "*.oct"), fullfile (srv.dir, "oct"));
%!    ## the autoloads of the DEFUNs in the one oct-file (src/Makefile)
%!    if (exist (fullfile (odir, "PKG_ADD"), "file"))
%!      copyfile (fullfile (odir, "PKG_ADD"), fullfile (srv.dir, "oct"));
%!    endif
%!    srv.path = {m, fullfile(srv.dir, "oct")};
%!  endif
%!  system (sprintf ("chmod -R a+rX %s", srv.dir));
%!  octave = fullfile (OCTAVE_HOME, "bin", "octave-cli");
%!  if (exist ([octave "-" OCTAVE_VERSION], "file"))
%!    octave = [octave "-" OCTAVE_VERSION];
%!  endif
%!  cmd = sprintf ("%s --octave-binary=%s --no-auth", pserver_binary (), octave);
%!  if (geteuid () == 0)
%!    cmd = ["setpriv --reuid=65534 --regid=65534 --clear-groups " cmd];
%!  endif
%!  ## a shell in a session of its own leads the process group of the server
%!  ## and its children; after 60 s (a hang) it stops the server and kills
%!  ## the group, the cleanup does so at once
%!  [~, out] = system (sprintf (["setsid sh -c 'HOME=%s %s; sleep 60; kill -TERM $(cat %s); " ...
%!                               "sleep 1; kill -KILL 0' </dev/null >/dev/null 2>&1 & echo $!"],
%!                              srv.dir, cmd, srv.pidfile));
%!  srv.pgid = str2double (out);
%!  for i = 1:100
%!    if (exist (srv.pidfile, "file"))
%!      return;
%!    endif
%!    pause (0.05);
%!  endfor
%!  error ("test:pserver", "odepkg_sweep test: the loopback pserver did not start within 5 s");
%!endfunction
%!function pids = live_members (pgid, comm = "")
%!  ## the processes of group PGID that are not zombies (from /proc/PID/stat),
%!  ## only those whose program name starts with COMM if given
%!  pids = [];
%!  for f = glob ("/proc/[0-9]*/stat").'
%!    try
%!      st = fileread (f{1});
%!    catch
%!      continue;
%!    end_try_catch
%!    close = find (st == ")", 1, "last");
%!    name = st(find (st == "(", 1)+1:close-1);
%!    v = sscanf (st(close+2:end), "%c %d %d", 3);
%!    if (numel (v) == 3 && v(3) == pgid && char (v(1)) != "Z"
%!        && (isempty (comm) || strncmp (name, comm, numel (comm))))
%!      pids(end+1) = str2double (regexp (f{1}, '\d+', "match", "once"));
%!    endif
%!  endfor
%!endfunction
%!function loopback_stop (srv, netid)
%!  ## after sclose the server's children end by themselves (a SIGTERM would
%!  ## make them try to dump their workspace); then the server is stopped
%!  ## (it removes its pid file) and the group killed (the watchdog shell)
%!  if (isfinite (srv.pgid) && srv.pgid > 1)
%!    daemon = NaN;
%!    if (exist (srv.pidfile, "file"))
%!      daemon = str2double (fileread (srv.pidfile));
%!    endif
%!    for i = 1:60
%!      if (isempty (live_members (srv.pgid, "octave-cli")))
%!        break;
%!      endif
%!      pause (0.05);
%!    endfor
%!    if (isfinite (daemon))
%!      kill (daemon, 15);
%!    endif
%!    for i = 1:100
%!      if (! exist (srv.pidfile, "file"))
%!        break;
%!      endif
%!      pause (0.05);
%!    endfor
%!    kill (-srv.pgid, 9);
%!  endif
%!  if (! isempty (netid))
%!    srv.logs{end+1} = sprintf ("/tmp/octave_error-%s_%s.log", gethostname (), netid);
%!  endif
%!  for f = srv.logs
%!    if (exist (f{1}, "file"))
%!      unlink (f{1});
%!    endif
%!  endfor
%!  if (exist (srv.dir, "dir"))
%!    confirm_recursive_rmdir (false, "local");
%!    rmdir (srv.dir, "s");
%!  endif
%!endfunction

%!testif ; have_parallel ()
%! ## parcellfun with 2 workers gives the serial results: 6 Kepler orbits
%! ## (e = 0 ... 0.75) by explicit Stormer-Verlet at fixed steps, each member
%! ## against its own plain run; bitwise, as the members are independent and
%! ## every worker does the same arithmetic
%! Y0 = kepler_y0 (linspace (0, 0.75, 6));
%! o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 1000, "Explicit", "yes");
%! [tr, yr] = member_by_member (@odeSV, kepler (), 0, Y0, o);
%! [t, y] = odepkg_sweep (@odeSV, kepler (), 0, Y0, o, "Workers", 2, "Chunks", 6);
%! assert (size (y), [1001, 4, 6]);
%! for k = 1:6
%!   assert (isequal (t, tr{k}) && isequal (y(:,:,k), yr{k}));
%! endfor
%! ## the in-process path (no package) and the sol form agree with it
%! sol = odepkg_sweep ("odeSV", kepler (), 0, Y0, o, "Workers", 1, "Chunks", 6);
%! assert (isequal (sol.x, t.') && isequal (sol.y, permute (y, [2 1 3])));
%! assert (sol.status, zeros (1, 6));
%! assert (strcmp (sol.sweep.mode, "serial") && numel (sol.sweep.chunks) == 6);
%! assert (sol.stats.nsteps, 1000);
%! assert (sol.stats.nfevals, sum (cellfun (@(s) s.nfevals, sol.sweep.stats)));
%! assert (sol.stats.members, 6);
%! ## the default chunks (one per worker: 3 + 3 members, each an ensemble
%! ## call) against one ensemble call of all 6: bit for bit
%! [te, ye] = odeSV (kepler (), 0, Y0, o);
%! se = odeSV (kepler (), 0, Y0, o);
%! [t2, y2, te2, ye2, ie2] = odepkg_sweep (@odeSV, kepler (), 0, Y0, o, "Workers", 2);
%! [~, ~, te1, ye1, ie1] = odeSV (kepler (), 0, Y0, o);
%! assert (isequal ({te2, ye2, ie2}, {te1, ye1, ie1}));
%! s2 = odepkg_sweep (@odeSV, kepler (), 0, Y0, o, "Workers", 2);
%! assert (cellfun (@numel, s2.sweep.chunks), [3 3]);
%! assert (isequal (t2, te) && isequal (y2, ye) && isequal (s2.y, se.y) && isequal (s2.x, se.x));
%! assert (isequal (s2.status, se.status) && s2.stats.nfevalmembers == se.stats.nfevalmembers);
%! ## plain runs and an ensemble call sum their fixed steps differently:
%! ## the same to round-off
%! assert (y, ye, 1e-12);

%!testif ; have_parallel ()
%! ## odeRATTLE on a family of pendulums (amplitudes 0.3 ... 2.7), 2 workers
%! ## against member-by-member plain runs; the constraints hold at round-off
%! ## in the joined result
%! a = linspace (0.3, 2.7, 5);
%! Y0 = [sin(a); -cos(a); zeros(2, 5)];
%! o = pendulum_opts ("TimeStepSize", 0.01, "TimeStepNumber", 1000);
%! [tr, yr] = member_by_member (@odeRATTLE, pendulum (), 0, Y0, o);
%! sol = odepkg_sweep (@odeRATTLE, pendulum (), 0, Y0, o, "Workers", 2, "Chunks", 5);
%! assert (strcmp (sol.sweep.mode, "local"));
%! for k = 1:5
%!   assert (isequal (sol.x.', tr{k}) && isequal (sol.y(:,:,k).', yr{k}));
%! endfor
%! q = sol.y(1:2,:,:);  p = sol.y(3:4,:,:);
%! assert (max (abs (sum (q.^2, 1) - 1)(:)) < 1e-13);
%! assert (max (abs (sum (q .* p, 1))(:)) < 1e-13);

%!testif ; have_parallel ()
%! ## the pendulum family in the default chunks (3 + 2 members, batched
%! ## RATTLE) against one ensemble call: bit for bit.  The constraint's
%! ## gradient by differences here (ensemble mode's check of a given
%! ## ConstraintGradFcn fails at a4b0864)
%! a = linspace (0.3, 2.7, 5);
%! Y0 = [sin(a); -cos(a); zeros(2, 5)];
%! o = odepkgset ("ConstraintFcn", @(Q) sum(Q.^2, 1) - 1, "ConstraintsNb", 1,
%!                "Explicit", "yes", "TimeStepSize", 0.01, "TimeStepNumber", 1000);
%! se = odeRATTLE (pendulum (), 0, Y0, o);
%! s2 = odepkg_sweep (@odeRATTLE, pendulum (), 0, Y0, o, "Workers", 2);
%! assert (cellfun (@numel, s2.sweep.chunks), [3 2]);
%! assert (isequal (s2.y, se.y) && isequal (s2.x, se.x));
%! assert (s2.stats.nfevalmembers, se.stats.nfevalmembers);
%! q = s2.y(1:2,:,:);
%! assert (max (abs (sum (q.^2, 1) - 1)(:)) < 1e-13);

%!testif ; have_parallel ()
%! ## terminal events: circular Kepler orbits of radii 1, 1.5, 6 stopped
%! ## where q_2 falls through 0 (half a period, pi r^1.5: 3.14, 5.77, 46.2);
%! ## the third runs to t = 20.  Each member's events and status as its plain
%! ## run; its rows after the end are NaN
%! r = [1, 1.5, 6];
%! Y0 = [r; zeros(1, 3); zeros(1, 3); 1 ./ sqrt(r)];
%! o = odepkgset ("TimeStepSize", 0.01, "Explicit", "yes",
%!                "Events", @(t, Y) deal (Y(2,:), true, -1));
%! [tr, yr, ter, yer, ier] = member_by_member (@odeSV, kepler (), [0 20], Y0, o);
%! [t, y, te, ye, ie] = odepkg_sweep (@odeSV, kepler (), [0 20], Y0, o, "Workers", 2, "Chunks", 3);
%! sol = odepkg_sweep (@odeSV, kepler (), [0 20], Y0, o, "Workers", 2, "Chunks", 3);
%! assert (t(end), 20, 1e-12);
%! assert (sol.status, [1 1 0]);
%! assert (isequal (sol.xe, te) && isequal (sol.ye, ye) && isequal (sol.ie, ie));
%! for k = 1:3
%!   assert (isequal (te{k}, ter{k}) && isequal (ye{k}, yer{k}) && isequal (ie{k}, ier{k}));
%!   n = numel (tr{k}) - (k < 3);     # a plain run's last output is its event
%!   assert (isequal (t(1:n), tr{k}(1:n)) && isequal (y(1:n,:,k), yr{k}(1:n,:)));
%!   assert (all (isnan (y(n+1:end,:,k))(:)));
%! endfor
%! assert ([te{1:2}], pi * r(1:2).^1.5, 1e-3);   # the phase error of h = 0.01: 1e-4
%! ## two chunks (an ensemble call of 2 members, a plain run of the third)
%! ## against one ensemble call: the same times and states (to round-off:
%! ## the longest chunk, whose times are taken, is the plain run), NaN after
%! ## each member's end, events and status
%! [t1, y1, te1, ye1, ie1] = odeSV (kepler (), [0 20], Y0, o);
%! s1 = odeSV (kepler (), [0 20], Y0, o);
%! [t2, y2, te2, ye2, ie2] = odepkg_sweep (@odeSV, kepler (), [0 20], Y0, o, "Workers", 2);
%! s2 = odepkg_sweep (@odeSV, kepler (), [0 20], Y0, o, "Workers", 2);
%! assert (t2, t1, 1e-12);
%! assert (isequal (isnan (y2), isnan (y1)) && isequal (s2.status, s1.status));
%! assert (y2(! isnan (y2)), y1(! isnan (y1)), 1e-12);
%! assert (isequaln (s2.y, permute (y2, [2 1 3])));
%! assert (te2, te1, 1e-12);  assert (ye2, ye1, 1e-12);  assert (isequal (ie2, ie1));
%! assert (s2.xe, s1.xe, 1e-12);  assert (s2.ye, s1.ye, 1e-12);  assert (isequal (s2.ie, s1.ie));

%!testif ; have_parallel ()
%! ## "MemberParameters": circular orbits of radius 1 about centres of mass
%! ## mu = 0.5 ... 4 (speed sqrt (mu)); every callback gets its members'
%! ## columns of mu, as one ensemble call passes all of them: the same
%! ## result, and each orbit stays on its circle (a member given another's
%! ## mu would leave it by O(1))
%! mu = [0.5 1 1.5 2 3 4];
%! f = @(t, Y, mu) [Y(3:4,:); -mu .* Y(1:2,:) ./ sum(Y(1:2,:).^2, 1).^1.5];
%! Y0 = [ones(1, 6); zeros(2, 6); sqrt(mu)];
%! o = odepkgset ("TimeStepSize", 0.005, "TimeStepNumber", 1000, "Explicit", "yes");
%! [t1, y1] = odeSV (f, 0, Y0, o, mu);
%! [t2, y2] = odepkg_sweep (@odeSV, f, 0, Y0, o, "Workers", 2, "MemberParameters", mu);
%! assert (isequal (t2, t1) && isequal (y2, y1));
%! r = sqrt (sum (y2(:,1:2,:).^2, 2));
%! assert (max (abs (r(:) - 1)) < 1e-4);
%! ## as a cell, in chunks of one member (plain runs, mu a scalar each)
%! sol = odepkg_sweep (@odeSV, f, 0, Y0, o, "Workers", 2, "Chunks", 6, "MemberParameters", {mu});
%! assert (sol.y, permute (y1, [2 1 3]), 1e-12);

%!testif ; have_parallel ()
%! ## the parameter form: global error of Stormer-Verlet after one Kepler
%! ## period for four step sizes, 2 workers against a serial loop; the
%! ## fitted order is 2
%! h = 2*pi ./ [200 400 800 1600];
%! f = kepler ();  y0 = kepler_y0 (0.5);
%! err = @(h) norm (odeSV (f, [0 2*pi], y0,
%!                         odepkgset ("TimeStepSize", h, "Explicit", "yes")).y(:,end) - y0);
%! R = odepkg_sweep (err, h, "Workers", 2);
%! assert (size (R), [1 4]);
%! assert (isequal ([R{:}], arrayfun (err, h)));
%! assert (polyfit (log (h), log ([R{:}]), 1)(1), 2, 0.1);
%! ## a cell of parameters in fewer chunks, the same results
%! R2 = odepkg_sweep (err, num2cell (h), "Workers", 2, "Chunks", 2);
%! assert (isequal (R2, R));

%!testif ; can_serve_loopback ()
%! ## netcellfun over a pserver on the loopback interface: an ensemble of 3
%! ## Kepler orbits (one chunk each) and a parameter sweep, against the
%! ## serial results; the server is always stopped and its files removed
%! srv = struct ("dir", "", "pgid", NaN, "pidfile", "", "logs", {{}});
%! conns = [];
%! netid = "";
%! t0 = tic ();
%! unwind_protect
%!   srv = loopback_start ();
%!   conns = pconnect ({"localhost"}, struct ("use_tls", false));
%!   netid = network_get_info (conns)(1).network_id;
%!   reval (sprintf ('addpath ("%s");', strjoin (srv.path, '", "')), conns(2));
%!   f = kepler ();
%!   Y0 = kepler_y0 ([0.2 0.4 0.6]);
%!   o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 500, "Explicit", "yes");
%!   [tr, yr] = member_by_member (@odeSV, f, 0, Y0, o);
%!   sol = odepkg_sweep (@odeSV, f, 0, Y0, o, "Connections", conns, "Chunks", 3);
%!   assert (strcmp (sol.sweep.mode, "remote") && numel (sol.sweep.chunks) == 3);
%!   for k = 1:3
%!     assert (isequal (sol.x.', tr{k}) && isequal (sol.y(:,:,k).', yr{k}));
%!   endfor
%!   ## default chunks: the server's processes (its cores), at most K
%!   sol2 = odepkg_sweep (@odeSV, f, 0, Y0(:,1:2), o, "Connections", conns);
%!   assert (isequal (sol2.y, sol.y(:,:,1:2)));
%!   y0 = Y0(:,1);
%!   dH = @(h) max (abs (sum (odeSV (f, 0, y0, odepkgset (o, "TimeStepSize", h)).y.^2 .* [0; 0; 1; 1], 1) / 2
%!                       - 1 ./ sqrt (sum (odeSV (f, 0, y0, odepkgset (o, "TimeStepSize", h)).y(1:2,:).^2, 1))
%!                       + 1/2));
%!   R = odepkg_sweep (dH, [0.02 0.01], "Connections", conns);
%!   assert (isequal ([R{:}], [dH(0.02), dH(0.01)]));
%! unwind_protect_cleanup
%!   if (! isempty (conns))
%!     sclose (conns);
%!   endif
%!   loopback_stop (srv, netid);
%! end_unwind_protect
%! assert (! exist (srv.pidfile, "file"));
%! assert (isempty (live_members (srv.pgid)));
%! printf ("odepkg_sweep: loopback pserver test: %.1f s\n", toc (t0));

%!test
%! ## octave-parallel absent (simulated by the test hook, never by
%! ## uninstalling): a parallel run is odepkg:parallelMissing naming the
%! ## Debian package and pkg load; "Workers", 1 runs without it
%! Y0 = kepler_y0 ([0.1 0.2]);
%! o = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 10, "Explicit", "yes");
%! old = getenv ("ODEPKG_SIMULATE_NO_PARALLEL");
%! setenv ("ODEPKG_SIMULATE_NO_PARALLEL", "1");
%! unwind_protect
%!   try
%!     odepkg_sweep (@odeSV, kepler (), 0, Y0, o, "Workers", 2);
%!     error ("test:noError", "no error");
%!   catch err
%!     assert (err.identifier, "odepkg:parallelMissing");
%!     assert (! isempty (strfind (err.message, "apt-get install octave-parallel")));
%!     assert (! isempty (strfind (err.message, "pkg load parallel")));
%!   end_try_catch
%!   try
%!     odepkg_sweep (@(x) x, 1:3, "Workers", 2);
%!     error ("test:noError", "no error");
%!   catch err
%!     assert (err.identifier, "odepkg:parallelMissing");
%!   end_try_catch
%!   [t, y] = odepkg_sweep (@odeSV, kepler (), 0, Y0, o, "Workers", 1, "Chunks", 2);
%!   [t1, y1] = odeSV (kepler (), 0, Y0(:,2), o);
%!   assert (isequal (y(:,:,2), y1));
%!   assert (odepkg_sweep (@(x) 2 * x, {1, 2}, "Workers", 1), {2, 4});
%! unwind_protect_cleanup
%!   setenv ("ODEPKG_SIMULATE_NO_PARALLEL", old);
%! end_unwind_protect

%!error <odepkg_sweep: member 1: odeSV: Y0 must have even length> odepkg_sweep (@odeSV, kepler (), 0, ones (3, 2), odepkgset ("TimeStepSize", 0.1, "TimeStepNumber", 2), "Workers", 1, "Chunks", 2)
%!error <TSPAN = \[t0 tf\] with variable steps> odepkg_sweep (@odeSV, kepler (), [0 1], kepler_y0 ([0 0.1]), "Workers", 1, "Chunks", 2)
%!error <unknown option "Worker"> odepkg_sweep (@odeSV, kepler (), 0, kepler_y0 ([0 0.1]), [], "Worker", 2)
%!error <option "Workers" must be a positive integer> odepkg_sweep (@odeSV, kepler (), 0, kepler_y0 ([0 0.1]), [], "Workers", 1.5)
%!error <option "Chunks" must be a positive integer> odepkg_sweep (@(x) x, 1:3, "Chunks", 0)
%!error <option "Connections" must be the connections returned by pconnect> odepkg_sweep (@(x) x, 1:3, "Connections", 1)
%!error <option "OutputFcn" is not taken by a sweep> odepkg_sweep (@odeSV, kepler (), 0, kepler_y0 ([0 0.1]), odepkgset ("OutputFcn", @odeplot), "Workers", 1)
%!error <option "Progress" is not taken by a sweep> odepkg_sweep (@odeSV, kepler (), 0, kepler_y0 ([0 0.1]), odepkgset ("Progress", "on"), "Workers", 1)
%!error <option "MemberParameters" must be an array with one column per member \(2\)> odepkg_sweep (@odeSV, kepler (), 0, kepler_y0 ([0 0.1]), [], "Workers", 1, "MemberParameters", [1 2 3])
%!error <"MemberParameters" belongs to the ensemble form> odepkg_sweep (@(x) x, 1:3, "Workers", 1, "MemberParameters", 1:3)
%!error <OPTS must be a scalar struct> odepkg_sweep (@odeSV, kepler (), 0, kepler_y0 ([0 0.1]), 3, "Workers", 1)
%!error <odepkg_sweep: parameter 3: index \(3\)> odepkg_sweep (@(x) ones (1, 2)(x), [1 2 3], "Workers", 1, "Chunks", 2)
%!test
%! ## a worker's error keeps its identifier
%! try
%!   odepkg_sweep (@(x) error ("my:id", "failed at %d", x), [5 6], "Workers", 1);
%! catch err
%!   assert (err.identifier, "my:id");
%!   assert (err.message, "odepkg_sweep: parameter 1: failed at 5");
%! end_try_catch

%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! ## a model of odepkg_model in the ensemble form, its parameter one value
%! ## per member in "MemberParameters": the chunks joined equal the one
%! ## native ensemble call, bit for bit
%! pkg load symbolic
%! dir = tempname ();
%! unwind_protect
%!   syms q p k real
%!   osc = odepkg_model ("H", p^2/2 + k*q^2/2, "q", q, "p", p, "Parameters", k, "CacheDir", dir);
%!   K = 7;  kk = 1:K;  Y0 = [ones(1, K); zeros(1, K)];
%!   o = odepkgset ("TimeStepSize", 0.01);
%!   sol = odepkg_sweep (@odeSV, osc, [0 2], Y0, o, "Workers", 1, "Chunks", 3, "MemberParameters", kk);
%!   one = odeSV (osc, [0 2], Y0, o, kk);
%!   assert (sol.y, one.y, 0);
%!   assert (squeeze (sol.y(1, end, :)).', cos (sqrt (kk) * 2), 1e-3);
%! unwind_protect_cleanup
%!   confirm_recursive_rmdir (false, "local");
%!   if (exist (dir, "dir"))
%!     rmdir (dir, "s");
%!   endif
%! end_unwind_protect
