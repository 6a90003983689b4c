// Tests of the reversible step control as a function of the state
// (ReversibleIntegrator.hpp: rho_0 = rho(y0), eps from RelTol and the order;
// TimeScaleDensity.hpp: the unit-free default density): chunks and reversed
// runs take the steps of one run, a reversal with the returned (rho, eps)
// retraces the run, and the steps do not depend on the units.
#include "loop/ReversibleIntegrator.hpp"
#include "loop/TimeScaleDensity.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace odepkg;
using odepkg::test::Kepler;
using odepkg::test::Recorder;

namespace {

const double kPi = 3.14159265358979323846;

// Kepler with H = |p|^2/2 - mu/|q| (a unit system with GM = mu).
struct ScaledKepler {
  double mu = 1.0;
  HamiltonianProblem make() const {
    const double m = mu;
    return HamiltonianProblem(2, [m](double, const ConstVecRef& x, VecRef dx) {
      const double r = x.head(2).norm();
      dx.head(2) = x.tail(2);
      dx.tail(2) = -m * x.head(2) / (r * r * r);
    });
  }
};

struct RunEnd {
  long steps = 0;
  Vec end;
  double rho = 0, eps = 0, last_eps = 0;
};

// Explicit Störmer–Verlet under the reversible control over [t0, tf].
RunEnd run(HamiltonianProblem P, const Vec& x0, double t0, double tf, double rel_tol,
        const DensityStart& start = DensityStart()) {
  StormerVerlet sv(P, true);
  IntegratorOptions o;
  o.norm.rel_tol = rel_tol;
  ReversibleIntegrator ri(sv, o);
  ri.set_density_start(start);
  Recorder rec;
  Vec times(2);
  times << t0, tf;
  const IntegrationResult r = ri.run(times, x0, rec);
  EXPECT_EQ(r.outcome, IntegrationResult::Outcome::Completed) << r.message;
  RunEnd out;
  out.steps = P.stats().steps;
  out.end = rec.x.back();
  out.rho = ri.final_rho();
  out.eps = ri.eps();
  out.last_eps = ri.last_eps();
  return out;
}

Vec reversed(Vec x) {
  x.tail(x.size() / 2) *= -1.0;
  return x;
}

}  // namespace

// The default density is Kepler's own, sqrt(mu) |q|^(-3/2), at every point
// of an orbit (against the formula), in any units; G is its logarithmic
// derivative -1.5 q.p / |q|^2 (against the analytic one: the central
// difference's error) and exactly odd under p -> -p.
TEST(TimeScaleDensity, IsKeplersDensityAndOdd) {
  Kepler k;
  k.e = 0.9;
  for (double mu : {1.0, 2.959122082855911e-4}) {
    ScaledKepler sk{mu};
    HamiltonianProblem P = sk.make();
    TimeScaleDensity rho(P);
    for (double t : {0.0, 0.3, 1.0, 2.5, 4.0}) {
      Vec x = k.exact(t);
      x.tail(2) *= std::sqrt(mu);  // the same orbit with GM = mu
      double G = 0.0, Gr = 0.0;
      ASSERT_TRUE(rho(0.0, x, G));
      const double r = x.head(2).norm();
      EXPECT_NEAR(rho.last_density(), std::sqrt(mu) * std::pow(r, -1.5), 1e-13 * std::sqrt(mu) * std::pow(r, -1.5));
      const double Gk = -1.5 * x.head(2).dot(x.tail(2)) / (r * r);
      EXPECT_NEAR(G, Gk, 1e-8 * rho.last_density()) << "mu " << mu << " t " << t;
      ASSERT_TRUE(rho(0.0, reversed(x), Gr));
      EXPECT_EQ(Gr, -G);
    }
  }
}

// A start from rest (p = 0: |q'|/|p| = 0/0) takes the limit along the flow:
// the harmonic oscillator's rho = w from x = (1, 0).
TEST(TimeScaleDensity, StartFromRestTakesTheLimit) {
  const double w = 3.0;
  HamiltonianProblem P(1, [w](double, const ConstVecRef& x, VecRef dx) {
    dx(0) = x(1);
    dx(1) = -w * w * x(0);
  });
  TimeScaleDensity rho(P);
  Vec x(2);
  x << 1.0, 0.0;
  double G = 1.0;
  ASSERT_TRUE(rho(0.0, x, G));
  EXPECT_NEAR(rho.last_density(), w, 1e-9);
  EXPECT_EQ(G, 0.0);
}

// Kepler e = 0.9, 10 orbits, RelTol 1e-6: two chunks take at most 1.25 times
// the steps of one run; the reversed run (from the end, p -> -p, the same
// options) the forward run's steps +-25 % (measured: 4,251 steps forward;
// chunks 2,136 + 2,116; reversed 4,250).  Under the old normalisation
// rho(t0) = 1 (rho = |f|, InitialStep 1e-3) the reversal took 145 times the
// steps.
TEST(ReversibleState, ChunksAndReversalTakeTheStepsOfOneRun) {
  Kepler k;
  k.e = 0.9;
  const double tf = 20 * kPi;
  const RunEnd one = run(k.make(), k.initial(), 0.0, tf, 1e-6);
  const RunEnd a = run(k.make(), k.initial(), 0.0, tf / 2, 1e-6);
  const RunEnd b = run(k.make(), a.end, tf / 2, tf, 1e-6);
  const RunEnd back = run(k.make(), reversed(one.end), 0.0, tf, 1e-6);
  std::printf("[state] one run %ld steps, chunks %ld + %ld, reversed %ld; eps %g\n", one.steps, a.steps,
              b.steps, back.steps, one.eps);
  EXPECT_LE(a.steps + b.steps, 1.25 * one.steps);
  EXPECT_NEAR(static_cast<double>(back.steps), static_cast<double>(one.steps), 0.25 * one.steps);
  EXPECT_EQ(one.eps, ReversibleIntegrator::tolerance_eps(1e-6, 2));
  EXPECT_EQ(a.eps, one.eps);
  EXPECT_EQ(b.eps, one.eps);
  // the integrated rho against the density of the end state: O(eps^2)
  EXPECT_NEAR(one.rho, std::pow(one.end.head(2).norm(), -1.5), 1e-2 * one.rho);
}

// With the returned rho and eps (and the last step's e first), the reversal
// retraces the run: back at y0 to round-off (measured 1.7e-10 after 4,345
// steps over 10 orbits of e = 0.9, whose error growth amplifies the
// round-off of each step; without them, from rho(y(tf)) and eps: 1.6e-3,
// the method's error).
TEST(ReversibleState, ReversalWithTheReturnedDensityRetracesTheRun) {
  Kepler k;
  k.e = 0.9;
  const double tf = 20 * kPi + 1.0;  // ends off a step: a shortened last step
  const RunEnd fwd = run(k.make(), k.initial(), 0.0, tf, 1e-6);
  DensityStart exact;
  exact.rho0 = fwd.rho;
  exact.eps = std::abs(fwd.eps);
  exact.first_eps = std::abs(fwd.last_eps);
  const RunEnd back = run(k.make(), reversed(fwd.end), 0.0, tf, 1e-6, exact);
  const double dev = (reversed(back.end) - k.initial()).lpNorm<Eigen::Infinity>();
  const RunEnd plain = run(k.make(), reversed(fwd.end), 0.0, tf, 1e-6);
  const double dev_plain = (reversed(plain.end) - k.initial()).lpNorm<Eigen::Infinity>();
  std::printf("[retrace] %ld steps forward, %ld back: |y - y0| = %.3g (without the returned rho, eps: %.3g)\n",
              fwd.steps, back.steps, dev, dev_plain);
  EXPECT_LT(dev, 1e-9);
  EXPECT_GT(dev_plain, 100 * dev);
  const double rho0 = std::pow(k.initial().head(2).norm(), -1.5);
  EXPECT_NEAR(back.rho, rho0, 1e-9 * rho0);
}

// Unit independence: the same orbit in AU and days (mu = GM_sun) and in
// units with mu = 1 takes the same number of steps (times rescaled).
TEST(ReversibleState, DefaultDensityTakesTheSameStepsInAnyUnits) {
  const double e = 0.97, mu = 2.959122082855911e-4, a = 17.8;
  long steps[2];
  for (int u = 0; u < 2; ++u) {
    const double m = u == 0 ? 1.0 : mu, aa = u == 0 ? 1.0 : a;
    const double ra = aa * (1 + e);
    Vec x0(4);
    x0 << -ra, 0.0, 0.0, -std::sqrt(m * (1 - e) / ra);
    const double tf = 2 * 2 * kPi * std::sqrt(aa * aa * aa / m);
    ScaledKepler sk{m};
    steps[u] = run(sk.make(), x0, 0.0, tf, 1e-6).steps;
  }
  std::printf("[units] comet e = 0.97, 2 orbits: %ld steps (mu = 1, a = 1), %ld (AU, days)\n", steps[0],
              steps[1]);
  EXPECT_NEAR(static_cast<double>(steps[1]), static_cast<double>(steps[0]), 0.02 * steps[0]);
}
