## -*- texinfo -*-
## @deftypefn {} {[@var{R}, @var{Om}, @var{xc}, @var{info}] =} heavy_top_reference (@var{which}, @var{tout}, @var{tol})
## Independent reference solution of Hante's heavy top by ode45 on the
## embedded ODE in R^12 (rotation matrix as 9 free numbers, no Lie group
## machinery, no use of heavy_top.m):
##
##   dR/dt = R skew(Om),   Js dOm/dt = (Js Om) x Om + X x (m R' g),
##
## Js = Jc + m (|X|^2 I - X X') the inertia about the support.  Data are
## restated here (m = 15, Jc = diag (0.234375, 0.46875, 0.234375),
## X = (0, 1, 0), g = (0, 0, -9.81), R(0) = I) so that a mistake in
## heavy_top.m cannot leak into the reference.
##
## @var{which}: "slow" or "fast" (Om0 = (0, 1.5, -0.0461538) or
## (0, 150, -4.61538)).  @var{tout}: increasing output times (t0 = 0 is
## prepended when absent).  @var{tol}: RelTol = AbsTol of ode45 (default
## 1e-13; Octave's ode45 takes tolerances down to about 2.3e-14).
## ode45 is run from one output time to the next with a 2-element tspan, so
## every returned value is an accepted step, not an interpolant.
##
## Outputs at the times @var{tout} (K of them): @var{R} 3x3xK, @var{Om} 3xK
## (body angular velocity), @var{xc} 3xK (centre of mass R X, inertial);
## @var{info}: t, E (energy at the outputs), Lz (vertical angular momentum
## about the support), orth (max |R'R - I|), nsteps, time (seconds, wall),
## dE (max |E - E(0)| over all accepted steps of the run).
## @end deftypefn
function [R, Om, xc, info] = heavy_top_reference (which = "slow", tout = 1, tol = 1e-13)
  m = 15;
  Jc = diag ([0.234375, 0.46875, 0.234375]);
  X = [0; 1; 0];
  g = [0; 0; -9.81];
  Js = Jc + m * ((X' * X) * eye (3) - X * X');
  switch (lower (which))
    case "slow"
      Om0 = [0; 1.5; -0.0461538];
    case "fast"
      Om0 = [0; 150; -4.61538];
    otherwise
      error ("heavy_top_reference: which must be \"slow\" or \"fast\"");
  endswitch
  tout = tout(:).';
  if (tout(1) != 0)
    tout = [0, tout];
    drop = true;
  else
    drop = false;
  endif
  rhs = @(t, z) ode_rhs (z, Js, X, m, g);
  energy = @(z) 0.5 * z(10:12)' * Js * z(10:12) - m * g' * (reshape (z(1:9), 3, 3) * X);
  opts = odeset ("RelTol", tol, "AbsTol", tol, "Refine", 1, ...
                 "InitialStep", 1e-4 / max (1, norm (Om0)));
  z = [reshape(eye (3), 9, 1); Om0];
  Z = zeros (12, numel (tout));
  Z(:,1) = z;
  E0 = energy (z);
  dE = 0;  nst = 0;
  tic_id = tic;
  for k = 2:numel (tout)
    [tt, zz] = ode45 (rhs, [tout(k-1), tout(k)], z, opts);
    z = zz(end,:).';
    Z(:,k) = z;
    nst += numel (tt) - 1;
    for j = 1:rows (zz)
      dE = max (dE, abs (energy (zz(j,:).') - E0));
    endfor
  endfor
  info.time = toc (tic_id);
  if (drop)
    Z = Z(:,2:end);  tout = tout(2:end);
  endif
  K = columns (Z);
  R = reshape (Z(1:9,:), 3, 3, K);
  Om = Z(10:12,:);
  xc = zeros (3, K);  info.E = zeros (1, K);  info.Lz = zeros (1, K);
  info.orth = 0;
  for k = 1:K
    xc(:,k) = R(:,:,k) * X;
    info.E(k) = energy (Z(:,k));
    L = R(:,:,k) * Js * Om(:,k);
    info.Lz(k) = L(3);
    info.orth = max (info.orth, max (max (abs (R(:,:,k)' * R(:,:,k) - eye (3)))));
  endfor
  info.t = tout;
  info.nsteps = nst;
  info.dE = dE;
  info.E0 = E0;
endfunction

function dz = ode_rhs (z, Js, X, m, g)
  R = reshape (z(1:9), 3, 3);
  w = z(10:12);
  W = [0, -w(3), w(2); w(3), 0, -w(1); -w(2), w(1), 0];
  Rd = R * W;
  dw = Js \ (cross (Js * w, w) + cross (X, m * (R' * g)));
  dz = [Rd(:); dw];
endfunction
