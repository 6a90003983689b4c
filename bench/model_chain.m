## model_chain (Ns, steps): the planar chain of N unit links (fixed at the
## origin, gravity -y) as a native model built from strings (issue 41):
## build time (SymPy derivation and C generation, gcc), G's nonzeros, and
## the explicit RATTLE step (h = 1e-3, `steps` fixed steps) of the model
## with its sparse G against the function handles with a hand-written
## sparse G (the path the model's G joins).  One run each (the build is
## minutes at N = 10^4); a fresh cache folder per N.
##   octave-cli --norc --eval 'addpath ("inst"); addpath ("src"); source ("src/PKG_ADD"); source ("PKG_ADD"); addpath ("bench"); model_chain ()'
function model_chain (Ns = [100 1000 3000], steps = 200)
  for N = Ns
    cdir = tempname ();
    x = arrayfun (@(i) sprintf ("x%d", i), 1:N, "UniformOutput", false);
    y = strrep (x, "x", "y");  u = strrep (x, "x", "u");  v = strrep (x, "x", "v");
    g = [{"x1^2 + y1^2 - 1"}, arrayfun(@(i) sprintf ("(x%d - x%d)^2 + (y%d - y%d)^2 - 1", i, i-1, i, i-1), ...
                                        2:N, "UniformOutput", false)];
    H = [strjoin(strcat (u, "^2/2"), " + ") " + " strjoin(strcat (v, "^2/2"), " + ") " + " strjoin(y, " + ")];
    t0 = tic ();
    [m, info] = odepkg_model ("H", H, "q", [x y], "p", [u v], "g", g, "CacheDir", cdir);
    build = toc (t0);
    t0 = tic ();
    [~, info2] = odepkg_model ("H", H, "q", [x y], "p", [u v], "g", g, "CacheDir", cdir);
    again = toc (t0);
    src = dir (m.source);
    th = linspace (0.3, 0.6, N);
    x0 = [cumsum(sin (th)).'; -cumsum(cos (th)).'; zeros(2 * N, 1)];
    o = odepkgset ("TimeStepSize", 1e-3);
    gq = @(q) [q(1)^2 + q(N+1)^2 - 1; diff(q(1:N)).^2 + diff(q(N+1:2*N)).^2 - 1];
    Gq = @(q) sparse ([1:N, 2:N, 1:N, 2:N], [1:N, 1:N-1, N+1:2*N, N+1:2*N-1], ...
                      2 * [q(1); diff(q(1:N)); -diff(q(1:N)); q(N+1); diff(q(N+1:2*N)); -diff(q(N+1:2*N))], N, 2*N);
    oh = odepkgset (o, "ConstraintFcn", gq, "ConstraintGradFcn", Gq, "ConstraintsNb", N, "Explicit", "yes");
    fh = @(t, y) [y(2*N+1:4*N); zeros(N, 1); -ones(N, 1)];
    w = odeRATTLE (m, [0 10e-3], x0, o);                 # warm-up
    t0 = tic ();  sm = odeRATTLE (m, [0 steps * 1e-3], x0, o);  tm = toc (t0);
    t0 = tic ();  sh = odeRATTLE (fh, [0 steps * 1e-3], x0, oh);  th_ = toc (t0);
    printf ("N = %6d: build %7.1f s (derive %7.1f s, gcc %6.1f s, C %.2f MB), cached %.3f s; nnz G %d, sparse %d; ", ...
            N, build, info.derive_seconds, info.compile_seconds, src.bytes / 1e6, again, m.nnz.G, sm.stats.sparseconstraints);
    printf ("RATTLE step: model %.3f ms, handles %.3f ms; |y_model - y_handle| %.1e\n", ...
            1e3 * tm / steps, 1e3 * th_ / steps, max (abs (sm.y(:,end) - sh.y(:,end))));
    fflush (stdout);
    confirm_recursive_rmdir (false, "local");
    rmdir (cdir, "s");
  endfor
  printf ("(%d cores, load %s)\n", nproc (), fileread ("/proc/loadavg"));
endfunction
