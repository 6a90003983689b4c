// sparse_rattlie_test.cc — the sparse RATTLie (SparseRattLie: sparse B,
// block-diagonal M on a product group) on a chain of rigid rods on
// (S³ × R³)^N: the same trajectory as the dense RattLie (N = 5), constraints
// at round-off and energy without drift for N = 1000, order 2 against a
// refined run, memory O(nnz) for N = 10⁴, rank deficiency, velocity-dependent
// forces, a composition, and the group syntax "(S3xR3)^N".
#include "EigenConfig.hpp"

#include "LieChainProblem.hpp"
#include "FixedSteps.hpp"
#include "TestProblems.hpp"
#include "composition/CompositionStepper.hpp"
#include "lie/LieInitialData.hpp"
#include "lie/RattLie.hpp"
#include "lie/SparseRattLie.hpp"
#include "loop/Integrator.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace odepkg;
using namespace odepkg::lie;
using test::RodChain;

namespace {

using Traj = test::IntegratedRun;
using test::integrate_fixed;

Vec consistent_y0(LieGroupProblem& lp, const RodChain& c, bool hanging = false, double swing = 0.1) {
  Vec y = c.y0(hanging, swing);
  const LieProjectionResult pr = project_initial_data(lp, y, 1e-14);
  EXPECT_TRUE(pr.converged);
  return y;
}

/// max over the states of |Φ| and |B v|.
std::pair<double, double> residuals(const RodChain& c, const std::vector<Vec>& ys) {
  double ph = 0, bv = 0;
  Vec phi(c.m());
  SpMat B;
  for (const Vec& y : ys) {
    c.phi(y.head(c.nq()), phi);
    c.grad_sparse(y.head(c.nq()), B);
    ph = std::max(ph, phi.lpNorm<Eigen::Infinity>());
    bv = std::max(bv, (B * y.tail(c.n())).lpNorm<Eigen::Infinity>());
  }
  return {ph, bv};
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

TEST(SparseRattLie, GroupSyntaxRepeatsAWholeProduct) {
  auto G = make_lie_group("(S3xR3)^3", 0);
  EXPECT_EQ(G->name(), "S3xR3xS3xR3xS3xR3");
  EXPECT_EQ(G->dim(), 18);
  EXPECT_EQ(G->coord_size(), 21);
  EXPECT_EQ(make_lie_group("((SO3xR3)^2xR1)^2xS3", 0)->name(), "SO3xR3xSO3xR3xR1xSO3xR3xSO3xR3xR1xS3");
  EXPECT_EQ(make_lie_group("(S3)^2", 0)->name(), "S3xS3");
  EXPECT_EQ(make_lie_group("(S3xR3^2)^2", 0)->name(), "S3xR3xR3xS3xR3xR3");
  EXPECT_EQ(make_lie_group("(S3xR3)^10000", 0)->dim(), 60000);
  for (const char* bad : {"(S3xR3", "S3xR3)", "(S3xR3)^0", "(S3xR3)2", "()", "(S3xR3)^", "(S3xSU2)^2", "(S3)(R3)"}) {
    try {
      (void)make_lie_group(bad, 0);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.id, "invalidOption") << bad;
      EXPECT_NE(std::string(e.what()).find(std::string("in \"") + bad + "\""), std::string::npos) << e.what();
    }
  }
}

TEST(SparseRattLie, SameTrajectoryAsTheDensePath) {
  // N = 5 rods, 400 steps of 1e-2: the same discrete map; measured max
  // difference ~1e-13 (round-off, amplified by the chain's chaotic motion).
  const RodChain c(5);
  auto dense = c.problem(false), sparse = c.problem(true);
  const Vec y0 = consistent_y0(*dense, c);
  Vec y0s = c.y0();
  project_initial_data(*sparse, y0s, 1e-14);
  EXPECT_LT((y0 - y0s).lpNorm<Eigen::Infinity>(), 1e-13);
  RattLie a(*dense, NewtonOptions());
  SparseRattLie b(*sparse, NewtonOptions());
  const Traj ra = integrate_fixed(*dense, a, y0, 1e-2, 400), rb = integrate_fixed(*sparse, b, y0, 1e-2, 400);
  ASSERT_TRUE(ra.ok && rb.ok);
  double diff = 0;
  for (std::size_t k = 0; k < ra.y.size(); ++k) diff = std::max(diff, (ra.y[k] - rb.y[k]).lpNorm<Eigen::Infinity>());
  std::printf("dense vs sparse, N = 5, 400 steps: max difference %.3g; Phi calls %ld vs %ld, inner sweeps %.2f per "
              "Newton iteration\n",
              diff, ra.stats.constraint_evals, rb.stats.constraint_evals,
              double(b.inner_sweeps()) / double(rb.stats.newton_iterations));
  EXPECT_LT(diff, 1e-9);
  std::printf("residuals: dense %.3g %.3g, sparse %.3g %.3g\n", ra.stats.max_constraint_residual,
              ra.stats.max_hidden_residual, rb.stats.max_constraint_residual, rb.stats.max_hidden_residual);
  EXPECT_LT(rb.stats.max_constraint_residual, 4 * std::max(ra.stats.max_constraint_residual, 1e-16));
  EXPECT_LT(rb.stats.max_hidden_residual, 4 * std::max(ra.stats.max_hidden_residual, 1e-16));
}

TEST(SparseRattLie, EnergyWithoutDrift) {
  // N = 100 hanging rods set swinging, 40000 steps of 2e-3 (t = 80): the
  // energy error is bounded; its maximum over each tenth after the first
  // (the motion developing) does not grow.
  const RodChain c(100);
  auto lp = c.problem(true);
  const Vec y0 = consistent_y0(*lp, c, true, 0.05);
  SparseRattLie st(*lp, NewtonOptions());
  const long steps = 40000;
  std::vector<double> E;
  E.reserve(steps + 1);
  const Traj r = integrate_fixed(*lp, st, y0, 2e-3, steps, false, [&](const Vec& y) { E.push_back(c.energy(y)); });
  ASSERT_TRUE(r.ok) << r.message;
  std::vector<double> tenth(10, 0.0);
  for (std::size_t k = 0; k < E.size(); ++k) {
    double& t = tenth[std::min<std::size_t>(9, 10 * k / E.size())];
    t = std::max(t, std::abs(E[k] - E[0]));
  }
  std::printf("N = 100, max |E - E0| per tenth of t in [0, 80] (E0 = %.4g):", E[0]);
  for (double e : tenth) std::printf(" %.3g", e);
  std::printf("\n");
  const double later = *std::max_element(tenth.begin() + 1, tenth.begin() + 5);
  EXPECT_LT(*std::max_element(tenth.begin() + 5, tenth.end()), 1.5 * later);
}

TEST(SparseRattLie, LongChainAtRoundOff) {
  // N = 1000 rods (m = 3000, n = 6000) hanging and swinging, 2000 steps of
  // 2e-3 (the zigzag mode at the top, ω² ≈ 12 T/(m ℓ) with the tension
  // T = 9810 N, has h ω = 0.7; Störmer–Verlet's limit is 2): |Φ| and |B v| at round-off at every step, the energy error small
  // (its growth while the swing develops is the O(h²) error of a growing
  // motion; EnergyWithoutDrift follows it further on a shorter chain); the
  // states are checked as they come (not stored).
  const RodChain c(1000);
  auto lp = c.problem(true);
  const Vec y0 = consistent_y0(*lp, c, true, 0.01);  // the free end at 10 m/s
  SparseRattLie st(*lp, NewtonOptions());
  const long steps = 2000;
  std::vector<double> E;
  double ph = 0, bv = 0, qmax = 0;
  auto each = [&](const Vec& y) {
    E.push_back(c.energy(y));
    const auto r = residuals(c, {y});
    ph = std::max(ph, r.first);
    bv = std::max(bv, r.second);
    qmax = std::max(qmax, y.head(c.nq()).lpNorm<Eigen::Infinity>());
  };
  const auto t0 = std::chrono::steady_clock::now();
  const Traj r = integrate_fixed(*lp, st, y0, 2e-3, steps, false, each);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok) << r.message;
  double dE = 0;
  for (double e : E) dE = std::max(dE, std::abs(e - E[0]));
  std::printf("N = 1000: %.2f ms/step (with the checks), |Phi| %.2g, |B v| %.2g, |E - E0| %.3g (E0 = %.4g), "
              "Newton %.2f it/step, inner %.2f sweeps/it, %ld restarts, %ld LU of S\n",
              1e3 * secs / steps, ph, bv, dE, E[0], double(r.stats.newton_iterations) / steps,
              double(st.inner_sweeps()) / double(r.stats.newton_iterations), st.inner_restarts(),
              st.schur_factorizations());
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_LT(ph, 16 * eps * qmax);  // round-off of Φ at positions up to |q|
  EXPECT_LT(bv, 1e-11);
  EXPECT_LT(dE, 1e-7 * std::abs(E[0]));
}

TEST(SparseRattLie, OrderTwoAgainstARefinedRun) {
  const RodChain c(4);
  const double T = 0.25;
  auto final_state = [&](double h) {
    auto lp = c.problem(true);
    const Vec y0 = consistent_y0(*lp, c);
    SparseRattLie st(*lp, NewtonOptions());
    const Traj r = integrate_fixed(*lp, st, y0, h, std::lround(T / h), false);
    EXPECT_TRUE(r.ok);
    return r.y.back();
  };
  const Vec ref = final_state(std::ldexp(1.0, -13));
  std::vector<double> hs, errs;
  for (int k = 6; k <= 9; ++k) {
    hs.push_back(std::ldexp(1.0, -k));
    errs.push_back((final_state(hs.back()) - ref).lpNorm<Eigen::Infinity>());
    std::printf("h = 2^-%d: error %.4g\n", k, errs.back());
  }
  EXPECT_NEAR(test::fitted_order(hs, errs), 2.0, 0.1);
}

TEST(SparseRattLie, TenThousandBodiesInLinearMemory) {
  // N = 10⁴ (m = 3·10⁴, n = 6·10⁴): a dense B would be 14 GB, a dense M or
  // J 29 GB; the peak resident memory stays far below one of them.
  const RodChain c(10000);
  auto lp = c.problem(true);
  const Vec y0 = consistent_y0(*lp, c, true, 0.001);  // the free end at 10 m/s
  SparseRattLie st(*lp, NewtonOptions());
  const auto t0 = std::chrono::steady_clock::now();
  const Traj r = integrate_fixed(*lp, st, y0, 5e-4, 5, false);  // h ω = 0.5 at the top
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok) << r.message;
  const long kb = peak_rss_kb();
  std::printf("N = 10^4: %.1f ms/step, peak RSS %.1f MB\n", 1e3 * secs / 5, kb / 1024.0);
  EXPECT_LT(kb, 400L * 1024);
  // round-off of Φ at positions up to |x| = 10⁴
  EXPECT_LT(r.stats.max_constraint_residual, 16 * std::numeric_limits<double>::epsilon() * 1e4);
  EXPECT_LT(r.stats.max_hidden_residual, 1e-12);
}

TEST(SparseRattLie, RedundantConstraintsAreReportedAndHarmless) {
  // The pin given twice (3 redundant rows): the motion of the chain without
  // them, the rank deficiency counted.
  const RodChain c(4);
  auto base = c.problem(true);
  const Vec y0 = consistent_y0(*base, c);
  const int m = c.m() + 3;
  auto f = [c](double, const ConstVecRef&, VecRef out) { c.force(out); };
  LieGroupProblem lp(make_lie_group("(S3xR3)^4", c.nq() + c.n()), c.block_mass(), f);
  lp.set_constraints(m, [c](const ConstVecRef& q, VecRef out) {
    c.phi(q, out.head(c.m()));
    out.tail(3) = out.head(3);
  });
  lp.set_sparse_constraint_grad([c, m](const ConstVecRef& q, SpMat& B) {
    std::vector<Eigen::Triplet<double>> t;
    c.triplets(q, t);
    const std::size_t k = t.size();
    for (std::size_t i = 0; i < k; ++i)
      if (t[i].row() < 3) t.emplace_back(c.m() + t[i].row(), t[i].col(), t[i].value());
    B.resize(m, c.n());
    B.setFromTriplets(t.begin(), t.end());
  });
  SparseRattLie a(*base, NewtonOptions()), b(lp, NewtonOptions());
  const Traj ra = integrate_fixed(*base, a, y0, 1e-2, 100), rb = integrate_fixed(lp, b, y0, 1e-2, 100);
  ASSERT_TRUE(ra.ok);
  ASSERT_TRUE(rb.ok) << rb.message;
  EXPECT_TRUE(b.rank_deficiency_seen());
  EXPECT_GT(rb.stats.rank_deficient, 0);
  double diff = 0;
  for (std::size_t k = 0; k < ra.y.size(); ++k) diff = std::max(diff, (ra.y[k] - rb.y[k]).lpNorm<Eigen::Infinity>());
  std::printf("redundant pin: max difference %.3g\n", diff);
  EXPECT_LT(diff, 1e-9);
}

TEST(SparseRattLie, VelocityDependentForceMatchesTheDensePath) {
  // Viscous damping of the translations, f += c ẋ: detected, solved by the
  // fixed-point sweeps; the dense path's Newton on (v, μ) gives the same map.
  const RodChain c(5);
  const double damping = 0.5;
  auto make = [&](bool sparse) {
    auto f = [c, damping](double, const ConstVecRef& y, VecRef out) {
      c.force(out);
      for (int k = 0; k < c.N; ++k) out.segment(6 * k + 3, 3) += damping * y.segment(c.nq() + 6 * k + 3, 3);
    };
    const std::string spec = "(S3xR3)^5";
    auto lp = sparse ? std::make_unique<LieGroupProblem>(make_lie_group(spec, 0), c.block_mass(), f)
                     : std::make_unique<LieGroupProblem>(make_lie_group(spec, 0), c.dense_mass(), f);
    lp->set_constraints(
        c.m(), [c](const ConstVecRef& q, VecRef out) { c.phi(q, out); },
        [c](const ConstVecRef& q, MatRef B) { c.grad_dense(q, B); });
    if (sparse) lp->set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& B) { c.grad_sparse(q, B); });
    return lp;
  };
  auto dense = make(false), sparse = make(true);
  const Vec y0 = consistent_y0(*dense, c);
  RattLie a(*dense, NewtonOptions());
  SparseRattLie b(*sparse, NewtonOptions());
  const Traj ra = integrate_fixed(*dense, a, y0, 1e-2, 200), rb = integrate_fixed(*sparse, b, y0, 1e-2, 200);
  ASSERT_TRUE(ra.ok && rb.ok);
  EXPECT_TRUE(a.velocity_dependent());
  EXPECT_TRUE(b.velocity_dependent());
  double diff = 0;
  for (std::size_t k = 0; k < ra.y.size(); ++k) diff = std::max(diff, (ra.y[k] - rb.y[k]).lpNorm<Eigen::Infinity>());
  std::printf("damped chain: dense vs sparse max difference %.3g\n", diff);
  EXPECT_LT(diff, 1e-9);
  EXPECT_LT(rb.stats.max_hidden_residual, 1e-13);
}

TEST(SparseRattLie, CompositionOfOrderFour) {
  // The triple jump over the sparse step, against the same over the dense one.
  const RodChain c(4);
  auto dense = c.problem(false), sparse = c.problem(true);
  const Vec y0 = consistent_y0(*dense, c);
  auto a = std::make_unique<RattLie>(*dense, NewtonOptions());
  auto b = std::make_unique<SparseRattLie>(*sparse, NewtonOptions());
  CompositionStepper ca(std::move(a), *composition::find_composition("TripleJump4"));
  CompositionStepper cb(std::move(b), *composition::find_composition("TripleJump4"));
  const Traj ra = integrate_fixed(*dense, ca, y0, 2e-2, 100), rb = integrate_fixed(*sparse, cb, y0, 2e-2, 100);
  ASSERT_TRUE(ra.ok && rb.ok);
  double diff = 0;
  for (std::size_t k = 0; k < ra.y.size(); ++k) diff = std::max(diff, (ra.y[k] - rb.y[k]).lpNorm<Eigen::Infinity>());
  std::printf("TripleJump4: dense vs sparse max difference %.3g\n", diff);
  EXPECT_LT(diff, 1e-9);
}

TEST(SparseRattLie, CoupledMassIsRefused) {
  const RodChain c(2);
  Mat M = c.dense_mass();
  M(0, 6) = M(6, 0) = 1e-3;  // couples the two bodies
  auto f = [c](double, const ConstVecRef&, VecRef out) { c.force(out); };
  LieGroupProblem lp(make_lie_group("(S3xR3)^2", 0), M, f);
  lp.set_constraints(c.m(), [c](const ConstVecRef& q, VecRef out) { c.phi(q, out); });
  lp.set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& B) { c.grad_sparse(q, B); });
  try {
    SparseRattLie st(lp, NewtonOptions());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.id, "invalidOption");
    EXPECT_NE(std::string(e.what()).find("MassMatrix"), std::string::npos);
  }
}


TEST(SparseRattLie, ChainJacobianMatchesDifferences) {
  // the fixture's B against differences of Φ along the group (at a state
  // away from the symmetric start)
  const RodChain c(6);
  auto lp = c.problem(true);
  Vec y = c.y0(false);
  for (int k = 0; k < c.N; ++k) {
    Eigen::Vector4d p(1.0, 0.1 * k, -0.2, 0.05 * k * k);
    y.segment(7 * k, 4) = p.normalized();
  }
  EXPECT_NO_THROW(lp->check_derivatives(y.head(c.nq())));
}
