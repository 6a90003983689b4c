// ReversibleTestHelpers.hpp — shared by the tests of the time-reversible step
// control (Hairer and Söderlind 2005): a Kepler density with an analytic G,
// the energy error per tenth of a run, and the forward–backward check of
// the map (y, rho) -> (y', rho').
#ifndef ODEPKG_TEST_REVERSIBLE_TEST_HELPERS_HPP
#define ODEPKG_TEST_REVERSIBLE_TEST_HELPERS_HPP

#include "loop/ReversibleIntegrator.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace odepkg::test {

/// Kepler's density rho = |q|^(-3/2) (steps ~ r^(3/2)): G = -1.5 q.p / |q|^2.
struct KeplerDensity final : StepDensityRate {
  bool operator()(double, const ConstVecRef& x, double& G) override {
    G = -1.5 * x.head(2).dot(x.tail(2)) / x.head(2).squaredNorm();
    return true;
  }
};

/// max |H - H0| in each tenth of [t0, tf] of the recorded points.
inline std::vector<double> energy_per_tenth(const Recorder& rec, double tf,
                                            const std::function<double(const Vec&)>& H) {
  std::vector<double> m(10, 0.0);
  const double H0 = H(rec.x.front());
  for (std::size_t i = 0; i < rec.t.size(); ++i) {
    const int k = std::min(9, static_cast<int>(10.0 * rec.t[i] / tf));
    m[k] = std::max(m[k], std::abs(H(rec.x[i]) - H0));
  }
  return m;
}

inline IntegratorOptions with_eps(double eps) {
  IntegratorOptions o;
  o.initial_step = eps;
  return o;
}

/// N steps of the Hairer–Söderlind map with eps, then N with -eps: back at
/// (y0, rho0 = 1) to round-off.  Returns the largest deviation (infinity if
/// a step failed or the density collapsed on the way back).
inline double forward_backward(Stepper& stepper, StepDensityRate& rate, const Vec& x0, double eps, int N) {
  HamiltonianProblem& P = stepper.problem();
  Point a(P.state_size()), b(P.state_size());
  a.set(0.0, x0);
  const double inf = std::numeric_limits<double>::infinity();
  double rho = 0.0, G = 0.0, h = 0.0;
  for (double e : {eps, -eps}) {
    ReversibleStepDensity density(rate, e);
    if (e == eps) {
      if (!density.start(a.t, a.x)) return inf;
    } else {
      density.set(rho, G);
    }
    for (int i = 0; i < N; ++i) {
      if (!density.half_step(h) || stepper.step(a, h, b) != StepStatus::Success) return inf;
      b.t = a.t + h;
      if (!density.finish(b.t, b.x)) return inf;
      std::swap(a, b);
    }
    if (e == eps) {
      EXPECT_GT((a.x - x0).norm(), 0.1);  // it went somewhere
    }
    rho = density.rho();
    G = density.G();
  }
  return std::max((a.x - x0).lpNorm<Eigen::Infinity>(), std::abs(rho - 1.0));
}

}  // namespace odepkg::test

#endif
