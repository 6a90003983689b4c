// composition_test.cc — symmetric composition methods (Hairer, Lubich,
// Wanner, "Geometric Numerical Integration", Sect. II.4 and V.3): the weight
// tables, and CompositionStepper over Störmer–Verlet, velocity Verlet and
// RATTLE: fitted orders against closed forms or an independent reference,
// constraints, reversibility, calls of f per step, warm-started Newton,
// refusal of non-symmetric bases, step doubling with the composed order.
#include "Integrator.hpp"
#include "Rattle.hpp"
#include "StepDoubling.hpp"
#include "StormerVerlet.hpp"
#include "SymplecticEuler.hpp"
#include "TestProblems.hpp"
#include "VelocityVerlet.hpp"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace odepkg;
using composition::CompositionTable;

namespace {

const CompositionTable& table(const char* name) {
  const CompositionTable* t = composition::find_composition(name);
  if (!t) throw std::runtime_error(std::string("no table ") + name);
  return *t;
}

/// N steps of h from (t0, x0); the end state.
Vec integrate(Stepper& st, const Vec& x0, double h, int N, double t0 = 0.0) {
  const int n = static_cast<int>(x0.size());
  Point a(n), b(n);
  a.set(t0, x0);
  Point *from = &a, *to = &b;
  for (int i = 0; i < N; ++i) {
    const StepStatus s = st.step(*from, h, *to);
    if (s != StepStatus::Success) {
      ADD_FAILURE() << "step " << i << ": " << describe(s);
      return Vec::Constant(n, NAN);
    }
    std::swap(from, to);
  }
  return from->x;
}

/// Harmonic oscillator H = (p^2 + q^2)/2.
void oscillator(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -x(0);
}

/// The pendulum angle ODE, H = w^2/2 - cos th.
void angle_field(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -std::sin(x(0));
}

constexpr double kTheta0 = 1.2, kOmega0 = 0.3;

/// The Cartesian pendulum (m = L = g = 1), H = |p|^2/2 + q_2, |q| = 1.
std::unique_ptr<HamiltonianProblem> cartesian_pendulum() {
  auto P = std::make_unique<HamiltonianProblem>(2, [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(2) = x.tail(2);
    dx(2) = 0.0;
    dx(3) = -1.0;
  });
  P->set_hessian([](double, const ConstVecRef&, MatRef H) {
    H.setZero();
    H(2, 2) = H(3, 3) = 1.0;
  });
  P->set_constraints(
      1, [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1.0; },
      [](const ConstVecRef& q, MatRef G) { G.row(0) = 2.0 * q.transpose(); },
      [](const ConstVecRef&, MatRef H) {
        H.setZero();
        H(0, 0) = H(1, 1) = 2.0;
      });
  return P;
}

Vec cartesian_from_angle(double th, double w) {
  Vec x(4);
  x << std::sin(th), -std::cos(th), w * std::cos(th), w * std::sin(th);
  return x;
}

/// The pendulum at time T from the angle ODE, integrated by the package's
/// own Kahan–Li 8 over explicit Störmer–Verlet at h = T/4000 (its error,
/// ~1e-22 by the h^8 law, is far below round-off).
Vec pendulum_reference(double T) {
  HamiltonianProblem P(1, &angle_field);
  CompositionStepper st(std::make_unique<StormerVerlet>(P, true), table("KahanLi8"));
  Vec a0(2);
  a0 << kTheta0, kOmega0;
  const Vec a = integrate(st, a0, T / 4000, 4000);
  return cartesian_from_angle(a(0), a(1));
}

/// Errors at a geometric sequence of step counts, kept where they lie
/// between lo and hi (above round-off, in the asymptotic range); the fitted
/// slope of log err against log h.
template <class ErrorAt>
double fit(ErrorAt&& error_at, int N0, double lo, double hi, int* points, double* emin, double* emax) {
  std::vector<double> hs, es;
  *emin = 1e300;
  *emax = 0;
  for (int N = N0; N <= 64 * N0 && (es.empty() || es.back() > lo); N = N * 5 / 4) {
    double h = 0;
    const double e = error_at(N, &h);
    if (e < hi && e > lo) {
      hs.push_back(h);
      es.push_back(e);
      *emin = std::min(*emin, e);
      *emax = std::max(*emax, e);
    } else if (e <= lo) {
      break;
    }
  }
  *points = static_cast<int>(hs.size());
  return hs.size() >= 2 ? test::fitted_order(hs, es) : NAN;
}

}  // namespace

// ---- the tables ------------------------------------------------------------

// sum g_i = 1 to round-off (a weight typed to 14 digits leaves 1e-14, a
// flipped sign far more), palindromic, and the odd power sums of the order
// conditions of symmetric compositions, sum g_i^k = 0 for odd k from 3 to
// p - 1 (HLW Sect. V.3.2), to round-off.
TEST(CompositionTables, ConsistentPalindromicOddMoments) {
  ASSERT_GE(composition::composition_table_count(), 8);
  for (int k = 0; k < composition::composition_table_count(); ++k) {
    const CompositionTable& t = composition::composition_table(k);
    long double sum = 0, abs_sum = 0;
    for (int i = 0; i < t.stages; ++i) {
      sum += t.weights[i];
      abs_sum += std::abs(t.weights[i]);
      EXPECT_EQ(t.weights[i], t.weights[t.stages - 1 - i]) << t.name << " not palindromic at " << i;
    }
    EXPECT_LE(std::abs(static_cast<double>(sum - 1.0L)), 4e-16 * static_cast<double>(abs_sum)) << t.name;
    for (int p = 3; p < t.order; p += 2) {
      long double m = 0, am = 0;
      for (int i = 0; i < t.stages; ++i) {
        m += std::pow(static_cast<long double>(t.weights[i]), p);
        am += std::pow(std::abs(static_cast<long double>(t.weights[i])), p);
      }
      EXPECT_LE(std::abs(static_cast<double>(m)), 1e-15 * static_cast<double>(am))
          << t.name << ": sum g^" << p << " = " << static_cast<double>(m);
    }
    // the next odd moment is not zero: the order is not higher than claimed
    // by this (necessary) condition alone — guards a table under a wrong name
    long double m = 0;
    for (int i = 0; i < t.stages; ++i) m += std::pow(static_cast<long double>(t.weights[i]), t.order + 1);
    EXPECT_GT(std::abs(static_cast<double>(m)), 1e-8) << t.name;
  }
}

// The closed forms, recomputed in long double.
TEST(CompositionTables, ClosedForms) {
  const long double c2 = std::cbrt(2.0L), c4 = std::cbrt(4.0L);
  const CompositionTable& tj = table("TripleJump4");
  EXPECT_EQ(tj.stages, 3);
  EXPECT_NEAR(tj.weights[0], static_cast<double>(1 / (2 - c2)), 2e-16);
  EXPECT_NEAR(tj.weights[1], static_cast<double>(-c2 / (2 - c2)), 4e-16);
  const CompositionTable& su = table("Suzuki4");
  EXPECT_EQ(su.stages, 5);
  EXPECT_NEAR(su.weights[0], static_cast<double>(1 / (4 - c4)), 1e-16);
  EXPECT_NEAR(su.weights[2], static_cast<double>(-c4 / (4 - c4)), 1e-16);
  // McLachlan's g_2: the root of the cubic condition with g_1 = 0.28.
  long double g2 = 0.6L;
  for (int i = 0; i < 50; ++i) {
    const long double g1 = 0.28L, g3 = 1 - 2 * g1 - 2 * g2;
    const long double F = 2 * g1 * g1 * g1 + 2 * g2 * g2 * g2 + g3 * g3 * g3;
    const long double dF = 6 * g2 * g2 - 6 * g3 * g3;
    g2 -= F / dF;
  }
  const CompositionTable& mc = table("McLachlan4");
  EXPECT_NEAR(mc.weights[1], static_cast<double>(g2), 2e-16);
  EXPECT_EQ(mc.weights[0], 0.28);
}

TEST(CompositionTables, LookUp) {
  EXPECT_EQ(composition::find_composition("NoSuchTable"), nullptr);
  EXPECT_EQ(composition::find_composition("kahanli8"), nullptr);  // exact names
  for (int p : {4, 6, 8, 10}) {
    const CompositionTable* t = composition::recommended_composition(p);
    ASSERT_NE(t, nullptr) << p;
    EXPECT_EQ(t->order, p);
  }
  EXPECT_EQ(composition::recommended_composition(2), nullptr);
  EXPECT_EQ(composition::recommended_composition(5), nullptr);
  EXPECT_EQ(composition::recommended_composition(12), nullptr);
}

// ---- fitted orders -----------------------------------------------------------

// Every table over explicit Störmer–Verlet on Kepler (e = 0.5, one period,
// against the solution of Kepler's equation) and the harmonic oscillator
// (t = 10, against the rotation): the slope of log err against log h is the
// table's order.  Kepler is nonlinear: all order conditions count.
TEST(CompositionStepper, FittedOrderKeplerAndOscillator) {
  for (int k = 0; k < composition::composition_table_count(); ++k) {
    const CompositionTable& t = composition::composition_table(k);
    test::Kepler kep;
    kep.e = 0.5;
    const double T = 2 * M_PI;
    const Vec exact = kep.exact(T);
    auto kepler_err = [&](int N, double* h) {
      HamiltonianProblem P = kep.make();
      CompositionStepper st(std::make_unique<StormerVerlet>(P, true), t);
      *h = T / N;
      return (integrate(st, kep.initial(), *h, N) - exact).lpNorm<Eigen::Infinity>();
    };
    auto osc_err = [&](int N, double* h) {
      HamiltonianProblem P(1, &oscillator);
      CompositionStepper st(std::make_unique<StormerVerlet>(P, true), t);
      Vec x0(2), ex(2);
      x0 << 1, 0;
      ex << std::cos(10.0), -std::sin(10.0);
      *h = 10.0 / N;
      return (integrate(st, x0, *h, N) - ex).lpNorm<Eigen::Infinity>();
    };
    int nk, no;
    double k0, k1, o0, o1;
    const double sk = fit(kepler_err, 20, 1e-12, 1e-3, &nk, &k0, &k1);
    const double so = fit(osc_err, 5, 1e-12, 1e-3, &no, &o0, &o1);
    std::printf("[order] %-20s p = %2d  Kepler slope %.2f (%d points, %.1e..%.1e), oscillator %.2f (%d, %.1e..%.1e)\n",
                t.name, t.order, sk, nk, k0, k1, so, no, o0, o1);
    EXPECT_GE(nk, 3) << t.name;
    EXPECT_GE(no, 3) << t.name;
    EXPECT_NEAR(sk, t.order, 0.4) << t.name;
    EXPECT_NEAR(so, t.order, 0.4) << t.name;
  }
}
