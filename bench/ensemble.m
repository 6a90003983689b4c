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
## Per K it prints the microseconds per trajectory-step (time / (K steps))
## of the ensemble call and of the separate calls, their ratio, the largest
## difference between an ensemble member and its separate run, the size of
## the ensemble output and the process's peak resident memory (VmHWM of
## /proc/self/status, read after the K run; the Ks run in increasing order,
## so it is the peak so far).  Times are medians of @var{runs} (default 3)
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
  h = 0.01;  T = steps * h;
  tspan = linspace (0, T, 11);
  printf ("ensemble benchmark: %d fixed steps of h = %g per member, medians of %d runs, Octave %s, %s\n",
          steps, h, runs, OCTAVE_VERSION, datestr (now (), 31));

  ## --- Kepler, explicit odeSV ---------------------------------------------
  kepler = @(t, Y) [Y(3:4,:); -Y(1:2,:) ./ sum(Y(1:2,:).^2, 1).^1.5];
  kep_y0 = @(K) kepler_members (K);
  o_sv = odepkgset ("TimeStepSize", h, "Explicit", "yes");
  printf ("\nKepler e in [0.45, 0.55], odeSV explicit (Stormer-Verlet)\n");
  res = family ("odeSV Kepler", @odeSV, kepler, kep_y0, tspan, o_sv, Ks, runs, nsample, steps);

  ## --- pendulum family, odeRATTLE explicit ---------------------------------
  pend = @(t, Y) [Y(3:4,:); zeros(1, columns (Y)); -ones(1, columns (Y))];
  o_ra = odepkgset ("TimeStepSize", h, "Explicit", "yes", "ConstraintsNb", 1,
                    "ConstraintFcn", @(Q) sum (Q.^2, 1) - 1,
                    "ConstraintGradFcn", @(Q) reshape (2 * Q, 1, rows (Q), columns (Q)));
  printf ("\nCartesian pendulum g = |q|^2 - 1, released from rest at angles in [0.2, 2.5], odeRATTLE explicit\n");
  res = [res, family("odeRATTLE pendulum", @odeRATTLE, pend, @pendulum_members, tspan, o_ra, ...
                       Ks, runs, nsample, steps)];

  ## --- against the targets of issue 25 --------------------------------------
  printf ("\n");
  for r = res(:).'
    if (r.K == 1000)
      target = ifelse_ (strncmp (r.family, "odeSV", 5), 50, 20);
      printf ("%s, K = 1000: ensemble %.0fx cheaper per trajectory-step than separate calls (target >= %dx): %s\n",
              r.family, r.ratio, target, ifelse_ (r.ratio >= target, "met", "NOT met"));
    endif
  endfor
endfunction

function res = family (name, solver, f, members, tspan, o, Ks, runs, nsample, steps)
  printf ("%7s %14s %14s %8s %10s %12s %12s\n", "K", "ensemble", "separate", "ratio",
          "max diff", "output", "VmHWM");
  printf ("%7s %14s %14s %8s %10s %12s %12s\n", "", "[us/traj-step]", "[us/traj-step]", "", "", "[MB]", "[MB]");
  res = struct ("family", {}, "K", {}, "us_ensemble", {}, "us_separate", {}, "ratio", {},
                 "sampled", {}, "maxdiff", {}, "output_MB", {}, "VmHWM_MB", {});
  for K = Ks
    Y0 = members (K);
    ## the ensemble: one call
    [t_ens, y] = median_time (@() ens_call (solver, f, tspan, Y0, o), runs);
    info = whos ("y");
    out_mb = info.bytes / 2^20;
    hwm = vm_hwm_mb ();
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
    printf ("%7d %14.3f %14.3f %8.1f %10.1e %12.3f %12.1f%s\n", K, us_e, us_s, us_s / us_e,
            maxdiff, out_mb, hwm, note);
    res(end+1) = struct ("family", name, "K", K, "us_ensemble", us_e, "us_separate", us_s,
                          "ratio", us_s / us_e, "sampled", numel (idx) < K, "maxdiff", maxdiff,
                          "output_MB", out_mb, "VmHWM_MB", hwm);
    clear y y3 ys
  endfor
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

function mb = vm_hwm_mb ()
  mb = NaN;
  if (exist ("/proc/self/status", "file"))
    tok = regexp (fileread ("/proc/self/status"), 'VmHWM:\s*(\d+)', "tokens");
    if (! isempty (tok))
      mb = str2double (tok{1}{1}) / 1024;
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
