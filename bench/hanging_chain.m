## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{c} =} hanging_chain (@var{N})
## @deftypefnx {} {@var{c} =} hanging_chain (@var{N}, @var{anchor})
## A planar chain of @var{N} point masses (unit masses) joined by unit links,
## the first link pinned at the origin, under unit gravity:
## H = |p|^2/2 + sum_k y_k, g_k(q) = |x_k - x_(k-1)|^2 - 1, x_0 = 0
## (k = 1, @dots{}, N).  Coordinates interleaved, q = [x_1; y_1; x_2; y_2;
## @dots{}] (d = 2N), so that the constraint gradient is banded: row k has
## its four nonzeros in columns 2k-3 @dots{} 2k, and G G' is tridiagonal.
## With @var{anchor} (a point, 2-by-1) the last mass is also linked to it
## by a unit link, g_(N+1) = |anchor - x_N|^2 - 1: a closed ring when the
## anchor is the origin, a chain pinned at both ends otherwise.
##
## Fields of @var{c}: @code{f} (t, y) = [H_p; -H_q]; @code{g} (q);
## @code{G} (q), the sparse gradient built by @code{sparse (i, j, v, m,
## 2N)}; @code{Gfull} (q), the same as a full matrix; @code{H} (Y), the
## energy of each row of Y; @code{m}, the number of constraints; @code{y0},
## the chain at rest, straight and horizontal along the positive x axis
## (for a chain without anchor: consistent, g = 0 and G H_p = 0).
## Benchmark helper (bench/sparse_chain.m); the demo of @code{odeRATTLE} and
## its tests hold their own copies, as a demo must be self-contained.
## @end deftypefn
function c = hanging_chain (N, anchor = [])
  d = 2 * N;
  m = N + ! isempty (anchor);
  k = 2:N;
  ## the pattern of G, fixed: row k holds d g_k / d x_k (columns 2k-1, 2k)
  ## and d g_k / d x_(k-1) (columns 2k-3, 2k-2); the anchor's row last
  I = [1:N, 1:N, k, k];
  J = [1:2:d, 2:2:d, 2*k-3, 2*k-2];
  if (! isempty (anchor))
    I = [I, m, m];
    J = [J, d-1, d];
  endif
  grav = repmat ([0; -1], N, 1);
  c.f = @(t, y) [y(d+1:end); grav];
  c.g = @(q) chain_g (q, anchor);
  c.G = @(q) chain_G (q, anchor, I, J, m, d);
  c.Gfull = @(q) full (chain_G (q, anchor, I, J, m, d));
  c.H = @(Y) sum (Y(:,d+1:end).^2, 2) / 2 + sum (Y(:,2:2:d), 2);
  c.m = m;
  c.y0 = [reshape([1:N; zeros(1, N)], [], 1); zeros(d, 1)];
endfunction

function g = chain_g (q, anchor)
  X = reshape (q, 2, []);
  D = diff ([zeros(2, 1), X, anchor], 1, 2);
  g = (D(1,:).^2 + D(2,:).^2).' - 1;
endfunction

function G = chain_G (q, anchor, I, J, m, d)
  X = reshape (q, 2, []);
  D = 2 * diff ([zeros(2, 1), X, anchor], 1, 2);      # 2 (x_k - x_(k-1)), k = 1 ... m
  n = d / 2;
  V = [D(1,1:n), D(2,1:n), -D(1,2:n), -D(2,2:n)];
  if (! isempty (anchor))
    V = [V, -D(:,m).'];
  endif
  G = sparse (I, J, V, m, d);
endfunction
