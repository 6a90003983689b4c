// Tests of RATTLE / SHAKE (Rattle.hpp) and of ConstraintProjection.hpp.
#define EIGEN_RUNTIME_NO_MALLOC  // for the no-allocation test; off by default
#include "ConstraintProjection.hpp"
#include "loop/Integrator.hpp"
#include "constrained/Rattle.hpp"
#include "SphereEdges.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>

using namespace odepkg;

namespace {

/// A constrained test system: callbacks (none of which allocates), initial
/// data on the manifold and its energy.
struct Sys {
  int d = 0, m = 0;
  HamiltonianProblem::Field f;
  HamiltonianProblem::Hessian hess;
  HamiltonianProblem::Constraint g;
  HamiltonianProblem::ConstraintGrad G;
  HamiltonianProblem::ConstraintHess GH;
  Vec x0;
  std::function<double(const Vec&)> energy;

  std::unique_ptr<HamiltonianProblem> make(bool with_hess = true, bool with_ghess = true,
                                           bool with_grad = true) const {
    auto P = std::make_unique<HamiltonianProblem>(d, f);
    if (with_hess) P->set_hessian(hess);
    P->set_constraints(m, g, with_grad ? G : nullptr, with_ghess ? GH : nullptr);
    return P;
  }
  /// (|g(q)|_inf, |G(q) H_p(q, p)|_inf)
  std::pair<double, double> residuals(const Vec& x) const {
    Vec gv(m), dx(2 * d);
    Mat Gm(m, d);
    g(x.head(d), gv);
    G(x.head(d), Gm);
    f(0.0, x, dx);
    return {gv.lpNorm<Eigen::Infinity>(), (Gm * dx.head(d)).lpNorm<Eigen::Infinity>()};
  }
};

/// Cartesian pendulum: H = |p|^2/2 + q_2 (for a != 0 the non-separable
/// H = (1 + a q_1^2) |p|^2/2 + q_2), g = |q|^2 - 1.
Sys pendulum(double a = 0.0) {
  Sys s;
  s.d = 2;
  s.m = 1;
  s.f = [a](double, const ConstVecRef& x, VecRef dx) {
    const double c = 1.0 + a * x(0) * x(0);
    dx.head(2) = c * x.tail(2);
    dx(2) = -a * x(0) * x.tail(2).squaredNorm();
    dx(3) = -1.0;
  };
  s.hess = [a](double, const ConstVecRef& x, MatRef H) {
    H.setZero();
    H(0, 0) = a * x.tail(2).squaredNorm();
    H(0, 2) = H(2, 0) = 2 * a * x(0) * x(2);
    H(0, 3) = H(3, 0) = 2 * a * x(0) * x(3);
    H(2, 2) = H(3, 3) = 1.0 + a * x(0) * x(0);
  };
  s.g = [](const ConstVecRef& q, VecRef g) { g.setConstant(q.squaredNorm() - 1.0); };
  s.G = [](const ConstVecRef& q, MatRef G) {
    for (int k = 0; k < G.rows(); ++k) G.row(k) = 2.0 * q.transpose();
  };
  s.GH = [](const ConstVecRef&, MatRef H) {
    H.setZero();
    for (int k = 0; k < H.cols() / 2; ++k) H(0, 2 * k) = H(1, 2 * k + 1) = 2.0;
  };
  const double th = 1.2, w = 0.5;
  s.x0.resize(4);
  s.x0 << std::sin(th), -std::cos(th), w * std::cos(th), w * std::sin(th);
  s.energy = [a](const Vec& x) { return 0.5 * (1 + a * x(0) * x(0)) * x.tail(2).squaredNorm() + x(1); };
  return s;
}

/// Planar double pendulum, unit masses and rods: q = (x1, y1, x2, y2);
/// `duplicate`: the first rod's constraint listed twice (m = 3).
Sys double_pendulum(bool duplicate = false) {
  Sys s;
  s.d = 4;
  s.m = duplicate ? 3 : 2;
  s.f = [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(4) = x.tail(4);
    dx.tail(4) << 0.0, -1.0, 0.0, -1.0;
  };
  s.hess = [](double, const ConstVecRef&, MatRef H) {
    H.setZero();
    H.bottomRightCorner(4, 4).setIdentity();
  };
  s.g = [](const ConstVecRef& q, VecRef g) {
    g(0) = q(0) * q(0) + q(1) * q(1) - 1.0;
    g(1) = (q(2) - q(0)) * (q(2) - q(0)) + (q(3) - q(1)) * (q(3) - q(1)) - 1.0;
    if (g.size() == 3) g(2) = g(0);
  };
  s.G = [](const ConstVecRef& q, MatRef G) {
    const double dx = q(2) - q(0), dy = q(3) - q(1);
    G.row(0) << 2 * q(0), 2 * q(1), 0, 0;
    G.row(1) << -2 * dx, -2 * dy, 2 * dx, 2 * dy;
    if (G.rows() == 3) G.row(2) = G.row(0);
  };
  s.GH = [](const ConstVecRef&, MatRef H) {  // 4 x 4m: [H_1 H_2 (H_1)]
    H.setZero();
    H(0, 0) = H(1, 1) = 2.0;
    for (int i = 0; i < 4; ++i) H(i, 4 + i) = 2.0;
    H(0, 6) = H(1, 7) = H(2, 4) = H(3, 5) = -2.0;
    if (H.cols() == 12) H(0, 8) = H(1, 9) = 2.0;
  };
  const double t1 = 1.0, t2 = 0.5, w1 = 0.3, w2 = -0.5;
  s.x0.resize(8);
  const double x1 = std::sin(t1), y1 = -std::cos(t1);
  const double vx1 = w1 * std::cos(t1), vy1 = w1 * std::sin(t1);
  s.x0 << x1, y1, x1 + std::sin(t2), y1 - std::cos(t2), vx1, vy1, vx1 + w2 * std::cos(t2),
      vy1 + w2 * std::sin(t2);
  s.energy = [](const Vec& x) { return 0.5 * x.tail(4).squaredNorm() + x(1) + x(3); };
  return s;
}

/// Particle on the unit sphere with the extra constraint q_1 q_3 = 0, moving
/// on the great circle q_3 = 0 through (0, -1, 0), where G(q) loses rank.
Sys sphere_cross() {
  Sys s;
  s.d = 3;
  s.m = 2;
  s.f = [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(3) = x.tail(3);
    dx.tail(3) << 0.0, -1.0, 0.0;
  };
  s.hess = [](double, const ConstVecRef&, MatRef H) {
    H.setZero();
    H.bottomRightCorner(3, 3).setIdentity();
  };
  s.g = [](const ConstVecRef& q, VecRef g) {
    g(0) = q.squaredNorm() - 1.0;
    g(1) = q(0) * q(2);
  };
  s.G = [](const ConstVecRef& q, MatRef G) {
    G.row(0) = 2.0 * q.transpose();
    G.row(1) << q(2), 0.0, q(0);
  };
  s.GH = [](const ConstVecRef&, MatRef H) {
    H.setZero();
    H(0, 0) = H(1, 1) = H(2, 2) = 2.0;
    H(0, 5) = H(2, 3) = 1.0;
  };
  s.x0.resize(6);
  s.x0 << 0.0, -1.0, 0.0, 0.8, 0.0, 0.0;
  s.energy = [](const Vec& x) { return 0.5 * x.tail(3).squaredNorm() + x(1); };
  return s;
}

/// Fixed steps of size h from x0 over [0, T], every step recorded.
test::Recorder run_fixed(Stepper& st, const Vec& x0, double T, double h) {
  IntegratorOptions o;
  o.fixed_step = h;
  Integrator I(st, o);
  test::Recorder r;
  Vec ts(2);
  ts << 0.0, T;
  const auto res = I.run(ts, x0, r);
  EXPECT_EQ(res.outcome, IntegrationResult::Outcome::Completed) << res.message;
  return r;
}

double max_diff(const test::Recorder& a, const test::Recorder& b, int rows = -1) {
  EXPECT_EQ(a.x.size(), b.x.size());
  double e = 0.0;
  for (size_t i = 0; i < std::min(a.x.size(), b.x.size()); ++i) {
    const Vec dv = a.x[i] - b.x[i];
    e = std::max(e, (rows < 0 ? dv : Vec(dv.head(rows))).lpNorm<Eigen::Infinity>());
  }
  return e;
}

struct Path {
  const char* name;
  bool separable, hess, ghess;
};
const Path kPaths[] = {{"separable", true, true, true},
                       {"general-analytic", false, true, true},
                       {"general-fd", false, false, false}};

}  // namespace

// ---------------------------------------------------------------------------
TEST(MinNormSolver, MatchesPseudoInverse) {
  Eigen::MatrixXd B = Eigen::MatrixXd::Random(5, 3);
  Mat A = B * B.transpose();  // rank 3
  Vec b = A * Vec::Random(5);  // consistent
  MinNormSolver s(5);
  ASSERT_TRUE(s.compute(A));
  EXPECT_EQ(s.rank(), 3);
  Vec x(5);
  s.solve(b, x);
  Vec ref = A.completeOrthogonalDecomposition().solve(b);
  EXPECT_LT((x - ref).norm(), 1e-12);
  EXPECT_LT((A * x - b).norm(), 1e-12);
  Mat F = Mat::Random(4, 4) + 4 * Mat::Identity(4, 4);
  MinNormSolver s4(4);
  s4.compute(F);
  Vec c = Vec::Random(4), y(4);
  s4.solve(c, y);
  EXPECT_LT((F * y - c).norm(), 1e-12);
  EXPECT_FALSE(s4.rank_deficient());
}

TEST(Rattle, Names) {
  Sys s = pendulum();
  auto P = s.make();
  Rattle r(*P, true), sh(*P, true, true);
  EXPECT_STREQ(r.name(), "rattle");
  EXPECT_STREQ(sh.name(), "shake");
  EXPECT_EQ(r.order(), 2);
  HamiltonianProblem U(2, s.f);
  EXPECT_THROW(Rattle(U, true), InputError);
}

// Order 2 over 4 step sizes against a fine reference, every path.
TEST(Rattle, OrderTwo) {
  for (const Sys& s : {pendulum(), double_pendulum(), pendulum(0.5)}) {
    const bool separable_ok = s.d != 2 || s.energy(s.x0) == pendulum().energy(s.x0);
    for (const Path& path : kPaths) {
      if (path.separable && !separable_ok) continue;
      for (bool shake : {false, true}) {
        auto Pref = s.make();
        Rattle ref(*Pref, false, shake);
        const double T = 2.0;
        const Vec xref = run_fixed(ref, s.x0, T, 0.1 / 256).x.back();
        std::vector<double> hs, errs;
        for (double h : {0.1, 0.05, 0.025, 0.0125}) {
          auto P = s.make(path.hess, path.ghess);
          Rattle r(*P, path.separable, shake);
          const Vec x = run_fixed(r, s.x0, T, h).x.back();
          // SHAKE's momenta differ from RATTLE's by a normal component: compare q.
          const Vec e = shake ? Vec(x.head(s.d) - xref.head(s.d)) : Vec(x - xref);
          hs.push_back(h);
          errs.push_back(e.lpNorm<Eigen::Infinity>());
        }
        const double slope = test::fitted_order(hs, errs);
        std::printf("[order] d=%d %-16s %s slope %.3f (err %.2e .. %.2e)\n", s.d, path.name,
                    shake ? "shake " : "rattle", slope, errs.front(), errs.back());
        EXPECT_LT(std::abs(slope - 2.0), 0.2);
      }
    }
  }
}

// |g| and |G H_p| at round-off at every output with default tolerances.
TEST(Rattle, ConstraintsAtRoundOff) {
  for (const Sys& s : {pendulum(), double_pendulum(), pendulum(0.5)}) {
    for (const Path& path : kPaths) {
      if (path.separable && s.d == 2 && s.energy(s.x0) != pendulum().energy(s.x0)) {
        continue;
      }
      auto P = s.make(path.hess, path.ghess);
      Rattle r(*P, path.separable);
      const auto rec = run_fixed(r, s.x0, 20.0, 0.02);
      double gmax = 0, hmax = 0;
      for (const Vec& x : rec.x) {
        const auto res = s.residuals(x);
        gmax = std::max(gmax, res.first);
        hmax = std::max(hmax, res.second);
      }
      std::printf("[residuals] d=%d %-16s max|g| %.2e max|G Hp| %.2e (stats %.2e %.2e)\n", s.d,
                  path.name, gmax, hmax, P->stats().max_constraint_residual,
                  P->stats().max_hidden_residual);
      EXPECT_LE(gmax, 1e-12);
      EXPECT_LE(hmax, 1e-12);
      EXPECT_LE(P->stats().max_constraint_residual, 1e-12);
      EXPECT_LE(P->stats().max_hidden_residual, 1e-12);
      EXPECT_GT(P->stats().max_constraint_residual, 0.0);
      // the recorded residuals bound those of the returned points
      EXPECT_GE(P->stats().max_constraint_residual, gmax);
      EXPECT_GE(P->stats().max_hidden_residual, hmax);
    }
  }
}

// SHAKE leaves G(q) H_p = O(h): Stats' max_hidden_residual is that of the
// returned points (it read 0), on every path, against G H_p computed here.
TEST(Rattle, ShakeReportsTheHiddenResidualItLeaves) {
  const Sys s = pendulum();
  for (const Path& path : kPaths) {
    auto P = s.make(path.hess, path.ghess);
    Rattle r(*P, path.separable, true);
    const auto rec = run_fixed(r, s.x0, 10.0, 0.02);
    double hmax = 0;
    for (const Vec& x : rec.x) hmax = std::max(hmax, s.residuals(x).second);
    EXPECT_GT(hmax, 1e-3) << path.name;
    EXPECT_NEAR(P->stats().max_hidden_residual, hmax, 1e-10) << path.name;
  }
}

/// Observer tracking the energy error without storing the trajectory.
struct EnergyObserver : Observer {
  const Sys& s;
  double H0;
  std::vector<double> err;
  EnergyObserver(const Sys& sys) : s(sys), H0(sys.energy(sys.x0)) {}
  bool operator()(double, const Vec& x) override {
    err.push_back(std::abs(s.energy(x) - H0));
    return true;
  }
};

// Energy error bounded without drift over 1e5 steps (pendulum, h = 0.01).
TEST(Rattle, EnergyBoundedLongRun) {
  const Sys s = pendulum();
  auto P = s.make();
  Rattle r(*P, true);
  IntegratorOptions o;
  o.fixed_step = 0.01;
  Integrator I(r, o);
  EnergyObserver obs(s);
  Vec ts(2);
  ts << 0.0, 1000.0;
  const auto t0 = std::chrono::steady_clock::now();
  I.run(ts, s.x0, obs);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(obs.err.size(), 100001u);
  const size_t w = obs.err.size() / 10;
  const double first = *std::max_element(obs.err.begin(), obs.err.begin() + w);
  const double last = *std::max_element(obs.err.end() - w, obs.err.end());
  const double all = *std::max_element(obs.err.begin(), obs.err.end());
  const double calls = double(P->stats().user_calls()) / 1e5;
  std::printf("[energy] 1e5 steps in %.2f s: max err first 10%% %.3e, last 10%% %.3e, all %.3e; "
              "%.2f callbacks/step, %.2f Newton it/step\n",
              secs, first, last, all, calls, double(P->stats().newton_iterations) / 1e5);
  EXPECT_LT(all, 1e-4);
  EXPECT_LT(last, 1.05 * first);  // no drift
  EXPECT_LT(secs, 3.0);
  EXPECT_LE(calls, 10.0);
}

// Callbacks per step for each path (pendulum, h = 0.01).
TEST(Rattle, CallbacksPerStep) {
  const Sys s = pendulum();
  for (const Path& path : kPaths) {
    for (bool shake : {false, true}) {
      auto P = s.make(path.hess, path.ghess);
      Rattle r(*P, path.separable, shake);
      run_fixed(r, s.x0, 10.0, 0.01);
      const Stats& st = P->stats();
      const double n = 1000.0;
      std::printf("[calls] %-16s %s: %.2f user calls/step (f %.2f, g %.2f, G %.2f, hess %.3f, "
                  "ghess %.3f), %.2f Newton it/step, %ld factorizations\n",
                  path.name, shake ? "shake " : "rattle", st.user_calls() / n, st.field_evals / n,
                  st.constraint_evals / n, st.constraint_grad_evals / n, st.hessian_evals / n,
                  st.constraint_hess_evals / n, st.newton_iterations / n, st.lu_factorizations);
      if (path.separable) {
        EXPECT_LE(st.user_calls() / n, 10.0);
        // quadratic T (AffineVelocity learned after 8 steps, d + 1 = 3
        // probes): one f and one G per step (a few more in the first 8
        // steps), g once per Newton pass; SHAKE's first 8 steps (before the
        // model) measure G T_p(p_1) for Stats by one more f
        EXPECT_LE(st.field_evals, 1000 + 4 * 8 + 3 + 1 + (shake ? 8 : 0));
        EXPECT_LE(st.constraint_grad_evals, 1000 + 2 * 8 + 2);
        EXPECT_EQ(st.constraint_evals, st.newton_iterations + st.newton_solves);
        // extrapolated multipliers, then one correction whose size and
        // measured rate bound the error left below round-off: about two g
        // per step (2.55 when every solve ended on a negligible correction)
        EXPECT_LE(st.constraint_evals, 2.25 * n);
      } else {
        // Geometric RATTLE over Störmer–Verlet on the holonomic fibres: per
        // SHAKE Newton iteration one residual of the base method (2 f), g
        // and G at q_1; per iteration of RATTLE's slide onto M_H one f and
        // G(q_1) once (the fibres keep q; it is also the next step's
        // G(q_0)); SHAKE starts from its own point (holonomic fibres need
        // no slide) and takes G(q_0) anew.  Static Hessians (this H and g)
        // taken once and re-checked every 16 steps.
        const long solves = st.newton_solves, its = st.newton_iterations, proj = st.projection_iterations;
        EXPECT_EQ(st.constraint_evals, its);
        EXPECT_LE(st.constraint_grad_evals, its + solves + 1 + (path.ghess ? 0 : s.d * (1000 / 16 + 2)));
        if (shake) EXPECT_LE(proj, 5);  // the first step's start only
        else EXPECT_GE(proj, solves);   // every step ends on M_H
        if (path.hess) {
          // SHAKE: + one f per step measuring {g, H} at its point for Stats
          const long measured = shake ? 1000 : 0;
          EXPECT_GE(st.field_evals, 2 * its + proj + measured);
          EXPECT_LE(st.field_evals, 2 * its + proj + measured + 1);  // + the cold start's explicit guess
          EXPECT_LE(st.hessian_evals, 1000 / 16 + 2);
        }
        EXPECT_LE(its, 3 * solves);  // Newton from a good guess, not a stale matrix
        EXPECT_LE(st.user_calls() / n, shake ? 12.5 : 15.5);
      }
    }
  }
}

// General (with and without Hessians) and separable paths: same trajectory.
TEST(Rattle, PathsAgree) {
  for (const Sys& s : {pendulum(), double_pendulum()}) {
    for (bool shake : {false, true}) {
      std::vector<test::Recorder> recs;
      for (const Path& path : kPaths) {
        auto P = s.make(path.hess, path.ghess);
        Rattle r(*P, path.separable, shake);
        recs.push_back(run_fixed(r, s.x0, 10.0, 0.02));
      }
      const double e1 = max_diff(recs[0], recs[1]), e2 = max_diff(recs[0], recs[2]);
      std::printf("[paths] d=%d %s: separable vs general-analytic %.2e, vs general-fd %.2e\n",
                  s.d, shake ? "shake " : "rattle", e1, e2);
      EXPECT_LT(e1, 1e-12);
      // FD Jacobians are kept over several steps: linear Newton convergence
      // leaves slightly larger (still tolerance-level) differences.
      EXPECT_LT(e2, 5e-12);
    }
  }
}

// Analytic and finite-difference Jacobians: same trajectories (non-separable H).
TEST(Rattle, AnalyticAndFdTrajectoriesAgree) {
  const Sys s = pendulum(0.5);
  auto Pa = s.make(true, true), Pf = s.make(false, false), Pg = s.make(true, true, false);
  Rattle ra(*Pa, false), rf(*Pf, false), rg(*Pg, false);
  const auto a = run_fixed(ra, s.x0, 10.0, 0.02), f = run_fixed(rf, s.x0, 10.0, 0.02);
  const double e = max_diff(a, f);
  std::printf("[analytic vs fd] max diff %.2e; fd Jacobians %ld; analytic %ld\n", e,
              Pf->stats().fd_jacobians, Pa->stats().jacobian_evals);
  EXPECT_LT(e, 1e-12);
  EXPECT_GT(Pf->stats().fd_jacobians, 0);
  EXPECT_EQ(Pa->stats().fd_jacobians, 0);
  // G by finite differences too (the hidden constraint then holds to FD accuracy)
  const auto g = run_fixed(rg, s.x0, 10.0, 0.02);
  EXPECT_LT(max_diff(a, g), 1e-6);
}

// SHAKE's positions are RATTLE's.
TEST(Rattle, ShakePositionsEqualRattle) {
  for (const Sys& s : {pendulum(), double_pendulum()}) {
    for (const Path& path : kPaths) {
      auto P1 = s.make(path.hess, path.ghess), P2 = s.make(path.hess, path.ghess);
      Rattle r(*P1, path.separable), sh(*P2, path.separable, true);
      const auto a = run_fixed(r, s.x0, 10.0, 0.02), b = run_fixed(sh, s.x0, 10.0, 0.02);
      const double eq = max_diff(a, b, s.d);
      const double ep = max_diff(a, b);
      std::printf("[shake] d=%d %-16s positions differ by %.2e (momenta by %.2e)\n", s.d,
                  path.name, eq, ep);
      EXPECT_LT(eq, 1e-12);
      EXPECT_GT(ep, 1e-6);  // the momenta do differ (normal component)
    }
  }
}

// A constraint listed twice integrates exactly like the constraint once.
TEST(Rattle, DuplicatedConstraintEqualsSingle) {
  const Sys s1 = double_pendulum(), s2 = double_pendulum(true);
  for (const Path& path : kPaths) {
    for (bool shake : {false, true}) {
      auto P1 = s1.make(path.hess, path.ghess), P2 = s2.make(path.hess, path.ghess);
      Rattle r1(*P1, path.separable, shake), r2(*P2, path.separable, shake);
      const auto a = run_fixed(r1, s1.x0, 10.0, 0.02), b = run_fixed(r2, s2.x0, 10.0, 0.02);
      const double e = max_diff(a, b);
      std::printf("[duplicate] %-16s %s: max diff %.2e, rank-deficient systems %ld, cond %.1e\n",
                  path.name, shake ? "shake " : "rattle", e, P2->stats().rank_deficient,
                  r2.condition_estimate());
      EXPECT_LT(e, path.hess ? 1e-12 : 5e-12);  // FD: see PathsAgree
      EXPECT_TRUE(r2.rank_deficiency_seen());
      EXPECT_EQ(r2.rank_deficiency_t(), 0.0);
      EXPECT_GT(P2->stats().rank_deficient, 0);
      EXPECT_FALSE(r1.rank_deficiency_seen());
      EXPECT_EQ(P1->stats().rank_deficient, 0);
      for (const Vec& x : b.x) EXPECT_LE(s2.residuals(x).first, 1e-12);
    }
  }
}

// Passing through a configuration where G(q) loses rank: no NaN, the motion
// is the planar pendulum's.
TEST(Rattle, RankDropNoNaN) {
  const Sys s = sphere_cross();
  Sys plane = pendulum();
  Vec x2(4);
  x2 << 0.0, -1.0, 0.8, 0.0;
  for (const Path& path : kPaths) {
    auto P = s.make(path.hess, path.ghess), Q = plane.make(path.hess, path.ghess);
    Rattle r(*P, path.separable), rp(*Q, path.separable);
    const auto a = run_fixed(r, s.x0, 20.0, 0.01), b = run_fixed(rp, x2, 20.0, 0.01);
    double e = 0.0, res = 0.0;
    bool finite = true;
    for (size_t i = 0; i < a.x.size(); ++i) {
      finite = finite && a.x[i].allFinite();
      Vec planar(4);
      planar << a.x[i](0), a.x[i](1), a.x[i](3), a.x[i](4);
      e = std::max(e, (planar - b.x[i]).lpNorm<Eigen::Infinity>());
      e = std::max(e, std::max(std::abs(a.x[i](2)), std::abs(a.x[i](5))));
      res = std::max(res, s.residuals(a.x[i]).first);
    }
    std::printf("[rank drop] %-16s: planar diff %.2e, max|g| %.2e, seen %d at t=%g, "
                "%ld rank-deficient systems, cond %.2e\n",
                path.name, e, res, r.rank_deficiency_seen(), r.rank_deficiency_t(),
                P->stats().rank_deficient, r.condition_estimate());
    EXPECT_TRUE(finite);
    EXPECT_EQ(a.x.size(), b.x.size());
    EXPECT_LT(e, 1e-11);
    EXPECT_LE(res, 1e-12);
    EXPECT_TRUE(r.rank_deficiency_seen());
    EXPECT_EQ(r.rank_deficiency_t(), 0.0);
  }
}

// Expected numerical failures are statuses, never exceptions.
TEST(Rattle, FailuresAreStatuses) {
  for (const Path& path : kPaths) {
    // g = |q|^2 + 1 has no zero: Newton cannot converge.
    Sys s = pendulum();
    s.g = [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() + 1.0; };
    auto P = s.make(path.hess, path.ghess);
    Rattle r(*P, path.separable);
    Point a(4), b(4);
    a.set(0.0, s.x0);
    StepStatus st = StepStatus::Success;
    EXPECT_NO_THROW(st = r.step(a, 0.1, b));
    EXPECT_EQ(st, StepStatus::NewtonDiverged) << path.name;
    // G = 0 (a zero gradient): the minimum-norm multipliers are 0 and q_1
    // leaves the circle; the step must say so, not return it.
    Sys z = pendulum();
    z.G = [](const ConstVecRef&, MatRef G) { G.setZero(); };
    z.GH = [](const ConstVecRef&, MatRef H) { H.setZero(); };
    auto Pz = z.make(path.hess, path.ghess);
    Rattle rz(*Pz, path.separable);
    EXPECT_NO_THROW(st = rz.step(a, 0.1, b));
    EXPECT_NE(st, StepStatus::Success) << path.name;
    // A NaN from the force.
    Sys n = pendulum();
    n.f = [](double, const ConstVecRef& x, VecRef dx) {
      dx.head(2) = x.tail(2);
      dx(2) = 0.0;
      dx(3) = x(1) > -0.9 ? std::nan("") : -1.0;
    };
    auto Pn = n.make(path.hess, path.ghess);
    Rattle rn(*Pn, path.separable);
    EXPECT_NO_THROW(st = rn.step(a, 0.1, b));
    EXPECT_EQ(st, StepStatus::NonFinite) << path.name;
    // Too few iterations allowed.
    auto Pm = pendulum().make(path.hess, path.ghess);
    NewtonOptions no;
    no.max_iterations = 1;
    Rattle rm(*Pm, path.separable, false, no);
    a.set(0.0, pendulum().x0);
    EXPECT_NO_THROW(st = rm.step(a, 0.5, b));
    EXPECT_EQ(st, StepStatus::NewtonDiverged) << path.name;
  }
}

// Tiny steps: the multipliers are then only determined to eps/h; Newton must
// still converge (adaptive starts, reference solutions).
TEST(Rattle, TinyStepsConverge) {
  for (const Sys& s : {pendulum(), double_pendulum()}) {
    for (const Path& path : kPaths) {
      for (double h : {1e-4, 1e-6}) {
        auto P = s.make(path.hess, path.ghess);
        Rattle r(*P, path.separable);
        const auto rec = run_fixed(r, s.x0, 300 * h, h);
        EXPECT_EQ(rec.x.size(), 301u) << path.name << " h=" << h;
        for (const Vec& x : rec.x) EXPECT_LE(s.residuals(x).first, 1e-12);
      }
    }
  }
}

// Adaptive steps (step doubling): constraints still at round-off at outputs.
TEST(Rattle, AdaptiveStepDoubling) {
  for (const Sys& s : {pendulum(), double_pendulum()}) {
    for (const Path& path : kPaths) {
      auto P = s.make(path.hess, path.ghess);
      Rattle r(*P, path.separable);
      IntegratorOptions o;
      o.norm.rel_tol = 1e-6;
      o.norm.abs_tol = Vec::Constant(1, 1e-8);
      Integrator I(r, o);
      test::Recorder rec;
      Vec ts(6);
      ts << 0, 1, 2, 3, 4, 5;
      const auto out = I.run(ts, s.x0, rec);
      ASSERT_EQ(out.outcome, IntegrationResult::Outcome::Completed) << out.message;
      auto Pr = s.make();
      Rattle ref(*Pr, true);
      const Vec xref = run_fixed(ref, s.x0, 5.0, 1e-4).x.back();
      double gmax = 0, hmax = 0;
      for (const Vec& x : rec.x) {
        gmax = std::max(gmax, s.residuals(x).first);
        hmax = std::max(hmax, s.residuals(x).second);
      }
      const double err = (rec.x.back() - xref).lpNorm<Eigen::Infinity>();
      std::printf("[adaptive] d=%d %-16s %ld steps %ld rejected, err %.2e, max|g| %.2e, "
                  "max|G Hp| %.2e\n",
                  s.d, path.name, P->stats().steps, P->stats().rejected, err, gmax, hmax);
      EXPECT_EQ(rec.x.size(), 6u);
      EXPECT_LE(gmax, 1e-12);
      EXPECT_LE(hmax, 1e-12);
      EXPECT_LT(err, 1e-3);
    }
  }
}

// No heap allocation inside step() after warm-up.
TEST(Rattle, NoMallocInStep) {
  struct Case {
    Sys s;
    Path path;
    bool shake;
  };
  std::vector<Case> cases;
  for (const Path& p : kPaths)
    for (bool shake : {false, true}) {
      cases.push_back({pendulum(), p, shake});
      cases.push_back({double_pendulum(), p, shake});
      cases.push_back({double_pendulum(true), p, shake});  // minimum-norm solves
      cases.push_back({sphere_cross(), p, shake});
    }
  for (Case& c : cases) {
    auto P = c.s.make(c.path.hess, c.path.ghess);
    Rattle r(*P, c.path.separable, c.shake);
    const int n = 2 * c.s.d;
    Point a(n), b(n);
    a.set(0.0, c.s.x0);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(r.step(a, 0.01, b), StepStatus::Success);
      std::swap(a, b);
    }
    Eigen::internal::set_is_malloc_allowed(false);
    EXPECT_NO_THROW({
      for (int i = 0; i < 200; ++i) {
        // equal steps (the extrapolated guesses), then alternating sizes as
        // step doubling makes them
        const double h = i < 50 ? 0.01 : i % 3 == 0 ? 0.01 : 0.005;
        if (r.step(a, h, b) != StepStatus::Success) break;
        std::swap(a.t, b.t);
        a.x.swap(b.x);
        a.force.swap(b.force);
        std::swap(a.has_force, b.has_force);
      }
      r.reset();
      r.step(a, 0.01, b);
    });
    Eigen::internal::set_is_malloc_allowed(true);
    EXPECT_TRUE(b.x.allFinite());
  }
}

// Projection of perturbed initial data onto the manifold.
TEST(ConstraintProjection, ProjectsOntoManifold) {
  for (const Sys& s : {pendulum(), double_pendulum(), double_pendulum(true), pendulum(0.5)}) {
    auto P = s.make();
    Vec x = s.x0 + 0.05 * Vec::Random(2 * s.d);
    const ProjectionResult res = project_onto_manifold(*P, 0.0, x);
    const auto after = s.residuals(x);
    std::printf("[project] d=%d m=%d: |g| %.2e -> %.2e, |G Hp| %.2e -> %.2e, %d iterations%s\n",
                s.d, s.m, res.g_before, res.g_after, res.hidden_before, res.hidden_after,
                res.iterations, res.rank_deficient ? " (rank-deficient)" : "");
    EXPECT_TRUE(res.converged);
    EXPECT_GT(res.g_before, 1e-3);
    EXPECT_LE(after.first, 1e-13);
    EXPECT_LE(after.second, 1e-13);
    EXPECT_NEAR(res.g_after, after.first, 1e-16);
    EXPECT_EQ(res.rank_deficient, s.m == 3);
    EXPECT_LT((x - s.x0).norm(), 0.5);
  }
}

// A hanging planar chain of 40 unit links (d = 80, m = 40): the general path
// (geometric RATTLE over Störmer–Verlet, 200 SHAKE unknowns) keeps one
// factorization across steps while it contracts, and must still give the
// separable path's trajectory with the constraints at round-off.
TEST(Rattle, LargeChainKeepsFactorization) {
  const int N = 40, d = 2 * N;
  Sys s;
  s.d = d;
  s.m = N;
  s.f = [d](double, const ConstVecRef& x, VecRef dx) {
    dx.head(d) = x.tail(d);
    for (int i = 0; i < d; ++i) dx(d + i) = (i % 2) ? -1.0 : 0.0;
  };
  s.hess = [d](double, const ConstVecRef&, MatRef H) {
    H.setZero();
    H.bottomRightCorner(d, d).setIdentity();
  };
  auto link = [](const ConstVecRef& q, int k, double& dx, double& dy) {
    dx = q(2 * k) - (k ? q(2 * k - 2) : 0.0);
    dy = q(2 * k + 1) - (k ? q(2 * k - 1) : 0.0);
  };
  s.g = [N, link](const ConstVecRef& q, VecRef g) {
    for (int k = 0; k < N; ++k) {
      double dx, dy;
      link(q, k, dx, dy);
      g(k) = dx * dx + dy * dy - 1.0;
    }
  };
  s.G = [N, link](const ConstVecRef& q, MatRef G) {
    G.setZero();
    for (int k = 0; k < N; ++k) {
      double dx, dy;
      link(q, k, dx, dy);
      G(k, 2 * k) = 2 * dx;
      G(k, 2 * k + 1) = 2 * dy;
      if (k) G(k, 2 * k - 2) = -2 * dx, G(k, 2 * k - 1) = -2 * dy;
    }
  };
  s.x0 = Vec::Zero(2 * d);
  for (int k = 0; k < N; ++k) {  // straight, at 0.3 rad from the vertical, at rest
    s.x0(2 * k) = (k + 1) * std::sin(0.3);
    s.x0(2 * k + 1) = -(k + 1) * std::cos(0.3);
  }
  const double h = 0.01;
  const int steps = 100;
  auto Ps = s.make(true, false), Pg = s.make(true, false);
  Rattle rs(*Ps, true), rg(*Pg, false);
  const auto a = run_fixed(rs, s.x0, steps * h, h), b = run_fixed(rg, s.x0, steps * h, h);
  double gmax = 0.0;
  Vec gv(N);
  for (const Vec& x : b.x) {
    s.g(x.head(d), gv);
    gmax = std::max(gmax, gv.lpNorm<Eigen::Infinity>());
  }
  const Stats& st = Pg->stats();
  const double diff = max_diff(a, b);
  std::printf("[chain] N = %d: separable vs general %.2e, max|g| %.1e, %ld factorizations in %d steps, "
              "%.2f calls/step (separable %.2f)\n",
              N, diff, gmax, st.lu_factorizations, steps, st.user_calls() / double(steps),
              Ps->stats().user_calls() / double(steps));
  EXPECT_LT(diff, 1e-9);  // positions up to 40: 1e-9 is 2.5e-11 relative
  EXPECT_LE(gmax, 1e-12);
  EXPECT_LE(st.lu_factorizations, steps / 4);
}

// Separable H with a non-quadratic T (relativistic, T = sqrt(1 + |p|^2)):
// the quadratic-T shortcut must notice (its check of T_p fails) and the
// separable path must still give the general path's trajectory.
TEST(Rattle, NonQuadraticKineticEnergyFallsBack) {
  Sys s = pendulum();
  s.f = [](double, const ConstVecRef& x, VecRef dx) {
    dx.head(2) = x.tail(2) / std::sqrt(1.0 + x.tail(2).squaredNorm());
    dx(2) = 0.0;
    dx(3) = -1.0;
  };
  s.x0.tail(2) *= std::sqrt(1.0 + s.x0.tail(2).squaredNorm());  // p for the same velocity
  for (bool shake : {false, true}) {
    auto Ps = s.make(false, false), Pg = s.make(false, false);
    Rattle rs(*Ps, true, shake), rg(*Pg, false, shake);
    const auto a = run_fixed(rs, s.x0, 5.0, 0.02), b = run_fixed(rg, s.x0, 5.0, 0.02);
    const double e = max_diff(a, b);
    std::printf("[relativistic] %s separable vs general %.2e, f calls/step %.2f\n", shake ? "shake " : "rattle",
                e, Ps->stats().field_evals / 250.0);
    EXPECT_LT(e, 1e-11);
  }
}

// The Newton at the edges: explicit RATTLE on the unit sphere with a linear
// potential (H = |p|^2/2 - kappa q_3) at steps of up to a radius.  The
// position equation is a quadratic in s (q_1 = a - s q_0) whose root nearest
// 0 is RATTLE's; the warm-started chord once refused a solvable step there
// (h = 0.3, from e1) and reached the other root at h = 0.25.  Every step
// must match the closed form, on both paths, or be refused when the
// quadratic has no real root.
namespace edges {

Sys sphere(double kappa) {
  Sys s;
  s.d = 3;
  s.m = 1;
  s.f = [kappa](double, const ConstVecRef& x, VecRef dx) {
    dx.head(3) = x.tail(3);
    dx.tail(3) << 0.0, 0.0, kappa;
  };
  s.hess = [](double, const ConstVecRef&, MatRef H) {
    H.setZero();
    H.bottomRightCorner(3, 3).setIdentity();
  };
  s.g = [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1.0; };
  s.G = [](const ConstVecRef& q, MatRef G) { G.row(0) = 2.0 * q.transpose(); };
  s.GH = [](const ConstVecRef&, MatRef H) {
    H.setZero();
    H.leftCols(3) = 2.0 * Mat::Identity(3, 3);
  };
  return s;
}


}  // namespace edges

TEST(Rattle, NewtonAtTheEdgesFollowsTheClosedForm) {
  const double kappa = 5.0;
  const Sys s = edges::sphere(kappa);
  std::mt19937 rng(11);
  for (bool separable : {true, false}) {
    long completed = 0, retried = 0;
    for (int trial = 0; trial < 150; ++trial) {
      double h = 0.0;
      const Vec x = sphere_edges::start(trial, rng, h);
      auto P = s.make();
      Rattle r(*P, separable);
      Point a(6), b(6);
      a.set(0.0, x);
      Vec ref = x, next(6);
      bool all = true;
      for (int k = 0; k < 10; ++k) {
        const bool solvable = sphere_edges::closed_form_step(ref, h, kappa, next);
        const StepStatus st = r.step(a, h, b);
        if (!solvable) {  // no root: refused, never a step elsewhere
          EXPECT_NE(st, StepStatus::Success) << "trial " << trial << " step " << k;
          all = false;
          break;
        }
        ASSERT_EQ(st, StepStatus::Success) << (separable ? "separable" : "general") << " trial " << trial
                                           << " step " << k;
        EXPECT_LT((b.x - next).lpNorm<Eigen::Infinity>(), 1e-11)
            << (separable ? "separable" : "general") << " trial " << trial << " step " << k;
        ref = b.x;  // the next step from the method's own point
        std::swap(a, b);
      }
      completed += all;
      retried += P->stats().newton_retries;
    }
    std::printf("[edges] %s: %ld of 150 starts completed 10 steps, %ld steps retried\n",
                separable ? "separable" : "general", completed, retried);
    EXPECT_GT(completed, 100);
    EXPECT_GT(retried, 0);
  }
}
