// Tests of the time-reversible step control (ReversibleStepDensity.hpp,
// ReversibleIntegrator.hpp; Hairer and Söderlind 2005).
#include "loop/Integrator.hpp"
#include "constrained/Rattle.hpp"
#include "loop/ReversibleIntegrator.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "ReversibleTestHelpers.hpp"
#include "TestProblems.hpp"
#include "unconstrained/VelocityVerlet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

using namespace odepkg;
using odepkg::test::Kepler;
using odepkg::test::Recorder;
using odepkg::test::energy_per_tenth;
using odepkg::test::fitted_order;
using odepkg::test::KeplerDensity;
using odepkg::test::energy_per_tenth;
using odepkg::test::forward_backward;
using odepkg::test::with_eps;

namespace {

const double kPi = 3.14159265358979323846;

}  // namespace

// The map (y, rho) -> (y', rho') is symmetric: N steps with eps and N with
// -eps return to (y0, 1) to round-off, for Störmer–Verlet (explicit and
// implicit), velocity Verlet and both control functions; a non-symmetric
// method (symplectic Euler) does not return.
TEST(ReversibleStepDensity, ForwardThenBackwardReturnsToTheStart) {
  Kepler k;
  k.e = 0.9;
  KeplerDensity kepler_rho;
  for (int variant = 0; variant < 4; ++variant) {
    HamiltonianProblem P = k.make();
    FieldSpeedDensity speed(P);
    StepDensityRate& rate = variant == 1 ? static_cast<StepDensityRate&>(speed) : kepler_rho;
    double dev = 0.0;
    if (variant <= 1) {
      StormerVerlet sv(P, true);
      // rho_0 = 1 at the pericentre where |f| = 100: eps = 1e-3 gives steps
      // of 0.28 at the apocentre
      dev = forward_backward(sv, rate, k.initial(), variant == 0 ? 0.01 : 1e-3, 3000);
    } else if (variant == 2) {
      StormerVerlet sv(P, false);  // implicit: Newton to 1e-12
      dev = forward_backward(sv, rate, k.initial(), 0.01, 1000);
    } else {
      VelocityVerlet vv(P);
      dev = forward_backward(vv, rate, k.initial(), 0.01, 3000);
    }
    // Implicit SV: Newton's tolerance 1e-12 per step.  The default density's
    // G comes from a central difference with displacement eps^(1/3): its
    // round-off, eps/eps^(1/3) ~ 1e-11 relative, is that of the map (measured
    // 3.9e-9 after 6000 steps; the analytic G: 9.9e-13).
    const double tol[] = {1e-11, 2e-8, 1e-9, 1e-11};
    EXPECT_LT(dev, tol[variant]) << "variant " << variant;
  }
  HamiltonianProblem P = k.make();
  SymplecticEuler se(P, true);
  EXPECT_GT(forward_backward(se, kepler_rho, k.initial(), 0.01, 3000), 1e-3);
}

// The default density: G is the logarithmic derivative of |f| along the
// flow (against a difference quotient of |f| along the exact Kepler
// solution) and odd under p -> -p.
TEST(ReversibleStepDensity, DefaultControlIsTheLogDerivativeOfTheSpeed) {
  Kepler k;
  k.e = 0.9;
  HamiltonianProblem P = k.make();
  FieldSpeedDensity speed(P);
  Vec f(4);
  for (double t : {0.3, 1.0, 2.5, 4.0}) {
    const Vec x = k.exact(t);
    double G = 0.0, Gr = 0.0;
    ASSERT_TRUE(speed(0.0, x, G));
    const double dt = 1e-5;
    Kepler::field(0, k.exact(t + dt), f);
    const double up = std::log(f.norm());
    Kepler::field(0, k.exact(t - dt), f);
    const double down = std::log(f.norm());
    EXPECT_NEAR(G, (up - down) / (2 * dt), 1e-6 * std::max(1.0, std::abs(G))) << "t = " << t;
    Vec xr = x;
    xr.tail(2) *= -1.0;
    ASSERT_TRUE(speed(0.0, xr, Gr));
    EXPECT_NEAR(Gr, -G, 1e-12 * std::max(1.0, std::abs(G)));
  }
}

// No drift: Kepler e = 0.9 over 200 orbits, explicit Störmer–Verlet with the
// default density: the largest energy error of the last tenth at most 1.5
// times that of the first.  The same run with step doubling drifts (the
// contrast the control exists for).
TEST(ReversibleIntegrator, KeplerEnergyErrorDoesNotDrift) {
  Kepler k;
  k.e = 0.9;
  const double tf = 400 * kPi;
  Vec times(2);
  times << 0.0, tf;
  {
    HamiltonianProblem P = k.make();
    StormerVerlet sv(P, true);
    IntegratorOptions o;
    o.norm.rel_tol = 1e-6;
    o.norm.abs_tol = Vec::Constant(1, 1e-6);
    ReversibleIntegrator ri(sv, o);
    Recorder rec;
    const IntegrationResult r = ri.run(times, k.initial(), rec);
    ASSERT_EQ(r.outcome, IntegrationResult::Outcome::Completed) << r.message;
    EXPECT_DOUBLE_EQ(rec.t.back(), tf);
    const std::vector<double> m = energy_per_tenth(rec, tf, &Kepler::energy);
    std::printf("[no drift] SV, 200 orbits: %ld steps, max|dH| first tenth %.3g, last %.3g\n",
                P.stats().steps, m[0], m[9]);
    EXPECT_LE(m[9], 1.5 * m[0]) << "first " << m[0] << " last " << m[9];
    EXPECT_LT(m[9], 1e-2);
    EXPECT_LT(ri.min_step(), 0.2 * ri.max_step());  // the steps did vary
  }
  {
    HamiltonianProblem P = k.make();
    StormerVerlet sv(P, true);
    IntegratorOptions o;
    o.norm.rel_tol = 1e-6;
    o.norm.abs_tol = Vec::Constant(1, 1e-6);
    Integrator in(sv, o);
    Recorder rec;
    ASSERT_EQ(in.run(times, k.initial(), rec).outcome, IntegrationResult::Outcome::Completed);
    const std::vector<double> m = energy_per_tenth(rec, tf, &Kepler::energy);
    std::printf("[drift] SV with step doubling: max|dH| first tenth %.3g, last %.3g\n", m[0], m[9]);
    EXPECT_GT(m[9], 2.0 * m[0]) << "step doubling: first " << m[0] << " last " << m[9];
  }
}

// Order 2 in eps: the error at t = 2 pi (one period, exact y0) of the
// sequence eps, eps/2, ..., fitted.
TEST(ReversibleIntegrator, ErrorFallsAsEpsSquared) {
  Kepler k;
  k.e = 0.6;
  Vec times(2);
  times << 0.0, 2 * kPi;
  std::vector<double> eps, err;
  for (double e = 2e-3; e > 1e-4; e *= 0.5) {
    HamiltonianProblem P = k.make();
    StormerVerlet sv(P, true);
    KeplerDensity rho;
    ReversibleIntegrator ri(sv, with_eps(e), &rho);
    Recorder rec;
    ASSERT_EQ(ri.run(times, k.initial(), rec).outcome, IntegrationResult::Outcome::Completed);
    eps.push_back(e);
    err.push_back((rec.x.back() - k.exact(2 * kPi)).norm());
  }
  const double p = fitted_order(eps, err);
  EXPECT_NEAR(p, 2.0, 0.15) << "fitted order " << p;
}

// Requested output times do not change the step sequence: the state at tf
// is the same with and without the intermediate times, and each
// intermediate output agrees with a run ending there.
TEST(ReversibleIntegrator, OutputTimesLeaveTheStepsUnchanged) {
  Kepler k;
  k.e = 0.9;
  KeplerDensity rho;
  Vec two(2), many(6);
  two << 0.0, 10.0;
  many << 0.0, 1.0, 2.5, 2.6, 7.0, 10.0;
  HamiltonianProblem P1 = k.make(), P2 = k.make();
  StormerVerlet sv1(P1, true), sv2(P2, true);
  ReversibleIntegrator a(sv1, with_eps(0.01), &rho), b(sv2, with_eps(0.01), &rho);
  Recorder ra, rb;
  ASSERT_EQ(a.run(two, k.initial(), ra).outcome, IntegrationResult::Outcome::Completed);
  ASSERT_EQ(b.run(many, k.initial(), rb).outcome, IntegrationResult::Outcome::Completed);
  ASSERT_EQ(rb.t.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(rb.t[i], many(i));
  EXPECT_LT((ra.x.back() - rb.x.back()).lpNorm<Eigen::Infinity>(), 1e-13);
  EXPECT_EQ(P1.stats().steps, P2.stats().steps);
  // the output at 2.5 against a run ending at 2.5
  HamiltonianProblem P3 = k.make();
  StormerVerlet sv3(P3, true);
  ReversibleIntegrator c(sv3, with_eps(0.01), &rho);
  Recorder rc;
  Vec part(2);
  part << 0.0, 2.5;
  ASSERT_EQ(c.run(part, k.initial(), rc).outcome, IntegrationResult::Outcome::Completed);
  EXPECT_LT((rc.x.back() - rb.x[2]).lpNorm<Eigen::Infinity>(), 1e-13);
}

// A pendulum released near the top (Cartesian, g = |q|^2 - 1, RATTLE
// explicit): constraints at round-off at every step, and no energy drift.
// (Under the old default rho = |f| the steps varied, asserted as max > 1.5
// min; the time-scale density is constant here.)
TEST(ReversibleIntegrator, RattlePendulumNearTheTop) {
  auto field = [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(2) = x.tail(2);
    dx(2) = 0.0;
    dx(3) = -1.0;
  };
  HamiltonianProblem P(2, field);
  P.set_constraints(
      1, [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1.0; },
      [](const ConstVecRef& q, MatRef G) { G.row(0) = 2.0 * q.transpose(); });
  Rattle r(P, true);
  const double th = 0.05;  // from the upright position
  Vec x0(4);
  x0 << std::sin(th), std::cos(th), 0.0, 0.0;
  const double tf = 200.0;
  Vec times(2);
  times << 0.0, tf;
  IntegratorOptions o;
  o.norm.rel_tol = 1e-5;
  o.norm.abs_tol = Vec::Constant(1, 1e-5);
  ReversibleIntegrator ri(r, o);
  Recorder rec;
  const IntegrationResult res = ri.run(times, x0, rec);
  ASSERT_EQ(res.outcome, IntegrationResult::Outcome::Completed) << res.message;
  double gmax = 0.0, hidden = 0.0;
  for (const Vec& x : rec.x) {
    gmax = std::max(gmax, std::abs(x.head(2).squaredNorm() - 1.0));
    hidden = std::max(hidden, std::abs(x.head(2).dot(x.tail(2))));
  }
  EXPECT_LT(gmax, 1e-13);
  EXPECT_LT(hidden, 1e-13);
  auto H = [](const Vec& x) { return 0.5 * x.tail(2).squaredNorm() + x(1); };
  std::vector<double> m(10, 0.0);
  for (std::size_t i = 0; i < rec.t.size(); ++i) {
    const int k = std::min(9, static_cast<int>(10.0 * rec.t[i] / tf));
    m[k] = std::max(m[k], std::abs(H(rec.x[i]) - H(x0)));
  }
  EXPECT_LE(m[9], 1.5 * m[0]) << "first " << m[0] << " last " << m[9];
  // The default density (TimeScaleDensity) of this pendulum is
  // sqrt((|q'|/|p|) (|p'|/|q|)) = sqrt(g/L) = 1 everywhere (the limit
  // |q''|/|p'| = 1 at the start from rest): constant steps, eps / 1.
  EXPECT_NEAR(ri.min_step(), ri.max_step(), 1e-9 * ri.max_step());
  EXPECT_NEAR(ri.max_step(), ReversibleIntegrator::tolerance_eps(1e-5, 2), 1e-9);
}

// Refusals: a non-symmetric method, fixed steps; a density that falls too
// fast for eps ends the run with a partial result and a message.
TEST(ReversibleIntegrator, RefusesWhatItCannotDo) {
  Kepler k;
  HamiltonianProblem P = k.make();
  SymplecticEuler se(P, true);
  EXPECT_THROW(ReversibleIntegrator(se, IntegratorOptions()), InputError);
  StormerVerlet sv(P, true);
  IntegratorOptions fixed;
  fixed.fixed_step = 0.01;
  EXPECT_THROW(ReversibleIntegrator(sv, fixed), InputError);

  struct Collapsing final : StepDensityRate {
    bool operator()(double, const ConstVecRef&, double& G) override {
      G = -100.0;
      return true;
    }
  } collapse;
  ReversibleIntegrator ri(sv, with_eps(0.001), &collapse);
  Recorder rec;
  Vec times(2);
  times << 0.0, 10.0;
  const IntegrationResult r = ri.run(times, k.initial(), rec);
  EXPECT_EQ(r.outcome, IntegrationResult::Outcome::Failed);
  EXPECT_NE(r.message.find("step density"), std::string::npos) << r.message;
  EXPECT_GT(rec.t.size(), 2u);  // the steps before the failure were output
  EXPECT_LT(r.t, 10.0);
}

// Events under the reversible control: Kepler e = 0.9 from the pericentre,
// q2 crossing 0 upward at every pericentre passage t = 2 pi k.  The located
// times are spaced by the method's period (the same for every orbit), 2 pi
// up to its phase error, O(eps^2); the event state has q2 = 0, and the located crossings leave the run alone: every
// step's state is bitwise the one of the run without events.  A terminal
// event ends the run at the first passage, its state the last output.
TEST(ReversibleIntegrator, EventsAtPericentrePassages) {
  Kepler k;
  k.e = 0.9;
  const double tf = 21 * kPi;
  Vec times(2);
  times << 0.0, tf;
  auto run = [&](int mode, Recorder& rec, std::vector<EventRecord>& events) {  // 0 none, 1 events, 2 terminal
    HamiltonianProblem P = k.make();
    StormerVerlet sv(P, true);
    KeplerDensity rho;
    ReversibleIntegrator ri(sv, with_eps(1e-3), &rho);
    EventLocator ev(sv,
                    [mode](double, const ConstVecRef& x, VecRef g, VecRef term, VecRef dir) {
                      g(0) = x(1);
                      term(0) = mode == 2 ? 1.0 : 0.0;
                      dir(0) = 1.0;
                    },
                    1);
    if (mode > 0) ri.set_events(&ev);
    const IntegrationResult r = ri.run(times, k.initial(), rec);
    events = ev.events();
    return r.outcome;
  };
  Recorder plain, with, term;
  std::vector<EventRecord> none, ev, ev_term;
  ASSERT_EQ(run(0, plain, none), IntegrationResult::Outcome::Completed);
  ASSERT_EQ(run(1, with, ev), IntegrationResult::Outcome::Completed);
  ASSERT_EQ(ev.size(), 10u);
  double lo = 1e300, hi = -1e300;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    EXPECT_LT(std::abs(ev[i].x(1)), 1e-12);
    EXPECT_GT(ev[i].x(0), 0.0);  // the pericentre side
    const double spacing = ev[i].t - (i == 0 ? 0.0 : ev[i - 1].t);
    lo = std::min(lo, spacing);
    hi = std::max(hi, spacing);
  }
  std::printf("pericentre passages: spacing - 2 pi in [%.6g, %.6g]\n", lo - 2 * kPi, hi - 2 * kPi);
  EXPECT_LT(hi - lo, 1e-6);                // measured 1.1e-7
  EXPECT_LT(std::abs(lo - 2 * kPi), 0.03);  // measured 0.0168
  ASSERT_EQ(with.t.size(), plain.t.size());
  for (std::size_t i = 0; i < plain.t.size(); ++i) {
    ASSERT_EQ(with.t[i], plain.t[i]) << "step " << i;
    ASSERT_TRUE(with.x[i] == plain.x[i]) << "step " << i;
  }
  ASSERT_EQ(run(2, term, ev_term), IntegrationResult::Outcome::StoppedByEvent);
  ASSERT_EQ(ev_term.size(), 1u);
  EXPECT_EQ(ev_term[0].t, ev[0].t);
  EXPECT_EQ(term.t.back(), ev_term[0].t);
  EXPECT_TRUE(term.x.back() == ev_term[0].x);
  // before the event, the steps of the run without events
  ASSERT_LT(term.t.size(), plain.t.size());
  for (std::size_t i = 0; i + 1 < term.t.size(); ++i) ASSERT_TRUE(term.x[i] == plain.x[i]) << "step " << i;
  EXPECT_LT(term.t[term.t.size() - 2], ev_term[0].t);
  EXPECT_GT(plain.t[term.t.size() - 1], ev_term[0].t);
}
