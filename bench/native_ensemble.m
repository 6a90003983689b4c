## -*- texinfo -*-
## @deftypefn {} {} native_ensemble (@var{K}, @var{N}, @var{runs})
## Benchmark (not a test) of an ensemble of a native model: K Kepler orbits
## (eccentricities 0 to 0.7) by explicit odeSV, N fixed steps of 0.001,
## output at three times only; wall and CPU time per trajectory-step with
## "Threads" 1 and 2 (medians of @var{runs}), against the same ensemble
## with a vectorised function handle, and the largest difference of the
## two.  The issue's target: <= 20 ns per trajectory-step at K = 1000.
##
## From the repository root, with the package installed (make install):
## @example
## HOME=$PWD/build/home octave-cli --norc --eval 'pkg load odepkg; addpath ("bench"); native_ensemble ()'
## @end example
## @end deftypefn
function native_ensemble (K = 1000, N = 1000, runs = 7)
  pkg load symbolic
  syms q1 q2 p1 p2 real
  kep = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2], "p", [p1 p2]);
  h = 0.001;
  e = linspace (0, 0.7, K);
  Y0 = [1 - e; 0*e; 0*e; sqrt((1 + e) ./ (1 - e))];
  fk = @(t, y) [y(3:4,:); -y(1:2,:) ./ sum(y(1:2,:).^2, 1).^1.5];
  tspan = [0 N*h/2 N*h];
  wall = cpu = zeros (2, runs);  hw = zeros (1, min (runs, 3));
  for r = 1:runs
    for th = 1:2
      o = odepkgset ("TimeStepSize", h, "Threads", th);
      c0 = cputime ();  t0 = tic;
      [~, y] = odeSV (kep, tspan, Y0, o);
      wall(th, r) = toc (t0);  cpu(th, r) = cputime () - c0;
    endfor
    if (r <= numel (hw))
      t0 = tic;
      [~, yh] = odeSV (fk, tspan, Y0, odepkgset ("TimeStepSize", h, "Explicit", "yes"));
      hw(r) = toc (t0);
    endif
  endfor
  ns = @(s) 1e9 * s / (K * N);
  printf ("Kepler ensemble of a native model, K = %d, %d steps; ns per trajectory-step (medians of %d)\n", K, N, runs);
  for th = 1:2
    printf ("model, Threads %d:             wall %6.1f   CPU %6.1f\n", th, ns (median (wall(th,:))), ns (median (cpu(th,:))));
  endfor
  printf ("function handle (vectorised): wall %6.1f\n", ns (median (hw)));
  printf ("max |model - handle| = %.2g\n", max (abs (y(:) - yh(:))));
endfunction
