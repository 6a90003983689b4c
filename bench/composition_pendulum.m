## -*- texinfo -*-
## @deftypefn {} {} composition_pendulum (@var{runs})
## Benchmark (not a test) of the composition methods (options "Order" /
## "Composition"): the Cartesian pendulum (m = L = g = 1, theta0 = 1.2,
## omega0 = 0.3) to t = 10 by odeRATTLE of order 2 and composed orders 4, 6,
## 8 at several fixed step sizes, against ode45 on the angle ODE
## theta'' = -sin theta at several tolerances.  Error: the max norm of
## [q; p] at t = 10 against ode45 at RelTol = AbsTol = 1e-13 on the angle
## ODE.  Times: median of @var{runs} (default 3) after a warm-up.
##
## From the repository root:
## @example
## octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("PKG_ADD"); addpath ("bench"); composition_pendulum (3)'
## @end example
## @end deftypefn
function composition_pendulum (runs = 3)
  T = 10;  th0 = 1.2;  w0 = 0.3;
  angle = @(t, a) [a(2); -sin(a(1))];
  cart = @(a) [sin(a(1)); -cos(a(1)); a(2)*cos(a(1)); a(2)*sin(a(1))];
  ref_sol = ode45 (angle, [0 T], [th0; w0], odeset ("RelTol", 1e-13, "AbsTol", 1e-13));
  ref = cart (ref_sol.y(:,end));
  y0 = cart ([th0; w0]);
  pend = @(t, x) [x(3:4); 0; -1];
  base = odepkgset ("ConstraintFcn", @(q) q'*q - 1, "ConstraintGradFcn", @(q) 2*q', ...
                    "ConstraintsNb", 1, "Explicit", "yes");
  printf ("Cartesian pendulum, t = %g, error of [q; p] against ode45 (1e-13) on the angle ODE; median of %d runs\n",
          T, runs);
  printf ("%-34s %8s %9s %10s %10s\n", "method", "steps", "f calls", "time [s]", "error");
  rows = {};
  cases = {2, [500 2000 8000]; 4, [100 200 400 800]; 6, [50 100 200 400]; 8, [25 50 100 200]};
  for c = 1:rows_of (cases)
    p = cases{c, 1};
    for N = cases{c, 2}
      o = odepkgset (base, "TimeStepSize", T/N, "TimeStepNumber", N, "Order", p);
      [tm, sol] = median_time (@() odeRATTLE (pend, 0, y0, o), runs);
      e = norm (sol.y(:,end) - ref, Inf);
      name = sprintf ("odeRATTLE order %d", p);
      if (p > 2)
        name = sprintf ("%s (%s)", name, table_name (p));
      endif
      printf ("%-34s %8d %9d %10.4f %10.2e\n", name, N, sol.stats.nfevals, tm, e);
      rows(end+1,:) = {name, tm, e};
    endfor
  endfor
  ## the general path (Newton; no Explicit) at one order
  for N = [50 100]
    o = odepkgset (base, "Explicit", "no", "TimeStepSize", T/N, "TimeStepNumber", N, "Order", 8);
    [tm, sol] = median_time (@() odeRATTLE (pend, 0, y0, o), runs);
    e = norm (sol.y(:,end) - ref, Inf);
    printf ("%-34s %8d %9d %10.4f %10.2e\n", "odeRATTLE order 8, general path", N, sol.stats.nfevals, tm, e);
  endfor
  for tol = [1e-6 1e-8 1e-10 1e-12]
    o = odeset ("RelTol", tol, "AbsTol", tol, "Refine", 1);  # outputs = steps
    [tm, sol] = median_time (@() ode45 (angle, [0 T], [th0; w0], o), runs);
    e = norm (cart (sol.y(:,end)) - ref, Inf);
    name = sprintf ("ode45 angle ODE, tol %.0e", tol);
    printf ("%-34s %8d %9s %10.4f %10.2e\n", name, numel (sol.x) - 1, "-", tm, e);
    rows(end+1,:) = {name, tm, e};
  endfor
  ## at error <= 1e-10: the fastest of each kind
  ok = cellfun (@(e) e <= 1e-10, rows(:,3));
  for kind = {"odeRATTLE", "ode45"}
    k = find (ok & strncmp (rows(:,1), kind{1}, numel (kind{1})));
    if (isempty (k))
      printf ("%s: no run with error <= 1e-10\n", kind{1});
    else
      [~, j] = min ([rows{k,2}]);
      printf ("fastest %s with error <= 1e-10: %s, %.4f s (error %.1e)\n", kind{1}, rows{k(j),1}, rows{k(j),2}, rows{k(j),3});
    endif
  endfor
endfunction

function n = rows_of (c)
  n = size (c, 1);
endfunction

function s = table_name (p)
  names = {4, "McLachlan4"; 6, "KahanLi6"; 8, "KahanLi8"};
  s = names{[names{:,1}] == p, 2};
endfunction
