// FixedSteps.hpp — n fixed steps of a stepper from x0 (by hand, or through
// the Integrator) and the largest difference of two such trajectories: the
// comparisons of the sparse RATTLE and RATTLie tests (dense against sparse
// matrices, with and without a redundant constraint).
#ifndef ODEPKG_TEST_FIXED_STEPS_HPP
#define ODEPKG_TEST_FIXED_STEPS_HPP

#include "HamiltonianProblem.hpp"
#include "Stepper.hpp"
#include "loop/Integrator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
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

/// A run through the Integrator: the output states, the problem's
/// statistics, whether it completed and its message.
struct IntegratedRun {
  std::vector<Vec> y;
  Stats stats;
  bool ok = true;
  std::string message;
};

/// `steps` fixed steps of h from y0 through the Integrator (its observer
/// and its checks of each step); the states output (`keep` false: the last
/// one only), `each` called on every one.  Any problem with stats().
template <class Problem>
IntegratedRun integrate_fixed(Problem& problem, Stepper& st, const Vec& y0, double h, long steps, bool keep = true,
                              std::function<void(const Vec&)> each = nullptr) {
  IntegratorOptions io;
  io.fixed_step = h;
  Integrator integ(st, io);
  struct Keep : Observer {
    bool keep = true;
    std::function<void(const Vec&)> each;
    std::vector<Vec> x;
    bool operator()(double, const Vec& y) override {
      if (each) each(y);
      if (keep || x.empty())
        x.push_back(y);
      else
        x.back() = y;
      return true;
    }
  } rec;
  rec.keep = keep;
  rec.each = std::move(each);
  Vec times(2);
  times << 0.0, h * steps;
  const IntegrationResult r = integ.run(times, y0, rec);
  IntegratedRun out;
  out.y = std::move(rec.x);
  out.stats = problem.stats();
  out.ok = r.outcome == IntegrationResult::Outcome::Completed;
  out.message = r.message;
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
