## -*- texinfo -*-
## @deftypefn {} {@var{y} =} plain_se (@var{f}, @var{h}, @var{N}, @var{y0})
## Reference: explicit symplectic Euler (Hairer, Lubich, Wanner, (VI.3.1))
## as a plain Octave loop, p_{n+1} = p_n - h H_q(q_n),
## q_{n+1} = q_n + h H_p(p_{n+1}): two calls of @var{f} per step.
## @end deftypefn
function y = plain_se (f, h, N, y0)
  d = numel (y0) / 2;
  y = zeros (N + 1, 2 * d);
  q = y0(1:d);  p = y0(d+1:end);
  y(1,:) = y0.';
  k = f (0, [q; p]);
  for n = 1:N
    t = (n - 1) * h;
    p = p + h * k(d+1:end);
    k = f (t, [q; p]);
    q = q + h * k(1:d);
    k = f (t + h, [q; p]);
    y(n+1,:) = [q; p].';
  endfor
endfunction
