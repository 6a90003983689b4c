// RattleAcceptance.hpp — when RATTLE accepts an iterate and what it records:
// the round-off floors of the residuals, the weight of Newton corrections
// on tiny steps, and the test that g = 0 was actually solved.  Static
// helpers only, shared by SeparableRattle and GeometricRattle.
#ifndef ODEPKG_CONSTRAINED_RATTLE_ACCEPTANCE_HPP
#define ODEPKG_CONSTRAINED_RATTLE_ACCEPTANCE_HPP

#include "Types.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

struct RattleAcceptance {
  static constexpr double kRoundoffLeft = 4 * std::numeric_limits<double>::epsilon();

  /// max_i |v_i| of any vector expression, inline (through a Ref it was a
  /// call and a Ref built per norm: 8 % of a small RATTLE stage).
  template <class V>
  static double inf_norm(const Eigen::MatrixBase<V>& v) {
    return v.template lpNorm<Eigen::Infinity>();
  }

  /// Records a residual estimate in `stat`, raised to the round-off level of
  /// its evaluation, 4 eps max(1, |G|_inf |z|_inf) (z = q for g, H_p for
  /// G H_p): the estimates (last iterate's values, or scaled by the measured
  /// rate) then bound the residuals of the returned points up to round-off.
  static void record_residual(double& stat, double value, const Mat& G, double zn) {
    record_residual_norm(stat, value, G.size() ? G.cwiseAbs().rowwise().sum().maxCoeff() : 0.0, zn);
  }
  /// The same with Gn = |G|_inf given (a sparse G).
  static void record_residual_norm(double& stat, double value, double Gn, double zn) {
    const double floor = 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, Gn * zn);
    stat = std::max(stat, std::max(value, floor));
  }

  /// A step whose |g(q_1)| (bound) exceeds sqrt(tol) max(1, |q_1|) did not
  /// solve g = 0: with rank-deficient G (a zero gradient, a step across a
  /// singular configuration) the minimum-norm Newton iteration converges to
  /// a least-squares point instead.  Consistent redundant constraints still
  /// pass; the step is rejected (adaptive) or the run ends with the partial
  /// solution (fixed steps), never returned as if constrained.
  static bool constraints_violated(double g_bound, const ConstVecRef& q, double tol) {
    return constraints_violated_at_norm(g_bound, inf_norm(q), tol);
  }
  /// The same from qn = |q_1|_inf.
  static bool constraints_violated_at_norm(double g_bound, double qn, double tol) {
    return !(g_bound <= std::sqrt(tol) * std::max(1.0, qn));
  }

  /// g(q_1) = 0 fixes the multipliers and the normal part of p_{1/2} only up
  /// to  floor = eps |q| / (|h| |H_pp|)  (round-off of g over the step), in
  /// units of max(1, |p|).  Their Newton corrections are weighted by
  /// min(1, tol / (10 floor)), so that tiny steps (adaptive starts) converge;
  /// the weight is 1 for ordinary steps.
  static double roundoff_weight(double h, double hpp, const ConstVecRef& q, const ConstVecRef& p,
                                double tol) {
    return roundoff_weight_of_norms(h, hpp, inf_norm(q), inf_norm(p), tol);
  }
  /// The same from qn = |q|_inf and pn = |p|_inf.
  static double roundoff_weight_of_norms(double h, double hpp, double qn, double pn, double tol) {
    if (!(hpp > 0.0)) return 1.0;
    const double floor =
        4 * std::numeric_limits<double>::epsilon() * std::max(1.0, qn) / (std::abs(h) * hpp * std::max(1.0, pn));
    return std::min(1.0, tol / (10.0 * floor));
  }
};

}  // namespace odepkg

#endif
