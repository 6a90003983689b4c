## -*- texinfo -*-
## @deftypefn {} {} newton_edges ()
## Benchmark (not a test) of the constrained Newton's cost per step on
## ordinary runs, to show that the checks and retries of the Newton at the
## edges cost nothing where nothing is at an edge: Newton iterations, calls
## of f, g and G per step, retried steps and rejected roots, for odeRATTLE
## on the double pendulum (Cartesian, two rods, t = 10) at orders 2, 4 and 8
## (explicit path) and order 2 on the general path, and on a planar chain of
## 10 links hanging from a pivot (explicit, dense G, t = 10); odeRATTLie on
## the heavy top as a constrained body (SE(3), S3 x R3; t = 1).  Counts are
## deterministic: run it against two builds to compare.
##
## From the repository root, with the package installed (make install):
## @example
## HOME=$PWD/build/home octave-cli --norc --eval 'pkg load odepkg; addpath ("bench"); newton_edges ()'
## @end example
## @end deftypefn
function newton_edges ()
  f = @(t, x) [x(5:8); 0; -1; 0; -1];
  g = @(q) [q(1:2)'*q(1:2) - 1; (q(3:4) - q(1:2))'*(q(3:4) - q(1:2)) - 1];
  G = @(q) [2*q(1:2)', 0, 0; -2*(q(3:4) - q(1:2))', 2*(q(3:4) - q(1:2))'];
  a = [0.5; 1.0];
  q1 = [sin(a(1)); -cos(a(1))]; q2 = q1 + [sin(a(2)); -cos(a(2))];
  y0 = [q1; q2; zeros(4, 1)];
  base = odepkgset ("ConstraintFcn", g, "ConstraintGradFcn", G, "ConstraintsNb", 2);
  printf ("%-34s %6s %8s %8s %8s %8s %8s %8s\n", "run", "steps", "newton/s", "f/step", "g/step", "G/step",
          "retried", "rejected");
  for c = {{"double pendulum, order 2", "yes", 2, 2000}, {"double pendulum, order 4", "yes", 4, 400}, ...
           {"double pendulum, order 8", "yes", 8, 100}, {"double pendulum, order 2, general", "no", 2, 2000}}
    [name, ex, p, N] = c{1}{:};
    o = odepkgset (base, "Explicit", ex, "TimeStepSize", 10 / N, "TimeStepNumber", N, "Order", p);
    row (name, odeRATTLE (f, 0, y0, o));
  endfor
  ## a chain of n unit links, unit masses at the joints, from the pivot at 0
  n = 10; d = 2 * n;
  fc = @(t, x) [x(d+1:end); repmat([0; -1], n, 1)];
  gc = @(q) chain_g (q, n);
  Gc = @(q) chain_G (q, n);
  ang = linspace (0.3, 1.2, n);
  qc = cumsum ([sin(ang); -cos(ang)], 2)(:);
  o = odepkgset ("ConstraintFcn", gc, "ConstraintGradFcn", Gc, "ConstraintsNb", n, "Explicit", "yes", ...
                 "TimeStepSize", 0.01, "TimeStepNumber", 1000);
  row (sprintf ("chain of %d links, order 2", n), odeRATTLE (fc, 0, [qc; zeros(d, 1)], o));
  ## odeRATTLie: the heavy top as a constrained body on SE(3) and S3 x R3
  ## (3 constraints; Hante's data, bench/heavy_top.m), t = 1
  for c = {{"SE3", "slow", 2, 1000}, {"SE3", "fast", 2, 4000}, {"SE3", "fast", 8, 200}, {"S3xR3", "slow", 4, 200}}
    [form, which, p, N] = c{1}{:};
    P = heavy_top (form, which);
    o = odepkgset ("LieGroup", P.group, "MassMatrix", P.M, "ConstraintFcn", P.phi, "ConstraintGradFcn", P.B, ...
                   "ConstraintsNb", P.m, "TimeStepSize", 1 / N, "TimeStepNumber", N, "Order", p);
    row (sprintf ("heavy top %s %s, order %d (Lie)", form, which, p), odeRATTLie (P.f, 0, P.y0, o));
  endfor
endfunction

function row (name, sol)
  s = sol.stats; N = s.nsteps;
  retried = NaN; rejected = NaN;
  if (isfield (s, "nnewtonretries"))
    retried = s.nnewtonretries; rejected = s.ndistantroots;
  endif
  printf ("%-34s %6d %8.2f %8.2f %8.2f %8.2f %8g %8g\n", name, N, s.nnewtoniter / N, s.nfevals / N,
          s.nconstrevals / N, s.nconstrgradevals / N, retried, rejected);
endfunction

function v = chain_g (q, n)
  Q = reshape (q, 2, n); D = diff ([zeros(2, 1), Q], 1, 2);
  v = (sum (D.^2, 1) - 1).';
endfunction

function M = chain_G (q, n)
  Q = reshape (q, 2, n); D = diff ([zeros(2, 1), Q], 1, 2);
  M = zeros (n, 2 * n);
  for k = 1:n
    M(k, 2*k-1:2*k) = 2 * D(:, k).';
    if (k > 1)
      M(k, 2*k-3:2*k-2) = -2 * D(:, k).';
    endif
  endfor
endfunction
