// ReversibleTestHelpers.hpp — helpers of the tests of the time-reversible
// step control (Hairer and Söderlind 2005): the forward-then-backward map and
// the energy error per tenth of a run.
#ifndef ODEPKG_REVERSIBLE_TEST_HELPERS_HPP
#define ODEPKG_REVERSIBLE_TEST_HELPERS_HPP

#include "ReversibleStepDensity.hpp"
#include "Stepper.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace odepkg::test {

/// max |H - H0| in each tenth of [t0, tf] of the recorded points.
template <class Energy>
std::vector<double> energy_per_tenth(const Recorder& rec, double tf, Energy H) {
  std::vector<double> m(10, 0.0);
  const double H0 = H(rec.x.front());
  for (std::size_t i = 0; i < rec.t.size(); ++i) {
    const int k = std::min(9, static_cast<int>(10.0 * rec.t[i] / tf));
    m[k] = std::max(m[k], std::abs(H(rec.x[i]) - H0));
  }
  return m;
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
