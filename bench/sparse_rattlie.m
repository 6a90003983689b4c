## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{res} =} sparse_rattlie ()
## @deftypefnx {} {@var{res} =} sparse_rattlie (@var{Ns}, @var{steps}, @var{dense_max})
## Benchmark (not a test) of odepkg issue 26 for odeRATTLie: the chain of N
## rigid rods on (S3 x R3)^N of bench/rod_chain.m (spherical joints, the
## first rod pinned, hanging and turning), h = 5e-4, for each N in @var{Ns}
## (default 10, 10^2, 10^3, 10^4): with a sparse ConstraintGradFcn and
## MassMatrix (the sparse RATTLie), and for N <= @var{dense_max} (default
## 100) with full ones (the dense RATTLie).  Per run: the CPU time per step
## of a solver call of @var{steps} steps (default 20, all in: set-up,
## initial projection), the marginal CPU time per step (from a second call
## of @var{steps} + K steps, K such that the K steps take >= 0.5 s), the
## calls of f, Phi and B per marginal step, the callbacks' time per step
## (f, Phi, B timed alone in an Octave loop over the run's own states,
## weighted by those calls) and the ratio marginal / callbacks (1 = the step
## costs its callbacks and nothing more).  CPU times (getrusage via
## cputime): meaningful on a shared machine.
##
## From the repository root, after building the oct-files:
## @example
## octave-cli --norc --eval 'addpath ("src"); addpath ("inst"); source ("PKG_ADD"); addpath ("bench"); sparse_rattlie ()'
## @end example
## @end deftypefn
function res = sparse_rattlie (Ns = 10 .^ (1:4), steps = 20, dense_max = 100)
  h = 5e-4;
  printf ("rod chain on (S3xR3)^N, odeRATTLie, h = %g, %d steps (marginal: from %d + K steps); Octave %s, %s\n",
          h, steps, steps, OCTAVE_VERSION, datestr (now (), 31));
  printf ("CPU ms per step (cputime); the machine may be shared\n");
  printf ("%7s %-6s | %9s %9s | %-20s | %12s | %6s | %s\n", "N", "B", "ms/step", "marginal",
          "calls f Phi B", "callbacks ms", "ratio", "max |Phi|, |B v|");
  res = struct ([]);
  for N = Ns
    for sparse_B = [true, false]
      if (! sparse_B && N > dense_max)
        continue;
      endif
      c = rod_chain (N, sparse_B);
      o = odepkgset (c.opts, "TimeStepSize", h);
      t1 = cpu (@() odeRATTLie (c.f, 0, c.y0, odepkgset (o, "TimeStepNumber", steps)));
      K = min (200 * steps, max (steps, ceil (0.5 / (t1 / steps))));
      [t2, sol] = cpu (@() odeRATTLie (c.f, 0, c.y0, odepkgset (o, "TimeStepNumber", steps + K)));
      [~, s1] = cpu (@() odeRATTLie (c.f, 0, c.y0, odepkgset (o, "TimeStepNumber", steps)));
      n1 = calls (s1.stats);  n2 = calls (sol.stats);
      marg = (n2 - n1) / K;
      tm = (t2 - t1) / K;
      Y = sol.y(:, round (linspace (1, columns (sol.y), 5)));
      tf = per_call (@(y) c.f (0, y), Y, 1:rows (Y), 0.1, 3);
      tP = per_call (c.Phi, Y, 1:c.nq, 0.1, 3);
      tB = per_call (c.B, Y, 1:c.nq, 0.1, 3);
      tcb = marg * [tf; tP; tB];
      row = struct ("N", N, "sparse", sparse_B, "ms_step", 1e3 * t1 / steps, "ms_marginal", 1e3 * tm, "K", K,
                    "calls_marginal", marg, "callbacks_ms", 1e3 * tcb, "ratio", tm / tcb,
                    "t_f", tf, "t_Phi", tP, "t_B", tB, "sparsepath", sol.stats.sparseconstraints,
                    "maxconstr", sol.stats.maxconstrresidual, "maxhidden", sol.stats.maxhiddenresidual);
      if (isempty (res))
        res = row;
      else
        res(end+1) = row;
      endif
      printf ("%7d %-6s | %9.3f %9.3f | %6.2f %6.2f %6.2f | %12.3f | %6.2f | %.1e %.1e  (K = %d)\n", N,
              ifelse_str (sol.stats.sparseconstraints, "sparse", "dense"), row.ms_step, row.ms_marginal, marg,
              row.callbacks_ms, row.ratio, row.maxconstr, row.maxhidden, K);
    endfor
  endfor
endfunction

function s = ifelse_str (c, a, b)
  if (c) s = a; else s = b; endif
endfunction

function n = calls (st)
  n = [st.nfevals, st.nconstrevals, st.nconstrgradevals];
endfunction

## CPU seconds of one call of fn (after a warm-up call) and its output
function [t, out] = cpu (fn)
  persistent warm = false;
  if (! warm)
    out = fn ();
    warm = true;
  endif
  c0 = cputime ();
  out = fn ();
  t = cputime () - c0;
endfunction

