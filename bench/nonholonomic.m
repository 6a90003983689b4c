## -*- texinfo -*-
## @deftypefn {} {} nonholonomic (@var{runs})
## Benchmark (not a test) of the nonholonomic RATTLE (odeRATTLE with
## "NonholonomicFcn"): error against time for orders 2, 4, 6 at fixed steps,
## next to ode45 on the index-reduced ODE (the multiplier eliminated:
## mu = (A M^-1 A')^-1 (A M^-1 F + A' v), A' = dA/dt), on
## @itemize
## @item the vertical rolling disk to t = 2 (error against its closed form);
## @item the Chaplygin sleigh to t = 100, and on a spring to t = 20 (error against odeRATTLE
## of order 8 at h = 0.005);
## @end itemize
## and of odeRATTLie with "NonholonomicFcn" on the rolling disk on S3sdR3
## (mass 15, radius 1, Omega0 = (0, 15, 5)) to t = 2, with 3 nonholonomic
## constraints and with 1 holonomic + 2 nonholonomic (error against
## odeRATTLie of order 6 at h = 2^-10).
##
## For each run: |A v| at the end, the calls per step of each callback
## (sol.stats; odeRATTLie's include the multipliers sol.lambda, sol.mu at
## every output), Newton iterations per step (odeRATTLie), and "time/cb":
## the run's time divided by the callbacks' own cost, the sum over the
## callbacks of (calls) x (the cost of one call from C++,
## __odepkg_callback_cost__, measured in the same session): 1 means the run
## costs its callbacks and nothing else.  Times: median of @var{runs}
## (default 3) after a warm-up.
##
## From the repository root:
## @example
## octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("src/PKG_ADD"); source ("PKG_ADD"); addpath ("bench"); nonholonomic (3)'
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

  ## --- the Chaplygin sleigh, q = (x, y, theta): free (t = 100), and on a
  ## spring (t = 20; chaotic beyond: at t = 100 no run agrees with the
  ## reference to better than 1e-2) ------------------------------------------
  a = 0.5;  Is = 0.3;
  Minv = [1; 1; 1 / Is];
  A = @(q) [-sin(q(3)), cos(q(3)), -a];
  Adot = @(q, v) [-cos(q(3))*v(3), -sin(q(3))*v(3), 0];
  th = 0.4;  w = 0.8;  u = 0.6;
  y0 = [0.3; -0.2; th; u*cos(th) - a*w*sin(th); u*sin(th) + a*w*cos(th); Is*w];
  for spring = [false true]
    T = merge (spring, 20, 100);
    f = @(t, y) [Minv .* y(4:6); -spring * y(1:2); 0];
    o = odepkgset ("NonholonomicFcn", A, "NonholonomicsNb", 1, "Order", 8, "TimeStepSize", 0.005);
    [~, yr] = odeRATTLE (f, [0 T], y0, o);
    bench_problem (sprintf ("Chaplygin sleigh%s, t = %d, error against odeRATTLE order 8, h = 0.005",
                            merge (spring, " on a spring", ""), T), f, A, Adot, Minv, 3, 1, y0, T, yr(end, :).', runs,
                   merge (spring, {2, [1000 2000 4000 8000 16000]; 4, [125 250 500 1000]; 6, [50 100 200 400]},
                                   {2, [2000 4000 8000 16000 32000]; 4, [500 1000 2000 4000]; 6, [125 250 500 1000]}));
  endfor

  ## --- the rolling disk on S3sdR3 (odeRATTLie) ------------------------------
  for which = {"nh3", "mixed"}
    bench_lie (which{1}, runs, {2, [64 128 256 512]; 4, [32 64 128 256]});
  endfor
endfunction

function c = callback_cost (fn, t, x, runs)
  c = median (arrayfun (@(k) __odepkg_callback_cost__ (fn, t, x, 2000), 1:max (runs, 3)));
endfunction

function bench_problem (title, f, A, Adot, Minv, d, k, y0, T, ref, runs, cases)
  cf = callback_cost (f, 0, y0, runs);
  cA = callback_cost (A, [], y0(1:d), runs);
  printf ("\n%s; median of %d runs (shared machine)\none call from C++: f %.2f us, A %.2f us\n", title, runs,
          1e6 * cf, 1e6 * cA);
  printf ("%-22s %7s %10s %10s %10s %8s %8s %8s\n", "method", "steps", "time [s]", "error", "|A v| end",
          "f/step", "A/step", "time/cb");
  base = odepkgset ("NonholonomicFcn", A, "NonholonomicsNb", k);
  for c = 1:rows (cases)
    p = cases{c, 1};
    for n = cases{c, 2}
      o = odepkgset (base, "TimeStepSize", T / n, "Order", p);
      [tm, sol] = median_time (@() odeRATTLE (f, [0 T], y0, o), runs);
      y = sol.y(:, end);
      av = norm (A (y(1:d)) * (Minv .* y(d+1:end)), Inf);
      st = sol.stats;
      printf ("%-22s %7d %10.4f %10.2e %10.1e %8.2f %8.2f %8.3f\n", sprintf ("odeRATTLE order %d", p), n, tm,
              norm (y - ref, Inf), av, st.nfevals / n, st.nnonholevals / n,
              tm / (st.nfevals * cf + st.nnonholevals * cA));
    endfor
  endfor
  ## ode45 on the index-reduced ODE: p' = F - A' mu with A M^-1 p' + A' v = 0
  reduced = @(t, y) reduced_rhs (t, y, f, A, Adot, Minv, d);
  for tol = [1e-6 1e-8 1e-10 1e-12]
    oo = odeset ("RelTol", tol, "AbsTol", tol);
    [tm, sol] = median_time (@() ode45 (reduced, [0 T], y0, oo), runs);
    y = sol.y(:, end);
    av = norm (A (y(1:d)) * (Minv .* y(d+1:end)), Inf);
    printf ("%-22s %7d %10.4f %10.2e %10.1e %8s %8s %8s\n", sprintf ("ode45, tol %g", tol), numel (sol.x) - 1, tm,
            norm (y - ref, Inf), av, "6 FSAL", "-", "-");
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

## The rolling disk on S3sdR3 (Hante's rolling_disk): q = [p; x], p a unit
## quaternion, x the centre; v = [Omega; x'], M = blkdiag(diag(m/4, m/4, m/2), m I).
## The contact point below the centre, R db(R) (db: the unit vector from the
## centre down the disk's plane), moves with x' + R (Omega x (-r db)) = 0:
## "nh3" these three rows as B_nh; "mixed" the vertical one as the holonomic
## Phi = z - r sqrt(1 - R33^2) (its derivative) and the two others as B_nh.
function bench_lie (which, runs, cases)
  m = 15;  r = 1;  g = 9.81;  T = 2;
  M = blkdiag (diag ([m/4, m/4, m/2]), m * eye (3));
  sk = @(w) [0, -w(3), w(2); w(3), 0, -w(1); -w(2), w(1), 0];
  rot = @(p) (p(1)^2 - p(2:4)'*p(2:4)) * eye (3) + 2 * p(2:4) * p(2:4)' + 2 * p(1) * sk (p(2:4));
  db = @(R) (-R(3,:)' + R(3,3) * [0; 0; 1]) / sqrt (1 - R(3,3)^2);
  Cw = @(R) R * [-r * sk(db(R)), eye(3)];
  fcn = @(t, y) [0; 0; 0; m * g * rot(y(1:4))(3,:)'];
  o = odepkgset ("LieGroup", "S3sdR3", "MassMatrix", M);
  if (strcmp (which, "nh3"))
    Bnh = @(q) [-r * sk(db(rot(q(1:4)))), eye(3)];
    o = odepkgset (o, "NonholonomicFcn", Bnh, "NonholonomicsNb", 3);
    phi = B = [];
    title = "rolling disk on S3sdR3 (odeRATTLie), 3 nonholonomic";
  else
    Bnh = @(q) Cw (rot (q(1:4)))(1:2,:);
    phi = @(q) q(7) - r * sqrt (1 - rot (q(1:4))(3,3)^2);
    B = @(q) Cw (rot (q(1:4)))(3,:);
    o = odepkgset (o, "ConstraintFcn", phi, "ConstraintGradFcn", B, "ConstraintsNb", 1,
                   "NonholonomicFcn", Bnh, "NonholonomicsNb", 2);
    title = "rolling disk on S3sdR3 (odeRATTLie), 1 holonomic + 2 nonholonomic";
  endif
  p0 = [0.5; 0.5; 0.5; 0.5];  Om = [0; 15; 5];
  y0 = [p0; 0; 0; r; Om; r * sk(-[0; 1; 0]) * Om];
  [~, yr] = odeRATTLie (fcn, [0 T], y0, odepkgset (o, "Order", 6, "TimeStepSize", 2^-10));
  ref = yr(end, :).';
  cf = callback_cost (fcn, 0, y0, runs);
  cB = callback_cost (Bnh, [], y0(1:7), runs);
  cg = cG = 0;
  if (! isempty (phi))
    cg = callback_cost (phi, [], y0(1:7), runs);
    cG = callback_cost (B, [], y0(1:7), runs);
  endif
  printf ("\n%s, t = 2, error against order 6, h = 2^-10; median of %d runs (shared machine)\n", title, runs);
  printf ("one call from C++: f %.2f us, B_nh %.2f us", 1e6 * cf, 1e6 * cB);
  if (! isempty (phi))
    printf (", Phi %.2f us, B %.2f us", 1e6 * cg, 1e6 * cG);
  endif
  printf ("\n%-22s %7s %10s %10s %10s %8s %8s %8s %8s %8s %8s\n", "method", "steps", "time [s]", "error",
          "|Bnh v|", "f/step", "Bnh/step", "Phi/step", "B/step", "Newton", "time/cb");
  for c = 1:rows (cases)
    p = cases{c, 1};
    for n = cases{c, 2}
      oo = odepkgset (o, "TimeStepSize", T / n, "Order", p);
      [tm, sol] = median_time (@() odeRATTLie (fcn, [0 T], y0, oo), runs);
      y = sol.y(:, end);
      st = sol.stats;
      cb = st.nfevals * cf + st.nnonholevals * cB + st.nconstrevals * cg + st.nconstrgradevals * cG;
      printf ("%-22s %7d %10.4f %10.2e %10.1e %8.2f %8.2f %8.2f %8.2f %8.2f %8.3f\n",
              sprintf ("odeRATTLie order %d", p), n, tm, norm (y - ref, Inf),
              norm (Bnh (y(1:7)) * y(8:13), Inf), st.nfevals / n, st.nnonholevals / n, st.nconstrevals / n,
              st.nconstrgradevals / n, st.nnewtoniter / n, tm / cb);
    endfor
  endfor
endfunction
