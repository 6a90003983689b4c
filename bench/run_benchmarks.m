## -*- texinfo -*-
## @deftypefn {} {} run_benchmarks (@var{runs})
## Time the compiled solvers against plain-Octave references of the same
## methods, side by side in one run, medians of @var{runs} (default 5) runs
## after a warm-up.  Run with `make bench` (or bench/run.sh).  Columns:
## us/step and user callbacks per step of the compiled run, Newton iterations
## per step, "floor" = time / sum (callbacks x measured cost of one callback
## from C++), the reference's us/step and the speedup (reference / compiled,
## per step).
## @end deftypefn
function run_benchmarks (runs = 5, only = "")
  if (! exist ("odeSV"))
    pkg ("load", "odepkg");
  endif
  rruns = max (1, ceil (runs / 2));      # the fsolve references are slow
  printf ("odepkg benchmarks: median of %d runs (references with fsolve: %d), Octave %s, %s\n",
          runs, rruns, OCTAVE_VERSION, datestr (now (), 31));
  if (strcmp (only, "geometric"))        # ONLY=geometric make bench: McLachlan et al.'s case alone
    bench_geometric_rattle (runs, rruns);
    return;
  endif
  if (strcmp (only, "rattle"))           # ONLY=rattle make bench: the pendulum's RATTLE alone
    bench_rattle (runs, rruns);
    return;
  endif
  if (strcmp (only, "chain"))             # ONLY=chain make bench: the sparse hanging chain (issue 26) alone
    sparse_chain (10 .^ (1:5), runs);
    return;
  endif
  if (strcmp (only, "rattlie"))          # ONLY=rattlie make bench: Hante's heavy top alone
    bench_rattlie (runs, rruns);
    return;
  endif

  ## --- Kepler, e = 0.6, h = 0.01, t in [0, 100] -----------------------------
  kepler = @(t, x) [x(3:4); -x(1:2) / norm(x(1:2))^3];
  hess = @(t, x) [(eye(2) - 3 * x(1:2) * x(1:2)' / (x(1:2)' * x(1:2))) / norm(x(1:2))^3, zeros(2);
                  zeros(2), eye(2)];
  e = 0.6;  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
  h = 0.01;  N = 10000;  Nref = 500;
  cost.f = callback_cost (kepler, 0, y0, runs);
  cost.H = callback_cost (hess, 0, y0, runs);
  t_oct = median_time (@() call_loop (kepler, y0, 20000), runs) / 20000;
  printf ("\nKepler, e = 0.6, h = 0.01, t in [0, 100] (%d steps; fsolve references: %d steps)\n", N, Nref);
  printf ("one callback of f: %.2f us from C++, %.2f us from an Octave loop; of the Hessian: %.2f us\n",
          1e6 * cost.f, 1e6 * t_oct, 1e6 * cost.H);
  header ();
  ## Options are built before timing: the timed region is the solver call.
  fixed = @(varargin) odepkgset ("TimeStepSize", h, "TimeStepNumber", N, varargin{:});
  o_exp = fixed ("Explicit", "yes");  o_imp = fixed ("Explicit", "no");
  o_hess = fixed ("Explicit", "no", "HamiltonianHessFcn", hess);  o_vv = fixed ();
  [tc, s] = median_time (@() odeSV (kepler, 0, y0, o_exp), runs);
  [tr, yr] = median_time (@() plain_sv (kepler, h, N, y0), runs);
  agree (s, yr, "odeSV explicit");
  row ("odeSV explicit | plain loop", tc, s, cost, tr / N);
  [tr, yr] = median_time (@() fsolve_sv (kepler, h, Nref, y0), rruns);
  [tc, s] = median_time (@() odeSV (kepler, 0, y0, o_imp), runs);
  agree (s, yr, "odeSV implicit");
  row ("odeSV implicit, FD Jacobian | fsolve", tc, s, cost, tr / Nref);
  [tc, s] = median_time (@() odeSV (kepler, 0, y0, o_hess), runs);
  row ("odeSV implicit, HamiltonianHessFcn | fsolve", tc, s, cost, tr / Nref);
  [tc, s] = median_time (@() odeVV (kepler, 0, y0, o_vv), runs);
  [tr, yr] = median_time (@() plain_vv (kepler, h, N, y0), runs);
  agree (s, yr, "odeVV");
  row ("odeVV | plain loop", tc, s, cost, tr / N);
  [tc, s] = median_time (@() odeSE (kepler, 0, y0, o_exp), runs);
  [tr, yr] = median_time (@() plain_se (kepler, h, N, y0), runs);
  agree (s, yr, "odeSE explicit");
  row ("odeSE explicit | plain loop", tc, s, cost, tr / N);
  o45 = odeset ("RelTol", 1e-6, "AbsTol", 1e-6, "Refine", 1);
  [t45, out] = median_time (@() nthargout (1:2, @ode45, kepler, [0 100], y0, o45), runs);
  n45 = numel (out{1}) - 1;
  calls45 = count_calls (kepler, o45, y0);
  [~, ysv] = odeSV (kepler, 0, y0, fixed ("Explicit", "yes"));
  [~, yfine] = ode45 (kepler, [0 100], y0, odeset ("RelTol", 1e-12, "AbsTol", 1e-12));
  printf ("%-44s %8.2f %8.2f %8s %8.2f   (%d steps in %.3f s; error at t = 100: ode45 %.1e, odeSV %.1e)\n",
          "ode45, RelTol = AbsTol = 1e-6", 1e6 * t45 / n45, calls45 / n45, "-",
          t45 / (calls45 * cost.f), n45, t45, norm (out{2}(end,:) - yfine(end,:)),
          norm (ysv(end,:) - yfine(end,:)));

  bench_rattle (runs, rruns);

  ## --- SPVI, Q_DoFs = P_DoFs = 3, h = 0.1 ------------------------------------
  N = 1000;  Nref = 50;
  printf ("\nSPVI, Q_DoFs = P_DoFs = 3 (order 4), h = 0.1 (%d steps; fsolve reference: %d steps)\n", N, Nref);
  header ();
  o = odepkgset ("Q_DoFs", 3, "P_DoFs", 3, "TimeStepSize", 0.1, "TimeStepNumber", N);
  probs = {"harmonic oscillator", @(t, x) [x(2); -x(1)], [1; 0];
           "Kepler, e = 0.6", kepler, y0};
  for i = 1:rows (probs)
    [fn, z0] = probs{i, 2:3};
    cost = struct ("f", callback_cost (fn, 0, z0, runs));
    [tr, yr] = median_time (@() fsolve_spvi (fn, 0.1, Nref, z0, 3, 3), rruns);
    [tc, s] = median_time (@() odeSPVI (fn, 0, z0, o), runs);
    agree (s, yr, ["odeSPVI " probs{i, 1}]);
    row (["odeSPVI, " probs{i, 1} " | fsolve"], tc, s, cost, tr / Nref);
  endfor
  ## --- geometric RATTLE, g(q, p) = |q|^2 + |p|^2 - 1 (McLachlan et al. 2014, Sect. 5.4.2) --
  try
    bench_geometric_rattle (runs, rruns);
  catch err
    printf ("\ngeometric RATTLE: not available (%s)\n", err.message);
  end_try_catch
  printf ("\nfloor = compiled time / sum (callbacks x cost of one callback from C++): 1 means\n");
  printf ("the run costs exactly its callbacks; speedup = reference us/step / compiled us/step.\n");
endfunction

## Calls of f made by ode45 (an untimed run through a counting wrapper).
function n = count_calls (f, o, y0)
  global __bench_calls
  __bench_calls = 0;
  [~, ~] = ode45 (@(t, x) counted (f, t, x), [0 100], y0, o);
  n = __bench_calls;
  clear -global __bench_calls
endfunction

function v = counted (f, t, x)
  global __bench_calls
  __bench_calls += 1;
  v = f (t, x);
endfunction

function k = call_loop (f, y, M)
  for k = 1:M
    f (0, y);
  endfor
endfunction

function header ()
  printf ("%-44s %8s %8s %8s %8s %10s %8s\n", "case | reference", "us/step", "calls", "Newton",
          "floor", "ref us", "speedup");
endfunction

## RATTLE, pendulum in Cartesian coordinates, h = 0.01, 2000 steps: the
## separable fast path and the general path (geometric RATTLE over
## Störmer–Verlet on the holonomic fibres) against the 2013 rattle's system solved
## by fsolve.
function bench_rattle (runs, rruns)
  h = 0.01;
  f = @(t, x) [x(3:4); 0; -1];                     # H = |p|^2/2 + q_2
  g = @(q) q' * q - 1;  G = @(q) 2 * q';  GH = @(q) 2 * eye (2);
  Hh = @(t, x) [zeros(2), zeros(2); zeros(2), eye(2)];
  x0 = [1; 0; 0; 0];  N = 2000;  Nref = 100;
  cost = struct ("f", callback_cost (f, 0, x0, runs),
                 "g", callback_cost (g, [], x0(1:2), runs),
                 "G", callback_cost (G, [], x0(1:2), runs),
                 "GH", callback_cost (GH, [], x0(1:2), runs),
                 "H", callback_cost (Hh, 0, x0, runs));
  printf ("\nPendulum, g(q) = |q|^2 - 1, h = 0.01 (%d steps; fsolve reference: %d steps)\n", N, Nref);
  printf ("one callback from C++: f %.2f us, g %.2f us, G %.2f us, Hessians %.2f / %.2f us\n",
          1e6 * [cost.f, cost.g, cost.G, cost.H, cost.GH]);
  header ();
  base = odepkgset ("ConstraintFcn", g, "ConstraintGradFcn", G, "ConstraintsNb", 1,
                    "TimeStepSize", h, "TimeStepNumber", N);
  [tr, yr] = median_time (@() fsolve_rattle_seed (f, g, G, h, Nref, x0), rruns);
  o_sep = odepkgset (base, "Explicit", "yes");
  o_gen = odepkgset (base, "HamiltonianHessFcn", Hh, "ConstraintHessFcn", GH);
  [tc, s] = median_time (@() odeRATTLE (f, 0, x0, o_sep), runs);
  agree (s, yr, "odeRATTLE separable");
  row ("odeRATTLE separable | fsolve", tc, s, cost, tr / Nref);
  [tc, s] = median_time (@() odeRATTLE (f, 0, x0, o_gen), runs);
  agree (s, yr, "odeRATTLE general");
  row ("odeRATTLE general, Hessians given | fsolve", tc, s, cost, tr / Nref);
  [tc, s] = median_time (@() odeRATTLE (f, 0, x0, base), runs);
  row ("odeRATTLE general, FD Jacobian | fsolve", tc, s, cost, tr / Nref);
endfunction

## Seconds per callback of fn from C++: median over `runs` batches of M.
function c = callback_cost (fn, t, x, runs)
  c = median (arrayfun (@(k) __odepkg_callback_cost__ (fn, t, x, 5000), 1:max (runs, 3)));
endfunction

## Compare the first rows the reference computed with the compiled run's.
function agree (sol, yr, what)
  n = rows (yr);
  d = max (max (abs (sol.y(:,1:n).' - yr)));
  if (d > 1e-6)
    warning ("bench: %s and its reference differ by %g", what, d);
  endif
endfunction

function row (name, tc, sol, cost, tref_step)
  st = sol.stats;
  n = st.nsteps;
  calls = st.nfevals + st.nhessevals + st.nconstrevals + st.nconstrgradevals + st.nconstrhessevals;
  floor_t = st.nfevals * cost.f;
  if (isfield (cost, "H")) floor_t += st.nhessevals * cost.H; endif
  if (isfield (cost, "g")) floor_t += st.nconstrevals * cost.g + st.nconstrgradevals * cost.G; endif
  if (isfield (cost, "GH")) floor_t += st.nconstrhessevals * cost.GH; endif
  if (isfield (st, "nflowevals"))        # ConstraintFlowFcn calls (geometric RATTLE)
    calls += st.nflowevals;
    if (isfield (cost, "flow")) floor_t += st.nflowevals * cost.flow; endif
  endif
  printf ("%-44s %8.2f %8.2f %8.2f %8.2f %10.1f %8.1f\n", name, 1e6 * tc / n, calls / n,
          st.nnewtoniter / n, tc / floor_t, 1e6 * tref_step, tref_step / (tc / n));
endfunction

## McLachlan et al. 2014, Sect. 5.4.2: H = |p|^2/2 - gvec.q, gvec = (0, -1), on the sphere
## g(q, p) = |q|^2 + |p|^2 - 1 (fibres: the Hopf circles), midpoint rule as
## base method, h = 0.1, 2500 steps from Table 1's za.  za has |z|^2 = 0.98:
## solver and reference both project it (z/|z|, then along its fibre onto
## {g, H} = 0; warnings silenced here).  Reference: plain_geometric_rattle
## with the closed-form fibre flow, timed on Nref steps, and run once over
## all N steps to compare trajectories.  Errors (options not supported yet)
## are caught by the caller.
function bench_geometric_rattle (runs, rruns)
  warning ("off", "odepkg:inconsistentInitialData", "local");
  warning ("off", "plain_geometric_rattle:projected", "local");
  f = @(t, y) [y(3:4); 0; -1];                     # H = |p|^2/2 + q_2
  g = @(y) y' * y - 1;  G = @(y) 2 * y';  GH = @(y) 2 * eye (4);
  flow = @(y, s) [cos(2*s) * y(1:2) + sin(2*s) * y(3:4); -sin(2*s) * y(1:2) + cos(2*s) * y(3:4)];
  ## the same body with (t, x) = (s, y), so that __odepkg_callback_cost__ can time it
  flow_ts = @(s, y) [cos(2*s) * y(1:2) + sin(2*s) * y(3:4); -sin(2*s) * y(1:2) + cos(2*s) * y(3:4)];
  za = [-0.7865261200000000; -0.4043988000000000; -0.3880746864163783; 0.2173391755798215];
  h = 0.1;  N = 2500;  Nref = 250;
  cost = struct ("f", callback_cost (f, 0, za, runs),
                 "g", callback_cost (g, [], za, runs),
                 "G", callback_cost (G, [], za, runs),
                 "GH", callback_cost (GH, [], za, runs),
                 "flow", callback_cost (flow_ts, 0.01, za, runs));
  base = odepkgset ("ConstraintVariables", "qp", "ConstraintFcn", g, "ConstraintGradFcn", G,
                    "ConstraintHessFcn", GH,
                    "ConstraintsNb", 1, "BaseMethod", "midpoint",
                    "TimeStepSize", h, "TimeStepNumber", N);
  o_flow = odepkgset (base, "ConstraintFlowFcn", flow);
  ## fail before any timing if the compiled side does not take the options
  probe = odeRATTLE (f, 0, za, odepkgset (o_flow, "TimeStepNumber", 2));  # (no nargout = 0: odeplot)
  printf ("\nGeometric RATTLE (McLachlan et al. 2014, Sect. 5.4.2): g = |q|^2+|p|^2-1, H = |p|^2/2 + q_2, midpoint, h = %g\n", h);
  printf ("(%d steps from Table 1's za; reference: plain_geometric_rattle, %d steps)\n", N, Nref);
  printf ("one callback from C++: f %.2f us, g %.2f us, grad g %.2f us, flow %.2f us\n",
          1e6 * [cost.f, cost.g, cost.G, cost.flow]);
  header ();
  [tr, ~] = median_time (@() plain_geometric_rattle (f, g, G, flow, h, Nref, za), rruns);
  [tf, ~] = median_time (@() fsolve_geometric_rattle (f, g, G, flow, h, Nref, za), rruns);
  [~, yr, sr] = plain_geometric_rattle (f, g, G, flow, h, N, za);
  [~, yf] = fsolve_geometric_rattle (f, g, G, flow, h, Nref, za);
  [tc, s] = median_time (@() odeRATTLE (f, 0, za, o_flow), runs);
  row ("odeRATTLE qp, flow given | plain Newton", tc, s, cost, tr / Nref);
  row ("odeRATTLE qp, flow given | fsolve", tc, s, cost, tf / Nref);
  geo_agree (s, yr, "odeRATTLE qp, flow given", f, G);
  geo_agree (s, yf, "  the same against the fsolve reference", f, G);
  [tc, s] = median_time (@() odeRATTLE (f, 0, za, base), runs);
  row ("odeRATTLE qp, fibre integrated | plain", tc, s, cost, tr / Nref);
  row ("odeRATTLE qp, fibre integrated | fsolve", tc, s, cost, tf / Nref);
  geo_agree (s, yr, "odeRATTLE qp, fibre integrated", f, G);
  [tr, ~] = median_time (@() plain_geometric_rattle (f, g, G, flow, h, Nref, za, true), rruns);
  [tf, ~] = median_time (@() fsolve_geometric_rattle (f, g, G, flow, h, Nref, za, true), rruns);
  [~, ys] = plain_geometric_rattle (f, g, G, flow, h, N, za, true);
  [tc, s] = median_time (@() odeSHAKE (f, 0, za, o_flow), runs);
  row ("odeSHAKE qp, flow given | plain Newton", tc, s, cost, tr / Nref);
  row ("odeSHAKE qp, flow given | fsolve", tc, s, cost, tf / Nref);
  geo_agree (s, ys, "odeSHAKE qp, flow given", f, G);
  printf ("reference per step: %.2f calls (f %.2f, g %.2f, grad g %.2f, flow %.2f), %.2f Newton iterations\n",
          (sr.nfevals + sr.nconstrevals + sr.nconstrgradevals + sr.nflowevals) / N, sr.nfevals / N,
          sr.nconstrevals / N, sr.nconstrgradevals / N, sr.nflowevals / N, sr.nnewtoniter / N);
endfunction

## Whole-trajectory comparison with the reference, and the residuals
## |g| and |{g, H}| of the compiled points (printed, not only warned).
function geo_agree (sol, yr, what, f, G)
  Y = sol.y;
  n = min (columns (Y), rows (yr));
  d = max (max (abs (Y(:,1:n).' - yr(1:n,:))));
  d0 = max (abs (Y(:,1) - yr(1,:).'));
  gres = max (abs (sum (Y.^2, 1) - 1));
  hres = max (arrayfun (@(k) abs (G (Y(:,k)) * f (0, Y(:,k))), 1:columns (Y)));
  printf ("  %s: %d points, max |compiled - reference| %.2e (at t0 %.2e); max |g| %.1e, max |{g,H}| %.1e\n",
          what, n, d, d0, gres, hres);
  if (d > 1e-6)
    warning ("bench: %s and its reference differ by %g", what, d);
  endif
endfunction

## Hante's heavy top on S3 x R3 (Phi = R'x - X, B analytic), h = 2^-10,
## 1e4 steps, slow and fast top: odeRATTLie against plain_rattlie (the same
## scheme in plain Octave, timed on Nref steps, compared over them); then the
## long run of the slow top, t in [0, LONG] (environment, default 1000),
## against ode45 on the embedded rotation-matrix ODE with the loosest RelTol
## (of 1e-4 ... 1e-11) whose maximum energy error is at most RATTLie's.
function bench_rattlie (runs, rruns)
  h = 2^-10;  N = 1e4;  Nref = 500;
  printf ("\nRATTLie (Hante): heavy top on S3xR3, Phi = R'x - X, h = 2^-10, %d steps (reference: plain_rattlie, %d steps)\n",
          N, Nref);
  for which = {"slow", "fast"}
    P = cheap_callbacks (heavy_top ("S3xR3", which{1}));
    cost = struct ("f", callback_cost (P.f, 0, P.y0, runs),
                   "g", callback_cost (@(t, q) P.phi (q), 0, P.y0(1:P.nq), runs),
                   "G", callback_cost (@(t, q) P.B (q), 0, P.y0(1:P.nq), runs));
    o = odepkgset ("LieGroup", P.group, "MassMatrix", P.M, "ConstraintFcn", P.phi,
                   "ConstraintGradFcn", P.B, "ConstraintsNb", P.m, "TimeStepSize", h, "TimeStepNumber", N);
    printf ("%s top: one callback from C++: f %.2f us, Phi %.2f us, B %.2f us\n", which{1},
            1e6 * [cost.f, cost.g, cost.G]);
    header ();
    [tr, ~] = median_time (@() plain_rattlie (P.group, P.M, P.f, P.phi, P.B, h, Nref, P.y0), rruns);
    [~, yr, sr] = plain_rattlie (P.group, P.M, P.f, P.phi, P.B, h, Nref, P.y0);
    ## [t, y] = odeRATTLie (...) is the scheme alone, as plain_rattlie;
    ## sol = odeRATTLie (...) adds sol.lambda, consistent at every output
    ## time: Z = d/de [B(q o exp(e v)) v] by central differences, 2 more
    ## calls of B per output point (f and B(q) come from the step).
    [tc, s] = median_time (@() odeRATTLie (P.f, 0, P.y0, o), runs);
    [ty, ~] = median_time (@() rattlie_states (P, o), runs);
    sy = s;
    sy.stats.nconstrgradevals -= 2 * numel (s.x);
    row (sprintf ("odeRATTLie %s top [t,y] | plain_rattlie", which{1}), ty, sy, cost, tr / Nref);
    row (sprintf ("odeRATTLie %s top sol (+lambda) | plain", which{1}), tc, s, cost, tr / Nref);
    d = max (max (abs (s.y(:, 1:Nref+1).' - yr)));
    printf ("  max |compiled - reference| over %d steps: %.2e; reference per step: %.2f calls, %.2f Newton iterations\n",
            Nref, d, (sr.nfevals + sr.nconstrevals + sr.nconstrgradevals) / Nref, sr.nnewtoniter / Nref);
    if (d > 1e-8)
      warning ("bench: odeRATTLie and plain_rattlie differ by %g", d);
    endif
  endfor

  ## long run: slow top, energy error of RATTLie against ode45's
  T = str2double (getenv ("LONG"));
  if (isnan (T))
    T = 1000;
  endif
  P = cheap_callbacks (heavy_top ("S3xR3", "slow"));
  ## E = Om' Jc Om / 2 + m |x'|^2 / 2 - m g.x on the rows [p, x, Om, x'] (vectorized)
  E = @(Y) 0.5 * sum ((Y(:, 8:10) * P.Jc) .* Y(:, 8:10), 2) + 0.5 * P.mass * sum (Y(:, 11:13) .^ 2, 2) ...
           - P.mass * Y(:, 5:7) * P.gvec;
  ## The slow top is smooth: h = 2^-7 (the energy error stays bounded, so
  ## the step needs no shrinking for long spans; ode45's drifts).
  hl = 2^-7;
  o = odepkgset ("LieGroup", P.group, "MassMatrix", P.M, "ConstraintFcn", P.phi,
                 "ConstraintGradFcn", P.B, "ConstraintsNb", P.m, "TimeStepSize", hl);
  tic;  [~, y] = odeRATTLie (P.f, [0 T], P.y0, o);  t_rl = toc;
  e_rl = max (abs (E (y) - E (y(1,:))));
  printf ("\nlong run, slow top, t in [0, %g]: odeRATTLie h = 2^-7: %.1f s, %d steps, max |E - E0| = %.2e\n",
          T, t_rl, rows (y) - 1, e_rl);
  X = P.X;  m = P.mass;  g = P.gvec;  Js = P.Js;
  sk = @(w) [0 -w(3) w(2); w(3) 0 -w(1); -w(2) w(1) 0];
  rhs = @(t, z) [reshape(reshape (z(1:9), 3, 3) * sk (z(10:12)), 9, 1);
                 Js \ (cross (Js * z(10:12), z(10:12)) + m * cross (X, reshape (z(1:9), 3, 3)' * g))];
  Eo = @(z) 0.5 * sum ((z(:, 10:12) * Js) .* z(:, 10:12), 2) - m * (z(:, [3 6 9]) * X) * g(3);
  z0 = [reshape(eye (3), 9, 1); P.Omega0];
  for tol = 10 .^ -(4:11)
    tic;  [~, z] = ode45 (rhs, [0 T], z0, odeset ("RelTol", tol, "AbsTol", tol));  t_45 = toc;
    e_45 = max (abs (Eo (z) - Eo (z0.')));
    printf ("  ode45 RelTol = AbsTol = %.0e: %.1f s, %d steps, max |E - E0| = %.2e\n", tol, t_45,
            rows (z) - 1, e_45);
    if (e_45 <= e_rl)
      printf ("  -> at equal energy error odeRATTLie is %.1fx faster than ode45\n", t_45 / t_rl);
      break;
    endif
  endfor
endfunction

function y = rattlie_states (P, o)
  [~, y] = odeRATTLie (P.f, 0, P.y0, o);
endfunction

## The heavy top's Phi = R(p)'x - X and B = [skew(R'x), R'] on S3xR3 in
## vector form, R'x = (a^2 - v.v) x + 2 (v.x) v - 2 a v x x for p = (a, v)
## (heavy_top.m builds R from helper functions: 30-70 us per call in
## Octave; this form costs about 33 us for Phi).
function P = cheap_callbacks (P)
  assert (strcmp (P.group, "S3xR3") && isequal (P.X, [0; 1; 0]));
  P.phi = @(q) rtx (q) - [0; 1; 0];
  P.B = @(q) skew_and (q);
endfunction

function w = rtx (q)
  v = q(2:4);  x = q(5:7);
  w = (q(1)^2 - v'*v) * x + 2 * (v'*x) * v - 2 * q(1) * [v(2)*x(3)-v(3)*x(2); v(3)*x(1)-v(1)*x(3); v(1)*x(2)-v(2)*x(1)];
endfunction

function B = skew_and (q)
  a = q(1);  b = q(2);  c = q(3);  d = q(4);
  Rt = [a^2+b^2-c^2-d^2, 2*(b*c+a*d), 2*(b*d-a*c);
        2*(b*c-a*d), a^2-b^2+c^2-d^2, 2*(c*d+a*b);
        2*(b*d+a*c), 2*(c*d-a*b), a^2-b^2-c^2+d^2];
  w = Rt * q(5:7);
  B = [0, -w(3), w(2), Rt(1,:); w(3), 0, -w(1), Rt(2,:); -w(2), w(1), 0, Rt(3,:)];
endfunction
