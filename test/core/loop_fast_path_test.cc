// The explicit loop's fast path (bench/odeint_compare.sh): the cheap
// finiteness check, the direct call of a plain-function f, the size checks
// that replaced Eigen's block checks, and the NaN/overflow checks the loop
// now leaves to the steppers that make them.
#include "Finite.hpp"
#include "loop/Integrator.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "TestProblems.hpp"
#include "unconstrained/VelocityVerlet.hpp"
#include "composition/CompositionStepper.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <memory>

using namespace odepkg;
using odepkg::test::Kepler;
using odepkg::test::Recorder;

TEST(LoopFastPath, AllFiniteSeesEveryNanAndInfAndNoFalseAlarm) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vec x = Vec::Constant(5, 1e308);  // a plain sum would overflow
  EXPECT_TRUE(all_finite(x));
  x(1) = -1e308;
  x(3) = -0.0;
  EXPECT_TRUE(all_finite(x));
  for (int i = 0; i < 5; ++i)
    for (double bad : {inf, -inf, nan}) {
      Vec y = x;
      y(i) = bad;
      EXPECT_FALSE(all_finite(y)) << "entry " << i << " = " << bad;
    }
  EXPECT_TRUE(all_finite(Vec()));
}

namespace {
// Kepler's f behind a lambda: stored in the std::function, not recognised
// as a plain function.
HamiltonianProblem kepler_through_lambda() {
  return HamiltonianProblem(2, [](double t, const ConstVecRef& x, VecRef dx) { Kepler::field(t, x, dx); });
}

std::unique_ptr<Stepper> make_stepper(HamiltonianProblem& P, int kind) {
  switch (kind) {
    case 0: return std::make_unique<StormerVerlet>(P, true);
    case 1: return std::make_unique<VelocityVerlet>(P);
    default:
      return std::make_unique<CompositionStepper>(std::make_unique<StormerVerlet>(P, true),
                                                  *composition::find_composition("KahanLi8"));
  }
}
}  // namespace

TEST(LoopFastPath, PlainFunctionAndStdFunctionGiveTheSameTrajectory) {
  const Kepler k;
  for (int kind = 0; kind < 3; ++kind) {
    HamiltonianProblem direct = k.make(), wrapped = kepler_through_lambda();
    auto a = make_stepper(direct, kind), b = make_stepper(wrapped, kind);
    IntegratorOptions o;
    o.fixed_step = 0.01;
    Vec span(2);
    span << 0.0, 20.0;
    Recorder ra, rb;
    Integrator(*a, o).run(span, k.initial(), ra);
    Integrator(*b, o).run(span, k.initial(), rb);
    ASSERT_EQ(ra.x.size(), rb.x.size());
    for (size_t i = 0; i < ra.x.size(); ++i) ASSERT_TRUE(ra.x[i] == rb.x[i]) << "kind " << kind << ", point " << i;
    EXPECT_EQ(direct.stats().field_evals, wrapped.stats().field_evals);
  }
}

TEST(LoopFastPath, WronglySizedPointsThrowInsteadOfOverrunning) {
  const Kepler k;
  for (int kind = 0; kind < 2; ++kind) {
    HamiltonianProblem P = k.make();
    auto s = make_stepper(P, kind);
    Point from(4), small(3), empty;
    from.set(0.0, k.initial());
    EXPECT_THROW(s->step(from, 0.01, small), EigenAssertion) << "kind " << kind;
    EXPECT_THROW(s->step(from, 0.01, empty), EigenAssertion) << "kind " << kind;
    Point to(4);
    EXPECT_EQ(s->step(from, 0.01, to), StepStatus::Success);
  }
}

TEST(LoopFastPath, OverflowOfTheStateEndsTheRun) {
  // q'' = +1e3 q, h = 0.1: the state grows ~4x a step and overflows after
  // some 500 steps (after the velocity model is learned); the steppers'
  // own checks (the loop no longer repeats them) must end the run.
  auto blowup = [](double, const ConstVecRef& x, VecRef dx) {
    dx(0) = x(1);
    dx(1) = 1e3 * x(0);
  };
  for (int kind = 0; kind < 3; ++kind) {
    HamiltonianProblem P(1, blowup);
    auto s = make_stepper(P, kind);
    EXPECT_TRUE(s->checks_finite_state());
    IntegratorOptions o;
    o.fixed_step = 0.1;
    Vec span(2), x0(2);
    span << 0.0, 100.0;
    x0 << 1.0, 0.0;
    Recorder r;
    const IntegrationResult res = Integrator(*s, o).run(span, x0, r);
    EXPECT_EQ(res.outcome, IntegrationResult::Outcome::Failed) << "kind " << kind;
    EXPECT_NE(res.message.find("non-finite"), std::string::npos) << res.message;
    EXPECT_GT(r.x.size(), 100u) << "kind " << kind;  // past the learning of the velocity model
    for (const Vec& x : r.x) EXPECT_TRUE(all_finite(x));
  }
}
