// newton_test.cc — NewtonSolver (NewtonSolver.hpp) and ImplicitStage
// (ImplicitStage.hpp): convergence rate, reuse of the LU factorization,
// failures reported as statuses, the iteration budget.
#include "unconstrained/ImplicitStage.hpp"
#include "NewtonSolver.hpp"
#include "TestProblems.hpp"  // PrintTo(StepStatus)

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

using namespace odepkg;

namespace {

/// F(y) = [y0^2 + y1^2 - a; y0 y1 - 2]; for a = 5 the root near (2.3, 0.7) is
/// y* = (2, 1).  Records the iterates (F is evaluated at every one).
struct Circle {
  double a = 5.0;
  std::vector<Vec> iterates;
  int jac_calls = 0;
  bool operator()(const ConstVecRef& y, VecRef r) {
    iterates.push_back(y);
    r << y(0) * y(0) + y(1) * y(1) - a, y(0) * y(1) - 2.0;
    return r.allFinite();
  }
  auto jacobian() {
    return [this](const ConstVecRef& y, MatRef J) {
      ++jac_calls;
      J << 2 * y(0), 2 * y(1), y(1), y(0);
      return true;
    };
  }
  /// The exact root near (2, 1) for this a: y0^2 + 4/y0^2 = a.
  Vec root() const {
    const double y0 = std::sqrt((a + std::sqrt(a * a - 16)) / 2);
    Vec y(2);
    y << y0, 2 / y0;
    return y;
  }
};

NewtonOptions full_newton() {
  NewtonOptions o;
  o.reuse_factorization = false;
  return o;
}

}  // namespace

// Full Newton converges quadratically (Hairer & Wanner II, IV.8; Kantorovich):
// e_{k+1} <= C e_k^2 with C ~ |J(y*)^{-1}| L / 2 = (5/6)(4)/2 = 5/3 in the
// infinity norm (L = Lipschitz constant of J).  We allow C = 2 and require
// at least three iterations in the quadratic regime.  Control: the simplified
// iteration (J frozen at the guess) is only linear, and the same check fails.
TEST(NewtonSolver, FullNewtonConvergesQuadratically) {
  for (bool simplified : {false, true}) {
    Stats st;
    NewtonSolver ns(2, &st, simplified ? NewtonOptions() : full_newton());
    Circle F;
    Vec y(2);
    y << 2.3, 0.7;
    ASSERT_EQ(ns.solve(F, F.jacobian(), y), StepStatus::Success);
    const Vec ys = F.root();
    // tol 1e-12 bounds the estimated error; quadratic convergence overshoots it
    EXPECT_LT((y - ys).lpNorm<Eigen::Infinity>(), simplified ? 1e-11 : 1e-14);
    EXPECT_EQ(static_cast<int>(F.iterates.size()), ns.last_iterations() + 1);
    EXPECT_EQ(st.newton_iterations, ns.last_iterations());
    double worst = 0.0;
    int quadratic_steps = 0;
    for (size_t k = 0; k + 1 < F.iterates.size(); ++k) {
      const double e0 = (F.iterates[k] - ys).lpNorm<Eigen::Infinity>();
      const double e1 = (F.iterates[k + 1] - ys).lpNorm<Eigen::Infinity>();
      if (e0 < 1e-7) break;  // e1 would be at rounding level
      worst = std::max(worst, e1 / (e0 * e0));
      ++quadratic_steps;
    }
    std::printf("[newton %s] %d iterations, max e_{k+1}/e_k^2 = %.3g over %d steps\n",
                simplified ? "simplified" : "full", ns.last_iterations(), worst, quadratic_steps);
    if (!simplified) {
      EXPECT_GE(quadratic_steps, 3);
      EXPECT_LT(worst, 2.0);
      EXPECT_EQ(F.jac_calls, ns.last_iterations());  // J refreshed every iteration
      EXPECT_EQ(st.lu_factorizations, ns.last_iterations());
    } else {
      EXPECT_GT(worst, 10.0);  // linear: e_{k+1}/e_k^2 blows up
      EXPECT_EQ(F.jac_calls, 1);
      EXPECT_EQ(st.lu_factorizations, 1);
    }
  }
}

// The factorization is kept across solves while the contraction is fast:
// a second, nearby solve neither calls J nor factorizes.  set_jacobian
// factorizes once and the next solve uses it without calling J; invalidate()
// forces a new Jacobian.
TEST(NewtonSolver, ReusesFactorizationAcrossSolves) {
  Stats st;
  NewtonSolver ns(2, &st);
  Circle F;
  Vec y(2);
  y << 2.1, 0.9;
  ASSERT_EQ(ns.solve(F, F.jacobian(), y), StepStatus::Success);
  EXPECT_EQ(st.lu_factorizations, 1);
  EXPECT_EQ(F.jac_calls, 1);
  ASSERT_TRUE(ns.has_factorization()) << "rate " << ns.last_rate();
  EXPECT_LE(ns.last_rate(), ns.options().refresh_rate);

  F.a = 5.05;  // a nearby problem, started from the last solution
  ASSERT_EQ(ns.solve(F, F.jacobian(), y), StepStatus::Success);
  EXPECT_LT((y - F.root()).lpNorm<Eigen::Infinity>(), 1e-12);
  EXPECT_EQ(st.lu_factorizations, 1);
  EXPECT_EQ(F.jac_calls, 1);
  EXPECT_EQ(st.newton_solves, 2);

  Mat J(2, 2);
  F.jacobian()(F.root(), J);
  ns.set_jacobian(J);
  EXPECT_EQ(st.lu_factorizations, 2);
  F.a = 5.1;
  ASSERT_EQ(ns.solve(F, F.jacobian(), y), StepStatus::Success);
  EXPECT_EQ(st.lu_factorizations, 2);
  EXPECT_EQ(F.jac_calls, 2);  // only the explicit call above

  ns.invalidate();
  EXPECT_FALSE(ns.has_factorization());
  F.a = 5.0;
  ASSERT_EQ(ns.solve(F, F.jacobian(), y), StepStatus::Success);
  EXPECT_EQ(st.lu_factorizations, 3);
  EXPECT_EQ(F.jac_calls, 3);
}

// F(y) = y - 1 with a given constant "Jacobian" m: the simplified iteration
// contracts with rate |1 - 1/m|.  m = 1.6 (rate 0.375 <= refresh_rate 0.5):
// factorization kept.  m = 3 (rate 2/3 > 0.5): converges but the
// factorization is dropped for the next solve.  m = 0.4 (rate -1.5, diverges:
// the second update is 3 times the first, theta >= 1): after 2 iterations the
// solver retries once with a fresh Jacobian (one J call, one LU), which
// solves the linear F by its first update and confirms with the second.
TEST(NewtonSolver, RefreshesStaleJacobian) {
  auto F = [](const ConstVecRef& y, VecRef r) {
    r(0) = y(0) - 1.0;
    return true;
  };
  int jac_calls = 0;
  auto J = [&](const ConstVecRef&, MatRef j) {
    ++jac_calls;
    j(0, 0) = 1.0;
    return true;
  };
  NewtonOptions o;
  o.max_iterations = 200;
  for (double m : {1.6, 3.0, 0.4}) {
    Stats st;
    NewtonSolver ns(1, &st, o);
    jac_calls = 0;
    Mat Jm = Mat::Constant(1, 1, m);
    ns.set_jacobian(Jm);
    Vec y = Vec::Constant(1, 0.0);
    ASSERT_EQ(ns.solve(F, J, y), StepStatus::Success) << m;
    EXPECT_NEAR(y(0), 1.0, 1e-11);  // the tolerance is on the estimated error
    if (m > 1) {
      EXPECT_NEAR(ns.last_rate(), std::abs(1 - 1 / m), 1e-3);
      EXPECT_EQ(ns.has_factorization(), m < 2.0) << m;
      EXPECT_EQ(jac_calls, 0);
      EXPECT_EQ(st.lu_factorizations, 1);
    } else {
      EXPECT_EQ(jac_calls, 1);
      EXPECT_EQ(st.lu_factorizations, 2);
      EXPECT_EQ(ns.last_iterations(), 2);  // exact J: solved by the first update
      EXPECT_EQ(st.newton_iterations, 4);
    }
  }
}

// Problems without a (reachable) root end with a failure status, never an
// exception: Newton for atan(y) from y0 = 3 diverges (|y0| > 1.39);
// y^2 + 1 = 0 has no real root; at y0 = 0 its Jacobian is singular.
// A callback reporting a non-finite value gives NonFinite.
TEST(NewtonSolver, FailuresAreStatuses) {
  auto atan_F = [](const ConstVecRef& y, VecRef r) {
    r(0) = std::atan(y(0));
    return r.allFinite();
  };
  auto atan_J = [](const ConstVecRef& y, MatRef J) {
    J(0, 0) = 1.0 / (1.0 + y(0) * y(0));
    return true;
  };
  auto sq_F = [](const ConstVecRef& y, VecRef r) {
    r(0) = y(0) * y(0) + 1.0;
    return r.allFinite();
  };
  auto sq_J = [](const ConstVecRef& y, MatRef J) {
    J(0, 0) = 2.0 * y(0);
    return true;
  };
  for (bool reuse : {true, false}) {
    NewtonOptions o;
    o.reuse_factorization = reuse;
    Stats st;
    NewtonSolver ns(1, &st, o);
    Vec y = Vec::Constant(1, 3.0);
    StepStatus s = StepStatus::Success;
    EXPECT_NO_THROW(s = ns.solve(atan_F, atan_J, y));
    EXPECT_EQ(s, StepStatus::NewtonDiverged);
    EXPECT_FALSE(ns.has_factorization());
    for (double y0 : {0.5, 0.0}) {
      y(0) = y0;
      EXPECT_NO_THROW(s = ns.solve(sq_F, sq_J, y));
      EXPECT_NE(s, StepStatus::Success) << "y0 = " << y0;
      EXPECT_LE(ns.last_iterations(), o.max_iterations);
    }
    // Non-finite residual or Jacobian.
    auto nan_F = [](const ConstVecRef&, VecRef r) {
      r(0) = std::nan("");
      return false;
    };
    y(0) = 1.0;
    EXPECT_EQ(ns.solve(nan_F, sq_J, y), StepStatus::NonFinite);
    auto nan_J = [](const ConstVecRef&, MatRef J) {
      J(0, 0) = std::numeric_limits<double>::infinity();
      return true;  // the solver checks the matrix itself
    };
    ns.invalidate();
    EXPECT_EQ(ns.solve(sq_F, nan_J, y), StepStatus::NonFinite);
    EXPECT_FALSE(ns.has_factorization());
  }
}

// The iteration budget is per solve.  F(y) = y^3 has a triple root: Newton
// converges only linearly, y_{k+1} = 2/3 y_k, and needs ~70 iterations for
// tol 1e-12 (theta/(1-theta) |dy| = 2 |dy| <= tol).  With max_iterations = 10
// the solve fails after exactly 10 iterations (11 residuals); with a stale
// factorization it retries once with a fresh Jacobian (2 x 10); with a budget
// of 200 the same solve succeeds.
TEST(NewtonSolver, MaxIterationsRespected) {
  int f_calls = 0;
  auto F = [&](const ConstVecRef& y, VecRef r) {
    ++f_calls;
    r(0) = y(0) * y(0) * y(0);
    return true;
  };
  auto J = [](const ConstVecRef& y, MatRef j) {
    j(0, 0) = 3 * y(0) * y(0);
    return true;
  };
  NewtonOptions o = full_newton();
  o.max_iterations = 10;
  {
    Stats st;
    NewtonSolver ns(1, &st, o);
    Vec y = Vec::Constant(1, 1.0);
    EXPECT_EQ(ns.solve(F, J, y), StepStatus::NewtonDiverged);
    EXPECT_EQ(ns.last_iterations(), 10);
    EXPECT_EQ(st.newton_iterations, 10);
    EXPECT_EQ(f_calls, 11);
    EXPECT_NEAR(y(0), std::pow(2.0 / 3.0, 10), 1e-12);
  }
  {
    o.reuse_factorization = true;
    Stats st;
    NewtonSolver ns(1, &st, o);
    ns.set_jacobian(Mat::Constant(1, 1, 3.0));  // J(1): stale after one step
    Vec y = Vec::Constant(1, 1.0);
    EXPECT_EQ(ns.solve(F, J, y), StepStatus::NewtonDiverged);
    EXPECT_EQ(st.newton_iterations, 20);
    EXPECT_EQ(st.newton_max_iterations, 10);
    EXPECT_EQ(st.lu_factorizations, 2);
  }
  {
    o = full_newton();
    o.max_iterations = 200;
    Stats st;
    NewtonSolver ns(1, &st, o);
    Vec y = Vec::Constant(1, 1.0);
    EXPECT_EQ(ns.solve(F, J, y), StepStatus::Success);
    EXPECT_GT(ns.last_iterations(), 50);
    EXPECT_LT(ns.last_iterations(), 90);
    EXPECT_LT(std::abs(y(0)), 1e-11);
  }
}

// Regression: a non-finite Newton update must not count as converged.  With
// a residual that stays finite (here constant) and a singular Jacobian,
// dy = inf, y = -inf and |dy|/max(1,|y|) = NaN, which std::max(s, NaN) used to
// drop (nd = 0, "Success" with y = -inf).
TEST(NewtonSolver, NonFiniteUpdateIsNotSuccess) {
  auto F = [](const ConstVecRef&, VecRef r) {
    r(0) = 1.0;
    return true;
  };
  auto J = [](const ConstVecRef&, MatRef j) {
    j(0, 0) = 0.0;
    return true;
  };
  NewtonSolver ns(1, nullptr);
  Vec y = Vec::Zero(1);
  const StepStatus s = ns.solve(F, J, y);
  EXPECT_NE(s, StepStatus::Success) << "y = " << y(0);
}

// ImplicitStage solves y = a + c phi(y) (Jacobian I - c dphi/dy).  Changing c
// rescales the cached dphi/dy (one new LU, no new dphi call); a change of c
// below 1e-10 relative keeps the factorization; reset() forgets dphi/dy.
TEST(ImplicitStage, SolvesAndRescalesCachedJacobian) {
  auto phi = [](const ConstVecRef& y, VecRef out) {
    out << std::sin(y(0)) + 0.25 * y(1) * y(1), std::cos(y(1)) - 0.5 * y(0);
    return true;
  };
  int dphi_calls = 0;
  auto dphi = [&](const ConstVecRef& y, MatRef B) {
    ++dphi_calls;
    B << std::cos(y(0)), 0.5 * y(1), -0.5, -std::sin(y(1));
    return true;
  };
  Stats st;
  ImplicitStage stage(2, &st);
  Vec a(2), y(2), py(2), check(2);
  a << 0.3, -0.2;
  auto solve = [&](double c) {
    y = a;
    ASSERT_EQ(stage.solve(a, c, phi, dphi, y, py), StepStatus::Success) << "c = " << c;
    phi(y, check);
    EXPECT_LT((y - a - c * check).lpNorm<Eigen::Infinity>(), 1e-12) << "c = " << c;
    EXPECT_LT((py - check).lpNorm<Eigen::Infinity>(), 1e-15);  // phi at the solution
  };
  solve(0.2);
  EXPECT_EQ(dphi_calls, 1);
  EXPECT_EQ(st.lu_factorizations, 1);
  solve(0.1);  // as for the half steps of step doubling
  EXPECT_EQ(dphi_calls, 1);
  EXPECT_EQ(st.lu_factorizations, 2);
  solve(0.1 * (1 + 1e-13));  // fixed steps differing in the last bits
  EXPECT_EQ(st.lu_factorizations, 2);
  stage.reset();
  solve(0.1);
  EXPECT_EQ(dphi_calls, 2);
  EXPECT_EQ(st.lu_factorizations, 3);
}

// HW (IV.8.10): with the rate of the last solve that measured one, the first
// iterate is accepted when eta |dy_1| <= tol.  A linear F converges in one
// iteration (theta ~ 0): solves 2-5 stop after one iteration, the 6th measures
// theta again (at most 4 shortcuts in a row), and every solution is exact.
TEST(NewtonSolver, FirstIterateAcceptedWithMeasuredRate) {
  Mat A(2, 2);
  A << 3.0, 1.0, -1.0, 2.0;
  Vec b(2);
  auto J = [&](const ConstVecRef&, MatRef j) {
    j = A;
    return true;
  };
  Stats st;
  NewtonSolver ns(2, &st);
  std::vector<int> iters;
  for (int k = 0; k < 7; ++k) {
    b << 1.0 + k, 2.0 - k;
    auto F = [&](const ConstVecRef& y, VecRef r) {
      r = A * y - b;
      return true;
    };
    Vec y = Vec::Zero(2);
    ASSERT_EQ(ns.solve(F, J, y), StepStatus::Success);
    const Vec exact = A.partialPivLu().solve(b);
    EXPECT_LT((y - exact).cwiseAbs().maxCoeff(), 1e-14);
    iters.push_back(ns.last_iterations());
  }
  EXPECT_EQ(iters, (std::vector<int>{2, 1, 1, 1, 1, 2, 1}));
}

// A nonlinear F whose first iterate is not yet converged: the shortcut must
// not accept it (error of the result within tol of the root).
TEST(NewtonSolver, ShortcutKeepsAccuracyOnNonlinearF) {
  Stats st;
  NewtonSolver ns(1, &st);
  for (int k = 0; k < 10; ++k) {
    const double c = 2.0 + 0.1 * k;  // root sqrt(c)
    auto F = [&](const ConstVecRef& y, VecRef r) {
      r(0) = y(0) * y(0) - c;
      return true;
    };
    auto J = [&](const ConstVecRef& y, MatRef j) {
      j(0, 0) = 2 * y(0);
      return true;
    };
    Vec y(1);
    y(0) = std::sqrt(c) + 0.01;  // a warm start, as the steppers give
    ASSERT_EQ(ns.solve(F, J, y), StepStatus::Success) << "solve " << k << " it " << ns.last_iterations();
    EXPECT_LT(std::abs(y(0) - std::sqrt(c)), 1e-11) << "solve " << k;
    EXPECT_GT(ns.last_iterations(), 1);
  }
}
