## -*- texinfo -*-
## @deftypefn {} {@var{y} =} fsolve_sv (@var{f}, @var{h}, @var{N}, @var{y0})
## Reference in the style of the 2013 odepkg stepper (stormer_verlet): the
## implicit (general H) Störmer–Verlet step solved with @code{fsolve} in
## Octave, p_{n+1/2} = p_n - h/2 H_q(q_n, p_{n+1/2}),
## q_{n+1} = q_n + h/2 (H_p(q_n, p_{n+1/2}) + H_p(q_{n+1}, p_{n+1/2})),
## p_{n+1} = p_{n+1/2} - h/2 H_q(q_{n+1}, p_{n+1/2}).
## @end deftypefn
function y = fsolve_sv (f, h, N, y0)
  d = numel (y0) / 2;
  y = zeros (N + 1, 2 * d);
  q = y0(1:d);  p = y0(d+1:end);
  y(1,:) = y0.';
  o = optimset ("TolFun", 1e-12, "TolX", 1e-12);
  P = @(x) x(d+1:end);  Qp = @(x) x(1:d);
  for n = 1:N
    t = (n - 1) * h;
    ph = fsolve (@(z) z - p - h / 2 * P (f (t, [q; z])), p, o);
    Hp0 = Qp (f (t, [q; ph]));
    q1 = fsolve (@(z) z - q - h / 2 * (Hp0 + Qp (f (t + h, [z; ph]))), q + h * Hp0, o);
    p = ph + h / 2 * P (f (t + h, [q1; ph]));
    q = q1;
    y(n+1,:) = [q; p].';
  endfor
endfunction
