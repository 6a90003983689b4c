// nonholonomic_rattlie_test.cc — the nonholonomic RATTLie (NonholonomicRattLie.hpp)
// on the rolling disk of Hante's rolling_disk on S³⋉R³ (mass 15, radius 1,
// J = diag(m/4, m/4, m/2), Ω0 = (0, 15, 5)), with its three contact
// conditions as velocity constraints, and with the vertical one as the
// holonomic Φ = z − r sqrt(1 − R33²) and the two others as velocity
// constraints.  Independent expectations: order 2 (and 4 composed) fitted
// against a fine reference, the energy ½ vᵀMv + m g z bounded without drift,
// the constraints at round-off, forward-then-back to round-off, the velocity
// form of the holonomic constraint O(h²) from the holonomic run, the Stats
// counting every call (and the calls the scheme needs, no more), and steps
// without heap allocation.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included (EigenConfig.hpp)

#include "EigenConfig.hpp"
#include "TestProblems.hpp"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"
#include "lie/LieGroupFactory.hpp"
#include "lie/LieGroupProblem.hpp"
#include "lie/NonholonomicRattLie.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

using namespace odepkg;
using namespace odepkg::lie;

namespace {

using M3 = Eigen::Matrix3d;
using V3 = Eigen::Vector3d;

constexpr double kMass = 15.0, kRadius = 1.0, kGravity = 9.81;

M3 hat(const V3& a) {
  M3 s;
  s << 0, -a(2), a(1), a(2), 0, -a(0), -a(1), a(0), 0;
  return s;
}

/// R(p) of the quaternion p = q(0:3) (scalar first).
M3 rotation(const ConstVecRef& q) {
  const double a = q(0), b = q(1), c = q(2), d = q(3);
  M3 R;
  R << a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c), 2 * (b * c + a * d),
      a * a - b * b + c * c - d * d, 2 * (c * d - a * b), 2 * (b * d - a * c), 2 * (c * d + a * b),
      a * a - b * b - c * c + d * d;
  return R;
}

/// The unit vector, in the body frame, from the centre down the disk's plane
/// to the contact point: the body-frame vertical projected on the plane.
V3 down(const M3& R) {
  return (-R.row(2).transpose() + R(2, 2) * V3::UnitZ()) / std::sqrt(1.0 - R(2, 2) * R(2, 2));
}

/// Calls of each callback, counted by the callbacks themselves.
struct Calls {
  long f = 0, Bnh = 0, phi = 0, B = 0;
};

/// The rolling disk: q = [p; x], v = [Ω; U] (body frame, ẋ = R U), the
/// contact point's velocity R(U + Ω × r·down) = 0.  `mixed`: its vertical
/// row as the derivative of Φ, the two horizontal rows as B_nh.
struct Disk {
  std::unique_ptr<LieGroupProblem> lp;
  NonholonomicRattLie::VelocityConstraint Bnh;
  int k = 3;
  Calls* calls;

  Disk(bool mixed, Calls* c) : calls(c) {
    Mat M = Mat::Zero(6, 6);
    M.diagonal() << kMass / 4, kMass / 4, kMass / 2, kMass, kMass, kMass;
    lp = std::make_unique<LieGroupProblem>(make_lie_group("S3sdR3", 13), M,
                                           [c](double, const ConstVecRef& y, VecRef f) {
                                             ++c->f;
                                             f.head(3).setZero();
                                             f.tail(3) = kMass * kGravity * rotation(y).row(2).transpose();
                                           });
    if (!mixed) {
      Bnh = [c](const ConstVecRef& q, MatRef A) {
        ++c->Bnh;
        A.leftCols(3) = -kRadius * hat(down(rotation(q)));
        A.rightCols(3).setIdentity();
      };
      return;
    }
    k = 2;
    Bnh = [c](const ConstVecRef& q, MatRef A) {
      ++c->Bnh;
      const M3 R = rotation(q);
      A.leftCols(3) = (R * (-kRadius * hat(down(R)))).topRows(2);
      A.rightCols(3) = R.topRows(2);
    };
    lp->set_constraints(
        1,
        [c](const ConstVecRef& q, VecRef phi) {
          ++c->phi;
          const double r33 = rotation(q)(2, 2);
          phi(0) = q(6) - kRadius * std::sqrt(1.0 - r33 * r33);
        },
        [c](const ConstVecRef& q, MatRef B) {
          ++c->B;
          const M3 R = rotation(q);
          B.leftCols(3) = (R * (-kRadius * hat(down(R)))).row(2);
          B.rightCols(3) = R.row(2);
        });
  }

  std::unique_ptr<Stepper> stepper(int order = 2) {
    auto base = std::make_unique<NonholonomicRattLie>(*lp, k, Bnh);
    if (order == 2) return base;
    return std::make_unique<CompositionStepper>(std::move(base), *composition::recommended_composition(order));
  }
};

Vec disk_y0() {
  const V3 Om(0, 15, 5);
  Vec y(13);
  y << 0.5, 0.5, 0.5, 0.5, 0, 0, kRadius, Om, kRadius * hat(-V3::UnitY()) * Om;  // R0 = [e_y, e_z, e_x]
  return y;
}

double energy(const Vec& y) {
  const auto v = y.tail(6);
  return 0.5 * (kMass / 4 * (v(0) * v(0) + v(1) * v(1)) + kMass / 2 * v(2) * v(2) + kMass * v.tail(3).squaredNorm()) +
         kMass * kGravity * y(6);
}

/// n steps of h from (t, y) along one chain (the stepper's warm starts), each
/// end passed to `each`.
Vec run(Stepper& s, const Vec& y, double h, long n, double t = 0.0,
        const std::function<void(double, const Vec&)>& each = nullptr) {
  Point a(13), b(13);
  a.set(t, y);
  for (long i = 0; i < n; ++i) {
    const StepStatus st = s.step(a, h, b);
    EXPECT_EQ(st, StepStatus::Success) << "step " << i << " of h = " << h;
    if (st != StepStatus::Success) break;
    std::swap(a, b);
    if (each) each(a.t, a.x);
  }
  return a.x;
}

using odepkg::test::fitted_order;  // (TestProblems.hpp: the least-squares slope of log err on log h)

double max_abs(const Vec& v) { return v.lpNorm<Eigen::Infinity>(); }

TEST(NonholonomicRattLie, RollingDiskOrderTwoAgainstAFineReference) {
  for (bool mixed : {false, true}) {
    Calls c;
    Disk ref_disk(mixed, &c);
    // the reference: the composed order 6 at h = 2^-10 (its error ~1e-9)
    const Vec ref = run(*ref_disk.stepper(6), disk_y0(), std::ldexp(1.0, -10), 2048);
    std::vector<double> hs, errs;
    for (int e = 7; e <= 9; ++e) {
      Disk d(mixed, &c);
      const double h = std::ldexp(1.0, -e);
      hs.push_back(h);
      errs.push_back(max_abs(run(*d.stepper(), disk_y0(), h, std::lround(2.0 / h)) - ref));
    }
    EXPECT_NEAR(fitted_order(hs, errs), 2.0, 0.1)
        << (mixed ? "mixed" : "nh3") << ": errors " << errs[0] << " " << errs[1] << " " << errs[2];
  }
}

TEST(NonholonomicRattLie, RollingDiskComposedOrderFour) {
  for (bool mixed : {false, true}) {
    Calls c;
    Disk ref_disk(mixed, &c);
    const Vec ref = run(*ref_disk.stepper(6), disk_y0(), std::ldexp(1.0, -10), 2048);
    std::vector<double> hs, errs;
    for (int e = 6; e <= 8; ++e) {
      Disk d(mixed, &c);
      const double h = std::ldexp(1.0, -e);
      hs.push_back(h);
      errs.push_back(max_abs(run(*d.stepper(4), disk_y0(), h, std::lround(2.0 / h)) - ref));
    }
    EXPECT_NEAR(fitted_order(hs, errs), 4.0, 0.4)
        << (mixed ? "mixed" : "nh3") << ": errors " << errs[0] << " " << errs[1] << " " << errs[2];
  }
}

TEST(NonholonomicRattLie, ConstraintsAtRoundoffAndEnergyWithoutDrift) {
  // 40 time units (20 times the span of the order tests) at h = 2^-7
  for (bool mixed : {false, true}) {
    Calls c;
    Disk d(mixed, &c);
    const Vec y0 = disk_y0();
    const double E0 = energy(y0);
    double early = 0.0, all = 0.0, av = 0.0, phi = 0.0, bv = 0.0, unit = 0.0;
    Mat A(d.k, 6), B(1, 6);
    Vec g(1);
    run(*d.stepper(), y0, std::ldexp(1.0, -7), 5120, 0.0, [&](double t, const Vec& y) {
      const double e = std::abs(energy(y) - E0);
      all = std::max(all, e);
      if (t <= 2.0) early = std::max(early, e);
      d.Bnh(y.head(7), A);
      av = std::max(av, max_abs(A * y.tail(6)));
      unit = std::max(unit, std::abs(y.head(4).norm() - 1.0));
      if (mixed) {
        d.lp->constraint(y.head(7), g);
        d.lp->constraint_grad(y.head(7), B);
        phi = std::max(phi, std::abs(g(0)));
        bv = std::max(bv, max_abs(B * y.tail(6)));
      }
    });
    const char* which = mixed ? "mixed" : "nh3";
    EXPECT_LT(av, 1e-13) << which;
    EXPECT_LT(unit, 1e-14) << which;
    EXPECT_LT(phi, 1e-14) << which;
    EXPECT_LT(bv, 1e-13) << which;
    EXPECT_LT(d.lp->stats().max_nonholonomic_residual, 1e-13) << which;
    EXPECT_LT(early / E0, 3e-3) << which;
    EXPECT_LT(all, 1.2 * early) << which << ": no drift over 20 times the span";
  }
}

TEST(NonholonomicRattLie, SymmetricForwardThenBack) {
  for (bool mixed : {false, true}) {
    Calls c;
    Disk d(mixed, &c);
    auto s = d.stepper();
    const Vec y0 = run(*s, disk_y0(), std::ldexp(1.0, -7), 20);  // a state the method reached
    for (double h : {std::ldexp(1.0, -7), std::ldexp(1.0, -5)}) {
      s->reset();
      const Vec y1 = run(*s, y0, h, 1);
      s->reset();
      const Vec back = run(*s, y1, -h, 1);
      EXPECT_GT(max_abs(y1 - y0), 1e-2);
      EXPECT_LT(max_abs(back - y0), 2e-14 * max_abs(y0)) << (mixed ? "mixed" : "nh3") << " h = " << h;
    }
    // 64 steps forward, then back along the same chain (its warm starts)
    const double h = std::ldexp(1.0, -7);
    const Vec y1 = run(*s, y0, h, 64);
    const Vec back = run(*s, y1, -h, 64, 64 * h);
    EXPECT_LT(max_abs(back - y0), 1e-12 * max_abs(y0)) << (mixed ? "mixed" : "nh3") << " 64 steps";
  }
}

TEST(NonholonomicRattLie, HolonomicAsVelocityConstraintAgrees) {
  // Φ = 0 imposed as its derivative (nh3) or as Φ (mixed): two second-order
  // approximations of one solution, O(h²) apart
  std::vector<double> diff;
  for (int e = 7; e <= 8; ++e) {
    const double h = std::ldexp(1.0, -e);
    Calls c;
    Disk d3(false, &c), dm(true, &c);
    const long n = std::lround(2.0 / h);
    diff.push_back(max_abs(run(*d3.stepper(), disk_y0(), h, n) - run(*dm.stepper(), disk_y0(), h, n)));
  }
  EXPECT_GT(diff[0] / diff[1], 3.5) << diff[0] << " " << diff[1];
  EXPECT_LT(diff[0] / diff[1], 4.5) << diff[0] << " " << diff[1];
}

TEST(NonholonomicRattLie, StatsCountEveryCall) {
  // the callbacks' own counts against Stats, and the calls the scheme makes:
  // C(q_0) once, then per (sub)step B_nh(q_{n+1/2}) and Φ once per Newton
  // iteration, B(q_{n+1}) at the first iterate, C(q_{n+1}) once; the
  // multipliers at the last step's end reuse its f and C (2 calls of C for Z)
  for (bool mixed : {false, true}) {
    for (int order : {2, 4}) {
      Calls c;
      Disk d(mixed, &c);
      auto s = d.stepper(order);
      const long n = 128, substeps = n * (order == 2 ? 1 : composition::recommended_composition(order)->stages);
      const double h = std::ldexp(1.0, -7);
      const Vec y = run(*s, disk_y0(), h, n);
      auto* nh = dynamic_cast<NonholonomicRattLie*>(order == 2 ? s.get()
                                                               : &dynamic_cast<CompositionStepper&>(*s).base());
      ASSERT_NE(nh, nullptr);
      Vec l(d.k + (mixed ? 1 : 0));
      ASSERT_TRUE(nh->multipliers(n * h, y, l));
      const Stats& st = d.lp->stats();
      const char* which = mixed ? "mixed" : "nh3";
      EXPECT_EQ(st.field_evals, c.f) << which << " order " << order;
      EXPECT_EQ(st.nonholonomic_evals, c.Bnh) << which << " order " << order;
      EXPECT_EQ(st.constraint_evals, c.phi) << which << " order " << order;
      EXPECT_EQ(st.constraint_grad_evals, c.B) << which << " order " << order;
      ASSERT_EQ(st.newton_retries, 0);
      EXPECT_EQ(c.Bnh, 1 + st.newton_iterations + substeps + 2) << which << " order " << order;
      EXPECT_EQ(c.phi, mixed ? st.newton_iterations : 0) << which << " order " << order;
      EXPECT_EQ(c.B, mixed ? 1 + 2 * substeps + 2 : 0) << which << " order " << order;
      // f: once at the start, once per substep, and the probe of its
      // dependence on v (first substep, then every 16th)
      EXPECT_LE(c.f, 1 + substeps + 1 + substeps / NonholonomicRattLie::kVelocityRecheck) << which;
      EXPECT_GE(c.f, 1 + substeps) << which;
    }
  }
}

TEST(NonholonomicRattLie, MultipliersAtTheStepsEndReuseItsCalls) {
  for (bool mixed : {false, true}) {
    Calls c;
    Disk d(mixed, &c);
    NonholonomicRattLie s(*d.lp, d.k, d.Bnh), fresh(*d.lp, d.k, d.Bnh);
    const double h = std::ldexp(1.0, -7);
    const Vec y = run(s, disk_y0(), h, 40);
    const int nl = d.k + (mixed ? 1 : 0);
    Vec at_end(nl), cold(nl);
    const Calls before = c;
    ASSERT_TRUE(s.multipliers(40 * h, y, at_end));
    EXPECT_EQ(c.f - before.f, 0);
    EXPECT_EQ(c.Bnh - before.Bnh, 2);
    const Calls mid = c;
    ASSERT_TRUE(fresh.multipliers(40 * h, y, cold));
    EXPECT_EQ(c.f - mid.f, 1);
    EXPECT_EQ(c.Bnh - mid.Bnh, 3);
    EXPECT_LT(max_abs(at_end - cold), 1e-12 * max_abs(cold)) << (mixed ? "mixed" : "nh3");
    EXPECT_GT(max_abs(cold), 1.0);  // the contact forces of the spinning disk
  }
}

TEST(NonholonomicRattLie, StepsDoNotAllocate) {
  for (bool mixed : {false, true}) {
    Calls c;
    Disk d(mixed, &c);
    NonholonomicRattLie s(*d.lp, d.k, d.Bnh);
    Point a(13), b(13);
    a.set(0.0, disk_y0());
    const double h = std::ldexp(1.0, -7);
    for (int i = 0; i < 20; ++i) {  // past the probe of f's velocity dependence
      ASSERT_EQ(s.step(a, h, b), StepStatus::Success);
      std::swap(a, b);
    }
    Vec l(d.k + (mixed ? 1 : 0));
    Eigen::internal::set_is_malloc_allowed(false);
    StepStatus st = StepStatus::Success;
    bool mult = true;
    for (int i = 0; i < 40 && st == StepStatus::Success; ++i) {
      st = s.step(a, h, b);
      std::swap(a, b);
      mult = mult && s.multipliers(a.t, a.x, l);
    }
    Eigen::internal::set_is_malloc_allowed(true);
    EXPECT_EQ(st, StepStatus::Success);
    EXPECT_TRUE(mult);
  }
}

}  // namespace
