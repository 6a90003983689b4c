## -*- texinfo -*-
## @deftypefn  {} {[@var{t}, @var{y}, @var{stats}] =} plain_rattlie (@var{G}, @var{M}, @var{f}, @var{phi}, @var{B}, @var{h}, @var{N}, @var{y0})
## @deftypefnx {} {[@dots{}] =} plain_rattlie (@dots{}, @var{opts})
## @deftypefnx {} {@var{G} =} plain_rattlie ("group", @var{name}, @var{n})
## Reference in plain Octave for RATTLie (RATTLE on Lie groups,
## S. Hante), fixed steps.  The baseline odeRATTLie is benchmarked against.
##
## Equations: q' = dL_q(e) v~,  M v' = ad(v)' M v - f(t, q, v) - B(q)' lambda,
## 0 = Phi(q).  One step n -> n+1 (unknowns Om, lambda, v1, mu):
##
##   (A)  T(-h Om)^-T M Om = M v_n - h/2 (f_n + B(q_n)' lambda),
##        q_1 = q_n o exp(h Om~),  Phi(q_1) = 0;
##   (B)  M v_1 = T(h Om)^-T M Om - h/2 (f(t_1, q_1, v_1) + B(q_1)' mu),
##        B(q_1) v_1 = 0.
##
## Unconstrained (@var{phi} = []): drop lambda, mu, Phi (Stoermer-Verlet on G).
##
## @var{G}: a group struct (fields name, nq, n, compose_exp (q, w) = q o exp(w~),
## Tinv_T (w) = T(w)^-T (n-by-n), ad (v) (n-by-n)) or a name understood by
## plain_rattlie ("group", name, n): "SO3" (q = R(:)), "S3" (unit
## quaternion, scalar first), "R3", "Rn" (n from @var{n}), "SE3" (q = [R(:);
## x], v = (Om, U) body), "S3sdR3" (q = [p; x], the same semidirect product
## with a quaternion), and direct products of these joined by "x"
## ("S3xR3", "SO3xR3", "SO3xSO3", ...).  SO(3)/S3 use closed forms
## (Rodrigues, T^-T = I - W/2 + c W^2); SE3 and S3sdR3 form T(w) by expm of
## a 12-by-12 block matrix (correct, but slower: not the case to time).
## @var{M}: n-by-n constant SPD; @var{f} (t, y) the n-vector f(t, q, v) for
## y = [q; v]; @var{phi} (q) m-vector and @var{B} (q) m-by-n, or [] both.
## @var{h}, @var{N}: step size and number of steps from t = 0; @var{y0} = [q0; v0].
## @var{opts} (struct, all optional):
## @table @asis
## @item tol  Newton stops once |du| <= tol (1 + |u|) (default 1e-13)
## @item maxit  Newton iterations per system (default 30)
## @item fv  true if f depends on v: (B) is then solved by Newton with a
##   forward-difference Jacobian of f in v; by default f is taken
##   independent of v (as Hante's RATTLie does) and (B) is one linear solve,
##   and f(t_1, q_1, v_1) is called once per step and re-used as the next
##   step's f_n.
## @end table
##
## Newton for (A) (our own, not fsolve, so that |Phi| reaches round-off):
## simplified Newton in u = [Om; h/2 lambda] from u = [2 v_n - previous Om;
## extrapolated lambda]; the iteration matrix is formed once per step, its Om
## columns by forward differences of the residual (step sqrt(eps) max(1,
## |Om_j|), n residual calls, each one call of Phi), its lambda columns
## exactly ([B(q_n)'; 0]); it is re-formed when an iterate does not
## contract by a factor 1/2.  The Phi rows are scaled by 1/h.
## B(q_1) of step n is re-used as B(q_n) of step n+1 (one call of B a step).
##
## Outputs: @var{t} (N+1)-by-1; @var{y} (N+1)-by-(nq+n), row k = [q', v'];
## @var{stats}: nfevals, nconstrevals (Phi), nconstrgradevals (B),
## nnewtoniter, njac, nsteps, lambda (m-by-N, lambda of (A) at step n) and
## mu (m-by-N, mu of (B)).
## @end deftypefn
function [t, y, stats] = plain_rattlie (G, M, f, phi, B, h, N, y0, opts = struct ())
  if (ischar (G) && strcmp (G, "group"))
    if (nargin < 3)
      f = [];
    endif
    t = make_group (M, f);
    return;
  endif
  y0 = y0(:);
  if (ischar (G))
    G = make_group (G, numel (y0) / 2);
  endif
  tol = getfield_def (opts, "tol", 1e-13);
  maxit = getfield_def (opts, "maxit", 30);
  fv = getfield_def (opts, "fv", false);
  nq = G.nq;  n = G.n;
  if (numel (y0) != nq + n)
    error ("plain_rattlie: y0 must have nq + n = %d entries", nq + n);
  endif
  cexp = G.compose_exp;  TiT = G.Tinv_T;
  constrained = ! isempty (phi);
  nf = 0;  nphi = 0;  nB = 0;  nit = 0;  njac = 0;
  q = y0(1:nq);  v = y0(nq+1:end);
  t = h * (0:N).';
  y = zeros (N + 1, nq + n);
  y(1,:) = y0.';
  fn = f (0, y0);  nf += 1;
  if (constrained)
    Bn = B (q);  nB += 1;
    m = rows (Bn);
    lam = zeros (m, 1);
    stats.lambda = zeros (m, N);  stats.mu = zeros (m, N);
  else
    m = 0;  Bn = zeros (0, n);  lam = zeros (0, 1);
  endif
  Om = v;  lamp = lam;
  for k = 1:N
    tn = t(k);
    Mv = M * v;
    ## predictor: Om_{n-1} ~ v(t_n - h/2), so 2 v_n - Om_{n-1} ~ v(t_n + h/2);
    ## lambda extrapolated linearly (first step: Om = v_0, lambda = 0)
    if (k > 1)
      Om = 2 * v - Om;
      if (constrained)
        [lam, lamp] = deal (2 * lam - lamp, lam);
      endif
    endif
    ## ---- (A): u = [Om; lam] ------------------------------------------------
    if (constrained)
      rhs = Mv - h / 2 * fn;
      u = [Om; h / 2 * lam];          # multiplier scaled: kappa = h/2 lambda
      Bt = Bn';
      r = resA (u, q, rhs, Bt, M, TiT, cexp, phi, h, n);  nphi += 1;
      Jac = [];  dun = Inf;
      for it = 1:maxit
        if (isempty (Jac))
          Jac = zeros (n + m);
          for j = 1:n
            del = sqrt (eps) * max (1, abs (u(j)));
            e = u;  e(j) += del;
            Jac(:,j) = (resA (e, q, rhs, Bt, M, TiT, cexp, phi, h, n) - r) / del;
          endfor
          nphi += n;
          Jac(1:n,n+1:end) = Bt;
          Jac(n+1:end,n+1:end) = 0;
          njac += 1;
          [L, U, Pm] = lu (Jac);
        endif
        du = -(U \ (L \ (Pm * r)));
        u += du;
        nit += 1;
        ndu = norm (du);
        if (ndu <= tol * (1 + norm (u)))
          break;
        endif
        if (ndu > 0.5 * dun && ndu <= 1e3 * tol * (1 + norm (u)))
          break;                      # stagnating at round-off
        endif
        if (ndu > 0.5 * dun)
          Jac = [];                   # no contraction: re-form at the new iterate
        endif
        dun = ndu;
        r = resA (u, q, rhs, Bt, M, TiT, cexp, phi, h, n);  nphi += 1;
        if (it == maxit)
          error ("plain_rattlie:newton", "plain_rattlie: Newton (A) did not converge at t = %g (|du| = %g)", tn, ndu);
        endif
      endfor
      Om = u(1:n);  lam = 2 / h * u(n+1:end);
      q1 = cexp (q, h * Om);
    else
      rhs = Mv - h / 2 * fn;
      u = Om;
      r = TiT (-h * u) * (M * u) - rhs;
      Jac = [];  dun = Inf;
      for it = 1:maxit
        if (isempty (Jac))
          Jac = zeros (n);
          for j = 1:n
            del = sqrt (eps) * max (1, abs (u(j)));
            e = u;  e(j) += del;
            Jac(:,j) = (TiT (-h * e) * (M * e) - rhs - r) / del;
          endfor
          njac += 1;
          [L, U, Pm] = lu (Jac);
        endif
        du = -(U \ (L \ (Pm * r)));
        u += du;
        nit += 1;
        ndu = norm (du);
        if (ndu <= tol * (1 + norm (u)))
          break;
        endif
        if (ndu > 0.5 * dun && ndu <= 1e3 * tol * (1 + norm (u)))
          break;                      # stagnating at round-off
        endif
        if (ndu > 0.5 * dun)
          Jac = [];
        endif
        dun = ndu;
        r = TiT (-h * u) * (M * u) - rhs;
        if (it == maxit)
          error ("plain_rattlie:newton", "plain_rattlie: Newton (A) did not converge at t = %g (|du| = %g)", tn, ndu);
        endif
      endfor
      Om = u;
      q1 = cexp (q, h * Om);
    endif
    ## ---- (B): v1, mu ----------------------------------------------------------
    p1 = TiT (h * Om) * (M * Om);
    t1 = t(k+1);
    if (constrained)
      B1 = B (q1);  nB += 1;
    endif
    if (! fv)
      f1 = f (t1, [q1; Om]);  nf += 1;    # f independent of v: any v will do
      if (constrained)
        w = [M, h / 2 * B1'; B1, zeros(m)] \ [p1 - h / 2 * f1; zeros(m, 1)];
        v = w(1:n);  mu = w(n+1:end);
      else
        v = M \ (p1 - h / 2 * f1);
      endif
    else
      ## Newton in w = [v; mu] with forward-difference d f / d v
      w = [Om; zeros(m, 1)];
      for it = 1:maxit
        f1 = f (t1, [q1; w(1:n)]);  nf += 1;
        r = [M * w(1:n) - p1 + h / 2 * f1; zeros(m, 1)];
        if (constrained)
          r(1:n) += h / 2 * B1' * w(n+1:end);
          r(n+1:end) = B1 * w(1:n);
        endif
        Fv = zeros (n);
        for j = 1:n
          del = sqrt (eps) * max (1, abs (w(j)));
          e = w(1:n);  e(j) += del;
          Fv(:,j) = (f (t1, [q1; e]) - f1) / del;
        endfor
        nf += n;  njac += 1;
        if (constrained)
          Jv = [M + h / 2 * Fv, h / 2 * B1'; B1, zeros(m)];
        else
          Jv = M + h / 2 * Fv;
        endif
        dw = -(Jv \ r);
        w += dw;  nit += 1;
        if (norm (dw) <= tol * (1 + norm (w)))
          break;
        endif
      endfor
      v = w(1:n);  mu = w(n+1:end);
      f1 = f (t1, [q1; v]);  nf += 1;
    endif
    if (constrained)
      stats.lambda(:,k) = lam;  stats.mu(:,k) = mu;
      Bn = B1;
    endif
    q = q1;  fn = f1;
    y(k+1,:) = [q; v].';
  endfor
  stats.nfevals = nf;  stats.nconstrevals = nphi;  stats.nconstrgradevals = nB;
  stats.nnewtoniter = nit;  stats.njac = njac;  stats.nsteps = N;
endfunction

## residual of (A) in u = [Om; kappa], kappa = h/2 lambda; Phi rows scaled by 1/h
function r = resA (u, q, rhs, Bt, M, TiT, cexp, phi, h, n)
  Om = u(1:n);
  r = [TiT(-h * Om) * (M * Om) - rhs + Bt * u(n+1:end);
       phi(cexp (q, h * Om)) / h];
endfunction

function v = getfield_def (s, name, def)
  if (isfield (s, name))
    v = s.(name);
  else
    v = def;
  endif
endfunction

## ---------------------------------------------------------------------------
## groups
## ---------------------------------------------------------------------------
function G = make_group (name, nrn)
  parts = strsplit (name, "x");
  G = factor_group (parts{end}, nrn * (numel (parts) == 1));
  for k = numel (parts)-1:-1:1
    G = product_group (factor_group (parts{k}, 0), G);
  endfor
  G.name = name;
endfunction

## direct product G1 x G2: coordinates and velocities concatenated
function G = product_group (G1, G2)
  a = G1.nq;  b = G1.n;  n = G1.n + G2.n;
  c1 = G1.compose_exp;  c2 = G2.compose_exp;
  Z12 = zeros (b, G2.n);  Z21 = Z12';
  G.nq = G1.nq + G2.nq;  G.n = n;
  G.compose_exp = @(q, w) [c1(q(1:a), w(1:b)); c2(q(a+1:end), w(b+1:end))];
  G.Tinv_T = blk (G1.Tinv_T, G2.Tinv_T, b, Z12, Z21);
  G.T = blk (G1.T, G2.T, b, Z12, Z21);
  G.ad = blk (G1.ad, G2.ad, b, Z12, Z21);
endfunction

function F = blk (F1, F2, b, Z12, Z21)
  F = @(w) [F1(w(1:b)), Z12; Z21, F2(w(b+1:end))];
endfunction

function G = factor_group (name, nrn)
  G.name = name;
  if (strcmp (name, "Rn"))
    if (isempty (nrn) || nrn == 0)
      error ("plain_rattlie: \"Rn\" needs its dimension (use R<k> in products)");
    endif
    name = sprintf ("R%d", nrn);
  endif
  if (any (strcmp (name, {"SO3", "S3", "SE3", "S3sdR3"})))
    switch (name)
      case "SO3"
        G.nq = 9;  G.n = 3;
        G.compose_exp = @(q, w) reshape (reshape (q, 3, 3) * so3_exp (w), 9, 1);
        G.Tinv_T = @so3_TinvT;  G.T = @so3_T;  G.ad = @skew;
      case "S3"
        G.nq = 4;  G.n = 3;
        G.compose_exp = @(q, w) qmul (q, quat_exp (w));
        G.Tinv_T = @so3_TinvT;  G.T = @so3_T;  G.ad = @skew;
      case "SE3"
        G.nq = 12;  G.n = 6;
        G.compose_exp = @se3_cexp;
        G.Tinv_T = @se3_TinvT;  G.T = @se3_T;  G.ad = @se3_ad;
      case "S3sdR3"
        G.nq = 7;  G.n = 6;
        G.compose_exp = @s3sdr3_cexp;
        G.Tinv_T = @se3_TinvT;  G.T = @se3_T;  G.ad = @se3_ad;
    endswitch
  elseif (! isempty (regexp (name, '^R\d+$', "once")))
    d = str2double (name(2:end));
    G.nq = d;  G.n = d;
    Id = eye (d);  Zd = zeros (d);
    G.compose_exp = @(q, w) q + w;
    G.Tinv_T = @(w) Id;  G.T = @(w) Id;  G.ad = @(w) Zd;
  else
    error ("plain_rattlie: unknown Lie group '%s'", name);
  endif
endfunction

function S = skew (w)
  S = [0, -w(3), w(2); w(3), 0, -w(1); -w(2), w(1), 0];
endfunction

## exp(skew(w)) (Rodrigues) with sin(x)/x and (1-cos x)/x^2 safe at 0
function E = so3_exp (w)
  W = skew (w);
  x2 = w' * w;
  if (x2 < 1e-4)
    s = 1 - x2 / 6 + x2^2 / 120;  a = 0.5 - x2 / 24 + x2^2 / 720;
  else
    x = sqrt (x2);  s = sin (x) / x;  a = 2 * (sin (x / 2) / x)^2;
  endif
  E = eye (3) + s * W + a * (W * W);
endfunction

## T(w) = I - (1-cos x)/x^2 W + (x - sin x)/x^3 W^2
function T = so3_T (w)
  W = skew (w);
  x2 = w' * w;
  if (x2 < 1e-4)
    a = 0.5 - x2 / 24 + x2^2 / 720;  b = 1/6 - x2 / 120 + x2^2 / 5040;
  else
    x = sqrt (x2);  a = 2 * (sin (x / 2) / x)^2;  b = (x - sin (x)) / x^3;
  endif
  T = eye (3) - a * W + b * (W * W);
endfunction

## T(w)^-T = I - W/2 + c W^2,  c = (1 - (x/2) cot(x/2)) / x^2
function A = so3_TinvT (w)
  W = skew (w);
  x2 = w' * w;
  if (x2 < 1e-4)
    c = 1/12 + x2 / 720 + x2^2 / 30240;
  else
    x = sqrt (x2);  c = (1 - (x / 2) * cot (x / 2)) / x2;
  endif
  A = eye (3) - W / 2 + c * (W * W);
endfunction

## Hamilton product, scalar first
function r = qmul (p, q)
  r = [p(1) * q(1) - p(2:4)' * q(2:4);
       p(1) * q(2:4) + q(1) * p(2:4) + [p(3)*q(4) - p(4)*q(3); p(4)*q(2) - p(2)*q(4); p(2)*q(3) - p(3)*q(2)]];
endfunction

function e = quat_exp (w)
  x2 = w' * w;
  if (x2 < 1e-4)
    s = 0.5 - x2 / 48 + x2^2 / 3840;   # sin(x/2)/x
    c = 1 - x2 / 8 + x2^2 / 384;
  else
    x = sqrt (x2);  s = sin (x / 2) / x;  c = cos (x / 2);
  endif
  e = [c; s * w];
endfunction

function R = quat2R (p)
  pv = p(2:4);
  R = (p(1)^2 - pv' * pv) * eye (3) + 2 * (pv * pv') + 2 * p(1) * skew (pv);
endfunction

function A = se3_ad (v)
  A = [skew(v(1:3)), zeros(3); skew(v(4:6)), skew(v(1:3))];
endfunction

## exp of se(3): (exp(Om^), V U),  V = T(-Om) = I + a W + b W^2
function q1 = se3_cexp (q, w)
  R = reshape (q(1:9), 3, 3);
  E = so3_exp (w(1:3));
  V = so3_T (-w(1:3));
  q1 = [reshape(R * E, 9, 1); q(10:12) + R * (V * w(4:6))];
endfunction

function q1 = s3sdr3_cexp (q, w)
  p = q(1:4);
  V = so3_T (-w(1:3));
  q1 = [qmul(p, quat_exp (w(1:3))); q(5:7) + quat2R (p) * (V * w(4:6))];
endfunction

## T(w) = sum_k (-ad w)^k / (k+1)! = top-right block of expm ([A I; 0 0]), A = -ad(w)
function T = se3_T (w)
  A = -se3_ad (w);
  E = expm ([A, eye(6); zeros(6, 12)]);
  T = E(1:6, 7:12);
endfunction

function A = se3_TinvT (w)
  A = inv (se3_T (w))';
endfunction
