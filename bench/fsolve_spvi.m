## -*- texinfo -*-
## @deftypefn {} {[@var{y}, @var{iters}] =} fsolve_spvi (@var{f}, @var{h}, @var{N}, @var{y0}, @var{Q}, @var{P})
## Reference in the style of the 2013 odepkg spectral_var_int:
## the discrete Hamilton equations of one step (Q Legendre modes of q, P
## Gauss nodes) solved by @code{fsolve} (its own finite-difference
## Jacobian).  Unknowns per step: the modes M (QxD), the nodal momenta Pn
## (PxD), q_{k+1} and p_{k+1}; with the tables L = l_i(z_j), D = l_i'(z_j),
## C = l_i(-+1) (computed here: Golub-Welsch nodes, Legendre recurrence):
##   D' (w .* Pn) - h/2 L' (w .* H_q) + C(1,:)' p_k' - C(2,:)' p_{k+1}' = 0
##   h/2 H_p - D M = 0,  C(1,:) M = q_k',  C(2,:) M = q_{k+1}'.
## @end deftypefn
function [y, iters] = fsolve_spvi (f, h, N, y0, Q, P)
  d = numel (y0) / 2;
  [z, w] = gauss_nodes (P);
  [L, D] = legendre_table (z, Q);
  C = legendre_table ([-1; 1], Q);
  y = zeros (N + 1, 2 * d);
  y(1,:) = y0.';
  qk = y0(1:d).';  pk = y0(d+1:end).';
  o = optimset ("TolFun", 1e-12, "TolX", 1e-12);
  iters = 0;
  for n = 1:N
    t = (n - 1) * h;
    u0 = [qk; zeros(Q - 1, d); repmat(pk, P, 1); qk; pk];   # the 2013 code's guess
    [u, ~, ~, out] = fsolve (@(u) residual (u, f, t, h, qk, pk, Q, P, d, z, w, L, D, C), u0(:), o);
    iters += out.iterations;
    u = reshape (u, Q + P + 2, d);
    qk = u(Q+P+1,:);  pk = u(Q+P+2,:);
    y(n+1,:) = [qk, pk];
  endfor
endfunction

function r = residual (u, f, t, h, qk, pk, Q, P, d, z, w, L, D, C)
  u = reshape (u, Q + P + 2, d);
  M = u(1:Q,:);  Pn = u(Q+1:Q+P,:);  q1 = u(Q+P+1,:);  p1 = u(Q+P+2,:);
  Qn = L * M;
  Hp = zeros (P, d);  Hq = zeros (P, d);
  for j = 1:P
    v = f (t + h * (1 + z(j)) / 2, [Qn(j,:).'; Pn(j,:).']);
    Hp(j,:) = v(1:d).';  Hq(j,:) = -v(d+1:end).';
  endfor
  Rs = D.' * (w .* Pn) - h / 2 * L.' * (w .* Hq) + C(1,:).' * pk - C(2,:).' * p1;
  Rr = h / 2 * Hp - D * M;
  r = [Rs; Rr; C(1,:) * M - qk; C(2,:) * M - q1](:);
endfunction

function [z, w] = gauss_nodes (P)
  b = (1:P-1) ./ sqrt (4 * (1:P-1).^2 - 1);
  [V, E] = eig (diag (b, 1) + diag (b, -1));
  [z, i] = sort (diag (E));
  w = 2 * V(1,i).'.^2;
endfunction

function [L, D] = legendre_table (x, Q)
  ## l_0 = 1, l_1 = x, (k+1) l_{k+1} = (2k+1) x l_k - k l_{k-1}; derivatives by
  ## l'_{k+1} = l'_{k-1} + (2k+1) l_k.
  L = zeros (numel (x), Q);  D = zeros (numel (x), Q);
  L(:,1) = 1;
  if (Q > 1)
    L(:,2) = x;  D(:,2) = 1;
  endif
  for k = 1:Q-2
    L(:,k+2) = ((2*k + 1) * x .* L(:,k+1) - k * L(:,k)) / (k + 1);
    D(:,k+2) = D(:,k) + (2*k + 1) * L(:,k+1);
  endfor
endfunction
