## -*- texinfo -*-
## @deftypefn {} {} native_vs_odeint (@var{exe}, @var{N}, @var{NH}, @var{runs})
## Kepler (e = 0.5 from the pericentre, h = 10^-3), explicit Störmer–Verlet:
## ns per step of odeSV with a native model of odepkg_model, called from
## Octave, against Boost.Odeint's velocity_verlet on the same force (the
## program @var{exe}, built from native_vs_odeint.cc by native_vs_odeint.sh),
## and against odeSV with a function handle.  Run by
## @code{bash bench/native_vs_odeint.sh}.
##
## Per round, side by side: odeint with the force inlined (its best case);
## odeint calling the model's own compiled kernel odepkg_f through dlopen
## (the kernel's cost without our loop); odeSV with the model, @var{N}
## steps (default 10^6), output at t = 0, T/2, T only (the loop); the same
## with every step output (tspan = [0 T]: the loop plus storing N + 1
## states); odeSV with the hand-written handle f, @var{NH} steps (default
## 10^5: about 1 s).  Medians of @var{runs} rounds (default 5) after a
## warm-up; the ratios are of these medians.  Both Störmer–Verlet and
## velocity Verlet are kick-drift-kick with one force per step here (H is
## separable, T = |p|^2/2): the end states agree to round-off.  Times are
## CPU times (cputime here, the thread's CPU clock in the program): on a
## shared machine what the scheduler gives to other processes is left out.
## @end deftypefn
function native_vs_odeint (exe, N = 1e6, NH = 1e5, runs = 5)
  pkg load symbolic
  syms q1 q2 p1 p2 real
  cache = tempname ();
  m = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2], "p", [p1 p2],
                    "CacheDir", cache);
  f = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];
  e = 0.5;
  y0 = [1 - e; 0; 0; sqrt((1 + e) / (1 - e))];
  h = 1e-3;
  o = odepkgset ("TimeStepSize", h, "Explicit", "yes");
  T = N * h;  TH = NH * h;
  inl = sprintf ('"%s" inline %d', exe, N);
  ker = sprintf ('"%s" kernel %d "%s"', exe, N, m.file);

  la0 = strtrim (fileread ("/proc/loadavg"));
  [~, ~] = odeSV (m, [0 100*h], y0, o);  [~, ~] = odeSV (f, [0 100*h], y0, o);  ns_of (inl);  ns_of (ker);   # warm-up
  [t_inl, t_ker, t_nat, t_all, t_hnd] = deal (zeros (1, runs));
  for r = 1:runs
    [t_inl(r), y_inl] = ns_of (inl);
    t_ker(r) = ns_of (ker);
    t0 = cputime ();  [~, yn] = odeSV (m, [0 T/2 T], y0, o);  t_nat(r) = 1e9 * (cputime () - t0) / N;
    t0 = cputime ();  [ta, ya] = odeSV (m, [0 T], y0, o);  t_all(r) = 1e9 * (cputime () - t0) / N;
    clear ta ya
    t0 = cputime ();  [~, yh] = odeSV (f, [0 TH/2 TH], y0, o);  t_hnd(r) = 1e9 * (cputime () - t0) / NH;
  endfor
  la1 = strtrim (fileread ("/proc/loadavg"));
  [~, yn_short] = odeSV (m, [0 TH/2 TH], y0, o);

  md = @(x) median (x);
  printf ("Kepler e = 0.5, explicit Stormer-Verlet, h = %g; CPU ns per step, median of %d rounds (range)\n", h, runs);
  row = @(label, x) printf ("  %-62s %9.1f  (%.1f-%.1f)\n", label, md (x), min (x), max (x));
  row (sprintf ("Boost.Odeint velocity_verlet, force inlined, %g steps", N), t_inl);
  row (sprintf ("Boost.Odeint velocity_verlet, the model's odepkg_f, %g steps", N), t_ker);
  row (sprintf ("odeSV, native model, %g steps, output at 3 times", N), t_nat);
  row (sprintf ("odeSV, native model, %g steps, every step output", N), t_all);
  row (sprintf ("odeSV, function handle, %g steps, output at 3 times", NH), t_hnd);
  printf ("  ratio native model / odeint (inlined force):   %6.2f x   (target <= 3)\n", md (t_nat) / md (t_inl));
  printf ("  ratio native model / odeint (model's kernel):  %6.2f x\n", md (t_nat) / md (t_ker));
  printf ("  cost of storing every step: %.1f ns per step\n", md (t_all) - md (t_nat));
  printf ("  speed-up native model over function handle:    %6.1f x   (target >= 50; handle run of %g steps)\n",
          md (t_hnd) / md (t_nat), NH);
  printf ("  end state |native - odeint| at t = %g: %.2g;  |native - handle| at t = %g: %.2g\n",
          T, max (abs (yn(end,:) - y_inl)), TH, max (abs (yn_short(end,:) - yh(end,:))));
  printf ("  load average before: %s\n               after:  %s\n", la0, la1);
  confirm_recursive_rmdir (false, "local");
  rmdir (cache, "s");
endfunction

## One run of the odeint program: its own loop time per step and end state.
function [ns, y] = ns_of (cmd)
  [status, out] = system (cmd);
  if (status != 0)
    error ("native_vs_odeint: %s failed: %s", cmd, out);
  endif
  ns = sscanf (regexp (out, 'ns_per_step (\S+)', "tokens", "once"){1}, "%f");
  y = sscanf (regexp (out, 'end ([^\n]+)', "tokens", "once"){1}, "%f").';
endfunction
