## -*- texinfo -*-
## @deftypefn {} {} composition_kepler (@var{target})
## Benchmark (not a test) of the composition methods on Kepler's problem,
## e = 0.6, 100 orbits (t = 200 pi), odeSV explicit at fixed steps: for
## order 2 (Störmer–Verlet) and the recommended tables of orders 4, 6, 8
## and 10, the calls of f needed for a max energy error
## max |H - H0| <= @var{target} (default 1e-8) over the whole run.
##
## Each method is run at N0 steps per orbit; as the energy error of a
## symplectic method of order p behaves as C h^p, the step count that meets
## the target is predicted from it, then run, and raised by 5 % until the
## run meets the target.  Every figure printed is a run's own (steps, calls,
## time, max |H - H0|); the order-2 run takes about 10^7 steps (minutes).
##
## From the repository root, with the package installed (make install):
## @example
## HOME=$PWD/build/home octave-cli --norc --eval 'pkg load odepkg; addpath ("bench"); composition_kepler ()'
## @end example
## @end deftypefn
function composition_kepler (target = 1e-8)
  e = 0.6;  orbits = 100;  T = 2 * pi * orbits;
  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
  f = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];   # no space before ( inside [ ]
  H = @(y) sum (y(:,3:4).^2, 2) / 2 - 1 ./ sqrt (sum (y(:,1:2).^2, 2));
  H0 = H (y0.');
  printf ("Kepler e = %g, %d orbits, odeSV explicit, fixed steps: calls of f for max |H - H0| <= %.0e\n",
          e, orbits, target);
  printf ("%-28s %12s %12s %10s %12s\n", "method", "steps/orbit", "f calls", "time [s]", "max|H-H0|");
  methods = {2, "StormerVerlet", 300; 4, "McLachlan4", 200; 6, "KahanLi6", 100; 8, "KahanLi8", 60;
             10, "SofroniouSpaletta10", 30};
  calls = zeros (rows (methods), 1);
  for m = 1:rows (methods)
    p = methods{m, 1};
    N = methods{m, 3};
    [err, nf, tm] = run_kepler (f, H, H0, y0, T, orbits * N, p);
    printf ("%-28s %12d %12d %10.2f %12.2e   (trial)\n", methods{m, 2}, N, nf, tm, err);
    N = ceil (N * (err / target)^(1 / p) * 1.02);
    while (true)
      [err, nf, tm] = run_kepler (f, H, H0, y0, T, orbits * N, p);
      printf ("%-28s %12d %12d %10.2f %12.2e\n", methods{m, 2}, N, nf, tm, err);
      if (err <= target)
        break;
      endif
      N = ceil (1.05 * N);
    endwhile
    calls(m) = nf;
  endfor
  printf ("calls of f against order 2 at max |H - H0| <= %.0e:", target);
  for m = 2:rows (methods)
    printf ("  %s %.0fx fewer", methods{m, 2}, calls(1) / calls(m));
  endfor
  printf ("\n");
endfunction

function [err, nf, tm] = run_kepler (f, H, H0, y0, T, steps, p)
  o = odepkgset ("TimeStepSize", T / steps, "TimeStepNumber", steps, "Explicit", "yes");
  if (p > 2)
    o = odepkgset (o, "Order", p);
  endif
  t0 = tic ();
  sol = odeSV (f, 0, y0, o);
  tm = toc (t0);
  err = max (abs (H (sol.y.') - H0));
  nf = sol.stats.nfevals;
endfunction
