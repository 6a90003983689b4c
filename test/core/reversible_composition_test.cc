// Symmetric compositions (CompositionStepper, Hairer, Lubich, Wanner,
// Sect. II.4 and V.3) under the time-reversible step control of Hairer and
// Söderlind 2005: the composed map is symmetric, so the (y, rho) map is too;
// the density sets only the step sequence, each step is the composed
// method's, so the error at a fixed time falls as eps^p for order p.
#include "loop/ReversibleIntegrator.hpp"
#include "ReversibleTestHelpers.hpp"
#include "constrained/Rattle.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "TestProblems.hpp"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace odepkg;
using test::Kepler;
using test::KeplerDensity;
using test::Recorder;

namespace {

const double kPi = 3.14159265358979323846;

const composition::CompositionTable& table(const char* name) {
  const composition::CompositionTable* t = composition::find_composition(name);
  if (!t) throw std::runtime_error(std::string("no table ") + name);
  return *t;
}

std::unique_ptr<CompositionStepper> composed_sv(HamiltonianProblem& P, const char* name) {
  return std::make_unique<CompositionStepper>(std::make_unique<StormerVerlet>(P, true), table(name));
}

/// Cartesian pendulum g = |q|^2 - 1, H = |p|^2/2 + q_2 (f = [p; 0; -1]).
HamiltonianProblem pendulum() {
  HamiltonianProblem P(2, [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(2) = x.tail(2);
    dx(2) = 0.0;
    dx(3) = -1.0;
  });
  P.set_constraints(
      1, [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1.0; },
      [](const ConstVecRef& q, MatRef G) { G.row(0) = 2.0 * q.transpose(); });
  return P;
}

}  // namespace

// Forward N steps with eps, back N with -eps: (y0, rho0 = 1) again to
// round-off, for KahanLi8 and McLachlan4 over explicit Störmer–Verlet
// (Kepler e = 0.9, both densities) and McLachlan4 over RATTLE (a pendulum
// swinging over the top, the default density).
TEST(ReversibleComposition, ForwardThenBackwardReturnsToTheStart) {
  Kepler k;
  k.e = 0.9;
  KeplerDensity kepler_rho;
  for (const char* name : {"KahanLi8", "McLachlan4"}) {
    for (bool analytic : {true, false}) {
      HamiltonianProblem P = k.make();
      FieldSpeedDensity speed(P);
      auto st = composed_sv(P, name);
      StepDensityRate& rate = analytic ? static_cast<StepDensityRate&>(kepler_rho) : speed;
      // rho_0 = 1 at the pericentre (r = 0.1) for both densities: eps is the
      // first step there; rho = |f| then falls 100-fold to the apocentre
      const double dev = test::forward_backward(*st, rate, k.initial(), analytic ? 0.01 : 1e-3, 3000);
      std::printf("[forward-backward] SV+%-10s %-10s: %.2e\n", name, analytic ? "|q|^-3/2" : "|f|", dev);
      // round-off of 6000 steps of 5 (McLachlan4) or 17 (KahanLi8) substeps,
      // grown along Kepler's shearing flow: measured 1.3e-11 and 4.1e-11 with
      // the analytic G; the default G adds its central difference's
      // round-off, ~1e-11 relative per step (measured 1.1e-9 and 3.0e-9)
      EXPECT_LT(dev, analytic ? 2e-10 : 2e-8) << name;
    }
  }
  HamiltonianProblem P = pendulum();
  CompositionStepper st(std::make_unique<Rattle>(P, true), table("McLachlan4"));
  FieldSpeedDensity speed(P);
  Vec x0(4);
  x0 << 0.0, -1.0, 2.2, 0.0;  // energy 1.42 > 1: over the top
  const double dev = test::forward_backward(st, speed, x0, 0.05, 1000);
  std::printf("[forward-backward] RATTLE+McLachlan4 pendulum: %.2e\n", dev);
  EXPECT_LT(dev, 1e-11);
}

// No drift: Kepler e = 0.9 over 200 orbits with McLachlan4 over explicit
// Störmer–Verlet and the default density rho = |f|: the largest energy
// error of the last tenth at most 1.5 times that of the first.
TEST(ReversibleComposition, KeplerEnergyErrorDoesNotDrift) {
  Kepler k;
  k.e = 0.9;
  const double tf = 400 * kPi;
  Vec times(2);
  times << 0.0, tf;
  HamiltonianProblem P = k.make();
  auto st = composed_sv(P, "McLachlan4");
  IntegratorOptions o;
  o.norm.rel_tol = 1e-8;
  o.norm.abs_tol = Vec::Constant(1, 1e-8);
  ReversibleIntegrator ri(*st, o);
  Recorder rec;
  const IntegrationResult r = ri.run(times, k.initial(), rec);
  ASSERT_EQ(r.outcome, IntegrationResult::Outcome::Completed) << r.message;
  const std::vector<double> m = test::energy_per_tenth(rec, tf, &Kepler::energy);
  std::printf("[no drift] SV+McLachlan4, 200 orbits: %ld steps, eps %.3g, max|dH| first tenth %.3g, last %.3g\n",
              P.stats().steps, ri.eps(), m[0], m[9]);
  EXPECT_LE(m[9], 1.5 * m[0]) << "first " << m[0] << " last " << m[9];
  EXPECT_LT(m[9], 1e-3);  // measured 1.03e-4
  EXPECT_LT(ri.min_step(), 0.05 * ri.max_step());  // the steps did vary
}

// Order 4 in eps: the error at t = 2 pi (one period, exact y0) for
// McLachlan4 and TripleJump4 over Störmer–Verlet, rho = |q|^(-3/2), fitted
// over eps = 0.04, 0.02, 0.01, 0.005.  (The density sets only where the steps
// fall; each step, the shortened last one too, is the composed method's.)
TEST(ReversibleComposition, ErrorFallsAsEpsToTheFourth) {
  Kepler k;
  k.e = 0.6;
  Vec times(2);
  times << 0.0, 2 * kPi;
  for (const char* name : {"McLachlan4", "TripleJump4"}) {
    std::vector<double> eps, err;
    for (double e = 0.04; e > 0.004; e *= 0.5) {
      HamiltonianProblem P = k.make();
      auto st = composed_sv(P, name);
      KeplerDensity rho;
      ReversibleIntegrator ri(*st, test::with_eps(e), &rho);
      Recorder rec;
      ASSERT_EQ(ri.run(times, k.initial(), rec).outcome, IntegrationResult::Outcome::Completed);
      eps.push_back(e);
      err.push_back((rec.x.back() - k.exact(2 * kPi)).norm());
    }
    const double p = test::fitted_order(eps, err);
    std::printf("[order] SV+%-11s: fitted %.2f (errors %.2e .. %.2e)\n", name, p, err.front(), err.back());
    EXPECT_NEAR(p, 4.0, 0.3) << name << " fitted order " << p;
    EXPECT_GT(err.back(), 1e-13);  // above round-off: the fit means something
  }
}
