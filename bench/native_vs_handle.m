## -*- texinfo -*-
## @deftypefn {} {} native_vs_handle (@var{N}, @var{runs})
## Kepler (e = 0.5), explicit Störmer–Verlet (odeSV), @var{N} fixed steps
## (default 10^6) of h = 10^-3, output at three times only: a native model of
## odepkg_model (SymPy-derived C kernels, dlopen'd) against the function
## handle with the hand-written f, side by side, alternating, median of
## @var{runs} (default 3) after a warm-up.  Prints ns per step, the
## speed-up, the largest difference of the two end states, the model's
## build time (derive + compile, then a cache hit) and the load average.
## @end deftypefn
function native_vs_handle (N = 1e6, runs = 3)
  pkg load symbolic
  syms q1 q2 p1 p2 real
  dir = tempname ();
  t0 = tic ();
  [m, i1] = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2], "p", [p1 p2],
                          "CacheDir", dir);
  build = toc (t0);
  t0 = tic ();
  [~, i2] = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2], "p", [p1 p2],
                          "CacheDir", dir);
  rebuild = toc (t0);
  f = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];
  y0 = [0.5; 0; 0; sqrt(3)];
  h = 1e-3;
  o = odepkgset ("TimeStepSize", h, "Explicit", "yes");
  tend = N * h;
  la0 = fileread ("/proc/loadavg");
  ts = [0 tend/2 tend];                  # output at these times only: the loop, not the storage
  [~, yn] = odeSV (m, [0 100*h], y0, o);  [~, yh] = odeSV (f, [0 100*h], y0, o);   # warm-up
  tn = th = zeros (1, runs);
  for r = 1:runs
    t0 = tic ();  [~, yn] = odeSV (m, ts, y0, o);  tn(r) = toc (t0);
    t0 = tic ();  [~, yh] = odeSV (f, ts, y0, o);  th(r) = toc (t0);
  endfor
  la1 = fileread ("/proc/loadavg");
  printf ("Kepler e = 0.5, odeSV Explicit, %g fixed steps of h = %g, output at t = %g, %g, %g only, median of %d runs\n",
          N, h, ts, runs);
  printf ("  native model (odepkg_model):   %8.1f ns/step\n", 1e9 * median (tn) / N);
  printf ("  function handle:               %8.1f ns/step\n", 1e9 * median (th) / N);
  printf ("  speed-up:                      %8.1f x\n", median (th) / median (tn));
  printf ("  max |y_native - y_handle| at t = %g: %.3g\n", tend, max (abs (yn(end,:) - yh(end,:))));
  printf ("  model build: %.2f s wall (derive %.3f s, compile %.3f s); again from the cache: %.3f s (cached = %d)\n",
          build, i1.derive_seconds, i1.compile_seconds, rebuild, i2.cached);
  printf ("  load average before: %s  after: %s", strtrim (la0), la1);
  confirm_recursive_rmdir (false, "local");
  rmdir (dir, "s");
endfunction
