## -*- texinfo -*-
## @deftypefn {} {} composition_heavy_top (@var{runs})
## Benchmark (not a test) of the composition methods (option "Order") of
## odeRATTLie: Hante's fast heavy top (heavy_top ("S3", "fast"): rotation
## about the fixed support, unit quaternion p, body angular velocity Omega,
## Omega0 = (0, 150, -4.61538)) to t = 1 by odeRATTLie of order 2 and with
## "Order" 4, 6, 8 at several fixed step sizes, against ode45 on the
## quaternion ODE a user would write,
## @example
## p' = 1/2 p * (0, Omega),   Js Omega' = (Js Omega) x Omega + tau(p),
## @end example
## tau = X x (m R(p)' g) (the body-frame torque of gravity about the support,
## Js the inertia about it), at RelTol = AbsTol = 1e-6 @dots{} 1e-12.
## Error: the max norm of [R(p)(:); Omega] at t = 1 (independent of the
## quaternion's sign) against ode45 at RelTol = AbsTol = 1e-13 on the same
## ODE.  Prints steps, calls of f, the median time of @var{runs} (default 3)
## after a warm-up, the error, max ||p| - 1| over the odeRATTLie steps, and
## the fastest run of each kind with error <= 1e-8.
##
## From the repository root:
## @example
## octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("PKG_ADD"); addpath ("bench"); composition_heavy_top (3)'
## @end example
## @end deftypefn
function composition_heavy_top (runs = 3)
  T = 1;  tol_ok = 1e-8;
  P = heavy_top ("S3", "fast");
  Js = P.Js;  mX = P.mass * P.X;  g = P.gvec;
  quat = @(t, y) quat_rhs (y, Js, mX, g);
  cmp = @(y) [P.R(y)(:); y(5:7)];                 # R(p) and Omega
  ref_sol = ode45 (quat, [0 T], P.y0, odeset ("RelTol", 1e-13, "AbsTol", 1e-13));
  ref = cmp (ref_sol.y(:,end));
  printf ("Fast heavy top (Hante), S3, t = %g: error of [R(p); Omega] (|Omega| ~ 150) against ode45 (1e-13) on the quaternion ODE;\n",
          T);
  printf ("median of %d runs on a shared, loaded machine (times noisy; f calls are not)\n", runs);
  printf ("%-32s %7s %8s %9s %10s %10s\n", "method", "steps", "f calls", "time [s]", "error", "max||p|-1|");
  rows = {};
  base = odepkgset ("LieGroup", P.group, "MassMatrix", P.M);
  cases = {2, [1000 4000 16000]; 4, [200 400 800 1600]; 6, [100 200 400 800]; 8, [50 100 200 400]};
  for c = 1:size (cases, 1)
    ord = cases{c, 1};
    for N = cases{c, 2}
      o = odepkgset (base, "TimeStepSize", T/N, "TimeStepNumber", N, "Order", ord);
      [tm, sol] = median_time (@() odeRATTLie (P.f, 0, P.y0, o), runs);
      e = norm (cmp (sol.y(:,end)) - ref, Inf);
      dp = max (abs (sqrt (sum (sol.y(1:4,:) .^ 2, 1)) - 1));
      name = sprintf ("odeRATTLie order %d", ord);
      if (ord > 2)
        name = sprintf ("%s (%s)", name, table_name (ord));
      endif
      printf ("%-32s %7d %8d %9.4f %10.2e %10.1e\n", name, N, sol.stats.nfevals, tm, e, dp);
      rows(end+1,:) = {name, tm, e, N};
    endfor
  endfor
  for tol = [1e-6 1e-8 1e-10 1e-12]
    o = odeset ("RelTol", tol, "AbsTol", tol, "Refine", 1, "Stats", "on");   # outputs = steps
    [tm, sol] = median_time (@() ode45_quiet (quat, T, P.y0, o), runs);
    e = norm (cmp (sol.y(:,end)) - ref, Inf);
    name = sprintf ("ode45 quaternion ODE, tol %.0e", tol);
    printf ("%-32s %7d %8d %9.4f %10.2e\n", name, numel (sol.x) - 1, sol.stats.nfevals, tm, e);
    rows(end+1,:) = {name, tm, e, numel(sol.x) - 1};
  endfor
  ok = cellfun (@(e) e <= tol_ok, rows(:,3));
  for kind = {"odeRATTLie", "ode45"}
    k = find (ok & strncmp (rows(:,1), kind{1}, numel (kind{1})));
    if (isempty (k))
      printf ("%s: no run with error <= %.0e\n", kind{1}, tol_ok);
    else
      [~, j] = min ([rows{k,2}]);
      printf ("fastest %s with error <= %.0e: %s, %d steps, %.4f s (error %.1e)\n", kind{1}, tol_ok,
              rows{k(j),1}, rows{k(j),4}, rows{k(j),2}, rows{k(j),3});
    endif
  endfor
endfunction

## ode45 with its Stats (for the calls of f) but without their printout
function sol = ode45_quiet (fcn, T, y0, o)
  evalc ("sol = ode45 (fcn, [0 T], y0, o);");
endfunction

## y = [p; Omega]: p' = 1/2 p * (0, Omega) (Hamilton product, scalar first),
## Js Omega' = (Js Omega) x Omega + X x (m R(p)' g).
function dy = quat_rhs (y, Js, mX, g)
  p0 = y(1);  pv = y(2:4);  W = y(5:7);
  ## R(p)' g = (p0^2 - |pv|^2) g + 2 (pv.g) pv - 2 p0 pv x g
  Rtg = (p0^2 - pv' * pv) * g + 2 * (pv' * g) * pv - 2 * p0 * cross3 (pv, g);
  dy = [-0.5 * (pv' * W);
        0.5 * (p0 * W + cross3 (pv, W));
        Js \ (cross3 (Js * W, W) + cross3 (mX, Rtg))];
endfunction

function c = cross3 (a, b)
  c = [a(2)*b(3) - a(3)*b(2); a(3)*b(1) - a(1)*b(3); a(1)*b(2) - a(2)*b(1)];
endfunction

function s = table_name (p)
  names = {4, "McLachlan4"; 6, "KahanLi6"; 8, "KahanLi8"};
  s = names{[names{:,1}] == p, 2};
endfunction
