## -*- texinfo -*-
## @deftypefn {} {[@var{t}, @var{y}, @var{stats}] =} plain_geometric_rattle (@var{f}, @var{g}, @var{gradg}, @var{flow}, @var{h}, @var{N}, @var{y0}, @var{shake})
## Reference in plain Octave for geometric SHAKE and RATTLE
## (McLachlan, Modin, Verdier, Wilkins 2014, Definitions 1.3 and 1.4, Sect. 3.2 and
## 4.2) for constraints g(q, p) = 0 on the whole state, over the implicit
## midpoint rule phi_h as base method:
##
##   phi_h (z) = z1  with  z1 = z + h f(t + h/2, (z + z1) / 2).
##
## @var{f} (t, y) = [dH/dp; -dH/dq] for y = [q; p] (2d-by-1);
## @var{g} (y): m-by-1; @var{gradg} (y): m-by-2d (row i = grad g_i);
## @var{flow} (y, s) = exp (sum_i s_i X_@{g_i@}) (y), the flow of the
## Hamiltonian vector fields X_g = J grad g, J = [0 I; -I 0] (q' = dg/dp,
## p' = -dg/dq), or [] to integrate that flow numerically (classical RK4,
## 64 substeps on tau in [0, 1], 4 x 64 calls of @var{gradg} per flow).
##
## One step from z0 at time t:
## @itemize
## @item SHAKE (Def. 1.3): find s (m-by-1) with
##   g (phi_h (exp (s X_g) z0)) = 0,  z1- = phi_h (exp (s X_g) z0).
## Solved as one system in u = [z1-; s]:
##   z1- - z+ - h f(t + h/2, (z+ + z1-)/2) = 0,  g(z1-) = 0,  z+ = flow (z0, s),
## by Newton from u = [z0; 0] (the root nearest s = 0).
## @item RATTLE (Def. 1.4): then find sigma (m-by-1) with
##   @{g_i, H@}(exp (sigma X_g) z1-) = grad g_i . f (t + h, .) = 0,
##   z1 = exp (sigma X_g) z1-,
## by Newton from sigma = 0.
## @end itemize
## With @var{shake} true (default false) the SHAKE map is iterated and the
## points z1- are returned; otherwise the RATTLE map and the points z1.
##
## Newton (our own, not fsolve, so that the residuals reach round-off: the
## self-checks need |g| and |@{g,H@}| at 1e-14): the Jacobian is re-formed
## at every iterate by forward differences (step sqrt(eps) max(1, |u_j|)) of
## the residual, and the iteration stops once the applied correction is
## below 1e-13 max(1, |u|) (at most 50 iterations, else an error).
## flow (z, 0) is the identity and is not called.
##
## Initial data: if |g(y0)| or |@{g,H@}(y0)| exceeds 1e-12, y0 is first
## moved onto M along the constraint normals, y <- y - G' (G G')^-1 g(y)
## iterated (for the sphere |z|^2 = 1 this is z/|z|, the orthogonal
## projection), then along its fibre onto M_H by the RATTLE projection
## above (sigma nearest 0), with a warning; y(1,:) is that projected point.
##
## Outputs: @var{t} (N+1)-by-1 (t0 = 0), @var{y} (N+1)-by-2d, one row per
## point; @var{stats} with the counted user calls nfevals, nconstrevals,
## nconstrgradevals, nflowevals, the Newton iterations nnewtoniter (SHAKE and
## RATTLE together), nsteps, and y0 (the projected initial point, column).
## @end deftypefn
function [t, y, stats] = plain_geometric_rattle (f, g, gradg, flow, h, N, y0, shake = false)
  y0 = y0(:);
  n2 = numel (y0);
  c = zeros (1, 4);                    # calls of f, g, gradg, flow
  nit = 0;
  ## --- initial data onto M, then along the fibre onto M_H ------------------
  z = y0;
  gz = g (z);  c(2) += 1;
  [hz, ci] = hidden (z, 0, f, gradg);  c += ci;
  if (max (abs (gz)) > 1e-12 || max (abs (hz)) > 1e-12)
    warning ("plain_geometric_rattle:projected",
             "plain_geometric_rattle: y0 off M_H (|g| = %.2g, |{g,H}| = %.2g): projected", max (abs (gz)), max (abs (hz)));
    for k = 1:50
      G = gradg (z);  c(3) += 1;
      dz = G' * ((G * G') \ gz);
      z -= dz;
      gz = g (z);  c(2) += 1;
      if (norm (dz) <= 1e-15 * max (1, norm (z)))
        break;
      endif
    endfor
    [z, ci, ni] = slide_to_MH (z, 0, numel (gz), f, gradg, flow);  c += ci;  nit += ni;
  endif
  m = numel (gz);
  t = h * (0:N).';
  y = zeros (N + 1, n2);
  y(1,:) = z.';
  stats.y0 = z;
  ## --- steps -----------------------------------------------------------------
  for n = 1:N
    tn = t(n);
    u = [z; zeros(m, 1)];
    shake_res = @(u) shake_residual (u, z, tn, h, f, g, gradg, flow, n2);
    [u, ci, ni] = newton (shake_res, u);  c += ci;  nit += ni;
    z = u(1:n2);                                         # z1- (SHAKE)
    if (! shake)
      [z, ci, ni] = slide_to_MH (z, tn + h, m, f, gradg, flow);  c += ci;  nit += ni;
    endif
    y(n+1,:) = z.';
  endfor
  stats.nfevals = c(1);  stats.nconstrevals = c(2);
  stats.nconstrgradevals = c(3);  stats.nflowevals = c(4);
  stats.nnewtoniter = nit;  stats.nsteps = N;
endfunction

## RATTLE's projection: z <- exp(sigma X_g) z with {g, H} = 0 there, Newton
## from sigma = 0.
function [z, c, nit] = slide_to_MH (z, t, m, f, gradg, flow)
  res = @(sig) rattle_residual (sig, z, t, f, gradg, flow);
  [sig, c, nit] = newton (res, zeros (m, 1));
  [z, cf] = apply_flow (flow, gradg, z, sig);  c += cf;
endfunction

## {g_i, H}(z) = grad g_i (z) . f(t, z)  (= g_q H_p - g_p H_q)
function [r, c] = hidden (z, t, f, gradg)
  r = gradg (z) * f (t, z);
  c = [1, 0, 1, 0];
endfunction

function [r, c] = rattle_residual (sig, z, t, f, gradg, flow)
  [zs, c] = apply_flow (flow, gradg, z, sig);
  [r, ch] = hidden (zs, t, f, gradg);
  c += ch;
endfunction

function [r, c] = shake_residual (u, z0, t, h, f, g, gradg, flow, n2)
  z1 = u(1:n2);  s = u(n2+1:end);
  [zp, c] = apply_flow (flow, gradg, z0, s);
  r = [z1 - zp - h * f(t + h / 2, (zp + z1) / 2);
       g(z1)];
  c += [1, 1, 0, 0];
endfunction

## exp(sum_i s_i X_{g_i})(z): the user's flow, or RK4 on y' = J gradg(y)' s.
function [z, c] = apply_flow (flow, gradg, z, s)
  c = zeros (1, 4);
  if (! any (s))
    return;
  endif
  if (! isempty (flow))
    z = flow (z, s);
    c(4) = 1;
    return;
  endif
  K = 64;  dt = 1 / K;
  d = numel (z) / 2;
  X = @(y) Jmul (gradg (y)' * s, d);
  for k = 1:K
    k1 = X (z);
    k2 = X (z + dt / 2 * k1);
    k3 = X (z + dt / 2 * k2);
    k4 = X (z + dt * k3);
    z += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  endfor
  c(3) = 4 * K;
endfunction

## J v with J = [0 I; -I 0]: [v_p; -v_q]
function w = Jmul (v, d)
  w = [v(d+1:end); -v(1:d)];
endfunction

## Newton with a forward-difference Jacobian re-formed at every iterate.
function [u, c, it] = newton (res, u)
  [r, c] = res (u);
  n = numel (u);
  for it = 1:50
    J = zeros (numel (r), n);
    for j = 1:n
      del = sqrt (eps) * max (1, abs (u(j)));
      e = u;  e(j) += del;
      [rj, cj] = res (e);  c += cj;
      J(:,j) = (rj - r) / del;
    endfor
    du = -(J \ r);
    u += du;
    [r, cj] = res (u);  c += cj;
    if (norm (du) <= 1e-13 * max (1, norm (u)))
      return;
    endif
  endfor
  error ("plain_geometric_rattle:newton",
         "plain_geometric_rattle: Newton did not converge (|du| = %g, |r| = %g)", norm (du), norm (r));
endfunction
