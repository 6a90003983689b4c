## -*- texinfo -*-
## @deftypefn {} {@var{r} =} parallel_sweep (@var{N}, @var{steps}, @var{runs})
## Benchmark (not a test): a sweep of long runs in one process against
## @code{odepkg_sweep} with 2 local workers (octave-parallel's
## @code{parcellfun}) over two halves.  2@var{N} Hénon--Heiles orbits
## (H = |p|^2/2 + |q|^2/2 + q1^2 q2 - q2^3/3, energy 1/12, from q = (0, y0),
## y0 spread over [-0.15, 0.25]) by explicit Störmer--Verlet, h = 0.01,
## @var{steps} fixed steps each, the states output once per time unit
## (every 100 steps: what crosses from the workers is small).
##
## One process: one ensemble call of odeSV over all 2N members where the
## solver takes a matrix Y0 (odepkg's ensemble mode), otherwise the members
## one after the other.  Parallel: @code{"Workers", 2} with two chunks of N
## members (each an ensemble call, or a plain run for N = 1; without
## ensemble mode one chunk per member, handed to the two workers as they
## free up).  The two are timed side by side, alternating, @var{runs} times
## each (default 3) after one warm-up of each; the medians, their ratio
## (the speed-up), the largest difference of the two results and the load
## average of the machine are printed.  Returns the figures in a struct.
##
## Defaults, for runs of about 1-2 s per half on a quiet machine: without
## ensemble mode N = 1 and 50,000 steps (each orbit a run of its own); with
## it N = 250 and 10,000 steps (a batched call costs about what one member
## does until the members' own work dominates, which takes hundreds).
##
## From the repository root, with the package installed (make install):
## @example
## HOME=$PWD/build/home octave-cli --norc --eval 'pkg load odepkg; addpath ("bench"); parallel_sweep ()'
## @end example
## @end deftypefn
function r = parallel_sweep (N = [], steps = [], runs = 3)
  pkg load parallel
  f = @(t, Y) [Y(3:4,:); -(Y(1,:) + 2 * Y(1,:) .* Y(2,:)); -(Y(2,:) + Y(1,:).^2 - Y(2,:).^2)];
  h = 0.01;
  o = odepkgset ("TimeStepSize", h, "Explicit", "yes");
  ensemble = true;
  try
    probe = odeSV (f, 0, [0 0; 0.1 0.2; 0.4 0.39; 0 0], odepkgset (o, "TimeStepNumber", 2));
  catch
    ensemble = false;
  end_try_catch
  if (isempty (N))
    N = ifelse (ensemble, 250, 1);
  endif
  if (isempty (steps))
    steps = ifelse (ensemble, 10000, 50000);
  endif
  K = 2 * N;
  E = 1/12;
  q2 = linspace (-0.15, 0.25, K);
  p1 = sqrt (2 * E - q2.^2 + 2 * q2.^3 / 3);
  Y0 = [zeros(1, K); q2; p1; zeros(1, K)];
  tspan = 0:1:steps * h;
  if (ensemble)
    serial = @() odeSV (f, tspan, Y0, o);
    chunks = 2;
    how = "one ensemble call over all members";
  else
    serial = @() member_by_member (f, tspan, Y0, o);
    chunks = K;
    how = "the members one after the other (no ensemble mode in this tree)";
  endif
  par = @() odepkg_sweep (@odeSV, f, tspan, Y0, o, "Workers", 2, "Chunks", chunks);

  printf ("Henon-Heiles, E = 1/12: %d orbits x %d steps (h = 0.01, output every 100), explicit odeSV; %d cores\n",
          K, steps, nproc ());
  printf ("one process: %s\n", how);
  printf ("parallel: odepkg_sweep, 2 workers (parcellfun), %d chunks\n", chunks);
  load0 = loadavg ();
  s = serial ();  p = par ();                  # warm-up
  ts = zeros (runs, 1);  tp = zeros (runs, 1);
  for k = 1:runs
    t0 = tic ();  s = serial ();  ts(k) = toc (t0);
    t0 = tic ();  p = par ();  tp(k) = toc (t0);
  endfor
  load1 = loadavg ();
  diffy = max (abs (s.y(:) - p.y(:)));
  r = struct ("orbits", K, "steps", steps, "serial", median (ts), "parallel", median (tp),
              "speedup", median (ts) / median (tp), "maxdiff", diffy, "ensemble", ensemble,
              "load", [load0, load1]);
  printf ("%-28s %s\n", "one process [s]:", sprintf ("%8.3f", ts));
  printf ("%-28s %s\n", "2 workers [s]:", sprintf ("%8.3f", tp));
  printf ("medians: one process %.3f s, 2 workers %.3f s: speed-up %.2f\n",
          r.serial, r.parallel, r.speedup);
  printf ("largest difference of the results: %g (round-off where plain runs meet ensemble calls)\n", diffy);
  printf ("load average (1 min) before/after: %.2f / %.2f\n", load0, load1);
endfunction

## the one-process reference without ensemble mode, shaped as sol.y (2d x N x K)
function s = member_by_member (f, tspan, Y0, o)
  for k = columns (Y0):-1:1
    sol = odeSV (f, tspan, Y0(:,k), o);
    s.y(:,:,k) = sol.y;
  endfor
endfunction

function l = loadavg ()
  l = NaN;
  if (exist ("/proc/loadavg", "file"))
    l = sscanf (fileread ("/proc/loadavg"), "%f", 1);
  endif
endfunction

function v = ifelse (c, a, b)
  if (c)
    v = a;
  else
    v = b;
  endif
endfunction
