// Tests of the sparse constraint gradients: HamiltonianProblem's sparse
// ConstraintGradFcn, SparseGramSolver, SparseSeparableRattle (Rattle's
// separable path for a sparse G) and the sparse initial projection, on the
// planar hanging chain (ChainProblem.hpp).
#include "ConstraintProjection.hpp"
#include "constrained/Rattle.hpp"
#include "constrained/SparseGramSolver.hpp"
#include "constrained/SparseRowView.hpp"
#include "ChainProblem.hpp"
#include "SphereEdges.hpp"
#include "FixedSteps.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

using namespace odepkg;
using odepkg::test::Chain;
using odepkg::test::Csc64;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

using odepkg::test::max_diff;
using odepkg::test::run;

// Dense and sparse G: the same method, so the same trajectory up to the
// round-off of different (but equally accurate) linear algebra.
TEST(SparseRattle, DenseAndSparseGiveTheSameTrajectory) {
  for (bool shake : {false, true}) {
    Chain c;
    c.N = 20;
    const Vec x0 = c.zigzag(0.3, 0.9);
    auto Pd = c.make(false), Ps = c.make(true);
    Rattle rd(*Pd, true, shake), rs(*Ps, true, shake);
    const auto yd = run(*Pd, rd, x0, 0.01, 100), ys = run(*Ps, rs, x0, 0.01, 100);
    ASSERT_EQ(ys.size(), 100u);
    const double diff = max_diff(yd, ys), scale = yd.back().lpNorm<Eigen::Infinity>();
    std::printf("N = 20, %s, 100 steps: max |y_dense - y_sparse| = %.3g (|y| %.3g); calls of f %ld/%ld, g %ld/%ld, "
                "G %ld/%ld\n",
                shake ? "SHAKE" : "RATTLE", diff, scale, Pd->stats().field_evals, Ps->stats().field_evals,
                Pd->stats().constraint_evals, Ps->stats().constraint_evals, Pd->stats().constraint_grad_evals,
                Ps->stats().constraint_grad_evals);
    EXPECT_LE(diff, 1e-11 * scale);
    EXPECT_EQ(Ps->stats().rank_deficient, 0);
    EXPECT_FALSE(rs.rank_deficiency_seen());
  }
}

// The position Newton takes K_0 = G_0 W G_0^T, already factorized by the
// last velocity system (no G_1, no factorization for the positions); where
// it converges more slowly than S = G_1 W G_0^T would (a short chain, a
// chain moving fast) S is taken for a while.  The trajectory is the dense
// one up to round-off either way, with no more calls of g; on a long chain
// released at rest K_0 serves almost every step.
TEST(SparseRattle, SimplifiedNewtonAndItsFallBackToS) {
  const int n = 400;
  for (bool fast : {false, true}) {
    Chain c;
    c.N = 20;
    const Vec x0 = fast ? c.zigzag(0.3, 0.9) : c.straight(0.0);
    auto Pd = c.make(false), Ps = c.make(true);
    Rattle rd(*Pd, true), rs(*Ps, true);
    ASSERT_NE(rs.sparse_separable(), nullptr);
    const auto yd = run(*Pd, rd, x0, 0.01, n), ys = run(*Ps, rs, x0, 0.01, n);
    ASSERT_EQ(ys.size(), static_cast<size_t>(n));
    const double diff = max_diff(ys, yd), scale = yd.back().lpNorm<Eigen::Infinity>();
    std::printf("N = 20, %s, %d steps: |y_sparse - y_dense| = %.3g; position Newton with S in %ld steps; calls of G "
                "%ld, of g %ld (dense path %ld)\n",
                fast ? "zigzag" : "released at rest", n, diff, rs.sparse_separable()->exact_newton_solves(),
                Ps->stats().constraint_grad_evals, Ps->stats().constraint_evals, Pd->stats().constraint_evals);
    EXPECT_LE(diff, 1e-11 * scale);
    EXPECT_LE(Ps->stats().constraint_grad_evals, n + 2);  // G_1 per step, G(q_0) once
    EXPECT_LE(Ps->stats().constraint_evals, Pd->stats().constraint_evals + n / 20);
  }
  Chain c;
  c.N = 1000;
  const Vec x0 = c.straight(0.0);
  auto P = c.make(true);
  Rattle r(*P, true);
  const auto y = run(*P, r, x0, 0.01, n);
  ASSERT_EQ(y.size(), static_cast<size_t>(n));
  const auto res = c.residuals(y.back());
  const long exact = r.sparse_separable()->exact_newton_solves();
  std::printf("N = 1000, released at rest, %d steps: position Newton with S in %ld steps; calls of g %.2f per step; "
              "|g| %.2g, |G H_p| %.2g\n",
              n, exact, P->stats().constraint_evals / double(n), res.first, res.second);
  EXPECT_LT(exact, n / 4);
  EXPECT_LE(P->stats().constraint_evals, 2.2 * n);
  EXPECT_LE(res.first, 1e-12);
  EXPECT_LE(res.second, 1e-12);
}

namespace edges {

/// The unit sphere, H = |p|^2/2 - kappa q_3, g = q'q - 1, G = 2 q' sparse.
std::unique_ptr<HamiltonianProblem> sphere(double kappa) {
  auto P = std::make_unique<HamiltonianProblem>(3, [kappa](double, const ConstVecRef& x, VecRef dx) {
    dx.head(3) = x.tail(3);
    dx.tail(3) << 0.0, 0.0, kappa;
  });
  P->set_constraints(1, [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1.0; });
  P->set_sparse_constraint_grad([](const ConstVecRef& q, SpMat& G) {
    G.resize(1, 3);
    G.setZero();
    for (int j = 0; j < 3; ++j) G.insert(0, j) = 2.0 * q(j);
    G.makeCompressed();
  });
  return P;
}


}  // namespace edges

// Rattle.NewtonAtTheEdgesFollowsTheClosedForm for a sparse G (the sparse
// separable path, both its general step and, from the ninth step on, the
// quadratic-T step): explicit RATTLE on the sphere at h = 0.3 and 0.25,
// steps of up to a radius, against the closed form step by step; a step
// whose quadratic has no real root is refused, never taken elsewhere.
TEST(SparseRattle, NewtonAtTheEdgesFollowsTheClosedForm) {
  const double kappa = 5.0;
  std::mt19937 rng(11);
  long completed = 0, retried = 0, distant = 0, refused = 0;
  for (int trial = 0; trial < 150; ++trial) {
    double h = 0.0;
    const Vec x = sphere_edges::start(trial, rng, h);
    auto P = edges::sphere(kappa);
    Rattle r(*P, true);
    ASSERT_NE(r.sparse_separable(), nullptr);
    Point a(6), b(6);
    a.set(0.0, x);
    Vec ref = x, next(6);
    bool all = true;
    for (int k = 0; k < 10; ++k) {
      const bool solvable = sphere_edges::closed_form_step(ref, h, kappa, next);
      const StepStatus st = r.step(a, h, b);
      if (!solvable) {  // no root: refused, never a step elsewhere
        EXPECT_NE(st, StepStatus::Success) << "trial " << trial << " step " << k;
        ++refused;
        all = false;
        break;
      }
      ASSERT_EQ(st, StepStatus::Success) << "trial " << trial << " step " << k;
      EXPECT_LT((b.x - next).lpNorm<Eigen::Infinity>(), 1e-11) << "trial " << trial << " step " << k;
      ref = b.x;  // the next step from the method's own point
      std::swap(a, b);
    }
    completed += all;
    retried += P->stats().newton_retries;
    distant += P->stats().distant_roots;
  }
  std::printf("[edges, sparse G] %ld of 150 starts completed 10 steps, %ld refused a step with no root; %ld steps "
              "retried, %ld distant roots set aside\n",
              completed, refused, retried, distant);
  EXPECT_GT(completed, 100);
  EXPECT_GT(refused, 0);
  EXPECT_GT(retried, 0);
}

// Octave's sparse() drops exact zeros: a horizontal chain's vertical
// components start as zeros, so the pattern grows after the first step;
// the union of the patterns is kept and the results do not change.
TEST(SparseRattle, PatternThatGrowsIsMerged) {
  Chain c;
  c.N = 15;
  c.prune = true;
  const Vec x0 = c.straight(0.0);
  auto Pd = c.make(false), Ps = c.make(true);
  Rattle rd(*Pd, true), rs(*Ps, true);
  const auto yd = run(*Pd, rd, x0, 0.01, 60), ys = run(*Ps, rs, x0, 0.01, 60);
  ASSERT_EQ(ys.size(), 60u);
  EXPECT_LE(max_diff(yd, ys), 1e-11 * yd.back().lpNorm<Eigen::Infinity>());
  EXPECT_GE(Ps->sparse_pattern_version(), 2);  // first pattern, then the merged one
}

/// The chain with its own f (sparse or dense G).
std::unique_ptr<HamiltonianProblem> chain_with_field(const Chain& c, bool sparse, HamiltonianProblem::Field f) {
  auto P = std::make_unique<HamiltonianProblem>(c.d(), std::move(f));
  P->set_constraints(
      c.m(), [c](const ConstVecRef& q, VecRef out) { c.g(q, out); },
      sparse ? HamiltonianProblem::ConstraintGrad() : [c](const ConstVecRef& q, MatRef G) { c.G_dense(q, G); });
  if (sparse) P->set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& G) { c.G_sparse(q, G); });
  return P;
}

// After 8 steps the sparse step predicts T_p from the learned diagonal
// model and checks it, and the finiteness of f, in its half kick's pass.  A
// force or velocity that turns NaN fails the step (never a silent NaN
// state), caught there, before G_1 is evaluated (no call of G on that
// step: the general step that redoes it fails at its own call of f); the
// step from the same point succeeds once f is finite again, on the same
// trajectory as a run that never met the NaN.  RATTLE and SHAKE.
TEST(SparseRattle, NonFiniteForceFailsTheAffineStep) {
  Chain c;
  c.N = 20;
  const Vec x0 = c.zigzag(0.3, 0.9);
  for (const bool shake : {false, true})
    for (const bool in_velocity : {false, true}) {
      SCOPED_TRACE(std::string(shake ? "SHAKE, " : "RATTLE, ") + (in_velocity ? "NaN in H_p" : "NaN in the force"));
      bool poison = false;
      auto P = chain_with_field(c, true, [&poison, in_velocity](double t, const ConstVecRef& x, VecRef dx) {
        Chain::field(t, x, dx);
        if (poison) dx(in_velocity ? 3 : dx.size() - 3) = std::numeric_limits<double>::quiet_NaN();
      });
      auto Pref = chain_with_field(c, true, &Chain::field);
      Rattle r(*P, true, shake), rref(*Pref, true, shake);
      const auto yref = run(*Pref, rref, x0, 0.01, 30);
      Point a(P->state_size()), b(P->state_size());
      a.set(0.0, x0);
      for (int i = 0; i < 20; ++i) {
        ASSERT_EQ(r.step(a, 0.01, b), StepStatus::Success) << i;
        std::swap(a, b);
      }
      poison = true;
      const long G_calls = P->stats().constraint_grad_evals;
      EXPECT_EQ(r.step(a, 0.01, b), StepStatus::NonFinite);
      EXPECT_EQ(P->stats().constraint_grad_evals, G_calls);
      poison = false;
      for (int i = 20; i < 30; ++i) {
        ASSERT_EQ(r.step(a, 0.01, b), StepStatus::Success) << i;
        std::swap(a, b);
      }
      EXPECT_TRUE(a.x.allFinite());
      EXPECT_LE((a.x - yref.back()).lpNorm<Eigen::Infinity>(), 1e-12 * yref.back().lpNorm<Eigen::Infinity>());
    }
}

// A velocity that stops matching the learned model (here H_p = p up to
// t = 0.2, then 1.25 p: a kinetic energy that changes with t, still
// separable) is caught by the check in the half kick's pass: the model is
// dropped and the step redone the general way, so the sparse trajectory
// stays the dense one.
TEST(SparseRattle, VelocityModelThatStopsMatchingIsDropped) {
  Chain c;
  c.N = 20;
  const Vec x0 = c.zigzag(0.3, 0.9);
  auto f = [](double t, const ConstVecRef& x, VecRef dx) {
    Chain::field(t, x, dx);
    if (t > 0.2) dx.head(x.size() / 2) *= 1.25;
  };
  auto Pd = chain_with_field(c, false, f), Ps = chain_with_field(c, true, f);
  Rattle rd(*Pd, true), rs(*Ps, true);
  const auto yd = run(*Pd, rd, x0, 0.01, 40), ys = run(*Ps, rs, x0, 0.01, 40);
  ASSERT_EQ(ys.size(), 40u);
  EXPECT_LE(max_diff(yd, ys), 1e-11 * yd.back().lpNorm<Eigen::Infinity>());
  // and the velocity is 1.25 p after t = 0.2: G H_p = 0 holds for it
  const auto res = c.residuals(ys.back());
  EXPECT_LE(res.first, 1e-10);
}

// Equal masses M = mI: the learned model is snapped to T_p(p) = p / m
// exactly (AffineVelocity's snap_uniform) and the sweeps take the scalar;
// unequal masses keep the per-coordinate model.  Either way the trajectory
// is the dense one up to round-off.
TEST(SparseRattle, EqualMassesTakeTheScalarVelocityModel) {
  Chain c;
  c.N = 20;
  const Vec x0 = c.zigzag(0.3, 0.9);
  struct Case {
    const char* name;
    bool uniform;
    double (*inverse_mass)(Eigen::Index i);
  };
  const Case cases[] = {
      {"unit masses", true, [](Eigen::Index) { return 1.0; }},
      {"masses 3", true, [](Eigen::Index) { return 1.0 / 3.0; }},
      {"masses 1, 2, 3, ...", false, [](Eigen::Index i) { return 1.0 / (1.0 + (i / 2) % 3); }},
  };
  for (const Case& k : cases) {
    auto inv = k.inverse_mass;
    auto f = [inv](double t, const ConstVecRef& x, VecRef dx) {
      Chain::field(t, x, dx);
      const Eigen::Index d = x.size() / 2;
      for (Eigen::Index i = 0; i < d; ++i) dx(i) = x(d + i) * inv(i);  // H_p = M^{-1} p
    };
    auto Pd = chain_with_field(c, false, f), Ps = chain_with_field(c, true, f);
    Rattle rd(*Pd, true), rs(*Ps, true);
    const auto yd = run(*Pd, rd, x0, 0.01, 60), ys = run(*Ps, rs, x0, 0.01, 60);
    ASSERT_EQ(ys.size(), 60u) << k.name;
    const AffineVelocity& model = rs.sparse_separable()->velocity_model();
    ASSERT_TRUE(model.active()) << k.name;
    EXPECT_EQ(model.is_uniform(), k.uniform) << k.name;
    if (k.uniform) {
      EXPECT_EQ(model.uniform_value(), inv(0)) << k.name;
      EXPECT_EQ(model.offset().lpNorm<Eigen::Infinity>(), 0.0) << k.name;
    }
    EXPECT_LE(max_diff(yd, ys), 1e-11 * yd.back().lpNorm<Eigen::Infinity>()) << k.name;
    Vec qv = ys.back();  // [q; M^{-1} p]: the hidden constraint is G M^{-1} p = 0
    for (Eigen::Index i = 0; i < c.d(); ++i) qv(c.d() + i) *= inv(i);
    EXPECT_LE(c.residuals(qv).second, 1e-10) << k.name;
  }
}

// A problem that lends f's values in its own storage (set_field_view, as
// the oct-files lend Octave's result array) gives the trajectory of the
// same f copied into the step's buffer, bit for bit, with as many calls;
// the quadratic-T step (after 8 steps) reads them there.
TEST(SparseRattle, FieldViewGivesTheCopiedFieldsTrajectory) {
  for (bool shake : {false, true}) {
    Chain c;
    c.N = 20;
    const Vec x0 = c.zigzag(0.3, 0.9);
    auto Pc = c.make(true), Pv = c.make(true);
    auto lent = std::make_shared<Vec>(c.d() * 2);
    long viewed = 0;
    Pv->set_field_view([lent, &viewed](double t, const ConstVecRef& x) {
      Chain::field(t, x, *lent);
      ++viewed;
      return static_cast<const double*>(lent->data());
    });
    Rattle rc(*Pc, true, shake), rv(*Pv, true, shake);
    const auto yc = run(*Pc, rc, x0, 0.01, 60), yv = run(*Pv, rv, x0, 0.01, 60);
    ASSERT_EQ(yv.size(), 60u);
    EXPECT_EQ(max_diff(yc, yv), 0.0) << (shake ? "SHAKE" : "RATTLE");
    EXPECT_EQ(Pc->stats().field_evals, Pv->stats().field_evals);
    EXPECT_GE(viewed, 50) << "the quadratic-T step reads f through the view";
  }
}

// A 10^4-link chain, 200 steps: constraints and hidden constraints at
// round-off, energy bounded (symplectic: no drift).
TEST(SparseRattle, LongChainStaysOnTheManifold) {
  Chain c;
  c.N = 10000;
  const Vec x0 = c.zigzag(0.2, 0.6);
  auto P = c.make(true);
  Rattle r(*P, true);
  const double h = 0.01, E0 = c.energy(x0);
  Point a(P->state_size()), b(P->state_size());
  a.set(0.0, x0);
  double gmax = 0.0, hmax = 0.0, dE = 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(r.step(a, h, b), StepStatus::Success) << "step " << i;
    std::swap(a, b);
    const auto res = c.residuals(a.x);
    // round-off of g_k = |x_k - x_{k-1}|^2 - 1 from coordinates of size |q|,
    // of G p from entries 2|x_k - x_{k-1}| = 2 and momenta |p|
    gmax = std::max(gmax, res.first / std::max(1.0, a.x.head(c.d()).lpNorm<Eigen::Infinity>()));
    hmax = std::max(hmax, res.second / std::max(1.0, a.x.tail(c.d()).lpNorm<Eigen::Infinity>()));
    dE = std::max(dE, std::abs(c.energy(a.x) - E0));
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("N = 1e4, 200 steps: max |g|/|q| = %.3g, |G H_p|/|p| = %.3g, |H - H0| = %.3g (|H0| = %.3g); "
              "%.2f ms/step; per step f %.2f, g %.2f, G %.2f; rank deficient %ld\n",
              gmax, hmax, dE, std::abs(E0), 1e3 * sec / 200, P->stats().field_evals / 200.0,
              P->stats().constraint_evals / 200.0, P->stats().constraint_grad_evals / 200.0,
              P->stats().rank_deficient);
  EXPECT_LE(gmax, 1e-13);
  EXPECT_LE(hmax, 1e-13);
  EXPECT_LE(dE, 1e-6 * std::abs(E0));
  EXPECT_LE(P->stats().max_constraint_residual, 1e-13 * x0.lpNorm<Eigen::Infinity>() * 4);
}

// The second order of RATTLE on the sparse path: errors at t = 0.64 against
// a run with h/16.
TEST(SparseRattle, OrderTwo) {
  Chain c;
  c.N = 10;
  const Vec x0 = c.zigzag(0.3, 1.0);
  const double T = 0.64;
  auto final_state = [&](double h) {
    auto P = c.make(true);
    Rattle r(*P, true);
    const auto y = run(*P, r, x0, h, static_cast<int>(std::lround(T / h)));
    return y.back();
  };
  const Vec ref = final_state(0.04 / 32);
  std::vector<double> hs, errs;
  for (double h : {0.04, 0.02, 0.01, 0.005}) {
    hs.push_back(h);
    errs.push_back((final_state(h) - ref).lpNorm<Eigen::Infinity>());
  }
  const double order = test::fitted_order(hs, errs);
  std::printf("sparse RATTLE, chain N = 10: errors %.3g %.3g %.3g %.3g, fitted order %.3f\n", errs[0], errs[1],
              errs[2], errs[3], order);
  EXPECT_NEAR(order, 2.0, 0.1);
}

// Link 1 listed twice: every multiplier system is singular (rank N of
// N + 1); the dropped pivot is reported, and the constraint forces, hence
// the trajectory, are those of the chain listed once.
TEST(SparseRattle, DuplicatedConstraintIsReportedAndHarmless) {
  for (bool shake : {false, true}) {
    Chain c, cd;
    c.N = cd.N = 30;
    cd.duplicate = true;
    const Vec x0 = c.zigzag(0.4, 0.8);
    auto P = c.make(true), Pd = cd.make(true);
    Rattle r(*P, true, shake), rd(*Pd, true, shake);
    const auto y = run(*P, r, x0, 0.01, 100), yd = run(*Pd, rd, x0, 0.01, 100);
    ASSERT_EQ(yd.size(), 100u);
    const double diff = max_diff(y, yd);
    std::printf("duplicated link (%s): max |y - y_dup| = %.3g, rank-deficient systems %ld, cond %.3g\n",
                shake ? "SHAKE" : "RATTLE", diff, Pd->stats().rank_deficient, rd.condition_estimate());
    EXPECT_TRUE(rd.rank_deficiency_seen());
    EXPECT_EQ(rd.rank_deficiency_t(), 0.0);
    EXPECT_GT(Pd->stats().rank_deficient, 0);
    EXPECT_LE(diff, 1e-10 * y.back().lpNorm<Eigen::Infinity>());
    const auto res = cd.residuals(yd.back());
    EXPECT_LE(res.first, 1e-13 * 30);
    if (!shake) {
      EXPECT_LE(res.second, 1e-12);
    }
  }
}

// A closed ring folded flat: x_1 = (1, 0), x_2 = (2, 0), x_3 = (1, 0), the
// closing link |x_3| = 1.  All four gradients lie in the span of the three
// horizontal coordinates: G is rank-deficient at the start (a truly singular
// configuration); gravity moves the ring out of it.  Warned and run through.
TEST(SparseRattle, FoldedRingIsSingularAndRunsThrough) {
  Chain c;
  c.N = 3;
  c.ring = true;
  c.ring_R2 = 1.0;
  Vec x0 = Vec::Zero(12);
  x0.head(6) << 1, 0, 2, 0, 1, 0;
  Vec gv(c.m());
  c.g(x0.head(6), gv);
  ASSERT_LE(gv.lpNorm<Eigen::Infinity>(), 0.0);
  auto P = c.make(true);
  Rattle r(*P, true);
  const auto y = run(*P, r, x0, 0.01, 100);
  ASSERT_EQ(y.size(), 100u);
  EXPECT_TRUE(r.rank_deficiency_seen());
  EXPECT_EQ(r.rank_deficiency_t(), 0.0);
  const auto res = c.residuals(y.back());
  std::printf("folded ring: rank-deficient systems %ld; after 100 steps |g| = %.3g, |G H_p| = %.3g, y = [%g %g %g]\n",
              P->stats().rank_deficient, res.first, res.second, y.back()(1), y.back()(3), y.back()(5));
  EXPECT_LE(res.first, 1e-13);
  EXPECT_LE(res.second, 1e-12);
  EXPECT_LT(y.back()(1), -0.01);  // it fell
}

// K = G G^T of a chain: the sparse LDL^T solve against a dense one, and
// the truncated solve of a singular K against the minimum-norm solution
// (equal constraint forces G^T x).
TEST(SparseGramSolver, SolvesAndDropsTinyPivots) {
  Chain c;
  c.N = 12;
  const Vec q = c.zigzag(0.3, 0.7).head(24);
  SpMat G;
  c.G_sparse(q, G);
  SparseGramSolver s;
  const Vec w = Vec::LinSpaced(24, 1.0, 2.0);
  ASSERT_TRUE(s.factor(G, w));
  EXPECT_FALSE(s.rank_deficient());
  const Vec b = Vec::LinSpaced(12, -1.0, 1.0);
  Vec x(12);
  s.solve(b, x);
  const Mat Gd = Mat(G);
  const Mat K = Gd * w.asDiagonal() * Gd.transpose();
  EXPECT_LE((K * x - b).lpNorm<Eigen::Infinity>(), 1e-13 * K.norm() * x.norm());
  // A rank-deficient G: factorized in the expected ordering (banded or
  // AMD), its rank, and the solution of a consistent system against the
  // minimum-norm one (the constraint force G^T x to 1e-12; x itself too
  // where `min_norm_x`).
  auto check_deficient = [&](const Mat& Gm, bool natural, int rank, bool min_norm_x) {
    ASSERT_TRUE(s.factor(SpMat(Gm.sparseView()), w));
    EXPECT_EQ(s.natural_ordering(), natural);
    EXPECT_TRUE(s.rank_deficient());
    EXPECT_EQ(s.rank(), rank);
    EXPECT_FALSE(s.twisted());  // a dropped pivot: the one-sided LDL^T
    const Mat Km = Gm * w.asDiagonal() * Gm.transpose();
    const Vec bm = Km * Vec::LinSpaced(Km.rows(), 0.5, -0.5);  // consistent
    Vec xm(Km.rows());
    s.solve(bm, xm);
    const Vec xmin = Km.completeOrthogonalDecomposition().solve(bm);
    EXPECT_LE((Km * xm - bm).lpNorm<Eigen::Infinity>(), 1e-12 * bm.norm());
    EXPECT_LE((Gm.transpose() * (xm - xmin)).lpNorm<Eigen::Infinity>(), 1e-12 * (Gm.transpose() * xmin).norm());
    if (min_norm_x) {
      EXPECT_LE((xm - xmin).norm(), 1e-10 * xmin.norm());
    }
  };
  // link 1 listed again as row 12, far from its original: AMD
  Chain cd = c;
  cd.duplicate = true;
  SpMat Gdup;
  cd.G_sparse(q, Gdup);
  check_deficient(Mat(Gdup), false, 12, true);
  // the same duplicate next to its original keeps K banded: the banded LDL^T
  const Mat Gc = Mat(G);
  Mat Gb(13, 24);
  Gb << Gc.topRows(6), Gc.row(5), Gc.bottomRows(6);
  check_deficient(Gb, true, 12, true);
  // the full-rank chain through the banded path against the dense solve
  ASSERT_TRUE(s.factor(G, w));
  EXPECT_TRUE(s.natural_ordering());
  EXPECT_TRUE(s.twisted());
  s.solve(b, x);
  EXPECT_LE((K * x - b).lpNorm<Eigen::Infinity>(), 1e-13 * K.norm() * x.norm());
  // a tridiagonal K (the chain's own, b = 1) with a pivot to drop: link 6's
  // gradient scaled by 1e-9 (K_66 ~ 1e-18 of the rest)
  Mat Gt = Gc;
  Gt.row(6) *= 1e-9;
  check_deficient(Gt, true, 11, false);
}

// n values uniform in [lo, hi) from gen.
Vec uniform_vec(std::mt19937& gen, int n, double lo, double hi) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Vec v(n);
  for (int i = 0; i < n; ++i) v(i) = lo + (hi - lo) * u(gen);
  return v;
}
// A tridiagonal K (b = 1) is factorized from both ends (twisted_factor).
// K = G diag(w) G^T of a random chain-shaped G (row i on columns i and
// i + 1, |G_ii| in [1, 2], |G_i,i+1| <= 1/2: cond(K) <= 100), against a
// dense LLT solve, and its condition estimate within [1, cond_2(K)] (each
// pivot is 1 / (S^-1)_jj of a principal submatrix S of K, so in [lambda_min,
// lambda_max]).  A pivot to drop (a zero row, or one scaled by 1e-9) at
// either end, at the twist or next to it: the one-sided truncated LDL^T
// instead, rank m - 1, a solution of the consistent system with the
// minimum-norm constraint force (and x itself for the zero row).
TEST(SparseGramSolver, TwistedTridiagonalFactorization) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto chain_G = [&](int m) {
    std::vector<Eigen::Triplet<double>> t;
    for (int i = 0; i < m; ++i) {
      t.emplace_back(i, i, (u(gen) < 0.5 ? -1.0 : 1.0) * (1.0 + u(gen)));
      t.emplace_back(i, i + 1, u(gen) - 0.5);
    }
    SpMat G(m, m + 1);
    G.setFromTriplets(t.begin(), t.end());
    G.makeCompressed();
    return G;
  };
  auto random_vec = [&](int n, double lo, double hi) { return uniform_vec(gen, n, lo, hi); };
  for (const int m : {1, 2, 3, 4, 7, 64, 1001}) {
    const SpMat G = chain_G(m);
    const Vec w = random_vec(m + 1, 0.5, 2.0);
    SparseGramSolver s;
    ASSERT_TRUE(s.factor(G, w));
    EXPECT_TRUE(s.natural_ordering());
    EXPECT_EQ(s.twisted(), m > 1) << "m " << m;  // a 1 x 1 K has bandwidth 0: the general banded loop
    EXPECT_FALSE(s.rank_deficient());
    EXPECT_EQ(s.rank(), m);
    const Mat Gd = Mat(G);
    const Mat K = Gd * w.asDiagonal() * Gd.transpose();
    const Vec lambda = Eigen::SelfAdjointEigenSolver<Mat>(K, Eigen::EigenvaluesOnly).eigenvalues();
    EXPECT_GE(s.condition_estimate(), 1.0);
    EXPECT_LE(s.condition_estimate(), lambda.maxCoeff() / lambda.minCoeff() * (1.0 + 1e-12)) << "m " << m;
    const Eigen::LLT<Mat> llt(K);
    for (int r = 0; r < 3; ++r) {
      const Vec b = random_vec(m, -1.0, 1.0);
      const Vec xd = llt.solve(b);
      Vec x = b;
      s.solve(x, x);  // in place
      EXPECT_LE((x - xd).norm(), 1e-12 * xd.norm()) << "m " << m;
    }
  }
  const int m = 64;
  const SpMat G0 = chain_G(m);
  const Vec w = random_vec(m + 1, 0.5, 2.0);
  SparseGramSolver s;
  for (const int row : {0, 1, m / 2 - 1, m / 2, m / 2 + 1, m - 2, m - 1})
    for (const double scale : {0.0, 1e-9}) {
      Mat Gd = Mat(G0);
      Gd.row(row) *= scale;
      ASSERT_TRUE(s.factor(SpMat(Gd.sparseView()), w));
      EXPECT_TRUE(s.natural_ordering());
      EXPECT_FALSE(s.twisted()) << "row " << row << " scale " << scale;
      EXPECT_TRUE(s.rank_deficient());
      EXPECT_EQ(s.rank(), m - 1);
      const Mat K = Gd * w.asDiagonal() * Gd.transpose();
      const Vec b = K * random_vec(m, -1.0, 1.0);  // consistent
      Vec x(m);
      s.solve(b, x);
      const Vec xmin = K.completeOrthogonalDecomposition().solve(b);
      EXPECT_LE((K * x - b).lpNorm<Eigen::Infinity>(), 1e-12 * b.norm());
      EXPECT_LE((Gd.transpose() * (x - xmin)).lpNorm<Eigen::Infinity>(), 1e-12 * (Gd.transpose() * xmin).norm());
      if (scale == 0.0) {
        EXPECT_LE((x - xmin).norm(), 1e-12 * xmin.norm()) << "row " << row;
      }
    }
  // full rank again: the twisted factorization
  ASSERT_TRUE(s.factor(G0, w));
  EXPECT_TRUE(s.twisted());
  const Mat Gd0 = Mat(G0);
  const Mat K0 = Gd0 * w.asDiagonal() * Gd0.transpose();
  const Vec b = random_vec(m, -1.0, 1.0);
  Vec x(m);
  s.solve(b, x);
  EXPECT_LE((x - K0.llt().solve(b)).norm(), 1e-12 * x.norm());
}

// A 20 x 23 matrix of 200 random triplets (summed where they repeat): rows
// of random length, some rows (17 on) and columns empty.
SpMat random_pattern(unsigned seed) {
  std::srand(seed);
  std::vector<Eigen::Triplet<double>> t;
  for (int k = 0; k < 200; ++k)
    t.emplace_back(std::rand() % 17, std::rand() % 23, std::rand() / double(RAND_MAX) - 0.5);
  SpMat R(20, 23);
  R.setFromTriplets(t.begin(), t.end());
  R.makeCompressed();
  return R;
}

// The row-major view of a compressed-column G (step_affine's G_1 v): y = G x
// and |G|_inf against Eigen's, on a chain's G and on a random pattern; a new
// structure under a new token (or none) is analysed again.
TEST(SparseRowView, ProductAndNormAgreeWithEigen) {
  Chain c;
  c.N = 30;
  const Vec q = c.zigzag(0.2, 1.1).head(c.d());
  SpMat G;
  c.G_sparse(q, G);
  G.makeCompressed();
  SparseRowView rv;
  const Vec x = Vec::LinSpaced(c.d(), -1.0, 2.0);
  Vec y(c.m());
  rv.assign(G, 7);
  double norm = rv.multiply(x.data(), y.data());
  EXPECT_LE((y - G * x).lpNorm<Eigen::Infinity>(), 4 * kEps * (G * x).lpNorm<Eigen::Infinity>() + 1e-300);
  EXPECT_NEAR(norm, Mat(G).cwiseAbs().rowwise().sum().maxCoeff(), 4 * kEps * norm);
  // new values on the same structure, same token: only the values change
  c.G_sparse(c.zigzag(0.5, 0.4).head(c.d()), G);
  G.makeCompressed();
  rv.assign(G, 7);
  rv.multiply(x.data(), y.data());
  EXPECT_LE((y - G * x).lpNorm<Eigen::Infinity>(), 4 * kEps * (G * x).lpNorm<Eigen::Infinity>());
  // another structure (rows of random length, empty rows and columns)
  const SpMat R = random_pattern(3);
  const Vec xr = Vec::LinSpaced(23, 1.0, -3.0);
  Vec yr(20);
  for (long token : {-1L, 8L}) {
    rv.assign(R, token);
    norm = rv.multiply(xr.data(), yr.data());
    EXPECT_LE((yr - R * xr).lpNorm<Eigen::Infinity>(), 64 * kEps * Mat(R).cwiseAbs().sum());
    EXPECT_NEAR(norm, Mat(R).cwiseAbs().rowwise().sum().maxCoeff(), 64 * kEps * norm);
  }
  // assign_multiply(_scaled): assign and multiply(_scaled) in one pass, the
  // same sums (bit for bit), and the view then holds G's values
  for (const double w : {1.0, 0.3}) {
    SparseRowView a, b;
    Vec ya(20), yb(20), za(20), zb(20);
    a.assign(R, 9);
    const double na = w == 1.0 ? a.multiply(xr.data(), ya.data()) : a.multiply_scaled(xr.data(), w, ya.data());
    const double nb = w == 1.0 ? b.assign_multiply(R, 9, xr.data(), yb.data())
                               : b.assign_multiply_scaled(R, 9, xr.data(), w, yb.data());
    EXPECT_EQ(na, nb);
    EXPECT_TRUE((ya.array() == yb.array()).all()) << w;
    EXPECT_TRUE(std::equal(a.values(), a.values() + a.nonzeros(), b.values())) << w;
    a.multiply(xr.data(), za.data());
    b.multiply(xr.data(), zb.data());
    EXPECT_TRUE((za.array() == zb.array()).all()) << w;
  }
}

// The apply pass's G_1 T_p(p_1) (a scatter over G's columns, used from
// SparseSeparableRattle::kScatterHidden nonzeros on) against the row
// view's product of the same T_p(p_1): the same sums, bit for bit (up to
// the sign of a zero), for equal masses and for a stored diagonal model,
// on a chain's G and on a random pattern with empty rows and columns; the
// pass's other outputs unchanged by it.
TEST(AffineRattleSweeps, ApplyPassGivesTheRowViewsHiddenProduct) {
  Chain c;
  c.N = 30;
  SpMat Gc;
  c.G_sparse(c.zigzag(0.2, 1.1).head(c.d()), Gc);
  Gc.makeCompressed();
  const SpMat R = random_pattern(5);
  for (const SpMat* G : {static_cast<const SpMat*>(&Gc), &R}) {
    const Eigen::Index m = G->rows(), d = G->cols();
    const Vec M = Vec::LinSpaced(m, -2.0, 3.0), pstar = Vec::LinSpaced(d, 1.5, -0.5);
    const Vec w = Vec::LinSpaced(d, 0.5, 2.0), b = Vec::LinSpaced(d, -0.1, 0.1), q1 = Vec::LinSpaced(d, 0.0, 1.0);
    SparseRowView rows;
    rows.assign(*G, 11);
    auto check = [&](const auto& vel, const char* name) {
      Vec p1(d), v1(d), q_out(d), p1b(d), v1b(d), q_outb(d), hid = Vec::Zero(m), ref(m);
      const sweeps::SweepNorms with =
          sweeps::apply_velocity_multipliers(*G, M.data(), vel, pstar.data(), p1.data(), v1.data(), q1.data(),
                                             q_out.data(), hid.data());
      const sweeps::SweepNorms without = sweeps::apply_velocity_multipliers(
          *G, M.data(), vel, pstar.data(), p1b.data(), v1b.data(), q1.data(), q_outb.data());
      Vec tp(d);  // T_p(p_1)
      if constexpr (std::decay_t<decltype(vel)>::kStored) {
        rows.multiply(v1.data(), ref.data());
        tp = v1;
      } else {
        rows.multiply_scaled(p1.data(), vel.w, ref.data());
        tp = vel.w * p1;
      }
      EXPECT_TRUE((hid.array() == ref.array()).all()) << name << ", max diff " << (hid - ref).lpNorm<Eigen::Infinity>();
      EXPECT_TRUE((p1.array() == p1b.array()).all() && (q_out.array() == q_outb.array()).all()) << name;
      EXPECT_EQ(with.p_out, without.p_out) << name;
      EXPECT_EQ(with.terms, without.terms) << name;
      // (and both are G T_p(p_1))
      EXPECT_LE((ref - *G * tp).lpNorm<Eigen::Infinity>(),
                64 * kEps * (Mat(*G).cwiseAbs() * tp.cwiseAbs()).maxCoeff() + 1e-300)
          << name;
    };
    check(sweeps::UniformVelocity{0.7}, "equal masses");
    check(sweeps::Velocity{w.data(), b.data()}, "stored model");
  }
}

// The sweeps' finiteness flags: the position sweeps check q_1 alone (a
// non-finite p_{1/2} makes q_1 non-finite: finite_through_q), the apply
// pass p_1 alone (q_1 checked before it).  An Inf or NaN put into each
// input the sweep reads (a multiplier, a correction, F_0, p_0, p*, one at a
// time, at every position) must show as a NaN `zero`, with either model
// (including a zero weight, where 0 * Inf is NaN); finite inputs give 0.
// And a q_1 that is not finite while p_{1/2} is (an Inf in q_0 or in q_1
// before a correction, w p or w dp overflowing) must show too: the flag is
// on q.  (p_{1/2} overflowing in a correction while q_1 stays finite is the
// step's to exclude: its bound on |p_{1/2}|, ph_bound.)
TEST(AffineRattleSweeps, NonFiniteInputsShowInTheFlag) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const SpMat G = random_pattern(9);
  const Eigen::Index m = G.rows(), d = G.cols();
  const Vec L = Vec::LinSpaced(m, -1.0, 2.0), q0 = Vec::LinSpaced(d, 0.0, 1.0), p0 = Vec::LinSpaced(d, 1.0, -1.0);
  const Vec F0 = Vec::LinSpaced(d, -3.0, 3.0);
  Vec w = Vec::LinSpaced(d, 0.5, 2.0);
  w(3) = 0.0;  // a coordinate whose velocity does not depend on p
  const Vec b = Vec::LinSpaced(d, -0.1, 0.1);
  const double h = -0.01;  // (backward: the sign of h plays no part)
  auto flags = [&](const auto& vel, const Vec& Lx, const Vec& p0x, const Vec& F0x, const Vec& dx) {
    Vec q1(d), ph(d), p1(d), v1(d), q_out(d);
    const double s = sweeps::start_positions(G, Lx.data(), vel, h, q0.data(), p0x.data(), F0x.data(), q1.data(),
                                             ph.data()).zero;
    const double c = sweeps::correct_positions(G, dx.data(), vel, h, q1.data(), ph.data()).zero;
    const double a = sweeps::apply_velocity_multipliers(G, dx.data(), vel, p0x.data(), p1.data(), v1.data(),
                                                        q0.data(), q_out.data()).zero;
    return std::array<double, 3>{s, c, a};
  };
  auto check = [&](const auto& vel, const char* name) {
    const std::array<double, 3> ok = flags(vel, L, p0, F0, L);
    for (const double z : ok) EXPECT_EQ(z, 0.0) << name;
    for (const double bad : {inf, -inf, nan}) {
      for (Eigen::Index i = 0; i < m; ++i) {
        Vec Lb = L;
        Lb(i) = bad;
        const std::array<double, 3> z = flags(vel, Lb, p0, F0, L);
        const std::array<double, 3> zc = flags(vel, L, p0, F0, Lb);
        // a row of G without entries reads no multiplier: nothing to see
        bool used = false;
        for (int k = 0; k < G.nonZeros(); ++k) used |= G.innerIndexPtr()[k] == i;
        if (!used) continue;
        EXPECT_TRUE(std::isnan(z[0])) << name << ": L(" << i << ") = " << bad;
        EXPECT_TRUE(std::isnan(zc[1])) << name << ": delta(" << i << ") = " << bad;
        EXPECT_TRUE(std::isnan(zc[2])) << name << ": M(" << i << ") = " << bad;
      }
      for (Eigen::Index j = 0; j < d; ++j) {
        Vec pb = p0, Fb = F0;
        pb(j) = bad;
        Fb(j) = bad;
        EXPECT_TRUE(std::isnan(flags(vel, L, pb, F0, L)[0])) << name << ": p0(" << j << ") = " << bad;
        EXPECT_TRUE(std::isnan(flags(vel, L, p0, Fb, L)[0])) << name << ": F0(" << j << ") = " << bad;
        EXPECT_TRUE(std::isnan(flags(vel, L, pb, F0, L)[2])) << name << ": p*(" << j << ") = " << bad;
      }
    }
  };
  check(sweeps::Velocity{w.data(), b.data()}, "stored model");
  check(sweeps::UniformVelocity{0.7}, "equal masses");
  check(sweeps::UniformVelocity{0.0}, "zero weight");
  // q_1 not finite while p_{1/2} is: an Inf in q (q_0, or q_1 before a
  // correction), or w p overflowing; the flag must see it (it is on q)
  for (Eigen::Index j = 0; j < d; ++j) {
    Vec q0b = q0, wb = w, p0b = p0, q1(d), ph(d);
    q0b(j) = inf;
    EXPECT_TRUE(std::isnan(sweeps::start_positions(G, L.data(), sweeps::Velocity{w.data(), b.data()}, h, q0b.data(),
                                                   p0.data(), F0.data(), q1.data(), ph.data()).zero)) << "q0(" << j << ")";
    wb(j) = 1e10;
    p0b(j) = 1e300;
    const sweeps::SweepNorms st = sweeps::start_positions(G, L.data(), sweeps::Velocity{wb.data(), b.data()}, h,
                                                          q0.data(), p0b.data(), F0.data(), q1.data(), ph.data());
    EXPECT_TRUE(std::isfinite(ph(j)));
    EXPECT_TRUE(std::isnan(st.zero)) << "w p overflowing at " << j;
    // a correction: q_1 given with an Inf, or w dp overflowing
    sweeps::start_positions(G, L.data(), sweeps::Velocity{w.data(), b.data()}, h, q0.data(), p0.data(), F0.data(),
                            q1.data(), ph.data());
    Vec q1b = q1, phb = ph;
    q1b(j) = inf;
    EXPECT_TRUE(std::isnan(sweeps::correct_positions(G, L.data(), sweeps::Velocity{w.data(), b.data()}, h, q1b.data(),
                                                     phb.data()).zero)) << "q1(" << j << ")";
    bool touched = false;
    for (int k = G.outerIndexPtr()[j]; k < G.outerIndexPtr()[j + 1]; ++k) touched |= G.valuePtr()[k] != 0.0;
    if (!touched) continue;
    const Vec big = Vec::Constant(m, 1e300);
    Vec wc = Vec::Constant(d, 1e20);
    q1b = q1;
    phb = ph;
    const sweeps::SweepNorms c = sweeps::correct_positions(G, big.data(), sweeps::Velocity{wc.data(), b.data()}, h,
                                                           q1b.data(), phb.data());
    EXPECT_TRUE(std::isnan(c.zero)) << "w dp overflowing at " << j;
  }
}

// The position Newton matrix S = A W B^T (A = G(q_1), B = G(q_0): not
// symmetric) by the banded LU of factor_product, against a dense LU, for a
// tridiagonal S (a chain) and a pentadiagonal one (each link also tied to
// the mass two further on), and a redundant row (a duplicated link next to
// its original): the dropped pivot gives a solution of the consistent system.
// Eigen's LDL^T (the AMD path) divides by a redundant row's near-zero pivot
// before it can be dropped: whatever that puts into L must stay in the null
// space of K, which the minimum-norm projection removes.  Every placement
// of a redundant row on a 40-link chain (a link listed again at the end, far
// from its original, alone or with a second copy; a coordinate pinned
// twice), against the complete orthogonal decomposition.
TEST(SparseGramSolver, RedundantRowsAnywhereGiveTheMinimumNormSolution) {
  Chain c;
  c.N = 40;
  const int d = c.d(), N = c.N;
  const Vec q = c.zigzag(0.3, 0.7).head(d);
  SpMat G0;
  c.G_sparse(q, G0);
  const Mat Gd0 = Mat(G0);
  const Vec w = Vec::LinSpaced(d, 1.0, 2.0);
  double worst_min = 0.0, worst_res = 0.0;
  int amd = 0;
  for (int k = 0; k < N; ++k)
    for (int kind = 0; kind < 3; ++kind) {
      Mat Gd = Mat::Zero(N + 2, d);
      Gd.topRows(N) = Gd0;
      if (kind == 2) {  // x of point k pinned twice
        Gd(N, 2 * k) = 1.0;
        Gd(N + 1, 2 * k) = 1.0;
      } else {          // link k again, and (kind 1) link 7k + 3 too
        Gd.row(N) = Gd0.row(k);
        if (kind == 1) Gd.row(N + 1) = Gd0.row((7 * k + 3) % N);
        else Gd.conservativeResize(N + 1, d);
      }
      const SpMat G = Gd.sparseView();
      SparseGramSolver s;
      ASSERT_TRUE(s.factor(G, w));
      EXPECT_TRUE(s.rank_deficient()) << "k " << k << " kind " << kind;
      amd += !s.natural_ordering();
      const Mat K = Gd * w.asDiagonal() * Gd.transpose();
      const Vec b = K * Vec::LinSpaced(Gd.rows(), 0.5, -0.5);  // consistent
      Vec x(Gd.rows());
      s.solve(b, x);
      const Vec xmin = K.completeOrthogonalDecomposition().solve(b);
      worst_min = std::max(worst_min, (x - xmin).norm() / xmin.norm());
      worst_res = std::max(worst_res, (K * x - b).lpNorm<Eigen::Infinity>() / b.norm());
    }
  std::printf("redundant rows, %d placements (%d on the AMD path): worst |x - x_min|/|x_min| = %.2g, worst "
              "|K x - b|/|b| = %.2g\n", 3 * N, amd, worst_min, worst_res);
  EXPECT_GT(amd, N);
  EXPECT_LE(worst_min, 1e-9);
  EXPECT_LE(worst_res, 1e-12);
}

TEST(SparseGramSolver, BandedProductLU) {
  Chain c;
  c.N = 40;
  const int d = c.d();
  const Vec qa = c.zigzag(0.3, 0.7).head(d), qb = c.zigzag(0.32, 0.66).head(d);
  SpMat A, B;
  c.G_sparse(qa, A);
  c.G_sparse(qb, B);
  // twisted: the tridiagonal S of a chain of full rank takes the twisted
  // LU (both ends at once), any other the one-sided banded LU
  auto check = [&](const SpMat& As, const SpMat& Bs, bool consistent, bool twisted) {
    const Mat Ad = Mat(As), Bd = Mat(Bs);
    const Vec w = Vec::LinSpaced(As.cols(), 1.0, 3.0);
    const Mat S = Ad * w.asDiagonal() * Bd.transpose();
    SparseGramSolver s;
    ASSERT_TRUE(s.factor_product(As, w, Bs));
    ASSERT_TRUE(s.product_valid());
    EXPECT_EQ(s.product_twisted(), twisted) << "m = " << S.rows();
    const Vec r = consistent ? Vec(S * Vec::LinSpaced(S.cols(), -1.0, 2.0)) : Vec::LinSpaced(S.rows(), 1.0, -1.0);
    Vec x(S.rows());
    s.solve_product(r, x);
    EXPECT_LE((S * x - r).lpNorm<Eigen::Infinity>(), 1e-12 * S.norm() * std::max(1.0, x.norm()));
    if (!consistent) {
      EXPECT_LE((x - S.partialPivLu().solve(r)).norm(), 1e-10 * x.norm());
    }
  };
  check(A, B, false, true);
  // short chains: the twist's ends and middle (m = 1 is diagonal: band 0)
  for (int n = 1; n <= 6; ++n) {
    Chain s;
    s.N = n;
    SpMat As, Bs;
    s.G_sparse(s.zigzag(0.3, 0.7).head(s.d()), As);
    s.G_sparse(s.zigzag(0.32, 0.66).head(s.d()), Bs);
    check(As, Bs, false, n > 1);
  }
  // pentadiagonal: G plus rows tying mass k to mass k + 2 (|x_{k+2} - x_k|^2)
  auto widen = [&](const Vec& q) {
    std::vector<Eigen::Triplet<double>> t;
    SpMat G;
    c.G_sparse(q, G);
    for (int k = 0; k < G.outerSize(); ++k)
      for (SpMat::InnerIterator it(G, k); it; ++it) t.emplace_back(2 * it.row(), it.col(), it.value());
    for (int k = 0; k + 2 < c.N; ++k)
      for (int j = 0; j < 2; ++j) {
        const double v = 2 * (q(2 * (k + 2) + j) - q(2 * k + j));
        t.emplace_back(2 * k + 1, 2 * (k + 2) + j, v);
        t.emplace_back(2 * k + 1, 2 * k + j, -v);
      }
    SpMat W(2 * c.N, d);
    W.setFromTriplets(t.begin(), t.end());
    // rows 2k + 1 for k + 2 >= N are empty: drop them
    Mat Wd = Mat(W);
    Mat kept(2 * c.N - 2, d);
    int r = 0;
    for (int i = 0; i < 2 * c.N; ++i)
      if (i % 2 == 0 || (i - 1) / 2 + 2 < c.N) kept.row(r++) = Wd.row(i);
    return SpMat(kept.sparseView());
  };
  const SpMat Aw = widen(qa), Bw = widen(qb);
  check(Aw, Bw, false, false);
  // a duplicated link next to its original (rank m - 1), consistent right side
  const Mat Ad = Mat(A), Bd = Mat(B);
  Mat A2(c.N + 1, d), B2(c.N + 1, d);
  A2 << Ad.topRows(6), Ad.row(5), Ad.bottomRows(c.N - 6);
  B2 << Bd.topRows(6), Bd.row(5), Bd.bottomRows(c.N - 6);
  check(SpMat(A2.sparseView()), SpMat(B2.sparseView()), true, false);  // a dropped pivot: one-sided
}

// A random m x 2m G whose K = G W G^T has bandwidth `band`: band 1, a
// chain's structure (columns 2k and 2k + 1 on rows k and k + 1: adjacent
// rows share two columns); band 2, column 2k on rows k, k + 1, k + 2 and
// column 2k + 1 on rows k and k + 2 (rows k, k + 1 share columns 2k - 2 and
// 2k; rows k, k + 2 share 2k and 2k + 1).  G(k, 2k) in +-[1, 2], the rest
// in [-1/4, 1/4]: the columns 2k alone give a lower triangular matrix of
// dominant diagonal, so cond(K) stays small.  Row `zero_row`'s entries are
// stored zeros (the same structure, one pivot to drop).
SpMat banded_G(int m, int band, std::mt19937& gen, int zero_row = -1) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Eigen::Triplet<double>> t;
  auto add = [&](int r, int c, double v) {
    if (r < m) t.emplace_back(r, c, r == zero_row ? 0.0 : v);
  };
  for (int k = 0; k < m; ++k) {
    add(k, 2 * k, (u(gen) < 0.5 ? -1.0 : 1.0) * (1.0 + u(gen)));
    add(k, 2 * k + 1, 0.5 * u(gen) - 0.25);
    add(k + 1, 2 * k, 0.5 * u(gen) - 0.25);
    add(k + band, 2 * k + 1, 0.5 * u(gen) - 0.25);
    if (band == 2) add(k + 2, 2 * k, 0.5 * u(gen) - 0.25);
  }
  SpMat G(m, 2 * m);
  G.setFromTriplets(t.begin(), t.end());
  G.makeCompressed();
  return G;
}

// G diag(w) G^T, dense, by sparse products.
Mat gram_dense(const SpMat& G, const Vec& w) {
  const SpMat Gw = G * w.asDiagonal();
  return Mat(SpMat(Gw * SpMat(G.transpose())));
}

// K's band assembled from G's row view, factor(G, rows, w), against the
// column assembly, factor(G, w), and a dense LLT: the same pivots, rank,
// twisted factorization and solution, on the structures of banded_G with
// new values at each call (one structure token), then with a zero row at
// either end or in the middle (the dropped pivot: the same rank and G^T x,
// against the minimum-norm solution for m <= 64).  A view of other values
// on G's structure (outside the precondition) gives the K of its values:
// the band is read from the view, not from G.
TEST(SparseGramSolver, RowViewAssemblyAgreesWithColumnAssembly) {
  std::mt19937 gen(17);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto random_vec = [&](int n, double lo, double hi) { return uniform_vec(gen, n, lo, hi); };
  const long token = 5;
  for (const int band : {1, 2})
    for (const int m : {1, 2, 3, 7, 64, 1001}) {
      SparseGramSolver cs, rs;
      SparseRowView rv;
      auto factor_both = [&](const SpMat& G, const Vec& w) {
        rv.assign(G, token);
        const bool ok_c = cs.factor(G, w, token), ok_r = rs.factor(G, rv, w, token);
        ASSERT_TRUE(ok_c);
        ASSERT_TRUE(ok_r);
        EXPECT_TRUE(rs.natural_ordering());
        EXPECT_EQ(rs.twisted(), cs.twisted());
        EXPECT_EQ(rs.rank_deficient(), cs.rank_deficient());
        EXPECT_EQ(rs.rank(), cs.rank());
        if (std::isfinite(cs.condition_estimate())) {
          EXPECT_NEAR(rs.condition_estimate(), cs.condition_estimate(), 1e-12 * cs.condition_estimate());
        } else {
          EXPECT_EQ(rs.condition_estimate(), cs.condition_estimate());
        }
      };
      const std::string where = "band " + std::to_string(band) + " m " + std::to_string(m);
      SpMat G;
      Vec w;
      for (int rep = 0; rep < 3; ++rep) {  // rep 0: the first call analyses (the column path)
        G = banded_G(m, band, gen);
        w = random_vec(2 * m, 0.5, 2.0);
        factor_both(G, w);
        EXPECT_FALSE(rs.rank_deficient()) << where;
        EXPECT_EQ(rs.twisted(), std::min(band, m - 1) == 1) << where;  // K's bandwidth min(band, m - 1)
        const Mat K = gram_dense(G, w);
        const Eigen::LLT<Mat> llt(K);
        for (int r = 0; r < 2; ++r) {
          const Vec b = random_vec(m, -1.0, 1.0);
          const Vec xd = llt.solve(b);
          Vec xc(m), xr = b;
          cs.solve(b, xc);
          rs.solve(xr, xr);
          EXPECT_LE((xr - xd).norm(), 1e-12 * xd.norm()) << where << " rep " << rep;
          // the same sums in the same order: the same K, so the same solution
          EXPECT_TRUE((xr.array() == xc.array()).all()) << where << " rep " << rep << ": " << (xr - xc).norm();
        }
      }
      // a constant w (equal masses) read once: the same products, so the
      // same solution as from the vector
      {
        const Vec wc = Vec::Constant(2 * m, 1.0 / 3.0);
        SparseGramSolver vs;
        rv.assign(G, token);
        ASSERT_TRUE(vs.factor(G, rv, wc, token)) << where;
        ASSERT_TRUE(rs.factor(G, rv, wc, token, true)) << where;
        const Vec b = random_vec(m, -1.0, 1.0);
        Vec xv(m), xk(m);
        vs.solve(b, xv);
        rs.solve(b, xk);
        EXPECT_TRUE((xk.array() == xv.array()).all()) << where << ": " << (xk - xv).norm();
        EXPECT_LE((xk - gram_dense(G, wc).llt().solve(b)).norm(), 1e-12 * xk.norm()) << where;
      }
      // the band read from the view: a view of other values on G's structure
      const SpMat G2 = banded_G(m, band, gen);
      rv.assign(G2, token);
      ASSERT_TRUE(rs.factor(G, rv, w, token));
      {
        const Mat K2 = gram_dense(G2, w);
        const Vec b = random_vec(m, -1.0, 1.0);
        Vec x(m);
        rs.solve(b, x);
        const Vec x2 = K2.llt().solve(b);
        EXPECT_LE((x - x2).norm(), 1e-12 * x2.norm()) << where;
      }
      // a zero row: one pivot dropped (the one-sided LDL^T), as by the column path
      for (const int row : {0, m / 2, m - 1}) {
        const SpMat Gz = banded_G(m, band, gen, row);
        w = random_vec(2 * m, 0.5, 2.0);
        factor_both(Gz, w);
        EXPECT_TRUE(rs.rank_deficient()) << where << " row " << row;
        EXPECT_EQ(rs.rank(), m - 1) << where << " row " << row;
        EXPECT_FALSE(rs.twisted());
        const Mat K = gram_dense(Gz, w);
        const Vec b = K * random_vec(m, -1.0, 1.0);  // consistent
        Vec xc(m), xr(m);
        cs.solve(b, xc);
        rs.solve(b, xr);
        const Vec fc = Gz.transpose() * xc, fr = Gz.transpose() * xr;
        EXPECT_LE((xr - xc).norm(), 1e-12 * std::max(xc.norm(), 1e-300)) << where << " row " << row;
        EXPECT_LE((fr - fc).norm(), 1e-12 * std::max(fc.norm(), 1e-300)) << where << " row " << row;
        EXPECT_LE((K * xr - b).lpNorm<Eigen::Infinity>(), 1e-12 * std::max(b.norm(), 1e-300)) << where;
        if (m <= 64) {
          const Vec xmin = K.completeOrthogonalDecomposition().solve(b);
          const Vec fmin = Gz.transpose() * xmin;
          EXPECT_LE((fr - fmin).norm(), 1e-12 * std::max(fmin.norm(), 1e-300))
              << where << " row " << row;
        }
      }
    }
}

// K's band formed in the gather (SparseRowView::assign_multiply_gram, then
// SparseGramSolver::factor_band) against the assembly from the view after
// it (factor(G, rows, w)): the same products in the same order, so the same
// G x, norm, rank and solution bit for bit, with a vector of weights and
// with one weight (equal masses, the scaled product); offered only for a
// tridiagonal K (not for band 2), and a non-finite weight refused as
// factor() refuses it.  A zero row takes the one-sided LDL^T (rank m - 1)
// in both.  (The band is offered once a first factor() has analysed K.)
TEST(SparseGramSolver, BandGatheredWithTheRowsAgreesWithTheRowAssembly) {
  std::mt19937 gen(29);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto random_vec = [&](int n, double lo, double hi) { return uniform_vec(gen, n, lo, hi); };
  const long token = 3;
  for (const int m : {2, 3, 8, 65, 1000})
    for (const int zero_row : {-1, 0, m / 2, m - 1}) {
      const std::string where = "m " + std::to_string(m) + " zero row " + std::to_string(zero_row);
      SparseGramSolver gs, rs;
      SparseRowView gv, rv;
      for (int rep = 0; rep < 2; ++rep) {
        const SpMat G = banded_G(m, 1, gen, zero_row);
        const Vec w = random_vec(2 * m, 0.5, 2.0), x = random_vec(2 * m, -1.0, 1.0), b = random_vec(m, -1.0, 1.0);
        // (the first factorization analyses K's structure: the column path)
        if (rep == 0) {
          ASSERT_TRUE(gs.factor(G, w, token)) << where;
        }
        // weights per column, the product with x as it is
        gv.prepare(G, token);
        double* band = gs.tridiagonal_band(G, gv, token);
        ASSERT_NE(band, nullptr) << where;
        const double* wp = w.data();
        const auto weight = [wp](int k) { return wp[k]; };
        SparseRowView::TridiagonalGram<decltype(weight)> k{weight, band};
        Vec yg(m), yr(m);
        const double ng = gv.assign_multiply_gram(G, x.data(), yg.data(), k);
        ASSERT_TRUE(gs.factor_band(k.zero)) << where;
        const double nr = rv.assign_multiply(G, token, x.data(), yr.data());
        ASSERT_TRUE(rs.factor(G, rv, w, token)) << where;
        EXPECT_EQ(ng, nr) << where;
        EXPECT_TRUE((yg.array() == yr.array()).all()) << where;
        EXPECT_EQ(gs.rank(), rs.rank()) << where;
        EXPECT_EQ(gs.rank(), zero_row < 0 ? m : m - 1) << where;
        EXPECT_EQ(gs.twisted(), zero_row < 0) << where;
        Vec xg(m), xr(m);
        gs.solve(b, xg);
        rs.solve(b, xr);
        EXPECT_TRUE((xg.array() == xr.array()).all()) << where << ": " << (xg - xr).norm();
        if (zero_row < 0) {
          EXPECT_LE((gram_dense(G, w) * xg - b).norm(), 1e-10 * b.norm()) << where;
        }
        // one weight, the product with c x formed on the fly
        const double c = 0.7;
        const auto weight1 = [c](int) { return c; };
        SparseRowView::TridiagonalGram<decltype(weight1)> k1{weight1, gs.tridiagonal_band(G, gv, token)};
        ASSERT_NE(k1.band, nullptr) << where;
        const double ng1 = gv.assign_multiply_scaled_gram(G, x.data(), c, yg.data(), k1);
        ASSERT_TRUE(gs.factor_band(k1.zero)) << where;
        const double nr1 = rv.assign_multiply_scaled(G, token, x.data(), c, yr.data());
        ASSERT_TRUE(rs.factor(G, rv, Vec::Constant(2 * m, c), token, true)) << where;
        EXPECT_EQ(ng1, nr1) << where;
        EXPECT_TRUE((yg.array() == yr.array()).all()) << where;
        gs.solve(b, xg);
        rs.solve(b, xr);
        EXPECT_TRUE((xg.array() == xr.array()).all()) << where << " (one weight)";
      }
      // a weight that is not finite: the band is not, and factor_band refuses
      // it (column m: in a diagonal and an off-diagonal entry; column 2m - 1:
      // in row m - 1's diagonal entry only)
      for (const Eigen::Index col : {static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(2 * m - 1)}) {
        const SpMat G = banded_G(m, 1, gen);
        Vec w = random_vec(2 * m, 0.5, 2.0);
        w(col) = std::numeric_limits<double>::infinity();
        gv.prepare(G, token);
        const double* wp = w.data();
        const auto weight = [wp](int k) { return wp[k]; };
        SparseRowView::TridiagonalGram<decltype(weight)> k{weight, gs.tridiagonal_band(G, gv, token)};
        ASSERT_NE(k.band, nullptr);
        Vec y(m);
        gv.assign_multiply_gram(G, Vec::Zero(2 * m).eval().data(), y.data(), k);
        EXPECT_FALSE(gs.factor_band(k.zero)) << where << " column " << col;
        rv.assign(G, token);
        EXPECT_FALSE(rs.factor(G, rv, w, token)) << where << " column " << col;
      }
      // factor_band only right after a band was offered
      EXPECT_THROW(gs.factor_band(0.0), std::logic_error);
    }
  // G of random tridiagonal K: rows of 0 to 8 entries, columns private to a
  // row or shared by two neighbours (0 to 3 of each), in a shuffled order;
  // the band (and the rows of four taken from the registers when they line
  // up as a chain's) against the row assembly, bit for bit
  for (int trial = 0; trial < 300; ++trial) {
    const int m = 2 + trial % 29;
    std::vector<std::vector<int>> rows_of;  // each column's rows
    for (int i = 0; i < m; ++i) {
      const int own = static_cast<int>(gen() % 4), shared = i + 1 < m ? static_cast<int>(gen() % 4) : 0;
      for (int c = 0; c < own; ++c) rows_of.push_back({i});
      for (int c = 0; c < shared || (i == 0 && c == 0); ++c) rows_of.push_back({i, i + 1});
    }
    std::vector<int> order(rows_of.size());
    for (std::size_t c = 0; c < order.size(); ++c) order[c] = static_cast<int>(c);
    std::shuffle(order.begin(), order.end(), gen);
    std::vector<Eigen::Triplet<double>> t;
    for (std::size_t c = 0; c < order.size(); ++c)
      for (const int r : rows_of[order[c]]) t.emplace_back(r, static_cast<int>(c), (u(gen) < 0.5 ? -1.0 : 1.0) * (0.25 + u(gen)));
    const int n = static_cast<int>(order.size());
    SpMat G(m, n);
    G.setFromTriplets(t.begin(), t.end());
    G.makeCompressed();
    const std::string where = "random pattern " + std::to_string(trial);
    const Vec w = random_vec(n, 0.5, 2.0), x = random_vec(n, -1.0, 1.0), b = random_vec(m, -1.0, 1.0);
    SparseGramSolver gs, rs;
    SparseRowView gv, rv;
    ASSERT_TRUE(gs.factor(G, w, token)) << where;
    gv.prepare(G, token);
    double* band = gs.tridiagonal_band(G, gv, token);
    ASSERT_NE(band, nullptr) << where;
    const double* wp = w.data();
    const auto weight = [wp](int k) { return wp[k]; };
    SparseRowView::TridiagonalGram<decltype(weight)> k{weight, band};
    Vec yg(m), yr(m), xg(m), xr(m);
    const double ng = gv.assign_multiply_gram(G, x.data(), yg.data(), k);
    ASSERT_TRUE(gs.factor_band(k.zero)) << where;
    const double nr = rv.assign_multiply(G, token, x.data(), yr.data());
    ASSERT_TRUE(rs.factor(G, rv, w, token)) << where;
    ASSERT_TRUE(rs.factor(G, rv, w, token)) << where;  // (the second: from the rows)
    EXPECT_EQ(ng, nr) << where;
    EXPECT_TRUE((yg.array() == yr.array()).all()) << where;
    EXPECT_EQ(gs.rank(), rs.rank()) << where;
    gs.solve(b, xg);
    rs.solve(b, xr);
    EXPECT_TRUE((xg.array() == xr.array()).all()) << where << ": " << (xg - xr).norm();
  }
  // a K of band 2 is not tridiagonal: no band offered (once analysed)
  const SpMat G2 = banded_G(20, 2, gen);
  SparseGramSolver s2;
  SparseRowView v2;
  ASSERT_TRUE(s2.factor(G2, random_vec(40, 0.5, 2.0), token));
  v2.prepare(G2, token);
  EXPECT_EQ(s2.tridiagonal_band(G2, v2, token), nullptr);
}

// The pairs of an off-diagonal slot are all the columns its two rows share:
// G (3 x 4) with rows 0 and 1 sharing columns 1 and 2, rows 1 and 2 column
// 3 (K(1, 0) the sum of two products, K(2, 0) structurally zero); a pair
// left out or misplaced changes K by O(1); an infinite weight makes factor
// refuse K as the column path does.  A view of another structure of
// the same sizes and count of nonzeros, or a view never assigned, is not
// used (the column path: G's own K); a view analysed again (token -1) at
// every call, and a change of G's structure and back, still give G's K.
TEST(SparseGramSolver, RowViewPairsOfSharedColumns) {
  auto make = [](int rows, int cols, std::vector<Eigen::Triplet<double>> t) {
    SpMat G(rows, cols);
    G.setFromTriplets(t.begin(), t.end());
    G.makeCompressed();
    return G;
  };
  const SpMat G = make(3, 4, {{0, 0, 1.5}, {0, 1, -0.7}, {0, 2, 0.9}, {1, 1, 1.1}, {1, 2, 0.8}, {1, 3, -0.6},
                              {2, 3, 1.3}});
  // same sizes and count of nonzeros, another structure (rows 0 and 1 share columns 0 and 2)
  const SpMat H = make(3, 4, {{0, 0, 1.5}, {0, 1, -0.7}, {0, 2, 0.9}, {1, 0, 1.1}, {1, 2, 0.8}, {1, 3, -0.6},
                              {2, 3, 1.3}});
  // another structure of a tridiagonal K: a 4 x 5 chain
  const SpMat C = make(4, 5, {{0, 0, 1.2}, {0, 1, 0.3}, {1, 1, -1.4}, {1, 2, 0.2}, {2, 2, 1.7}, {2, 3, -0.4},
                              {3, 3, 1.1}, {3, 4, 0.5}});
  const Vec w4 = (Vec(4) << 0.7, 1.3, 1.9, 0.6).finished();
  const Vec w5 = (Vec(5) << 1.1, 0.8, 1.6, 0.9, 1.2).finished();
  auto check = [](SparseGramSolver& s, const SpMat& A, const Vec& w, const char* what) {
    const Mat Ad = Mat(A);
    const Mat K = Ad * w.asDiagonal() * Ad.transpose();
    const Vec b = Vec::LinSpaced(A.rows(), 1.0, -0.5);
    Vec x(A.rows());
    s.solve(b, x);
    const Vec xd = K.llt().solve(b);
    EXPECT_LE((x - xd).norm(), 1e-13 * xd.norm()) << what;
    EXPECT_LE((K * x - b).lpNorm<Eigen::Infinity>(), 1e-13 * b.norm()) << what;
  };
  SparseGramSolver s;
  SparseRowView rv, other, never;
  rv.assign(G, 1);
  other.assign(H, 1);
  for (int call = 0; call < 2; ++call) {  // call 0 analyses, call 1 the row path
    ASSERT_TRUE(s.factor(G, rv, w4, 1));
    EXPECT_TRUE(s.natural_ordering());
    EXPECT_TRUE(s.twisted());
    check(s, G, w4, call == 0 ? "first call" : "row view");
  }
  Vec wbad = w4;  // a K not finite: refused on the row path too
  wbad(3) = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(s.factor(G, rv, wbad, 1));
  EXPECT_FALSE(s.valid());
  ASSERT_TRUE(s.factor(G, rv, w4, 1));
  check(s, G, w4, "after a K not finite");
  ASSERT_TRUE(s.factor(G, other, w4, 1));
  check(s, G, w4, "a view of another structure");
  ASSERT_TRUE(s.factor(G, never, w4, 1));
  check(s, G, w4, "a view never assigned");
  ASSERT_TRUE(s.factor(G, rv, w4, 1));
  check(s, G, w4, "the view of G again");
  for (int call = 0; call < 2; ++call) {
    rv.assign(G, -1);
    ASSERT_TRUE(s.factor(G, rv, w4, -1));
    check(s, G, w4, "a view analysed again");
  }
  for (int round = 0; round < 2; ++round) {
    for (int call = 0; call < 2; ++call) {
      rv.assign(C, -1);
      ASSERT_TRUE(s.factor(C, rv, w5, -1));
      check(s, C, w5, "another structure");
    }
    for (int call = 0; call < 2; ++call) {
      rv.assign(G, -1);
      ASSERT_TRUE(s.factor(G, rv, w4, -1));
      check(s, G, w4, "back to G");
    }
  }
}

// The initial projection with a sparse G: off the manifold -> on it.
TEST(SparseRattle, InitialProjection) {
  Chain c;
  c.N = 50;
  Vec x = c.zigzag(0.3, 0.8);
  for (int i = 0; i < x.size(); ++i) x(i) += 1e-3 * std::sin(1.0 + i);
  auto P = c.make(true);
  const ProjectionResult pr = project_onto_manifold(*P, 0.0, x, 1e-13);
  EXPECT_TRUE(pr.converged);
  EXPECT_GT(pr.g_before, 1e-4);
  const auto res = c.residuals(x);
  EXPECT_LE(res.first, 1e-13);
  EXPECT_LE(res.second, 1e-13);
  // data on the manifold up to the round-off of g, eps |q| ~ 1e-12 > tol
  // for 10^4 links: the iteration stops at once, not after 30 calls of G
  Chain big;
  big.N = 10000;
  Vec y = big.zigzag(0.2, 0.6);
  auto Q = big.make(true);
  const ProjectionResult pb = project_onto_manifold(*Q, 0.0, y, 1e-13);
  EXPECT_GT(pb.g_before, 1e-13);
  EXPECT_LE(pb.g_after, 1e-11);
  EXPECT_LE(Q->stats().constraint_grad_evals, 2);
}

// DerivativeCheck on a sparse G: passes when right, catches a wrong sign.
TEST(SparseRattle, DerivativeCheckOfSparseGradient) {
  Chain c;
  c.N = 40;
  const Vec x0 = c.zigzag(0.3, 0.8);
  auto P = c.make(true);
  EXPECT_NO_THROW(P->check_derivatives(0.0, x0));
  HamiltonianProblem Q(c.d(), &Chain::field);
  Q.set_constraints(c.m(), [c](const ConstVecRef& q, VecRef out) { c.g(q, out); });
  Q.set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& G) {
    c.G_sparse(q, G);
    G.coeffRef(5, 10) *= -1.0;
  });
  try {
    Q.check_derivatives(0.0, x0);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.id, "derivativeCheck");
  }
}

// The general path keeps a sparse G sparse (GeometricRattle on sparse
// matrices, sparse_general_rattle_test): the dense G's trajectory to
// round-off.  Without a HamiltonianHessFcn the Hessian of H is differenced
// as a dense 2d x 2d matrix: refused (odepkg:invalidOption) where that has
// more than 4e6 entries, taken sparse when given so.
TEST(SparseRattle, GeneralPathKeepsSparseAndRefusesLargeDifferencedHessian) {
  Chain c;
  c.N = 6;
  const Vec x0 = c.zigzag(0.3, 0.8);
  auto Pd = c.make(false), Ps = c.make(true);
  Rattle rd(*Pd, false), rs(*Ps, false);
  EXPECT_TRUE(rs.sparse());
  const auto yd = run(*Pd, rd, x0, 0.01, 20), ys = run(*Ps, rs, x0, 0.01, 20);
  EXPECT_LE(max_diff(yd, ys), 1e-13);
  Chain big;
  big.N = 1500;  // (2d)^2 = 3.6e7
  auto Pb = big.make(true);
  try {
    Rattle rb(*Pb, false);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.id, "invalidOption");
    EXPECT_NE(std::string(e.what()).find("HamiltonianHessFcn"), std::string::npos);
  }
  EXPECT_NO_THROW(Rattle(*Pb, true));  // the separable path takes it sparse
  const int n = 2 * big.d();
  Pb->set_sparse_hessian([n](double, const ConstVecRef&, SpMat& H) {  // H = |p|^2/2 + sum y_k
    std::vector<Eigen::Triplet<double>> t;
    for (int i = n / 2; i < n; ++i) t.emplace_back(i, i, 1.0);
    H.resize(n, n);
    H.setFromTriplets(t.begin(), t.end());
  });
  EXPECT_NO_THROW(Rattle(*Pb, false));
}

/// G (union pattern) filled from the 64-bit view of `user` and from `user`
/// as an SpMat, by two unions seeded alike: the same structure and values.
void expect_view_fits_as_spmat(const SpMat& seed, const SpMat& user, bool inside) {
  SparsePatternUnion us, uv;
  us.reset(seed.rows(), seed.cols());
  uv.reset(seed.rows(), seed.cols());
  us.grow(seed);
  uv.grow(seed);
  SpMat Gs, Gv, u = user;
  u.makeCompressed();
  us.fit(u, Gs);
  const Csc64 c(u);
  const bool fitted = uv.fit(c.view(), Gv);
  EXPECT_EQ(fitted, inside);
  if (!fitted) {  // HamiltonianProblem::take_grad's fallback
    SpMat copy;
    to_spmat(c.view(), copy);
    EXPECT_TRUE(SparsePatternUnion::same_pattern(copy, u));
    uv.grow(copy);
    ASSERT_TRUE(uv.fit(c.view(), Gv));
  }
  EXPECT_EQ(uv.version(), us.version());
  ASSERT_TRUE(SparsePatternUnion::same_pattern(Gv, Gs));
  for (Eigen::Index k = 0; k < Gs.nonZeros(); ++k) EXPECT_EQ(Gv.valuePtr()[k], Gs.valuePtr()[k]) << "entry " << k;
  // the independent expectation: G is the user's matrix (zeros elsewhere)
  EXPECT_TRUE(Mat(Gv) == Mat(u));
  // and a second time into the filled G (its structure kept)
  ASSERT_TRUE(uv.fit(c.view(), Gv));
  ASSERT_TRUE(SparsePatternUnion::same_pattern(Gv, Gs));
  for (Eigen::Index k = 0; k < Gs.nonZeros(); ++k) EXPECT_EQ(Gv.valuePtr()[k], Gs.valuePtr()[k]) << "entry " << k;
}

// A result read in place with Octave's 64-bit indices (CscView) fills G as
// the same result as an SpMat does: with the union's structure, a subset
// of it (Octave's pruned zeros) with empty columns, and an entry outside
// the union (fit false; the union grows from a copy).
TEST(SparsePatternUnion, ViewWith64BitIndicesFitsAsSpMat) {
  Chain c;
  c.N = 12;
  const Vec x0 = c.zigzag(0.3, 0.8);
  SpMat full;
  c.G_sparse(x0.head(c.d()), full);
  full.makeCompressed();
  {
    SCOPED_TRACE("same structure");
    expect_view_fits_as_spmat(full, full, true);
  }
  SpMat sub = full;  // a few entries and whole columns 0, 5 and the last pruned
  for (Eigen::Index k = 0; k < sub.nonZeros(); k += 3) sub.valuePtr()[k] = 0.0;
  for (int j : {0, 5, c.d() - 1})
    for (SpMat::InnerIterator it(sub, j); it; ++it) it.valueRef() = 0.0;
  sub.prune(0.0);
  sub.makeCompressed();
  ASSERT_EQ(sub.outerIndexPtr()[1], sub.outerIndexPtr()[0]);
  ASSERT_LT(sub.nonZeros(), full.nonZeros());
  {
    SCOPED_TRACE("subset with empty columns");
    expect_view_fits_as_spmat(full, sub, true);
  }
  {
    SCOPED_TRACE("entry outside the union");
    SpMat extra = full;
    extra.coeffRef(c.m() - 1, 0) = 7.0;  // (no chain link couples these)
    expect_view_fits_as_spmat(sub, extra, false);
    expect_view_fits_as_spmat(SpMat(c.m(), c.d()), full, false);  // an empty union
    SpMat last = sub;  // an entry after the column's last row of the union
    last.coeffRef(c.m() - 1, 1) = 3.0;
    expect_view_fits_as_spmat(sub, last, false);
    SpMat first = full;  // one before its first row (column 10: rows 5 and 6)
    first.coeffRef(0, 10) = 3.0;
    expect_view_fits_as_spmat(full, first, false);
    // as many entries as the union, but one of them outside it (and one of
    // the union's missing): the fast copy's structure test fails, the
    // merge finds the outside entry
    SpMat swapped = full;
    swapped.coeffRef(0, 10) = 3.0;
    swapped.coeffRef(5, 10) = 0.0;
    swapped.prune(0.0);
    swapped.makeCompressed();
    ASSERT_EQ(swapped.nonZeros(), full.nonZeros());
    expect_view_fits_as_spmat(full, swapped, false);
  }
}

// A view whose column lists its rows out of order, or one row twice, is
// not a compressed matrix: fit refuses it (false) rather than fill G with
// it, whether its count of entries is the union's or fewer.
TEST(SparsePatternUnion, ViewWithUnsortedOrDuplicateRowsIsRefused) {
  // the union: a 3 x 2 matrix, column 0 rows {0, 1, 2}, column 1 row {1}
  SpMat seed(3, 2);
  seed.insert(0, 0) = 1.0;
  seed.insert(1, 0) = 1.0;
  seed.insert(2, 0) = 1.0;
  seed.insert(1, 1) = 1.0;
  seed.makeCompressed();
  const double values[4] = {1.0, 2.0, 3.0, 4.0};
  auto fits = [&](std::vector<long> outer, std::vector<long> inner) {
    SparsePatternUnion u;
    u.reset(3, 2);
    u.grow(seed);
    SpMat G;
    const CscView<long> v{3, 2, static_cast<Eigen::Index>(inner.size()), outer.data(), inner.data(), values};
    return u.fit(v, G);
  };
  EXPECT_TRUE(fits({0, 2, 3}, {0, 2, 1}));      // a sorted subset (the independent check of the lambda)
  EXPECT_FALSE(fits({0, 2, 3}, {2, 0, 1}));     // column 0 unsorted, fewer entries than the union
  EXPECT_FALSE(fits({0, 2, 3}, {1, 1, 1}));     // a row twice
  EXPECT_FALSE(fits({0, 3, 4}, {0, 2, 1, 1}));  // as many entries as the union, column 0 unsorted
  EXPECT_FALSE(fits({0, 3, 4}, {0, 1, 1, 1}));  // as many, a row twice
}

// Target::UnionShaped (a matrix only ever filled by this union, copied or
// swapped): after the union grows, the size check alone gives such a
// matrix the new structure, and it holds the values a fresh matrix gets.
// Target::Any compares the structure itself: a matrix of the union's size
// and number of nonzeros but another structure is given the union's.
TEST(SparsePatternUnion, UnionShapedTargetFollowsTheVersions) {
  // the union: 3 x 2, column 0 rows {0, 1}, column 1 row {1}
  SpMat seed(3, 2);
  seed.insert(0, 0) = 1.0;
  seed.insert(1, 0) = 1.0;
  seed.insert(1, 1) = 1.0;
  seed.makeCompressed();
  SparsePatternUnion u;
  u.reset(3, 2);
  u.grow(seed);
  ASSERT_EQ(u.version(), 1);
  const auto view = [](const std::vector<long>& outer, const std::vector<long>& inner, const double* v) {
    return CscView<long>{3, 2, static_cast<Eigen::Index>(inner.size()), outer.data(), inner.data(), v};
  };
  const auto same = [](const SpMat& a, const SpMat& b) {
    return SparsePatternUnion::same_pattern(a, b) &&
           std::equal(a.valuePtr(), a.valuePtr() + a.nonZeros(), b.valuePtr());
  };
  const std::vector<long> o1{0, 1, 2}, i1{0, 1};  // (0,0) = 5, (1,1) = 6: a subset
  const double v1[2] = {5.0, 6.0};
  SpMat G;  // empty: UnionShaped holds
  ASSERT_TRUE(u.fit(view(o1, i1, v1), G, SparsePatternUnion::Target::UnionShaped));
  SpMat fresh;
  ASSERT_TRUE(u.fit(view(o1, i1, v1), fresh));
  EXPECT_TRUE(same(G, fresh));
  EXPECT_EQ(G.nonZeros(), 3);
  EXPECT_EQ(G.coeff(0, 0), 5.0);
  EXPECT_EQ(G.coeff(1, 0), 0.0);
  // a new entry (2, 1): the union grows, G (version 1's structure) is
  // refilled on version 2's
  const std::vector<long> o2{0, 1, 3}, i2{0, 1, 2};
  const double v2[3] = {7.0, 8.0, 9.0};
  EXPECT_FALSE(u.fit(view(o2, i2, v2), G, SparsePatternUnion::Target::UnionShaped));
  SpMat grown(3, 2);
  grown.insert(0, 0) = 1.0;
  grown.insert(1, 1) = 1.0;
  grown.insert(2, 1) = 1.0;
  grown.makeCompressed();
  u.grow(grown);
  ASSERT_EQ(u.version(), 2);
  ASSERT_TRUE(u.fit(view(o2, i2, v2), G, SparsePatternUnion::Target::UnionShaped));
  SpMat fresh2;
  ASSERT_TRUE(u.fit(view(o2, i2, v2), fresh2));
  EXPECT_TRUE(same(G, fresh2));
  EXPECT_EQ(G.nonZeros(), 4);
  EXPECT_EQ(G.coeff(2, 1), 9.0);
  // another structure of the union's size and count (column 0 rows {0, 2},
  // column 1 rows {0, 1}): Target::Any gives it the union's
  SpMat other(3, 2);
  other.insert(0, 0) = 1.0;
  other.insert(2, 0) = 1.0;
  other.insert(0, 1) = 1.0;
  other.insert(1, 1) = 1.0;
  other.makeCompressed();
  ASSERT_EQ(other.nonZeros(), G.nonZeros());
  ASSERT_TRUE(u.fit(view(o2, i2, v2), other));
  EXPECT_TRUE(same(other, fresh2));
}

// ConstraintGradFcn given as a view (set_sparse_constraint_grad_view, as
// the binding does) or as an SpMat: the same G, pattern versions and
// trajectory, bit for bit, on a pruned chain whose pattern grows as met
// and from a seeded one.
TEST(SparseRattle, ViewedGradientGivesTheSpMatTrajectory) {
  for (bool seed : {false, true}) {
    Chain c;
    c.N = 15;
    c.prune = true;
    const Vec x0 = c.straight(0.0);
    auto Ps = c.make(true);
    auto Pv = c.make(true);
    Pv->set_sparse_constraint_grad_view([c](const ConstVecRef& q, HamiltonianProblem::GradSink& sink) {
      SpMat G;
      c.G_sparse(q, G);
      G.makeCompressed();
      const Csc64 u(G);
      sink(u.view());
    });
    EXPECT_TRUE(Pv->has_sparse_constraint_grad());
    if (seed) {
      const Vec q0 = c.zigzag(0.3, 0.8).head(c.d());
      ASSERT_TRUE(Ps->seed_sparse_pattern(q0));
      ASSERT_TRUE(Pv->seed_sparse_pattern(q0));
      EXPECT_EQ(Pv->sparse_pattern_nonzeros(), Ps->sparse_pattern_nonzeros());
    }
    Rattle rs(*Ps, true), rv(*Pv, true);
    const auto ys = run(*Ps, rs, x0, 0.01, 60), yv = run(*Pv, rv, x0, 0.01, 60);
    ASSERT_EQ(yv.size(), 60u);
    EXPECT_EQ(max_diff(ys, yv), 0.0) << (seed ? "seeded" : "grown as met");
    EXPECT_EQ(Pv->sparse_pattern_version(), Ps->sparse_pattern_version());
    EXPECT_GE(Pv->sparse_pattern_version(), seed ? 1 : 2);
    EXPECT_EQ(Pv->stats().constraint_grad_evals, Ps->stats().constraint_grad_evals);
    SpMat Gs, Gv;
    ASSERT_TRUE(Ps->constraint_grad_sparse(yv.back().head(c.d()), Gs));
    ASSERT_TRUE(Pv->constraint_grad_sparse(yv.back().head(c.d()), Gv));
    ASSERT_TRUE(SparsePatternUnion::same_pattern(Gs, Gv));
    EXPECT_EQ(Eigen::Map<const Vec>(Gs.valuePtr(), Gs.nonZeros()), Eigen::Map<const Vec>(Gv.valuePtr(), Gv.nonZeros()));
    Mat Gd(c.m(), c.d());  // made dense for a method that needs it
    ASSERT_TRUE(Pv->constraint_grad(yv.back().head(c.d()), Gd));
    EXPECT_EQ((Gd - Mat(Gs)).cwiseAbs().maxCoeff(), 0.0);
  }
}

// A viewed G: its shape is checked, a non-finite value reported, and a
// callback that never calls the sink, or calls it twice (a bug), is caught.
TEST(SparseRattle, ViewedGradientChecks) {
  Chain c;
  c.N = 6;
  const Vec q = c.zigzag(0.3, 0.8).head(c.d());
  HamiltonianProblem P(c.d(), &Chain::field);
  P.set_constraints(c.m(), [c](const ConstVecRef& x, VecRef out) { c.g(x, out); });
  int mode = 0;
  P.set_sparse_constraint_grad_view([c, &mode](const ConstVecRef& x, HamiltonianProblem::GradSink& sink) {
    if (mode == 3) return;
    SpMat G;
    c.G_sparse(x, G);
    if (mode == 1) G.conservativeResize(c.m(), c.d() + 1);
    if (mode == 2) G.coeffRef(2, 4) = std::numeric_limits<double>::quiet_NaN();
    G.makeCompressed();
    const Csc64 u(G);
    sink(u.view());
    if (mode == 4) sink(u.view());
  });
  SpMat G;
  EXPECT_TRUE(P.constraint_grad_sparse(q, G));
  mode = 1;
  try {
    P.constraint_grad_sparse(q, G);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.id, "badFcnOutput");
  }
  mode = 2;
  EXPECT_FALSE(P.constraint_grad_sparse(q, G));
  mode = 3;
  EXPECT_THROW(P.constraint_grad_sparse(q, G), std::logic_error);
  mode = 4;  // called twice
  EXPECT_THROW(P.constraint_grad_sparse(q, G), std::logic_error);
}

/// Process CPU time in ms (insensitive to other processes on a shared machine).
double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * ts.tv_sec + 1e-6 * ts.tv_nsec;
}

// Time per step for N = 1e3, 1e4, 1e5 (a benchmark, not a test: run with
// --gtest_also_run_disabled_tests; ODEPKG_CHAIN_STEPS steps, default 50);
// CPU time of the process.
TEST(SparseRattle, DISABLED_TimePerStep) {
  const char* env = std::getenv("ODEPKG_CHAIN_STEPS");
  const int n = env ? std::atoi(env) : 50;
  for (int N : {1000, 10000, 100000}) {
    Chain c;
    c.N = N;
    const Vec x0 = c.zigzag(0.2, 0.6);
    auto P = c.make(true);
    Rattle r(*P, true);
    Point a(P->state_size()), b(P->state_size());
    a.set(0.0, x0);
    for (int i = 0; i < 10; ++i) {  // past the learning of the quadratic T
      ASSERT_EQ(r.step(a, 0.01, b), StepStatus::Success);
      std::swap(a, b);
    }
    const Stats s0 = P->stats();
    std::vector<double> ms;
    for (int i = 0; i < n; ++i) {
      const double t0 = cpu_ms();
      ASSERT_EQ(r.step(a, 0.01, b), StepStatus::Success);
      ms.push_back(cpu_ms() - t0);
      std::swap(a, b);
    }
    // the callbacks alone, as often as a step calls them
    const Stats& s1 = P->stats();
    const double nf = double(s1.field_evals - s0.field_evals) / n, ng = double(s1.constraint_evals - s0.constraint_evals) / n,
                 nG = double(s1.constraint_grad_evals - s0.constraint_grad_evals) / n;
    Vec fx(2 * c.d()), gv(c.m());
    SpMat G;
    const int reps = 20;
    double t0 = cpu_ms();
    for (int i = 0; i < reps; ++i) Chain::field(0.0, a.x, fx);
    const double tf = (cpu_ms() - t0) / reps;
    t0 = cpu_ms();
    for (int i = 0; i < reps; ++i) c.g(a.x.head(c.d()), gv);
    const double tg = (cpu_ms() - t0) / reps;
    t0 = cpu_ms();
    for (int i = 0; i < reps; ++i) c.G_sparse(a.x.head(c.d()), G);
    const double tG = (cpu_ms() - t0) / reps;
    std::sort(ms.begin(), ms.end());
    std::printf("N = %6d: median %.3f ms/step (min %.3f); calls/step f %.2f g %.2f G %.2f; C++ callbacks %.3f ms/step; "
                "newton iter %ld\n",
                N, ms[ms.size() / 2], ms[0], nf, ng, nG, nf * tf + ng * tg + nG * tG,
                s1.newton_iterations - s0.newton_iterations);
  }
}

}  // namespace
