## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{rows} =} sparse_chain ()
## @deftypefnx {} {@var{rows} =} sparse_chain (@var{Ns}, @var{runs}, @var{steps})
## Benchmark (not a test) of odepkg issue 26: odeRATTLE on the planar
## hanging chain of N unit links (bench/hanging_chain.m: N unit point masses,
## the first link pinned at the origin, H = |p|^2/2 + sum y_k, released
## straight and horizontal at rest), @qcode{"Explicit"} @qcode{"yes"}, the
## exact constraint gradient as a sparse matrix, @var{steps} (default 20)
## fixed steps of h = 0.01, for each N in @var{Ns} (default 10, 10^2, @dots{},
## 10^5).  Per N: the time of the solver call (median of @var{runs}, default
## 5, after a warm-up) per step, all in (set-up, derivative check and
## separability probe included), as wall time and as CPU time (getrusage:
## meaningful on a shared machine), and the marginal CPU cost of a step,
## from a second run of @var{steps} + K steps (difference of the medians over
## K, K >= @var{steps} such that the K steps take 0.5 s); the calls of f, g and G per step (all in and marginal); the
## cost of those calls alone: f, g and G timed (CPU) in an Octave loop over
## the run's own output states, weighted by the marginal calls per step; and
## the ratio marginal time / callbacks' time (1 = the step costs its
## callbacks and nothing more); and the callbacks' marginal cost in the run
## itself ("in-run": each handle wrapped in a wall-clock timer, the median
## over as many pairs of runs; in a solver the same calls may cost more than
## in a tight loop, their data no longer in the caches) with the ratio to
## that; and the steady state: the marginal CPU cost and the in-run
## callbacks over steps 2 @var{steps} + 1 @dots{} 2 @var{steps} + Ks (Ks
## steps taking at least 1.5 s), past the release's transient (in which the
## position Newton takes its exact matrix for a while, with more calls of
## g), with their ratio.  For the largest N
## the peak resident memory of the solver call (VmHWM of /proc/self/status,
## reset through /proc/self/clear_refs before the call, less VmRSS before).
## An N is skipped once the previous one took more than 5 s per step (the
## dense path's O(m^3)); @var{rows} returns the figures as a struct array.
##
## From the repository root, after building the oct-files:
## @example
## octave-cli --norc --eval 'addpath ("src"); addpath ("inst"); source ("PKG_ADD"); addpath ("bench"); sparse_chain ()'
## @end example
## @end deftypefn
function rows = sparse_chain (Ns = 10 .^ (1:5), runs = 5, steps = 20)
  h = 0.01;
  printf ("hanging chain, odeRATTLE Explicit, sparse ConstraintGradFcn, h = %g, %d steps (marginal: from %d + K steps); medians of %d runs; Octave %s, %s\n",
          h, steps, steps, runs, OCTAVE_VERSION, datestr (now (), 31));
  printf ("CPU time (getrusage, this process) unless marked wall; the machine may be shared\n");
  printf ("%8s | %10s %10s %10s | %-22s %-22s | %12s | %6s | %11s %6s\n", "N", "wall ms/st", "ms/step", "marginal",
          "calls/step f g G", "marginal f g G", "callbacks ms", "ratio", "in-run ms", "ratio");
  rows = struct ([]);
  prev = 0;
  for N = Ns
    if (prev > 5)
      printf ("%8d | skipped: N = %d took %.1f s per step\n", N, rows(end).N, prev);
      continue;
    endif
    c = hanging_chain (N);
    o = odepkgset ("ConstraintFcn", c.g, "ConstraintGradFcn", c.G, "ConstraintsNb", c.m,
                   "Explicit", "yes", "TimeStepSize", h);
    o1 = odepkgset (o, "TimeStepNumber", steps);
    r = ifelse_runs (N, runs);
    big = (N == max (Ns));
    if (big)
      rss0 = proc_status ("VmRSS");
      reset_peak ();
    endif
    [w1, t1, s1] = median_times (@() odeRATTLE (c.f, 0, c.y0, o1), r);
    if (big)
      peak = proc_status ("VmHWM") - rss0;
    endif
    ## the marginal step: K more steps, at least 0.5 s more of CPU time
    K = min (100 * steps, max (steps, ceil (0.5 / (t1 / steps))));
    o2 = odepkgset (o, "TimeStepNumber", steps + K);
    [w2, t2, s2] = median_times (@() odeRATTLE (c.f, 0, c.y0, o2), r);
    n1 = calls (s1.stats);  n2 = calls (s2.stats);
    marg = (n2 - n1) / K;
    tm = (t2 - t1) / K;
    ## the callbacks alone, on the run's own states
    Y = s2.y(:, 1:min (end, 2 * steps + 1));
    d = 2 * N;
    tf = per_call (@(y) c.f (0, y), Y, 1:2*d);
    tg = per_call (c.g, Y, 1:d);
    tG = per_call (c.G, Y, 1:d);
    tcb = marg * [tf; tg; tG];
    ## the same callbacks timed as the solver calls them (each wrapped in a
    ## timer): their cost in the run, marginal as above
    cw = c;
    cw.f = @(t, y) timed_callback (1, c.f, t, y);
    cw.g = @(q) timed_callback (2, c.g, q);
    cw.G = @(q) timed_callback (3, c.G, q);
    ow = odepkgset (o, "ConstraintFcn", cw.g, "ConstraintGradFcn", cw.G);
    tins = zeros (r, 1);
    for k = 1:r
      tins(k) = in_run_per_step (cw, ow, c.y0, steps, steps + K);
    endfor
    tin = median (tins);
    ## the steady state: steps 2 steps + 1 ... 2 steps + Ks (Ks steps at
    ## least 1.5 s), past the release's transient, where the position
    ## Newton takes the exact matrix S for a while (the first ~35 steps at
    ## N = 10^5, with more calls of g); marginal CPU time and in-run
    ## callbacks over the same window, medians over r pairs of runs each
    s0 = 2 * steps;
    Ks = min (100 * steps, max (steps, ceil (1.5 / tm)));
    ts = tsin = zeros (r, 1);
    for k = 1:r
      c0 = cputime ();  sa = odeRATTLE (c.f, 0, c.y0, odepkgset (o, "TimeStepNumber", s0));  ca = cputime () - c0;
      c0 = cputime ();  sb = odeRATTLE (c.f, 0, c.y0, odepkgset (o, "TimeStepNumber", s0 + Ks));  cb = cputime () - c0;
      ts(k) = (cb - ca) / Ks;
      tsin(k) = in_run_per_step (cw, ow, c.y0, s0, s0 + Ks);
    endfor
    tst = median (ts);  tstin = median (tsin);
    gst = (calls (sb.stats) - calls (sa.stats)) / Ks;
    row = struct ("N", N, "wall_ms_step", 1e3 * w1 / steps, "ms_step", 1e3 * t1 / steps, "ms_marginal", 1e3 * tm,
                  "K", K, "calls", n1 / steps, "calls_marginal", marg,
                  "callbacks_ms", 1e3 * tcb, "ratio", tm / tcb, "in_run_ms", 1e3 * tin, "ratio_in_run", tm / tin,
                  "t_f", tf, "t_g", tg, "t_G", tG,
                  "maxconstr", s2.stats.maxconstrresidual, "maxhidden", s2.stats.maxhiddenresidual,
                  "peak_MB", NaN, "steady_ms", 1e3 * tst, "steady_in_run_ms", 1e3 * tstin,
                  "ratio_steady", tst / tstin, "steady_from", s0 + 1, "steady_to", s0 + Ks, "calls_steady", gst);
    if (big)
      row.peak_MB = peak / 1024;
    endif
    if (isempty (rows))
      rows = row;
    else
      rows(end+1) = row;
    endif
    printf ("%8d | %10.3f %10.3f %10.3f | %6.2f %6.2f %6.2f   %6.2f %6.2f %6.2f   | %12.3f | %6.2f | %11.3f %6.2f   (K = %d)\n",
            N, row.wall_ms_step, row.ms_step, row.ms_marginal, row.calls, marg, row.callbacks_ms, row.ratio,
            row.in_run_ms, row.ratio_in_run, K);
    prev = w1 / steps;
  endfor
  printf ("steady state (steps 2 steps + 1 ... 2 steps + Ks, past the release's transient), CPU ms per step:\n");
  printf ("%8s | %14s | %10s %-22s | %11s %6s\n", "N", "steps", "marginal", "calls/step f g G", "in-run ms", "ratio");
  for row = rows
    printf ("%8d | %6d .. %5d | %10.3f %6.2f %6.2f %6.2f   | %11.3f %6.2f\n", row.N, row.steady_from, row.steady_to,
            row.steady_ms, row.calls_steady, row.steady_in_run_ms, row.ratio_steady);
  endfor
  printf ("one call, CPU ms (median):\n%8s %10s %10s %10s   %s\n", "N", "f", "g", "G", "max |g|, max |G H_p| (solver's stats)");
  for row = rows
    printf ("%8d %10.4f %10.4f %10.4f   %.1e, %.1e\n", row.N, 1e3 * [row.t_f, row.t_g, row.t_G],
            row.maxconstr, row.maxhidden);
  endfor
  if (! isempty (rows) && ! isnan (rows(end).peak_MB))
    printf ("N = %d: peak memory of the solver call (VmHWM - VmRSS before) %.1f MB; its output alone %.1f MB\n",
            rows(end).N, rows(end).peak_MB, 8 * 4 * rows(end).N * (steps + 1) / 2^20);
  endif
endfunction

## the wrapped callbacks' wall time per step over steps sa + 1 ... sb: one
## run of sa steps and one of sb, each from y0
function t = in_run_per_step (cw, ow, y0, sa, sb)
  timed_callback ("reset");
  sw = odeRATTLE (cw.f, 0, y0, odepkgset (ow, "TimeStepNumber", sa));
  a1 = timed_callback ("read");
  timed_callback ("reset");
  sw = odeRATTLE (cw.f, 0, y0, odepkgset (ow, "TimeStepNumber", sb));
  a2 = timed_callback ("read");
  t = sum (a2 - a1) / (sb - sa);
endfunction

## fewer timed runs where one run takes long
function r = ifelse_runs (N, runs)
  r = runs;
  if (N >= 1e5)
    r = max (1, min (runs, 3));
  endif
endfunction

function n = calls (st)
  n = [st.nfevals, st.nconstrevals, st.nconstrgradevals];
endfunction

## medians of wall and CPU seconds of runs calls of fn after a warm-up
function [w, c, out] = median_times (fn, runs)
  out = fn ();
  ws = cs = zeros (runs, 1);
  for k = 1:runs
    c0 = cputime ();  w0 = tic ();
    out = fn ();
    ws(k) = toc (w0);  cs(k) = cputime () - c0;
  endfor
  w = median (ws);  c = median (cs);
endfunction

## a field of /proc/self/status in kB (NaN where unavailable)
function kb = proc_status (field)
  kb = NaN;
  txt = fileread ("/proc/self/status");
  tok = regexp (txt, [field ":\\s*(\\d+) kB"], "tokens", "once");
  if (! isempty (tok))
    kb = str2double (tok{1});
  endif
endfunction

## reset the peak RSS (VmHWM) to the current RSS (Linux: "5" to clear_refs)
function reset_peak ()
  [fid, msg] = fopen ("/proc/self/clear_refs", "w");
  if (fid < 0)
    warning ("sparse_chain: cannot reset the peak memory (%s); VmHWM is the process's peak", msg);
    return;
  endif
  fputs (fid, "5");
  fclose (fid);
endfunction
