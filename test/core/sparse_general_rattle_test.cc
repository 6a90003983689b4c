// Tests of the sparse general RATTLE/SHAKE (GeometricRattle on sparse
// matrices, SparseGeometricNewton): the planar hanging chain of
// ChainProblem.hpp with a non-separable H, a height-dependent mobility,
//   H = sum_k ( c(y_k) |p_k|^2 / 2 + y_k ),   c(y) = 1 + eps sin y,
// whose Hessian (7 entries per mass: H_{y y} = c''(y) |p_k|^2 / 2, H_{y p_k} =
// c'(y) p_k, H_pp = c I) is given sparse; G is the chain's sparse one.
#include "constrained/BaseMethodFactory.hpp"
#include "constrained/GeometricRattle.hpp"
#include "constrained/Rattle.hpp"
#include "constrained/SparseRankRevealingLU.hpp"
#include "ChainProblem.hpp"
#include "MobileChainProblem.hpp"
#include "FixedSteps.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace odepkg;
using odepkg::test::Chain;
using odepkg::test::MobileChain;

namespace {

constexpr double kEpsMachine = std::numeric_limits<double>::epsilon();

/// The chain with H = sum c(y_k) |p_k|^2 / 2 + y_k, c = 1 + eps sin y.
using odepkg::test::max_diff;
using odepkg::test::run;

// The same method on dense and on sparse matrices: the same trajectory up
// to the round-off of different linear algebra (and of Newton stopped at
// round-off).
TEST(SparseGeneralRattle, DenseAndSparseGiveTheSameTrajectory) {
  for (bool shake : {false, true}) {
    MobileChain mc;
    mc.chain.N = 20;
    const Vec x0 = mc.chain.zigzag(0.3, 0.9);
    auto Pd = mc.make(false), Ps = mc.make(true);
    Rattle rd(*Pd, false, shake), rs(*Ps, false, shake);
    ASSERT_TRUE(rs.sparse());
    ASSERT_FALSE(rd.sparse());
    const int n = 300;
    const auto yd = run(*Pd, rd, x0, 0.01, n), ys = run(*Ps, rs, x0, 0.01, n);
    ASSERT_EQ(ys.size(), static_cast<size_t>(n));
    const double diff = max_diff(yd, ys), scale = yd.back().lpNorm<Eigen::Infinity>();
    std::printf("N = 20, %s, %d steps: max |y_dense - y_sparse| = %.3g (|y| %.3g); f calls %ld/%ld\n",
                shake ? "SHAKE" : "RATTLE", n, diff, scale, Pd->stats().field_evals, Ps->stats().field_evals);
    EXPECT_LT(diff, 1e-12 * std::max(1.0, scale));
  }
}

// Without a HamiltonianHessFcn the Hessian is differenced densely and its
// nonzeros kept while 4 d^2 <= 4e6 (the trajectory of the differenced dense
// path), and refused above.
TEST(SparseGeneralRattle, DifferencedHessianWhereSmallRefusedWhereLarge) {
  MobileChain mc;
  mc.chain.N = 10;
  const Vec x0 = mc.chain.zigzag(0.3, 0.9);
  auto Pd = mc.make(false, false), Ps = mc.make(true, false);
  Rattle rd(*Pd, false), rs(*Ps, false);
  const auto yd = run(*Pd, rd, x0, 0.01, 100), ys = run(*Ps, rs, x0, 0.01, 100);
  EXPECT_LT(max_diff(yd, ys), 1e-12);

  mc.chain.N = 501;  // d = 1002, (2d)^2 > 4e6
  auto Pl = mc.make(true, false);
  try {
    Rattle rl(*Pl, false);
    FAIL() << "not refused";
  } catch (const InputError& e) {
    EXPECT_EQ(e.id, "invalidOption");
    EXPECT_NE(std::string(e.what()).find("HamiltonianHessFcn"), std::string::npos) << e.what();
  }
}

// A long chain: the constraints and the hidden constraints at round-off,
// the energy without drift, the cost per step about linear in N.
TEST(SparseGeneralRattle, LongChainStaysOnTheManifoldWithoutDrift) {
  double ms_small = 0.0;
  for (int N : {1000, 10000}) {
    MobileChain mc;
    mc.chain.N = N;
    mc.eps = 0.05;
    const Vec x0 = mc.chain.straight(1.5);  // near vertical: swings as a whole
    auto P = mc.make(true);
    Rattle r(*P, false);
    const int n = N == 10000 ? 60 : 300;
    // h omega below Stormer-Verlet's bound 2 for the top's transverse
    // waves, omega ~ 2 sqrt(N) (the tension there is ~ N)
    const double h = 0.005;
    Point a(P->state_size()), b(P->state_size());
    a.set(0.0, x0);
    const double e0 = mc.energy(x0);
    double gmax = 0.0, hmax = 0.0, emax = 0.0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(r.step(a, h, b), StepStatus::Success) << "N = " << N << ", step " << i;
      const auto res = mc.residuals(b.x);
      gmax = std::max(gmax, res.first);
      hmax = std::max(hmax, res.second);
      emax = std::max(emax, std::abs(mc.energy(b.x) - e0));
      std::swap(a, b);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / n;
    const double qn = a.x.head(mc.d()).lpNorm<Eigen::Infinity>();
    std::printf("N = %d, %d steps of h = %g: max |g| = %.3g, max |G H_p| = %.3g, max |E - E0| = %.3g (|E0| %.3g), "
                "%.3g ms/step, %ld Newton iterations, %ld LU\n",
                N, n, h, gmax, hmax, emax, std::abs(e0), ms, P->stats().newton_iterations,
                P->stats().lu_factorizations);
    // |q| ~ N: the links x_k - x_{k-1} carry the round-off eps N
    EXPECT_LT(gmax, 64 * kEpsMachine * qn);
    EXPECT_LT(hmax, 1e-12);
    // bounded, O(h^2) energy error, no drift: compared below with the
    // error of the first tenth of the run
    EXPECT_LT(emax, 1e-2 * std::abs(e0) + 1e-2);
    if (N == 1000) ms_small = ms;
    if (N == 10000) {
      EXPECT_LT(ms, 40.0 * ms_small) << "far from linear in N";
    }
  }
}

// Energy without drift: the error over a long run stays at the level of
// its first stretch (a symplectic method's bounded oscillation).
TEST(SparseGeneralRattle, EnergyErrorDoesNotGrow) {
  MobileChain mc;
  mc.chain.N = 50;
  const Vec x0 = mc.chain.straight(1.3);
  auto P = mc.make(true);
  Rattle r(*P, false);
  const double e0 = mc.energy(x0);
  Point a(P->state_size()), b(P->state_size());
  a.set(0.0, x0);
  double first = 0.0, rest = 0.0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(r.step(a, 0.01, b), StepStatus::Success) << "step " << i;
    const double e = std::abs(mc.energy(b.x) - e0);
    (i < n / 10 ? first : rest) = std::max(i < n / 10 ? first : rest, e);
    std::swap(a, b);
  }
  std::printf("N = 50, %d steps: max |E - E0| over the first tenth %.3g, over the rest %.3g\n", n, first, rest);
  EXPECT_LT(rest, 3.0 * first);
}

// Order 2: the error at t = 0.5 against a run with h/64, fitted slope.
TEST(SparseGeneralRattle, OrderTwo) {
  MobileChain mc;
  mc.chain.N = 10;
  const Vec x0 = mc.chain.zigzag(0.4, 1.1);
  const double T = 0.5;
  auto at_T = [&](double h) {
    auto P = mc.make(true);
    Rattle r(*P, false);
    return run(*P, r, x0, h, static_cast<int>(std::lround(T / h)), false).back();
  };
  const Vec ref = at_T(T / 1280);
  std::vector<double> lh, le;
  for (int k : {20, 40, 80, 160}) {
    const double h = T / k;
    lh.push_back(std::log(h));
    le.push_back(std::log((at_T(h) - ref).lpNorm<Eigen::Infinity>()));
  }
  // least-squares slope of log e against log h
  const double n = lh.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < lh.size(); ++i) {
    sx += lh[i];
    sy += le[i];
    sxx += lh[i] * lh[i];
    sxy += lh[i] * le[i];
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  std::printf("fitted order %.3f\n", slope);
  EXPECT_NEAR(slope, 2.0, 0.15);
}

// A link listed twice (m = N + 1, rank N): rank deficiency detected on the
// sparse path (the warning's bookkeeping), the run goes on, on the manifold,
// with the trajectory of the chain without the duplicate.
TEST(SparseGeneralRattle, RedundantConstraintIsDetectedAndHarmless) {
  MobileChain mc, dup;
  mc.chain.N = dup.chain.N = 15;
  dup.chain.duplicate = true;
  const Vec x0 = mc.chain.zigzag(0.3, 0.9);
  for (bool shake : {false, true}) {
    auto P = mc.make(true), Pd = dup.make(true);
    Rattle r(*P, false, shake), rd(*Pd, false, shake);
    const auto y = run(*P, r, x0, 0.01, 200), yd = run(*Pd, rd, x0, 0.01, 200);
    ASSERT_EQ(yd.size(), 200u);
    EXPECT_TRUE(rd.rank_deficiency_seen());
    EXPECT_FALSE(r.rank_deficiency_seen());
    EXPECT_GT(Pd->stats().rank_deficient, 0);
    const double diff = max_diff(y, yd);
    std::printf("duplicate link, %s: max |y - y_dup| = %.3g, condition estimate %g\n", shake ? "SHAKE" : "RATTLE",
                diff, rd.condition_estimate());
    EXPECT_LT(diff, 1e-10);
    EXPECT_LT(dup.residuals(yd.back()).first, 1e-12);
  }
}

// The chain's constraints written on phase space, g(q, p) = g(q)
// (PhaseSpaceConstraints: the geometric path with the g Hessians' term of
// {g_i, {g_j, H}} and the user's fibre flow (q, p - G^T s)), over the
// midpoint rule and Stormer-Verlet: dense and sparse Dg and Hessians give
// the same trajectory to round-off.
TEST(SparseGeneralRattle, PhaseSpaceConstraintsDenseAndSparse) {
  MobileChain mc;
  mc.chain.N = 12;
  const Chain c = mc.chain;
  const int d = c.d(), n = 2 * d, m = c.m();
  const Vec x0 = c.straight(1.3);
  // [H_1 ... H_m] (2d x 2d m): H_k = 2 (e_k - e_{k-1})(e_k - e_{k-1})^T per coordinate
  auto hess_entries = [c, n](auto put) {
    for (int k = 0; k < c.N; ++k)
      for (int a = 0; a < 2; ++a) {
        const int i = 2 * k + a, j = 2 * k - 2 + a;
        put(i, k * n + i, 2.0);
        if (k) {
          put(j, k * n + j, 2.0);
          put(i, k * n + j, -2.0);
          put(j, k * n + i, -2.0);
        }
      }
  };
  auto flow = [c, d](const ConstVecRef& z, const ConstVecRef& s, VecRef out) {
    SpMat G;
    c.G_sparse(z.head(d), G);
    out = z;
    out.tail(d) -= G.transpose() * s;
  };
  for (const char* base : {"midpoint", "stormer_verlet"}) {
    std::vector<Vec> y[2];
    for (int sparse = 0; sparse < 2; ++sparse) {
      auto P = mc.make(sparse == 1);
      auto g = std::make_unique<PhaseSpaceConstraints>(
          d, m, P->stats(), [c](const ConstVecRef& z, VecRef out) { c.g(z.head(c.d()), out); },
          [c, d](const ConstVecRef& z, MatRef Dg) {
            Dg.setZero();
            c.G_dense(z.head(d), Dg.leftCols(d));
          },
          [hess_entries](const ConstVecRef&, MatRef H) {
            H.setZero();
            hess_entries([&](int i, int j, double v) { H(i, j) = v; });
          });
      if (sparse)
        g->set_sparse(
            [c, d, m](const ConstVecRef& z, SpMat& Dg) {
              c.G_sparse(z.head(d), Dg);
              Dg.conservativeResize(m, 2 * d);
            },
            [hess_entries, n, m](const ConstVecRef&, SpMat& H) {
              std::vector<Eigen::Triplet<double>> t;
              hess_entries([&](int i, int j, double v) { t.emplace_back(i, j, v); });
              H.resize(n, n * m);
              H.setFromTriplets(t.begin(), t.end());
            });
      auto fibre = std::make_unique<UserFlowFibre>(d, flow, P->stats());
      GeometricRattle gr(*P, std::move(g), std::move(fibre), make_base_method(base, *P), false);
      EXPECT_EQ(gr.sparse(), sparse == 1);
      y[sparse] = run(*P, gr, x0, 0.01, 200);
    }
    ASSERT_EQ(y[1].size(), 200u);
    const double diff = max_diff(y[0], y[1]);
    const auto res = mc.residuals(y[1].back());
    std::printf("g(q, p), %s: max |y_dense - y_sparse| = %.3g; |g| %.3g, |Dg f| %.3g at the end\n", base, diff,
                res.first, res.second);
    EXPECT_LT(diff, 1e-12);
    EXPECT_LT(res.first, 1e-13);
    EXPECT_LT(res.second, 1e-12);
  }
}

// The sparse LU's rank test and its QR fall-back on a small matrix.
TEST(SparseRankRevealingLU, SolvesRegularAndFlagsSingular) {
  Mat A(3, 3);
  A << 4, 1, 0, 1, 3, 1, 0, 1, 2;
  SpMat S = A.sparseView();
  SparseRankRevealingLU lu(1e-12);
  ASSERT_TRUE(lu.compute(S, 0));
  EXPECT_FALSE(lu.rank_deficient());
  Vec b(3), x(3);
  b << 1, 2, 3;
  lu.solve(b, x);
  EXPECT_LT((A * x - b).norm(), 1e-14);
  A.row(2) = A.row(1);  // rank 2, consistent right-hand side
  S = A.sparseView();
  ASSERT_TRUE(lu.compute(S, 1));
  EXPECT_TRUE(lu.rank_deficient());
  b(2) = b(1);
  lu.solve(b, x);
  EXPECT_LT((A * x - b).norm(), 1e-13);
}

// A regular matrix that needs pivoting (a zero leading pivot): the LU
// without pivoting fails, SparseLU solves it, and it is not called
// rank-deficient; after a run of such calls a definite matrix on the same
// pattern is again solved to round-off.
TEST(SparseRankRevealingLU, RegularMatrixThatNeedsPivoting) {
  Mat A(3, 3);
  A << 0, 1, 0, 1, 0, 1, 0, 1, 3;
  SparseRankRevealingLU lu(1e-12);
  Vec b(3), x(3);
  b << 1, 2, 3;
  for (int call = 0; call < 40; ++call) {
    Mat Ac = A;
    Ac(2, 2) += 1e-3 * call;
    SpMat S = Ac.sparseView();
    ASSERT_TRUE(lu.compute(S, 0));
    EXPECT_FALSE(lu.rank_deficient());
    lu.solve(b, x);
    EXPECT_LT((Ac * x - b).norm(), 1e-13) << "call " << call;
  }
  Mat D(3, 3);
  D << 4, 1, 0, 1, 3, 1, 0, 1, 2;  // the same pattern but for the zero diagonal entries
  SpMat S = D.sparseView();
  ASSERT_TRUE(lu.compute(S, 1));
  EXPECT_FALSE(lu.rank_deficient());
  lu.solve(b, x);
  EXPECT_LT((D * x - b).norm(), 1e-14);
}

}  // namespace
