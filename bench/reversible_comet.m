## -*- texinfo -*-
## @deftypefn {} {@var{R} =} reversible_comet (@var{orbits}, @var{tols})
## Benchmark of the step densities of StepControl "reversible" (odeSV,
## explicit) on a comet in the Sun's field in astronomical units and days:
## e = 0.97, a = 17.8 AU (period 27,430 days), GM = 2.959122082855911e-4
## AU^3/day^2, @var{orbits} periods (default 10) from the perihelion and
## from the aphelion, at each RelTol of @var{tols} (default [1e-6 1e-8]).  Densities: the default
## rho = sqrt (|q'| |p'| / (|q| |p|)) (a rate, unit-free), the old default
## rho = |f| (G by hand, analytic: f'f = (a, da/dt)), and Kepler's
## rho = sqrt (GM) |q|^(-3/2) as [G; rho].  The same comet in units where
## GM = 1, a = 1 (the default density must take the same steps) closes the
## table.  Prints steps, wall time, eps and max |H - H0| / |H0|; returns the
## rows.  From the repository root:
## @example
## octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("PKG_ADD"); addpath ("bench"); reversible_comet ()'
## @end example
## @end deftypefn
function R = reversible_comet (orbits = 10, tols = [1e-6 1e-8])

  e = 0.97;
  R = struct ("units", {}, "start", {}, "density", {}, "tol", {}, "steps", {}, "time", {}, "eps", {}, "dH", {});
  systems = {"AU, days", 2.959122082855911e-4, 17.8; "GM = 1, a = 1", 1, 1};
  for s = 1:rows (systems)
    [units, mu, a] = systems{s, :};
    f = @(t, y) [y(3:4); -mu * y(1:2) / norm(y(1:2))^3];
    H = @(y) sum (y(3:4, :).^2, 1) / 2 - mu ./ sqrt (sum (y(1:2, :).^2, 1));
    ra = a * (1 + e);  rp = a * (1 - e);
    starts = {"perihelion", [rp; 0; 0; sqrt(mu * (1 + e) / rp)];
              "aphelion", [-ra; 0; 0; -sqrt(mu * (1 - e) / ra)]};
    tf = orbits * 2 * pi * sqrt (a^3 / mu);
    ## rho = |f|: G = f.(f'f) / |f|^2, f'f = (acc, d acc/dt)
    G_speed = @(t, y) speed_G (y, mu);
    ## rho = sqrt(mu) |q|^(-3/2), a rate: [G; rho]
    G_kepler = @(t, y) [-1.5 * (y(1:2).' * y(3:4)) / (y(1:2).' * y(1:2)); sqrt(mu) * norm(y(1:2))^-1.5];
    if (s == 1)
      dens = {"default", []; "|f|", G_speed; "sqrt(GM)|q|^-1.5", G_kepler};
    else
      dens = {"default", []};
    endif
    printf ("\ncomet e = %g, a = %g, %s, %g orbits (t = %.6g), odeSV explicit, StepControl \"reversible\"\n",
            e, a, units, orbits, tf);
    printf ("%-11s %-18s %8s %10s %8s %10s %12s\n", "start", "density", "RelTol", "steps", "time/s", "eps",
            "max|dH/H0|");
    for j = 1:rows (starts)
     [start, y0] = starts{j, :};
     for i = 1:rows (dens)
      for tol = tols
        o = odepkgset ("Explicit", "yes", "StepControl", "reversible", "RelTol", tol);
        if (! isempty (dens{i, 2}))
          o = odepkgset (o, "StepDensityFcn", dens{i, 2});
        endif
        t0 = tic ();
        sol = odeSV (f, [0 tf], y0, o);
        el = toc (t0);
        dH = max (abs (H (sol.y) - H (y0))) / abs (H (y0));
        r = struct ("units", units, "start", start, "density", dens{i, 1}, "tol", tol,
                    "steps", sol.stats.nsteps, "time", el, "eps", sol.stats.stepdensityeps, "dH", dH);
        R(end+1) = r;
        printf ("%-11s %-18s %8.0e %10d %8.2f %10.3g %12.3g\n", start, r.density, tol, r.steps, r.time,
                r.eps, r.dH);
        fflush (stdout);
      endfor
     endfor
    endfor
  endfor

endfunction

## G of rho = |f| for Kepler with GM = mu.
function G = speed_G (y, mu)
  q = y(1:2);  p = y(3:4);  r = norm (q);
  acc = -mu * q / r^3;
  jerk = -mu * (p / r^3 - 3 * q * (q.' * p) / r^5);
  f = [p; acc];
  G = (f.' * [acc; jerk]) / (f.' * f);
endfunction
