## -*- texinfo -*-
## @deftypefn {} {} composition_floor (@var{runs})
## Benchmark (not a test): what the explicit composition methods cost beyond
## their calls of f.  Kepler e = 0.6, h = 0.05, 2000 steps, explicit odeSV
## and odeVV of order 2 and with "Order" 4, 6, 8, 10; for each: calls of f
## per step (one per stage is the method's need) and the "floor", the
## solver's time divided by (calls of f x the cost of one call of f from
## C++, __odepkg_callback_cost__): 1 means the run costs its callbacks and
## nothing else.  Medians of @var{runs} (default 5) runs after a warm-up,
## the callback cost measured in the same session.
##
## From the repository root, with the package installed (make install):
## @example
## HOME=$PWD/build/home octave-cli --norc --eval 'pkg load odepkg; addpath ("bench"); composition_floor (5)'
## @end example
## @end deftypefn
function composition_floor (runs = 5)
  e = 0.6;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
  f = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];       # odeSV: [H_p; -H_q]
  a = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];       # odeVV: [v; a], the same numbers
  h = 0.05;  N = 2000;
  cost = median (arrayfun (@(k) __odepkg_callback_cost__ (f, 0, y0, 5000), 1:max (runs, 3)));
  printf ("Kepler e = %g, h = %g, %d steps; one call of f from C++: %.2f us (median of %d)\n",
          e, h, N, 1e6 * cost, max (runs, 3));
  printf ("%-24s %8s %12s %12s %8s\n", "solver", "stages", "calls/step", "us/step", "floor");
  orders = {2, 1; 4, 5; 6, 9; 8, 17; 10, 35};
  for s = {"odeSV", "odeVV"}
    for k = 1:rows (orders)
      p = orders{k, 1};
      o = odepkgset ("TimeStepSize", h, "TimeStepNumber", N);
      if (strcmp (s{1}, "odeSV"))
        o = odepkgset (o, "Explicit", "yes");
        fn = @() odeSV (f, 0, y0, o);
      else
        fn = @() odeVV (a, 0, y0, o);
      endif
      if (p > 2)
        o = odepkgset (o, "Order", p);
        if (strcmp (s{1}, "odeSV"))
          fn = @() odeSV (f, 0, y0, o);
        else
          fn = @() odeVV (a, 0, y0, o);
        endif
      endif
      [tm, sol] = median_time (fn, runs);
      nf = sol.stats.nfevals;
      printf ("%-24s %8d %12.2f %12.2f %8.3f\n", sprintf ("%s order %d", s{1}, p), orders{k, 2},
              nf / N, 1e6 * tm / N, tm / (nf * cost));
    endfor
  endfor
endfunction
