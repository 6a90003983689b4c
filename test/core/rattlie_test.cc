// rattlie_test.cc — RATTLie (RATTLE on Lie groups, S. Hante): classical RATTLE
// as the case G = Rⁿ, the free rigid body's invariants, SO(3) against S³,
// the heavy top's order, constraints at round-off, velocity-dependent forces,
// and no allocation per step.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included

#include "EigenConfig.hpp"
#include <Eigen/Geometry>

#include "loop/Integrator.hpp"
#include "constrained/Rattle.hpp"
#include "FixedSteps.hpp"
#include "LieTestProblems.hpp"
#include "TestProblems.hpp"
#include "lie/LieGroupFactory.hpp"
#include "lie/RattLie.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace odepkg;
using namespace odepkg::lie;

namespace {

using test::HeavyTop;
using test::quat_to_rot;
using test::skew;

using RunResult = test::IntegratedRun;

RunResult run_fixed(LieGroupProblem& lp, const Vec& y0, double h, long steps) {
  RattLie stepper(lp, NewtonOptions());
  return test::integrate_fixed(lp, stepper, y0, h, steps);
}

// Unconstrained heavy top about the fixed point on SO(3) or S³.
LieGroupProblem heavy_rot(const HeavyTop& top, const std::string& group) {
  const bool quat = group == "S3";
  return LieGroupProblem(make_lie_group(group, quat ? 7 : 12), top.J(),
                         [top, quat](double, const ConstVecRef& y, VecRef f) {
                           const Mat R = quat ? quat_to_rot(y.head(4)) : Mat(Eigen::Map<const Mat>(y.data(), 3, 3));
                           f = top.f_rot(R);
                         });
}

Vec heavy_rot_y0(const HeavyTop& top, const std::string& group) {
  if (group == "S3") {
    Vec y(7);
    y << 1, 0, 0, 0, top.omega0;
    return y;
  }
  Vec y(12);
  y.head(9) = Eigen::Map<const Vec>(Mat::Identity(3, 3).eval().data(), 9);
  y.tail(3) = top.omega0;
  return y;
}

}  // namespace

TEST(RattLie, RnIsClassicalRattleOnThePendulum) {
  // Cartesian pendulum H = |p|²/2 + q2, g(q) = (|q|² − 1)/2: odeRATTLE's
  // classical RATTLE on [q; p] and RATTLie on G = R² with M = I, f = ∇U.
  HamiltonianProblem hp(2, [](double, const ConstVecRef& x, VecRef dx) {
    dx << x(2), x(3), 0.0, -1.0;
  });
  hp.set_constraints(
      1, [](const ConstVecRef& q, VecRef g) { g(0) = 0.5 * (q.squaredNorm() - 1.0); },
      [](const ConstVecRef& q, MatRef G) { G = q.transpose(); });
  LieGroupProblem lp(make_lie_group("Rn", 4), Mat::Identity(2, 2),
                     [](double, const ConstVecRef&, VecRef f) { f << 0.0, 1.0; });
  lp.set_constraints(
      1, [](const ConstVecRef& q, VecRef g) { g(0) = 0.5 * (q.squaredNorm() - 1.0); },
      [](const ConstVecRef& q, MatRef B) { B = q.transpose(); });
  Vec y0(4);
  y0 << std::sin(1.0), -std::cos(1.0), 0.3 * std::cos(1.0), 0.3 * std::sin(1.0);
  const double h = 0.01;
  const long N = 2000;
  Rattle classical(hp, true);
  IntegratorOptions io;
  io.fixed_step = h;
  Integrator ic(classical, io);
  test::Recorder rc;
  Vec times(2);
  times << 0.0, h * N;
  ic.run(times, y0, rc);
  const RunResult r = run_fixed(lp, y0, h, N);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.y.size(), rc.x.size());
  double diff = 0.0;
  for (std::size_t k = 0; k < r.y.size(); ++k) diff = std::max(diff, (r.y[k] - rc.x[k]).lpNorm<Eigen::Infinity>());
  // Both solve the same equations to round-off; 2000 steps of a chaotic-free
  // map let round-off grow at most linearly.
  EXPECT_LT(diff, 1e-11);
  EXPECT_LT(r.stats.max_constraint_residual, 1e-14);
  EXPECT_LT(r.stats.max_hidden_residual, 1e-14);
  // one f and one B per step (+ the start and the velocity re-checks)
  EXPECT_LE(r.stats.field_evals, N + N / RattLie::kVelocityRecheck + 3);
  std::printf("pendulum: %.2f Phi, %.2f B per step\n", double(r.stats.constraint_evals) / N,
              double(r.stats.constraint_grad_evals) / N);
  EXPECT_LE(r.stats.constraint_grad_evals + r.stats.constraint_evals, 5 * N);
}

TEST(RattLie, FreeRigidBodyKeepsMomentumNormAndOrthogonality) {
  const Mat J = Eigen::Vector3d(1, 2, 3).asDiagonal();
  LieGroupProblem lp(make_lie_group("SO3", 12), J, [](double, const ConstVecRef&, VecRef f) { f.setZero(); });
  Vec y0(12);
  y0.head(9) = Eigen::Map<const Vec>(Mat::Identity(3, 3).eval().data(), 9);
  y0.tail(3) << 1.0, 0.1, 0.5;
  const RunResult r = run_fixed(lp, y0, 0.01, 20000);
  ASSERT_TRUE(r.ok);
  const double L0 = (J * y0.tail(3)).norm(), E0 = 0.5 * y0.tail(3).dot(J * y0.tail(3));
  double dL = 0, dE = 0, orth = 0;
  for (const Vec& y : r.y) {
    const Vec w = y.tail(3);
    dL = std::max(dL, std::abs((J * w).norm() - L0));
    dE = std::max(dE, std::abs(0.5 * w.dot(J * w) - E0));
    const Mat R = Eigen::Map<const Mat>(y.data(), 3, 3);
    orth = std::max(orth, (R.transpose() * R - Mat::Identity(3, 3)).norm());
  }
  EXPECT_LT(dL, 1e-12 * L0);   // spatial momentum R J Ω is a discrete Noether invariant
  EXPECT_LT(dE, 1e-3 * E0);    // bounded (symplectic), O(h²)
  EXPECT_LT(orth, 1e-13);      // products of exponentials, no renormalisation
  // no user callbacks in the unconstrained Newton: one f per step
  EXPECT_LE(r.stats.field_evals, 20000 + 20000 / RattLie::kVelocityRecheck + 3);
}

TEST(RattLie, HeavyTopOnSO3AndS3AreTheSameMap) {
  // Same algebra, same exp: R(p_n) = R_n in exact arithmetic.
  const HeavyTop top(true);
  LieGroupProblem a = heavy_rot(top, "SO3"), b = heavy_rot(top, "S3");
  const double h = std::ldexp(1.0, -10);
  const RunResult ra = run_fixed(a, heavy_rot_y0(top, "SO3"), h, 1024);
  const RunResult rb = run_fixed(b, heavy_rot_y0(top, "S3"), h, 1024);
  ASSERT_TRUE(ra.ok && rb.ok);
  const Mat Ra = Eigen::Map<const Mat>(ra.y.back().data(), 3, 3);
  const Mat Rb = quat_to_rot(rb.y.back().head(4));
  EXPECT_LT((Ra - Rb).norm(), 1e-10);
  EXPECT_LT((ra.y.back().tail(3) - rb.y.back().tail(3)).norm(), 1e-8 * top.omega0.norm());
  EXPECT_LT(std::abs(rb.y.back().head(4).norm() - 1.0), 1e-14);
}

TEST(RattLie, HeavyTopOrderTwoAndBoundedEnergy) {
  const HeavyTop top(false);
  const double T = 1.0;
  auto final_state = [&](double h) {
    LieGroupProblem lp = heavy_rot(top, "SO3");
    const RunResult r = run_fixed(lp, heavy_rot_y0(top, "SO3"), h, std::lround(T / h));
    EXPECT_TRUE(r.ok);
    return r.y.back();
  };
  const Vec ref = final_state(std::ldexp(1.0, -13));
  std::vector<double> hs, errs;
  for (int k = 6; k <= 9; ++k) {
    const double h = std::ldexp(1.0, -k);
    hs.push_back(h);
    errs.push_back((final_state(h) - ref).norm());
  }
  const double p = test::fitted_order(hs, errs);
  EXPECT_NEAR(p, 2.0, 0.15);
  // energy over 1e5 steps of h = 2^-10: bounded, no drift
  LieGroupProblem lp = heavy_rot(top, "SO3");
  const double h = std::ldexp(1.0, -10);
  const RunResult r = run_fixed(lp, heavy_rot_y0(top, "SO3"), h, 100000);
  ASSERT_TRUE(r.ok);
  auto energy = [&](const Vec& y) {
    return top.energy_rot(Eigen::Map<const Mat>(y.data(), 3, 3), y.tail(3));
  };
  const double E0 = energy(r.y.front());
  double first = 0, last = 0;
  const std::size_t K = r.y.size();
  for (std::size_t k = 0; k < K; ++k) {
    const double e = std::abs(energy(r.y[k]) - E0);
    if (k < K / 10) first = std::max(first, e);
    if (k >= K - K / 10) last = std::max(last, e);
  }
  // bounded O(h²) error (2.6e-4 measured against the potential's scale
  // m g |X| = 147), and no drift: the last tenth no worse than the first
  EXPECT_LT(first, 1e-5 * top.mass * 9.81);
  EXPECT_LT(last, 2.0 * first);
}

TEST(RattLie, ConstrainedHeavyTopOnS3xR3) {
  // q = [p; x], v = [Ω; ẋ], M = blkdiag(Jc, m I), Φ = x − R(p) X,
  // B = [R X̂, I] (d/dε of −R exp(εΩ̂) X = R X̂ Ω).
  const HeavyTop top(true);
  Mat M = Mat::Zero(6, 6);
  M.topLeftCorner(3, 3) = top.Jc;
  M.bottomRightCorner(3, 3) = top.mass * Mat::Identity(3, 3);
  LieGroupProblem lp(make_lie_group("S3xR3", 13), M, [top](double, const ConstVecRef&, VecRef f) {
    f.head(3).setZero();
    f.tail(3) = -top.mass * top.gvec;
  });
  lp.set_constraints(
      3,
      [top](const ConstVecRef& q, VecRef phi) { phi = q.tail(3) - quat_to_rot(q.head(4)) * top.X; },
      [top](const ConstVecRef& q, MatRef B) {
        B.leftCols(3) = quat_to_rot(q.head(4)) * skew(top.X);
        B.rightCols(3).setIdentity();
      });
  Vec y0(13);
  y0 << 1, 0, 0, 0, top.X, top.omega0, top.omega0.cross(top.X);
  const double h = std::ldexp(1.0, -10);
  const RunResult r = run_fixed(lp, y0, h, 2048);
  ASSERT_TRUE(r.ok);
  double phi = 0, hidden = 0;
  for (const Vec& y : r.y) {
    const Mat R = quat_to_rot(y.head(4));
    phi = std::max(phi, (y.segment(4, 3) - R * top.X).lpNorm<Eigen::Infinity>());
    Mat B(3, 6);
    B.leftCols(3) = R * skew(top.X);
    B.rightCols(3).setIdentity();
    hidden = std::max(hidden, (B * y.tail(6)).lpNorm<Eigen::Infinity>());
  }
  EXPECT_LT(phi, 1e-14);
  EXPECT_LT(hidden, 1e-11);  // |v| = 150: a few eps |B| |v|
  const double per_step = double(r.stats.constraint_evals) / 2048;
  std::printf("S3xR3 fast top: %.2f Phi, %.2f B, %.2f f, %.2f Newton it per step, max %ld\n", per_step,
              double(r.stats.constraint_grad_evals) / 2048, double(r.stats.field_evals) / 2048,
              double(r.stats.newton_iterations) / 2048, r.stats.newton_max_iterations);
  EXPECT_LE(per_step, 4.0);
}

TEST(RattLie, ConstrainedAndUnconstrainedHeavyTopAgreeAsHShrinks) {
  // S3xR3 with Φ = x − R X and the rotation about the support on S3 are two
  // different order-2 methods for one motion: their difference at t = 1/4
  // falls as h² (fitted).
  const HeavyTop top(true);
  Mat M = Mat::Zero(6, 6);
  M.topLeftCorner(3, 3) = top.Jc;
  M.bottomRightCorner(3, 3) = top.mass * Mat::Identity(3, 3);
  std::vector<double> hs, ds;
  for (int k = 10; k <= 12; ++k) {
    const double h = std::ldexp(1.0, -k);
    const long N = std::lround(0.25 / h);
    LieGroupProblem lp(make_lie_group("S3xR3", 13), M, [top](double, const ConstVecRef&, VecRef f) {
      f.head(3).setZero();
      f.tail(3) = -top.mass * top.gvec;
    });
    lp.set_constraints(3, [top](const ConstVecRef& q, VecRef phi) {
      phi = q.tail(3) - quat_to_rot(q.head(4)) * top.X;
    });  // B by central differences along the group
    Vec y0(13);
    y0 << 1, 0, 0, 0, top.X, top.omega0, top.omega0.cross(top.X);
    const RunResult r = run_fixed(lp, y0, h, N);
    LieGroupProblem rot = heavy_rot(top, "S3");
    const RunResult u = run_fixed(rot, heavy_rot_y0(top, "S3"), h, N);
    ASSERT_TRUE(r.ok && u.ok);
    hs.push_back(h);
    ds.push_back((quat_to_rot(r.y.back().head(4)) - quat_to_rot(u.y.back().head(4))).norm());
  }
  EXPECT_NEAR(test::fitted_order(hs, ds), 2.0, 0.15);
}

TEST(RattLie, VelocityDependentForceIsDetectedAndSolvedByNewton) {
  // Damped rotation on R^1 x... : q'' = −q − c q' (f = q + c v), exact solution known.
  const double c = 0.5;
  LieGroupProblem lp(make_lie_group("Rn", 2), Mat::Identity(1, 1),
                     [c](double, const ConstVecRef& y, VecRef f) { f(0) = y(0) + c * y(1); });
  Vec y0(2);
  y0 << 1.0, 0.0;
  const double wd = std::sqrt(1 - c * c / 4);
  auto exact = [&](double t) { return std::exp(-c * t / 2) * (std::cos(wd * t) + c / (2 * wd) * std::sin(wd * t)); };
  std::vector<double> hs, errs;
  for (int k = 4; k <= 7; ++k) {
    LieGroupProblem p(make_lie_group("Rn", 2), Mat::Identity(1, 1),
                      [c](double, const ConstVecRef& y, VecRef f) { f(0) = y(0) + c * y(1); });
    const double h = std::ldexp(1.0, -k);
    RattLie st(p, NewtonOptions());
    IntegratorOptions io;
    io.fixed_step = h;
    Integrator integ(st, io);
    test::Recorder rec;
    Vec times(2);
    times << 0.0, 2.0;
    integ.run(times, y0, rec);
    EXPECT_TRUE(st.velocity_dependent());
    hs.push_back(h);
    errs.push_back(std::abs(rec.x.back()(0) - exact(2.0)));
  }
  EXPECT_NEAR(test::fitted_order(hs, errs), 2.0, 0.1);
}

TEST(RattLie, StepsDoNotAllocate) {
  const HeavyTop top(false);
  Mat M = Mat::Zero(6, 6);
  M.topLeftCorner(3, 3) = top.Jc;
  M.bottomRightCorner(3, 3) = top.mass * Mat::Identity(3, 3);
  // captureless callbacks: nothing in them allocates
  LieGroupProblem lp(make_lie_group("S3xR3", 13), M, [](double, const ConstVecRef&, VecRef f) {
    f << 0, 0, 0, 0, 0, 15.0 * 9.81;
  });
  lp.set_constraints(
      3,
      [](const ConstVecRef& q, VecRef phi) {
        const double a = q(0), b = q(1), c = q(2), d = q(3);  // R(p) e_y
        phi(0) = q(4) - 2 * (b * c - a * d);
        phi(1) = q(5) - (a * a - b * b + c * c - d * d);
        phi(2) = q(6) - 2 * (c * d + a * b);
      },
      nullptr);  // B by differences along the group: allocation-free too
  Vec y0(13);
  y0 << 1, 0, 0, 0, 0, 1, 0, top.omega0, top.omega0.cross(top.X);
  RattLie st(lp, NewtonOptions());
  Point a(13), b(13);
  a.set(0.0, y0);
  const double h = 1e-3;
  ASSERT_EQ(st.step(a, h, b), StepStatus::Success);
  std::swap(a, b);
  Eigen::internal::set_is_malloc_allowed(false);
  StepStatus s = StepStatus::Success;
  for (int k = 0; k < 40 && s == StepStatus::Success; ++k) {
    s = st.step(a, h, b);
    std::swap(a, b);
  }
  Eigen::internal::set_is_malloc_allowed(true);
  EXPECT_EQ(s, StepStatus::Success);
}
