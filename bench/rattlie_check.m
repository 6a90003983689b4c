## rattlie_check: self-checks of bench/plain_rattlie.m (plain-Octave RATTLie,
## S. Hante) on the heavy top (bench/heavy_top.m) against the independent
## ode45 reference (bench/heavy_top_reference.m).  Prints:
##   1. the reference: energy / vertical angular momentum conservation and
##      wall time for both tops on t in [0, 1];
##   2. order 2 fitted over h = 2^-8 .. 2^-11 on the slow top, t in [0, 1],
##      for S3xR3 (constrained) and SO3 (unconstrained), plus the other
##      formulations at h = 2^-8;
##   3. residuals |Phi|, |B v|, |p|-1 or |R'R - I|, energy bounded and Lz
##      over a longer run;
##   4. timings (us per step, median of RUNS runs) and callbacks per step;
##   5. the multiplier of (A) against the index-1 multiplier at t0.
## Run from the repository root:  octave-cli --norc --no-gui bench/rattlie_check.m
## (FAST=0 in the environment skips the ~25 s fast-top reference.)
1;
addpath (fileparts (mfilename ("fullpath")));
runs = str2double (getenv ("RUNS"));
if (isnan (runs))
  runs = 3;
endif
do_fast = ! strcmp (getenv ("FAST"), "0");

printf ("== 1. ode45 reference (embedded R in R^3x3, Js Om' = Js Om x Om + tau), t in [0, 1]\n");
tops = {"slow"};
if (do_fast)
  tops{end+1} = "fast";
endif
for w = tops
  for tol = [1e-12, 1e-13]
    [~, ~, ~, info] = heavy_top_reference (w{1}, [0.25 0.5 0.75 1], tol);
    printf ("  %-4s tol %.0e: %6.2f s, %6d steps, max|E-E0| %.2e (E0 = %.6g, rel %.1e), |Lz-Lz0| %.1e, |R'R-I| %.1e\n",
            w{1}, tol, info.time, info.nsteps, info.dE, info.E0, info.dE / abs (info.E0),
            max (abs (info.Lz - info.Lz(1))), info.orth);
  endfor
endfor

printf ("\n== 2. order, slow top, t in [0, 1], error at t = 1 against ode45 (tol 1e-13)\n");
[Rr, Omr, xr] = heavy_top_reference ("slow", 1, 1e-13);
hs = 2 .^ -(8:11);
for F = {"S3xR3", "SO3"}
  P = heavy_top (F{1}, "slow");
  err = zeros (size (hs));
  for i = 1:numel (hs)
    N = round (1 / hs(i));
    [~, y] = plain_rattlie (P.group, P.M, P.f, P.phi, P.B, hs(i), N, P.y0);
    yT = y(end,:).';
    err(i) = max ([norm(P.R (yT) - Rr, "fro"), norm(P.Omega (yT) - Omr), norm(P.xc (yT) - xr)]);
    printf ("  %-6s h = 2^-%2d: max(|R-Rref|_F, |Om-Omref|, |xc-xcref|) = %.4e\n", F{1}, -log2 (hs(i)), err(i));
  endfor
  pf = polyfit (log (hs), log (err), 1);
  printf ("  %-6s fitted order %.4f  (successive ratios %s)\n", F{1}, pf(1), mat2str (err(1:end-1) ./ err(2:end), 4));
endfor
printf ("  all formulations, h = 2^-8, t = 1:\n");
for F = {"SO3", "S3", "SO3xR3", "S3xR3", "SE3"}
  P = heavy_top (F{1}, "slow");
  [~, y] = plain_rattlie (P.group, P.M, P.f, P.phi, P.B, 2^-8, 256, P.y0);
  yT = y(end,:).';
  printf ("    %-6s |R-Rref|_F %.4e  |Om-Omref| %.4e  |xc-xcref| %.4e\n", F{1},
          norm (P.R (yT) - Rr, "fro"), norm (P.Omega (yT) - Omr), norm (P.xc (yT) - xr));
endfor

printf ("\n== 3. residuals and conservation, slow top, h = 2^-7, t in [0, 40] (5120 steps)\n");
for F = {"S3xR3", "SO3xR3", "SE3", "SO3", "S3"}
  P = heavy_top (F{1}, "slow");
  N = 5120;  h = 2^-7;
  [t, y] = plain_rattlie (P.group, P.M, P.f, P.phi, P.B, h, N, P.y0);
  Y = y.';  nq = P.nq;
  E = P.E (Y);  L = P.Lz (Y);
  dE = abs (E - E(1));
  q4 = round (N / 4);
  res = "";
  if (P.m > 0)
    ph = 0;  bv = 0;
    for k = 1:N+1
      ph = max (ph, norm (P.phi (Y(1:nq,k)), Inf));
      bv = max (bv, norm (P.B (Y(1:nq,k)) * Y(nq+1:end,k), Inf));
    endfor
    res = sprintf ("|Phi| %.1e  |Bv| %.1e  ", ph, bv);
  endif
  if (any (strcmp (F{1}, {"S3", "S3xR3"})))
    res = [res, sprintf("||p|-1| %.1e", max (abs (sqrt (sum (Y(1:4,:).^2, 1)) - 1)))];
  else
    o = 0;
    for k = 1:N+1
      R = reshape (Y(1:9,k), 3, 3);
      o = max (o, norm (R' * R - eye (3), Inf));
    endfor
    res = [res, sprintf("|R'R-I| %.1e", o)];
  endif
  printf ("  %-6s %s  max|E-E0| first/last quarter %.3e / %.3e  |Lz-Lz0| %.1e\n", F{1}, res,
          max (dE(1:q4)), max (dE(end-q4:end)), max (abs (L - L(1))));
endfor

printf ("\n== 4. cost (median of %d runs; machine shared, expect 10-30%% noise)\n", runs);
for F = {"S3xR3", "SO3xR3", "SE3", "SO3", "S3"}
  P = heavy_top (F{1}, "slow");
  N = 1024;  h = 2^-10;
  plain_rattlie (P.group, P.M, P.f, P.phi, P.B, h, 16, P.y0);    # warm-up
  tt = zeros (1, runs);
  for r = 1:runs
    t0 = tic;
    [~, ~, st] = plain_rattlie (P.group, P.M, P.f, P.phi, P.B, h, N, P.y0);
    tt(r) = toc (t0);
  endfor
  printf ("  %-6s h = 2^-10: %7.1f us/step;  per step: f %.2f  Phi %.2f  B %.2f  Newton it %.2f  Jacobians %.2f\n",
          F{1}, median (tt) / N * 1e6, st.nfevals / N, st.nconstrevals / N, st.nconstrgradevals / N,
          st.nnewtoniter / N, st.njac / N);
endfor

printf ("\n== 5. multiplier, S3xR3 slow top: lambda of (A) at step 1 vs index-1 lambda(t0)\n");
P = heavy_top ("S3xR3", "slow");
q0 = P.y0(1:P.nq);  v0 = P.y0(P.nq+1:end);
Bq = P.B (q0);
G = plain_rattlie ("group", "S3xR3");
lam_ex = (Bq * (P.M \ Bq')) \ (Bq * (P.M \ (G.ad (v0)' * P.M * v0 - P.f (0, P.y0))) + P.Z (q0, v0));
printf ("  index-1 lambda(t0) = %s\n", mat2str (lam_ex.', 8));
for h = 2 .^ -(6:9)
  [~, ~, st] = plain_rattlie (P.group, P.M, P.f, P.phi, P.B, h, 2, P.y0);
  printf ("  h = 2^-%d: |lambda_A(1) - lambda(t0)| = %.3e   |mu(1) - lambda(t0)| = %.3e\n", -log2 (h),
          norm (st.lambda(:,1) - lam_ex), norm (st.mu(:,1) - lam_ex));
endfor
