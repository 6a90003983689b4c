## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{mon} =} odepkg_monitor (@var{solver}, @var{o}, @var{fcn}, @var{extra}, @var{t}, @var{y}, @var{mode}, @var{nv})
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
## (Hairer, Lubich, Wanner, GNI, Sect. VII.1.1).
## @end deftypefn

function mon = odepkg_monitor (solver, o, fcn, extra, t, y, mode, nv)

  mon = struct ();
  N = numel (t);
  names = {};
  values = zeros (0, N);
  if (! isempty (o.HamiltonianFcn))
    names{end+1} = "H";
    values(end+1, :) = evaluate (solver, "HamiltonianFcn", o.HamiltonianFcn, t, y, extra, 1);
  endif
  if (! isempty (o.InvariantFcn))
    I = evaluate (solver, "InvariantFcn", o.InvariantFcn, t, y, extra, []);
    for k = 1:rows (I)
      names{end+1} = sprintf ("I%d", k);
    endfor
    values = [values; I];
  endif
  mon.invariants = struct ("names", {names}, "values", values,
                           "deviation", max (abs (values - values(:, 1)), [], 2));

  if (isempty (mode) || isempty (o.ConstraintFcn))
    return;
  endif
  m = o.ConstraintsNb;
  gres = hres = zeros (1, N);
  lam = zeros (m, N);
  have_hidden = ! strcmp (mode, "lie") || ! isempty (o.ConstraintGradFcn);
  for j = 1:N
    yj = y(j, :).';
    [x, split] = constraint_argument (mode, yj, nv);
    gres(j) = norm (o.ConstraintFcn (x, extra{:}), Inf);
    if (! have_hidden)
      continue;
    endif
    if (strcmp (mode, "lie"))
      B = o.ConstraintGradFcn (x, extra{:});
      hres(j) = norm (B * yj(split+1:end), Inf);
      continue;
    endif
    h = @(z) hidden (o, mode, fcn, extra, t(j), z, split);
    hres(j) = norm (h (yj), Inf);
    ## multipliers: K = J Dg' (q: [0; -G'])
    Dg = full_gradient (o, mode, yj, extra, split);
    K = [Dg(:, split+1:end).'; -Dg(:, 1:split).'];
    fj = fcn (t(j), yj, extra{:});
    A = zeros (m, m);
    for i = 1:m
      A(:, i) = directional (h, yj, K(:, i));
    endfor
    lam(:, j) = -A \ directional (h, yj, fj(:));
  endfor
  mon.residuals = struct ("constraint", gres);
  if (have_hidden)
    mon.residuals.hidden = hres;
  endif
  if (! strcmp (mode, "lie"))
    mon.lambda = lam;
  endif

endfunction

## fcn (t_j, y_j, extra...) for every output time, checked: real, finite,
## K rows (K = 1 for H; InvariantFcn: the size of its first value).
function v = evaluate (solver, name, fcn, t, y, extra, K)
  for j = 1:numel (t)
    r = fcn (t(j), y(j, :).', extra{:});
    if (j == 1 && isempty (K))
      K = numel (r);
      v = zeros (K, numel (t));
    elseif (j == 1)
      v = zeros (K, numel (t));
    endif
    if (! (isnumeric (r) && isreal (r) && numel (r) == K && K > 0 && all (isfinite (r(:)))))
      error ("odepkg:badFcnOutput",
             "%s: %s must return %s of real finite values at each output time (t = %g)",
             solver, name, ifelse (K == 1, "a scalar", sprintf ("a vector of %d", K)), t(j));
    endif
    v(:, j) = double (r(:));
  endfor
endfunction

function s = ifelse (c, a, b)
  if (c)
    s = a;
  else
    s = b;
  endif
endfunction

## The constraint functions' argument: q (mode "q"), the whole state ("qp"),
## the group coordinates ("lie": the state minus its NV velocity entries).
## SPLIT is the size of q.
function [x, split] = constraint_argument (mode, y, nv)
  switch (mode)
    case "q"
      split = numel (y) / 2;
      x = y(1:split);
    case "qp"
      split = numel (y) / 2;
      x = y;
    case "lie"
      split = numel (y) - nv;
      x = y(1:split);
  endswitch
endfunction

## h(y) = Dg(y) f(t, y): G(q) H_p for g(q), {g, H} for g(q, p).
function r = hidden (o, mode, fcn, extra, t, y, split)
  f = fcn (t, y, extra{:});
  r = full_gradient (o, mode, y, extra, split) * f(:);
endfunction

## Dg with respect to the whole state y = [q; p] (m-by-2d).
function D = full_gradient (o, mode, y, extra, split)
  if (strcmp (mode, "q"))
    x = y(1:split);
  else
    x = y;
  endif
  if (! isempty (o.ConstraintGradFcn))
    G = o.ConstraintGradFcn (x, extra{:});
  else
    g0 = o.ConstraintFcn (x, extra{:});
    G = zeros (numel (g0), numel (x));
    for k = 1:numel (x)
      e = eps^(1/3) * max (1, abs (x(k)));
      dx = zeros (size (x));  dx(k) = e;
      G(:, k) = (o.ConstraintFcn (x + dx, extra{:}) - o.ConstraintFcn (x - dx, extra{:})) / (2 * e);
    endfor
  endif
  if (strcmp (mode, "q"))
    D = [G, zeros(rows (G), numel (y) - split)];
  else
    D = G;
  endif
endfunction

## Dh(y) v by central differences, step eps^(1/3) relative to |y| and |v|.
function d = directional (h, y, v)
  nv = norm (v, Inf);
  if (nv == 0)
    d = zeros (size (h (y)));
    return;
  endif
  e = eps^(1/3) * max (1, norm (y, Inf)) / nv;
  d = (h (y + e * v) - h (y - e * v)) / (2 * e);
endfunction
