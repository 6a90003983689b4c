## -*- texinfo -*-
## @deftypefn {} {} native_chain (@var{exe}, @var{Ns}, @var{runs})
## The planar hanging chain of N unit links as a native model, against the
## C++ core's own cost of the same chain (issue 41: "the derived sparse G
## keeps the step within 1.2x of the C++ core's own cost").  Run by
## @code{bash bench/native_chain.sh}, which builds @var{exe} from
## native_chain.cc.
##
## For each N in @var{Ns} (default [1e3 1e4 1e5]): H = |p|^2/2 + sum y_k,
## g_k = |x_k - x_(k-1)|^2 - 1 (x_0 = 0), written as strings with
## q = [x1 y1 x2 y2 ...] and p = [u1 v1 u2 v2 ...] (the C++ program's
## order, so G has the same band), built by odepkg_model into a fresh cache
## folder (first build: derivation and gcc; then the same call again: the
## cached build).  From the zigzag at rest (links at 0.2 and 0.6 rad below
## the horizontal), h = 0.01, explicit RATTLE (the model's H is separable,
## G sparse: SparseSeparableRattle).  Per round, side by side:
## @itemize
## @item the program with its own C++ callbacks: K1 steps, then K2 - K1
## steps timed one by one (thread CPU clock); median and mean per step;
## @item the same program with the model's compiled kernels (loaded as the
## oct-file loads them): the kernels' cost without Octave;
## @item odeRATTLE with the model, K1 and K2 steps, output at t = 0, T/2
## and T only (at fixed steps a tspan of more than two times outputs only
## those: the loop, not the storage of 4N numbers a step); the marginal
## cost per step (CPU time of the K2 run - that of the K1 run) / (K2 - K1).
## @end itemize
## K1 = 20 (past the sparse step's learning of the quadratic T, 8 steps),
## K2 = 220 (t = 2.2: later the chain's free end whips, the position
## Newton takes ever more iterations, and at t = 13 to 38 fails to
## converge at this h); each odeRATTLE run repeated so that the K2 runs of
## a round take about 1 s of CPU.  Medians of @var{runs} rounds (default 5)
## after a warm-up.  The ratio is odeRATTLE's marginal cost over the
## program's mean (the same steps K1 + 1 .. K2: the cost varies with the
## Newton iterations a step takes); the median is shown too.  The
## program's state after K2 steps is compared with odeRATTLE's end state.
## @end deftypefn
function native_chain (exe, Ns = [1e3 1e4 1e5], runs = 5)
  h = 0.01;
  K1 = 20;  M = 200;  K2 = K1 + M;
  o = odepkgset ("TimeStepSize", h);
  ## Python and SymPy started once, so that the first build of each chain
  ## is its derivation and compilation only
  warm = tempname ();
  odepkg_model ("H", "(p1^2 + p2^2)/2 + q2", "q", "q1 q2", "p", "p1 p2", "g", "q1^2 + q2^2 - 1", "CacheDir", warm);
  confirm_recursive_rmdir (false, "local");
  rmdir (warm, "s");

  la0 = strtrim (fileread ("/proc/loadavg"));
  res = {};
  for N = Ns
    [m, build, again, info, csize] = chain_model (N);
    y0 = [zigzag(N); zeros(2 * N, 1)];
    out = [tempname() ".bin"];
    own = sprintf ('"%s" %d %d %d %d "%s"', exe, N, K1, M, K2, out);
    ker = sprintf ('%s "%s"', own, m.file);

    [~, y] = odeRATTLE (m, [0 K1*h/2 K1*h], y0, o);    # warm-up
    [~, est] = run_program (own);
    reps = max (1, round (1000 / (M * est)));           # about 1 s of steps per timed run
    [a_med, a_mean, b_mean, marg, wall] = deal (zeros (1, runs));
    for r = 1:runs
      [a_med(r), a_mean(r), calls] = run_program (own);
      y_own = read_state (out, 4 * N);
      [~, b_mean(r)] = run_program (ker);
      y_ker = read_state (out, 4 * N);
      t0 = cputime ();
      for i = 1:reps
        [~, y1] = odeRATTLE (m, [0 K1*h/2 K1*h], y0, o);
      endfor
      t1 = cputime () - t0;
      w0 = tic ();  t0 = cputime ();
      for i = 1:reps
        [~, y2] = odeRATTLE (m, [0 K2*h/2 K2*h], y0, o);
      endfor
      t2 = cputime () - t0;
      wall(r) = toc (w0) / reps;
      marg(r) = 1e3 * (t2 - t1) / (reps * M);
    endfor
    delete (out);
    scale = max (abs (y_own));
    dy = max (abs (y2(end,:).' - y_own)) / scale;
    dyk = max (abs (y2(end,:).' - y_ker)) / scale;
    res(end+1,:) = {N, reps, build, info, csize, again, median(a_med), median(a_mean), median(b_mean), ...
                    median(marg), min(marg), max(marg), calls, dy, dyk, median(wall)};
    printf ("N = %6d built (%.1f s); timed\n", N, build);
    fflush (stdout);
    confirm_recursive_rmdir (false, "local");
    rmdir (fileparts (m.file), "s");
  endfor
  la1 = strtrim (fileread ("/proc/loadavg"));

  printf ("\nThe chain of N links as a model: explicit RATTLE, h = %g, zigzag at rest, steps %d to %d timed;\n", h, K1 + 1, K2);
  printf ("CPU ms per step, medians of %d rounds\n", runs);
  printf ("%8s | %10s %10s %12s | %12s %15s | %7s %7s | %9s %9s\n", "N", "C++ median", "C++ mean", ...
          "C++ + model", "odeRATTLE", "(range)", "ratio", "/median", "|dy| C++", "|dy| kern");
  for i = 1:rows (res)
    [N, ~, ~, ~, ~, ~, am, amean, bm, mg, mn, mx, ~, dy, dyk] = res{i,:};
    printf ("%8d | %10.4f %10.4f %12.4f | %12.4f %6.4f-%-7.4f | %7.3f %7.3f | %9.1e %9.1e\n", N, am, amean, bm, ...
            mg, mn, mx, mg / amean, mg / am, dy, dyk);
  endfor
  printf ("  C++: bench/native_chain.cc (g++ -O2 -DNDEBUG), own callbacks; C++ + model: the same with the model's kernels\n");
  printf ("  odeRATTLE: marginal cost (K2 - K1 steps, output at 3 times); ratio = odeRATTLE / C++ mean (target <= 1.2)\n");
  printf ("  |dy|: max |y_odeRATTLE - y_C++| / max |y| after %d steps (C++: own callbacks; kern: with the model's kernels)\n", K2);
  printf ("\n%8s | %8s %10s %10s %9s %11s | %7s | %s\n", "N", "reps", "build (s)", "derive (s)", "gcc (s)", ...
          "C (MB)", "cached", "calls per step (C++): f g G, Newton");
  for i = 1:rows (res)
    [N, reps, build, info, csize, again, ~, ~, ~, ~, ~, ~, calls] = res{i,:};
    printf ("%8d | %8d %10.1f %10.1f %9.1f %11.3f | %6.3fs | %s\n", N, reps, build, info.derive_seconds, ...
            info.compile_seconds, csize / 1e6, again, calls);
  endfor
  printf ("  build: wall time of odepkg_model in a fresh cache folder (derivation and C, gcc), Python already started;\n");
  printf ("  cached: the same call again.  reps: odeRATTLE runs per timing.  A run of %d steps took", K2);
  printf (" %s s wall (median; the ratios are of CPU times)\n", ...
          strjoin (arrayfun (@(i) sprintf ("%.3f", res{i,16}), 1:rows (res), "UniformOutput", false), ", "));
  printf ("  %d cores; load average before: %s\n                      after:  %s\n", nproc (), la0, la1);
endfunction

## The chain's model from strings, q = [x1 y1 x2 y2 ...], p = [u1 v1 ...],
## built in a fresh cache folder, then again (cached).
function [m, build, again, info, csize] = chain_model (N)
  x = arrayfun (@(i) sprintf ("x%d", i), 1:N, "UniformOutput", false);
  y = strrep (x, "x", "y");  u = strrep (x, "x", "u");  v = strrep (x, "x", "v");
  q = reshape ([x; y], 1, []);
  p = reshape ([u; v], 1, []);
  g = [{"x1^2 + y1^2 - 1"}, arrayfun(@(i) sprintf ("(x%d - x%d)^2 + (y%d - y%d)^2 - 1", i, i-1, i, i-1), ...
                                      2:N, "UniformOutput", false)];
  H = [strjoin(strcat (p, "^2/2"), " + ") " + " strjoin(y, " + ")];
  cdir = tempname ();
  t0 = tic ();
  [m, info] = odepkg_model ("H", H, "q", q, "p", p, "g", g, "CacheDir", cdir);
  build = toc (t0);
  t0 = tic ();
  [m2, info2] = odepkg_model ("H", H, "q", q, "p", p, "g", g, "CacheDir", cdir);
  again = toc (t0);
  if (! info2.cached || ! m.separable || m.nnz.G != 4 * N - 2)
    error ("native_chain: the model of N = %d: cached %d, separable %d, nnz G %d", N, info2.cached, m.separable, m.nnz.G);
  endif
  s = dir (m.source);
  csize = s.bytes;
endfunction

## The zigzag of the C++ program: link k at 0.2 (k odd) or 0.6 rad (k
## even) below the horizontal; q = [x1; y1; x2; y2; ...].
function q = zigzag (N)
  a = repmat ([0.2 0.6], 1, ceil (N / 2))(1:N);
  q = reshape ([cumsum(cos (a)); -cumsum(sin (a))], [], 1);
endfunction

function [med, mn, calls] = run_program (cmd)
  [status, out] = system (cmd);
  if (status != 0)
    error ("native_chain: %s failed: %s", cmd, out);
  endif
  v = str2double (regexp (out, 'ms_per_step median (\S+) mean (\S+)', "tokens", "once"));
  med = v(1);  mn = v(2);
  calls = strtrim (regexp (out, 'calls_per_step ([^\n]+)', "tokens", "once"){1});
endfunction

function y = read_state (file, n)
  fid = fopen (file, "r");
  y = fread (fid, n, "double");
  fclose (fid);
endfunction
