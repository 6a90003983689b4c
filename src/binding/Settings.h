// Settings.h — reads an odeset-style options struct into the core's settings.
// The m-file drivers validate first and give the friendlier messages; this is
// the second line of defence for the compiled steppers called directly.
#ifndef ODEPKG_BINDING_SETTINGS_H
#define ODEPKG_BINDING_SETTINGS_H

#include "loop/Integrator.hpp"
#include "loop/ReversibleStepDensity.hpp"
#include "NewtonSolver.hpp"
#include "composition/CompositionTables.hpp"
#include "OctaveCallbacks.h"

#include <octave/oct.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>

namespace odepkg::binding {

/// Largest Q_DoFs / P_DoFs accepted (order up to 58).  Kepler e = 0.6,
/// h = 0.1: energy to 1e-13 up to Q = P = 34; from Q = 36 some (Q, P) give
/// errors of 1e-5 to 1e-2 without a Newton failure (not understood yet).
constexpr int kMaxSpectralDofs = 30;

struct Settings {
  UserFunctions fns;
  bool explicit_scheme = false;
  NewtonOptions newton;
  IntegratorOptions integrator;
  bool newton_tol_given = false;
  int q_dofs = 0, p_dofs = 0;
  /// The 2013 odepkg spectral_var_int's precomputed tables (Nodes, Weights, Legendre, Derivatives,
  /// Extremes), only checked against the computed ones; empty = not given.
  Mat nodes, weights, legendre, derivatives, extremes;
  bool node_output = false;  ///< SPVI: also output the states at the Gauss nodes
  bool initial_projection_error = false;  ///< InitialProjection = "error"
  /// DerivativeCheck (default on): the user's derivatives are checked
  /// against differences once before the first step (DerivativeCheck.hpp).
  bool derivative_check = true;
  std::string base_method;  ///< BaseMethod of geometric SHAKE/RATTLE; empty: the default
  /// Composition method raising the order (Composition, or Order's
  /// recommended table); null: the plain method.
  const composition::CompositionTable* composition = nullptr;
  /// CompensatedSummation: the state updates summed with compensation
  /// (CompensatedSum.hpp); explicit Störmer–Verlet and velocity Verlet.
  bool compensated_summation = false;
  octave_value output_fcn;
  octave_value events;  ///< odeset's Events function (empty: none)
  bool reversible = false;  ///< StepControl "reversible" (Hairer–Söderlind step density)
  octave_value step_density;  ///< StepDensityFcn: G = (d rho/dt) / rho, or [G; rho] (empty: the default)
  DensityStart density_start;  ///< StepDensityEps, InitialStepDensity (0: chosen by the run)
  Array<octave_idx_type> output_sel;  ///< zero-based; empty: all components
};

class OptionReader {
 public:
  OptionReader(const octave_value& opts, std::string who) : who_(std::move(who)) {
    if (opts.is_defined() && !opts.isempty()) {
      if (!opts.isstruct() || opts.numel() != 1)
        error_with_id("odepkg:invalidOption", "%s: OPTIONS must be a scalar struct (from odeset or odepkgset)",
                      who_.c_str());
      map_ = opts.scalar_map_value();
    }
  }

  bool has(const char* name) const {
    return map_.isfield(name) && !map_.getfield(name).isempty();
  }
  octave_value get(const char* name) const { return has(name) ? map_.getfield(name) : octave_value(); }

  double real_scalar(const char* name, double dflt, bool positive) const {
    if (!has(name)) return dflt;
    const octave_value v = map_.getfield(name);
    if (!v.isreal() || !v.is_scalar_type() || !(v.isnumeric() || v.islogical()))
      bad(name, "a real scalar");
    const double x = v.double_value();
    if (!std::isfinite(x) && !(std::isinf(x) && x > 0)) bad(name, "a finite real scalar");
    if (positive && !(x > 0)) bad(name, "a positive real scalar");
    return x;
  }

  static constexpr int kNoMax = 1000000000;  // integer options: beyond this, a typo

  int integer(const char* name, int dflt, int min_value, int max_value = kNoMax) const {
    if (!has(name)) return dflt;
    const double x = real_scalar(name, dflt, false);
    if (x != std::round(x) || x < min_value || x > max_value) {
      const std::string what = max_value < kNoMax
                                   ? "an integer from " + std::to_string(min_value) + " to " +
                                         std::to_string(max_value)
                                   : "an integer >= " + std::to_string(min_value);
      bad(name, what.c_str());
    }
    return static_cast<int>(x);
  }

  bool flag(const char* name, bool dflt) const {
    if (!has(name)) return dflt;
    const octave_value v = map_.getfield(name);
    if (v.is_string()) {
      const std::string s = v.string_value();
      if (s == "yes" || s == "on" || s == "true") return true;
      if (s == "no" || s == "off" || s == "false") return false;
    } else if ((v.islogical() || v.isnumeric()) && v.is_scalar_type() && v.isreal()) {
      return v.double_value() != 0;
    }
    bad(name, "\"yes\" or \"no\" (or a logical scalar)");
    return dflt;
  }

  /// One of `allowed` (exact, case-sensitive as the m-file driver checks),
  /// or `dflt` when absent.
  std::string choice(const char* name, std::initializer_list<const char*> allowed, const char* dflt) const {
    if (!has(name)) return dflt;
    const octave_value v = map_.getfield(name);
    std::string list;
    for (const char* a : allowed) {
      if (v.is_string() && v.string_value() == a) return a;
      list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
    }
    bad(name, ("one of " + list).c_str());
    return dflt;
  }

  /// A real finite matrix, or an empty one when absent.
  Mat matrix(const char* name) const {
    if (!has(name)) return Mat();
    const octave_value v = map_.getfield(name);
    if (!v.isnumeric() || !v.isreal() || v.ndims() != 2) bad(name, "a real matrix");
    const Matrix a = v.matrix_value();
    Mat m(a.rows(), a.cols());
    for (octave_idx_type j = 0; j < a.cols(); ++j)
      for (octave_idx_type i = 0; i < a.rows(); ++i) {
        if (!std::isfinite(a(i, j))) bad(name, "finite");
        m(i, j) = a(i, j);
      }
    return m;
  }

  octave_value function(const char* name) const {
    if (!has(name)) return octave_value();
    const octave_value v = map_.getfield(name);
    if (!v.is_function_handle() && !v.is_inline_function()) bad(name, "a function handle");
    return v;
  }

  [[noreturn]] void bad(const char* name, const char* what) const {
    error_with_id("odepkg:invalidOption", "%s: option \"%s\" must be %s", who_.c_str(), name, what);
  }

 private:
  std::string who_;
  octave_scalar_map map_;
};

/// "Composition" (a table name) and "Order" (2: none; 4, 6, 8, 10: the
/// recommended table); both given, they must agree.
inline const composition::CompositionTable* read_composition(const OptionReader& r, const std::string& who) {
  const composition::CompositionTable* t = nullptr;
  if (r.has("Composition")) {
    const octave_value v = r.get("Composition");
    if (v.is_string()) t = composition::find_composition(v.string_value());
    if (!t) r.bad("Composition", ("one of " + composition::composition_names()).c_str());
  }
  if (r.has("Order")) {
    const int p = r.integer("Order", 2, 2, 10);
    const composition::CompositionTable* rec = composition::recommended_composition(p);
    if (p != 2 && !rec) r.bad("Order", "2, 4, 6, 8 or 10");
    if (t && t->order != p)
      error_with_id("odepkg:invalidOption", "%s: options \"Composition\" (%s, order %d) and \"Order\" (%d) disagree",
                    who.c_str(), t->name, t->order, p);
    if (!t) t = rec;
  }
  return t;
}

/// All settings of a solver for a state of size n = 2d.
inline Settings read_settings(const octave_value& opts, const std::string& who, int n) {
  OptionReader r(opts, who);
  Settings s;
  s.explicit_scheme = r.flag("Explicit", false);
  s.derivative_check = r.flag("DerivativeCheck", true);
  s.fns.hessian = r.function("HamiltonianHessFcn");
  s.fns.g = r.function("ConstraintFcn");
  s.fns.G = r.function("ConstraintGradFcn");
  s.fns.GH = r.function("ConstraintHessFcn");
  s.fns.m = r.integer("ConstraintsNb", 0, 1);
  s.fns.flow = r.function("ConstraintFlowFcn");
  s.fns.A = r.function("NonholonomicFcn");
  s.fns.k = r.integer("NonholonomicsNb", 0, 1);
  if (s.fns.A.is_defined() != (s.fns.k > 0))
    error_with_id("odepkg:invalidOption",
                  "%s: options \"NonholonomicFcn\" (A(q) of the velocity constraints A(q) H_p = 0) and "
                  "\"NonholonomicsNb\" (their number k) are given together", who.c_str());
  if (s.fns.k > 0 && s.fns.k + s.fns.m >= n / 2)
    error_with_id("odepkg:invalidOption",
                  "%s: options \"NonholonomicsNb\" + \"ConstraintsNb\" (%d + %d) must be smaller than the "
                  "dimension of q (%d)", who.c_str(), s.fns.k, s.fns.m, n / 2);
  s.fns.phase_space = r.choice("ConstraintVariables", {"q", "qp"}, "q") == "qp";
  s.base_method = r.choice("BaseMethod", {"stormer_verlet", "midpoint", "symplectic_euler"}, "");
  if (s.fns.flow.is_defined() && !s.fns.phase_space)
    error_with_id("odepkg:invalidOption",
                  "%s: option \"ConstraintFlowFcn\" is for ConstraintVariables \"qp\" (the fibres of "
                  "holonomic constraints g(q) are p - G(q)' s, taken in closed form)", who.c_str());
  s.composition = read_composition(r, who);
  s.compensated_summation = r.flag("CompensatedSummation", false);
  s.newton_tol_given = r.has("NewtonTol");
  s.newton.tol = r.real_scalar("NewtonTol", s.newton.tol, true);
  s.newton.max_iterations = r.integer("MaxNewtonIterations", s.newton.max_iterations, 1);

  IntegratorOptions& io = s.integrator;
  io.norm.rel_tol = std::max(r.real_scalar("RelTol", 1e-3, true),
                             100 * std::numeric_limits<double>::epsilon());  // as odepkg_options.m
  if (r.has("AbsTol")) {
    const octave_value a = r.get("AbsTol");
    if (!a.isnumeric() || !a.isreal() || (a.numel() != 1 && a.numel() != n))
      r.bad("AbsTol", "a positive scalar or a vector with one entry per state component");
    const NDArray v = a.array_value();
    io.norm.abs_tol.resize(v.numel());
    for (octave_idx_type i = 0; i < v.numel(); ++i) {
      if (!(v(i) > 0) || !std::isfinite(v(i))) r.bad("AbsTol", "positive and finite");
      io.norm.abs_tol(i) = v(i);
    }
  }
  io.norm.norm_control = r.flag("NormControl", false);
  io.initial_step = r.real_scalar("InitialStep", 0.0, true);
  io.max_step = r.real_scalar("MaxStep", io.max_step, true);
  io.fixed_step = r.real_scalar("TimeStepSize", 0.0, true);
  if (r.has("InitialProjection")) {
    const octave_value v = r.get("InitialProjection");
    const std::string a = v.is_string() ? v.string_value() : "";
    if (a != "warn" && a != "error") r.bad("InitialProjection", "\"warn\" or \"error\"");
    s.initial_projection_error = a == "error";
  }
  // Order min(2(Q - 1), 2P): beyond 30 modes/nodes the order only costs
  // (dense ((Q + P + 2) d)^2 Jacobians); a bound keeps a typo (3000) from
  // exhausting memory.
  s.q_dofs = r.integer("Q_DoFs", 0, 2, kMaxSpectralDofs);
  s.p_dofs = r.integer("P_DoFs", 0, 1, kMaxSpectralDofs);
  s.node_output = r.flag("NodeOutput", false);
  s.nodes = r.matrix("Nodes");
  s.weights = r.matrix("Weights");
  s.legendre = r.matrix("Legendre");
  s.derivatives = r.matrix("Derivatives");
  s.extremes = r.matrix("Extremes");
  s.output_fcn = r.function("OutputFcn");
  s.events = r.function("Events");
  s.reversible = r.choice("StepControl", {"doubling", "reversible"}, "doubling") == "reversible";
  s.step_density = r.function("StepDensityFcn");
  if (s.compensated_summation && s.reversible)
    error_with_id("odepkg:unsupportedOption",
                  "%s: option \"CompensatedSummation\" is not yet implemented with StepControl \"reversible\" "
                  "(fixed steps or step doubling)", who.c_str());
  if (s.step_density.is_defined() && !s.reversible)
    error_with_id("odepkg:invalidOption",
                  "%s: option \"StepDensityFcn\" is for StepControl \"reversible\"", who.c_str());
  for (const char* name : {"StepDensityEps", "InitialStepDensity"})
    if (r.has(name) && !s.reversible)
      error_with_id("odepkg:invalidOption", "%s: option \"%s\" is for StepControl \"reversible\"", who.c_str(),
                    name);
  if (r.has("StepDensityEps")) {
    const octave_value v = r.get("StepDensityEps");
    if (!v.isnumeric() || !v.isreal() || (v.numel() != 1 && v.numel() != 2))
      r.bad("StepDensityEps", "a positive scalar eps, or [first_eps, eps]");
    const NDArray a = v.array_value();
    for (octave_idx_type i = 0; i < a.numel(); ++i)
      if (!(a(i) > 0) || !std::isfinite(a(i))) r.bad("StepDensityEps", "positive and finite");
    s.density_start.eps = a(a.numel() - 1);
    if (a.numel() == 2) s.density_start.first_eps = a(0);
  }
  if (r.has("InitialStepDensity")) {
    s.density_start.rho0 = r.real_scalar("InitialStepDensity", 0.0, true);
    if (!std::isfinite(s.density_start.rho0)) r.bad("InitialStepDensity", "a positive, finite scalar");
  }
  if (r.has("OutputSel")) {
    const octave_value v = r.get("OutputSel");
    if (!v.isnumeric() || !v.isreal()) r.bad("OutputSel", "a vector of state indices");
    const NDArray a = v.array_value();
    s.output_sel.resize(dim_vector(a.numel(), 1));
    for (octave_idx_type i = 0; i < a.numel(); ++i) {
      if (a(i) != std::round(a(i)) || a(i) < 1 || a(i) > n)
        r.bad("OutputSel", "a vector of indices between 1 and numel (Y0)");
      s.output_sel(i) = static_cast<octave_idx_type>(a(i)) - 1;
    }
  }
  const bool any_constraint = s.fns.g.is_defined() || s.fns.G.is_defined() || s.fns.GH.is_defined() ||
                              s.fns.flow.is_defined();
  if (any_constraint && !s.fns.g.is_defined())
    error_with_id("odepkg:invalidOption", "%s: ConstraintGradFcn/ConstraintHessFcn/ConstraintFlowFcn need ConstraintFcn",
                  who.c_str());
  if (s.fns.g.is_defined() && s.fns.m == 0)
    error_with_id("odepkg:invalidOption", "%s: option \"ConstraintsNb\" must give the number of constraints",
                  who.c_str());
  if (s.fns.m >= n / 2)
    error_with_id("odepkg:invalidOption",
                  "%s: option \"ConstraintsNb\" (%d) must be smaller than the dimension of q (%d)",
                  who.c_str(), s.fns.m, n / 2);
  return s;
}

}  // namespace odepkg::binding

#endif
