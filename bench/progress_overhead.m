## bench/progress_overhead.m — the cost of the option "Progress": an explicit
## Störmer–Verlet run of Kepler (e = 0.6) over N fixed steps (default 5e6),
## timed inside Octave, with the display MODE ("off", "text"; default "off").
## Run it once per mode, from the repository root with the tree's build:
##
##   octave-cli --norc --eval 'mode = "text"; N = 5e6; source ("bench/progress_overhead.m")'
##
## and compare the medians of a few runs of each mode (whole processes, or
## the "in the solver" figure printed here).  The compiled loop counts steps
## and reads the clock every few thousand of them; the display is called at
## most four times a second, so the two should agree within the noise.
if (! exist ("mode", "var"))
  mode = "off";
endif
if (! exist ("N", "var"))
  N = 5e6;
endif
root = fileparts (fileparts (mfilename ("fullpath")));
if (isempty (root))
  root = pwd ();
endif
addpath (fullfile (root, "inst"));
addpath (fullfile (root, "src"));
source (fullfile (root, "PKG_ADD"));

kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
e = 0.6;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
opts = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", N, "Explicit", "yes", "Progress", mode);
t0 = tic ();
[t, y] = odeSV (kepler, 0, y0, opts);
el = toc (t0);
H = @(y) sum (y(:, 3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:, 1:2).^2, 2));
printf ("odeSV, %d explicit Kepler steps, Progress \"%s\": %.2f s in the solver, max |H - H0| = %.2e\n",
        N, mode, el, max (abs (H (y) - H (y(1, :)))));
