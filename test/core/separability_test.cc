// separability_test.cc — SeparabilityProbe.hpp and its use by the explicit
// steppers: the claim of "Explicit" (H = T(p) + V(q), H_qp = 0) is verified
// before the first step and during the run, never trusted (an explicit
// Störmer–Verlet step on a non-separable H is not Störmer–Verlet, Hairer,
// Lubich, Wanner, "Geometric Numerical Integration", (VI.3.4)).
#include "loop/Integrator.hpp"
#include "unconstrained/SeparabilityProbe.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace odepkg;

namespace {

/// H = p^2 (1 + q^2) / 4 + q^2 / 2 (d = 1): H_qp = p q.
void coupled(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1) * (1 + x(0) * x(0)) / 2;
  dx(1) = -(x(1) * x(1) * x(0) / 2 + x(0));
}

/// The pendulum H = p^2 / 2 - cos q, separable.
void pendulum(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -std::sin(x(0));
}

/// Separable, with a weak coupling eps q p added to H: H_qp = eps.
struct Weak {
  double eps;
  void operator()(double, const ConstVecRef& x, VecRef dx) const {
    dx(0) = x(1) + eps * x(0);
    dx(1) = -std::sin(x(0)) - eps * x(1);
  }
};

SeparabilityProbe::Finding probe_at(HamiltonianProblem& pb, const Vec& x) {
  SeparabilityProbe probe(pb.dim());
  Vec fx(pb.state_size());
  pb.field(0.0, x, fx);
  return probe.probe(pb, 0.0, x, fx);
}

TEST(SeparabilityProbe, SeparableFieldPassesWithTwoCalls) {
  HamiltonianProblem pb(1, pendulum);
  Vec x(2);
  x << 1.0, 0.5;
  const long before = pb.stats().field_evals + 1;  // + the evaluation of f(x)
  const auto r = probe_at(pb, x);
  EXPECT_TRUE(r.separable);
  EXPECT_EQ(pb.stats().field_evals - before, 2);
}

TEST(SeparabilityProbe, FindsTheCouplingAndWhichPartMoved) {
  HamiltonianProblem pb(1, coupled);
  Vec x(2);
  x << 1.0, 0.5;
  auto r = probe_at(pb, x);
  ASSERT_FALSE(r.separable);
  EXPECT_TRUE(r.force_moved);  // -H_q moved with p first
  // the change is H_qp delta = p q delta, delta ~ sqrt(eps) max(1, |p|)
  EXPECT_NEAR(r.change / r.step, 0.5, 0.05);
  EXPECT_GT(r.change, 100 * r.bound);
  // where H_qp = p q vanishes (q = 0) the probe sees nothing: the re-checks
  // of the run are needed (test below)
  HamiltonianProblem pb0(1, coupled);
  x << 0.0, 0.5;
  EXPECT_TRUE(probe_at(pb0, x).separable);
}

TEST(SeparabilityProbe, CouplingsAboveAboutOneInAMillionAreFound) {
  Vec x(2);
  x << 1.0, 0.5;
  HamiltonianProblem strong(1, Weak{1e-4});
  EXPECT_FALSE(probe_at(strong, x).separable);
  HamiltonianProblem weak(1, Weak{1e-12});
  EXPECT_TRUE(probe_at(weak, x).separable);  // below round-off of the difference
}

TEST(SeparabilityProbe, ExplicitSteppersRefuseANonSeparableH) {
  Vec x0(2);
  x0 << 1.0, 0.5;
  Vec f0(2);
  for (int method = 0; method < 2; ++method) {
    HamiltonianProblem pb(1, coupled);
    std::unique_ptr<Stepper> s;
    if (method == 0)
      s = std::make_unique<StormerVerlet>(pb, true);
    else
      s = std::make_unique<SymplecticEuler>(pb, true);
    pb.field(0.0, x0, f0);
    try {
      s->check_claims(0.0, x0, f0);
      FAIL() << "not refused";
    } catch (const InputError& e) {
      EXPECT_EQ(e.id, "notSeparable");
      EXPECT_NE(std::string(e.what()).find("\"Explicit\""), std::string::npos);
    }
    // the implicit schemes claim nothing
    HamiltonianProblem pbi(1, coupled);
    StormerVerlet implicit_sv(pbi, false);
    implicit_sv.check_claims(0.0, x0, f0);
    EXPECT_EQ(pbi.stats().field_evals, 0);
  }
}

/// From q0 = 0 the probe at t0 passes; the free check of the first steps
/// (the force at q_n with a new p) finds the coupling and ends the run.
TEST(SeparabilityProbe, RunFromWhereTheProbeSeesNothingIsStoppedEarly) {
  for (int method = 0; method < 2; ++method) {
    HamiltonianProblem pb(1, coupled);
    std::unique_ptr<Stepper> s;
    if (method == 0)
      s = std::make_unique<StormerVerlet>(pb, true);
    else
      s = std::make_unique<SymplecticEuler>(pb, true);
    Vec x0(2), f0(2);
    x0 << 0.0, 0.5;
    pb.field(0.0, x0, f0);
    s->check_claims(0.0, x0, f0);  // passes
    Point from(2), to(2);
    from.set(0.0, x0);
    int steps = 0;
    try {
      for (; steps < 100; ++steps) {
        ASSERT_EQ(s->step(from, 0.01, to), StepStatus::Success);
        std::swap(from, to);
      }
      FAIL() << "not refused";
    } catch (const InputError& e) {
      EXPECT_EQ(e.id, "notSeparable");
    }
    EXPECT_LE(steps, 3);
  }
}

/// A separable force depending on t: the free check sees the force change
/// at q_n, the probe (at one t) clears it once; the run goes on and costs
/// the probe's 2 calls more than without the dependence, less 1: they count
/// towards the 16 calls after which the velocity model is learned
/// (AffineVelocity.hpp), so it is learned one two-call step earlier.
TEST(SeparabilityProbe, TimeDependentForceIsNotMistakenForACoupling) {
  auto driven = [](double t, const ConstVecRef& x, VecRef dx) {
    dx(0) = x(1);
    dx(1) = -x(0) + std::cos(2 * t);
  };
  auto autonomous = [](double, const ConstVecRef& x, VecRef dx) {
    dx(0) = x(1);
    dx(1) = -x(0);
  };
  long calls[2];
  for (int k = 0; k < 2; ++k) {
    HamiltonianProblem pb(1, k == 0 ? HamiltonianProblem::Field(driven) : HamiltonianProblem::Field(autonomous));
    StormerVerlet sv(pb, true);
    Vec x0(2), f0(2);
    x0 << 1.0, 0.0;
    pb.field(0.0, x0, f0);
    sv.check_claims(0.0, x0, f0);
    Point from(2), to(2);
    from.set(0.0, x0);
    from.force = f0.tail(1);
    from.has_force = true;
    for (int i = 0; i < 50; ++i) {
      ASSERT_EQ(sv.step(from, 0.01, to), StepStatus::Success);
      std::swap(from, to);
    }
    calls[k] = pb.stats().field_evals;
  }
  EXPECT_EQ(calls[0], calls[1] + 2 - 1);
}

}  // namespace
