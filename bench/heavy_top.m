## -*- texinfo -*-
## @deftypefn {} {@var{P} =} heavy_top (@var{formulation}, @var{which})
## The heavy top of S. Hante's heavy_top test problem (see below)
## in one of five Lie group formulations, as data for odeRATTLie and for
## bench/plain_rattlie.m.
##
## @var{formulation}: "SO3", "S3" (unconstrained rotation about the fixed
## support point), "SO3xR3", "S3xR3", "SE3" (constrained: the centre of
## mass is a free point of R^3 tied to the body by Phi = 0).
## @var{which}: "slow" (Omega0 = (0, 1.5, -0.0461538), default) or "fast"
## (Omega0 = (0, 150, -4.61538)), body angular velocity.
##
## Data (Hante's test/config.lua and test/diss_config_ref_{slow,fast}.lua):
## mass m = 15, inertia about the centre of mass Jc = diag (0.234375,
## 0.46875, 0.234375), centre of mass at X = (0, 1, 0) in the body frame
## from the support (origin), gravity g = (0, 0, -9.81), R(0) = I.
##
## Formulations (all with v = body angular velocity Omega first):
## @table @asis
## @item "SO3"  q = R(:) (9), v = Omega (3), M = J = Jc + m (|X|^2 I - X X'),
##   the inertia about the support; f = -tau with tau = X x (m R' g) the
##   body-frame torque of gravity about the support.  No constraints.
## @item "S3"   q = p (unit quaternion, scalar first), R = R(p); as "SO3".
## @item "SO3xR3"  q = [R(:); x], x = centre of mass (inertial frame),
##   v = [Omega; xdot], M = blkdiag (Jc, m I), f = [0; 0; 0; -m g],
##   Phi(q) = R' x - X  (body-frame form, as Hante's code; NOT x - R X),
##   B(q) = [skew(R' x), R'], exact derivative along left translations
##   (on Phi = 0 it equals Hante's [skew(X), R']).
## @item "S3xR3"  q = [p; x] (7), the same with R = R(p).
## @item "SE3"  q = [R(:); x] (12), (R1,x1)(R2,x2) = (R1 R2, x1 + R1 x2),
##   v = [Omega; U] with U = R' xdot (body translational velocity),
##   M = blkdiag (Jc, m I), f = [0; 0; 0; -m R' g], Phi = R' x - X,
##   B = [skew(R' x), I] (on Phi = 0: Hante's [skew(X), I]).
## @end table
## Consistent initial velocity: xdot0 = R0 (Omega0 x X) (Hante: u0 =
## R(p0) cross(Om0, X)), U0 = Omega0 x X; then B(q0) v0 = 0 exactly.
##
## Fields of @var{P}: group (LieGroup name), formulation, which, nq, n, m
## (number of constraints, 0 if none), M, f (@@(t, y)), phi, B (@@(q), or []
## when unconstrained), Z (@@(q, v): curvature term d/de [B(q o exp(e v)) v]),
## y0 = [q0; v0], and checks taking a column y = [q; v] (or a matrix
## whose columns are such states):
## E (energy), Lz (vertical angular momentum about the support, inertial
## z-component), R (rotation matrix, 3x3 for one state), Omega (body angular
## velocity), xc (centre of mass, inertial frame), plus the constants mass,
## Jc, Js (inertia about the support), X, gvec, Omega0.
##
## Checked against github:StHante/heavy_top (src/heavy_top.F90, functions
## M, inertial, f, Phi, B, Z, and test/*.lua) for the data, the sign of f
## (Hante returns the negative of the applied forces: f = m X x (R' g) for
## SO(3), [0; -m g] for SO(3)xR3), Phi = R'x - X and B.
## @end deftypefn
function P = heavy_top (formulation = "SO3", which = "slow")
  mass = 15;
  Jc = diag ([0.234375, 0.46875, 0.234375]);
  X = [0; 1; 0];
  gvec = [0; 0; -9.81];
  switch (lower (which))
    case "slow"
      Om0 = [0; 1.5; -0.0461538];
    case "fast"
      Om0 = [0; 150; -4.61538];
    otherwise
      error ("heavy_top: which must be \"slow\" or \"fast\"");
  endswitch
  Js = Jc + mass * ((X' * X) * eye (3) - X * X');
  P.formulation = formulation;
  P.which = lower (which);
  P.mass = mass;  P.Jc = Jc;  P.Js = Js;  P.X = X;  P.gvec = gvec;
  P.Omega0 = Om0;
  R0 = eye (3);
  p0 = [1; 0; 0; 0];
  x0 = R0 * X;
  switch (formulation)
    case "SO3"
      P.group = "SO3";  P.nq = 9;  P.n = 3;  P.m = 0;
      P.M = Js;
      mSX = -mass * skew (X);          # f = -X x (m R' g)
      P.f = @(t, y) mSX * (reshape (y(1:9), 3, 3)' * gvec);
      P.phi = [];  P.B = [];  P.Z = [];
      P.y0 = [R0(:); Om0];
      Rof = @(y) reshape (y(1:9), 3, 3);
    case "S3"
      P.group = "S3";  P.nq = 4;  P.n = 3;  P.m = 0;
      P.M = Js;
      mSX = -mass * skew (X);
      P.f = @(t, y) mSX * (quat2R (y(1:4))' * gvec);
      P.phi = [];  P.B = [];  P.Z = [];
      P.y0 = [p0; Om0];
      Rof = @(y) quat2R (y(1:4));
    case {"SO3xR3", "S3xR3"}
      P.group = formulation;  P.n = 6;  P.m = 3;
      if (strcmp (formulation, "SO3xR3"))
        P.nq = 12;  Rq = @(q) reshape (q(1:9), 3, 3);
        P.y0 = [R0(:); x0; Om0; R0 * cross(Om0, X)];
      else
        P.nq = 7;   Rq = @(q) quat2R (q(1:4));
        P.y0 = [p0; x0; Om0; R0 * cross(Om0, X)];
      endif
      nq = P.nq;
      P.M = blkdiag (Jc, mass * eye (3));
      fc = [0; 0; 0; -mass * gvec];
      P.f = @(t, y) fc;
      P.phi = @(q) Rq (q)' * q(nq-2:nq) - X;
      P.B = @(q) [skew(Rq (q)' * q(nq-2:nq)), Rq(q)'];
      ## d/de [skew(R'x) Om + R'u] along (R exp(e Om^), x + e u)
      P.Z = @(q, v) cross (-cross (v(1:3), Rq (q)' * q(nq-2:nq)) + Rq (q)' * v(4:6), v(1:3)) ...
                    - cross (v(1:3), Rq (q)' * v(4:6));
      Rof = @(y) Rq (y);
    case "SE3"
      P.group = "SE3";  P.nq = 12;  P.n = 6;  P.m = 3;
      P.M = blkdiag (Jc, mass * eye (3));
      P.f = @(t, y) [0; 0; 0; -mass * reshape(y(1:9), 3, 3)' * gvec];
      P.phi = @(q) reshape (q(1:9), 3, 3)' * q(10:12) - X;
      P.B = @(q) [skew(reshape (q(1:9), 3, 3)' * q(10:12)), eye(3)];
      ## d/de [skew(R'x) Om + U] along (R exp(e Om^), x + e R U)
      P.Z = @(q, v) cross (-cross (v(1:3), reshape (q(1:9), 3, 3)' * q(10:12)) + v(4:6), v(1:3));
      P.y0 = [R0(:); x0; Om0; cross(Om0, X)];
      Rof = @(y) reshape (y(1:9), 3, 3);
    otherwise
      error ("heavy_top: unknown formulation '%s'", formulation);
  endswitch
  nq = P.nq;  n = P.n;
  P.R = Rof;
  P.Omega = @(y) y(nq+1:nq+3, :);
  switch (formulation)
    case {"SO3", "S3"}
      P.xc = @(y) Rof (y) * X;
      P.E = @(y) colmap (@(z) 0.5 * z(nq+1:end)' * Js * z(nq+1:end) - mass * gvec' * (Rof (z) * X), y);
      P.Lz = @(y) colmap (@(z) [0 0 1] * Rof (z) * Js * z(nq+1:end), y);
    case {"SO3xR3", "S3xR3"}
      P.xc = @(y) y(nq-2:nq, :);
      P.E = @(y) colmap (@(z) 0.5 * z(nq+1:nq+3)' * Jc * z(nq+1:nq+3) + 0.5 * mass * sumsq (z(nq+4:nq+6)) - mass * gvec' * z(nq-2:nq), y);
      P.Lz = @(y) colmap (@(z) [0 0 1] * (Rof (z) * Jc * z(nq+1:nq+3) + mass * cross (z(nq-2:nq), z(nq+4:nq+6))), y);
    case "SE3"
      P.xc = @(y) y(10:12, :);
      P.E = @(y) colmap (@(z) 0.5 * z(13:15)' * Jc * z(13:15) + 0.5 * mass * sumsq (z(16:18)) - mass * gvec' * z(10:12), y);
      P.Lz = @(y) colmap (@(z) [0 0 1] * (Rof (z) * Jc * z(13:15) + mass * cross (z(10:12), Rof (z) * z(16:18))), y);
  endswitch
endfunction

function r = colmap (fn, y)
  r = zeros (1, columns (y));
  for k = 1:columns (y)
    r(k) = fn (y(:,k));
  endfor
endfunction

function S = skew (w)
  S = [0, -w(3), w(2); w(3), 0, -w(1); -w(2), w(1), 0];
endfunction

## rotation matrix of the unit quaternion p = [p0; pv] (scalar first)
function R = quat2R (p)
  p0 = p(1);  pv = p(2:4);  pv = pv(:);
  R = (p0^2 - pv' * pv) * eye (3) + 2 * (pv * pv') + 2 * p0 * skew (pv);
endfunction
