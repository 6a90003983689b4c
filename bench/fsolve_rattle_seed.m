## -*- texinfo -*-
## @deftypefn {} {@var{y} =} fsolve_rattle_seed (@var{f}, @var{g}, @var{G}, @var{h}, @var{N}, @var{y0})
## Reference with the equations and strategy of the 2013 odepkg rattle stepper:
## for a general H, one @code{fsolve} per step (its own finite-difference
## Jacobian, as the 2013 code without Hessians) on the whole system in
## u = [q_1; p_{1/2}; p_1; lambda; mu], started from [q_n; p_n; p_n; 0; 0]:
##   q_1 - q_n - h/2 (H_p(q_n, p_{1/2}) + H_p(q_1, p_{1/2})) = 0
##   p_{1/2} - p_n + h/2 (H_q(q_n, p_{1/2}) + G(q_n)' lambda) = 0
##   p_1 - p_{1/2} + h/2 (H_q(q_1, p_{1/2}) + G(q_1)' mu) = 0
##   g(q_1) = 0,   G(q_1) H_p(q_1, p_1) = 0.
## @end deftypefn
function y = fsolve_rattle_seed (f, g, G, h, N, y0)
  d = numel (y0) / 2;
  m = numel (g (y0(1:d)));
  y = zeros (N + 1, 2 * d);
  q = y0(1:d);  p = y0(d+1:end);
  y(1,:) = y0.';
  o = optimset ("TolFun", 1e-12, "TolX", 1e-12);
  for n = 1:N
    t = (n - 1) * h;
    u = fsolve (@(u) rattle_system (u, f, g, G, t, h, q, p, d, m), [q; p; p; zeros(2*m, 1)], o);
    q = u(1:d);  p = u(2*d+1:3*d);
    y(n+1,:) = [q; p].';
  endfor
endfunction

function r = rattle_system (u, f, g, G, t, h, q0, p0, d, m)
  q1 = u(1:d);  ph = u(d+1:2*d);  p1 = u(2*d+1:3*d);
  lam = u(3*d+1:3*d+m);  mu = u(3*d+m+1:end);
  fa = f (t, [q0; ph]);  fb = f (t + h, [q1; ph]);  fc = f (t + h, [q1; p1]);
  G1 = G (q1);
  r = [q1 - q0 - h / 2 * (fa(1:d) + fb(1:d));
       ph - p0 - h / 2 * (fa(d+1:end) - G(q0)' * lam);
       p1 - ph - h / 2 * (fb(d+1:end) - G1' * mu);
       g(q1);
       G1 * fc(1:d)];
endfunction
