## -*- texinfo -*-
## @deftypefn {} {@var{R} =} reversible_kepler (@var{orbits}, @var{eccentricities})
## Benchmark of the step controls of odeSV (explicit) on Kepler's problem
## over @var{orbits} periods (default 200) for each eccentricity (default
## [0.9 0.99]), starting at the pericentre: fixed steps, step doubling and
## the time-reversible step density (StepControl "reversible": the default
## density (since the state normalisation the rate sqrt ((|q'|/|p|)
## (|p'|/|q|)) = |q|^(-3/2) here; rho = |f| before) at three tolerances and
## at InitialStep 3.8e-4, and Kepler's rho = |q|^(-3/2) given as G alone).
## Prints steps, calls of f, wall time and max |H - H0| in each tenth of the
## run; returns the rows as a struct array.  From the repository root:
## @example
## octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("PKG_ADD"); addpath ("bench"); reversible_kepler ()'
## @end example
## @end deftypefn
function R = reversible_kepler (orbits = 200, eccentricities = [0.9 0.99])

  kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
  ## rho = |q|^(-3/2): G = (d rho/dt) / rho = -3/2 q.p / |q|^2
  G_kepler = @(t, x) -1.5 * (x(1:2).' * x(3:4)) / (x(1:2).' * x(1:2));
  R = struct ("e", {}, "name", {}, "steps", {}, "nfevals", {}, "time", {}, "dH", {}, "hmin", {}, "hmax", {});
  for e = eccentricities
    y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
    tf = 2 * pi * orbits;
    base = odepkgset ("Explicit", "yes");
    if (e < 0.95)
      fixed = [1e-3, 2.5e-4];
    else
      fixed = [5e-4];   # r = 0.01 at the pericentre: smaller h takes minutes
    endif
    cases = {};
    for h = fixed
      cases(end+1, :) = {sprintf("fixed h = %g", h), odepkgset(base, "TimeStepSize", h)};
    endfor
    for tol = [1e-6 1e-8]
      cases(end+1, :) = {sprintf("step doubling, tol %g", tol), odepkgset(base, "RelTol", tol, "AbsTol", tol)};
    endfor
    for tol = [1e-4 1e-6 1e-8]
      cases(end+1, :) = {sprintf("reversible default rho, tol %g", tol), ...
                         odepkgset(base, "StepControl", "reversible", "RelTol", tol, "AbsTol", tol)};
    endfor
    ## the first step given (eps = InitialStep rho(y0))
    cases(end+1, :) = {"reversible default rho, InitialStep 3.8e-4", ...
                       odepkgset(base, "StepControl", "reversible", "InitialStep", 3.8e-4)};
    for tol = [1e-4 1e-6 1e-8]
      cases(end+1, :) = {sprintf("reversible rho=|q|^-1.5, tol %g", tol), ...
                         odepkgset(base, "StepControl", "reversible", "StepDensityFcn", G_kepler, ...
                                   "RelTol", tol, "AbsTol", tol)};
    endfor
    printf ("\nKepler e = %g, %d orbits (t = %g), odeSV explicit\n", e, orbits, tf);
    printf ("%-40s %10s %10s %8s %9s %9s  %s\n", "case", "steps", "f calls", "time/s", "h min", "h max",
            "max |H - H0| per tenth (first, 2nd, ..., last)");
    for i = 1:rows (cases)
      t0 = tic ();
      sol = odeSV (kepler, [0 tf], y0, cases{i, 2});
      el = toc (t0);
      y = sol.y;
      H = sum (y(3:4, :).^2, 1) / 2 - 1 ./ sqrt (sum (y(1:2, :).^2, 1));
      k = min (10, 1 + floor (10 * sol.x / tf));
      dH = accumarray (k(:), abs (H(:) - H(1)), [10 1], @max).';
      hs = diff (sol.x);
      r = struct ("e", e, "name", cases{i, 1}, "steps", sol.stats.nsteps, "nfevals", sol.stats.nfevals,
                  "time", el, "dH", dH, "hmin", min (hs), "hmax", max (hs));
      R(end+1) = r;
      printf ("%-40s %10d %10d %8.2f %9.2g %9.2g  %s\n", r.name, r.steps, r.nfevals, r.time, r.hmin, r.hmax,
              sprintf ("%8.2g", dH));
      fflush (stdout);
    endfor
  endfor

endfunction
