## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{model} =} odepkg_model ("H", @var{H}, "q", @var{q}, "p", @var{p})
## @deftypefnx {} {@var{model} =} odepkg_model (@dots{}, "g", @var{g}, "Parameters", @var{par}, "CacheDir", @var{dir})
## @deftypefnx {} {[@var{model}, @var{info}] =} odepkg_model (@dots{})
## A native model: write the Hamiltonian @var{H}(q, p) (and holonomic
## constraints @var{g}(q) = 0) once, as symbolic expressions; get exact
## derivatives and the speed of the compiled core.
##
## SymPy derives, in one call, f = [H_p; -H_q], the Hessian of H and
## G = dg/dq, decides whether H is separable (H_pq = 0: the solvers then use
## their explicit schemes, @qcode{"Explicit"} @qcode{"yes"}) and writes C
## kernels (common subexpressions eliminated).  They are compiled with the C
## compiler Octave was built with (@code{mkoctfile -p CC}) into a shared
## object in a per-user cache, @file{~/.cache/odepkg} (or @var{dir}, or the
## environment variable @env{ODEPKG_CACHE_DIR}), named by a hash of the code
## and the flags: building the same model again compiles nothing.  Needs the
## octave-symbolic package (loaded here) and SymPy.
##
## @var{H}, and @var{g} (a vector for m constraints), are sym expressions or
## strings in the same syntax (@code{sym (@var{str})}); @var{q}, @var{p} and
## @var{par} are vectors of symbols (or a cellstr of names, or one string of
## names).  Every symbol of @var{H} and @var{g} must be in one of them
## (symbols are matched by name).  In strings, as in @code{sym}, @code{E},
## @code{I} and @code{pi} are constants, not symbols.
## Parameters are values given at call time, as the extra arguments after
## the options (@code{odeSV (@var{model}, tspan, y0, opts, k)}): a new value
## compiles nothing.
##
## @var{model} is a struct that @code{odeSE}, @code{odeSV}, @code{odeVV},
## @code{odeRATTLE}, @code{odeSHAKE} and @code{odeSPVI} take in place of the
## function F (compositions, @qcode{"StepControl"} @qcode{"reversible"} and
## ensembles included: a @var{y0} with K columns runs the K members in the
## kernels, on the machine's cores, an extra argument with K columns giving
## one parameter value per member).  @code{odeVV} needs a quadratic kinetic
## energy, T = p'' M^-1 p / 2 with M constant: its state is then [q; v] with
## the velocities v = M^-1 p, and y returns [q, v].  The stepper functions
## (@code{stormer_verlet}, @dots{}, @code{rattle}) take it as F, its
## parameter values in @var{options}.funarguments; @code{odeRATTLie} does
## not take a model yet (an @code{odepkg:invalidInput} error says so).  Its fields show
## the derived expressions (@code{f}, @code{G}) and flags (@code{separable},
## @code{quadratic_kinetic}).  @var{info} tells whether the kernels came from
## the cache (@code{cached}), the seconds spent deriving and compiling, and
## this session's cache @code{hits} and @code{misses}.
##
## Example (a pendulum as a constrained particle, and a parameterised
## oscillator):
## @example
## @group
## syms q1 q2 p1 p2 real
## m = odepkg_model ("H", (p1^2 + p2^2)/2 + q2, "q", [q1 q2], "p", [p1 p2], ...
##                   "g", q1^2 + q2^2 - 1);
## o = odepkgset ("TimeStepSize", 0.01);
## [t, y] = odeRATTLE (m, [0 10], [1; 0; 0; 0], o);
## max (abs (y(:,1).^2 + y(:,2).^2 - 1))       # round-off
## syms q p k real
## osc = odepkg_model ("H", p^2/2 + k*q^2/2, "q", q, "p", p, "Parameters", k);
## [t, y] = odeSV (osc, [0 10], [1; 0], o, 4);  # k = 4: y(:,1) ~ cos (2 t)
## @end group
## @end example
## @seealso{odeSV, odeRATTLE, odepkgset}
## @end deftypefn

function [model, info] = odepkg_model (varargin)

  persistent hits = 0 misses = 0 cc = "";

  if (nargin == 0 || mod (nargin, 2) != 0)
    print_usage ();
  endif
  names = varargin(1:2:end);
  if (! iscellstr (names))
    error ("odepkg:invalidInput", "odepkg_model: arguments must be name-value pairs");
  endif
  known = {"H", "q", "p", "g", "Parameters", "CacheDir"};
  a = struct ("H", [], "q", [], "p", [], "g", [], "Parameters", [], "CacheDir", "");
  for i = 1:numel (names)
    k = find (strcmpi (names{i}, known));
    if (isempty (k))
      error ("odepkg:invalidInput", 'odepkg_model: unknown argument "%s" (known: %s)',
             names{i}, strjoin (known, ", "));
    endif
    a.(known{k}) = varargin{2*i};
  endfor
  for req = {"H", "q", "p"}
    if (isempty (a.(req{1})))
      error ("odepkg:invalidInput", 'odepkg_model: "%s" is required', req{1});
    endif
  endfor

  if (isempty (which ("pycall_sympy__")))
    try
      pkg load symbolic
    catch
      error ("odepkg:missingSymbolic",
             "odepkg_model: needs the octave-symbolic package and SymPy (Debian: apt-get install octave-symbolic python3-sympy; or pkg install -forge symbolic)");
    end_try_catch
  endif

  q = symbol_names (a.q, "q");
  p = symbol_names (a.p, "p");
  par = symbol_names (a.Parameters, "Parameters");
  if (numel (q) != numel (p))
    error ("odepkg:invalidInput", "odepkg_model: q and p must have the same length (got %d and %d)",
           numel (q), numel (p));
  endif
  H = to_sym (a.H, "H");
  if (numel (H) != 1)
    error ("odepkg:invalidInput", "odepkg_model: H must be a scalar expression (got %s)",
           mat2str (size (H)));
  endif
  g = {};
  if (! isempty (a.g))
    g = to_sym (a.g, "g");
  endif

  t0 = tic ();
  r = odepkg_model_derive (H, g, q, p, par);
  if (! isempty (r.err))
    error (["odepkg:" r.err], "odepkg_model: %s", r.msg);
  endif
  derive_s = toc (t0);

  ## compile (or find in the cache) the kernels
  if (isempty (cc))
    cc = strtrim (mkoctfile ("-p", "CC"));
  endif
  flags = "-O2 -shared -fPIC";
  key = hash ("md5", [r.source, cc, flags]);
  dir = a.CacheDir;
  if (isempty (dir))
    dir = getenv ("ODEPKG_CACHE_DIR");
  endif
  if (isempty (dir))
    dir = fullfile (getenv ("HOME"), ".cache", "odepkg");
  endif
  so = fullfile (dir, ["odepkg_model_" key ".so"]);
  csrc = fullfile (dir, ["odepkg_model_" key ".c"]);
  t0 = tic ();
  cached = exist (so, "file") == 2;
  if (cached)
    hits += 1;
  else
    compile (dir, csrc, so, r.source, cc, flags);
    misses += 1;
  endif
  compile_s = toc (t0);

  model = struct ("odepkg_model", 1, "file", so, "source", csrc, "d", numel (q),
                  "m", numel (g), "q", {r.q}, "p", {r.p}, "parameters", {r.parameters}, "H", r.H,
                  "g", {r.g}, "f", {r.f}, "G", {r.G}, "separable", r.separable,
                  "quadratic_kinetic", r.quadratic, "hash", key);
  info = struct ("cached", cached, "derive_seconds", derive_s, "compile_seconds", compile_s,
                 "hits", hits, "misses", misses);

endfunction

## A vector of symbols (passed as it is: its names are read in the one
## SymPy call), or the names of a cellstr or of a string of names.
function c = symbol_names (v, what)
  if (isempty (v))
    c = {};
  elseif (isa (v, "sym") && isvector (v))
    c = v;
  elseif (iscellstr (v))
    c = v(:).';
  elseif (ischar (v) && rows (v) == 1)
    c = regexp (v, '[^\s,;\[\]]+', "match");
  else
    error ("odepkg:invalidInput", "odepkg_model: %s must be a vector of symbols, a cellstr or a string of names", what);
  endif
endfunction

function s = to_sym (v, what)
  if (isa (v, "sym"))
    s = v;
  elseif (ischar (v) && rows (v) == 1)
    s = sym (v);
  elseif (iscellstr (v))
    s = cellfun (@sym, v, "UniformOutput", false);
    s = vertcat (s{:});
  elseif (isnumeric (v) && isreal (v))
    s = sym (v);
  else
    error ("odepkg:invalidInput", "odepkg_model: %s must be a sym expression or a string", what);
  endif
endfunction

## The C source written, compiled to a temporary name, renamed atomically:
## a concurrent build of the same model never sees half a file.
function compile (dir, csrc, so, source, cc, flags)
  if (! exist (dir, "dir"))
    [ok, msg] = mkdir (dir);
    if (! ok)
      error ("odepkg:modelCompile", "odepkg_model: cannot create the cache folder %s: %s", dir, msg);
    endif
  endif
  tmp = sprintf ("%s.%d.%d", so, getpid (), floor (1e6 * rem (now (), 1)));
  fid = fopen ([tmp ".c"], "w");
  if (fid < 0)
    error ("odepkg:modelCompile", "odepkg_model: cannot write to the cache folder %s", dir);
  endif
  fputs (fid, source);
  fclose (fid);
  cmd = sprintf ('%s %s -o "%s" "%s" -lm 2>&1', cc, flags, tmp, [tmp ".c"]);
  [status, out] = system (cmd);
  if (status != 0)
    unlink ([tmp ".c"]);
    error ("odepkg:modelCompile", "odepkg_model: the C compiler failed (%s):\n%s", cmd, out);
  endif
  rename ([tmp ".c"], csrc);
  rename (tmp, so);
endfunction

%!test
%! if (isempty (pkg ("list", "symbolic")))
%!   puts ("odepkg_model: octave-symbolic is not installed (apt-get install octave-symbolic python3-sympy): its tests are skipped\n");
%! endif

%!shared dir, kepler, fk, y0, o, hsym
%! hsym = ! isempty (pkg ("list", "symbolic"));
%! dir = tempname ();
%! kepler = [];
%! fk = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];
%! y0 = [0.5; 0; 0; sqrt(3)];            # e = 0.5
%! o = odepkgset ("TimeStepSize", 0.01);
%! if (hsym)
%!   pkg load symbolic
%!   syms q1 q2 p1 p2 real
%!   kepler = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2],
%!                          "p", [p1 p2], "CacheDir", dir);
%! endif

## Kepler, explicit Störmer–Verlet: the native run is the handle's, step
## for step, to round-off; the derived f and Hessian are the closed forms
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! assert (kepler.separable && kepler.quadratic_kinetic);
%! [tn, yn] = odeSV (kepler, [0 10], y0, o);
%! [th, yh] = odeSV (fk, [0 10], y0, odepkgset (o, "Explicit", "yes"));
%! assert (numel (tn), 1001);
%! assert (tn, th);
%! assert (yn, yh, 1e-11);
%! [~, yc] = odeSV (kepler, [0 10], y0, odepkgset (o, "CompensatedSummation", "on"));
%! [~, yhc] = odeSV (fk, [0 10], y0, odepkgset (o, "Explicit", "yes", "CompensatedSummation", "on"));
%! assert (yc, yhc, 1e-11);
%! [~, ys] = odeSE (kepler, [0 1], y0, o);              # symplectic Euler too
%! [~, yhs] = odeSE (fk, [0 1], y0, odepkgset (o, "Explicit", "yes"));
%! assert (ys, yhs, 1e-12);
%! x = [0.3; -0.8; 0.4; 1.1];  r = norm (x(1:2));
%! assert (__odepkg_model_eval__ (kepler, "f", 0, x, []), fk (0, x), 1e-15);
%! Vqq = eye (2) / r^3 - 3 * x(1:2) * x(1:2).' / r^5;
%! assert (__odepkg_model_eval__ (kepler, "hess", 0, x, []), blkdiag (Vqq, eye (2)), 1e-14);

## pendulum as a constrained particle, RATTLE: native = handles (fixed
## steps; and the issue's Order 8, RelTol 1e-10 adaptive call)
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! syms q1 q2 p1 p2 real
%! m = odepkg_model ("H", (p1^2 + p2^2)/2 + q2, "q", [q1 q2], "p", [p1 p2],
%!                   "g", q1^2 + q2^2 - 1, "CacheDir", dir);
%! assert ([m.d, m.m], [2, 1]);
%! assert (m.separable);
%! q = [0.6; -0.8];
%! assert (__odepkg_model_eval__ (m, "g", 0, q, []), q.' * q - 1, 1e-15);
%! assert (__odepkg_model_eval__ (m, "G", 0, q, []), 2 * q.', 1e-15);
%! x0 = [sin(1); -cos(1); 0; 0];
%! oh = odepkgset ("ConstraintFcn", @(q) q.' * q - 1, "ConstraintGradFcn", @(q) 2 * q.',
%!                 "ConstraintsNb", 1, "Explicit", "yes");
%! [tn, yn] = odeRATTLE (m, [0 10], x0, o);
%! [th, yh] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 10], x0, odepkgset (oh, "TimeStepSize", 0.01));
%! assert (tn, th);
%! assert (yn, yh, 1e-12);
%! assert (sum (yn(:,1:2).^2, 2), ones (numel (tn), 1), 1e-13);
%! [~, ys] = odeSHAKE (m, [0 1], x0, o);
%! [~, yhs] = odeSHAKE (@(t, y) [y(3:4); 0; -1], [0 1], x0, odepkgset (oh, "TimeStepSize", 0.01));
%! assert (ys, yhs, 1e-12);
%! o8 = odepkgset ("Order", 8, "RelTol", 1e-10);
%! [tn, yn] = odeRATTLE (m, [0 10], x0, o8);
%! [th, yh] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 10], x0, odepkgset (oh, o8));
%! assert (numel (tn), numel (th));
%! assert (yn, yh, 1e-9);
%! sol = odeRATTLE (m, [0 1], x0, o);    # deval projects with the model's g
%! yd = deval (sol, 0.505);
%! assert (yd(1:2).' * yd(1:2), 1, 1e-12);

## parameters are values at call time: a new value compiles nothing, and
## building the same model again is a cache hit
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! syms q p k real
%! [osc, i1] = odepkg_model ("H", p^2/2 + k*q^2/2, "q", q, "p", p, "Parameters", k, "CacheDir", dir);
%! f0 = stat (osc.file);
%! for kk = [4 9]
%!   [t, y] = odeSV (osc, [0 10], [1; 0], o, kk);
%!   [~, yh] = odeSV (@(t, y, k) [y(2); -k*y(1)], [0 10], [1; 0], odepkgset (o, "Explicit", "yes"), kk);
%!   assert (y, yh, 1e-12);
%!   assert (y(:,1), cos (sqrt (kk) * t), 2e-3);
%! endfor
%! [osc2, i2] = odepkg_model ("H", "p^2/2 + k*q^2/2", "q", "q", "p", "p", "Parameters", "k", "CacheDir", dir);
%! assert (i2.cached);
%! assert (i2.misses, i1.misses);
%! assert (i2.hits, i1.hits + 1);
%! assert (osc2.file, osc.file);
%! assert (stat (osc.file).mtime, f0.mtime);
%! fail ('odeSV (osc2, [0 1], [1; 0], odepkgset ("TimeStepSize", 0.1))', "parameter\\(s\\) \\(k\\) must follow the options");
%! fail ('odeSV (osc2, [0 1], [1; 0], odepkgset ("TimeStepSize", 0.1), 1, 2)', "got 2");

## non-separable H: detected, Newton (implicit Störmer–Verlet) with the
## derived Hessian, equal to the handle's run; "Explicit" refused
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! syms q p real
%! m = odepkg_model ("H", (1 + q^2) * p^2/2 + q^2/2, "q", q, "p", p, "CacheDir", dir);
%! assert (! m.separable);
%! f = @(t, y) [(1 + y(1)^2) * y(2); -y(1) * y(2)^2 - y(1)];
%! [~, yn] = odeSV (m, [0 1], [0.5; 0.2], o);
%! [~, yh] = odeSV (f, [0 1], [0.5; 0.2], o);
%! assert (yn, yh, 1e-10);
%! fail ('odeSV (m, [0 1], [0.5; 0.2], odepkgset (o, "Explicit", "yes"))', "H_pq != 0");

## bad input: errors with odepkg identifiers
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! syms q p z q1 q2 p1 p2 real
%! fail ('odepkg_model ("H", p^2/2 + z*q, "q", q, "p", p, "CacheDir", dir)', "H uses z, in none of q, p and Parameters");
%! fail ('odepkg_model ("H", [p; q], "q", q, "p", p)', "H must be a scalar");
%! fail ('odepkg_model ("H", p1^2, "q", [q1 q2], "p", p1)', "q and p must have the same length");
%! fail ('odepkg_model ("H", p^2, "q", q, "p", p, "g", p - 1)', "g must depend on q");
%! fail ('odepkg_model ("H", p^2, "q", q, "p", q)', "named twice");
%! fail ('odepkg_model ("H", p^2, "q", q, "p", p, "Mass", 1)', 'unknown argument "Mass"');
%! try
%!   odepkg_model ("H", p^2/2 + z*q, "q", q, "p", p, "CacheDir", dir);
%! catch err
%!   assert (err.identifier, "odepkg:unknownSymbol");
%! end_try_catch
%! fail ('odeRATTLE (kepler, [0 1], y0, o)', "no constraints");
%! fail ('odeVV (kepler, [0 1], y0, odepkgset (o, "Explicit", "yes"))', 'option "Explicit" is not used by odeVV');
%! fail ('odeSV (kepler, [0 1], [1; 0], o)', "2 d = 4 elements");
%! fail ('odeSV (kepler, [0 1], [y0, y0], o, 1)', "in ensemble mode an argument with K = 2 columns");
%! m = odepkg_model ("H", (p1^2 + p2^2)/2 + q2, "q", [q1 q2], "p", [p1 p2], "g", q1^2 + q2^2 - 1, "CacheDir", dir);
%! fail ('odeSV (m, [0 1], [1; 0; 0; 0], o)', "use odeRATTLE");
%! fail ('odeRATTLE (m, [0 1], [1; 0; 0; 0], odepkgset (o, "ConstraintFcn", @(q) q.''*q - 1, "ConstraintsNb", 1))', "gives H and g itself");
%! mm = m;  mm.file = fullfile (dir, "none.so");
%! fail ('odeRATTLE (mm, [0 1], [1; 0; 0; 0], o)', "are gone");

%!function o = handle_opts (s)
%!  o = struct ();
%!  if (! strcmp (s, "velocity_verlet"))
%!    o.Explicit = "yes";
%!  endif
%!endfunction
%!function H = kepler_hess (y)
%!  r = norm (y(1:2));
%!  H = blkdiag (eye (2) / r^3 - 3 * y(1:2) * y(1:2).' / r^5, eye (2));
%!endfunction
## the stepper functions take a model where they take F (parameters in
## options.funarguments): one step equals the handle's, to round-off
%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC"))))
%! x = [0.5; 0.1; -0.2; 1.6];
%! for s = {"stormer_verlet", "symplectic_euler", "velocity_verlet"}
%!   st = str2func (s{1});
%!   [t1, xn, xe, k] = st (kepler, 0, x, 0.01);
%!   [t2, xh, xhe, kh] = st (fk, 0, x, 0.01, handle_opts (s{1}));
%!   assert (t1, t2);
%!   assert ([xn, xe], [xh, xhe], 1e-14);
%!   assert (k, kh, 1e-14);
%! endfor
%! [~, xn] = spectral_var_int (kepler, 0, x, 0.1);
%! [~, xh] = spectral_var_int (fk, 0, x, 0.1, odepkgset ("HamiltonianHessFcn", @(t, y) kepler_hess (y)));
%! assert (xn, xh, 1e-12);
%! syms q1 q2 p1 p2 L real
%! m = odepkg_model ("H", (p1^2 + p2^2)/2 + q2, "q", [q1 q2], "p", [p1 p2], "g", q1^2 + q2^2 - L^2,
%!                   "Parameters", L, "CacheDir", dir);
%! x0 = 2 * [sin(1); -cos(1); 0; 0];
%! [~, xn] = rattle (m, 0, x0, 0.05, struct ("funarguments", {{2}}));
%! oh = odepkgset ("ConstraintFcn", @(q) q.' * q - 4, "ConstraintGradFcn", @(q) 2 * q.', "ConstraintsNb", 1,
%!                 "Explicit", "yes");
%! [~, xh] = rattle (@(t, y) [y(3:4); 0; -1], 0, x0, 0.05, oh);
%! assert (xn, xh, 1e-14);
%! assert (xn(1:2).' * xn(1:2), 4, 1e-13);
%! fail ('rattle (m, 0, x0, 0.05)', "1 parameter\\(s\\): give their values as options.funarguments");
%! fail ('stormer_verlet (m, 0, x0, 0.05, struct ("funarguments", {{2}}))', "use rattle");

## Ctrl-C during a long native run: a child Octave integrates Kepler from
## the model for 10^9 steps (minutes); SIGINT one second after the run
## started stops it (its unwind_protect cleanup runs) within a second
%!testif ; ! isempty (pkg ("list", "symbolic")) && ! isempty (file_in_path (getenv ("PATH"), strtok (mkoctfile ("-p", "CC")))) && isunix () && ! isempty (file_in_path (getenv ("PATH"), "octave-cli"))
%! f = [tempname() ".mat"];  started = [tempname() ".started"];  stopped = [tempname() ".stopped"];
%! save ("-binary", f, "kepler");
%! code = sprintf (["addpath ('%s'); addpath ('%s'); load ('%s'); fclose (fopen ('%s', 'w')); unwind_protect; " ...
%!                  "odeSV (kepler, [0 5e5 1e6], [0.5; 0; 0; sqrt(3)], odepkgset ('TimeStepSize', 1e-3)); " ...
%!                  "unwind_protect_cleanup; fclose (fopen ('%s', 'w')); end_unwind_protect"],
%!                 fileparts (which ("odeSV")), fileparts (which ("__odepkg_integrate__")), f, started, stopped);
%! [~, pid] = system (sprintf ('octave-cli --norc --eval "%s" > /dev/null 2>&1 & echo $!', code));
%! pid = strtrim (pid);
%! unwind_protect
%!   for i = 1:600
%!     if (exist (started, "file"))
%!       break;
%!     endif
%!     pause (0.1);
%!   endfor
%!   assert (exist (started, "file") == 2);
%!   pause (1);
%!   assert (! exist (stopped, "file"));      # still running
%!   t0 = tic ();
%!   system (["kill -INT " pid]);
%!   while (! exist (stopped, "file") && toc (t0) < 10)
%!     pause (0.01);
%!   endwhile
%!   assert (toc (t0) < 1);
%! unwind_protect_cleanup
%!   system (["kill -KILL " pid " 2> /dev/null"]);
%!   unlink (f);
%!   [~] = unlink (started);
%!   [~] = unlink (stopped);
%! end_unwind_protect

## not yet taken: odeRATTLie refuses a model by name
%!error <odeRATTLie: does not take a model of odepkg_model yet> odeRATTLie (struct ("odepkg_model", 1), [0 1], [1; 0; 0; 0], odepkgset ("LieGroup", "Rn"))

%!test
%! if (exist (dir, "dir"))
%!   confirm_recursive_rmdir (false, "local");
%!   rmdir (dir, "s");
%! endif
