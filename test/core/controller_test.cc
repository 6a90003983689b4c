// controller_test.cc — error control pieces: ErrorNorm (ode45's AbsRel_norm),
// StepSizeController (Hairer, Nørsett & Wanner I, §II.4), initial_step
// (HNW I §II.4 / ode45's starting_stepsize) and StepDoubling.
#include "loop/ErrorNorm.hpp"
#include "loop/InitialStep.hpp"
#include "loop/StepDoubling.hpp"
#include "loop/StepSizeController.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "TestProblems.hpp"
#include "unconstrained/VelocityVerlet.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <vector>

using namespace odepkg;

namespace {
Vec vec(std::initializer_list<double> v) {
  Vec x(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double a : v) x(i++) = a;
  return x;
}
}  // namespace

// ---- ErrorNorm ---------------------------------------------------------------------

// Max norm: max_i |e_i| / max(AbsTol_i, RelTol max(|x_i|, |x_old_i|)).
// By hand, RelTol 1e-3, AbsTol 1e-6: scales (1e-3, 3e-3, 1e-6), ratios
// (0.1, 0.5, 0.2) -> 0.5; the third component is scaled by AbsTol.
TEST(ErrorNorm, MaxNormMatchesHandComputedValues) {
  ErrorNorm n;
  n.rel_tol = 1e-3;
  n.abs_tol = vec({1e-6});
  const Vec x = vec({1.0, -2.0, 1e-5}), xo = vec({0.5, 3.0, 0.0});
  EXPECT_DOUBLE_EQ(n(vec({1e-4, -1.5e-3, 2e-7}), x, xo), 0.5);
  EXPECT_DOUBLE_EQ(n(vec({1e-4, -1.5e-3, 2e-7}), xo, x), 0.5);  // symmetric in x, x_old
  // e_0 = 4e-3 dominates: 4e-3 / 1e-3 = 4 ...
  EXPECT_DOUBLE_EQ(n(vec({4e-3, -1.5e-3, 2e-7}), x, xo), 4.0);
  // ... unless its own AbsTol is 1e-2: 0.4, and the max is again 0.5.
  n.abs_tol = vec({1e-2, 1e-6, 1e-6});
  EXPECT_DOUBLE_EQ(n(vec({4e-3, -1.5e-3, 2e-7}), x, xo), 0.5);
  // Zero state: pure absolute error, 2e-7 / 1e-6.
  n.abs_tol = vec({1e-6});
  EXPECT_DOUBLE_EQ(n(vec({0.0, 0.0, 2e-7}), Vec::Zero(3), Vec::Zero(3)), 0.2);
}

// NormControl: ||e||_2 / max(AbsTol, RelTol max(||x||_2, ||x_old||_2)).
// ||(3e-4, 4e-4, 0)|| = 5e-4, ||(3, 4, 0)|| = 5: 5e-4 / 5e-3 = 0.1.
// With a tiny state the AbsTol floor applies: 5e-4 / 1e-6 = 500.
TEST(ErrorNorm, NormControlMatchesHandComputedValues) {
  ErrorNorm n;
  n.rel_tol = 1e-3;
  n.abs_tol = vec({1e-6});
  n.norm_control = true;
  const Vec e = vec({3e-4, 4e-4, 0.0});
  EXPECT_DOUBLE_EQ(n(e, vec({3.0, 4.0, 0.0}), vec({0.0, 1.0, 0.0})), 0.1);
  EXPECT_DOUBLE_EQ(n(e, vec({0.0, 1.0, 0.0}), vec({3.0, -4.0, 0.0})), 0.1);
  EXPECT_DOUBLE_EQ(n(e, vec({1e-5, 0.0, 0.0}), vec({0.0, 0.0, 1e-5})), 500.0);
  // Differs from the max norm on the same data: max(3e-4/3e-3, 4e-4/4e-3) = 0.1,
  // but with e = (4e-4, 4e-4, 0): NormControl 0.1131..., max norm 0.1333...
  const Vec e2 = vec({4e-4, 4e-4, 0.0}), x = vec({3.0, 4.0, 0.0}), xo = Vec::Zero(3);
  EXPECT_DOUBLE_EQ(n(e2, x, xo), std::sqrt(32e-8) / 5e-3);
  n.norm_control = false;
  EXPECT_DOUBLE_EQ(n(e2, x, xo), 4e-4 / 3e-3);
}

// ---- StepSizeController ----------------------------------------------------------------

// Accept iff err <= 1.  h_new = h min(fac_max, max(fac_min, 0.9 err^{-1/(p+1)})),
// fac_max = 1 after a rejection (and whenever err > 1), |h_new| <= MaxStep,
// sign of h kept.  Expected factors by hand for p = 2 (exponent -1/3).
TEST(StepSizeController, DecisionsAndFactorBounds) {
  const StepSizeController c(2);
  EXPECT_TRUE(c.accept(0.0));
  EXPECT_TRUE(c.accept(1.0));
  EXPECT_FALSE(c.accept(1.0 + 1e-12));
  EXPECT_FALSE(c.accept(std::nan("")));
  EXPECT_FALSE(c.accept(std::numeric_limits<double>::infinity()));

  const double h = 0.1;
  EXPECT_NEAR(c.next(h, 0.5, false), h * 0.9 * std::cbrt(2.0), 1e-15);   // 1.1339 h
  EXPECT_NEAR(c.next(h, 0.5, true), h, 1e-15);                           // capped at 1
  EXPECT_NEAR(c.next(h, 1e-6, false), 5 * h, 1e-15);                     // 90 -> fac_max 5
  EXPECT_NEAR(c.next(h, 0.0, false), 5 * h, 1e-15);
  EXPECT_NEAR(c.next(h, 0.0, true), h, 1e-15);
  EXPECT_NEAR(c.next(h, 2.0, false), h * 0.9 / std::cbrt(2.0), 1e-15);   // 0.714 h
  EXPECT_NEAR(c.next(h, 8.0, true), h * 0.45, 1e-15);                    // 0.9 / 2
  EXPECT_NEAR(c.next(h, 1000.0, true), 0.2 * h, 1e-15);                  // 0.09 -> fac_min
  EXPECT_NEAR(c.next(h, std::numeric_limits<double>::infinity(), true), 0.2 * h, 1e-15);
  EXPECT_NEAR(c.next(h, std::nan(""), true), 0.2 * h, 1e-15);
  EXPECT_NEAR(c.next(-h, 0.5, false), -h * 0.9 * std::cbrt(2.0), 1e-15);  // backwards
  // Order 1: exponent -1/2.
  EXPECT_NEAR(StepSizeController(1).next(h, 0.5, false), h * 0.9 * std::sqrt(2.0), 1e-15);

  ControllerOptions o;
  o.max_step = 0.3;
  const StepSizeController cm(2, o);
  EXPECT_DOUBLE_EQ(cm.next(h, 1e-6, false), 0.3);
  EXPECT_DOUBLE_EQ(cm.next(-h, 1e-6, false), -0.3);
  EXPECT_DOUBLE_EQ(cm.next(h, 0.5, false), h * 0.9 * std::cbrt(2.0));  // below MaxStep
}

// The controller is built for err = (h / h*)^{p+1} (local error O(h^{p+1})):
// from any h within the factor bounds it proposes 0.9 h*.
TEST(StepSizeController, ProposesSafetyTimesOptimalStep) {
  const double hstar = 0.05;
  for (int p : {1, 2, 4}) {
    const StepSizeController c(p);
    for (double h : {hstar / 4, hstar / 2, hstar * 1.5, hstar * 4}) {
      const double err = std::pow(h / hstar, p + 1);
      EXPECT_NEAR(c.next(h, err, err > 1), 0.9 * hstar, 1e-14) << "p = " << p << ", h = " << h;
    }
  }
}

// ---- initial_step ----------------------------------------------------------------------

namespace {
void decay(double, const ConstVecRef& x, VecRef dx) { dx = -x; }  // y' = -y
}  // namespace

// y' = -y (both components), y0 = (1, 1), RelTol 1e-3, AbsTol 1e-6.  By hand:
// d0 = |y0|/1e-3 = 1000, d1 = 1000, h0 = 0.01 d0/d1 = 0.01; the Euler probe
// y1 = 0.99 gives |f1 - f0| = 0.01, d2 = (0.01 / 1e-5) / h0 = 1e5, so
// h = min(100 h0, (0.01 / 1e5)^{1/(p+1)}) = 1e-7^{1/(p+1)}: 4.64e-3 for p = 2,
// 3.16e-4 for p = 1.  One call of f (f0 is given); the same backwards.
TEST(InitialStep, HandComputedOnExponentialDecay) {
  ErrorNorm n;
  n.rel_tol = 1e-3;
  n.abs_tol = vec({1e-6});
  HamiltonianProblem P(1, &decay);
  const Vec x0 = vec({1.0, 1.0}), f0 = -x0;
  EXPECT_NEAR(initial_step(P, n, 2, 0.0, x0, f0, 1.0), std::cbrt(1e-7), 1e-15);
  EXPECT_EQ(P.stats().field_evals, 1);
  EXPECT_NEAR(initial_step(P, n, 1, 0.0, x0, f0, 1.0), std::sqrt(1e-7), 1e-15);
  EXPECT_NEAR(initial_step(P, n, 2, 0.0, x0, f0, -1.0), std::cbrt(1e-7), 1e-15);
  // Tighter RelTol 1e-6: d0 = d1 = 1e6, h0 = 0.01, d2 = (0.01/1e-6)/0.01 = 1e6,
  // h = (1e-8)^{1/3}.
  n.rel_tol = 1e-6;
  EXPECT_NEAR(initial_step(P, n, 2, 0.0, x0, f0, 1.0), std::cbrt(1e-8), 1e-15);
}

// Degenerate cases: at an equilibrium (f = 0) h0 = 1e-6 and d2 = 0, so
// h = min(100 h0, max(1e-6, 1e-3 h0)) = 1e-6; a non-finite probe returns h0.
TEST(InitialStep, EquilibriumAndNonFiniteProbe) {
  ErrorNorm n;
  HamiltonianProblem P0(1, [](double, const ConstVecRef&, VecRef dx) { dx.setZero(); });
  const Vec x0 = vec({1.0, 1.0});
  EXPECT_DOUBLE_EQ(initial_step(P0, n, 2, 0.0, x0, Vec::Zero(2), 1.0), 1e-6);
  HamiltonianProblem Pn(1, [](double t, const ConstVecRef& x, VecRef dx) {
    dx = -x;
    if (t > 0) dx(0) = std::nan("");
  });
  double h = 0.0;
  EXPECT_NO_THROW(h = initial_step(Pn, n, 2, 0.0, x0, -x0, 1.0));
  EXPECT_DOUBLE_EQ(h, 0.01);  // h0 = 0.01 d0 / d1 (d0 = d1 = 1000)
}

// On the harmonic oscillator (RelTol 1e-3) the chosen step is sensible: well
// below the time scale 1, and the first step-doubling attempt of Störmer–
// Verlet with it is accepted.
TEST(InitialStep, FirstStepIsAccepted) {
  HamiltonianProblem P(1, [](double, const ConstVecRef& x, VecRef dx) {
    dx(0) = x(1);
    dx(1) = -x(0);
  });
  ErrorNorm n;
  const Vec x0 = vec({1.0, 0.0});
  Vec f0(2);
  P.field(0.0, x0, f0);
  const double h = initial_step(P, n, 2, 0.0, x0, f0, 1.0);
  EXPECT_GT(h, 1e-4);
  EXPECT_LT(h, 0.1);
  StormerVerlet sv(P, true);
  StepDoubling sd(sv);
  Point a(2), b(2);
  a.set(0.0, x0);
  ASSERT_EQ(sd.attempt(a, h, b), StepStatus::Success);
  EXPECT_LE(n(sd.error(), b.x, a.x), 1.0);
}

// ---- StepDoubling ----------------------------------------------------------------------

// With local error C h^{p+1} + O(h^{p+2}): full = x(h) + C h^{p+1},
// two halves = x(h) + 2 C (h/2)^{p+1}, hence
//   err = (halves - full) / (2^p - 1) = -C h^{p+1} / 2^p = x(h) - halves
// up to O(h^{p+2}): the estimate of the local error of the kept result, and
// also (x(h) - full) / 2^p.  Checked against exact solutions (harmonic
// oscillator, Kepler): relative mismatch O(h), decreasing with h.
TEST(StepDoubling, EstimatesLocalErrorOfTwoHalfSteps) {
  struct Case {
    const char* name;
    bool kepler, sv;
  };
  test::Kepler k;
  k.e = 0.5;
  const Vec xo = vec({1.0, 0.5});
  auto osc_exact = [&](double t) {
    return vec({xo(0) * std::cos(t) + xo(1) * std::sin(t), xo(1) * std::cos(t) - xo(0) * std::sin(t)});
  };
  for (const Case& c : {Case{"SE oscillator", false, false}, Case{"SV oscillator", false, true},
                        Case{"SE Kepler", true, false}, Case{"SV Kepler", true, true}}) {
    std::vector<double> mismatch;
    for (double h : {0.04, 0.02, 0.01}) {
      HamiltonianProblem P = c.kepler ? k.make()
                                      : HamiltonianProblem(1, [](double, const ConstVecRef& x, VecRef dx) {
                                          dx(0) = x(1);
                                          dx(1) = -x(0);
                                        });
      std::unique_ptr<Stepper> s;
      if (c.sv)
        s = std::make_unique<StormerVerlet>(P, true);
      else
        s = std::make_unique<SymplecticEuler>(P, true);
      StepDoubling sd(*s);
      const double t0 = 0.5;
      Point a(P.state_size()), b(P.state_size());
      a.set(t0, c.kepler ? k.exact(t0) : osc_exact(t0));
      ASSERT_EQ(sd.attempt(a, h, b), StepStatus::Success);
      EXPECT_EQ(b.t, t0 + h);
      const Vec exact = c.kepler ? k.exact(t0 + h) : osc_exact(t0 + h);
      const Vec true_err = exact - b.x;
      const Vec full_err = exact - sd.full_step().x;
      const double p2 = std::ldexp(1.0, s->order());
      mismatch.push_back((sd.error() - true_err).norm() / true_err.norm());
      EXPECT_LT((sd.error() - full_err / p2).norm(), 0.2 * true_err.norm()) << c.name << " h " << h;
    }
    std::printf("[doubling] %-14s |err - (x(h) - x_h/2,h/2)| / |x(h) - x_h/2,h/2| = %.1e %.1e %.1e\n",
                c.name, mismatch[0], mismatch[1], mismatch[2]);
    EXPECT_LT(mismatch[2], 0.1) << c.name;
    EXPECT_LT(mismatch[2], mismatch[0]) << c.name;
  }
}

// The start point's cached force serves both branches: one attempt from a
// point without force costs 1 + 3 x (calls per step) calls of f: 4 for
// velocity Verlet, 7 for explicit SV (three steps: too few to learn any
// velocity model, AffineVelocity.hpp).
TEST(StepDoubling, CallCount) {
  test::Kepler k;
  for (bool vv : {true, false}) {
    HamiltonianProblem P = k.make();
    std::unique_ptr<Stepper> s;
    if (vv)
      s = std::make_unique<VelocityVerlet>(P);
    else
      s = std::make_unique<StormerVerlet>(P, true);
    StepDoubling sd(*s);
    Point a(4), b(4);
    a.set(0.0, k.initial());
    ASSERT_EQ(sd.attempt(a, 0.01, b), StepStatus::Success);
    EXPECT_EQ(P.stats().field_evals, vv ? 4 : 7);
    EXPECT_TRUE(b.has_force);
  }
}
