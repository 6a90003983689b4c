## -*- texinfo -*-
## @deftypefn {} {@var{y} =} fsolve_rattle (@var{f}, @var{g}, @var{G}, @var{h}, @var{N}, @var{y0})
## Reference in the style of the 2013 odepkg rattle stepper (seed 000): one
## @code{fsolve} per step on the whole RATTLE system (Hairer, Lubich,
## Wanner, (VII.1.26)) for separable H = |p|^2/2 + U(q):
##   p_{1/2} = p_n + h/2 (F(q_n) - G(q_n)' l),  q_{n+1} = q_n + h p_{1/2},
##   g(q_{n+1}) = 0,  p_{n+1} = p_{1/2} + h/2 (F(q_{n+1}) - G(q_{n+1})' m),
##   G(q_{n+1}) p_{n+1} = 0.
## @end deftypefn
function y = fsolve_rattle (f, g, G, h, N, y0)
  d = numel (y0) / 2;
  m = numel (g (y0(1:d)));
  y = zeros (N + 1, 2 * d);
  q = y0(1:d);  p = y0(d+1:end);
  y(1,:) = y0.';
  o = optimset ("TolFun", 1e-12, "TolX", 1e-12);
  F = @(t, q) f (t, [q; zeros(d, 1)])(d+1:end);
  for n = 1:N
    t = (n - 1) * h;
    Fq = F (t, q);  Gq = G (q);
    sys = @(z) [z(1:d) - q - h * (p + h / 2 * (Fq - Gq' * z(2*d+1:2*d+m)));
                z(d+1:2*d) - (p + h / 2 * (Fq - Gq' * z(2*d+1:2*d+m))) ...
                  - h / 2 * (F (t + h, z(1:d)) - G (z(1:d))' * z(2*d+m+1:end));
                g(z(1:d));
                G(z(1:d)) * z(d+1:2*d)];
    z = fsolve (sys, [q + h * p; p; zeros(2 * m, 1)], o);
    q = z(1:d);  p = z(d+1:2*d);
    y(n+1,:) = [q; p].';
  endfor
endfunction
