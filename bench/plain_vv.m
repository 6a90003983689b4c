## -*- texinfo -*-
## @deftypefn {} {@var{y} =} plain_vv (@var{f}, @var{h}, @var{N}, @var{y0})
## Reference: velocity Verlet as a plain Octave loop, one call of @var{f}
## (returning [v; a]) per step, a evaluated at [x_{n+1}; v_{n+1/2}].
## @end deftypefn
function y = plain_vv (f, h, N, y0)
  d = numel (y0) / 2;
  y = zeros (N + 1, 2 * d);
  x = y0(1:d);  v = y0(d+1:end);
  y(1,:) = y0.';
  k = f (0, [x; v]);  a = k(d+1:end);
  for n = 1:N
    vh = v + h / 2 * a;
    x = x + h * vh;
    k = f (n * h, [x; vh]);
    a = k(d+1:end);
    v = vh + h / 2 * a;
    y(n+1,:) = [x; v].';
  endfor
endfunction
