## -*- texinfo -*-
## @deftypefn  {} {@var{res} =} ensemble ()
## @deftypefnx {} {@var{res} =} ensemble (@var{Ks}, @var{runs}, @var{nsample}, @var{steps})
## Benchmark (not a test) of the ensemble mode (odepkg issue 25): K
## trajectories integrated in one call, Y0 a 2d-by-K matrix and vectorised
## callbacks, against K separate calls of the same solver on the same
## members.  Two families, each member @var{steps} (default 1000) fixed steps
## of h = 0.01, for K in @var{Ks} (default 1, 10, 100, 1000, 10000):
##
## @itemize
## @item Kepler, explicit @code{odeSV} (Störmer–Verlet): member j has
## eccentricity e_j spread over [0.45, 0.55], from its pericentre;
## f (t, Y) = [P; -Q ./ |Q|^3] column by column.
## @item the Cartesian pendulum, @code{odeRATTLE} with @qcode{"Explicit"},
## @qcode{"yes"}: q in R^2, H = |p|^2/2 + q_2, g = |q|^2 - 1 per member
## (ConstraintFcn 1-by-k, ConstraintGradFcn 1-by-2-by-k), released at rest
## from angles spread over [0.2, 2.5] rad.
## @end itemize
##
## Per K it prints the microseconds per trajectory-step (time / (K x
## @var{steps})) of the ensemble call (K = 1: a plain run, Y0 a vector) and
## of the separate calls, their ratio, the largest
## difference between an ensemble member and its separate run, the size of
## the ensemble output, and the memory of one ensemble call, run again in a
## fresh Octave (octave-cli) so that memory freed by earlier runs does not
## hide it: the peak resident size during the call (VmHWM of
## /proc/self/status, reset before it through /proc/self/clear_refs) less
## the resident size before (VmRSS), in MB.  Times are medians of @var{runs} (default 3)
## timed runs after a warm-up.  For K > @var{nsample} (default 20) the
## separate calls are timed on @var{nsample} members spread over the
## ensemble and scaled by K / @var{nsample} (marked "sampled").  Output
## times are 11 points of [0, T], so the output is 11 x 2d x K numbers.
##
## From the repository root (source tree, oct-files built by make -C src):
## @example
## octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("PKG_ADD"); addpath ("bench"); ensemble ()'
## @end example
## Returns a struct array, one element per (family, K).
## @end deftypefn
function res = ensemble (Ks = [1 10 100 1000 10000], runs = 3, nsample = 20, steps = 1000)
  if (ischar (Ks))                 # ensemble ("memory", FAMILY, K, STEPS): a child process's work
    memory_child (runs, nsample, steps);
    return;
  endif
  printf ("ensemble benchmark: %d fixed steps of h = 0.01 per member, medians of %d runs, Octave %s, %s\n",
          steps, runs, OCTAVE_VERSION, datestr (now (), 31));
  res = [];
  for name = {"kepler", "pendulum"}
    pb = problem (name{1}, steps);
    printf ("\n%s\n", pb.title);
    res = [res, family(pb, Ks, runs, nsample, steps)];
  endfor

  ## --- against the targets of issue 25 --------------------------------------
  printf ("\n");
  for r = res(:).'
    if (r.K == 1000)
      target = ifelse_ (strcmp (r.family, "kepler"), 50, 20);
      printf ("%s, K = 1000: ensemble %.0fx cheaper per trajectory-step than separate calls (target >= %dx): %s\n",
              r.family, r.ratio, target, ifelse_ (r.ratio >= target, "met", "NOT met"));
    endif
  endfor
endfunction

## The two families: solver, vectorised f, options, members (K -> 2d-by-K).
function pb = problem (name, steps)
  h = 0.01;
  pb.tspan = linspace (0, steps * h, 11);
  switch (name)
    case "kepler"
      pb.title = "Kepler e in [0.45, 0.55], odeSV explicit (Stormer-Verlet)";
      pb.solver = @odeSV;
      pb.f = @(t, Y) [Y(3:4,:); -Y(1:2,:) ./ sum(Y(1:2,:).^2, 1).^1.5];
      pb.o = odepkgset ("TimeStepSize", h, "Explicit", "yes");
      pb.members = @kepler_members;
    case "pendulum"
      pb.title = "Cartesian pendulum g = |q|^2 - 1, released from rest at angles in [0.2, 2.5], odeRATTLE explicit";
      pb.solver = @odeRATTLE;
      pb.f = @(t, Y) [Y(3:4,:); zeros(1, columns (Y)); -ones(1, columns (Y))];
      pb.o = odepkgset ("TimeStepSize", h, "Explicit", "yes", "ConstraintsNb", 1,
                        "ConstraintFcn", @(Q) sum (Q.^2, 1) - 1,
                        "ConstraintGradFcn", @(Q) reshape (2 * Q, 1, rows (Q), columns (Q)));
      pb.members = @pendulum_members;
  endswitch
  pb.name = name;
endfunction

function res = family (pb, Ks, runs, nsample, steps)
  printf ("%7s %14s %14s %8s %10s %12s %12s\n", "K", "ensemble", "separate", "ratio",
          "max diff", "output", "peak");
  printf ("%7s %14s %14s %8s %10s %12s %12s\n", "", "[us/traj-step]", "[us/traj-step]", "", "", "[MB]", "[MB]");
  res = struct ("family", {}, "K", {}, "us_ensemble", {}, "us_separate", {}, "ratio", {},
                "sampled", {}, "maxdiff", {}, "output_MB", {}, "peak_MB", {});
  solver = pb.solver;  f = pb.f;  tspan = pb.tspan;  o = pb.o;
  for K = Ks
    Y0 = pb.members (K);
    ## the ensemble: one call
    [t_ens, y] = median_time (@() ens_call (solver, f, tspan, Y0, o), runs);
    info = whos ("y");
    out_mb = info.bytes / 2^20;
    peak = memory_of_call (pb.name, K, steps);
    ## the separate calls: all of them, or a sample spread over the members
    if (K > nsample)
      idx = unique (round (linspace (1, K, nsample)));
    else
      idx = 1:K;
    endif
    [t_sep, ys] = median_time (@() sep_calls (solver, f, tspan, Y0(:,idx), o), runs);
    t_sep *= K / numel (idx);
    ## member j of the ensemble is its separate run
    y3 = reshape (y, rows (y), rows (Y0), []);
    maxdiff = 0;
    for j = 1:numel (idx)
      maxdiff = max (maxdiff, max (max (abs (y3(:,:,idx(j)) - ys{j}))));
    endfor
    us_e = 1e6 * t_ens / (K * steps);
    us_s = 1e6 * t_sep / (K * steps);
    note = "";
    if (numel (idx) < K)
      note = sprintf ("  (separate: %d sampled, scaled by %g)", numel (idx), K / numel (idx));
    endif
    printf ("%7d %14.3f %14.3f %8.1f %10.1e %12.3f %12.2f%s\n", K, us_e, us_s, us_s / us_e,
            maxdiff, out_mb, peak, note);
    res(end+1) = struct ("family", pb.name, "K", K, "us_ensemble", us_e, "us_separate", us_s,
                         "ratio", us_s / us_e, "sampled", numel (idx) < K, "maxdiff", maxdiff,
                         "output_MB", out_mb, "peak_MB", peak);
    clear y y3 ys
  endfor
endfunction

## The memory of one ensemble call, measured in a fresh Octave (in this one,
## memory freed by earlier runs stays resident and is reused): its peak
## resident size during the call less its resident size before, in MB
## (VmHWM and VmRSS of /proc/self/status; the peak reset before the call by
## "5" to /proc/self/clear_refs).  NaN where that is not available.
function mb = memory_of_call (name, K, steps)
  mb = NaN;
  if (! exist ("/proc/self/clear_refs", "file"))
    return;
  endif
  dirs = unique ({fileparts(which ("odeSV")), fileparts(which ("__odepkg_ensemble__")), ...
                  fileparts(mfilename ("fullpath"))});
  code = [sprintf("addpath ('%s'); ", dirs{:}), ...
          sprintf("ensemble ('memory', '%s', %d, %d)", name, K, steps)];
  octave = fullfile (OCTAVE_HOME (), "bin", "octave-cli");
  if (! exist (octave, "file"))
    octave = "octave-cli";
  endif
  [status, out] = system (sprintf ('"%s" --norc --no-history --eval "%s"', octave, code));
  tok = regexp (out, 'peak_MB=([0-9.eE+-]+)', "tokens");
  if (! isempty (tok))
    mb = str2double (tok{1}{1});
  endif
endfunction

function memory_child (name, K, steps)
  pb = problem (name, steps);
  Y0 = pb.members (K);
  ens_call (pb.solver, pb.f, pb.tspan, pb.members (2), pb.o);   # load the oct-files first
  fid = fopen ("/proc/self/clear_refs", "w");
  fprintf (fid, "5");
  fclose (fid);
  rss0 = vm_kb ("VmRSS");
  y = ens_call (pb.solver, pb.f, pb.tspan, Y0, pb.o);
  printf ("peak_MB=%.4f\n", (vm_kb ("VmHWM") - rss0) / 1024);
endfunction

## one call of the solver on all members (Y0 2d-by-K; K = 1 a plain run)
function y = ens_call (solver, f, tspan, Y0, o)
  [~, y] = solver (f, tspan, Y0, o);
endfunction

## one call of the solver per member
function ys = sep_calls (solver, f, tspan, Y0, o)
  ys = cell (1, columns (Y0));
  for j = 1:columns (Y0)
    [~, ys{j}] = solver (f, tspan, Y0(:,j), o);
  endfor
endfunction

## Kepler orbits from the pericentre, e spread over [0.45, 0.55]
function Y0 = kepler_members (K)
  e = 0.5 + 0.05 * linspace (-1, 1, K);
  if (K == 1)
    e = 0.5;
  endif
  Y0 = [1 - e; zeros(2, K); sqrt((1 + e) ./ (1 - e))];
endfunction

## pendulums at rest on the unit circle, angles from the bottom in [0.2, 2.5]
function Y0 = pendulum_members (K)
  th = linspace (0.2, 2.5, K);
  if (K == 1)
    th = 1.2;
  endif
  Y0 = [sin(th); -cos(th); zeros(2, K)];
endfunction

## VmRSS or VmHWM of /proc/self/status in kB (NaN where there is none)
function kb = vm_kb (field)
  kb = NaN;
  if (exist ("/proc/self/status", "file"))
    tok = regexp (fileread ("/proc/self/status"), [field ':\s*(\d+)'], "tokens");
    if (! isempty (tok))
      kb = str2double (tok{1}{1});
    endif
  endif
endfunction

function r = ifelse_ (c, a, b)
  if (c)
    r = a;
  else
    r = b;
  endif
endfunction
