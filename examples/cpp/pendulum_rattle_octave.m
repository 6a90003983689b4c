## The same run as pendulum_rattle.cpp from Octave (odeRATTLE, Octave
## callbacks): microseconds per step, median of 5 runs.  With the package
## loaded (or inst/ and src/ on the path):
##   octave-cli --eval 'run examples/cpp/pendulum_rattle_octave.m'
f = @(t, x) [x(3:4); 0; -1];
h = 0.01;  N = 20000;
opts = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
                  "ConstraintsNb", 1, "Explicit", "yes", "TimeStepSize", h, "TimeStepNumber", N);
secs = zeros (5, 1);
for k = 1:5
  tic ();  [t, y] = odeRATTLE (f, 0, [1; 0; 0; 0], opts);  secs(k) = toc ();
endfor
sol = odeRATTLE (f, 0, [1; 0; 0; 0], opts);
printf ("odeRATTLE, h = %g, %d steps: q = (%.12f, %.12f), %.2f calls per step\n", h, N, y(end, 1:2),
        (sol.stats.nfevals + sol.stats.nconstrevals + sol.stats.nconstrgradevals) / N);
printf ("%.3f us per step (median of 5 runs)\n", 1e6 * median (secs) / N);
