// nonholonomic_rattle_test.cc — the nonholonomic RATTLE (NonholonomicRattle.hpp)
// against independent expectations: the vertical rolling disk's closed-form
// solution (order 2 fitted; 4 and 6 composed), symmetry (a step and its
// step with -h return the start to round-off), velocity constraints at
// round-off, the energy of the Chaplygin sleigh and of the contact
// oscillator of McLachlan and Perlmutter bounded without drift, a mixed
// holonomic + nonholonomic problem, and steps without heap allocation.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included (EigenConfig.hpp)

#include "EigenConfig.hpp"
#include "TestProblems.hpp"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"
#include "constrained/NonholonomicRattle.hpp"
#include "loop/Integrator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

using namespace odepkg;

namespace {

// --- vertical rolling disk: q = (x, y, phi, theta), T = (m |v_xy|^2 + I w_phi^2 + J w_theta^2)/2,
// x' = R cos(phi) theta', y' = R sin(phi) theta'.  Exact: w_phi, w_theta constant, the contact
// point on a circle of radius R w_theta / w_phi.
constexpr double kR = 0.7, kMass = 2.0, kI = 0.4, kJ = 0.9;
const auto disk_f = [](double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(4) / kMass;
  dx(1) = x(5) / kMass;
  dx(2) = x(6) / kI;
  dx(3) = x(7) / kJ;
  dx.tail(4).setZero();
};
const auto disk_A = [](const ConstVecRef& q, MatRef A) {
  A << 1, 0, 0, -kR * std::cos(q(2)), 0, 1, 0, -kR * std::sin(q(2));
};
constexpr double kWphi = 1.3, kWtheta = 2.1;
Vec disk_exact(double t) {
  const double phi = 0.2 + kWphi * t, rho = kR * kWtheta / kWphi;
  Vec x(8);
  x << 0.5 + rho * (std::sin(phi) - std::sin(0.2)), -0.3 - rho * (std::cos(phi) - std::cos(0.2)), phi,
      -0.1 + kWtheta * t, kMass * kR * std::cos(phi) * kWtheta, kMass * kR * std::sin(phi) * kWtheta, kI * kWphi,
      kJ * kWtheta;
  return x;
}

// --- Chaplygin sleigh in centre-of-mass coordinates q = (x, y, theta), knife edge at distance a
// behind the centre of mass: -sin(th) x' + cos(th) y' - a th' = 0; a spring V = k |(x, y)|^2 / 2.
constexpr double kSa = 0.5, kSm = 1.0, kSI = 0.3, kSk = 1.0;
const auto sleigh_f = [](double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(3) / kSm;
  dx(1) = x(4) / kSm;
  dx(2) = x(5) / kSI;
  dx(3) = -kSk * x(0);
  dx(4) = -kSk * x(1);
  dx(5) = 0.0;
};
const auto sleigh_A = [](const ConstVecRef& q, MatRef A) { A << -std::sin(q(2)), std::cos(q(2)), -kSa; };
double sleigh_energy(const Vec& x) {
  return 0.5 * (x(3) * x(3) + x(4) * x(4)) / kSm + 0.5 * x(5) * x(5) / kSI + 0.5 * kSk * (x(0) * x(0) + x(1) * x(1));
}
Vec sleigh_start() {
  // v = (cos th, sin th) u + th' * (-a)(-sin th, cos th)... chosen on A v = 0:
  const double th = 0.4, w = 0.8, u = 0.6;
  Vec x(6);
  const double vx = u * std::cos(th) - kSa * w * std::sin(th), vy = u * std::sin(th) + kSa * w * std::cos(th);
  x << 0.3, -0.2, th, kSm * vx, kSm * vy, kSI * w;
  return x;
}

// --- contact oscillator (McLachlan and Perlmutter 2006): q = (x, y, z), constraint x' + y z' = 0,
// V = (x^2 + y^2)/2 + eps x^2 z^2 / 2; (y^2 + y'^2)/2 is a second invariant.
constexpr double kEps = 0.1;
const auto contact_f = [](double, const ConstVecRef& x, VecRef dx) {
  dx.head(3) = x.tail(3);
  dx(3) = -x(0) - kEps * x(0) * x(2) * x(2);
  dx(4) = -x(1);
  dx(5) = -kEps * x(0) * x(0) * x(2);
};
const auto contact_A = [](const ConstVecRef& q, MatRef A) { A << 1, 0, q(1); };
double contact_energy(const Vec& x) {
  return 0.5 * x.tail(3).squaredNorm() + 0.5 * (x(0) * x(0) + x(1) * x(1)) + 0.5 * kEps * x(0) * x(0) * x(2) * x(2);
}

// --- mixed: a particle on the unit sphere g = |q|^2 - 1 under gravity V = q_3, with the velocity
// constraint 0.3 v_1 + q_3 v_2 - q_2 v_3 = 0 (A parallel to G only at q = (+-1, 0, 0), above the
// height z = -0.8 that the data below can reach).
const auto sphere_f = [](double, const ConstVecRef& x, VecRef dx) {
  dx.head(3) = x.tail(3);
  dx(3) = 0.0;
  dx(4) = 0.0;
  dx(5) = -1.0;
};
const auto sphere_g = [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1.0; };
const auto sphere_G = [](const ConstVecRef& q, MatRef G) { G = 2.0 * q.transpose(); };
const auto sphere_A = [](const ConstVecRef& q, MatRef A) { A << 0.3, q(2), -q(1); };

Vec step_n(Stepper& s, const Vec& x0, double h, int n) {
  Point a(static_cast<int>(x0.size())), b(static_cast<int>(x0.size()));
  a.set(0.0, x0);
  for (int i = 0; i < n; ++i) {
    const StepStatus st = s.step(a, h, b);
    EXPECT_EQ(st, StepStatus::Success) << "step " << i;
    if (st != StepStatus::Success) break;
    std::swap(a, b);
  }
  return a.x;
}

using odepkg::test::fitted_order;  // (TestProblems.hpp: the least-squares slope of log err on log h)

TEST(NonholonomicRattle, RollingDiskOrderTwoAgainstTheClosedForm) {
  std::vector<double> hs{0.1, 0.05, 0.025, 0.0125}, errs;
  for (double h : hs) {
    HamiltonianProblem P(4, disk_f);
    NonholonomicRattle r(P, 2, disk_A);
    const Vec x = step_n(r, disk_exact(0.0), h, static_cast<int>(std::lround(2.0 / h)));
    errs.push_back((x - disk_exact(2.0)).lpNorm<Eigen::Infinity>());
  }
  EXPECT_NEAR(fitted_order(hs, errs), 2.0, 0.1);
  EXPECT_LT(errs.back(), 1e-3);
}

TEST(NonholonomicRattle, RollingDiskComposedOrdersFourAndSix) {
  for (int p : {4, 6}) {
    std::vector<double> hs{0.2, 0.1, 0.05}, errs;
    for (double h : hs) {
      HamiltonianProblem P(4, disk_f);
      CompositionStepper c(std::make_unique<NonholonomicRattle>(P, 2, disk_A),
                           *composition::recommended_composition(p));
      ASSERT_EQ(c.order(), p);
      const Vec x = step_n(c, disk_exact(0.0), h, static_cast<int>(std::lround(2.0 / h)));
      errs.push_back((x - disk_exact(2.0)).lpNorm<Eigen::Infinity>());
    }
    EXPECT_NEAR(fitted_order(hs, errs), p, 0.4) << "order " << p << ": errors " << errs[0] << " " << errs[1] << " "
                                                << errs[2];
  }
}

TEST(NonholonomicRattle, ContactPointOnTheCircle) {
  // the contact point's distance from the circle's centre stays R w_theta / w_phi
  HamiltonianProblem P(4, disk_f);
  NonholonomicRattle r(P, 2, disk_A);
  const double rho = kR * kWtheta / kWphi;
  const double cx = 0.5 - rho * std::sin(0.2), cy = -0.3 + rho * std::cos(0.2);
  Point a(8), b(8);
  a.set(0.0, disk_exact(0.0));
  double worst = 0.0, worst_av = 0.0;
  Mat A(2, 4);
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(r.step(a, 0.01, b), StepStatus::Success);
    std::swap(a, b);
    worst = std::max(worst, std::abs(std::hypot(a.x(0) - cx, a.x(1) - cy) - rho));
    disk_A(a.x.head(4), A);
    Vec v(4);
    v << a.x(4) / kMass, a.x(5) / kMass, a.x(6) / kI, a.x(7) / kJ;
    worst_av = std::max(worst_av, (A * v).lpNorm<Eigen::Infinity>());
  }
  EXPECT_LT(worst, 1e-4);
  EXPECT_LT(worst_av, 1e-14);
  EXPECT_LT(P.stats().max_nonholonomic_residual, 1e-14);
}

TEST(NonholonomicRattle, SymmetricForwardThenBack) {
  {
    HamiltonianProblem P(3, sleigh_f);
    NonholonomicRattle r(P, 1, sleigh_A);
    const Vec x0 = step_n(r, sleigh_start(), 0.1, 5);  // a state the method reached
    for (double h : {0.1, 0.3}) {
      r.reset();
      const Vec x1 = step_n(r, x0, h, 1);
      r.reset();
      const Vec back = step_n(r, x1, -h, 1);
      EXPECT_LT((back - x0).lpNorm<Eigen::Infinity>(), 1e-14) << "sleigh h = " << h;
      EXPECT_GT((x1 - x0).lpNorm<Eigen::Infinity>(), 1e-2);
    }
  }
  {
    HamiltonianProblem P(3, sphere_f);
    P.set_constraints(1, sphere_g, sphere_G);
    NonholonomicRattle r(P, 1, sphere_A);
    Vec x0(6);
    x0 << 0.6, 0.0, -0.8, 0.0, 0.0, 0.0;
    x0 = step_n(r, x0, 0.05, 10);
    for (double h : {0.05, 0.2}) {
      r.reset();
      const Vec x1 = step_n(r, x0, h, 1);
      r.reset();
      const Vec back = step_n(r, x1, -h, 1);
      EXPECT_LT((back - x0).lpNorm<Eigen::Infinity>(), 1e-14) << "sphere h = " << h;
    }
  }
}

TEST(NonholonomicRattle, ChaplyginSleighEnergyWithoutDrift) {
  HamiltonianProblem P(3, sleigh_f);
  NonholonomicRattle r(P, 1, sleigh_A);
  const Vec x0 = sleigh_start();
  const double E0 = sleigh_energy(x0);
  const int n = 100000;
  Point a(6), b(6);
  a.set(0.0, x0);
  double first = 0.0, second = 0.0, av = 0.0;
  Mat A(1, 3);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(r.step(a, 0.05, b), StepStatus::Success) << i;
    std::swap(a, b);
    const double e = std::abs(sleigh_energy(a.x) - E0);
    (i < n / 2 ? first : second) = std::max(i < n / 2 ? first : second, e);
    sleigh_A(a.x.head(3), A);
    av = std::max(av, std::abs(A(0, 0) * a.x(3) / kSm + A(0, 1) * a.x(4) / kSm + A(0, 2) * a.x(5) / kSI));
  }
  // bounded, O(h^2), and no drift: the second half's deviation is not larger
  EXPECT_LT(first, 1e-2);
  EXPECT_LT(second, 1.5 * first);
  EXPECT_LT(av, 1e-14);
}

TEST(NonholonomicRattle, ContactOscillatorInvariantsBounded) {
  HamiltonianProblem P(3, contact_f);
  NonholonomicRattle r(P, 1, contact_A);
  Vec x0(6);
  // on x' + y z' = 0
  x0 << 0.5, 0.8, -0.4, -0.8 * 0.7, 0.3, 0.7;
  const double E0 = contact_energy(x0), I0 = 0.5 * (x0(1) * x0(1) + x0(4) * x0(4));
  Point a(6), b(6);
  a.set(0.0, x0);
  const int n = 100000;
  double e1 = 0, e2 = 0, i1 = 0, i2 = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(r.step(a, 0.05, b), StepStatus::Success) << i;
    std::swap(a, b);
    const double e = std::abs(contact_energy(a.x) - E0);
    const double in = std::abs(0.5 * (a.x(1) * a.x(1) + a.x(4) * a.x(4)) - I0);
    if (i < n / 2) {
      e1 = std::max(e1, e);
      i1 = std::max(i1, in);
    } else {
      e2 = std::max(e2, e);
      i2 = std::max(i2, in);
    }
    EXPECT_LT(std::abs(a.x(3) + a.x(1) * a.x(5)), 1e-13);
  }
  EXPECT_LT(e1, 1e-2);
  EXPECT_LT(e2, 1.5 * e1 + 1e-12);
  EXPECT_LT(i1, 1e-3);
  EXPECT_LT(i2, 1.5 * i1 + 1e-12);
}

TEST(NonholonomicRattle, MixedHolonomicConstraintsAtRoundoff) {
  HamiltonianProblem P(3, sphere_f);
  P.set_constraints(1, sphere_g, sphere_G);
  NonholonomicRattle r(P, 1, sphere_A);
  Vec x0(6);
  x0 << 0.6, 0.0, -0.8, 0.0, 0.0, 0.0;
  Point a(6), b(6);
  a.set(0.0, x0);
  const double E0 = 0.5 * x0.tail(3).squaredNorm() + x0(2);
  double emax = 0;
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(r.step(a, 0.02, b), StepStatus::Success) << i;
    std::swap(a, b);
    const Vec q = a.x.head(3), v = a.x.tail(3);
    EXPECT_LT(std::abs(q.squaredNorm() - 1.0), 1e-13);
    EXPECT_LT(std::abs(q.dot(v)), 1e-13);
    EXPECT_LT(std::abs(0.3 * v(0) + q(2) * v(1) - q(1) * v(2)), 1e-13);
    emax = std::max(emax, std::abs(0.5 * v.squaredNorm() + q(2) - E0));
  }
  EXPECT_LT(emax, 1e-2);
  EXPECT_GT(P.stats().nonholonomic_evals, 0);
}

TEST(NonholonomicRattle, HolonomicAsVelocityConstraintAgrees) {
  // the disk with a height z (gravity) held at z = 0: holonomic g = z with the two rolling
  // constraints, or the three constraints as velocity constraints: the same steps
  const auto f5 = [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(5) = x.tail(5);
    dx.tail(5).setZero();
    dx(7) = -9.81;
  };
  const auto A2 = [](const ConstVecRef& q, MatRef A) {
    A << 1, 0, 0, 0, -kR * std::cos(q(3)), 0, 1, 0, 0, -kR * std::sin(q(3));
  };
  const auto A3 = [](const ConstVecRef& q, MatRef A) {
    A << 1, 0, 0, 0, -kR * std::cos(q(3)), 0, 1, 0, 0, -kR * std::sin(q(3)), 0, 0, 1, 0, 0;
  };
  Vec x0(10);
  x0 << 0, 0, 0, 0.2, 0, kR * std::cos(0.2) * 1.5, kR * std::sin(0.2) * 1.5, 0, 0.9, 1.5;
  HamiltonianProblem P1(5, f5), P2(5, f5);
  P1.set_constraints(
      1, [](const ConstVecRef& q, VecRef g) { g(0) = q(2); },
      [](const ConstVecRef&, MatRef G) { G << 0, 0, 1, 0, 0; });
  NonholonomicRattle r1(P1, 2, A2), r2(P2, 3, A3);
  const Vec a = step_n(r1, x0, 0.05, 200), b = step_n(r2, x0, 0.05, 200);
  EXPECT_LT((a - b).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_LT(std::abs(a(2)), 1e-15);
}

TEST(NonholonomicRattle, StepsDoNotAllocate) {
  HamiltonianProblem P(3, sphere_f);
  P.set_constraints(1, sphere_g, sphere_G);
  NonholonomicRattle r(P, 1, sphere_A);
  Point a(6), b(6);
  Vec x0(6);
  x0 << 0.6, 0.0, -0.8, 0.0, 0.0, 0.0;
  a.set(0.0, x0);
  for (int i = 0; i < 20; ++i) {  // past the learning of the quadratic T
    ASSERT_EQ(r.step(a, 0.02, b), StepStatus::Success);
    std::swap(a, b);
  }
  Eigen::internal::set_is_malloc_allowed(false);
  StepStatus s = StepStatus::Success;
  for (int i = 0; i < 20 && s == StepStatus::Success; ++i) {
    s = r.step(a, 0.02, b);
    std::swap(a, b);
  }
  Eigen::internal::set_is_malloc_allowed(true);
  EXPECT_EQ(s, StepStatus::Success);
}

TEST(NonholonomicRattle, AdaptiveRunThroughTheIntegrator) {
  // step doubling on the disk: the closed form to the tolerance, |A v| at round-off
  HamiltonianProblem P(4, disk_f);
  NonholonomicRattle r(P, 2, disk_A);
  IntegratorOptions io;
  io.norm.rel_tol = 1e-8;
  io.norm.abs_tol = Vec::Constant(1, 1e-10);
  Integrator integ(r, io);
  struct Last : Observer {
    Vec x;
    bool operator()(double, const Vec& y) override {
      x = y;
      return true;
    }
  } last;
  Vec times(2);
  times << 0.0, 2.0;
  const IntegrationResult res = integ.run(times, disk_exact(0.0), last);
  ASSERT_NE(res.outcome, IntegrationResult::Outcome::Failed) << res.message;
  EXPECT_LT((last.x - disk_exact(2.0)).lpNorm<Eigen::Infinity>(), 1e-5);
  EXPECT_LT(P.stats().max_nonholonomic_residual, 1e-14);
}

TEST(NonholonomicRattle, NonQuadraticKineticEnergy) {
  // the sleigh with T = sqrt(1 + |p|^2) (no affine velocity model: T_p from f, iterated):
  // symmetric, A T_p(p) = 0 at round-off
  const auto rel = [](double, const ConstVecRef& x, VecRef dx) {
    const double g = std::sqrt(1.0 + x.tail(3).squaredNorm());
    dx.head(3) = x.tail(3) / g;
    dx(3) = -x(0);
    dx(4) = -x(1);
    dx(5) = 0.0;
  };
  HamiltonianProblem P(3, rel);
  NonholonomicRattle r(P, 1, sleigh_A);
  Vec x0 = sleigh_start();
  ASSERT_LT(r.project_initial(0.0, x0).after, 1e-13);
  x0 = step_n(r, x0, 0.1, 30);
  Vec f(6);
  rel(0.0, x0, f);
  Mat A(1, 3);
  sleigh_A(x0.head(3), A);
  EXPECT_LT(std::abs((A * f.head(3))(0)), 1e-14);
  r.reset();
  const Vec x1 = step_n(r, x0, 0.2, 1);
  r.reset();
  EXPECT_LT((step_n(r, x1, -0.2, 1) - x0).lpNorm<Eigen::Infinity>(), 1e-14);
}

TEST(NonholonomicRattle, RefusesANonSeparableH) {
  const auto nonsep = [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(3) = (1 + x(0) * x(0)) * x.tail(3);
    dx.tail(3).setZero();
    dx(3) = -x(0) * x.tail(3).squaredNorm();
  };
  HamiltonianProblem P(3, nonsep);
  NonholonomicRattle r(P, 1, sleigh_A);
  Vec x = sleigh_start(), f(6);
  nonsep(0.0, x, f);
  EXPECT_THROW(r.check_claims(0.0, x, f), InputError);
}

TEST(NonholonomicRattle, ProjectsInitialVelocities) {
  HamiltonianProblem P(3, sleigh_f);
  NonholonomicRattle r(P, 1, sleigh_A);
  Vec x = sleigh_start();
  x(3) += 0.1;
  const auto pr = r.project_initial(0.0, x);
  EXPECT_GT(pr.before, 0.01);
  EXPECT_LT(pr.after, 1e-15);
  EXPECT_TRUE(pr.converged);
}

}  // namespace
