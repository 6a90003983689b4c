## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{cases} =} fuzz_cases (@var{seed}, @var{n})
## @var{n} fuzz cases (Octave statements, a cell of strings) for every public
## and internal entry point of odepkg, drawn reproducibly from @var{seed}:
## wrong types and shapes, non-finite and extreme values, user functions
## that error (with the identifier fuzz:user, so that their propagation is
## recognised), return the wrong size, NaN, complex, sparse, integer, a cell
## or nothing, odd option structs and time spans.  Every statement assigns
## its outputs to @code{out} (a cell), so the runner can check them.
## @end deftypefn

function cases = fuzz_cases (seed, n)
  rand ("twister", seed);
  fcns = {"@(t, x) -x", "@(t, x) [x(end/2+1:end); -x(1:end/2)]", ...
          "@(t, x) error ('fuzz:user', 'user function failed')", "@(t, x) [1; 2; 3]", ...
          "@(t, x) NaN (size (x))", "@(t, x) Inf (size (x))", "@(t, x) 1i * x", "@(t, x) sparse (x)", ...
          "@(t, x) {x}", "@(t, x) []", "@(t, x) int32 (x)", "@(t, x) single (x)", "@(t, x) x'", ...
          "@(t, x) 'ab'", "@(t, x) true (size (x))", "@(t, x) 1e308 * x", "'no_such_function_xyz'", ...
          "3", "[]", "'sin'", "@() 1", "@(t) t", "@(t, x) [x(2); -x(1)] * t^2"};
  spans = {"[0 1]", "0", "[0 0.5 1]", "[]", "[1 0]", "[0 Inf]", "[0 NaN]", "[0 1e-300]", "'ab'", ...
           "{0, 1}", "[0 1i]", "[0; 1]", "single ([0 1])", "int8 ([0 1])", "[0 1e300]", "[0 0]", ...
           "[0 1 1]", "[0 2 1]", "[-1 1]", "[0 4.9e-324]", "[1e16 1e16+2]", "true", "zeros (2)"};
  y0s = {"[1; 0]", "[1; 0; 0; 0]", "[]", "[NaN; 0]", "[Inf; 0]", "[1 0]", "1", "'a'", "{1}", ...
         "[1i; 0]", "sparse ([1; 0])", "int8 ([1; 0])", "1e308 * [1; 1]", "zeros (3, 1)", ...
         "true (2, 1)", "[1; 0; 0; 0; 0; 0; 0; 0; 0; 0]", "ones (2)", "-0 * [1; 1]", ...
         "[1 0 2; 0 1 0]", "[1 0; 0 1; 0 0; 0 0]", "[1 NaN; 0 0]", "ones (3, 2)", "zeros (2, 0)", ...
         "ones (2, 2, 2)", "sparse ([1 0; 0 1])"};
  optvals = {"0.1", "-1", "0", "NaN", "Inf", "[]", "'yes'", "'no'", "'Yes'", "'maybe'", "{1}", ...
             "[1 2]", "1e-300", "1e300", "5", "2.5", "true", "@(varargin) false", ...
             "@(t, x) deal (x(1), 0, 0)", "@(q) q' * q - 1", "@(q) 2 * q'", "1i", "int8 (3)", ...
             "struct ()", "'q'", "'qp'", "'midpoint'", "'S3'", "eye (3)", "'SO3xR3'", "-5", "1e9"};
  names = {"RelTol", "AbsTol", "InitialStep", "MaxStep", "TimeStepSize", "TimeStepNumber", ...
           "Explicit", "OutputFcn", "OutputSel", "Events", "Refine", "Stats", "NormControl", ...
           "ConstraintFcn", "ConstraintGradFcn", "ConstraintsNb", "ConstraintHessFcn", ...
           "HamiltonianHessFcn", "NewtonTol", "MaxNewtonIterations", "InitialProjection", ...
           "Q_DoFs", "P_DoFs", "NodeOutput", "ConstraintVariables", "BaseMethod", ...
           "ConstraintFlowFcn", "LieGroup", "MassMatrix", "HamiltonianFcn", "InvariantFcn", ...
           "Mass", "Jacobian", "NonNegative", "Vectorized", "Bogus"};
  solvers = {"odeSE", "odeSV", "odeVV", "odeRATTLE", "odeSHAKE", "odeSPVI", "odeRATTLie"};
  steppers = {"stormer_verlet", "symplectic_euler", "velocity_verlet", "rattle", "spectral_var_int"};
  pick = @(c) c{randi (numel (c))};
  cases = cell (n, 1);
  for i = 1:n
    ## mostly sane defaults, one or two arguments perturbed
    opts = sprintf ("odepkgset ('TimeStepSize', 0.1, 'TimeStepNumber', 5%s)", random_options (pick, names, optvals));
    r = rand ();
    if (r < 0.55)
      s = pick (solvers);
      f = "@(t, x) [x(end/2+1:end); -x(1:end/2)]";  tsp = "0";  y0 = "[1; 0]";
      if (any (strcmp (s, {"odeRATTLE", "odeSHAKE"})))
        y0 = "[1; 0; 0; 0]";
        opts = strrep (opts, "odepkgset (", "odepkgset ('ConstraintFcn', @(q) q' * q - 1, 'ConstraintsNb', 1, ");
      elseif (strcmp (s, "odeRATTLie"))
        y0 = "[1; 0; 0; 0; 0; 0; 0]";
        opts = strrep (opts, "odepkgset (", "odepkgset ('LieGroup', 'S3', ");
        f = "@(t, y) zeros (3, 1)";
      endif
      k = randi (4);
      if (k == 1) f = pick (fcns); endif
      if (k == 2) tsp = pick (spans); endif
      if (k == 3) y0 = pick (y0s); endif
      if (rand () < 0.3) opts = pick ({"struct ()", "[]", "3", "'RelTol'", "odeset ('RelTol', 1e-3)", opts}); endif
      if (rand () < 0.3)
        opts = strrep (opts, "'TimeStepSize', 0.1, 'TimeStepNumber', 5", "'RelTol', 1e-3");
        if (strcmp (tsp, "0")) tsp = "[0 1]"; endif
      endif
      nout = pick ({"[t, y]", "sol", "[t, y, te, ye, ie]", "[t, y, te, ye, ie, z]"});
      if (strcmp (nout, "sol"))
        cases{i} = sprintf ("sol = %s (%s, %s, %s, %s); out = {sol.x, sol.y};", s, f, tsp, y0, opts);
      else
        vars = strsplit (nout(2:end-1), ", ");
        cases{i} = sprintf ("%s = %s (%s, %s, %s, %s); out = {%s};", nout, s, f, tsp, y0, opts,
                            strjoin (vars, ", "));
      endif
    elseif (r < 0.7)
      st = pick (steppers);
      f = "@(t, x) [x(2); -x(1)]";  x = "[1; 0]";  dt = "0.1";  o = "odepkgset ()";
      if (strcmp (st, "rattle"))
        x = "[1; 0; 0; 0]";  f = "@(t, x) [x(3:4); 0; -1]";
        o = "odepkgset ('ConstraintFcn', @(q) q' * q - 1, 'ConstraintsNb', 1)";
      endif
      k = randi (5);
      if (k == 1) f = pick (fcns); endif
      if (k == 2) x = pick (y0s); endif
      if (k == 3) dt = pick (optvals); endif
      if (k == 4) o = pick ({"struct ()", "[]", "3", opts}); endif
      cases{i} = sprintf ("[a, b, c, d] = %s (%s, 0, %s, %s, %s, [], []); out = {a, b, c, d};", st, f, x, dt, o);
    elseif (r < 0.85)
      nm = pick (names);
      if (rand () < 0.2)
        nm = char (96 + randi (26, 1, randi (30)));
      endif
      cases{i} = sprintf ("o = odepkgset ('%s', %s, '%s', %s); out = {};", nm, pick (optvals),
                          pick (names), pick (optvals));
    else
      k = randi (6);
      switch (k)
        case 1
          cases{i} = sprintf ("[t, y, s, ok, msg] = __odepkg_integrate__ (%s, %s, %s, %s, %s, %s, 'fuzz'); out = {t, y};",
                              pick ({"'stormer_verlet'", "'rattle'", "'bogus'", "3", "'spectral_var_int'", "'velocity_verlet'"}),
                              pick (fcns), pick ({"[0; 1]", "[0; NaN]", "[0; 0.5; 0.5; 1]", "[]", "[0; 1; 0.5]", "1"}),
                              pick (y0s), pick ({"odepkgset ('TimeStepSize', 0.1)", "struct ()", "3"}),
                              pick ({"{}", "{1}", "3"}));
        case 2
          cases{i} = sprintf ("[t, y, s, ok, msg] = __odepkg_rattlie__ (%s, %s, %s, %s, %s, 'fuzz', %s); out = {t, y};",
                              pick ({"@(t, y) zeros (3, 1)", pick(fcns)}),
                              pick ({"[0; 1]", "[0; NaN]", "[]", "[0; 0.5; 1]"}),
                              pick ({"[1; 0; 0; 0; 0; 0; 0]", pick(y0s)}),
                              pick ({"odepkgset ('LieGroup', 'S3', 'TimeStepSize', 0.1)", "odepkgset ('LieGroup', 'bogus')", "struct ()", "odepkgset ('LieGroup', 'SO3', 'TimeStepSize', 0.1)"}),
                              pick ({"{}", "3"}), pick ({"false", "true", "'x'"}));
        case 3
          cases{i} = sprintf ("c = __odepkg_callback_cost__ (%s, %s, %s, %s); out = {c};", pick (fcns),
                              pick ({"0", "[]", "NaN", "'a'"}), pick (y0s), pick ({"10", "0", "-1", "NaN", "1e3"}));
        case 4
          cases{i} = sprintf ("y = __odepkg_deval__ (%s, %s); out = {y};",
                              pick ({"struct ('x', [0 1 2], 'y', [1 2 3; 4 5 6])", "struct ('x', [0 1], 'y', [1 2])", ...
                                     "struct ()", "3", "struct ('x', [], 'y', [])", "struct ('x', [0 NaN], 'y', [1 2])", ...
                                     "odeSV (@(t, x) [x(2); -x(1)], [0 1], [1; 0])"}),
                              pick ({"0.5", "[0 0.5 1]", "NaN", "5", "'a'", "[]", "1i", "-1"}));
        case 5
          ## odeRATTLie's interpolant on the group (deval, Refine)
          X = pick ({"[0 0.1]", "[0 0.1 0.2]", "[0 0]", "[0.1 0]", "[]", "[0 NaN]", "'ab'", "[0 1e300]"});
          Y = pick ({"[1 cos(0.05); 0 sin(0.05); 0 0; 0 0; 0 1; 0 0; 0 0]", "zeros (7, 2)", "ones (7, 3)", ...
                     "[1 -1; zeros(3, 2); 0 0; 0 0; 1e300 0]", "[1 1; 0 0; 0 0; 0 0; 0 0; 0 0; NaN 0]", "{1}", ...
                     "[1 1; 0 0]", "[1 0; 0 0; 0 0; 0 1; 50 50; 0 0; 0 0]"});
          T = pick ({"0.05", "[0 0.05 0.1]", "NaN", "5", "'a'", "[]", "1i", "-1"});
          O = pick ({"struct ('LieGroup', 'S3')", "struct ('LieGroup', 'bogus')", "struct ()", "3", ...
                     "struct ('LieGroup', 'S3', 'ConstraintFcn', @(q) q(1) - 1, 'ConstraintsNb', 1)", ...
                     "struct ('LieGroup', 'S3', 'ConstraintFcn', @(q) NaN, 'ConstraintsNb', 1)", ...
                     "struct ('LieGroup', 'S3', 'MassMatrix', -eye (3))", ...
                     "struct ('LieGroup', struct ('dim', 3, 'compose_exp', @(q, w) q, 'tangent', @(w) eye (3), 'ad', @(v) zeros (3)))"});
          F = pick ({"@(t, y) zeros (3, 1)", pick(fcns)});  E = pick ({"{}", "3"});  L = pick ({"false", "true", "'x'"});
          ## mostly sane: a quarter turn of S3 perturbed in one argument
          a = {"[0 0.1]", "[1 cos(0.05); 0 sin(0.05); 0 0; 0 0; 0 1; 0 0; 0 0]", "[0 0.05 0.1]", ...
               "struct ('LieGroup', 'S3', 'ConstraintFcn', @(q) q(4), 'ConstraintGradFcn', @(q) [0 0 1], 'ConstraintsNb', 1)", ...
               "@(t, y) zeros (3, 1)", "{}", "true"};
          b = {X, Y, T, O, F, E, L};
          k = randi (7);
          if (rand () < 0.6)
            a{k} = b{k};
            b = a;
          endif
          cases{i} = sprintf ("[y, yp] = __odepkg_rattlie__ ('interpolate', %s, %s, %s, %s, %s, %s, %s); out = {y, yp};", b{:});
        case 6
          ## the ensemble entry point: two oscillators, one argument perturbed
          a = {"'stormer_verlet'", "@(t, x) [x(2,:); -x(1,:)]", "[0 1]", "[1 0; 0 1]", ...
               "odepkgset ('TimeStepSize', 0.1, 'Explicit', 'yes')", "{}"};
          b = {pick({"'rattle'", "'bogus'", "3", "'velocity_verlet'", "'symplectic_euler'"}), pick(fcns), ...
               pick(spans), pick(y0s), pick({"struct ()", "3", opts, "odepkgset ('Explicit', 'yes', 'Events', @(t, x) deal (x(1,:), 0, 0), 'TimeStepSize', 0.1)"}), ...
               pick({"{1}", "3"})};
          k = randi (6);
          a{k} = b{k};
          cases{i} = sprintf ("[t, y, s, st, msg] = __odepkg_ensemble__ (%s, %s, %s, %s, %s, %s, 'fuzz'); out = {t, y};", a{:});
      endswitch
    endif
  endfor
endfunction

function s = random_options (pick, names, optvals)
  s = "";
  for k = 1:randi ([0 2])
    s = [s sprintf(", '%s', %s", pick (names), pick (optvals))];
  endfor
endfunction
