## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {} run_demo_kepler ()
## The example `make demo` runs: the Kepler problem (e = 0.6) over 10^4
## fixed steps with odeSV, odeVV, odeSE and odeSPVI (order 6), and adaptively with odeSV,
## printing time, calls of f and the energy error of each.
## @end deftypefn

function run_demo_kepler ()
  kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
  energy = @(y) sum (y(:,3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:,1:2).^2, 2));
  e = 0.6;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
  fixed = odepkgset ("TimeStepSize", 0.01, "TimeStepNumber", 10000, "Explicit", "yes");
  printf ("Kepler problem, e = %.1f, t in [0, 100]\n", e);
  printf ("%-28s %8s %8s %10s %12s\n", "solver", "steps", "f calls", "time [s]", "max|H-H0|");
  runs = {"odeSV  (explicit, fixed h)", @odeSV, 0, fixed;
          "odeSV  (implicit, fixed h)", @odeSV, 0, odepkgset(fixed, "Explicit", "no");
          "odeVV  (fixed h)",           @odeVV, 0, odepkgset(fixed, "Explicit", []);
          "odeSE  (explicit, fixed h)", @odeSE, 0, fixed;
          "odeSV  (adaptive, 1e-6)",    @odeSV, [0 100], odepkgset("RelTol", 1e-6, "AbsTol", 1e-6, "Explicit", "yes");
          "odeSPVI (Q=4, P=3, h=0.05)",  @odeSPVI, 0, odepkgset("Q_DoFs", 4, "P_DoFs", 3, "TimeStepSize", 0.05, "TimeStepNumber", 2000)};
  for i = 1:rows (runs)
    tic;  sol = runs{i,2} (kepler, runs{i,3}, y0, runs{i,4});  el = toc;
    dH = max (abs (energy (sol.y.') - energy (y0.')));
    printf ("%-28s %8d %8d %10.4f %12.3e\n", runs{i,1}, sol.stats.nsteps,
            sol.stats.nfevals, el, dH);
  endfor
endfunction
