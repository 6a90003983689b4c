## -*- texinfo -*-
## @deftypefn {} {} outer_solar_system (@var{h}, @var{runs}, @var{T})
## The outer solar system of Hairer, Lubich and Wanner, Geometric Numerical
## Integration (2nd ed., Sect. I.2.4): the Sun with the inner planets,
## Jupiter, Saturn, Uranus, Neptune and Pluto, 6 bodies in space, masses
## relative to the Sun, AU and days, G = 2.95912208286e-4,
## H = sum |p_i|^2 / (2 m_i) - G sum_{i<j} m_i m_j / |q_i - q_j|
## (18 q, 18 p; p_i = m_i v_i), over @var{T} = 2e5 days (default).
##
## odeSV with "Order" 8 (KahanLi8 over explicit Störmer–Verlet) and a
## native model of odepkg_model (H written with the 6 bodies; G and the
## masses are its parameters, given at call time) at the fixed steps
## @var{h} (default [100 50 25] days), against ode45 at RelTol 1e-10
## (AbsTol 1e-10, "Refine" 1: the energy at its own steps, not at
## interpolated points) on the hand-written f.  Per run: the largest
## relative energy error |H/H0 - 1| over all steps and at the end, the time
## (median of @var{runs}, default 3, side by side, alternating, after a
## warm-up) and the ratio of ode45's time to each odeSV run (target >= 100
## at the same or a smaller energy error).  Also the model's build time.
## @end deftypefn
function outer_solar_system (h = [100 50 25], runs = 3, T = 2e5)
  pkg load symbolic
  [Gc, mass, q0, v0] = outer_solar_system_data ();
  p0 = v0 .* mass.';                     # 3-by-6: p_i = m_i v_i
  y0 = [q0(:); p0(:)];
  par = [Gc; mass];

  ## the model: H in the 6 bodies, G and the masses as parameters
  q = sym ("q", [18 1]);  p = sym ("p", [18 1]);  m = sym ("m", [6 1]);
  G = sym ("G");
  H = 0;
  for i = 1:6
    H += sum (p(3*i-2:3*i).^2) / (2 * m(i));
  endfor
  for i = 1:6
    for j = i+1:6
      H -= G * m(i) * m(j) / sqrt (sum ((q(3*i-2:3*i) - q(3*j-2:3*j)).^2));
    endfor
  endfor
  cache = tempname ();
  t0 = tic ();
  [model, info] = odepkg_model ("H", H, "q", q, "p", p, "Parameters", [G; m], "CacheDir", cache);
  build = toc (t0);

  ## ode45: the same H's f written by hand, vectorised over the bodies
  f = @(t, y) field (y, Gc, mass);
  H0 = energy (y0, Gc, mass);
  o45 = odeset ("RelTol", 1e-10, "AbsTol", 1e-10, "Refine", 1);
  sv = @(hh) odeSV (model, [0 T], y0, odepkgset ("TimeStepSize", hh, "Order", 8), par);
  run45 = @() ode45 (f, [0 T], y0, o45);

  la0 = strtrim (fileread ("/proc/loadavg"));
  [~, ~] = sv (h(1));  [~, ~] = ode45 (f, [0 1000], y0, o45);   # warm-up (outputs: none plots)
  t45 = zeros (1, runs);  tsv = zeros (numel (h), runs);
  for r = 1:runs
    t0 = cputime ();  [ta, ya] = run45 ();  t45(r) = cputime () - t0;
    for k = 1:numel (h)
      t0 = cputime ();  [tb{k}, yb{k}] = sv (h(k));  tsv(k,r) = cputime () - t0;
    endfor
  endfor
  la1 = strtrim (fileread ("/proc/loadavg"));

  rel = @(y) abs (energy (y.', Gc, mass) / H0 - 1);
  e45 = rel (ya);
  printf ("Outer solar system (Hairer, Lubich, Wanner I.2.4), 6 bodies, t = 0 ... %g days, H0 = %.12g\n", T, H0);
  printf ("  model build (derive + compile, cache miss): %.2f s (derive %.2f s, compile %.2f s)\n",
          build, info.derive_seconds, info.compile_seconds);
  printf ("  %-44s %8s %12s %12s %10s %9s\n", "", "steps", "max|dH/H0|", "end|dH/H0|", "CPU [s]", "ode45/x");
  printf ("  %-44s %8d %12.2e %12.2e %10.3f %9s\n", "ode45, RelTol = AbsTol = 1e-10, hand-written f",
          numel (ta) - 1, max (e45), e45(end), median (t45), "1");
  for k = 1:numel (h)
    e = rel (yb{k});
    printf ("  %-44s %8d %12.2e %12.2e %10.4f %9.1f\n",
            sprintf ("odeSV Order 8, native model, h = %g days", h(k)), numel (tb{k}) - 1,
            max (e), e(end), median (tsv(k,:)), median (t45) / median (tsv(k,:)));
  endfor
  printf ("  (medians of %d runs, side by side; target: >= 100x faster at the same or a smaller error)\n", runs);
  yend = yb{end}(end,:).';  dq = reshape (yend(1:18) - ya(end,1:18).', 3, 6);
  printf ("  largest distance between the two runs' bodies at t = %g: %.3g AU (Jupiter %.3g AU)\n",
          T, max (sqrt (sum (dq.^2))), norm (dq(:,2)));
  printf ("  load average before: %s\n               after:  %s\n", la0, la1);
  confirm_recursive_rmdir (false, "local");
  rmdir (cache, "s");
endfunction

## Hairer, Lubich, Wanner, Geometric Numerical Integration, Sect. I.2.4,
## Table 2.1 (checked against two independent transcriptions of the table:
## the SciML benchmark "The Outer Solar System" and the MatMol group's
## G_solar.m).  Columns: Sun (with the inner planets), Jupiter, Saturn,
## Uranus, Neptune, Pluto; positions in AU, velocities in AU/day.
function [G, mass, q0, v0] = outer_solar_system_data ()
  G = 2.95912208286e-4;
  mass = [1.00000597682; 0.000954786104043; 0.000285583733151;
          0.0000437273164546; 0.0000517759138449; 1 / 1.3e8];
  q0 = [0 0 0;
        -3.5023653 -3.8169847 -1.5507963;
        9.0755314 -3.0458353 -1.6483708;
        8.3101420 -16.2901086 -7.2521278;
        11.4707666 -25.7294829 -10.8169456;
        -15.5387357 -25.2225594 -3.1902382].';
  v0 = [0 0 0;
        0.00565429 -0.00412490 -0.00190589;
        0.00168318 0.00483525 0.00192462;
        0.00354178 0.00137102 0.00055029;
        0.00288930 0.00114527 0.00039677;
        0.00276725 -0.00170702 -0.00136504].';
endfunction

## f = [H_p; -H_q] at y = [q; p] (36-by-1), all pairs at once (6-by-6
## arrays: a few interpreted statements per call, not one per pair)
function dy = field (y, G, mass)
  q = reshape (y(1:18), 3, 6);  p = reshape (y(19:36), 3, 6);
  dx = q(1,:) - q(1,:).';  dy_ = q(2,:) - q(2,:).';  dz = q(3,:) - q(3,:).';   # (i,j): q_j - q_i
  w = G ./ ((dx.^2 + dy_.^2 + dz.^2) .^ 1.5 + eye (6)) .* mass.';             # G m_j / r_ij^3
  w(1:7:end) = 0;
  a = [sum(w .* dx, 2), sum(w .* dy_, 2), sum(w .* dz, 2)].';                  # accelerations
  dy = [reshape(p ./ mass.', 18, 1); reshape(a .* mass.', 18, 1)];
endfunction

## H at each column of Y (36-by-n)
function E = energy (Y, G, mass)
  n = columns (Y);
  E = zeros (1, n);
  for i = 1:6
    E += sum (Y(18+3*i-2:18+3*i,:).^2) / (2 * mass(i));
  endfor
  for i = 1:6
    for j = i+1:6
      E -= G * mass(i) * mass(j) ./ sqrt (sum ((Y(3*i-2:3*i,:) - Y(3*j-2:3*j,:)).^2));
    endfor
  endfor
endfunction
