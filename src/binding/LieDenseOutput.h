// LieDenseOutput.h — deval and Refine for odeRATTLie solutions: the states at
// times T between the output points (X, Y) of a motion on the group of
// OPTIONS.LieGroup, by the group interpolant of lie/LieInterpolant.hpp, then
// projected along G onto Φ(q) = 0 and B(q) v = 0 (lie/LieInitialData.hpp) so
// that they satisfy the constraints to round-off like the method's states.
// Called as __odepkg_rattlie__ ("interpolate", X, Y, T, OPTIONS, FCN, EXTRA
// [, WANT_LAMBDA [, WHO]]); with WANT_LAMBDA the multipliers λ at the returned
// states as a third output (RattLie::multipliers: Refine's sol.lambda); WHO
// names the caller in messages (default "deval").
#ifndef ODEPKG_BINDING_LIE_DENSE_OUTPUT_H
#define ODEPKG_BINDING_LIE_DENSE_OUTPUT_H

#include "LieProblem.h"
#include "lie/LieInitialData.hpp"
#include "lie/LieInterpolant.hpp"
#include "lie/LieStepper.hpp"

#include <octave/oct.h>

#include <algorithm>
#include <memory>
#include <cmath>
#include <limits>

namespace odepkg::binding {

/// [y, yp, lambda] with one column per time of T (yp: the interpolant's
/// derivative, before the projection).
inline octave_value_list lie_dense_output(const octave_value_list& args, const char* who) {
  if (args.length() < 7 || args.length() > 9)
    error_with_id("odepkg:invalidInput", "%s: \"interpolate\" takes X, Y, T, OPTIONS, FCN, EXTRA [, WANT_LAMBDA [, WHO]]", who);
  auto real_array = [who](const octave_value& v, const char* name) {
    if (!v.isnumeric() || !v.isreal() || v.isempty())
      error_with_id("odepkg:invalidInput", "%s: %s must be a real, non-empty array", who, name);
    const NDArray a = v.array_value();
    for (octave_idx_type i = 0; i < a.numel(); ++i)
      if (!std::isfinite(a(i))) error_with_id("odepkg:invalidInput", "%s: %s must be finite", who, name);
    return a;
  };
  const NDArray x = real_array(args(1), "SOL.x");
  const Matrix Y = real_array(args(2), "SOL.y").as_matrix();
  const NDArray t = real_array(args(3), "T");
  const octave_idx_type N = x.numel(), ns = Y.rows();
  if (Y.columns() != N || N < 2)
    error_with_id("odepkg:invalidInput", "%s: SOL.y must have one column per time in SOL.x (at least two)", who);
  const double dir = x(N - 1) > x(0) ? 1.0 : -1.0;
  for (octave_idx_type k = 0; k + 1 < N; ++k)
    if (!(dir * (x(k + 1) - x(k)) > 0))
      error_with_id("odepkg:invalidInput", "%s: SOL.x must be strictly monotone", who);
  const double lo = std::min(x(0), x(N - 1)), hi = std::max(x(0), x(N - 1));
  const double slack = 16 * std::numeric_limits<double>::epsilon() * std::max(std::abs(lo), std::abs(hi));
  for (octave_idx_type j = 0; j < t.numel(); ++j)
    if (t(j) < lo - slack || t(j) > hi + slack)
      error_with_id("odepkg:invalidInput", "%s: T must lie in the span of the solution [%g, %g]", who, lo, hi);
  if (!args(5).is_function_handle())
    error_with_id("odepkg:invalidInput", "%s: SOL.idata.fcn must be a function handle", who);
  if (!args(6).iscell()) error_with_id("odepkg:invalidInput", "%s: EXTRA must be a cell", who);
  const octave_value_list extra(args(6).cell_value());

  OptionReader r(args(4), who);
  std::unique_ptr<lie::LieGroup> group = read_lie_group(r, static_cast<int>(ns), who);
  const LieMass mass = read_lie_mass(r, *group, who);
  UserFunctions u;
  u.f = args(5);
  u.g = r.function("ConstraintFcn");
  u.G = r.function("ConstraintGradFcn");
  u.m = u.g.is_defined() ? r.integer("ConstraintsNb", 0, 1) : 0;
  u.A = r.function("NonholonomicFcn");
  u.k = u.A.is_defined() ? r.integer("NonholonomicsNb", 0, 1) : 0;
  OctaveLieProblem op(std::move(group), mass, u, extra, who);
  lie::LieGroupProblem& lp = op.problem();
  // a sparse B as in the run: projected by the sparse LDLᵀ
  if (N > 0) {
    Vec q0(lp.nq());
    for (int i = 0; i < lp.nq(); ++i) q0(i) = Y(i, 0);
    op.probe_sparse_gradient(q0);
  }
  lie::LieInterpolant interp(lp.group());
  // m + k multipliers [λ; μ] with NonholonomicFcn
  const int m = lp.constraints() + u.k;
  const bool want_lambda = args.length() >= 8 && args(7).is_true() && m > 0;
  // the multipliers' formula lives in the stepper: built only when asked
  // for, or for the projection onto B_nh(q) v = 0
  std::unique_ptr<lie::LieStepper> stepper;
  if (u.k > 0) stepper = make_nonholonomic_lie_stepper(lp, op, NewtonOptions{}, who);
  else if (want_lambda) stepper = make_lie_stepper(lp, NewtonOptions{}, who);
  Matrix lambda_out(want_lambda ? m : 0, want_lambda ? t.numel() : 0);
  Vec lambda(m);

  Matrix yo(ns, t.numel()), ypo(ns, t.numel());
  Vec ya(ns), yb(ns), y(ns), yp(ns);
  octave_idx_type current = -1;
  bool unprojected = false;
  for (octave_idx_type j = 0; j < t.numel(); ++j) {
    // k: x(k) <= t < x(k+1) in the direction of the motion, clamped
    const double tj = dir * t(j);
    octave_idx_type lo = 0, hi = N - 1;
    while (hi - lo > 1) {
      const octave_idx_type mid = (lo + hi) / 2;
      (dir * x(mid) <= tj ? lo : hi) = mid;
    }
    if (lo != current) {
      for (octave_idx_type i = 0; i < ns; ++i) {
        ya(i) = Y(i, lo);
        yb(i) = Y(i, lo + 1);
      }
      if (!interp.set_interval(x(lo), ya, x(lo + 1), yb))
        error_with_id("odepkg:invalidInput",
                      "%s: cannot interpolate on %s between the output points at t = %g and t = %g: they "
                      "are nearly a full turn (or more) apart, or the group's functions returned "
                      "non-finite values; output more points (every step, or more times in TSPAN)",
                      who, lp.group().name().c_str(), x(lo), x(lo + 1));
      current = lo;
    }
    interp.evaluate(t(j), y, yp);
    if (lp.constraints() > 0) {
      const lie::LieProjectionResult pr = lie::project_initial_data(lp, y, 1e-14);
      if (!pr.finite)
        error_with_id("odepkg:nonFiniteFcn",
                      "%s: ConstraintFcn or ConstraintGradFcn returned a non-finite value at t = %g", who, t(j));
      unprojected = unprojected || !pr.converged;
    }
    if (u.k > 0) {
      double before = 0.0, after = 0.0;
      if (!project_nonholonomic_velocity(*stepper, y, before, after))
        error_with_id("odepkg:nonFiniteFcn",
                      "%s: NonholonomicFcn or ConstraintGradFcn returned a non-finite value at t = %g", who, t(j));
    }
    for (octave_idx_type i = 0; i < ns; ++i) {
      yo(i, j) = y(i);
      ypo(i, j) = yp(i);
    }
    if (want_lambda) {
      if (!stepper->multipliers(t(j), y, lambda)) lambda.setConstant(std::numeric_limits<double>::quiet_NaN());
      for (int i = 0; i < m; ++i) lambda_out(i, j) = lambda(i);
    }
  }
  if (unprojected)
    warning_with_id("odepkg:inconsistentInterpolant",
                    "%s: some interpolated states could not be projected onto the constraints to round-off", who);
  octave_value_list rv(3);
  rv(0) = yo;
  rv(1) = ypo;
  rv(2) = lambda_out;
  return rv;
}

}  // namespace odepkg::binding

#endif
