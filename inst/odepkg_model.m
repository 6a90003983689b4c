## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn  {} {@var{model} =} odepkg_model ("H", @var{H}, "q", @var{q}, "p", @var{p})
## @deftypefnx {} {@var{model} =} odepkg_model (@dots{}, "g", @var{g}, "Parameters", @var{par}, "CacheDir", @var{dir})
## @deftypefnx {} {@var{model} =} odepkg_model (@dots{}, "ConstraintVariables", "qp", "Sparse", @var{s}, "CFlags", @var{flags})
## @deftypefnx {} {@var{model} =} odepkg_model ("CFile", @var{file}, "Parameters", @var{par}, "Separable", @var{tf}, @dots{})
## @deftypefnx {} {@var{model} =} odepkg_model ("Library", @var{so}, @dots{})
## @deftypefnx {} {[@var{model}, @var{info}] =} odepkg_model (@dots{})
## A native model: write the Hamiltonian @var{H}(q, p) (and constraints
## @var{g}(q) = 0, or @var{g}(q, p) = 0) once, as symbolic expressions; get
## exact derivatives and the speed of the compiled core.
##
## SymPy derives, in one call, f = [H_p; -H_q], the Hessian of H, G = dg/dq
## and the constraint Hessians d2g_k/dq2, each with its sparsity pattern
## (only the entries that depend on a variable exist: a chain's G has 4
## nonzeros a row), decides whether H is separable (H_pq = 0, simplified:
## the solvers then use their explicit schemes, @qcode{"Explicit"}
## @qcode{"yes"}) and writes C kernels (common subexpressions eliminated).
## They are compiled with the C compiler Octave was built with
## (@code{mkoctfile -p CC}, or the environment variable @env{CC}) into a
## shared object in a per-user cache, @file{~/.cache/odepkg} (or @var{dir},
## or the environment variable @env{ODEPKG_CACHE_DIR}), named by a hash of
## the code and the flags, written to a temporary name and renamed (two
## processes building the same model at once are safe).  The cache is keyed
## on the inputs (the expressions and names as given, the compiler, the
## flags, the generator's version): building the same model again, in this
## session or another, runs neither SymPy nor the compiler.  Needs the
## octave-symbolic package (loaded here when a model is derived) and SymPy.
##
## @var{H}, and @var{g} (a vector, or a cellstr, for m constraints), are sym
## expressions or strings in the same syntax (@code{^} or @code{**} for
## powers, @code{pi}, @code{E}, @code{I}, @code{sin} @dots{} as in
## @code{sym}); @var{H} may also be a cellstr of terms, summed.  @var{q},
## @var{p} and @var{par} are vectors of symbols (or a cellstr of names, or
## one string of names).  Every symbol of @var{H} and @var{g} must be in one
## of them (symbols are matched by name).  Strings are read by Python's
## parser (a sum term by term), so a long H or many g are quick to read;
## sym expressions are sent as they are.
##
## Repeated structure is folded: terms of a string @var{H}, and strings of
## @var{g}, that are the same text up to the names of their variables
## (@qcode{"(x7 - x6)^2 + (y7 - y6)^2 - 1"} and
## @qcode{"(x3 - x2)^2 + (y3 - y2)^2 - 1"}, the links of a chain) form a
## family when there are at least 8 of them: SymPy derives the family once,
## and the C kernels run a loop over its members.  A chain of 10^5 links
## (2 10^5 coordinates, written with @code{sprintf}) builds in about a
## minute, a few MB of C; write repeated terms with the same text
## (@code{sprintf} of one format) for them to be folded.
## Parameters are values given at call time, as the extra arguments after
## the options (@code{odeSV (@var{model}, tspan, y0, opts, k)}): a new value
## compiles nothing.
##
## Options:
## @table @asis
## @item @qcode{"ConstraintVariables"}, @qcode{"qp"}
## @var{g} depends on q and p (coisotropic constraints, geometric RATTLE of
## McLachlan, Modin, Verdier and Wilkins): its gradient and Hessians are
## taken on y = [q; p].  Without it, a g that depends on p is an error.
## @item @qcode{"Sparse"}, @qcode{"auto"} | @qcode{"on"} | @qcode{"off"}
## G kept sparse in odeRATTLE and odeSHAKE (the path of a sparse
## ConstraintGradFcn; with it the Hessian of H is taken sparse).
## @qcode{"auto"}: when G has at least 2500 entries, at most a tenth of them
## nonzero.  A run-time choice: the compiled kernels are the same.
## @item @qcode{"CFlags"}
## compiler flags (default @qcode{"-O2"}, @qcode{"-O1"} for generated code
## above 200 kB, where gcc's -O2 takes much longer); part of the cache key.
## @item @qcode{"CFile"}, @var{file}; @qcode{"Library"}, @var{so}
## your own kernels, with the signature the generator writes (below):
## a C file is compiled into the cache (keyed on its text), a shared object
## used where it is.  Both are loaded once and checked (ABI version,
## dimensions, patterns).  Give the parameter names (@qcode{"Parameters"},
## else par1, par2, @dots{}), and @qcode{"Separable"}, true for a separable
## H (default false: the implicit schemes).
## @end table
##
## The kernels' C signature (ABI 2; @file{doc/native-models.md} has it in
## full): @code{int odepkg_abi (void)} returns 2; @code{void odepkg_dims
## (int *dims)} writes d, m, the number of parameters and nc (d, or 2d for
## g(q, p)); @code{int odepkg_nnz (int which)} and @code{void
## odepkg_pattern (int which, int *rows, int *cols)} give the nonzeros and
## their 0-based (row, column) pairs in column-major order of the Hessian of
## H (which = 0, 2d-by-2d), G (1, m-by-nc) and the stacked Hessians of g
## [H_1 @dots{} H_m] (2, nc-by-nc*m; nnz -1: none); @code{void odepkg_H},
## @code{odepkg_f} (= [H_p; -H_q]) and @code{odepkg_hess} (values on
## pattern 0) take @code{(double t, const double *x, const double *par,
## double *out)}, x = [q; p]; @code{void odepkg_g}, @code{odepkg_G} and
## @code{odepkg_GH} take @code{(const double *y, const double *par, double
## *out)}, y = q (or [q; p]), and write m values or the values on patterns
## 1 and 2.
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
## the derived expressions (@code{f}, @code{g}, @code{G}: at most 200 of each), the patterns'
## nonzeros (@code{nnz}) and flags (@code{separable},
## @code{quadratic_kinetic}, @code{constraint_variables}).  @var{info} tells
## whether the model came from the cache (@code{cached}: nothing derived or
## compiled), whether the compiler ran (@code{compiled}), the seconds spent
## deriving and compiling, and this session's cache @code{hits} and
## @code{misses}.
##
## Errors (@code{odepkg:} identifiers): a symbol in none of q, p and
## Parameters (named), H not scalar, q and p of different lengths, g
## depending on p without @qcode{"qp"}, an expression that is not finite
## (@code{odepkg:nonFiniteExpression}: 1/0, 0/0), a cache folder that cannot
## be created or written (@code{odepkg:modelCache}), no C compiler
## (@code{odepkg:noCompiler}), octave-symbolic missing
## (@code{odepkg:missingSymbolic}).
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
## [osc, info] = odepkg_model ("H", "p^2/2 + k*q^2/2", "q", "q", "p", "p", "Parameters", "k");
## [osc, info] = odepkg_model ("H", "p^2/2 + k*q^2/2", "q", "q", "p", "p", "Parameters", "k");
## info.cached                                  # true: no SymPy, no compiler
## @end group
## @end example
## @seealso{odeSV, odeRATTLE, odepkgset}
## @end deftypefn

function [model, info] = odepkg_model (varargin)

  persistent hits = 0 misses = 0 cc_default = "" generator = "";

  if (nargin == 0 || mod (nargin, 2) != 0)
    print_usage ();
  endif
  names = varargin(1:2:end);
  if (! iscellstr (names))
    error ("odepkg:invalidInput", "odepkg_model: arguments must be name-value pairs");
  endif
  known = {"H", "q", "p", "g", "Parameters", "CacheDir", "ConstraintVariables", "Sparse", ...
           "CFile", "Library", "CFlags", "Separable"};
  a = struct ("H", [], "q", [], "p", [], "g", [], "Parameters", [], "CacheDir", "",
              "ConstraintVariables", "q", "Sparse", "auto", "CFile", "", "Library", "",
              "CFlags", "", "Separable", false);
  for i = 1:numel (names)
    k = find (strcmpi (names{i}, known));
    if (isempty (k))
      error ("odepkg:invalidInput", 'odepkg_model: unknown argument "%s" (known: %s)',
             names{i}, strjoin (known, ", "));
    endif
    a.(known{k}) = varargin{2*i};
  endfor
  cv = choice (a.ConstraintVariables, "ConstraintVariables", {"q", "qp"});
  sparse_mode = choice (a.Sparse, "Sparse", {"auto", "on", "off"});
  if (! ischar (a.CFlags) || rows (a.CFlags) > 1)
    error ("odepkg:invalidInput", 'odepkg_model: "CFlags" must be a string of compiler flags');
  endif
  dir = cache_dir (a.CacheDir);
  cc = getenv ("CC");                   # as mkoctfile: CC overrides Octave's compiler
  if (isempty (cc))
    if (isempty (cc_default))
      cc_default = strtrim (mkoctfile ("-p", "CC"));
    endif
    cc = cc_default;
  endif
  ## "CFlags" "" (default): -O2, and -O1 for generated code above 200 kB
  ## (gcc -O2's time and memory grow faster than the code: a 300-link
  ## chain's 0.23 MB compile in 8 s at -O2, 3 s at -O1)
  flags = [strtrim(a.CFlags) " -shared -fPIC"];

  ## your own kernels: a C file compiled into the cache, or a shared object
  if (! isempty (a.CFile) || ! isempty (a.Library))
    [model, info] = own_kernels (a, dir, cc, flags, cv, sparse_mode);
    hits += info.cached;
    misses += ! info.cached;
    info.hits = hits;
    info.misses = misses;
    return;
  endif
  for req = {"H", "q", "p"}
    if (isempty (a.(req{1})))
      error ("odepkg:invalidInput", 'odepkg_model: "%s" is required (or "CFile" or "Library")', req{1});
    endif
  endfor

  ## the cache, keyed on the inputs as given (no SymPy, no compiler on a
  ## hit): expressions and names, the generator's text, compiler, flags
  if (isempty (generator))
    private = fullfile (fileparts (mfilename ("fullpath")), "private");
    generator = hash ("md5", [fileread(fullfile (private, "odepkg_model_fold.py")), ...
                              fileread(fullfile (private, "odepkg_model_derive.py")), "ABI 2, index 2"]);
  endif
  key = hash ("md5", strjoin ({generator, cc, flags, cv, input_key(a.H), input_key(a.g), ...
                               input_key(a.q), input_key(a.p), input_key(a.Parameters)}, "\n\x01\n"));
  index = fullfile (dir, ["odepkg_input_" key ".mat"]);
  t0 = tic ();
  model = read_index (index, dir);
  if (! isempty (model))
    hits += 1;
    model.sparse = sparse_mode;
    info = struct ("cached", true, "compiled", false, "derive_seconds", 0,
                   "compile_seconds", toc (t0), "hits", hits, "misses", misses);
    return;
  endif

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
  H = expression (a.H, "H");
  if (numel (H) != 1 && ! ischar (H))
    error ("odepkg:invalidInput", "odepkg_model: H must be a scalar expression (got %s)",
           mat2str (size (H)));
  endif
  g = {};
  if (! isempty (a.g))
    g = expression (a.g, "g");
  endif

  r = odepkg_model_derive (H, g, q, p, par, strcmp (cv, "qp"));
  if (! isempty (r.err))
    error (["odepkg:" r.err], "odepkg_model: %s", r.msg);
  endif
  derive_s = toc (t0);

  ## compiled (or found) under the hash of the code: models with the same
  ## code share one object
  t0 = tic ();
  if (isempty (strtrim (a.CFlags)))
    flags = [ifelse(numel (r.source) > 2e5, "-O1", "-O2") flags];
  endif
  code = hash ("md5", [r.source, cc, flags]);
  so = fullfile (dir, ["odepkg_model_" code ".so"]);
  compiled = exist (so, "file") != 2;
  if (compiled)
    compile (dir, fullfile (dir, ["odepkg_model_" code ".c"]), so, r.source, cc, flags);
  endif
  compile_s = toc (t0);
  misses += 1;

  model = struct ("odepkg_model", 2, "file", so, "source", [so(1:end-3) ".c"], "d", numel (r.q),
                  "m", r.m, "q", {r.q}, "p", {r.p}, "parameters", {r.parameters}, "H", r.H,
                  "g", {r.g}, "f", {r.f}, "G", {r.G}, "separable", r.separable,
                  "quadratic_kinetic", r.quadratic, "constraint_variables", cv,
                  "nnz", struct ("hess", r.nnz(1), "G", r.nnz(2), "GH", r.nnz(3)),
                  "sparse", sparse_mode, "derived", true, "hash", code);
  write_index (index, model);
  info = struct ("cached", false, "compiled", compiled, "derive_seconds", derive_s,
                 "compile_seconds", compile_s, "hits", hits, "misses", misses);

endfunction

function v = choice (v, what, allowed)
  if (! ischar (v) || ! any (strcmpi (v, allowed)))
    error ("odepkg:invalidInput", 'odepkg_model: "%s" must be one of "%s"', what,
           strjoin (allowed, '", "'));
  endif
  v = lower (v);
endfunction

function dir = cache_dir (dir)
  if (! ischar (dir))
    error ("odepkg:invalidInput", 'odepkg_model: "CacheDir" must be a folder name');
  endif
  if (isempty (dir))
    dir = getenv ("ODEPKG_CACHE_DIR");
  endif
  if (isempty (dir))
    dir = fullfile (getenv ("HOME"), ".cache", "odepkg");
  endif
endfunction

## The text an input is keyed by: a sym's srepr (its structure; the
## assumptions of its symbols included), a string as written, cells item by
## item, numbers to 17 digits.  Free: no Python call.
function s = input_key (v)
  if (isa (v, "sym"))
    try
      s = ["y:" struct(v).pickle];
    catch
      s = ["y:" char(v) ":" mat2str(size (v))];
    end_try_catch
  elseif (ischar (v))
    s = ["s:" strjoin(cellstr (v), "\n")];
  elseif (iscellstr (v))
    s = ["C:" mat2str(size (v)) sprintf("%s\x02", v{:})];   # (strjoin: 1.6 s for 5 10^5 names)
  elseif (iscell (v))
    s = ["c:" mat2str(size (v)) strjoin(cellfun (@input_key, v, "UniformOutput", false), "\x02")];
  elseif (isnumeric (v) || islogical (v))
    s = ["n:" mat2str(double (v), 17)];
  else
    s = ["?:" class(v)];
  endif
endfunction

## The model stored for these inputs, or [] (no entry, or its object gone).
function model = read_index (index, dir)
  model = [];
  if (exist (index, "file") != 2)
    return;
  endif
  try
    s = load (index);
    model = s.model;
  catch
    return;                             # unreadable: built again
  end_try_catch
  [~, name, ext] = fileparts (model.file);
  model.file = fullfile (dir, [name ext]);
  model.source = fullfile (dir, [name ".c"]);
  if (exist (model.file, "file") != 2)
    model = [];
  endif
endfunction

## Written to a temporary name, renamed: a concurrent reader sees the whole
## file or none; two writers write the same content.
function write_index (index, model)
  tmp = sprintf ("%s.%d.tmp", index, getpid ());
  try
    save ("-binary", tmp, "model");
    [err, msg] = rename (tmp, index);
    if (err)
      error (msg);
    endif
  catch e
    [~] = unlink (tmp);
    error ("odepkg:modelCache", "odepkg_model: cannot write to the cache folder %s: %s",
           fileparts (index), e.message);
  end_try_catch
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

## A sym, or strings (parsed by SymPy in the one call, with q, p and the
## parameters as symbols), or numbers.
function s = expression (v, what)
  if (isa (v, "sym") || (ischar (v) && rows (v) == 1))
    s = v;
  elseif (iscellstr (v))
    s = v(:).';
  elseif (isnumeric (v) && isreal (v))
    s = arrayfun (@(x) sprintf ("%.17g", x), v(:).', "UniformOutput", false);
    if (numel (s) == 1)
      s = s{1};
    endif
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
      error ("odepkg:modelCache", "odepkg_model: cannot create the cache folder %s: %s", dir, msg);
    endif
  endif
  tmp = sprintf ("%s.%d.%d", so, getpid (), floor (1e6 * rem (now (), 1)));
  fid = fopen ([tmp ".c"], "w");
  if (fid < 0)
    error ("odepkg:modelCache", "odepkg_model: cannot write to the cache folder %s", dir);
  endif
  fputs (fid, source);
  fclose (fid);
  cmd = sprintf ('%s %s -o "%s" "%s" -lm 2>&1', cc, flags, tmp, [tmp ".c"]);
  [status, out] = system (cmd);
  if (status != 0)
    [~] = unlink ([tmp ".c"]);
    [~] = unlink (tmp);
    if (status == 127)
      error ("odepkg:noCompiler",
             "odepkg_model: no C compiler: %s was not found (install gcc, or set the environment variable CC to a C compiler)",
             strtok (cc));
    endif
    error ("odepkg:modelCompile", "odepkg_model: the C compiler failed (%s):\n%s", cmd, out);
  endif
  rename ([tmp ".c"], csrc);
  rename (tmp, so);
endfunction

## "CFile" (compiled into the cache under the hash of its text and the
## flags) or "Library" (used where it is): checked (ABI, dimensions) by
## loading it once.
function [model, info] = own_kernels (a, dir, cc, flags, cv, sparse_mode)
  if (! isempty (a.CFile) && ! isempty (a.Library))
    error ("odepkg:invalidInput", 'odepkg_model: give "CFile" or "Library", not both');
  endif
  if (! isempty (a.H) || ! isempty (a.g))
    error ("odepkg:invalidInput", 'odepkg_model: "H" and "g" are not taken with "CFile" or "Library" (the kernels are given)');
  endif
  t0 = tic ();
  cached = true;
  compiled = false;
  if (isempty (strtrim (a.CFlags)))
    flags = ["-O2" flags];
  endif
  if (! isempty (a.CFile))
    if (! ischar (a.CFile) || exist (a.CFile, "file") != 2)
      error ("odepkg:invalidInput", 'odepkg_model: "CFile" must name a C file (%s not found)', disp_name (a.CFile));
    endif
    src = fileread (a.CFile);
    code = hash ("md5", [src, cc, flags]);
    so = fullfile (dir, ["odepkg_own_" code ".so"]);
    if (exist (so, "file") != 2)
      compile (dir, fullfile (dir, ["odepkg_own_" code ".c"]), so, src, cc, flags);
      cached = false;
      compiled = true;
    endif
    source = make_absolute_filename (a.CFile);
  else
    if (! ischar (a.Library) || exist (a.Library, "file") != 2)
      error ("odepkg:invalidInput", 'odepkg_model: "Library" must name a shared object (%s not found)', disp_name (a.Library));
    endif
    so = make_absolute_filename (a.Library);
    source = "";
    code = "";
  endif
  k = __odepkg_model_eval__ (struct ("file", so), "info", 0, [], []);
  d = k.dims(1);  m = k.dims(2);  np = k.dims(3);  nc = k.dims(4);
  if (nc != d * (1 + strcmp (cv, "qp")))
    error ("odepkg:nativeModel",
           'odepkg_model: %s: odepkg_dims gives constraint variables of %d numbers, but "ConstraintVariables" "%s" means %d',
           so, nc, cv, d * (1 + strcmp (cv, "qp")));
  endif
  par = symbol_names (a.Parameters, "Parameters");
  if (isa (par, "sym"))
    par = arrayfun (@char, par, "UniformOutput", false);
  endif
  if (isempty (par))
    par = arrayfun (@(i) sprintf ("par%d", i), 1:np, "UniformOutput", false);
  elseif (numel (par) != np)
    error ("odepkg:invalidInput", 'odepkg_model: %s has %d parameters (odepkg_dims), but "Parameters" names %d',
           so, np, numel (par));
  endif
  names = @(v, s) ifelse (isempty (v), arrayfun (@(i) sprintf ("%s%d", s, i), 1:d, "UniformOutput", false),
                          symbol_names (v, s));
  q = names (a.q, "q");  p = names (a.p, "p");
  if (! (islogical (a.Separable) || isnumeric (a.Separable)) || ! isscalar (a.Separable))
    error ("odepkg:invalidInput", 'odepkg_model: "Separable" must be true or false');
  endif
  model = struct ("odepkg_model", 2, "file", so, "source", source, "d", d, "m", m,
                  "q", {q}, "p", {p}, "parameters", {par}, "H", "", "g", {{}}, "f", {{}}, "G", {{}},
                  "separable", logical (a.Separable), "quadratic_kinetic", false,
                  "constraint_variables", cv,
                  "nnz", struct ("hess", k.nnz(1), "G", k.nnz(2), "GH", k.nnz(3)),
                  "sparse", sparse_mode, "derived", false, "hash", code);
  info = struct ("cached", cached, "compiled", compiled, "derive_seconds", 0, "compile_seconds", toc (t0));
endfunction

function v = ifelse (c, a, b)
  if (c)
    v = a;
  else
    v = b;
  endif
endfunction

function s = disp_name (v)
  if (ischar (v))
    s = v;
  else
    s = class (v);
  endif
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
%! ## the same model written as strings: derived again (other inputs), the
%! ## same code, so nothing compiled; the same strings again: a hit
%! [osc2, i2] = odepkg_model ("H", "p^2/2 + k*q^2/2", "q", "q", "p", "p", "Parameters", "k", "CacheDir", dir);
%! assert (! i2.cached && ! i2.compiled);
%! assert ([i2.misses, i2.hits], [i1.misses + 1, i1.hits]);
%! assert (osc2.file, osc.file);
%! assert (stat (osc.file).mtime, f0.mtime);
%! [osc3, i3] = odepkg_model ("H", "p^2/2 + k*q^2/2", "q", "q", "p", "p", "Parameters", "k", "CacheDir", dir);
%! assert (i3.cached && ! i3.compiled && i3.derive_seconds == 0);
%! assert ([i3.misses, i3.hits], [i2.misses, i2.hits + 1]);
%! assert (osc3, osc2);
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

## derived derivatives against closed forms, with their sparsity patterns:
## a planar double pendulum (two unit links, q = [x1 x2 y1 y2]), G (2-by-4),
## the constraint Hessians d2g_k/dq2 stacked [H_1 H_2] and the Hessian of H
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! m = odepkg_model ("H", "(u1^2 + u2^2 + v1^2 + v2^2)/2 + y1 + y2", "q", "x1 x2 y1 y2",
%!                   "p", "u1 u2 v1 v2", "g", {"x1^2 + y1^2 - 1", "(x2 - x1)^2 + (y2 - y1)^2 - 1"},
%!                   "CacheDir", dir);
%! q = [0.6; 1.4; -0.8; -1.1];
%! a = q(2) - q(1);  b = q(4) - q(3);
%! G = [2*q(1), 0, 2*q(3), 0; -2*a, 2*a, -2*b, 2*b];
%! Gs = __odepkg_model_eval__ (m, "G_sparse", 0, q, []);
%! assert (issparse (Gs));
%! assert (full (Gs), G, 1e-15);
%! assert (full (spones (Gs)), double (G != 0));        # the structural pattern: 6 of 8
%! assert ([m.nnz.G, m.nnz.hess, m.nnz.GH], [6, 4, 10]);
%! assert (__odepkg_model_eval__ (m, "G", 0, q, []), G, 1e-15);
%! H1 = diag ([2 0 2 0]);
%! H2 = 2 * kron (eye (2), [1 -1; -1 1]);
%! GH = __odepkg_model_eval__ (m, "GH_sparse", 0, q, []);
%! assert (full (GH), [H1, H2], 1e-15);
%! assert (nnz (GH), 10);
%! assert (__odepkg_model_eval__ (m, "GH", 0, q, []), [H1, H2], 1e-15);
%! hs = __odepkg_model_eval__ (m, "hess_sparse", 0, [q; 1; 2; 3; 4], []);
%! assert (full (hs), blkdiag (zeros (4), eye (4)));
%! assert (__odepkg_model_eval__ (m, "H", 0, [q; 1; 2; 3; 4], []), 15 + q(3) + q(4), 1e-14);

## the constraint Hessians in the loop: RATTLE's general (implicit) path
## ("Explicit" "no") runs on the model's kernels without one difference,
## and equals the handle run given the same derivatives
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! m = odepkg_model ("H", "(u1^2 + u2^2 + v1^2 + v2^2)/2 + y1 + y2", "q", "x1 x2 y1 y2",
%!                   "p", "u1 u2 v1 v2", "g", {"x1^2 + y1^2 - 1", "(x2 - x1)^2 + (y2 - y1)^2 - 1"},
%!                   "CacheDir", dir);
%! x0 = [sin(1); sin(1) + 1; -cos(1); -cos(1); 0; 0; 0; 0];
%! oi = odepkgset ("TimeStepSize", 0.01, "Explicit", "no");
%! sol = odeRATTLE (m, [0 1], x0, oi);
%! assert (sol.stats.nfdjacobians, 0);
%! gc = @(q) [q(1)^2 + q(3)^2 - 1; (q(2) - q(1))^2 + (q(4) - q(3))^2 - 1];
%! Gc = @(q) [2*q(1), 0, 2*q(3), 0; -2*(q(2)-q(1)), 2*(q(2)-q(1)), -2*(q(4)-q(3)), 2*(q(4)-q(3))];
%! GHc = @(q) cat (3, diag ([2 0 2 0]), 2 * kron (eye (2), [1 -1; -1 1]));
%! oh = odepkgset (oi, "ConstraintFcn", gc, "ConstraintGradFcn", Gc, "ConstraintHessFcn", GHc,
%!                 "ConstraintsNb", 2, "HamiltonianHessFcn", @(t, y) blkdiag (zeros (4), eye (4)));
%! solh = odeRATTLE (@(t, y) [y(5:8); 0; 0; -1; -1], [0 1], x0, oh);
%! assert (solh.stats.nfdjacobians, 0);
%! assert (sol.x, solh.x);
%! assert (sol.y, solh.y, 1e-12);
%! assert (max (abs (gc (sol.y(1:4,end)))), 0, 1e-13);

## G kept sparse in the solver (the path of a sparse ConstraintGradFcn):
## a chain of 30 unit links, "Sparse" "on" against "off" and against the
## handle run with a sparse G, equal to round-off
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! N = 30;
%! x = arrayfun (@(i) sprintf ("x%d", i), 1:N, "UniformOutput", false);
%! y = strrep (x, "x", "y");  u = strrep (x, "x", "u");  v = strrep (x, "x", "v");
%! g = [{"x1^2 + y1^2 - 1"}, arrayfun(@(i) sprintf ("(x%d - x%d)^2 + (y%d - y%d)^2 - 1", i, i-1, i, i-1), 2:N, "UniformOutput", false)];
%! H = [strjoin(strcat (u, "^2/2"), " + ") " + " strjoin(strcat (v, "^2/2"), " + ") " + " strjoin(y, " + ")];
%! [ms, info] = odepkg_model ("H", H, "q", [x y], "p", [u v], "g", g, "Sparse", "on", "CacheDir", dir);
%! md = odepkg_model ("H", H, "q", [x y], "p", [u v], "g", g, "Sparse", "off", "CacheDir", dir);
%! assert (md.file, ms.file);                         # one object, the choice made at run time
%! assert (ms.nnz.G, 4 * N - 2);
%! th = linspace (0.3, 0.6, N);
%! x0 = [cumsum(sin (th)).'; -cumsum(cos (th)).'; zeros(2 * N, 1)];
%! o = odepkgset ("TimeStepSize", 0.01);
%! ss = odeRATTLE (ms, [0 0.5], x0, o);
%! sd = odeRATTLE (md, [0 0.5], x0, o);
%! assert (ss.stats.sparseconstraints && ! sd.stats.sparseconstraints);
%! assert (ss.y, sd.y, 1e-11);
%! gq = @(q) [q(1)^2 + q(N+1)^2 - 1; diff(q(1:N)).^2 + diff(q(N+1:2*N)).^2 - 1];
%! Gq = @(q) sparse ([1:N, 2:N, 1:N, 2:N], [1:N, 1:N-1, N+1:2*N, N+1:2*N-1],
%!                   2 * [q(1); diff(q(1:N)); -diff(q(1:N)); q(N+1); diff(q(N+1:2*N)); -diff(q(N+1:2*N))], N, 2*N);
%! oh = odepkgset (o, "ConstraintFcn", gq, "ConstraintGradFcn", Gq, "ConstraintsNb", N, "Explicit", "yes");
%! sh = odeRATTLE (@(t, y) [y(2*N+1:4*N); zeros(N, 1); -ones(N, 1)], [0 0.5], x0, oh);
%! assert (sh.stats.sparseconstraints);
%! assert (ss.y, sh.y, 1e-11);
%! assert (max (abs (gq (ss.y(1:2*N,end)))), 0, 1e-12);

## Repeated structure folded into loops: a Fermi-Pasta-Ulam ring of N = 12
## particles, H = sum p_i^2/2 + (q_{i+1} - q_i)^2/2 + alpha (q_{i+1} - q_i)^4/4
## with the wrap-around bond's quadratic term written another way (a term of
## its own, added to the families' entries), a parameter, and q, p listed in a shuffled order (member
## indices that are not affine: tables); f and the Hessian against their
## closed forms, separability proved, the run against the handle run
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! N = 12;  rand ("seed", 7);  perm = randperm (N);
%! qn = arrayfun (@(i) sprintf ("q%d", i), 1:N, "UniformOutput", false);
%! pn = strrep (qn, "q", "p");
%! bond = @(i, j) sprintf ("(q%d - q%d)^2/2 + alpha*(q%d - q%d)^4/4", j, i, j, i);
%! H = [strjoin(strcat (pn, "^2/2"), " + ") " + " strjoin(arrayfun (@(i) bond (i, i+1), 1:N-1, "UniformOutput", false), " + ") ...
%!      " - (q12 - q1)*(q1 - q12)/2 + alpha*(q1 - q12)^4/4"];
%! [m, info] = odepkg_model ("H", H, "q", qn(perm), "p", pn(perm), "Parameters", "alpha", "CacheDir", dir);
%! assert (m.separable && m.quadratic_kinetic);
%! assert (m.H, "36 terms (35 in 3 folded families)");
%! src = fileread (m.source);
%! assert (numel (strfind (src, "for (int i = 0; i < 11; ++i)")) >= 3);   # the quadratic bonds' loops
%! assert (numel (strfind (src, "for (int i = 0; i < 12; ++i)")) >= 6);   # the quartic bonds', the momenta's
%! assert (! isempty (regexp (src, 'static const int odepkg_f_fam\d+_x\d+\[\]', "once")));  # shuffled: tables
%! alpha = 0.7;  y = randn (2 * N, 1);               # y in the model's order [q(perm); p(perm)]
%! qq(perm) = y(1:N);  pp(perm) = y(N+1:end);        # back to ring order
%! dq = circshift (qq(:), -1) - qq(:);               # q_{i+1} - q_i, the ring closed
%! force = dq + alpha * dq.^3;  force = force - circshift (force, 1);   # -dV/dq_i
%! f = __odepkg_model_eval__ (m, "f", 0, y, alpha);
%! assert (f(1:N), pp(perm).', 1e-14);
%! assert (f(N+1:end), force(perm), 1e-13);
%! Hs = __odepkg_model_eval__ (m, "hess", 0, y, alpha);
%! k = 1 + 3 * alpha * dq.^2;                         # the bonds' stiffness
%! K = diag (k + circshift (k, 1)) - diag (k(1:N-1), 1) - diag (k(1:N-1), -1);
%! K(1, N) = K(1, N) - k(N);  K(N, 1) = K(N, 1) - k(N);
%! assert (full (Hs(1:N, 1:N)), K(perm, perm), 1e-12);
%! assert (full (Hs(N+1:end, N+1:end)), eye (N), 0);
%! assert (nnz (Hs(1:N, N+1:end)), 0);
%! ## the run against handles with the same f (the ring's order)
%! y0 = [0.1 * sin(2*pi*(1:N)/N).'; zeros(N, 1)];
%! ym = [y0(perm); y0(N + perm)];
%! bonds = @(dq) (dq + alpha*dq.^3) - circshift (dq + alpha*dq.^3, 1);
%! fh = @(t, y) [y(N+1:end); bonds(circshift(y(1:N), -1) - y(1:N))];
%! o = odepkgset ("TimeStepSize", 0.05);
%! sm = odeSV (m, [0 5], ym, o, alpha);
%! sh = odeSV (fh, [0 5], y0, odepkgset (o, "Explicit", "yes"));
%! assert (sm.y, sh.y([perm, N+perm], :), 1e-12);
## Folding, at its edges: a family of fewer than 8 members is derived entry by
## entry (the same kernels' values); a folded g that depends on p without
## "qp" is refused; a symbol unknown inside a folded template is named
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! for N = [8 9]                                     # 7 and 8 constraints
%!   x = arrayfun (@(i) sprintf ("x%d", i), 1:N, "UniformOutput", false);  u = strrep (x, "x", "u");
%!   g = arrayfun (@(i) sprintf ("x%d^2 - x%d^2", i, i-1), 2:N, "UniformOutput", false);
%!   H = [strjoin(strcat (u, "^2/2"), " + ") " + " strjoin(strcat ("cos(", x, ")"), " + ")];
%!   m = odepkg_model ("H", H, "q", x, "p", u, "g", g, "CacheDir", dir);
%!   assert (! isempty (strfind (fileread (m.source), "odepkg_G_fam")), N == 9);
%!   y = (1:2*N).' / 7;
%!   assert (__odepkg_model_eval__ (m, "f", 0, y, []), [y(N+1:end); sin(y(1:N))], 1e-15);
%!   assert (__odepkg_model_eval__ (m, "g", 0, y(1:N), []), y(2:N).^2 - y(1:N-1).^2, 1e-15);
%!   G = full (__odepkg_model_eval__ (m, "G", 0, y(1:N), []));
%!   assert (G, [-2*diag(y(1:N-1)), zeros(N-1, 1)] + [zeros(N-1, 1), 2*diag(y(2:N))], 1e-15);
%!   assert (m.g{3}, "-x3**2 + x4**2");                 # shown written out
%! endfor
%!error id=odepkg:invalidInput
%! x = arrayfun (@(i) sprintf ("x%d", i), 1:9, "UniformOutput", false);  u = strrep (x, "x", "u");
%! odepkg_model ("H", strjoin (strcat (u, "^2/2"), " + "), "q", x, "p", u,
%!               "g", arrayfun (@(i) sprintf ("x%d*u%d", i, i), 1:9, "UniformOutput", false), "CacheDir", tempname ());
%!error <uses stiffness, in none of q, p and Parameters>
%! x = arrayfun (@(i) sprintf ("x%d", i), 1:9, "UniformOutput", false);  u = strrep (x, "x", "u");
%! odepkg_model ("H", strjoin (strcat (u, "^2/2 + stiffness*", x), " + "), "q", x, "p", u, "CacheDir", tempname ());

## g(q, p) ("ConstraintVariables" "qp"): the Hopf example of odeRATTLE,
## g = |q|^2 + |p|^2 - 1, geometric RATTLE over the midpoint rule; the
## model's run equals the handle run with the same derivatives
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! m = odepkg_model ("H", "(p1^2 + p2^2)/2 + q2", "q", "q1 q2", "p", "p1 p2",
%!                   "g", "q1^2 + q2^2 + p1^2 + p2^2 - 1", "ConstraintVariables", "qp", "CacheDir", dir);
%! assert (m.constraint_variables, "qp");
%! y = [0.1; -0.2; 0.3; 0.4];
%! assert (__odepkg_model_eval__ (m, "G", 0, y, []), 2 * y.', 1e-15);
%! assert (__odepkg_model_eval__ (m, "GH", 0, y, []), 2 * eye (4), 1e-15);
%! z = [-0.78652612; -0.4043988; -0.3880746864163783; 0.2173391755798215];
%! z = z / norm (z);
%! ## on the hidden constraint {g, H} = 2 (q.p - p2) = 0: slide along the fibre
%! s = fzero (@(s) [cos(2*s) * z(1:2) + sin(2*s) * z(3:4)].' * [-sin(2*s) * z(1:2) + cos(2*s) * z(3:4)] ...
%!            - (-sin(2*s) * z(2) + cos(2*s) * z(4)), 0);
%! y0 = [cos(2*s) * z(1:2) + sin(2*s) * z(3:4); -sin(2*s) * z(1:2) + cos(2*s) * z(3:4)];
%! o = odepkgset ("TimeStepSize", 0.1);
%! [tn, yn] = odeRATTLE (m, [0 20], y0, o);
%! oh = odepkgset (o, "ConstraintVariables", "qp", "ConstraintsNb", 1, "ConstraintFcn", @(y) y.' * y - 1,
%!                 "ConstraintGradFcn", @(y) 2 * y.', "ConstraintHessFcn", @(y) 2 * eye (4),
%!                 "HamiltonianHessFcn", @(t, y) blkdiag (zeros (2), eye (2)));
%! [th, yh] = odeRATTLE (@(t, y) [y(3:4); 0; -1], [0 20], y0, oh);
%! assert (tn, th);
%! assert (yn, yh, 1e-12);
%! assert (sum (yn.^2, 2), ones (size (tn)), 1e-13);
%! [~, ys] = odeSHAKE (m, [0 2], y0, o);
%! [~, yhs] = odeSHAKE (@(t, y) [y(3:4); 0; -1], [0 2], y0, oh);
%! assert (ys, yhs, 1e-12);

## your own C: a hand-written oscillator (the generator's signature),
## compiled into the cache ("CFile") or loaded as it is ("Library"),
## equal to the handle run; a file of another ABI is refused
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! cdir = tempname ();  mkdir (cdir);
%! c = fullfile (cdir, "osc.c");
%! fid = fopen (c, "w");
%! fputs (fid, ["int odepkg_abi (void) { return 2; }\n", ...
%!   "void odepkg_dims (int *d) { d[0] = 1; d[1] = 0; d[2] = 1; d[3] = 1; }\n", ...
%!   "int odepkg_nnz (int which) { return which == 0 ? 2 : -1; }\n", ...
%!   "void odepkg_pattern (int which, int *r, int *c) { (void) which; r[0] = 0; c[0] = 0; r[1] = 1; c[1] = 1; }\n", ...
%!   "void odepkg_H (double t, const double *x, const double *k, double *o) { (void) t; o[0] = 0.5 * x[1] * x[1] + 0.5 * k[0] * x[0] * x[0]; }\n", ...
%!   "void odepkg_f (double t, const double *x, const double *k, double *o) { (void) t; o[0] = x[1]; o[1] = -k[0] * x[0]; }\n", ...
%!   "void odepkg_hess (double t, const double *x, const double *k, double *o) { (void) t; (void) x; o[0] = k[0]; o[1] = 1; }\n"]);
%! fclose (fid);
%! [m, info] = odepkg_model ("CFile", c, "Parameters", "k", "Separable", true, "CacheDir", dir);
%! assert ([m.d, m.m, info.compiled], [1, 0, true]);
%! o = odepkgset ("TimeStepSize", 0.01);
%! [t, y] = odeSV (m, [0 10], [1; 0], o, 4);
%! [~, yh] = odeSV (@(t, y, k) [y(2); -k*y(1)], [0 10], [1; 0], odepkgset (o, "Explicit", "yes"), 4);
%! assert (y, yh, 1e-13);
%! assert (y(:,1), cos (2 * t), 2e-3);
%! [~, info2] = odepkg_model ("CFile", c, "Parameters", "k", "Separable", true, "CacheDir", dir);
%! assert (info2.cached && ! info2.compiled);
%! so = fullfile (cdir, "libosc.so");
%! assert (system (sprintf ('gcc -O2 -shared -fPIC -o "%s" "%s"', so, c)), 0);
%! ml = odepkg_model ("Library", so, "Parameters", "k", "CacheDir", dir);
%! assert (! ml.separable);
%! [~, yl] = odeSV (ml, [0 1], [1; 0], o, 4);           # implicit SV on the kernels' Hessian
%! [~, yhl] = odeSV (@(t, y, k) [y(2); -k*y(1)], [0 1], [1; 0], odepkgset (o, "HamiltonianHessFcn", @(t, y, k) diag ([k, 1])), 4);
%! assert (yl, yhl, 1e-13);
%! fail ('odepkg_model ("Library", so, "Parameters", {"k", "c"})', "has 1 parameters");
%! fid = fopen (c, "w");
%! fputs (fid, "int odepkg_abi (void) { return 1; }\nvoid odepkg_dims (int *d) { d[0] = 1; d[1] = 0; d[2] = 0; }\n");
%! fclose (fid);
%! fail ('odepkg_model ("CFile", c, "CacheDir", dir)', "have ABI 1, not 2");
%! confirm_recursive_rmdir (false, "local");
%! rmdir (cdir, "s");

## a "Library" rebuilt at the same path: the next run takes the new code
## (the loaded kernels are kept open from run to run, NativeKernels.h, but
## a file replaced or rewritten is loaded anew)
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! cdir = tempname ();  mkdir (cdir);
%! c = fullfile (cdir, "osc.c");
%! so = fullfile (cdir, "libosc.so");
%! for w2 = [1, 4, 9]
%!   fid = fopen (c, "w");
%!   fputs (fid, ["int odepkg_abi (void) { return 2; }\n", ...
%!     "void odepkg_dims (int *d) { d[0] = 1; d[1] = 0; d[2] = 0; d[3] = 1; }\n", ...
%!     "int odepkg_nnz (int which) { return which == 0 ? 2 : -1; }\n", ...
%!     "void odepkg_pattern (int which, int *r, int *c) { (void) which; r[0] = 0; c[0] = 0; r[1] = 1; c[1] = 1; }\n", ...
%!     sprintf("void odepkg_H (double t, const double *x, const double *k, double *o) { (void) t; (void) k; o[0] = 0.5 * x[1] * x[1] + 0.5 * %d * x[0] * x[0]; }\n", w2), ...
%!     sprintf("void odepkg_f (double t, const double *x, const double *k, double *o) { (void) t; (void) k; o[0] = x[1]; o[1] = -%d * x[0]; }\n", w2), ...
%!     sprintf("void odepkg_hess (double t, const double *x, const double *k, double *o) { (void) t; (void) x; (void) k; o[0] = %d; o[1] = 1; }\n", w2)]);
%!   fclose (fid);
%!   assert (system (sprintf ('gcc -O2 -shared -fPIC -o "%s" "%s"', so, c)), 0);
%!   ml = odepkg_model ("Library", so, "Separable", true, "CacheDir", cdir);
%!   [t, y] = odeSV (ml, [0 1], [1; 0], odepkgset ("TimeStepSize", 1e-3));
%!   assert (y(end, 1), cos (sqrt (w2)), 1e-5);         # the frequency of this build
%! endfor
%! confirm_recursive_rmdir (false, "local");
%! rmdir (cdir, "s");

## the cache is keyed on the inputs: a second build runs neither SymPy nor
## the compiler, in this session or another one (without octave-symbolic
## loaded); two processes building the same model at once into a fresh
## cache both succeed and leave one object
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! cdir = tempname ();
%! here = fileparts (which ("odepkg_model"));
%! src = fullfile (fileparts (here), "src");
%! script = sprintf (['addpath ("%s"); addpath ("%s"); [m, i] = odepkg_model ("H", "(p1^2 + p2^2)/2 + q2", ', ...
%!                    '"q", "q1 q2", "p", "p1 p2", "g", "q1^2 + q2^2 - 1", "CacheDir", "%s"); ', ...
%!                    'printf ("cached=%%d symbolic=%%d\\n", i.cached, ! isempty (which ("pycall_sympy__")))'], here, src, cdir);
%! run = @(k) sprintf ("%s --norc --no-gui --eval '%s' > %s.%d 2>&1", fullfile (OCTAVE_HOME, "bin", "octave-cli"),
%!                      script, cdir, k);
%! st = system (sprintf ("(%s; echo $? >> %s.1) & (%s; echo $? >> %s.2) & wait", run (1), cdir, run (2), cdir));
%! for k = 1:2
%!   out = fileread (sprintf ("%s.%d", cdir, k));
%!   assert (regexp (out, '0\s*$', "once") > 0, out);      # exit status 0
%!   assert (! isempty (strfind (out, "cached=0")), out);
%! endfor
%! assert (numel (glob (fullfile (cdir, "*.so"))), 1);
%! assert (numel (glob (fullfile (cdir, "odepkg_input_*.mat"))), 1);
%! assert (isempty (glob (fullfile (cdir, "*.tmp"))) && numel (glob (fullfile (cdir, "*"))) == 3);
%! ## a new session: a hit, with pycall_sympy__ shadowed by one that fails
%! nosym = [cdir "_nosympy"];
%! mkdir (nosym);
%! fid = fopen (fullfile (nosym, "pycall_sympy__.m"), "w");
%! fputs (fid, "function varargout = pycall_sympy__ (varargin)\n  error (\"SymPy was called\");\nend\n");
%! fclose (fid);
%! script = [sprintf('addpath ("%s"); ', nosym), script];
%! run = @(k) sprintf ("%s --norc --no-gui --eval '%s' > %s.%d 2>&1", fullfile (OCTAVE_HOME, "bin", "octave-cli"),
%!                      script, cdir, k);
%! system (run (3));
%! out = fileread ([cdir ".3"]);
%! assert (! isempty (strfind (out, "cached=1")), out);
%! unlink (fullfile (nosym, "pycall_sympy__.m"));
%! rmdir (nosym);
%! for k = 1:3
%!   unlink (sprintf ("%s.%d", cdir, k));
%! endfor
%! confirm_recursive_rmdir (false, "local");
%! rmdir (cdir, "s");

## bad input, new in ABI 2: a cache folder that cannot be written, an
## expression that is not finite, no C compiler
%!testif ; ! isempty (pkg ("list", "symbolic"))
%! f = tempname ();
%! fclose (fopen (f, "w"));                                # a file, not a folder
%! try
%!   odepkg_model ("H", "p^2/2 + q^2/3", "q", "q", "p", "p", "CacheDir", fullfile (f, "sub"));
%!   error ("no error");
%! catch err
%!   assert (err.identifier, "odepkg:modelCache");
%!   assert (! isempty (strfind (err.message, "cannot create the cache folder")));
%! end_try_catch
%! unlink (f);
%! fail ('odepkg_model ("H", "p^2/2 + q/0", "q", "q", "p", "p", "CacheDir", dir)', "H is not finite");
%! fail ('odepkg_model ("H", "p^2/2", "q", "q", "p", "p", "g", "q*(0/0)", "CacheDir", dir)', "g\\(1\\) is not finite");
%! old = getenv ("CC");
%! unwind_protect
%!   setenv ("CC", "/nonexistent/cc");
%!   try
%!     odepkg_model ("H", "p^2/2 + q^4/7", "q", "q", "p", "p", "CacheDir", tempname ());
%!     error ("no error");
%!   catch err
%!     assert (err.identifier, "odepkg:noCompiler");
%!     assert (! isempty (strfind (err.message, "no C compiler: /nonexistent/cc was not found")));
%!   end_try_catch
%! unwind_protect_cleanup
%!   setenv ("CC", old);
%! end_unwind_protect
%! fail ('odepkg_model ("H", "p^2", "q", "q", "p", "p", "Sparse", "maybe")', '"Sparse" must be one of');

%!demo
%! ## The same runs with a function handle and with a native model: CPU
%! ## time per step (median of 3 runs after a warm-up; on a shared machine
%! ## single figures move, the ratios are measured side by side).  Kepler
%! ## (e = 0.5) by explicit odeSV, 10^5 steps; the pendulum as a particle
%! ## on the unit circle by odeRATTLE, order 2 (10^4 steps) and order 8
%! ## (KahanLi8, 1000 steps); output at 3 times only.
%! pkg load symbolic
%! syms q1 q2 p1 p2 real
%! kep = odepkg_model ("H", (p1^2 + p2^2)/2 - 1/sqrt (q1^2 + q2^2), "q", [q1 q2], "p", [p1 p2]);
%! pen = odepkg_model ("H", (p1^2 + p2^2)/2 + q2, "q", [q1 q2], "p", [p1 p2], "g", q1^2 + q2^2 - 1);
%! fk = @(t, y) [y(3:4); -y(1:2) / norm(y(1:2))^3];
%! fp = @(t, y) [y(3:4); 0; -1];
%! cons = {"ConstraintFcn", @(q) q.'*q - 1, "ConstraintGradFcn", @(q) 2*q.', "ConstraintsNb", 1};
%! yk = [0.5; 0; 0; sqrt(3)];  yp = [sin(1.2); -cos(1.2); 0.3*cos(1.2); 0.3*sin(1.2)];
%! ## {label, steps, run with the handle, run with the model} (N steps to t = T)
%! sv = @(f, N, varargin) odeSV (f, [0 N/2 N] * 1e-3, yk, odepkgset ("TimeStepSize", 1e-3, varargin{:}));
%! ra = @(f, N, h, varargin) odeRATTLE (f, [0 N/2 N] * h, yp, odepkgset ("TimeStepSize", h, varargin{:}));
%! cases = {"Kepler, odeSV", 1e5, @(N) sv (fk, N, "Explicit", "yes"), @(N) sv (kep, N);
%!          "pendulum, odeRATTLE", 1e4, @(N) ra (fp, N, 0.01, "Explicit", "yes", cons{:}), @(N) ra (pen, N, 0.01);
%!          "pendulum, order 8", 1000, @(N) ra (fp, N, 0.1, "Order", 8, "Explicit", "yes", cons{:}), ...
%!                                     @(N) ra (pen, N, 0.1, "Order", 8)};
%! us = zeros (rows (cases), 2);
%! for i = 1:rows (cases)
%!   N = cases{i,2};
%!   for j = 1:2
%!     sol = cases{i,2+j} (N / 10);  tt = zeros (1, 3);      # warm-up (an output: no plot)
%!     for r = 1:3
%!       t0 = cputime ();  sol = cases{i,2+j} (N);  tt(r) = cputime () - t0;
%!     endfor
%!     us(i,j) = 1e6 * median (tt) / N;
%!   endfor
%! endfor
%! clf;
%! bar (us, "basevalue", 1e-2);
%! set (gca, "yscale", "log", "xtick", 1:rows (cases), "xticklabel", cases(:,1));
%! ylim ([1e-2 1e5]);
%! for i = 1:rows (cases)
%!   text (i - 0.14, us(i,1) * 1.6, sprintf ("%.3g", us(i,1)), "horizontalalignment", "center");
%!   text (i + 0.14, us(i,2) * 1.6, sprintf ("%.3g", us(i,2)), "horizontalalignment", "center");
%!   text (i, 8 * max (us(i,:)), sprintf ("%.0fx", us(i,1) / us(i,2)), "horizontalalignment", "center",
%!         "fontweight", "bold");
%! endfor
%! legend ("function handle", "native model", "location", "northwest");
%! ylabel ("CPU time per step [\\mus]");  grid on;
%! title ("The same runs with a function handle and with a native model");
%!test
%! if (exist (dir, "dir"))
%!   confirm_recursive_rmdir (false, "local");
%!   rmdir (dir, "s");
%! endif
