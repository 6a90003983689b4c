## bench/monitor_cost.m — the cost of invariant monitoring against the calls
## it makes.  A double pendulum in Cartesian coordinates (odeRATTLE, two
## holonomic constraints, explicit, N fixed steps, default 1e4) run three
## ways, each timed as the median of RUNS (default 3):
##   none      the run without monitoring
##   monitor   the run with "HamiltonianFcn": H at every output, and for the
##             constraints |g|, |G H_p| and the multipliers lambda
##   calls     a bare loop making the monitor's own user calls at the output
##             states: H and g once, f 2 m + 3 times and G 3 times per output
##             (the central differences of h = G H_p along the m + 1
##             directions; those along J G' move p only, G(q) is known)
## The target: monitor <= none + 1.5 calls.  From the repository root:
##
##   octave-cli --norc --eval 'source ("bench/monitor_cost.m")'
if (! exist ("N", "var"))
  N = 1e4;
endif
if (! exist ("RUNS", "var"))
  RUNS = 3;
endif
root = fileparts (fileparts (mfilename ("fullpath")));
if (isempty (root))
  root = pwd ();
endif
addpath (fullfile (root, "inst"));
addpath (fullfile (root, "src"));
source (fullfile (root, "PKG_ADD"));

f = @(t, x) [x(5:8); 0; -1; 0; -1];                 # unit masses, gravity -1
g = @(q) [(q(1)^2 + q(2)^2 - 1) / 2; ((q(3) - q(1))^2 + (q(4) - q(2))^2 - 1) / 2];
G = @(q) [q(1), q(2), 0, 0; q(1) - q(3), q(2) - q(4), q(3) - q(1), q(4) - q(2)];
H = @(t, x) x(5:8)' * x(5:8) / 2 + x(2) + x(4);
q0 = [sin(1); -cos(1); sin(1) + sin(2); -cos(1) - cos(2)];
y0 = [q0; zeros(4, 1)];
o = odepkgset ("ConstraintFcn", g, "ConstraintGradFcn", G, "ConstraintsNb", 2, "Explicit", "yes", ...
               "TimeStepSize", 1e-3, "TimeStepNumber", N);
om = odepkgset (o, "HamiltonianFcn", H);
m = 2;

tn = tm = tc = zeros (1, RUNS);
for r = 1:RUNS
  t0 = tic ();  sol = odeRATTLE (f, 0, y0, o);  tn(r) = toc (t0);
  t0 = tic ();  solm = odeRATTLE (f, 0, y0, om);  tm(r) = toc (t0);
  Y = sol.y;  T = sol.x;
  t0 = tic ();
  for j = 1:numel (T)
    yj = Y(:, j);
    H (T(j), yj);
    g (yj(1:4));
    for k = 1:2 * m + 3
      f (T(j), yj);
    endfor
    for k = 1:3
      G (yj(1:4));
    endfor
  endfor
  tc(r) = toc (t0);
endfor
printf ("double pendulum (odeRATTLE, %d steps, %d outputs), median of %d runs:\n", N, numel (sol.x), RUNS);
printf ("  no monitoring      %7.3f s\n", median (tn));
printf ("  HamiltonianFcn     %7.3f s   (H, residuals, lambda; max |H - H0| = %.2e)\n", median (tm),
        solm.invariants.deviation);
printf ("  the bare calls     %7.3f s   (%d calls of H, g, f, G)\n", median (tc), numel (T) * (2 + (2 * m + 3) + 3));
printf ("  monitoring costs   %7.2f x the bare calls (target <= 1.5)\n", (median (tm) - median (tn)) / median (tc));
