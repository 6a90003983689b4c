## -*- texinfo -*-
## @deftypefn {} {} native_pendulum_vs_ode45 (@var{runs}, @var{tol})
## The pendulum (m = L = g = 1, theta0 = 1.2, omega0 = 0.3) to t = 10 at an
## error <= @var{tol} (default 1e-10) in [q; p] = [sin th; -cos th;
## th' cos th; th' sin th] at t = 10 against the exact solution (Jacobi
## elliptic functions): odeRATTLE of order 8 (KahanLi8 composition of
## explicit RATTLE) with a native model of odepkg_model (the particle on the
## unit circle, H = |p|^2/2 + q2, g = |q|^2 - 1) against ode45 on the angle
## ODE th'' = -sin th, and the same RATTLE run with function handles
## (hand-written f, g, G: what the model replaces).
##
## The cheapest setting of each that reaches @var{tol} is found first: the
## fewest steps N of RATTLE (h = 10/N) from a list about 5 % apart, the
## largest RelTol = AbsTol of ode45 from 10^-8, 10^-8.125, ... (about 30 %
## apart: ode45's cost grows as tol^(-1/5), so each is about 5 % dearer); then both are timed side by
## side, alternating, median of @var{runs} (default 7) after a warm-up.
## Prints errors, times, the ratio (target >= 50) and the load average.
## @end deftypefn
function native_pendulum_vs_ode45 (runs = 7, tol = 1e-10)
  pkg load symbolic
  th0 = 1.2;  w0 = 0.3;  T = 10;
  cart = @(a) [sin(a(1)); -cos(a(1)); a(2)*cos(a(1)); a(2)*sin(a(1))];
  ref = cart (exact_pendulum (th0, w0, T));
  angle = @(t, a) [a(2); -sin(a(1))];

  cache = tempname ();
  syms q1 q2 p1 p2 real
  m = odepkg_model ("H", (p1^2 + p2^2)/2 + q2, "q", [q1 q2], "p", [p1 p2],
                    "g", q1^2 + q2^2 - 1, "CacheDir", cache);
  y0 = cart ([th0; w0]);
  rattle = @(N) odeRATTLE (m, [0 T], y0, odepkgset ("TimeStepSize", T / N, "Order", 8));
  ode = @(tl) ode45 (angle, [0 T], [th0; w0], odeset ("RelTol", tl, "AbsTol", tl));
  err_rattle = @(N) norm (last_row (rattle (N)) - ref, Inf);
  err_ode45 = @(tl) norm (cart (last_row (ode (tl))) - ref, Inf);

  ## the cheapest settings that reach tol
  N = NaN;
  for n = unique (round (10 * 1.05 .^ (0:70)))     # about 5 % apart
    if (err_rattle (n) <= tol)
      N = n;  break;
    endif
  endfor
  tl = NaN;
  for e = -8:-0.125:-14                            # about 30 % apart
    if (err_ode45 (10^e) <= tol)
      tl = 10^e;  break;
    endif
  endfor
  if (isnan (N) || isnan (tl))
    error ("native_pendulum_vs_ode45: no setting reached %g (RATTLE N = %g, ode45 tol = %g)", tol, N, tl);
  endif
  [t45, ~] = ode (tl);  steps45 = numel (t45) - 1;
  e_r = err_rattle (N);  e_o = err_ode45 (tl);
  ## the timed calls: options built before, as run_benchmarks does
  o_r = odepkgset ("TimeStepSize", T / N, "Order", 8);
  o_o = odeset ("RelTol", tl, "AbsTol", tl);
  rattle = @(N) odeRATTLE (m, [0 T], y0, o_r);
  ode = @(tl) ode45 (angle, [0 T], [th0; w0], o_o);
  ## the same RATTLE run with function handles (hand-written f, g, G)
  o_h = odepkgset (o_r, "Explicit", "yes", "ConstraintFcn", @(q) q.'*q - 1,
                   "ConstraintGradFcn", @(q) 2*q.', "ConstraintsNb", 1);
  fp = @(t, x) [x(3:4); 0; -1];
  handle = @() odeRATTLE (fp, [0 T], y0, o_h);
  e_h = norm (last_row (handle ()) - ref, Inf);

  la0 = strtrim (fileread ("/proc/loadavg"));
  sol = rattle (N);  sol = ode (tl);  sol = handle ();       # warm-up (an output: none plots)
  [tr, to, th] = deal (zeros (1, runs));
  for r = 1:runs
    t0 = cputime ();  sol = rattle (N);  tr(r) = cputime () - t0;
    t0 = cputime ();  sol = ode (tl);  to(r) = cputime () - t0;
    t0 = cputime ();  sol = handle ();  th(r) = cputime () - t0;
  endfor
  ## where RATTLE's time goes: t(N) = fixed + N * per step, from N and 10 N steps
  t10 = zeros (1, runs);
  r10 = @() odeRATTLE (m, [0 10*T], y0, o_r);
  sol = r10 ();
  for r = 1:runs
    t0 = cputime ();  sol = r10 ();  t10(r) = cputime () - t0;
  endfor
  per_step = (median (t10) - median (tr)) / (9 * N);
  fixed = median (tr) - N * per_step;
  la1 = strtrim (fileread ("/proc/loadavg"));

  printf ("Pendulum theta0 = %g, omega0 = %g, t = %g, error in [q; p] at t = %g against the exact solution <= %g\n",
          th0, w0, T, T, tol);
  printf ("  %-52s %10s %12s %12s\n", "", "error", "CPU [ms]", "range [ms]");
  printf ("  %-52s %10.2g %12.3f %6.3f-%.3f\n",
          sprintf ("odeRATTLE order 8, native model, h = %g (%d steps)", T / N, N), e_r,
          1e3 * median (tr), 1e3 * min (tr), 1e3 * max (tr));
  printf ("  %-52s %10.2g %12.3f %6.3f-%.3f\n",
          sprintf ("ode45, angle ODE, RelTol = AbsTol = %.3g (%d steps)", tl, steps45), e_o,
          1e3 * median (to), 1e3 * min (to), 1e3 * max (to));
  printf ("  %-52s %10.2g %12.3f %6.3f-%.3f\n",
          sprintf ("odeRATTLE order 8, function handles, the same steps"), e_h,
          1e3 * median (th), 1e3 * min (th), 1e3 * max (th));
  printf ("  speed-up (medians of %d, side by side): %.1f x   (target >= 50); model over handles: %.1f x\n",
          runs, median (to) / median (tr), median (th) / median (tr));
  printf ("  odeRATTLE's time: %.3f ms per call (set-up, options, output) + %.2f us per step (%.2f us per stage of 17) x %d steps\n",
          1e3 * fixed, 1e6 * per_step, 1e6 * per_step / 17, N);
  printf ("  ode45: %.1f us per step (7 stages, 6 calls of the angle ODE's f)\n", 1e6 * median (to) / steps45);
  printf ("  load average before: %s\n               after:  %s\n", la0, la1);
  confirm_recursive_rmdir (false, "local");
  rmdir (cache, "s");
endfunction

function y = last_row (sol)
  if (isstruct (sol))
    y = sol.y(:,end);
  else
    y = sol(end,:).';
  endif
endfunction

## [theta; omega](t) of theta'' = -sin theta (libration, |E| < 1) by Jacobi
## elliptic functions: with E = omega^2/2 - cos theta and k^2 = (1 + E)/2,
## sin (theta/2) = k sn (t + tau, k), omega = 2 k cn (t + tau, k), tau from
## the initial data (sn and cn at tau) by bisection on one period.
function a = exact_pendulum (th0, w0, t)
  E = w0^2 / 2 - cos (th0);
  k2 = (1 + E) / 2;  k = sqrt (k2);
  K = ellipke (k2);
  s0 = sin (th0 / 2) / k;
  ## tau in [-K, K] where sn is increasing, and cn >= 0: take it there if
  ## w0 >= 0, else its mirror 2K - tau (sn the same, cn negated)
  lo = -K;  hi = K;
  for i = 1:200
    mid = (lo + hi) / 2;
    if (ellipj (mid, k2) < s0)
      lo = mid;
    else
      hi = mid;
    endif
  endfor
  tau = (lo + hi) / 2;
  if (w0 < 0)
    tau = 2*K - tau;
  endif
  [sn, cn] = ellipj (t + tau, k2);
  a = [2 * asin(k * sn); 2 * k * cn];
endfunction
