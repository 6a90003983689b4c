// FixedSteps.hpp — n fixed steps of a stepper from x0 and the largest
// difference of two such trajectories: the comparisons of the sparse
// RATTLE tests (dense against sparse matrices, with and without a
// redundant constraint).
#ifndef ODEPKG_TEST_FIXED_STEPS_HPP
#define ODEPKG_TEST_FIXED_STEPS_HPP

#include "HamiltonianProblem.hpp"
#include "Stepper.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace odepkg::test {

/// n fixed steps of h from x0; the states after each step (`keep` false:
/// the last one only).  A failed step is a test failure and ends the run.
inline std::vector<Vec> run(HamiltonianProblem& P, Stepper& r, const Vec& x0, double h, int n, bool keep = true) {
  std::vector<Vec> out;
  Point a(P.state_size()), b(P.state_size());
  a.set(0.0, x0);
  for (int i = 0; i < n; ++i) {
    const StepStatus st = r.step(a, h, b);
    EXPECT_EQ(st, StepStatus::Success) << "step " << i;
    if (st != StepStatus::Success) break;
    if (keep || i == n - 1) out.push_back(b.x);
    std::swap(a, b);
  }
  return out;
}

/// max over the steps of |a_i - b_i|_inf (the runs must have equal length).
inline double max_diff(const std::vector<Vec>& a, const std::vector<Vec>& b) {
  double e = 0.0;
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) e = std::max(e, (a[i] - b[i]).lpNorm<Eigen::Infinity>());
  return e;
}

}  // namespace odepkg::test

#endif
