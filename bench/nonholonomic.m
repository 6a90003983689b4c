## -*- texinfo -*-
## @deftypefn {} {} nonholonomic (@var{runs})
## Benchmark (not a test) of the nonholonomic RATTLE (odeRATTLE with
## "NonholonomicFcn"): error against time for orders 2, 4, 6 at fixed steps,
## next to ode45 on the index-reduced ODE (the multiplier eliminated:
## mu = (A M^-1 A')^-1 (A M^-1 F + A' v), A' = dA/dt), on
## @itemize
## @item the vertical rolling disk to t = 2 (error against its closed form);
## @item the Chaplygin sleigh on a spring to t = 20 (error against odeRATTLE
## of order 8 at h = 0.005).
## @end itemize
## Also: |A v| at the end of each run, and the calls per step (f and A) of
## the method.  Times: median of @var{runs} (default 3) after a warm-up.
##
## From the repository root:
## @example
## octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("PKG_ADD"); addpath ("bench"); nonholonomic (3)'
## @end example
## @end deftypefn
function nonholonomic (runs = 3)
  ## --- the vertical rolling disk, q = (x, y, phi, theta) -------------------
  R = 0.7;  m = 2;  I = 0.4;  J = 0.9;  wp = 1.3;  wt = 2.1;  T = 2;
  Minv = 1 ./ [m; m; I; J];
  exact = @(t) [0.5 + R*wt/wp * (sin(0.2 + wp*t) - sin(0.2)); -0.3 - R*wt/wp * (cos(0.2 + wp*t) - cos(0.2));
                0.2 + wp*t; -0.1 + wt*t; m*R*cos(0.2 + wp*t)*wt; m*R*sin(0.2 + wp*t)*wt; I*wp; J*wt];
  f = @(t, y) [Minv .* y(5:8); 0; 0; 0; 0];
  A = @(q) [1, 0, 0, -R*cos(q(3)); 0, 1, 0, -R*sin(q(3))];
  Adot = @(q, v) [0, 0, 0, R*sin(q(3))*v(3); 0, 0, 0, -R*cos(q(3))*v(3)];
  bench_problem ("vertical rolling disk, t = 2, error against the closed form", f, A, Adot, Minv, 4, 2,
                 exact (0), T, exact (T), runs,
                 {2, [200 400 800 1600 3200]; 4, [25 50 100 200]; 6, [10 20 40 80]});

  ## --- the Chaplygin sleigh on a spring, q = (x, y, theta) ------------------
  a = 0.5;  Is = 0.3;  T = 20;
  Minv = [1; 1; 1 / Is];
  f = @(t, y) [Minv .* y(4:6); -y(1:2); 0];
  A = @(q) [-sin(q(3)), cos(q(3)), -a];
  Adot = @(q, v) [-cos(q(3))*v(3), -sin(q(3))*v(3), 0];
  th = 0.4;  w = 0.8;  u = 0.6;
  y0 = [0.3; -0.2; th; u*cos(th) - a*w*sin(th); u*sin(th) + a*w*cos(th); Is*w];
  o = odepkgset ("NonholonomicFcn", A, "NonholonomicsNb", 1, "Order", 8, "TimeStepSize", 0.005);
  [~, yr] = odeRATTLE (f, [0 T], y0, o);
  bench_problem ("Chaplygin sleigh on a spring, t = 20, error against odeRATTLE order 8, h = 0.005", f, A, Adot,
                 Minv, 3, 1, y0, T, yr(end, :).', runs,
                 {2, [1000 2000 4000 8000 16000]; 4, [125 250 500 1000]; 6, [50 100 200 400]});
endfunction

function bench_problem (title, f, A, Adot, Minv, d, k, y0, T, ref, runs, cases)
  printf ("\n%s; median of %d runs (shared machine)\n", title, runs);
  printf ("%-22s %7s %10s %10s %10s %12s %12s\n", "method", "steps", "time [s]", "error", "|A v| end",
          "f calls/step", "A calls/step");
  base = odepkgset ("NonholonomicFcn", A, "NonholonomicsNb", k);
  for c = 1:rows (cases)
    p = cases{c, 1};
    for n = cases{c, 2}
      o = odepkgset (base, "TimeStepSize", T / n, "Order", p);
      [tm, sol] = median_time (@() odeRATTLE (f, [0 T], y0, o), runs);
      y = sol.y(:, end);
      av = norm (A (y(1:d)) * (Minv .* y(d+1:end)), Inf);
      printf ("%-22s %7d %10.4f %10.2e %10.1e %12.2f %12.2f\n", sprintf ("odeRATTLE order %d", p), n, tm,
              norm (y - ref, Inf), av, sol.stats.nfevals / n, sol.stats.nnonholevals / n);
    endfor
  endfor
  ## ode45 on the index-reduced ODE: p' = F - A' mu with A M^-1 p' + A' v = 0
  reduced = @(t, y) reduced_rhs (t, y, f, A, Adot, Minv, d);
  for tol = [1e-6 1e-8 1e-10 1e-12]
    oo = odeset ("RelTol", tol, "AbsTol", tol);
    [tm, sol] = median_time (@() ode45 (reduced, [0 T], y0, oo), runs);
    y = sol.y(:, end);
    av = norm (A (y(1:d)) * (Minv .* y(d+1:end)), Inf);
    printf ("%-22s %7d %10.4f %10.2e %10.1e %12s %12s\n", sprintf ("ode45, tol %g", tol), numel (sol.x) - 1, tm,
            norm (y - ref, Inf), av, "6 (FSAL)", "-");
  endfor
endfunction

## The index-reduced ODE of A(q) v = 0, v = M^-1 p: the multiplier from the
## differentiated constraint A M^-1 (F - A' mu) + (dA/dt) v = 0.
function dy = reduced_rhs (t, y, f, A, Adot, Minv, d)
  q = y(1:d);  v = Minv .* y(d+1:end);
  Fy = f (t, y)(d+1:end);
  Aq = A (q);
  mu = (Aq * (Minv .* Aq.')) \ (Aq * (Minv .* Fy) + Adot (q, v) * v);
  dy = [v; Fy - Aq.' * mu];
endfunction
