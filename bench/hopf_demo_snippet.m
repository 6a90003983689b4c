## Geometric SHAKE and RATTLE for a constraint on positions AND momenta:
## g(q, p) = |q|^2 + |p|^2 - 1 (M = S^3, its fibres the circles of the Hopf
## fibration), H = |p|^2/2 - gvec.q with gvec = (0, -1), implicit midpoint
## rule as base method, h = 0.1 (McLachlan, Modin, Verdier, Wilkins,
## Sect. 5.4.2, Fig. 4 and 5).  The initial data of their Table 1 have
## |z|^2 = 0.98: the solvers project them onto M and along the fibre onto
## {g, H} = 0 (the warning is silenced here).
f = @(t, y) [y(3:4); 0; -1];
gH = @(y) 2 * (sum (y(:,1:2) .* y(:,3:4), 2) - y(:,4));   # {g, H} = grad g . f
energy = @(y) sum (y(:,3:4).^2, 2) / 2 + y(:,2);
opts = odepkgset ("ConstraintVariables", "qp", "ConstraintsNb", 1, ...
                  "ConstraintFcn", @(y) y' * y - 1, "ConstraintGradFcn", @(y) 2 * y', ...
                  "ConstraintFlowFcn", @(y, s) [cos(2*s) * y(1:2) + sin(2*s) * y(3:4); ...
                                               -sin(2*s) * y(1:2) + cos(2*s) * y(3:4)], ...
                  "BaseMethod", "midpoint", "TimeStepSize", 0.1, "TimeStepNumber", 2500);
Z = [-0.7865261200000000, -0.4963624948824013,  0.3477491188213400;   # za, zb, zc:
     -0.4043988000000000, -0.7319740436366664, -0.8131619010029159;   # [q0; q1; p0; p1]
     -0.3880746864163783, -0.4275775933953260, -0.4368285559113795;
      0.2173391755798215,  0.1225384882604160, -0.0837800227934176];
ws = warning ("off", "odepkg:inconsistentInitialData");
## Hopf map (z0, z1) -> (2 z0 conj (z1), |z0|^2 - |z1|^2), z_k = q_k + i p_k,
## then the stereographic projection (zeta, rho) -> zeta / (sqrt (|zeta|^2 + rho^2) + rho):
## from the pole rho = -1.  (The paper's caption prints "- rho", the other pole;
## with it [z_a] passes through infinity, and the picture of its Fig. 4, [z_a]
## innermost, is this one's inversion w -> 1/conj (w).)
subplot (2, 2, [1, 3]);  hold on;
for k = 1:3
  [t, y] = odeRATTLE (f, 0, Z(:,k), opts);
  z0 = y(:,1) + 1i * y(:,3);  z1 = y(:,2) + 1i * y(:,4);
  zeta = 2 * z0 .* conj (z1);  rho = abs (z0).^2 - abs (z1).^2;
  w = zeta ./ (sqrt (abs (zeta).^2 + rho.^2) + rho);
  plot (real (w), imag (w), ".", "markersize", 2);
endfor
hold off;  axis ("equal");
title ("[za] (inner), [zb], [zc]: RATTLE on [M] = CP^1", "interpreter", "none");
[tr, yr] = odeRATTLE (f, 0, Z(:,1), opts);
[ts, ys] = odeSHAKE (f, 0, Z(:,1), opts);
warning (ws);
subplot (2, 2, 2);
plot (ts, energy (ys) - energy (ys(1,:)), tr, energy (yr) - energy (yr(1,:)));
legend ("SHAKE", "RATTLE");  title ("energy error, za", "interpreter", "none");
subplot (2, 2, 4);
semilogy (ts, abs (gH (ys)) + eps, tr, abs (gH (yr)) + eps);
set (gca, "ytick", 10.^(-16:4:0));
legend ("SHAKE", "RATTLE");  xlabel ("t");
title ("hidden constraint |{g, H}|, za", "interpreter", "none");
