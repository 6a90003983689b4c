## -*- texinfo -*-
## @deftypefn {} {[@var{t}, @var{y}, @var{stats}] =} fsolve_geometric_rattle (@var{f}, @var{g}, @var{gradg}, @var{flow}, @var{h}, @var{N}, @var{y0}, @var{shake})
## Reference in plain Octave for geometric SHAKE and RATTLE (McLachlan et al. 2014,
## Definitions 1.3 and 1.4) over the implicit midpoint rule, written as the
## 2013 odepkg steppers were: one @code{fsolve} per nonlinear system, with
## fsolve's own finite-difference Jacobian and the options of
## fsolve_rattle_seed (TolFun = TolX = 1e-12).  The same method, arguments
## and outputs as plain_geometric_rattle (which uses a hand-written Newton):
## @itemize
## @item SHAKE: fsolve on u = [z1-; s] for
##   z1- - z+ - h f(t + h/2, (z+ + z1-)/2) = 0,  g(z1-) = 0,  z+ = flow (z0, s),
## from u = [z0; 0] (the root nearest s = 0);
## @item RATTLE: then fsolve on sigma for @{g, H@}(flow (z1-, sigma)) = 0 from 0.
## @end itemize
## The initial data are projected as plain_geometric_rattle projects them
## (its own code, N = 0 steps: its calls are not counted here).
## @end deftypefn
function [t, y, stats] = fsolve_geometric_rattle (f, g, gradg, flow, h, N, y0, shake = false)
  [~, ~, s0] = plain_geometric_rattle (f, g, gradg, flow, h, 0, y0);
  z = s0.y0;
  n2 = numel (z);
  m = numel (g (z));
  global FSGR_CALLS;
  FSGR_CALLS = zeros (1, 4);                       # f, g, gradg, flow
  o = optimset ("TolFun", 1e-12, "TolX", 1e-12);
  t = h * (0:N).';
  y = zeros (N + 1, n2);
  y(1,:) = z.';
  nit = 0;
  for n = 1:N
    tn = t(n);
    [u, ~, info, out] = fsolve (@(u) shake_residual (u, z, tn, h, f, g, flow, n2), [z; zeros(m, 1)], o);
    check (info, "SHAKE", n);
    nit += out.iterations;
    z = u(1:n2);
    if (! shake)
      [sig, ~, info, out] = fsolve (@(sig) hidden (apply_flow (flow, z, sig), tn + h, f, gradg), zeros (m, 1), o);
      check (info, "RATTLE", n);
      nit += out.iterations;
      z = apply_flow (flow, z, sig);
    endif
    y(n+1,:) = z.';
  endfor
  stats.nfevals = FSGR_CALLS(1);  stats.nconstrevals = FSGR_CALLS(2);
  stats.nconstrgradevals = FSGR_CALLS(3);  stats.nflowevals = FSGR_CALLS(4);
  stats.nnewtoniter = nit;  stats.nsteps = N;  stats.y0 = s0.y0;
endfunction

function check (info, what, n)
  if (info <= 0)
    error ("fsolve_geometric_rattle:fsolve", "fsolve_geometric_rattle: %s failed at step %d (info %d)", what, n, info);
  endif
endfunction

function r = shake_residual (u, z0, t, h, f, g, flow, n2)
  global FSGR_CALLS;
  z1 = u(1:n2);  s = u(n2+1:end);
  zp = apply_flow (flow, z0, s);
  r = [z1 - zp - h * f(t + h / 2, (zp + z1) / 2);
       g(z1)];
  FSGR_CALLS(1:2) += 1;
endfunction

## {g_i, H}(z) = grad g_i (z) . f(t, z)
function r = hidden (z, t, f, gradg)
  global FSGR_CALLS;
  r = gradg (z) * f (t, z);
  FSGR_CALLS([1 3]) += 1;
endfunction

## exp(sum_i s_i X_{g_i})(z), the user's closed-form flow (identity at s = 0)
function z = apply_flow (flow, z, s)
  global FSGR_CALLS;
  if (any (s))
    z = flow (z, s);
    FSGR_CALLS(4) += 1;
  endif
endfunction
