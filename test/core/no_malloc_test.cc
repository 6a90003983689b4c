// no_malloc_test.cc — "Must not allocate" (Stepper::step, Stepper.hpp): after
// a warm-up step, the steps of every stepper of this file make no Eigen heap
// allocation.  EIGEN_RUNTIME_NO_MALLOC makes Eigen check each allocation
// against set_is_malloc_allowed(); a forbidden one fails eigen_assert, which
// EigenConfig.hpp turns into an odepkg::EigenAssertion exception.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included (EigenConfig.hpp)

#include "loop/Integrator.hpp"
#include "loop/StepDoubling.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "TestProblems.hpp"  // PrintTo(StepStatus)
#include "unconstrained/VelocityVerlet.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using namespace odepkg;

namespace {

// Fields and Hessians as plain captureless lambdas writing into their output:
// nothing in them allocates.
const auto kepler = [](double, const ConstVecRef& x, VecRef dx) {
  const double r = std::sqrt(x(0) * x(0) + x(1) * x(1));
  dx(0) = x(2);
  dx(1) = x(3);
  dx(2) = -x(0) / (r * r * r);
  dx(3) = -x(1) / (r * r * r);
};
/// Separable with a non-quadratic kinetic energy T = sqrt(1 + |p|^2).
const auto relativistic = [](double, const ConstVecRef& x, VecRef dx) {
  const double g = std::sqrt(1 + x(2) * x(2) + x(3) * x(3));
  dx(0) = x(2) / g;
  dx(1) = x(3) / g;
  dx(2) = -x(0);
  dx(3) = -x(1);
};
/// Non-separable H = |p|^2 (1 + |q|^2)/2 + |q|^2/2.
const auto nonsep = [](double, const ConstVecRef& x, VecRef dx) {
  const double a = 1 + x(0) * x(0) + x(1) * x(1), pp = x(2) * x(2) + x(3) * x(3);
  dx(0) = a * x(2);
  dx(1) = a * x(3);
  dx(2) = -(pp + 1) * x(0);
  dx(3) = -(pp + 1) * x(1);
};
const auto nonsep_hess = [](double, const ConstVecRef& x, MatRef H) {
  const double a = 1 + x(0) * x(0) + x(1) * x(1), pp = x(2) * x(2) + x(3) * x(3);
  H.setZero();
  H(0, 0) = H(1, 1) = pp + 1;
  H(2, 2) = H(3, 3) = a;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) H(i, 2 + j) = H(2 + j, i) = 2 * x(i) * x(2 + j);
};

Vec start() {
  Vec x(4);
  x << 0.5, 0.0, 0.0, 1.5;  // Kepler e = 0.5 perihelion; fine for the others too
  return x;
}

/// Runs n steps from start(), sizes h, h, h/2, h, h, h/2, ... (as under step
/// doubling), each after the first `warmup` with Eigen's allocation
/// forbidden.  Returns the (1-based) indices of the steps that allocated.
std::vector<int> allocating_steps(Stepper& s, int n, int warmup = 3) {
  Point a(4), b(4);
  a.set(0.0, start());
  const double h = 0.01;
  std::vector<int> bad;
  for (int i = 1; i <= n; ++i) {
    const bool guard = i > warmup;
    if (guard) Eigen::internal::set_is_malloc_allowed(false);
    StepStatus st = StepStatus::Success;
    try {
      st = s.step(a, i % 3 == 0 ? h / 2 : h, b);
    } catch (const EigenAssertion&) {
      bad.push_back(i);
      st = StepStatus::Success;
      Eigen::internal::set_is_malloc_allowed(true);
      // redo the step unguarded so that the run continues from a valid state
      st = s.step(a, i % 3 == 0 ? h / 2 : h, b);
    }
    Eigen::internal::set_is_malloc_allowed(true);
    EXPECT_EQ(st, StepStatus::Success) << s.name() << " step " << i;
    if (st != StepStatus::Success) break;
    std::swap(a, b);
  }
  EXPECT_TRUE(a.x.allFinite());
  return bad;
}

std::string list(const std::vector<int>& v) {
  std::string r;
  for (int i : v) r += (r.empty() ? "" : ", ") + std::to_string(i);
  return r;
}


/// Explicit SE / SV: no allocation in any step after the warm-up, the step
/// that learns the velocity model of AffineVelocity.hpp included.
void check_explicit(Stepper& s) {
  const std::vector<int> bad = allocating_steps(s, 120);
  EXPECT_TRUE(bad.empty()) << s.name() << " allocated in steps " << list(bad);
}

}  // namespace

// The check itself works: an allocation in a forbidden region throws.
TEST(NoMalloc, GuardDetectsAllocation) {
  Eigen::internal::set_is_malloc_allowed(false);
  EXPECT_THROW(
      {
        Vec v(16);
        v.setZero();
      },
      EigenAssertion);
  Eigen::internal::set_is_malloc_allowed(true);
}

// Once the velocity model is learned (or dropped), explicit steps allocate
// nothing: steps 21..120 with a warm-up of 20.
TEST(NoMalloc, ExplicitStepsAfterLearning) {
  for (bool sv : {true, false}) {
    for (auto f : {+kepler, +relativistic}) {  // quadratic and general kinetic energy
      HamiltonianProblem P(2, f);
      std::unique_ptr<Stepper> s;
      if (sv)
        s = std::make_unique<StormerVerlet>(P, true);
      else
        s = std::make_unique<SymplecticEuler>(P, true);
      EXPECT_TRUE(allocating_steps(*s, 120, 20).empty()) << s->name();
    }
  }
}

TEST(NoMalloc, ExplicitStormerVerlet) {
  for (auto f : {+kepler, +relativistic}) {
    HamiltonianProblem P(2, f);
    StormerVerlet s(P, true);
    check_explicit(s);
  }
}

TEST(NoMalloc, ExplicitSymplecticEuler) {
  for (auto f : {+kepler, +relativistic}) {
    HamiltonianProblem P(2, f);
    SymplecticEuler s(P, true);
    check_explicit(s);
  }
}

// Implicit steppers: Newton, LU (re)factorizations and the rescaling of the
// cached Jacobian when h changes, with analytic Hessian or finite differences.
TEST(NoMalloc, ImplicitStormerVerlet) {
  for (bool hess : {true, false}) {
    HamiltonianProblem P(2, +nonsep);
    if (hess) P.set_hessian(+nonsep_hess);
    StormerVerlet s(P, false);
    EXPECT_EQ(list(allocating_steps(s, 120)), "") << (hess ? "Hessian" : "FD");
    EXPECT_GT(P.stats().lu_factorizations, 2);  // the guarded steps did factorize
  }
}

TEST(NoMalloc, ImplicitSymplecticEuler) {
  for (bool hess : {true, false}) {
    HamiltonianProblem P(2, +nonsep);
    if (hess) P.set_hessian(+nonsep_hess);
    SymplecticEuler s(P, false);
    EXPECT_EQ(list(allocating_steps(s, 120)), "") << (hess ? "Hessian" : "FD");
    EXPECT_GT(P.stats().lu_factorizations, 2);
  }
}

TEST(NoMalloc, VelocityVerlet) {
  HamiltonianProblem P(2, +kepler);
  odepkg::VelocityVerlet s(P);
  EXPECT_EQ(list(allocating_steps(s, 120)), "");
}

// A whole second run of the Integrator (fixed and adaptive steps, given
// initial step, output into a preallocated buffer) allocates nothing either.
TEST(NoMalloc, IntegratorRun) {
  struct Last : Observer {
    Vec x = Vec::Zero(4);
    long n = 0;
    bool operator()(double, const Vec& xx) override {
      x = xx;  // same size: no allocation
      ++n;
      return true;
    }
  };
  for (bool implicit : {false, true}) {
    for (bool fixed : {true, false}) {
      HamiltonianProblem P(2, implicit ? +nonsep : +kepler);
      StormerVerlet s(P, !implicit);
      IntegratorOptions o;
      if (fixed)
        o.fixed_step = 0.01;
      else
        o.initial_step = 0.01;
      Integrator I(s, o);
      Last obs;
      Vec ts(2);
      ts << 0.0, 1.0;
      const Vec x0 = start();
      ASSERT_EQ(I.run(ts, x0, obs).outcome, IntegrationResult::Outcome::Completed);
      Eigen::internal::set_is_malloc_allowed(false);
      std::string where;
      try {
        if (I.run(ts, x0, obs).outcome != IntegrationResult::Outcome::Completed) where = "failed";
      } catch (const EigenAssertion& e) {
        where = e.what();
      }
      Eigen::internal::set_is_malloc_allowed(true);
      EXPECT_EQ(where, "") << (implicit ? "implicit" : "explicit") << (fixed ? " fixed" : " adaptive");
      EXPECT_GT(obs.n, 10);
    }
  }
}
