## Copyright (C) 2026 The odepkg developers
## SPDX-License-Identifier: GPL-3.0-or-later

## -*- texinfo -*-
## @deftypefn {} {@var{T} =} odepkg_option_table ()
## The one declarative table of the package's options: a struct array with
## fields @code{name}, @code{kind} (how the value is validated), @code{default},
## @code{solvers} (the solvers that honour it, or @qcode{"all"}) and
## @code{help} (one line).  It drives @code{odepkgset} (the accepted names),
## @code{odepkg_options} (defaults, validation, and the refusal of options a
## solver does not honour) and the list printed by @code{odepkg ()}.
##
## Kinds: @qcode{"positive"} (finite scalar > 0), @qcode{"count"} (positive
## integer), @qcode{"onoff"}, @qcode{"handle"}, @qcode{"choice"} (one of
## @code{values}), @qcode{"abstol"}, and @qcode{"special"} (checked by the
## solver or the compiled side, with its own message).
## @end deftypefn

function T = odepkg_option_table ()

  persistent table = build ();
  T = table;

endfunction

function T = build ()

  all_ = "all";
  newton = {"odeSE", "odeSV", "odeRATTLE", "odeSHAKE", "odeSPVI", "odeRATTLie"};
  implicit = {"odeSE", "odeSV", "odeRATTLE", "odeSHAKE", "odeSPVI"};
  shake_rattle = {"odeRATTLE", "odeSHAKE"};
  constrained = {"odeRATTLE", "odeSHAKE", "odeRATTLie"};
  spvi = {"odeSPVI"};
  composed = {"odeSV", "odeVV", "odeRATTLE", "odeRATTLie"};

  ## name, kind, default, solvers, help
  rows = {
    "RelTol", "positive", 1e-3, all_, ...
      "relative tolerance of the step-doubling error estimate (adaptive steps)";
    "AbsTol", "abstol", 1e-6, all_, ...
      "absolute tolerance: a scalar or one entry per state component";
    "NormControl", "onoff", "off", all_, ...
      "control the norm of the error instead of each component";
    "InitialStep", "positive", [], all_, "first trial step of adaptive runs";
    "MaxStep", "positive", [], all_, "largest step (default a tenth of the span)";
    "OutputFcn", "handle", [], all_, ...
      "called as ode45 does (\"init\", each output, \"done\"); odeplot when no output is requested";
    "OutputSel", "special", [], all_, "state components passed to OutputFcn";
    "Stats", "onoff", "off", all_, "print the counts of steps, calls and Newton iterations";
    "Progress", "choice", "off", all_, ...
      "how far a long run is: \"text\" (a line in the terminal: percent, elapsed, remaining), \"waitbar\", or \"on\" (waitbar in the GUI, else text)";
    "Vectorized", "special", [], all_, ...
      "accepted: the solvers call FCN with one state at a time, which a vectorized FCN handles";
    "Events", "handle", [], all_, ...
      "[value, isterminal, direction] = fcn (t, y): zero crossings located on the method's own steps";
    "Refine", "count", 1, {"odeSE", "odeSV", "odeVV", "odeRATTLE", "odeSHAKE", "odeSPVI", "odeRATTLie"}, ...
      "output Refine - 1 more points inside each step, from deval's interpolant";
    "StepControl", "choice", "doubling", all_, ...
      "adaptive steps: \"doubling\" (step doubling) or \"reversible\" (time-reversible step density, odeSV/odeVV/odeRATTLE/odeRATTLie)";
    "StepDensityFcn", "handle", [], {"odeSV", "odeVV", "odeRATTLE", "odeRATTLie"}, ...
      "G = fcn (t, y), or [G; rho]: (d rho/dt) / rho of the step density rho(y) of StepControl \"reversible\" (default the rate sqrt(|q'| |p'| / (|q| |p|)); odeRATTLie: |(v, v')| in the Lie algebra)";
    "StepDensityEps", "special", [], {"odeSV", "odeVV", "odeRATTLE", "odeRATTLie"}, ...
      "eps of StepControl \"reversible\" (steps eps/rho), or [first_eps, eps]: continue or reverse a run exactly (sol.stepdensity)";
    "InitialStepDensity", "positive", [], {"odeSV", "odeVV", "odeRATTLE", "odeRATTLie"}, ...
      "rho at t0 of StepControl \"reversible\" (default rho(y0)): continue or reverse a run exactly (sol.stepdensity.rho)";
    "TimeStepSize", "positive", [], all_, "fixed steps of this size";
    "TimeStepNumber", "count", [], all_, "with a scalar TSPAN: that many fixed steps";
    "HamiltonianFcn", "handle", [], all_, ...
      "H (t, y): monitored at the output times (sol.invariants), at the cost of its own calls";
    "InvariantFcn", "handle", [], all_, ...
      "I (t, y), a vector of first integrals monitored at the output times (sol.invariants)";
    "Explicit", "onoff", "no", {"odeSE", "odeSV", "odeRATTLE", "odeSHAKE"}, ...
      "\"yes\" for separable H = T(p) + V(q) (verified; odepkg:notSeparable otherwise): explicit schemes, fewest calls";
    "HamiltonianHessFcn", "handle", [], implicit, ...
      "the 2d-by-2d Hessian of H in (q, p) order: Newton's Jacobian, and T_pp for Explicit odeRATTLE/odeSHAKE (differences of f otherwise)";
    "NewtonTol", "positive", [], newton, "tolerance on the scaled Newton correction (default 1e-12)";
    "MaxNewtonIterations", "count", 30, newton, "Newton iterations per solve";
    "DerivativeCheck", "onoff", "on", newton, ...
      "check the given derivatives (Hessians, ConstraintGradFcn, a LieGroup struct) against differences before the first step";
    "ConstraintFcn", "handle", [], constrained, "the constraints g = 0 (m-by-1)";
    "ConstraintGradFcn", "handle", [], constrained, "their gradient (m-by-d; \"qp\": m-by-2d)";
    "ConstraintHessFcn", "handle", [], shake_rattle, "their Hessians (d-by-d-by-m; \"qp\": 2d-by-2d-by-m)";
    "ConstraintsNb", "count", [], constrained, "the number m of constraints";
    "NonholonomicFcn", "handle", [], {"odeRATTLE", "odeRATTLie"}, ...
      "A (q), k-by-d: velocity constraints A(q) H_p = 0 (rolling, skates), with or without ConstraintFcn (the nonholonomic RATTLE; separable H); odeRATTLie: B_nh (q), k-by-n, B_nh(q) v = 0 on the body velocities";
    "NonholonomicsNb", "count", [], {"odeRATTLE", "odeRATTLie"}, "the number k of velocity constraints (k + m < d; odeRATTLie: k + m < n, the group's dimension)";
    "MonitorMultipliers", "onoff", "off", constrained, ...
      "\"on\": sol.lambda (the multipliers of y' = f + J Dg' lambda) and sol.residuals (|g|, |Dg f|) at the output times, computed after the run (2m + 3 calls of f per output, counted in stats; odeRATTLie: residuals only, its sol.lambda is always returned; with NonholonomicFcn also sol.mu and sol.residuals.nonholonomic = |A H_p|)";
    "OnFailure", "choice", "warning", all_, ...
      "a step that cannot be completed mid-run: \"warning\" (return what was computed, as ode45) or \"error\" (odepkg:integrationFailed, for sampling loops)";
    "InitialProjection", "choice", "warn", constrained, ...
      "inconsistent initial data: \"warn\" (project and warn) or \"error\"";
    "ConstraintVariables", "choice", "q", shake_rattle, ...
      "\"q\": g(q) (holonomic), \"qp\": g(q, p) on phase space (McLachlan, Modin, Verdier, Wilkins 2014)";
    "ConstraintFlowFcn", "handle", [], shake_rattle, ...
      "z = fcn (y, s): the fibre flow exp (sum s_i X_gi) (y) for \"qp\" constraints";
    "BaseMethod", "choice", [], shake_rattle, ...
      "symplectic map under SHAKE/RATTLE: stormer_verlet, midpoint or symplectic_euler";
    "Composition", "choice", [], composed, ...
      "symmetric composition raising the order (TripleJump4, McLachlan4, KahanLi6, KahanLi8, ...)";
    "Order", "special", [], composed, ...
      "2, 4, 6, 8 or 10: the recommended composition of that order (McLachlan4, KahanLi6, KahanLi8, SofroniouSpaletta10)";
    "CompensatedSummation", "onoff", "off", {"odeSV", "odeVV"}, ...
      "sum the state updates with compensation (Kahan): round-off no longer random-walks over millions of fixed steps (odeSV with Explicit, odeVV)";
    "Threads", "count", [], {"odeSE", "odeSV", "odeVV", "odeRATTLE"}, ...
      "ensembles of a model (Y0 with K columns, FCN from odepkg_model): threads evaluating the members' kernels (default: the cores, at most one per 64 members); the results do not depend on it";
    "LieGroup", "special", [], {"odeRATTLie"}, "the configuration group: a name (\"SO3\", \"S3xR3\", ...) or a struct";
    "MassMatrix", "special", [], {"odeRATTLie"}, "the constant n-by-n mass matrix (default the identity)";
    "Q_DoFs", "special", [], spvi, "Legendre modes per step (2..30)";
    "P_DoFs", "special", [], spvi, "Gauss nodes per step (Q_DoFs - 1..30)";
    "Nodes", "special", [], spvi, "the 2013 odepkg spectral_var_int's quadrature nodes table (checked against Gauss-Legendre)";
    "Weights", "special", [], spvi, "the 2013 odepkg spectral_var_int's quadrature weights table";
    "Legendre", "special", [], spvi, "the 2013 odepkg spectral_var_int's Legendre values table";
    "Derivatives", "special", [], spvi, "the 2013 odepkg spectral_var_int's Legendre derivatives table";
    "Extremes", "special", [], spvi, "the 2013 odepkg spectral_var_int's end-point values table";
    "NodeOutput", "onoff", "off", spvi, "also output the states at the Gauss nodes of every step";
  };
  T = struct ("name", rows(:, 1), "kind", rows(:, 2), "default", rows(:, 3),
              "solvers", rows(:, 4), "help", rows(:, 5), "values", {{}});
  for i = 1:numel (T)
    switch (T(i).name)
      case "Progress"
        T(i).values = {"off", "on", "text", "waitbar"};
      case "InitialProjection"
        T(i).values = {"warn", "error"};
      case "OnFailure"
        T(i).values = {"warning", "error"};
      case "ConstraintVariables"
        T(i).values = {"q", "qp"};
      case "BaseMethod"
        T(i).values = {"stormer_verlet", "midpoint", "symplectic_euler"};
      case "Composition"             # the tables of src/core/composition/CompositionTables.hpp
        T(i).values = {"TripleJump4", "Suzuki4", "McLachlan4", "Yoshida6", "KahanLi6", ...
                       "McLachlan8", "KahanLi8", "SofroniouSpaletta10"};
      case "StepControl"
        T(i).values = {"doubling", "reversible"};
    endswitch
  endfor

endfunction
