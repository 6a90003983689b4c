## -*- texinfo -*-
## @deftypefn {} {@var{y} =} plain_sv (@var{f}, @var{h}, @var{N}, @var{y0})
## Reference: explicit Störmer–Verlet (Hairer, Lubich, Wanner, (I.3.4)) as a
## plain Octave loop, the same calls of @var{f} per step as the compiled
## odeSV with "Explicit" (two: p-part at q_n... and q-part at p_{n+1/2}).
## @end deftypefn
function y = plain_sv (f, h, N, y0)
  d = numel (y0) / 2;
  y = zeros (N + 1, 2 * d);
  q = y0(1:d);  p = y0(d+1:end);
  y(1,:) = y0.';
  k = f (0, [q; p]);  F = k(d+1:end);
  for n = 1:N
    t = (n - 1) * h;
    p = p + h / 2 * F;                   # p_{n+1/2}
    k = f (t, [q; p]);                   # H_p(p_{n+1/2}) (separable H)
    q = q + h * k(1:d);
    k = f (t + h, [q; p]);
    F = k(d+1:end);
    p = p + h / 2 * F;
    y(n+1,:) = [q; p].';
  endfor
endfunction
