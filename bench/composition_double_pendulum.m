## -*- texinfo -*-
## @deftypefn {} {} composition_double_pendulum (@var{runs})
## Benchmark (not a test) of the composition methods on a constrained
## system with two constraints: the planar double pendulum (unit masses and
## rods, gravity 1), released at angles (0.5, 1.0) from the downward
## vertical at rest, to t = 10.  odeRATTLE in Cartesian coordinates
## (q = [x1 y1 x2 y2], H = |p|^2/2 + y1 + y2, g = the two rod lengths) at
## order 2 and composed orders 4, 6, 8 at fixed steps, against ode45 on the
## angle ODE a user would write instead (the Lagrange equations in
## theta1, theta2).  Error: max norm of [q; p] at t = 10 against ode45 at
## RelTol = AbsTol = 1e-13 on the angle ODE; times: median of @var{runs}
## (default 3) after a warm-up; the constraint residuals of the odeRATTLE
## runs are printed too.
##
## From the repository root, with the package installed (make install):
## @example
## HOME=$PWD/build/home octave-cli --norc --eval 'pkg load odepkg; addpath ("bench"); composition_double_pendulum (3)'
## @end example
## @end deftypefn
function composition_double_pendulum (runs = 3)
  T = 10;  a0 = [0.5; 1.0; 0; 0];
  ref_sol = ode45 (@angle_ode, [0 T], a0, odeset ("RelTol", 1e-13, "AbsTol", 1e-13));
  ref = cartesian (ref_sol.y(:,end));
  y0 = cartesian (a0);
  f = @(t, x) [x(5:8); 0; -1; 0; -1];
  g = @(q) [q(1:2)'*q(1:2) - 1; (q(3:4) - q(1:2))'*(q(3:4) - q(1:2)) - 1];
  G = @(q) [2*q(1:2)', 0, 0; -2*(q(3:4) - q(1:2))', 2*(q(3:4) - q(1:2))'];
  base = odepkgset ("ConstraintFcn", g, "ConstraintGradFcn", G, "ConstraintsNb", 2, "Explicit", "yes");
  printf ("Double pendulum, t = %g, error of [q; p] against ode45 (1e-13) on the angle ODE; median of %d runs\n",
          T, runs);
  printf ("%-26s %7s %9s %10s %10s %10s %10s\n", "method", "steps", "f calls", "time [s]", "error",
          "max|g|", "max|G Hp|");
  rows = {};
  cases = {2, [1000 4000 16000]; 4, [200 400 800 1600]; 6, [100 200 400 800]; 8, [50 100 200 400]};
  for c = 1:size (cases, 1)
    p = cases{c, 1};
    for N = cases{c, 2}
      o = odepkgset (base, "TimeStepSize", T/N, "TimeStepNumber", N, "Order", p);
      [tm, sol] = median_time (@() odeRATTLE (f, 0, y0, o), runs);
      e = norm (sol.y(:,end) - ref, Inf);
      Y = sol.y;
      rg = max (max (abs ([sum(Y(1:2,:).^2) - 1; sum((Y(3:4,:) - Y(1:2,:)).^2) - 1])));
      rh = max (max (abs ([2*sum(Y(1:2,:) .* Y(5:6,:)); ...
                           2*sum((Y(3:4,:) - Y(1:2,:)) .* (Y(7:8,:) - Y(5:6,:)))])));
      name = sprintf ("odeRATTLE order %d", p);
      printf ("%-26s %7d %9d %10.4f %10.2e %10.1e %10.1e\n", name, N, sol.stats.nfevals, tm, e, rg, rh);
      rows(end+1,:) = {name, tm, e};
    endfor
  endfor
  for tol = [1e-6 1e-8 1e-10 1e-12]
    o = odeset ("RelTol", tol, "AbsTol", tol, "Refine", 1);
    [tm, sol] = median_time (@() ode45 (@angle_ode, [0 T], a0, o), runs);
    e = norm (cartesian (sol.y(:,end)) - ref, Inf);
    name = sprintf ("ode45 angle ODE, tol %.0e", tol);
    printf ("%-26s %7d %9s %10.4f %10.2e\n", name, numel (sol.x) - 1, "-", tm, e);
    rows(end+1,:) = {name, tm, e};
  endfor
  ok = cellfun (@(e) e <= 1e-8, rows(:,3));
  for kind = {"odeRATTLE", "ode45"}
    k = find (ok & strncmp (rows(:,1), kind{1}, numel (kind{1})));
    if (isempty (k))
      printf ("%s: no run with error <= 1e-8\n", kind{1});
    else
      [~, j] = min ([rows{k,2}]);
      printf ("fastest %s with error <= 1e-8: %s, %.4f s (error %.1e)\n", kind{1}, rows{k(j),1},
              rows{k(j),2}, rows{k(j),3});
    endif
  endfor
endfunction

## Lagrange's equations of the double pendulum in the angles from the
## downward vertical (unit masses, rods and gravity), a = [th1; th2; w1; w2].
function da = angle_ode (~, a)
  d = a(1) - a(2);  den = 3 - cos (2*d);
  w1 = a(3);  w2 = a(4);
  da = [w1; w2;
        (-3*sin(a(1)) - sin(a(1) - 2*a(2)) - 2*sin(d)*(w2^2 + w1^2*cos(d))) / den;
        2*sin(d)*(2*w1^2 + 2*cos(a(1)) + w2^2*cos(d)) / den];
endfunction

function y = cartesian (a)
  s1 = sin (a(1));  c1 = cos (a(1));  s2 = sin (a(2));  c2 = cos (a(2));
  v1 = a(3) * [c1; s1];
  y = [s1; -c1; s1 + s2; -c1 - c2; v1; v1 + a(4) * [c2; s2]];
endfunction
