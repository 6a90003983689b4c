## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{mon}, @var{calls}] =} odepkg_monitor (@var{solver}, @var{o}, @var{fcn}, @var{extra}, @var{t}, @var{y}, @var{mode}, @var{nv}, @var{first})
## Invariant monitoring at the output times (@var{t} column, @var{y} rows),
## on only when @qcode{"HamiltonianFcn"} or @qcode{"InvariantFcn"} is given:
## nothing here runs, and no function is called, otherwise.
##
## @code{mon.invariants}: @code{names} (@qcode{"H"}, @qcode{"I1"}, ...),
## @code{values} (one row per invariant, one column per output time) and
## @code{deviation}, the largest |I(t) - I(t0)| of each.  With constraints
## (@var{mode} @qcode{"q"}, @qcode{"qp"} or @qcode{"lie"}),
## @code{mon.residuals.constraint} = |g|_inf and @code{mon.residuals.hidden} =
## |Dg f|_inf per output time (|G H_p| for g(q), |@{g, H@}| for g(q, p),
## |B v| on a Lie group when ConstraintGradFcn is given), and for
## @qcode{"q"}/@qcode{"qp"} the multipliers @code{mon.lambda} (m-by-N) of
## y' = f + J Dg' lambda, from the index-1 condition d/dt (Dg f) = 0:
## (Dh J Dg') lambda = -Dh f with h = Dg f, Dh by central differences
## (Hairer, Lubich, Wanner, GNI, Sect. VII.1.1).  For g(q) with a sparse
## ConstraintGradFcn the residuals come from sparse products and no
## multipliers are computed (their differences would take 2m calls of f and
## an m-by-m system per output).
##
## With @qcode{"NonholonomicFcn"} (velocity constraints A(q) H_p = 0, mode
## @qcode{"q"}) the multipliers of p' = -H_q - G' lambda - A' mu come from
## the same index-1 condition with C = [G; A] in place of G: @code{mon.mu}
## (k-by-N) besides @code{mon.lambda} (m-by-N, empty without ConstraintFcn),
## and @code{mon.residuals.nonholonomic} = |A H_p|_inf (per output: f
## 2(m + k) + 3 times, G and A 3 times each, g once).
##
## @var{first} (optional): the result of a call at (t0, y0) alone, with
## fields @code{t0} and @code{y0} added; when @var{t}(1), @var{y}(1,:) are
## that point its invariant values are reused, so each function is called
## exactly once per output time.
##
## Cost: one loop over the output times whose body makes the user calls and
## little else (no subfunction call, no handle made per output; the checks
## after the loop): H and InvariantFcn once per output; with @var{mode} set
## (the driver sets it only for "MonitorMultipliers" "on") g once, f 2m + 3
## times, ConstraintGradFcn 2m + 3 times for g(q, p) and 3 times for g(q)
## (central differences of h in the m + 1 directions J Dg' and f).
## @var{calls} (fields @code{f}, @code{g}, @code{G}, @code{H}, @code{I})
## counts them, a differenced G as its 2 nx + 1 calls of g, for sol.stats.
## Measured in @file{bench/README.md} (the script, bench/monitor_cost.m, is
## in the source tree only).
## @end deftypefn

function [mon, calls] = odepkg_monitor (solver, o, fcn, extra, t, y, mode, nv, first = [])

  mon = struct ();
  calls = struct ("f", 0, "g", 0, "G", 0, "H", 0, "I", 0);
  N = numel (t);
  Y = y.';                               # states as columns
  reuse = (! isempty (first) && N >= 1 && t(1) == first.t0
           && isequal (Y(:, 1), first.y0));
  names = {};
  values = zeros (0, N);
  if (! isempty (o.HamiltonianFcn))
    names{end+1} = "H";
    if (reuse)
      v0 = first.invariants.values(1, 1);
    else
      v0 = [];
    endif
    values(end+1, :) = evaluate (solver, "HamiltonianFcn", o.HamiltonianFcn, t, Y, extra, 1, v0);
    calls.H = N - ! isempty (v0);
  endif
  if (! isempty (o.InvariantFcn))
    v0 = [];
    if (reuse)
      v0 = first.invariants.values(rows (values) + 1:end, 1);
    endif
    I = evaluate (solver, "InvariantFcn", o.InvariantFcn, t, Y, extra, [], v0);
    calls.I = N - ! isempty (v0);
    for k = 1:rows (I)
      names{end+1} = sprintf ("I%d", k);
    endfor
    values = [values; I];
  endif
  mon.invariants = struct ("names", {names}, "values", values,
                           "deviation", max (abs (values - values(:, 1)), [], 2));

  nonholonomic = isfield (o, "NonholonomicFcn") && ! isempty (o.NonholonomicFcn);
  if (strcmp (mode, "q") && nonholonomic)
    [mon, calls] = nonholonomic_multipliers (o, fcn, extra, t, Y, mon, calls);
    return;
  endif
  if (strcmp (mode, "lie") && nonholonomic)
    [mon, calls] = lie_nonholonomic_residuals (o, extra, Y, nv, mon, calls);
    return;
  endif
  if (isempty (mode) || isempty (o.ConstraintFcn))
    return;
  endif
  m = o.ConstraintsNb;
  g = o.ConstraintFcn;
  ## a call of G: one of ConstraintGradFcn, or 2 nx + 1 of g (differences)
  if (! isempty (o.ConstraintGradFcn))
    G = o.ConstraintGradFcn;
    gcost = [0, 1];                      # [calls of g, calls of G] per G
  else
    G = @(x, varargin) fd_gradient (g, x, varargin);
    gcost = [NaN, 0];                    # set below, once nx is known
  endif
  ## the extra arguments bound once: f (t, y, extra{:}) in the loops would
  ## cost a quarter of a call more per call (Octave 7) when EXTRA is empty
  if (! isempty (extra))
    fcn = @(t, y) fcn (t, y, extra{:});
    g = @(x) g (x, extra{:});
    G = @(x) G (x, extra{:});
  endif
  n = rows (Y);
  ## the constraint functions' argument x = y(ix), and f's part that Dg
  ## multiplies: h(y) = Dg(y) f = G(x) f(ih)
  switch (mode)
    case "q"
      d = n / 2;  ix = 1:d;  ih = 1:d;
    case "qp"
      d = n / 2;  ix = 1:n;  ih = 1:n;
    case "lie"
      d = n - nv;  ix = 1:d;  ih = d+1:n;   # B v
  endswitch
  if (isnan (gcost(1)))
    gcost(1) = 2 * numel (ix) + 1;
  endif
  gres = hres = zeros (1, N);
  ## g(q) with a sparse ConstraintGradFcn (large chains, issue 26): the
  ## residuals by sparse products, one call of g, G and f per output; no
  ## multipliers, whose differences take 2m calls of f and m-by-m systems
  ## per output
  G1 = [];                               # G at the first output, reused
  if (strcmp (mode, "q") && ! isempty (o.ConstraintGradFcn) && N > 0)
    G1 = G (Y(ix, 1));
    if (issparse (G1))
      for j = 1:N
        x = Y(ix, j);
        gres(j) = norm (g (x), Inf);
        if (j > 1)
          G1 = G (x);
        endif
        hres(j) = norm (G1 * fcn (t(j), Y(:, j))(ih), Inf);
      endfor
      mon.residuals = struct ("constraint", gres, "hidden", hres);
      calls = count (calls, N, N, N * gcost);
      return;
    endif
  endif
  if (strcmp (mode, "lie"))
    have_hidden = ! isempty (o.ConstraintGradFcn);
    for j = 1:N
      x = Y(ix, j);
      gres(j) = norm (g (x), Inf);
      if (have_hidden)
        hres(j) = norm (G (x) * Y(ih, j), Inf);
      endif
    endfor
    mon.residuals = struct ("constraint", gres);
    if (have_hidden)
      mon.residuals.hidden = hres;
    endif
    calls = count (calls, 0, N, have_hidden * N * gcost);
    return;
  endif

  ## g(q) or g(q, p): the index-1 multipliers from (Dh K) lambda = -Dh f,
  ## K = J Dg' ([0; -G'] for g(q)), Dh by central differences along the
  ## m + 1 columns of V = [K, f], steps e_i = eps^(1/3) max (1, |y|) / |V_i|
  ## (a zero direction gets a step of ~1e303 and a zero column; the factors
  ## 1/(2 e_i) are applied after the calls).  For g(q) the directions K move
  ## p only: G(q) is known and h's difference is G(q) (f(y + e v) -
  ## f(y - e v))(1:d): per output 2m calls of G fewer than directions that
  ## move q need.  In Octave a statement costs a fair part of a call, so
  ## the loops below make the calls and store their values, and everything
  ## else is done for a block of outputs at once (blocks of about 2e6
  ## numbers: memory O(n) per output as before, not O(n N)).
  qmode = strcmp (mode, "q");
  nx = numel (ix);  nh = numel (ih);
  gv = hv = lam = zeros (m, N);
  c = eps^(1/3);
  iq = 1:n/2;  ip = n/2+1:n;
  B = max (1, floor (2e6 / (n * (m + 2))));
  for j0 = 1:B:N
    J = j0:min (j0 + B - 1, N);
    nb = numel (J);
    F = zeros (n, nb);
    Gs = zeros (m, nx, nb);
    for k = 1:nb
      yk = Y(:, J(k));
      gv(:, J(k)) = g (yk(ix));
      F(:, k) = fcn (t(J(k)), yk);
      if (J(k) == 1 && ! isempty (G1))
        Gs(:, :, k) = G1;
      else
        Gs(:, :, k) = G (yk(ix));
      endif
    endfor
    hv(:, J) = reshape (sum (Gs .* reshape (F(ih, :), 1, nh, nb), 2), m, nb);
    V = zeros (n, m + 1, nb);
    Gt = permute (Gs, [2, 1, 3]);                  # nx x m x nb
    if (qmode)
      V(ip, 1:m, :) = -Gt;
    else
      V(iq, 1:m, :) = Gt(ip, :, :);
      V(ip, 1:m, :) = -Gt(iq, :, :);
    endif
    V(:, m+1, :) = reshape (F, n, 1, nb);
    E = (c * max (1, max (abs (Y(:, J)), [], 1))) ./ max (reshape (max (abs (V), [], 1), m + 1, nb), realmin);
    E3 = reshape (E, 1, m + 1, nb);
    P = reshape (Y(:, J), n, 1, nb) + V .* E3;
    M = reshape (Y(:, J), n, 1, nb) - V .* E3;
    A = zeros (m, m + 1, nb);                      # differences of h, unscaled
    if (qmode)
      D = zeros (nh, m, nb);
      for k = 1:nb
        tk = t(J(k));
        for i = 1:m
          D(:, i, k) = fcn (tk, P(:, i, k))(ih) - fcn (tk, M(:, i, k))(ih);
        endfor
        A(:, m+1, k) = G (P(ix, m+1, k)) * fcn (tk, P(:, m+1, k))(ih) ...
                       - G (M(ix, m+1, k)) * fcn (tk, M(:, m+1, k))(ih);
      endfor
      A(:, 1:m, :) = reshape (sum (reshape (Gs, m, nh, 1, nb) .* reshape (D, 1, nh, m, nb), 2), m, m, nb);
    else
      for k = 1:nb
        tk = t(J(k));
        for i = 1:m+1
          A(:, i, k) = G (P(:, i, k)) * fcn (tk, P(:, i, k)) - G (M(:, i, k)) * fcn (tk, M(:, i, k));
        endfor
      endfor
    endif
    A = A ./ E3;
    ## the m-by-m systems of the block, as one block-diagonal sparse solve
    [r, i, k] = ndgrid (1:m, 1:m, 1:nb);
    S = sparse (r(:) + m * (k(:) - 1), i(:) + m * (k(:) - 1), reshape (A(:, 1:m, :), [], 1), m * nb, m * nb);
    lam(:, J) = -reshape (S \ reshape (A(:, m+1, :), [], 1), m, nb);
  endfor
  mon.residuals = struct ("constraint", max (abs (gv), [], 1), "hidden", max (abs (hv), [], 1));
  mon.lambda = lam;
  ## per output: g once; f once and 2 m + 2 times in the differences; G
  ## once and 2 times ("q") or 2 (m + 1) times ("qp") in the differences
  nG = N + N * ifelse (qmode, 2, 2 * (m + 1));
  calls = count (calls, N * (2 * m + 3), N, nG * gcost);

endfunction

## CALLS with NF calls of f, NG of g, and GG = [calls of g, calls of G]
## made through G (differences of g when no ConstraintGradFcn is given).
function calls = count (calls, nf, ng, gg)
  calls.f += nf;
  calls.g += ng + gg(1);
  calls.G += gg(2);
endfunction

function r = ifelse (c, a, b)
  if (c)
    r = a;
  else
    r = b;
  endif
endfunction

## fcn (t_j, y_j, extra...) for every output time (Y: states as columns),
## collected in a cell and checked after the loop: real, finite, K values
## each (K = 1 for H; InvariantFcn: the size of its first value).  V0: the
## values at t(1) when already known (not called again there).
function v = evaluate (solver, name, fcn, t, Y, extra, K, v0)
  N = numel (t);
  c = cell (1, N);
  j0 = 1;
  if (! isempty (v0))
    c{1} = v0;
    j0 = 2;
  endif
  if (! isempty (extra))
    fcn = @(t, y) fcn (t, y, extra{:});    # bound once (see odepkg_monitor)
  endif
  for j = j0:N
    c{j} = fcn (t(j), Y(:, j));
  endfor
  if (isempty (K))
    K = numel (c{1});
  endif
  ok = cellfun ("isnumeric", c) & cellfun ("isreal", c) & cellfun ("numel", c) == K;
  if (K > 0 && all (ok))
    try
      v = reshape (double ([c{:}]), K, N);      # all columns, or all rows
    catch
      v = zeros (K, N);                         # rows and columns mixed
      for j = 1:N
        v(:, j) = c{j}(:);
      endfor
    end_try_catch
    ok = all (isfinite (v), 1);
  endif
  if (K == 0 || ! all (ok))
    j = find (! ok, 1);
    if (isempty (j))
      j = 1;
    endif
    if (K == 1)
      what = "a scalar";
    else
      what = sprintf ("a vector of %d", K);
    endif
    error ("odepkg:badFcnOutput",
           "%s: %s must return %s of real finite values at each output time (t = %g)",
           solver, name, what, t(j));
  endif
endfunction

## Dg by central differences of g (when ConstraintGradFcn is not given).
function G = fd_gradient (g, x, extra)
  g0 = g (x, extra{:});
  G = zeros (numel (g0), numel (x));
  for k = 1:numel (x)
    e = eps^(1/3) * max (1, abs (x(k)));
    dx = zeros (size (x));  dx(k) = e;
    G(:, k) = (g (x + dx, extra{:}) - g (x - dx, extra{:})) / (2 * e);
  endfor
endfunction

## The multipliers [lambda; mu] of p' = -H_q - C' [lambda; mu], C = [G; A],
## at each output from (Dh K) [lambda; mu] = -Dh f, h = C(q) H_p, K = [0; -C'],
## Dh by central differences (Hairer, Lubich, Wanner, GNI, Sect. VII.1.1), and
## the residuals |g|, |G H_p|, |A H_p| (Y: states as columns).
function [mon, calls] = nonholonomic_multipliers (o, fcn, extra, t, Y, mon, calls)
  n = rows (Y);  d = n / 2;  N = numel (t);
  k = o.NonholonomicsNb;
  A = o.NonholonomicFcn;
  m = 0;
  if (! isempty (o.ConstraintFcn))
    m = o.ConstraintsNb;
    g = o.ConstraintFcn;
    if (! isempty (o.ConstraintGradFcn))
      G = o.ConstraintGradFcn;
      gcost = [0, 1];
    else
      G = @(x, varargin) fd_gradient (g, x, varargin);
      gcost = [2 * d + 1, 0];
    endif
  endif
  if (! isempty (extra))
    fcn = @(t, y) fcn (t, y, extra{:});
    A = @(q) A (q, extra{:});
    if (m > 0)
      g = @(x) g (x, extra{:});
      G = @(x) G (x, extra{:});
    endif
  endif
  if (m > 0)
    C = @(q) [G(q); reshape(A (q), k, d)];
  else
    C = @(q) reshape (A (q), k, d);
  endif
  nc = m + k;
  gres = hres = ares = zeros (1, N);
  mult = zeros (nc, N);
  c = eps^(1/3);
  ip = d+1:n;
  for j = 1:N
    y = Y(:, j);  tj = t(j);
    q = y(1:d);
    Cq = C (q);
    F = fcn (tj, y);
    h0 = Cq * F(1:d);
    if (m > 0)
      gres(j) = norm (g (q), Inf);
      hres(j) = norm (h0(1:m), Inf);
    endif
    ares(j) = norm (h0(m+1:end), Inf);
    D = zeros (nc, nc + 1);
    for i = 1:nc                       # directions K e_i = [0; -C(i,:)']: p moves, C(q) stays
      w = -Cq(i, :).';
      e = c * max (1, norm (y, Inf)) / max (norm (w, Inf), realmin);
      yp = y;  yp(ip) += e * w;
      ym = y;  ym(ip) -= e * w;
      D(:, i) = Cq * (fcn (tj, yp)(1:d) - fcn (tj, ym)(1:d)) / (2 * e);
    endfor
    e = c * max (1, norm (y, Inf)) / max (norm (F, Inf), realmin);
    yp = y + e * F;  ym = y - e * F;
    D(:, nc + 1) = (C (yp(1:d)) * fcn (tj, yp)(1:d) - C (ym(1:d)) * fcn (tj, ym)(1:d)) / (2 * e);
    mult(:, j) = -(D(:, 1:nc) \ D(:, nc + 1));
  endfor
  mon.residuals = struct ("nonholonomic", ares);
  if (m > 0)
    mon.residuals.constraint = gres;
    mon.residuals.hidden = hres;
    mon.lambda = mult(1:m, :);
    calls = count (calls, N * (2 * nc + 3), N, 3 * N * gcost);
  else
    calls = count (calls, N * (2 * nc + 3), 0, [0, 0]);
  endif
  mon.mu = mult(m+1:end, :);
  calls.A = 3 * N;
endfunction

## odeRATTLie with NonholonomicFcn: |Phi| and |B v| (with ConstraintFcn) and
## |B_nh(q) v| per output (the multipliers come from the compiled side):
## Phi, B and B_nh once per output.
function [mon, calls] = lie_nonholonomic_residuals (o, extra, Y, nv, mon, calls)
  n = rows (Y);  N = columns (Y);
  ix = 1:n-nv;  iv = n-nv+1:n;
  hol = ! isempty (o.ConstraintFcn);
  grad = hol && ! isempty (o.ConstraintGradFcn);
  gres = hres = ares = zeros (1, N);
  for j = 1:N
    x = Y(ix, j);  v = Y(iv, j);
    ares(j) = norm (reshape (o.NonholonomicFcn (x, extra{:}), [], nv) * v, Inf);
    if (hol)
      gres(j) = norm (o.ConstraintFcn (x, extra{:}), Inf);
    endif
    if (grad)
      hres(j) = norm (o.ConstraintGradFcn (x, extra{:}) * v, Inf);
    endif
  endfor
  mon.residuals = struct ("nonholonomic", ares);
  if (hol)
    mon.residuals.constraint = gres;
  endif
  if (grad)
    mon.residuals.hidden = hres;
  endif
  calls.g += hol * N;
  calls.G += grad * N;
  if (isfield (calls, "A"))
    calls.A += N;
  else
    calls.A = N;
  endif
endfunction
