## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {[@var{y}, @var{yp}] =} __odepkg_deval__ (@var{sol}, @var{t}, @var{idx})
## Internal: the interpolant behind odepkg's @code{deval} and the
## @qcode{"Refine"} option (see @code{deval}: cubic through four output
## points, constrained states projected onto the constraints).
## @end deftypefn

function [y, yp] = __odepkg_deval__ (sol, t, idx = [])

  if (! (isstruct (sol) && isscalar (sol) && isfield (sol, "x") && isfield (sol, "y")))
    error ("odepkg:invalidInput", "deval: SOL must be a solution struct with fields x and y");
  endif
  lie = (isfield (sol, "idata") && isstruct (sol.idata) && isscalar (sol.idata)
         && isfield (sol.idata, "lie"));
  if (! lie && isfield (sol, "solver") && strcmp (sol.solver, "odeRATTLie"))
    error ("odepkg:invalidInput",
           "deval: this odeRATTLie solution lacks sol.idata (its group, mass matrix and constraints), which the interpolant on the group needs; solve again with sol = odeRATTLie (...)");
  endif
  if (ndims (sol.y) == 3)
    ## an ensemble (2d-by-N-by-K): the members' interpolants side by side,
    ## 2d-by-numel(T)-by-K (no projection: the constraint functions take
    ## all members at once)
    [n, N, K] = size (sol.y);
    if (! isempty (idx) && ! (isnumeric (idx) && all (idx(:) == fix (idx(:))) && all (idx(:) >= 1 & idx(:) <= n)))
      error ("odepkg:invalidInput", "deval: IDX must index the components of a member's state (1 to %d)", n);
    endif
    flat = sol;
    flat.y = reshape (permute (sol.y, [1 3 2]), n * K, N);
    [y, yp] = __odepkg_deval__ (flat, t);
    y = permute (reshape (y, n, K, []), [1 3 2]);
    yp = permute (reshape (yp, n, K, []), [1 3 2]);
    if (! isempty (idx))
      y = y(idx, :, :);
      yp = yp(idx, :, :);
    endif
    return;
  endif
  x = sol.x(:).';  Y = sol.y;
  N = numel (x);
  if (N < 1 || columns (Y) != N)
    error ("odepkg:invalidInput", "deval: SOL.y must have one column per time in SOL.x");
  endif
  if (! (isnumeric (t) && isreal (t) && all (isfinite (t(:)))))
    error ("odepkg:invalidInput", "deval: T must be real, finite times");
  endif
  if (isempty (idx))
    idx = 1:rows (Y);
  elseif (! (isnumeric (idx) && all (idx(:) == fix (idx(:))) && all (idx(:) >= 1 & idx(:) <= rows (Y))))
    error ("odepkg:invalidInput", "deval: IDX must index the components of SOL.y (1 to %d)", rows (Y));
  endif
  s = 1;
  if (N > 1 && x(end) < x(1))                 # backward integration
    s = -1;
  endif
  lo = min (x(1), x(end));  hi = max (x(1), x(end));
  tol = 16 * eps (max (abs ([lo, hi])));
  if (any (t(:) < lo - tol | t(:) > hi + tol))
    error ("odepkg:invalidInput", "deval: T must lie in the span of the solution [%g, %g]", lo, hi);
  endif

  t = t(:).';
  if (lie)
    ## odeRATTLie: q = q_k o exp(xi(s)) with xi a cubic Hermite in the Lie
    ## algebra, v = T(xi) xi', projected along the group onto the constraints
    ## (compiled: lie/LieInterpolant.hpp)
    if (isempty (t))
      y = yp = zeros (numel (idx), 0);
      return;
    elseif (N == 1)
      y = repmat (Y(idx, 1), 1, numel (t));
      yp = NaN (size (y));
      return;
    endif
    [y, yp] = __odepkg_rattlie__ ("interpolate", x, Y, t, sol.idata.lie, sol.idata.fcn, sol.idata.extra);
    y = y(idx, :);
    yp = yp(idx, :);
    return;
  endif
  y = zeros (rows (Y), numel (t));
  yp = y;
  xs = s * x;
  spvi = (N > 1 && isfield (sol, "idata") && isstruct (sol.idata) && isfield (sol.idata, "nodes")
          && ! isempty (sol.idata.nodes) && size (sol.idata.nodes.t, 2) == N - 1);
  ## n output points around the step: a cubic (n = 4), or for a composed
  ## run of order p > 4 a polynomial of degree p - 1 (n = p), whose error
  ## O(h^p) is the method's own
  n = 4;
  if (isfield (sol, "idata") && isstruct (sol.idata) && isfield (sol.idata, "order"))
    n = max (4, sol.idata.order);
  endif
  n = min (n, N);
  for j = 1:numel (t)
    tj = s * t(j);
    k = lookup (xs, tj);                      # xs(k) <= tj < xs(k+1)
    k = min (max (k, 1), max (N - 1, 1));
    first = min (max (k - floor (n/2) + 1, 1), N - n + 1);
    nodes = first:first + n - 1;              # centred on the step where it can be
    if (spvi)
      ## odeSPVI: the step's own polynomial, through its end points and its
      ## P Gauss-node states (q's Legendre polynomial of degree Q - 1 <= P + 1
      ## exactly; p through the nodal momenta)
      ks = min (max (lookup (xs, tj), 1), N - 1);
      xn = [x(ks), sol.idata.nodes.t(:, ks).', x(ks+1)];
      Yn = [Y(:, ks), sol.idata.nodes.y(:, :, ks), Y(:, ks+1)];
      [w, wp] = lagrange_weights (xn, t(j));
      y(:, j) = Yn * w;
      yp(:, j) = Yn * wp;
      continue;
    endif
    [w, wp] = lagrange_weights (x(nodes), t(j));
    y(:, j) = Y(:, nodes) * w;
    yp(:, j) = Y(:, nodes) * wp;
  endfor

  if (isfield (sol, "idata") && isstruct (sol.idata) && isfield (sol.idata, "constraint"))
    qp = isfield (sol.idata, "variables") && strcmp (sol.idata.variables, "qp");
    for j = 1:numel (t)
      if (qp)
        y(:, j) = project_phase_space (sol.idata, t(j), y(:, j));
      else
        [y(:, j), yp(:, j)] = project_holonomic (sol.idata, t(j), y(:, j), yp(:, j));
      endif
    endfor
  endif
  y = y(idx, :);
  yp = yp(idx, :);

endfunction

## Weights of the Lagrange interpolant and of its derivative at t.
function [w, wp] = lagrange_weights (xn, t)
  m = numel (xn);
  w = ones (m, 1);  wp = zeros (m, 1);
  for i = 1:m
    others = xn([1:i-1, i+1:m]);
    den = prod (xn(i) - others);
    w(i) = prod (t - others) / den;
    for l = 1:numel (others)
      wp(i) += prod (t - others([1:l-1, l+1:end])) / den;
    endfor
  endfor
endfunction

## Onto g(q) = 0 (Gauss-Newton along G') and G(q) H_p(q, p) = 0 (p moved
## along G(q)', Newton with a difference Jacobian); the derivative yp is
## the interpolant's.
function [y, yp] = project_holonomic (id, t, y, yp)
  d = numel (y) / 2;
  q = y(1:d);  p = y(d+1:end);
  G = @(q) grad (id, q);
  nonholonomic = isfield (id, "nonholonomic") && ! isempty (id.nonholonomic);
  for it = 1:20 * ! isempty (id.constraint)
    g = id.constraint (q, id.extra{:});
    if (norm (g, Inf) <= 4 * eps * max (1, norm (q, Inf)))
      break;
    endif
    Gq = G (q);
    q -= Gq' * ((Gq * Gq') \ g(:));
  endfor
  ## with NonholonomicFcn: onto [G(q); A(q)] H_p = 0
  Gq = zeros (0, d);
  if (! isempty (id.constraint))
    Gq = G (q);
  endif
  if (nonholonomic)
    Gq = [Gq; reshape(id.nonholonomic (q, id.extra{:}), [], d)];
  endif
  hidden = @(p) Gq * head (id.fcn (t, [q; p], id.extra{:}), d);
  for it = 1:5
    r = hidden (p);
    if (norm (r, Inf) <= 8 * eps * max (1, norm (p, Inf)) * max (1, norm (Gq, Inf)))
      break;
    endif
    m = rows (Gq);  J = zeros (m);
    delta = sqrt (eps) * max (1, norm (p, Inf));
    for k = 1:m
      J(:, k) = (hidden (p - delta * Gq(k, :)') - r) / delta;
    endfor
    p += Gq' * (J \ r);                       # mu = -J \ r,  p <- p - G' mu
  endfor
  y = [q; p];
endfunction

## Constraints on phase space, g(y) = 0 and their hidden part {g, H} =
## Dg(y) f(t, y) = 0 (McLachlan et al. 2014, Sect. 2.2): minimum-norm Gauss-Newton steps y <- y -
## J' (J J') \ F on F = [g; Dg f], the rows of D(Dg f) by forward differences.
function y = project_phase_space (id, t, y)
  n = numel (y);
  hid = @(z) grad (id, z) * id.fcn (t, z, id.extra{:})(:);
  for it = 1:10
    D = grad (id, y);
    F = [id.constraint(y, id.extra{:})(:); D * id.fcn(t, y, id.extra{:})(:)];
    if (norm (F, Inf) <= 8 * eps * max (1, norm (y, Inf)) * max (1, norm (D, Inf)))
      break;
    endif
    m = rows (D);
    Dh = zeros (m, n);
    delta = sqrt (eps) * max (1, norm (y, Inf));
    for k = 1:n
      e = zeros (n, 1);  e(k) = delta;
      Dh(:, k) = (hid (y + e) - F(m+1:end)) / delta;
    endfor
    J = [D; Dh];
    y -= J' * ((J * J') \ F);
  endfor
endfunction

function Gq = grad (id, q)
  if (! isempty (id.grad))
    Gq = id.grad (q, id.extra{:});
    Gq = reshape (Gq, [], numel (q));
    return;
  endif
  g0 = id.constraint (q, id.extra{:});
  Gq = zeros (numel (g0), numel (q));
  for k = 1:numel (q)
    dq = zeros (size (q));  dq(k) = sqrt (eps) * max (1, abs (q(k)));
    Gq(:, k) = (id.constraint (q + dq, id.extra{:}) - g0) / dq(k);
  endfor
endfunction

function h = head (v, d)
  h = v(1:d);
endfunction
