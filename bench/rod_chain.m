## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{c} =} rod_chain (@var{N}, @var{sparse_B})
## The chain of @var{N} rigid rods of bench/sparse_rattlie.m on the group
## (S3 x R3)^N: rod k (mass 1, Jc = diag (1/12, 1/100, 1/12), length 1) has
## the unit quaternion p_k and centre x_k, v_k = [Omega_k; x_k'], and runs
## from x_k + R_k a to x_k - R_k a, a = [0; 1/2; 0]; the first is pinned at
## the origin (Phi_0 = x_1 + R_1 a), joint k joins the bottom of rod k to
## the top of rod k+1 (Phi_k = x_k - R_k a - x_{k+1} - R_{k+1} a), m = 3N;
## gravity.  Hanging down, turning rigidly about the x axis at 0.01 rad/s
## (consistent initial data).  @var{c} has f, Phi, B (sparse, or full when
## @var{sparse_B} is false), M (sparse or full likewise), y0, m, n, nq and
## the odeRATTLie options @var{c}.opts (without the step options).
## @end deftypefn
function c = rod_chain (N, sparse_B = true)
  s = sqrt (0.5);
  q0 = [repmat([s; s; 0; 0], 1, N); zeros(2, N); -(1:N) + 0.5];
  v0 = zeros (6, N);  v0(1,:) = 0.01;  v0(5,:) = -0.01 * q0(7,:);
  M = kron (speye (N), diag ([1/12, 1/100, 1/12, 1, 1, 1]));
  if (! sparse_B)
    M = full (M);
  endif
  fv = repmat ([0; 0; 0; 0; 0; 9.81], N, 1);
  c.f = @(t, y) fv;
  c.Phi = @(q) chain_phi (q, N);
  c.B = @(q) chain_grad (q, N, ! sparse_B);
  c.M = M;
  c.y0 = [q0(:); v0(:)];
  c.m = 3 * N;  c.n = 6 * N;  c.nq = 7 * N;
  c.opts = odepkgset ("LieGroup", sprintf ("(S3xR3)^%d", N), "MassMatrix", M, "ConstraintsNb", 3 * N,
                      "ConstraintFcn", c.Phi, "ConstraintGradFcn", c.B);
endfunction

## column j of R(p) for each column p of P
function R = rot_col (p, j)
  a = p(1,:);  b = p(2,:);  c = p(3,:);  d = p(4,:);
  switch (j)
    case 1, R = [a.^2+b.^2-c.^2-d.^2; 2*(b.*c+a.*d); 2*(b.*d-a.*c)];
    case 2, R = [2*(b.*c-a.*d); a.^2-b.^2+c.^2-d.^2; 2*(c.*d+a.*b)];
    case 3, R = [2*(b.*d+a.*c); 2*(c.*d-a.*b); a.^2-b.^2-c.^2+d.^2];
  endswitch
endfunction

function phi = chain_phi (q, N)
  Q = reshape (q, 7, N);  Ra = 0.5 * rot_col (Q(1:4,:), 2);  X = Q(5:7,:);
  phi = [X(:,1) + Ra(:,1); reshape((X(:,1:N-1) - Ra(:,1:N-1)) - (X(:,2:N) + Ra(:,2:N)), [], 1)];
endfunction

## B = dPhi along left translations: body b in row block r gets
## [sr R_b hat(a), st I] with R hat(a) = [-R e3 / 2, 0, R e1 / 2]
function B = chain_grad (q, N, as_full)
  Q = reshape (q, 7, N);  R1 = rot_col (Q(1:4,:), 1);  R3 = rot_col (Q(1:4,:), 3);
  r = [1, 2:N, 2:N];  b = [1, 1:N-1, 2:N];  sr = [-1, ones(1, 2*N-2)];  st = [1, ones(1, N-1), -ones(1, N-1)];
  rows = 3 * (r - 1) + (1:3)';
  I = [rows(:); rows(:); rows(:)];
  J = [repmat(6*b-5, 3, 1)(:); repmat(6*b-3, 3, 1)(:); (6*(b-1) + (4:6)')(:)];
  V = [reshape(-0.5 * sr .* R3(:, b), [], 1); reshape(0.5 * sr .* R1(:, b), [], 1); repmat(st, 3, 1)(:)];
  B = sparse (I, J, V, 3*N, 6*N);
  if (as_full)
    B = full (B);
  endif
endfunction
