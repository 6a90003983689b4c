## bench/short_run_overhead.m — the per-call overhead of a short run (issue
## 40, item 2): one 10-step odeRATTLE call on the unit sphere (H = |p|^2/2
## - 5 q3, g = |q|^2 - 1, G = 2 q', Explicit, h = 0.1, every check on)
## against the per-step cost of a long run (10^4 steps), in one process:
## overhead = t(10-step call) - 10 t(step).  Medians of R (default 101)
## short calls and 7 long runs.  From the repository root:
##
##   octave-cli --norc --eval 'source ("bench/short_run_overhead.m")'
if (! exist ("R", "var"))
  R = 101;
endif
root = fileparts (fileparts (mfilename ("fullpath")));
if (isempty (root))
  root = pwd ();
endif
addpath (fullfile (root, "inst"));
addpath (fullfile (root, "src"));
source (fullfile (root, "PKG_ADD"));
f = @(t, y) [y(4:6); 0; 0; 5];
o = odepkgset ("Explicit", "yes", "TimeStepSize", 0.1, "ConstraintFcn", @(q) q'*q - 1,
               "ConstraintGradFcn", @(q) 2*q', "ConstraintsNb", 1);
y0 = [1; 0; 0; 0; 1; 0];
sol = odeRATTLE (f, [0 1], y0, o);
tt = zeros (R, 1);
for r = 1:R
  t0 = tic ();  sol = odeRATTLE (f, [0 1], y0, o);  tt(r) = toc (t0);
endfor
tl = zeros (7, 1);
for r = 1:7
  t0 = tic ();  soll = odeRATTLE (f, [0 1000], y0, o);  tl(r) = toc (t0);
endfor
per = median (tl) / soll.stats.nsteps;
printf ("load average %s\n", strtrim (fileread ("/proc/loadavg")));
printf ("10-step call %.2f ms; long run %.4f ms/step; overhead of a call %.2f ms\n",
        1e3 * median (tt), 1e3 * per, 1e3 * (median (tt) - 10 * per));
printf ("calls of the 10-step call: f %d, g %d, G %d; per step of the long run: f %.2f, g %.2f, G %.2f\n",
        sol.stats.nfevals, sol.stats.nconstrevals, sol.stats.nconstrgradevals,
        soll.stats.nfevals / soll.stats.nsteps, soll.stats.nconstrevals / soll.stats.nsteps,
        soll.stats.nconstrgradevals / soll.stats.nsteps);
