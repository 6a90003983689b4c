## -*- texinfo -*-
## @deftypefn {} {} run_benchmarks (@var{runs})
## Time the compiled solvers against plain-Octave references of the same
## methods, side by side in one run, medians of @var{runs} (default 5) runs
## after a warm-up.  Run with `make bench` (or bench/run.sh).
## @end deftypefn
function run_benchmarks (runs = 5)
  pkg load odepkg
  printf ("odepkg benchmarks: median of %d runs, Octave %s, %s\n\n", runs,
          OCTAVE_VERSION, datestr (now (), 31));
  kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
  e = 0.5;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
  h = 0.01;

  ## Cost of one call of the user's f from a plain Octave loop: the floor of
  ## any solver that calls f.
  M = 20000;
  t_call = median_time (@() call_loop (kepler, y0, M), runs) / M;
  printf ("one call of the Kepler f from an Octave loop: %.2f us\n\n", 1e6 * t_call);
  printf ("%-44s %8s %10s %10s %8s %8s %10s\n", "case", "steps", "compiled", "reference",
          "ratio", "calls", "us/call");

  ## 1. explicit Störmer–Verlet, 10^4 steps
  N = 10000;
  o = odepkgset ("TimeStepSize", h, "TimeStepNumber", N, "Explicit", "yes");
  [tc, sol] = median_time (@() odeSV (kepler, 0, y0, o), runs);
  [tr, yr] = median_time (@() plain_sv (kepler, h, N, y0), runs);
  check (sol.y.', yr, "odeSV explicit vs plain loop");
  row ("odeSV explicit vs plain Octave loop", N, tc, tr, sol.stats.nfevals, t_call);

  ## 2. velocity Verlet, 10^4 steps
  o = odepkgset ("TimeStepSize", h, "TimeStepNumber", N);
  [tc, sol] = median_time (@() odeVV (kepler, 0, y0, o), runs);
  [tr, yr] = median_time (@() plain_vv (kepler, h, N, y0), runs);
  check (sol.y.', yr, "odeVV vs plain loop");
  row ("odeVV vs plain Octave loop", N, tc, tr, sol.stats.nfevals, t_call);

  ## 3. implicit (general H) Störmer–Verlet vs the fsolve stepper of 2013
  N = 500;
  o = odepkgset ("TimeStepSize", h, "TimeStepNumber", N, "Explicit", "no");
  [tc, sol] = median_time (@() odeSV (kepler, 0, y0, o), runs);
  [tr, yr] = median_time (@() fsolve_sv (kepler, h, N, y0), max (1, ceil (runs / 2)));
  check (sol.y.', yr, "odeSV implicit vs fsolve loop");
  row ("odeSV implicit (Newton, FD) vs fsolve loop", N, tc, tr, sol.stats.nfevals, t_call);
  hess = @(t, x) blkdiag ((eye(2) - 3 * x(1:2) * x(1:2)' / norm(x(1:2))^2) / norm(x(1:2))^3, eye(2));
  oh = odepkgset (o, "HamiltonianHessFcn", hess);
  [tc, sol] = median_time (@() odeSV (kepler, 0, y0, oh), runs);
  row ("  the same with HamiltonianHessFcn", N, tc, tr, sol.stats.nfevals + sol.stats.nhessevals, t_call);

  ## 4. RATTLE, planar pendulum in Cartesian coordinates
  f = @(t, x) [x(3:4); 0; -1];
  g = @(q) q' * q - 1;  G = @(q) 2 * q';
  x0 = [1; 0; 0; 0];
  N = 500;
  o = odepkgset ("ConstraintFcn", g, "ConstraintGradFcn", G, "ConstraintsNb", 1,
                 "Explicit", "yes", "TimeStepSize", h, "TimeStepNumber", N);
  [tc, sol] = median_time (@() odeRATTLE (f, 0, x0, o), runs);
  [tr, yr] = median_time (@() fsolve_rattle (f, g, G, h, N, x0), max (1, ceil (runs / 2)));
  check (sol.y.', yr, "odeRATTLE vs fsolve loop");
  row ("odeRATTLE separable vs fsolve loop", N, tc, tr,
       sol.stats.nfevals + sol.stats.nconstrevals + sol.stats.nconstrgradevals, t_call);

  ## 5. SPVI, order 4 and 6: absolute figures (the 2013 code needs tables and
  ## fsolve with a hand-written Jacobian; no like-for-like reference here)
  N = 1000;
  for qp = [3 2; 4 3].'
    o = odepkgset ("Q_DoFs", qp(1), "P_DoFs", qp(2), "TimeStepSize", 0.05, "TimeStepNumber", N);
    [tc, sol] = median_time (@() odeSPVI (kepler, 0, y0, o), runs);
    row (sprintf ("odeSPVI (Q, P) = (%d, %d), h = 0.05", qp), N, tc, NaN, sol.stats.nfevals, t_call);
  endfor
  printf ("\nratio = reference / compiled; calls = user-function calls of the compiled run;\n");
  printf ("us/call = compiled time / calls (callback-bound when close to the first line).\n");
endfunction

function k = call_loop (f, y, M)
  for k = 1:M
    f (0, y);
  endfor
endfunction

function check (a, b, what)
  if (max (abs (a(:) - b(:))) > 1e-6)
    warning ("bench: %s differ by %g", what, max (abs (a(:) - b(:))));
  endif
endfunction

function row (name, N, tc, tr, calls, t_call)
  printf ("%-44s %8d %9.4fs %9.4fs %8.1f %8d %10.2f\n", name, N, tc, tr, tr / tc, calls,
          1e6 * tc / calls);
endfunction
