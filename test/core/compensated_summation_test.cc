// compensated_summation_test.cc — compensated summation of the state
// updates (CompensatedSum.hpp; Hairer, McLachlan, Razakarivony, "Achieving
// Brouwer's law with implicit Runge-Kutta methods", BIT 48, 2008): TwoSum's
// exactness, the energy error of long fixed-step runs of an order-8
// composition with and without it (through the Integrator's loop, whose
// swaps carry the compensation), agreement of the two results to the
// round-off level, step doubling with it, refusal where not implemented,
// no heap allocation per step.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included (EigenConfig.hpp)

#include "unconstrained/CompensatedSum.hpp"
#include "loop/Integrator.hpp"
#include "constrained/Rattle.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "TestProblems.hpp"
#include "unconstrained/VelocityVerlet.hpp"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

using namespace odepkg;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
// max |dH| plain / compensated asserted in the long runs, about a third of
// the measured ratios (2 10^5 steps, h = 0.05, Release, g++ 12: SV+KahanLi8
// 1.0e-13 / 1.6e-15 = 62; VV+McLachlan8 6.7e-14 / 3.1e-15 = 22), and the
// bound on the compensated run's max |dH| (measured 7 eps and 14 eps: the
// rounding of the increments, a factor ~h below that of the sums).
constexpr double kRatioSV = 20.0;
constexpr double kRatioVV = 8.0;
constexpr double kCompensatedBound = 30 * std::numeric_limits<double>::epsilon();

const composition::CompositionTable& table(const char* name) {
  const composition::CompositionTable* t = composition::find_composition(name);
  if (!t) throw std::runtime_error(std::string("no table ") + name);
  return *t;
}

/// Harmonic oscillator H = (q^2 + p^2)/2 (velocity Verlet: x'' = -x).
void oscillator(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -x(0);
}

/// The largest |H - H0| over every output point, and the last point.
struct EnergyWatch : Observer {
  double h0 = 0.5, max_error = 0.0;
  Vec last = Vec::Zero(2);
  bool operator()(double, const Vec& x) override {
    max_error = std::max(max_error, std::abs(0.5 * x.squaredNorm() - h0));
    last = x;
    return true;
  }
};

struct LongRun {
  double max_energy_error;
  Vec end;
};

/// N fixed steps of h of the oscillator from (1, 0), every step output.
LongRun long_run(bool velocity_verlet, const char* composition, bool compensated, double h, long N) {
  HamiltonianProblem P(1, &oscillator);
  std::unique_ptr<Stepper> base;
  if (velocity_verlet)
    base = std::make_unique<VelocityVerlet>(P);
  else
    base = std::make_unique<StormerVerlet>(P, true);
  CompositionStepper st(std::move(base), table(composition));
  EXPECT_TRUE(st.set_compensated_summation(compensated));
  IntegratorOptions o;
  o.fixed_step = h;
  Integrator integ(st, o);
  Vec x0(2), times(2);
  x0 << 1.0, 0.0;
  times << 0.0, h * static_cast<double>(N);
  EnergyWatch w;
  const IntegrationResult r = integ.run(times, x0, w);
  EXPECT_EQ(r.outcome, IntegrationResult::Outcome::Completed) << r.message;
  EXPECT_EQ(P.stats().steps, N);
  return {w.max_error, w.last};
}

}  // namespace

// Adding 1e-17 to 1 a million times: the plain sum never moves (each
// increment is below half an ulp of 1); the compensated one gives 1 + 1e-11
// to the last bits (the exact sum, rounded).
TEST(CompensatedSum, RecoversIncrementsBelowHalfAnUlp) {
  Vec x(1), e(1), d(1), plain(1);
  x << 1.0;
  e << 0.0;
  d << 1e-17;
  plain << 1.0;
  for (int i = 0; i < 1000000; ++i) {
    compensated_add(x, e, d, x, e);
    plain += d;
  }
  EXPECT_EQ(plain(0), 1.0);
  EXPECT_NEAR(x(0) - 1.0, 1e-11, 2 * kEps);
  EXPECT_NEAR((x(0) - 1.0) + e(0), 1e-11, 1e-11 * 1e-6);  // 1e6 roundings of 1e-17 in e
}

// TwoSum is exact whatever the magnitudes (Fast2Sum is not when |delta| >
// |x|): x + delta = x_out + e_out exactly, checked in long double.
TEST(CompensatedSum, ExactWhenTheIncrementDominates) {
  Vec x(3), e = Vec::Zero(3), d(3), xo(3), eo(3);
  x << 1e-3, -0.75, 3.0;
  d << 1.0 + 1e-15, 0.7500000000000002, -1e-20;
  compensated_add(x, e, d, xo, eo);
  for (int i = 0; i < 3; ++i) {
    const long double exact = static_cast<long double>(x(i)) + static_cast<long double>(d(i));
    EXPECT_EQ(static_cast<long double>(xo(i)) + static_cast<long double>(eo(i)), exact) << i;
  }
}

// 2 10^5 steps of KahanLi8 (order 8, 17 substeps) over explicit
// Störmer–Verlet, h = 0.05: the method's energy error (O(h^8)) is below
// round-off, so the plain run's max |dH| is the round-off random walk
// (~ sqrt(3.4e6) eps/2); compensated, it stays within a few eps.  10^7
// steps: bench/compensated_summation.sh.
TEST(CompensatedSummation, LongRunEnergyErrorStormerVerletKahanLi8) {
  const double h = 0.05;
  const long N = 200000;
  const LongRun plain = long_run(false, "KahanLi8", false, h, N);
  const LongRun comp = long_run(false, "KahanLi8", true, h, N);
  const double diff = (plain.end - comp.end).norm();
  std::printf("SV+KahanLi8, h = %g, %ld steps: max |dH| plain %.3e, compensated %.3e (ratio %.1f); "
              "|x_plain - x_comp| at the end %.3e\n",
              h, N, plain.max_energy_error, comp.max_energy_error,
              plain.max_energy_error / comp.max_energy_error, diff);
  EXPECT_LT(comp.max_energy_error, kCompensatedBound);
  EXPECT_GT(plain.max_energy_error, kRatioSV * comp.max_energy_error);
  // The two runs differ by the plain run's accumulated round-off: a random
  // walk of 17 N roundings of about eps/2 each in a rotation (perturbations
  // do not grow): sqrt(17 N) eps ~ 4e-13, bounded here with a factor 10
  // (measured 1.1e-13).
  EXPECT_LT(diff, 10 * std::sqrt(17.0 * N) * kEps);
}

// The same for velocity Verlet under McLachlan8 (order 8, 15 substeps),
// 2 10^5 steps.
TEST(CompensatedSummation, LongRunEnergyErrorVelocityVerletMcLachlan8) {
  const double h = 0.05;
  const long N = 200000;
  const LongRun plain = long_run(true, "McLachlan8", false, h, N);
  const LongRun comp = long_run(true, "McLachlan8", true, h, N);
  const double diff = (plain.end - comp.end).norm();
  std::printf("VV+McLachlan8, h = %g, %ld steps: max |dH| plain %.3e, compensated %.3e (ratio %.1f); "
              "|x_plain - x_comp| %.3e\n",
              h, N, plain.max_energy_error, comp.max_energy_error,
              plain.max_energy_error / comp.max_energy_error, diff);
  EXPECT_LT(comp.max_energy_error, kCompensatedBound);
  EXPECT_GT(plain.max_energy_error, kRatioVV * comp.max_energy_error);
  EXPECT_LT(diff, 10 * std::sqrt(15.0 * N) * kEps);
}

// Step doubling with compensation: the compensation travels through the two
// half steps, rejected attempts leave the current point alone; the run
// agrees with the plain one to round-off amplified by the controller's
// continuous dependence on the data (Kepler e = 0.6, one period; a first
// step of 1 forces rejected attempts: 3 measured).
TEST(CompensatedSummation, StepDoublingAgreesWithPlain) {
  test::Kepler kep;
  Vec ends[2];
  long rejected[2];
  for (int c = 0; c < 2; ++c) {
    HamiltonianProblem P = kep.make();
    CompositionStepper st(std::make_unique<StormerVerlet>(P, true), table("McLachlan4"));
    ASSERT_TRUE(st.set_compensated_summation(c == 1));
    IntegratorOptions o;
    o.norm.rel_tol = 1e-10;
    o.norm.abs_tol = Vec::Constant(1, 1e-10);
    o.initial_step = 1.0;  // far too large: rejected attempts first
    Integrator integ(st, o);
    Vec times(2);
    times << 0.0, 2 * M_PI;
    test::Recorder rec;
    const IntegrationResult r = integ.run(times, kep.initial(), rec);
    ASSERT_EQ(r.outcome, IntegrationResult::Outcome::Completed) << r.message;
    ends[c] = rec.x.back();
    rejected[c] = P.stats().rejected;
    EXPECT_LT((ends[c] - kep.exact(2 * M_PI)).norm(), 1e-6) << c;
  }
  std::printf("step doubling, Kepler: |x_plain - x_comp| %.3e; rejected %ld and %ld\n",
              (ends[0] - ends[1]).norm(), rejected[0], rejected[1]);
  EXPECT_GT(rejected[1], 0);  // the rejection path was taken
  EXPECT_LT((ends[0] - ends[1]).norm(), 1e-11);  // measured 9.0e-13
}

TEST(CompensatedSummation, RefusedWhereNotImplemented) {
  HamiltonianProblem P1(2, &test::nonsep), P2(2, &test::nonsep), P3(2, &test::nonsep);
  StormerVerlet implicit_sv(P1, false);
  EXPECT_FALSE(implicit_sv.set_compensated_summation(true));
  EXPECT_TRUE(implicit_sv.set_compensated_summation(false));
  SymplecticEuler se(P2, true);
  EXPECT_FALSE(se.set_compensated_summation(true));
  CompositionStepper composed(std::make_unique<StormerVerlet>(P3, false), table("McLachlan4"));
  EXPECT_FALSE(composed.set_compensated_summation(true));
  test::Kepler kep;
  HamiltonianProblem P4 = kep.make(), P5 = kep.make();
  StormerVerlet explicit_sv(P4, true);
  EXPECT_TRUE(explicit_sv.set_compensated_summation(true));
  VelocityVerlet vv(P5);
  EXPECT_TRUE(vv.set_compensated_summation(true));
}

TEST(CompensatedSummation, StepsDoNotAllocate) {
  test::Kepler kep;
  auto check = [&](Stepper& st, const char* what) {
    ASSERT_TRUE(st.set_compensated_summation(true));
    Point a(4), b(4);
    a.set(0.0, kep.initial());
    Point *from = &a, *to = &b;
    for (int i = 0; i < 40; ++i) {
      const bool watch = i >= 20;
      if (watch) Eigen::internal::set_is_malloc_allowed(false);
      StepStatus s;
      try {
        s = st.step(*from, 0.05, *to);
      } catch (const std::exception& e) {
        Eigen::internal::set_is_malloc_allowed(true);
        ADD_FAILURE() << what << " allocated at step " << i << ": " << e.what();
        return;
      }
      Eigen::internal::set_is_malloc_allowed(true);
      ASSERT_EQ(s, StepStatus::Success) << what;
      std::swap(from, to);
    }
    EXPECT_GT(from->comp.cwiseAbs().maxCoeff(), 0.0) << what << ": no compensation carried";
  };
  HamiltonianProblem P1 = kep.make(), P2 = kep.make(), P3 = kep.make();
  StormerVerlet sv(P1, true);
  check(sv, "explicit SV");
  CompositionStepper csv(std::make_unique<StormerVerlet>(P2, true), table("KahanLi6"));
  check(csv, "explicit SV + KahanLi6");
  CompositionStepper cvv(std::make_unique<VelocityVerlet>(P3), table("KahanLi6"));
  check(cvv, "velocity Verlet + KahanLi6");
}
