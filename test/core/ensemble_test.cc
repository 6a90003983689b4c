// ensemble_test.cc — the ensemble core (src/core/ensemble/): every member
// equals the same trajectory run alone, members are independent (their own
// events, their own failure), constraints at round-off, the composed order.
#include "constrained/Rattle.hpp"
#include "ensemble/EnsembleComposition.hpp"
#include "ensemble/EnsembleIntegrator.hpp"
#include "ensemble/EnsembleRattle.hpp"
#include "ensemble/EnsembleSplitting.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "SphereEdges.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace odepkg;
using namespace odepkg::ensemble;

namespace {

/// Kepler's field on every column.
void kepler_batch(double, const ConstMatRef& X, MatRef DX) {
  for (Eigen::Index j = 0; j < X.cols(); ++j) test::Kepler::field(0.0, X.col(j), DX.col(j));
}

/// States of the members at every output.
struct Frames : EnsembleObserver {
  std::vector<double> t;
  std::vector<Mat> X;
  bool output(double tt, const ConstMatRef& x) override {
    t.push_back(tt);
    X.emplace_back(x);
    return true;
  }
};

Mat kepler_members(const std::vector<double>& ecc) {
  Mat X0(4, static_cast<Eigen::Index>(ecc.size()));
  for (std::size_t j = 0; j < ecc.size(); ++j) {
    test::Kepler k;
    k.e = ecc[j];
    X0.col(static_cast<Eigen::Index>(j)) = k.initial();
  }
  return X0;
}

Vec solo_sv(const Vec& x0, double h, int N) {
  HamiltonianProblem P(2, &test::Kepler::field);
  StormerVerlet sv(P, true);
  Point a(4), b(4);
  a.set(0.0, x0);
  for (int i = 0; i < N; ++i) {
    EXPECT_EQ(sv.step(a, h, b), StepStatus::Success);
    std::swap(a, b);
  }
  return a.x;
}

TEST(Ensemble, StormerVerletMembersEqualSingleRuns) {
  const std::vector<double> ecc = {0.1, 0.5, 0.7, 0.3};
  const Mat X0 = kepler_members(ecc);
  EnsembleProblem pb(2, 4, kepler_batch);
  EnsembleSplitting sv(pb, EnsembleSplitting::Kind::StormerVerlet);
  EnsembleOptions o;
  o.fixed_step = 0.01;
  EnsembleIntegrator integ(sv, o);
  Frames fr;
  Vec times(2);
  times << 0.0, 5.0;
  integ.run(times, X0, fr);
  ASSERT_EQ(fr.t.size(), 501u);
  EXPECT_TRUE(sv.one_call_per_step());
  // one call per step (after the start's 1 + 2 probes + 3 to learn the model)
  EXPECT_EQ(pb.stats().field_calls, 500 + 1 + 2 + 3);
  for (int j = 0; j < 4; ++j) {
    const Vec ref = solo_sv(X0.col(j), 0.01, 500);
    EXPECT_LE((fr.X.back().col(j) - ref).lpNorm<Eigen::Infinity>(), 1e-12) << "member " << j;
  }
}

TEST(Ensemble, CompositionHasItsOrder) {
  // McLachlan4 over Störmer–Verlet: the error at t = 2 against Kepler's
  // exact solution falls as h^4
  const Mat X0 = kepler_members({0.3, 0.5});
  std::vector<double> hs, errs;
  for (int N : {40, 80, 160}) {
    EnsembleProblem pb(2, 2, kepler_batch);
    EnsembleSplitting sv(pb, EnsembleSplitting::Kind::StormerVerlet);
    EnsembleComposition comp(sv, *composition::find_composition("McLachlan4"));
    EnsembleOptions o;
    o.fixed_step = 2.0 / N;
    EnsembleIntegrator integ(comp, o);
    Frames fr;
    Vec times(2);
    times << 0.0, 2.0;
    integ.run(times, X0, fr);
    double err = 0.0;
    for (int j = 0; j < 2; ++j) {
      test::Kepler k;
      k.e = j == 0 ? 0.3 : 0.5;
      err = std::max(err, (fr.X.back().col(j) - k.exact(2.0)).norm());
    }
    hs.push_back(2.0 / N);
    errs.push_back(err);
  }
  EXPECT_NEAR(test::fitted_order(hs, errs), 4.0, 0.3);
}

// ---- RATTLE: a family of pendulums of lengths L_j, g_j = |q|^2 - L_j^2 ----
struct PendulumFamily {
  std::vector<double> L;
  static void field(double, const ConstMatRef& X, MatRef DX) {
    DX.topRows(2) = X.bottomRows(2);
    DX.row(2).setZero();
    DX.row(3).setConstant(-1.0);
  }
  void g(const ConstMatRef& Q, MatRef out) const {
    for (Eigen::Index j = 0; j < Q.cols(); ++j) out(0, j) = Q.col(j).squaredNorm() - L[member(Q, j)] * L[member(Q, j)];
  }
  // the member of column j: Q may hold a subset; the family's lengths are
  // recovered from |q| at the start (the test keeps |q| = L exactly), so
  // g uses the nearest length
  std::size_t member(const ConstMatRef& Q, Eigen::Index j) const {
    const double r = Q.col(j).norm();
    std::size_t best = 0;
    for (std::size_t i = 1; i < L.size(); ++i)
      if (std::abs(L[i] - r) < std::abs(L[best] - r)) best = i;
    return best;
  }
  Mat initial() const {
    Mat X0(4, static_cast<Eigen::Index>(L.size()));
    for (std::size_t j = 0; j < L.size(); ++j) {
      const double th = 0.4 + 0.6 * static_cast<double>(j);
      X0.col(static_cast<Eigen::Index>(j)) << L[j] * std::sin(th), -L[j] * std::cos(th), 0.0, 0.0;
    }
    return X0;
  }
};

void pendulum_G(const ConstMatRef& Q, MatRef G) {
  for (Eigen::Index j = 0; j < Q.cols(); ++j) G.middleCols(2 * j, 2) = 2.0 * Q.col(j).transpose();
}

TEST(Ensemble, RattleMembersEqualSingleRunsAndKeepConstraints) {
  PendulumFamily fam;
  fam.L = {1.0, 1.5, 2.0};
  const Mat X0 = fam.initial();
  EnsembleProblem pb(2, 3, &PendulumFamily::field);
  pb.set_constraints(
      1, [&](const ConstMatRef& Q, MatRef out) { fam.g(Q, out); }, pendulum_G);
  EnsembleRattle ra(pb);
  EnsembleOptions o;
  o.fixed_step = 0.01;
  EnsembleIntegrator integ(ra, o);
  Frames fr;
  Vec times(2);
  times << 0.0, 3.0;
  integ.run(times, X0, fr);
  ASSERT_EQ(fr.t.size(), 301u);
  for (int j = 0; j < 3; ++j) {
    const double L = fam.L[j];
    HamiltonianProblem P(2, [](double, const ConstVecRef& x, VecRef dx) {
      dx.head(2) = x.tail(2);
      dx(2) = 0.0;
      dx(3) = -1.0;
    });
    P.set_constraints(
        1, [L](const ConstVecRef& q, VecRef out) { out(0) = q.squaredNorm() - L * L; },
        [](const ConstVecRef& q, MatRef G) { G = 2.0 * q.transpose(); });
    Rattle solo(P, true);
    Point a(4), b(4);
    a.set(0.0, X0.col(j));
    double gmax = 0.0, hmax = 0.0;
    for (int i = 1; i <= 300; ++i) {
      ASSERT_EQ(solo.step(a, 0.01, b), StepStatus::Success);
      std::swap(a, b);
      const Vec x = fr.X[i].col(j);
      EXPECT_LE((x - a.x).lpNorm<Eigen::Infinity>(), 1e-11) << "member " << j << " step " << i;
      gmax = std::max(gmax, std::abs(x.head(2).squaredNorm() - L * L));
      hmax = std::max(hmax, std::abs(x.head(2).dot(x.tail(2))));
    }
    EXPECT_LE(gmax, 1e-14 * L * L) << "member " << j;
    EXPECT_LE(hmax, 1e-14 * (1 + L)) << "member " << j;
  }
  // per step: a few calls of g, one of f and one of G for all members; no
  // ordinary step is retried
  EXPECT_LE(pb.stats().constraint_calls, 5 * 300 + 2);
  EXPECT_EQ(pb.stats().grad_calls, 300 + 1);
  EXPECT_EQ(pb.stats().newton_retries, 0);
}


TEST(Ensemble, NewtonAtTheEdgesFollowsTheClosedFormPerMember) {
  // 150 seeded starts as one ensemble at h = 0.25 (steps of up to a
  // radius): every member's every step is the closed form's from the
  // member's own last point; a member whose quadratic has no real root is
  // refused at that step (never a step elsewhere) while the others go on
  const double kappa = 5.0, h = 0.25;
  const int K = 150, N = 10;
  std::mt19937 rng(11);
  Mat X0(6, K);
  for (int j = 0; j < K; ++j) {
    double hj = 0.0;
    X0.col(j) = sphere_edges::start(j + 1, rng, hj);  // random starts (h = 0.25)
  }
  EnsembleProblem pb(3, K, [kappa](double, const ConstMatRef& X, MatRef DX) {
    DX.topRows(3) = X.bottomRows(3);
    DX.row(3).setZero();
    DX.row(4).setZero();
    DX.row(5).setConstant(kappa);
  });
  pb.set_constraints(
      1, [](const ConstMatRef& Q, MatRef g) { g = Q.colwise().squaredNorm().array() - 1.0; },
      [](const ConstMatRef& Q, MatRef G) {
        for (Eigen::Index j = 0; j < Q.cols(); ++j) G.middleCols(3 * j, 3) = 2.0 * Q.col(j).transpose();
      });
  EnsembleRattle ra(pb);
  EnsembleOptions o;
  o.fixed_step = h;
  EnsembleIntegrator integ(ra, o);
  Frames fr;
  Vec times(2);
  times << 0.0, N * h;
  integ.run(times, X0, fr);
  ASSERT_EQ(fr.t.size(), static_cast<std::size_t>(N + 1));
  long completed = 0, refused = 0;
  Vec next(6);
  for (int j = 0; j < K; ++j) {
    const MemberOutcome& oc = integ.outcomes()[j];
    int k = 0;
    for (; k < N; ++k) {
      const Vec x = fr.X[k].col(j);
      if (!sphere_edges::closed_form_step(x, h, kappa, next)) break;
      ASSERT_FALSE(std::isnan(fr.X[k + 1](0, j))) << "member " << j << " refused a solvable step " << k;
      EXPECT_LT((fr.X[k + 1].col(j) - next).lpNorm<Eigen::Infinity>(), 1e-11) << "member " << j << " step " << k;
    }
    if (k == N) {
      ++completed;
      EXPECT_EQ(oc.state, MemberOutcome::State::Running) << "member " << j;
    } else {  // no root: refused at step k, NaN from then on
      ++refused;
      EXPECT_EQ(oc.state, MemberOutcome::State::Failed) << "member " << j;
      EXPECT_DOUBLE_EQ(oc.t_end, k * h) << "member " << j;
      EXPECT_TRUE(std::isnan(fr.X[k + 1](0, j))) << "member " << j;
    }
  }
  const EnsembleStats& st = pb.stats();
  std::printf("[edges] ensemble: %ld of %d members completed %d steps, %ld refused; %ld member steps retried, "
              "%ld distant roots; g %ld, G %ld, f %ld calls\n",
              completed, K, N, refused, st.newton_retries, st.distant_roots, st.constraint_calls, st.grad_calls,
              st.field_calls);
  EXPECT_GT(completed, 100);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(st.failed_members, refused);
  EXPECT_GT(st.newton_retries, 0);
}

// ---- events and failures are per member ----
TEST(Ensemble, EventsArePerMember) {
  // oscillators q'' = -w_j^2 q, q(0) = 1: q = 0 first at t = pi / (2 w_j);
  // w_j as the velocity model A = diag(1), force -w^2 q
  const std::vector<double> w = {1.0, 2.0, 3.0};
  auto field = [&](double, const ConstMatRef& X, MatRef DX) {
    for (Eigen::Index j = 0; j < X.cols(); ++j) {
      // the member from the energy scale: each column carries w in q2 (constant, p2 = 0)
      const double wj = X(1, j);
      DX(0, j) = X(2, j);
      DX(1, j) = X(3, j);
      DX(2, j) = -wj * wj * X(0, j);
      DX(3, j) = 0.0;
    }
  };
  Mat X0(4, 3);
  for (int j = 0; j < 3; ++j) X0.col(j) << 1.0, w[j], 0.0, 0.0;
  EnsembleProblem pb(2, 3, field);
  EnsembleSplitting sv(pb, EnsembleSplitting::Kind::StormerVerlet);
  EnsembleComposition comp(sv, *composition::find_composition("KahanLi8"));
  EnsembleOptions o;
  o.fixed_step = 0.02;
  EnsembleIntegrator integ(comp, o);
  Vec term(1), dir(1);
  integ.set_events(
      [](double, const ConstMatRef& X, MatRef v, VecRef terminal, VecRef direction) {
        v.row(0) = X.row(0);
        terminal(0) = 1.0;  // the first zero ends the member
        direction(0) = -1.0;
      },
      1);
  Frames fr;
  Vec times(2);
  times << 0.0, 3.0;
  integ.run(times, X0, fr);
  for (int j = 0; j < 3; ++j) {
    const MemberOutcome& oc = integ.outcomes()[j];
    ASSERT_EQ(oc.events.size(), 1u) << "member " << j;
    EXPECT_EQ(oc.state, MemberOutcome::State::Event);
    EXPECT_NEAR(oc.events[0].t, M_PI / (2 * w[j]), 1e-9) << "member " << j;
    EXPECT_NEAR(oc.t_end, M_PI / (2 * w[j]), 1e-9);
  }
  // an ended member's later outputs are NaN while the others go on; the
  // run stops with the step in which the last member ended (w = 1: pi / 2)
  EXPECT_GE(fr.t.back(), M_PI / 2);
  EXPECT_LT(fr.t.back(), M_PI / 2 + 0.02 + 1e-12);
  std::size_t i = 0;
  while (fr.t[i] < 1.0) ++i;  // after member 2's (pi / 6) and member 1's (pi / 4) ends
  EXPECT_TRUE(std::isnan(fr.X[i](0, 2)) && std::isnan(fr.X[i](0, 1)));
  EXPECT_FALSE(std::isnan(fr.X[i](0, 0)));
}

TEST(Ensemble, FailingMemberDoesNotStopTheOthers) {
  // member 1 falls straight towards the centre (p = 0 on the axis); the
  // field is NaN inside r < 0.3 (a singularity, as a user's f returns it),
  // so that member fails there; the others (periapses >= 0.5) finish
  Mat X0 = kepler_members({0.2, 0.5, 0.4});
  X0.col(1) << 1.0, 0.0, 0.0, 0.0;
  EnsembleProblem pb(2, 3, [](double t, const ConstMatRef& X, MatRef DX) {
    kepler_batch(t, X, DX);
    for (Eigen::Index j = 0; j < X.cols(); ++j)
      if (X.col(j).head(2).norm() < 0.3) DX.col(j).setConstant(std::nan(""));
  });
  EnsembleSplitting sv(pb, EnsembleSplitting::Kind::StormerVerlet);
  EnsembleOptions o;
  o.fixed_step = 0.1;
  EnsembleIntegrator integ(sv, o);
  Frames fr;
  Vec times(2);
  times << 0.0, 10.0;
  integ.run(times, X0, fr);
  EXPECT_EQ(integ.outcomes()[1].state, MemberOutcome::State::Failed);
  EXPECT_LT(integ.outcomes()[1].t_end, 10.0);
  for (int j : {0, 2}) {
    EXPECT_EQ(integ.outcomes()[j].state, MemberOutcome::State::Running);
    EXPECT_LE((fr.X.back().col(j) - solo_sv(X0.col(j), 0.1, 100)).lpNorm<Eigen::Infinity>(), 1e-11);
  }
  EXPECT_EQ(pb.stats().failed_members, 1);
}

TEST(Ensemble, AdaptiveStepsMeetTheTolerance) {
  // one step size for all members (error the largest over them): each
  // member's error at t = 2 stays near the tolerance's scale
  const Mat X0 = kepler_members({0.2, 0.6});
  EnsembleProblem pb(2, 2, kepler_batch);
  EnsembleSplitting sv(pb, EnsembleSplitting::Kind::StormerVerlet);
  EnsembleComposition comp(sv, *composition::find_composition("KahanLi8"));
  EnsembleOptions o;
  o.norm.rel_tol = 1e-9;
  o.norm.abs_tol = Vec::Constant(1, 1e-9);
  EnsembleIntegrator integ(comp, o);
  Frames fr;
  Vec times(3);
  times << 0.0, 1.0, 2.0;
  integ.run(times, X0, fr);
  ASSERT_EQ(fr.t.size(), 3u);
  EXPECT_DOUBLE_EQ(fr.t[1], 1.0);
  for (int j = 0; j < 2; ++j) {
    test::Kepler k;
    k.e = j == 0 ? 0.2 : 0.6;
    EXPECT_LE((fr.X.back().col(j) - k.exact(2.0)).lpNorm<Eigen::Infinity>(), 1e-6) << "member " << j;
  }
  EXPECT_GT(pb.stats().steps, 3);
}

}  // namespace

namespace {
/// Kepler's field of one member (EnsembleProblem::MemberField), with a
/// per-member mass parameter mu_j (H = |p|^2/2 - mu_j/|q|).
void kepler_member(const void* context, double, int j, const double* x, double* out) {
  const double mu = static_cast<const double*>(context)[j];
  const double r2 = x[0] * x[0] + x[1] * x[1], r3 = r2 * std::sqrt(r2);
  out[0] = x[2];
  out[1] = x[3];
  out[2] = -mu * x[0] / r3;
  out[3] = -mu * x[1] / r3;
}

Mat run_member_field(const Mat& X0, const std::vector<double>& mu, int threads, EnsembleSplitting::Kind kind,
                     bool member_path, long* calls) {
  const int K = static_cast<int>(X0.cols());
  EnsembleProblem pb(2, K, [&mu](double t, const ConstMatRef& X, MatRef DX) {
    for (Eigen::Index j = 0; j < X.cols(); ++j)
      kepler_member(mu.data(), t, static_cast<int>(j), X.col(j).data(), DX.col(j).data());
  });
  MemberThreads pool(threads);
  if (member_path) pb.set_member_field(&kepler_member, mu.data(), &pool);
  EnsembleSplitting sv(pb, kind);
  EnsembleOptions o;
  o.fixed_step = 0.01;
  EnsembleIntegrator integ(sv, o);
  Frames fr;
  Vec times(2);
  times << 0.0, 3.0;
  integ.run(times, X0, fr);
  if (calls) *calls = pb.stats().field_calls;
  return fr.X.back();
}
}  // namespace

// A member-by-member f (a compiled model) runs each member's whole step in
// one pass, the members across threads: the result is the batched path's
// bit for bit, for any number of threads, with the same count of calls.
TEST(Ensemble, MemberFieldPathEqualsBatchedForAnyThreadCount) {
  std::vector<double> ecc, mu;
  for (int j = 0; j < 37; ++j) {
    ecc.push_back(0.02 * j);
    mu.push_back(1.0 + 0.01 * j);
  }
  const Mat X0 = kepler_members(ecc);
  for (auto kind : {EnsembleSplitting::Kind::StormerVerlet, EnsembleSplitting::Kind::SymplecticEuler,
                    EnsembleSplitting::Kind::VelocityVerlet}) {
    long batched_calls = 0, calls = 0;
    const Mat ref = run_member_field(X0, mu, 1, kind, false, &batched_calls);
    for (int threads : {1, 2, 3}) {
      const Mat X = run_member_field(X0, mu, threads, kind, true, &calls);
      EXPECT_EQ(calls, batched_calls);
      for (Eigen::Index j = 0; j < X.cols(); ++j)
        for (Eigen::Index i = 0; i < X.rows(); ++i) ASSERT_EQ(X(i, j), ref(i, j)) << "threads " << threads;
    }
  }
}
