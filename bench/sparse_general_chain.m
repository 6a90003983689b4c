## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{rows} =} sparse_general_chain ()
## @deftypefnx {} {@var{rows} =} sparse_general_chain (@var{Ns}, @var{steps})
## Benchmark (not a test) of the sparse general RATTLE: odeRATTLE without
## @qcode{"Explicit"} on the planar hanging chain of N unit links
## (bench/hanging_chain.m) with a non-separable H, a height-dependent
## mobility: H = sum_k (c(y_k) |p_k|^2 / 2 + y_k), c(y) = 1 + sin (y) / 10,
## the exact constraint gradient and Hessian of H as sparse matrices,
## released near vertical (straight, 1.5 rad below the horizontal) at rest,
## @var{steps} (default 20) fixed steps of h = 0.005, for each N in @var{Ns}
## (default 10, 10^2, 10^3, 10^4).  Per N: CPU ms per step of the solver
## call, all in (set-up and initial checks included); the marginal ms per
## step from a second run of 2 @var{steps} steps; the calls per step of f,
## g, G and the Hessian (marginal); the cost of those calls alone (each
## timed in an Octave loop, bench/private/per_call.m, weighted by the
## marginal calls per step) and the ratio marginal / callbacks.  For
## N <= 100 also the full path (full G and Hessian) for comparison.
## @var{rows} returns the figures.
##
## From the repository root, after building the oct-files:
## @example
## octave-cli --norc --eval 'addpath ("src"); addpath ("inst"); source ("PKG_ADD"); addpath ("bench"); sparse_general_chain ();'
## @end example
## @end deftypefn
function rows = sparse_general_chain (Ns = 10 .^ (1:4), steps = 20)
  h = 0.005;  e = 0.1;
  printf ("hanging chain, H = sum c(y)|p|^2/2 + y, odeRATTLE (general path), sparse G and Hessian, h = %g; Octave %s, %s\n",
          h, OCTAVE_VERSION, datestr (now (), 31));
  printf ("%7s | %-6s | %9s %9s | %-24s | %12s %6s\n", "N", "path", "ms/step", "marginal", "marginal f g G H calls",
          "callbacks ms", "ratio");
  rows = struct ([]);
  for N = Ns
    c = hanging_chain (N);
    d = 2 * N;
    f = @(t, y) mobile_f (y, e);
    Hs = @(t, y) mobile_hess (y, e);
    y0 = [reshape([cos(1.5) * (1:N); -sin(1.5) * (1:N)], [], 1); zeros(d, 1)];
    paths = {"sparse"};
    if (N <= 100)
      paths{end+1} = "full";
    endif
    for p = paths
      if (strcmp (p{1}, "sparse"))
        o = odepkgset ("ConstraintFcn", c.g, "ConstraintGradFcn", c.G, "ConstraintsNb", c.m,
                       "HamiltonianHessFcn", Hs, "TimeStepSize", h);
      else
        o = odepkgset ("ConstraintFcn", c.g, "ConstraintGradFcn", c.Gfull, "ConstraintsNb", c.m,
                       "HamiltonianHessFcn", @(t, y) full (Hs (t, y)), "TimeStepSize", h);
      endif
      t0 = cputime ();  s1 = odeRATTLE (f, 0, y0, odepkgset (o, "TimeStepNumber", steps));  t1 = cputime () - t0;
      t0 = cputime ();  s2 = odeRATTLE (f, 0, y0, odepkgset (o, "TimeStepNumber", 2 * steps));  t2 = cputime () - t0;
      marg = (calls (s2.stats) - calls (s1.stats)) / steps;
      tm = (t2 - t1) / steps;
      Y = s2.y(:, 1:min (end, 5));
      tcb = marg * [per_call(@(y) f (0, y), Y, 1:2*d); per_call(c.g, Y, 1:d); per_call(c.G, Y, 1:d);
                    per_call(@(y) Hs (0, y), Y, 1:2*d)];
      printf ("%7d | %-6s | %9.3g %9.3g | %5.1f %5.1f %5.1f %5.1f | %12.3g %6.2f\n", N, p{1}, 1e3 * t1 / steps,
              1e3 * tm, marg, 1e3 * tcb, tm / tcb);
      rows(end+1).N = N;
      rows(end).path = p{1};
      rows(end).ms_per_step = 1e3 * t1 / steps;
      rows(end).marginal_ms = 1e3 * tm;
      rows(end).calls = marg;
      rows(end).callbacks_ms = 1e3 * tcb;
      rows(end).sparse = s1.stats.sparseconstraints;
    endfor
  endfor
endfunction

function n = calls (st)
  n = [st.nfevals, st.nconstrevals, st.nconstrgradevals, st.nhessevals];
endfunction

## f = [H_p; -H_q] of H = sum c(y_k) |p_k|^2 / 2 + y_k, c = 1 + e sin y
function dy = mobile_f (y, e)
  d = numel (y) / 2;  P = reshape (y(d+1:end), 2, []);  Y = y(2:2:d).';
  dq = P .* (1 + e * sin (Y));
  dp = [zeros(1, d/2); -(0.5 * e * cos (Y) .* sum (P .^ 2, 1) + 1)];
  dy = [dq(:); dp(:)];
endfunction

## its Hessian in (q, p) order, sparse (7 entries per mass)
function H = mobile_hess (y, e)
  d = numel (y) / 2;  k = (1:d/2).';
  iy = 2*k;  ipx = d + 2*k - 1;  ipy = d + 2*k;
  Y = y(iy);  px = y(ipx);  py = y(ipy);
  c1 = e * cos (Y);
  i = [iy; iy; iy; ipx; ipy; ipx; ipy];
  j = [iy; ipx; ipy; iy; iy; ipx; ipy];
  v = [-0.5 * e * sin(Y) .* (px.^2 + py.^2); c1 .* px; c1 .* py; c1 .* px; c1 .* py; 1 + e * sin(Y); 1 + e * sin(Y)];
  H = sparse (i, j, v, 2*d, 2*d);
endfunction
