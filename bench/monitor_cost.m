## bench/monitor_cost.m — the cost of monitoring against the calls it makes
## (issue 40, item 3).  Two constrained problems, odeRATTLE with
## "Explicit", N fixed steps, every step output:
##   pendulum   q in R^2, |q|^2 = 1, H = |p|^2/2 + q2 (m = 1)
##   molecule   8 rigid diatomics (16 atoms in R^3, d = 48, m = 8 bond
##              constraints |x_2k-1 - x_2k|^2 = 1), Lennard-Jones between
##              atoms of different molecules (eps = sigma = 1)
## each run four ways, timed as the median of RUNS (default 3):
##   none      the run without monitoring
##   H         "HamiltonianFcn": H at every output, nothing else
##   H+lambda  "HamiltonianFcn" and "MonitorMultipliers", "on": also the
##             residuals |g|, |G H_p| and the multipliers lambda (g once, f
##             2m + 3 and G 3 times per output, counted in sol.stats)
##   H calls   a bare loop of the H calls alone at the output states
## Target: H <= 1.5 (none + H calls).  From the repository root:
##
##   octave-cli --norc --eval 'source ("bench/monitor_cost.m")'
##
## (N = 2000; RUNS = 5; source (...) to change the defaults.)
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

## --- the pendulum -------------------------------------------------------
P.name = "pendulum (m = 1)";
P.f = @(t, x) [x(3:4); 0; -1];
P.H = @(t, x) x(3:4)' * x(3:4) / 2 + x(2);
P.o = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1,
                 "Explicit", "yes", "TimeStepSize", 1e-3, "TimeStepNumber", N);
P.y0 = [1; 0; 0; 0];

## --- 8 rigid diatomics, Lennard-Jones -----------------------------------
na = 16;  d = 3 * na;
mol = kron (1:8, [1 1]);                        # molecule of each atom
other = mol' != mol;                            # pairs that interact
## W(i, j) = 24 (2 / r^12 - 1 / r^6) / r^2 for interacting pairs, 0 else
## (r2 of the others set to 1: finite); F_i = sum_j W_ij (x_i - x_j)
pair_r2 = @(X) reshape (sum ((reshape (X, 3, na, 1) - reshape (X, 3, 1, na)) .^ 2, 1), na, na) + ! other;
lj_W = @(r2) other .* (24 * (2 ./ r2.^6 - 1 ./ r2.^3) ./ r2);
lj_force = @(X, W) X .* sum (W, 1) - X * W;
M.f = @(t, y) [y(d+1:end); reshape(lj_force (reshape (y(1:d), 3, na), lj_W (pair_r2 (reshape (y(1:d), 3, na)))), d, 1)];
lj_V = @(r2) sum (sum (other .* (4 * (1 ./ r2.^6 - 1 ./ r2.^3)))) / 2;
M.H = @(t, y) y(d+1:end)' * y(d+1:end) / 2 + lj_V (pair_r2 (reshape (y(1:d), 3, na)));
bond = @(q) reshape (q, 3, na)(:, 1:2:end) - reshape (q, 3, na)(:, 2:2:end);   # 3 x 8
Grows = repmat (1:8, 3, 1);  Gcols = 6 * (0:7) + (1:3)';
M.g = @(q) sum (bond (q) .^ 2, 1)' - 1;
M.G = @(q) accumarray ([Grows(:), Gcols(:); Grows(:), Gcols(:) + 3], [2 * bond(q)(:); -2 * bond(q)(:)], [8, d]);
## centres on a 2 x 2 x 2 grid of spacing 2.5, bonds of length 1 along
## fixed unit directions, at rest (consistent with the constraints)
[cx, cy, cz] = ndgrid ([0 2.5]);
u = [1 0 0; 0 1 0; 0 0 1; 1 1 0; 0 1 1; 1 0 1; 1 -1 0; 1 1 1]';
u = u ./ sqrt (sum (u .^ 2, 1));
C = [cx(:), cy(:), cz(:)]';
X0 = zeros (3, na);
X0(:, 1:2:end) = C + u / 2;
X0(:, 2:2:end) = C - u / 2;
M.name = "8 rigid diatomics (d = 48, m = 8)";
M.o = odepkgset ("ConstraintFcn", M.g, "ConstraintGradFcn", M.G, "ConstraintsNb", 8,
                 "Explicit", "yes", "TimeStepSize", 2e-3, "TimeStepNumber", round (N / 5));
M.y0 = [X0(:); zeros(d, 1)];

printf ("monitoring cost, odeRATTLE, every step output, median of %d runs (load average %s):\n", RUNS,
        strtrim (fileread ("/proc/loadavg")));
for pb = {P, M}
  pb = pb{1};
  oh = odepkgset (pb.o, "HamiltonianFcn", pb.H);
  om = odepkgset (oh, "MonitorMultipliers", "on");
  tn = th = tm = tc = zeros (1, RUNS);
  for r = 1:RUNS
    t0 = tic ();  s0 = odeRATTLE (pb.f, 0, pb.y0, pb.o);  tn(r) = toc (t0);
    t0 = tic ();  sh = odeRATTLE (pb.f, 0, pb.y0, oh);  th(r) = toc (t0);
    t0 = tic ();  sm = odeRATTLE (pb.f, 0, pb.y0, om);  tm(r) = toc (t0);
    Y = s0.y;  T = s0.x;  H = pb.H;
    t0 = tic ();
    for j = 1:numel (T)
      H (T(j), Y(:, j));
    endfor
    tc(r) = toc (t0);
  endfor
  tn = median (tn);  th = median (th);  tm = median (tm);  tc = median (tc);
  printf ("%s, %d steps, %d outputs:\n", pb.name, s0.stats.nsteps, numel (s0.x));
  printf ("  no monitoring            %7.3f s   (%d calls of f)\n", tn, s0.stats.nfevals);
  printf ("  HamiltonianFcn           %7.3f s   (%d calls of H, f unchanged: %d; max |H - H0| = %.2e)\n", th,
          sh.stats.nhamiltonianevals, sh.stats.nfevals, sh.invariants.deviation);
  printf ("  the H calls alone        %7.3f s\n", tc);
  printf ("  H monitoring costs       %7.2f x (run + H calls)   (target <= 1.5)\n", th / (tn + tc));
  printf ("  + MonitorMultipliers     %7.3f s   (%.1f x the run; f %d, G %d calls in all)\n", tm, tm / tn,
          sm.stats.nfevals, sm.stats.nconstrgradevals);
endfor
