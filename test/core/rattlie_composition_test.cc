// rattlie_composition_test.cc — symmetric compositions (Hairer, Lubich,
// Wanner, "Geometric Numerical Integration", Sect. II.4, V.3) over RATTLie
// (Hante's RATTLE on Lie groups): the symmetry of one step, fitted orders 4,
// 6, 8 against the closed-form free symmetric top and of the constrained
// heavy top against an independent fine reference, constraints, |p| = 1 and
// energy over 10^4 composed steps, the warm start per stage, the cached
// multipliers, step doubling with the composed order, no heap allocation.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included

#include "EigenConfig.hpp"
#include <Eigen/Geometry>

#include "loop/Integrator.hpp"
#include "LieTestProblems.hpp"
#include "TestProblems.hpp"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"
#include "lie/LieGroupFactory.hpp"
#include "lie/RattLie.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

using namespace odepkg;
using namespace odepkg::lie;
using test::HeavyTop;
using test::constrained_top;
using test::constrained_top_energy;
using test::constrained_top_y0;
using test::residuals;
using test::rotating_top;
using test::quat_to_rot;
using test::skew;

namespace {

/// The binding's Newton options under a composition (StepperFactory.h).
NewtonOptions composed_newton() {
  NewtonOptions o;
  o.tol = 1e-14;
  return o;
}

const composition::CompositionTable& table(const char* name) {
  const composition::CompositionTable* t = composition::find_composition(name);
  if (!t) throw std::runtime_error(std::string("no table ") + name);
  return *t;
}

/// CompositionStepper over RATTLie; `base` is the RATTLie inside.
struct Composed {
  RattLie* base = nullptr;
  std::unique_ptr<CompositionStepper> stepper;
  Composed(LieGroupProblem& lp, const char* name) {
    auto r = std::make_unique<RattLie>(lp, composed_newton());
    base = r.get();
    stepper = std::make_unique<CompositionStepper>(std::move(r), table(name));
  }
};

/// RATTLie without the warm start (no guess to save): Newton of every
/// substep starts from the predictor and the previous substep's λ.
class ColdRattLie final : public Stepper {
 public:
  ColdRattLie(LieGroupProblem& lp, NewtonOptions o) : Stepper(lp.embedded()), r_(lp, o) {}
  const char* name() const override { return "rattlie-cold"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }
  void reset() override { r_.reset(); }
  StepStatus step(Point& from, double h, Point& to) override { return r_.step(from, h, to); }

 private:
  RattLie r_;
};

/// N steps of h from (0, y0), every state (with `keep`) or the last.
std::vector<Vec> integrate(Stepper& st, const Vec& y0, double h, long N, bool keep = false) {
  const int n = static_cast<int>(y0.size());
  Point a(n), b(n);
  a.set(0.0, y0);
  Point *from = &a, *to = &b;
  std::vector<Vec> out;
  if (keep) out.push_back(y0);
  for (long i = 0; i < N; ++i) {
    const StepStatus s = st.step(*from, h, *to);
    if (s != StepStatus::Success) {
      ADD_FAILURE() << "step " << i << ": " << describe(s);
      return {Vec::Constant(n, NAN)};
    }
    to->t = (i + 1) * h;  // as the Integrator's fixed steps
    std::swap(from, to);
    if (keep) out.push_back(from->x);
  }
  if (!keep) out.push_back(from->x);
  return out;
}

// ---- the free symmetric top: a closed form ----------------------------------
// J = diag(J1, J1, J3), f = 0, R(0) = I.  With a = J Ω0 / J1 (spatial momentum
// over J1) and c = (1 − J3/J1) Ω0_3 e3:
//   R(t) = exp(t â) exp(t ĉ),   Ω(t) = exp(−t ĉ) Ω0,
// since Rᵀa + c = Ω (Ṙ = R Ω̂) and R J Ω = exp(t â) J Ω0 = J1 a (J commutes
// with rotations about e3): Euler's equations with L = R J Ω constant.
struct FreeSymmetricTop {
  double J1 = 1.0, J3 = 1.7;
  Eigen::Vector3d Om0{0.8, 0.3, 1.5};
  Mat J() const { return Eigen::Vector3d(J1, J1, J3).asDiagonal(); }
  LieGroupProblem problem() const {
    return LieGroupProblem(make_lie_group("S3", 7), J(), [](double, const ConstVecRef&, VecRef f) { f.setZero(); });
  }
  Vec y0() const {
    Vec y(7);
    y << 1, 0, 0, 0, Om0;
    return y;
  }
  Eigen::Matrix3d R(double t) const {
    const Eigen::Vector3d a = Eigen::Vector3d(J1 * Om0(0), J1 * Om0(1), J3 * Om0(2)) / J1;
    const double c = (1 - J3 / J1) * Om0(2);
    return (Eigen::AngleAxisd(t * a.norm(), a.normalized()) * Eigen::AngleAxisd(t * c, Eigen::Vector3d::UnitZ()))
        .toRotationMatrix();
  }
  Eigen::Vector3d Om(double t) const {
    const double c = (1 - J3 / J1) * Om0(2);
    return Eigen::AngleAxisd(-t * c, Eigen::Vector3d::UnitZ()) * Om0;
  }
  double error(const Vec& y, double t) const {
    return std::max((quat_to_rot(y.head(4)) - Mat(R(t))).norm(), (y.tail(3) - Vec(Om(t))).norm());
  }
};

}  // namespace

TEST(RattLieComposition, OneStepIsSymmetric) {
  // Φ_{−h}(Φ_h(y)) = y: RATTLie's (A) of −h from y1 is its (B) of h, with λ
  // and μ exchanged.  Fast and slow tops, with and without constraints; a
  // fresh stepper for the step back too (no cache, no extrapolated B).
  for (const bool fast : {false, true}) {
    const HeavyTop top(fast);
    const double h = fast ? std::ldexp(1.0, -9) : 0.05;
    struct Case {
      std::unique_ptr<LieGroupProblem> lp;
      Vec y0;
    };
    Case cases[] = {{rotating_top(top), Vec(7)}, {constrained_top(top), constrained_top_y0(top)}};
    cases[0].y0 << 1, 0, 0, 0, top.omega0;
    for (Case& c : cases) {
      for (const bool fresh : {false, true}) {
        RattLie a(*c.lp, composed_newton()), b(*c.lp, composed_newton());
        const int ns = static_cast<int>(c.y0.size());
        Point p0(ns), p1(ns), p2(ns);
        p0.set(0.0, c.y0);
        ASSERT_EQ(a.step(p0, h, p1), StepStatus::Success);
        ASSERT_EQ((fresh ? b : a).step(p1, -h, p2), StepStatus::Success);
        const double back = (p2.x - c.y0).lpNorm<Eigen::Infinity>();
        const double moved = (p1.x - c.y0).lpNorm<Eigen::Infinity>();
        std::printf("symmetry (%s top, m = %d, %s): |y1 - y0| = %.2e, |Phi_-h(Phi_h(y0)) - y0| = %.2e\n",
                    fast ? "fast" : "slow", c.lp->constraints(), fresh ? "fresh" : "same stepper", moved, back);
        EXPECT_GT(moved, 1e-3);
        EXPECT_LT(back, 64 * 2.2e-16 * c.y0.lpNorm<Eigen::Infinity>());
        EXPECT_NEAR(std::abs(p2.t), 0.0, 1e-15);
      }
    }
  }
}

TEST(RattLieComposition, FreeSymmetricTopOrdersFourSixEight) {
  // Closed form above; T = 4 (|Ω| ≈ 1.7, the body turns ~1 rad per unit).
  // Step counts where the error lies between 1e-11 and 1e-3.
  const FreeSymmetricTop top;
  const double T = 4.0;
  struct Case {
    const char* name;
    int order;
    std::vector<long> N;
  } cases[] = {{"TripleJump4", 4, {20, 40, 80}}, {"KahanLi6", 6, {10, 20, 40}}, {"KahanLi8", 8, {8, 12, 18}}};
  for (const Case& c : cases) {
    std::vector<double> hs, errs;
    for (const long N : c.N) {
      LieGroupProblem lp = top.problem();
      Composed m(lp, c.name);
      const Vec y = integrate(*m.stepper, top.y0(), T / N, N).back();
      hs.push_back(T / N);
      errs.push_back(top.error(y, T));
      EXPECT_LT(std::abs(y.head(4).norm() - 1.0), 4e-16 * N * table(c.name).stages);
    }
    const double p = test::fitted_order(hs, errs);
    std::printf("free symmetric top, %s: errors %.3e %.3e %.3e, fitted order %.3f\n", c.name, errs[0], errs[1],
                errs[2], p);
    EXPECT_GT(errs.back(), 1e-12);  // above round-off: the fit measures the method
    EXPECT_NEAR(p, c.order, 0.3);
  }
}

TEST(RattLieComposition, ConstrainedHeavyTopOrdersFourAndSix) {
  // Φ = x − R X on S³ × R³ (3 constraints), slow top to T = 1; reference:
  // Kahan–Li 8 over RATTLie at h = 2^-9 (error ~1e-13 by its h^8 law:
  // measured 2.6e-11 at h = 2^-6 below), a different method at a step 8 to 32
  // times smaller than those fitted.
  const HeavyTop top(false);
  const double T = 1.0;
  const auto p_lr = constrained_top(top);
  LieGroupProblem& lr = *p_lr;
  Composed ref(lr, "KahanLi8");
  const Vec yref = integrate(*ref.stepper, constrained_top_y0(top), T / 512, 512).back();
  {
    const auto p_lc = constrained_top(top);
  LieGroupProblem& lc = *p_lc;
    Composed coarse(lc, "KahanLi8");
    const double e8 = (integrate(*coarse.stepper, constrained_top_y0(top), T / 64, 64).back() - yref)
                          .lpNorm<Eigen::Infinity>();
    std::printf("constrained top: KahanLi8 at h = 2^-6 differs from the reference by %.2e\n", e8);
    EXPECT_LT(e8, 1e-9);
  }
  struct Case {
    const char* name;
    int order;
    std::vector<long> N;
  } cases[] = {{"McLachlan4", 4, {16, 32, 64}}, {"Yoshida6", 6, {16, 32, 64}}};
  for (const Case& c : cases) {
    std::vector<double> hs, errs;
    double phi = 0, hidden = 0;
    for (const long N : c.N) {
      const auto p_lp = constrained_top(top);
  LieGroupProblem& lp = *p_lp;
      Composed m(lp, c.name);
      const std::vector<Vec> ys = integrate(*m.stepper, constrained_top_y0(top), T / N, N, true);
      for (const Vec& y : ys) {
        const auto r = residuals(top, y);
        phi = std::max(phi, r.first);
        hidden = std::max(hidden, r.second);
      }
      hs.push_back(T / N);
      errs.push_back((ys.back() - yref).lpNorm<Eigen::Infinity>());
    }
    const double p = test::fitted_order(hs, errs);
    std::printf("constrained top, %s: errors %.3e %.3e %.3e, fitted order %.3f, max |Phi| %.1e, |B v| %.1e\n",
                c.name, errs[0], errs[1], errs[2], p, phi, hidden);
    EXPECT_GT(errs.back(), 1e-11);
    EXPECT_NEAR(p, c.order, 0.3);
    EXPECT_LT(phi, 4e-15);
    EXPECT_LT(hidden, 1e-14);
  }
}

TEST(RattLieComposition, TenThousandComposedStepsKeepConstraintsGroupAndEnergy) {
  // Fast top (|Ω| = 150), McLachlan4, h = 2^-10: 10^4 steps, 5·10^4
  // substeps of sizes 0.28 h, 0.63 h, −0.81 h.
  const HeavyTop top(true);
  const auto p_lp = constrained_top(top);
  LieGroupProblem& lp = *p_lp;
  Composed m(lp, "McLachlan4");
  const long N = 10000;
  const std::vector<Vec> ys = integrate(*m.stepper, constrained_top_y0(top), std::ldexp(1.0, -10), N, true);
  ASSERT_EQ(static_cast<long>(ys.size()), N + 1);
  double phi = 0, hidden = 0, unit = 0, first = 0, last = 0;
  const double E0 = constrained_top_energy(top, ys.front());
  for (std::size_t k = 0; k < ys.size(); ++k) {
    const auto r = residuals(top, ys[k]);
    phi = std::max(phi, r.first);
    hidden = std::max(hidden, r.second);
    unit = std::max(unit, std::abs(ys[k].head(4).norm() - 1.0));
    const double e = std::abs(constrained_top_energy(top, ys[k]) - E0);
    if (k <= ys.size() / 10) first = std::max(first, e);
    if (k >= ys.size() - ys.size() / 10) last = std::max(last, e);
  }
  std::printf("10^4 McLachlan4 steps of the fast top: |Phi| %.1e, |B v| %.1e, ||p| - 1| %.1e, "
              "|dE| first tenth %.2e, last tenth %.2e (E0 = %.1f)\n", phi, hidden, unit, first, last, E0);
  EXPECT_LT(phi, 1e-14);
  EXPECT_LT(hidden, 1e-11);  // |v| = 150: a few eps |B| |v|
  EXPECT_LT(unit, 1e-13);    // products of exponentials, never renormalised
  EXPECT_LT(first, 1e-3 * std::abs(E0));
  EXPECT_LT(last, 2.0 * first);  // bounded, no drift
}

TEST(RattLieComposition, WarmStartPerStageSavesNewtonIterations) {
  // The same runs with and without the warm start: Newton iterations (each
  // one call of Φ) per substep.  Newton stops at round-off, so the counts
  // are small integers; the warm start lowers them where the guess decides
  // (long substeps) and never raises them.
  struct Case {
    bool fast;
    const char* name;
    int log2_steps;  ///< h = 2^-k
    long N;
  } cases[] = {{false, "McLachlan4", 4, 16}, {false, "KahanLi8", 4, 16}, {true, "TripleJump4", 9, 256},
               {true, "KahanLi8", 9, 256}, {true, "KahanLi8", 7, 64}};
  double warm_total = 0, cold_total = 0;
  for (const Case& c : cases) {
    const HeavyTop top(c.fast);
    const double h = std::ldexp(1.0, -c.log2_steps);
    const auto p_lw = constrained_top(top), p_lc = constrained_top(top);
    LieGroupProblem &lw = *p_lw, &lc = *p_lc;
    Composed warm(lw, c.name);
    CompositionStepper cold(std::make_unique<ColdRattLie>(lc, composed_newton()), table(c.name));
    const Vec yw = integrate(*warm.stepper, constrained_top_y0(top), h, c.N).back();
    const Vec yc = integrate(cold, constrained_top_y0(top), h, c.N).back();
    const double substeps = double(c.N) * table(c.name).stages;
    const double iw = lw.stats().newton_iterations / substeps, ic = lc.stats().newton_iterations / substeps;
    std::printf("%s top, %s, h = 2^-%d: Newton iterations per substep %.2f warm, %.2f cold (max %ld, %ld); "
                "per step: f %.2f, Phi %.2f, B %.2f (warm)\n",
                c.fast ? "fast" : "slow", c.name, c.log2_steps, iw, ic, lw.stats().newton_max_iterations,
                lc.stats().newton_max_iterations, lw.stats().field_evals / double(c.N),
                lw.stats().constraint_evals / double(c.N), lw.stats().constraint_grad_evals / double(c.N));
    // both converge to round-off: the same solution
    EXPECT_LT((yw - yc).lpNorm<Eigen::Infinity>(), 1e-9 * yc.lpNorm<Eigen::Infinity>());
    EXPECT_LE(iw, ic + 0.02);
    warm_total += iw;
    cold_total += ic;
    // one f per substep (+ the start and the velocity re-checks)
    EXPECT_LE(lw.stats().field_evals, substeps * (1.0 + 1.0 / RattLie::kVelocityRecheck) + 3);
  }
  EXPECT_LT(warm_total, cold_total - 0.1);
}

TEST(RattLieComposition, CachedMultipliersAtAComposedStepsEndAreTheStatesOwn) {
  // multipliers() at the end of a composed step reuses f and B cached by the
  // last substep (keyed by the state); a fresh RATTLie evaluates them.
  const HeavyTop top(true);
  const auto p_lp = constrained_top(top), p_lf = constrained_top(top);
    LieGroupProblem &lp = *p_lp, &lf = *p_lf;
  Composed m(lp, "KahanLi6");
  const double h = std::ldexp(1.0, -9);
  const int ns = 13;
  Point a(ns), b(ns);
  a.set(0.0, constrained_top_y0(top));
  for (int k = 0; k < 5; ++k) {
    ASSERT_EQ(m.stepper->step(a, h, b), StepStatus::Success);
    std::swap(a, b);
  }
  Vec lam(3), ref(3);
  const long calls = lp.stats().field_evals;
  ASSERT_TRUE(m.base->multipliers(a.t, a.x, lam));
  EXPECT_EQ(lp.stats().field_evals, calls);  // the cached f
  RattLie fresh(lf, composed_newton());
  ASSERT_TRUE(fresh.multipliers(a.t, a.x, ref));
  EXPECT_LT((lam - ref).lpNorm<Eigen::Infinity>(), 1e-12 * ref.lpNorm<Eigen::Infinity>());
  EXPECT_GT(ref.norm(), 1.0);
}

TEST(RattLieComposition, StepDoublingUsesTheComposedOrder) {
  // Adaptive steps on the slow constrained top to T = 1 at two tolerances:
  // the error follows the tolerance and the step count grows as tol^(-1/5)
  // (order 4 + 1 per step) rather than tol^(-1/3).
  const HeavyTop top(false);
  const double T = 1.0;
  const auto p_lr = constrained_top(top);
  LieGroupProblem& lr = *p_lr;
  Composed ref(lr, "KahanLi8");
  const Vec yref = integrate(*ref.stepper, constrained_top_y0(top), T / 512, 512).back();
  std::vector<double> steps;
  for (const double tol : {1e-6, 1e-9}) {
    const auto p_lp = constrained_top(top);
  LieGroupProblem& lp = *p_lp;
    Composed m(lp, "McLachlan4");
    IntegratorOptions io;
    io.norm.rel_tol = tol;
    io.norm.abs_tol = Vec::Constant(1, tol);
    Integrator integ(*m.stepper, io);
    test::Recorder rec;
    Vec times(2);
    times << 0.0, T;
    const IntegrationResult r = integ.run(times, constrained_top_y0(top), rec);
    ASSERT_EQ(r.outcome, IntegrationResult::Outcome::Completed) << r.message;
    const double err = (rec.x.back() - yref).lpNorm<Eigen::Infinity>();
    std::printf("step doubling, McLachlan4, tol %.0e: %ld steps, %ld rejected, error %.2e\n", tol,
                lp.stats().steps, lp.stats().rejected, err);
    EXPECT_LT(err, 100 * tol);
    steps.push_back(double(lp.stats().steps));
  }
  const double slope = std::log(steps[1] / steps[0]) / std::log(1e3);  // ≈ 1/5
  EXPECT_GT(slope, 0.12);
  EXPECT_LT(slope, 0.28);
}

TEST(RattLieComposition, ComposedStepsDoNotAllocate) {
  const HeavyTop top(true);
  // captureless callbacks (nothing in them allocates); B by differences
  Mat M = Mat::Zero(6, 6);
  M.topLeftCorner(3, 3) = top.Jc;
  M.bottomRightCorner(3, 3) = top.mass * Mat::Identity(3, 3);
  LieGroupProblem la(make_lie_group("S3xR3", 13), M, [](double, const ConstVecRef&, VecRef f) {
    f << 0, 0, 0, 0, 0, 15.0 * 9.81;
  });
  la.set_constraints(
      3,
      [](const ConstVecRef& q, VecRef phi) {
        const double a = q(0), b = q(1), c = q(2), d = q(3);  // R(p) e_y
        phi(0) = q(4) - 2 * (b * c - a * d);
        phi(1) = q(5) - (a * a - b * b + c * c - d * d);
        phi(2) = q(6) - 2 * (c * d + a * b);
      },
      nullptr);
  Composed m(la, "KahanLi8");
  Point a(13), b(13);
  a.set(0.0, constrained_top_y0(top));
  const double h = 1e-3;
  ASSERT_EQ(m.stepper->step(a, h, b), StepStatus::Success);
  std::swap(a, b);
  Eigen::internal::set_is_malloc_allowed(false);
  StepStatus s = StepStatus::Success;
  for (int k = 0; k < 20 && s == StepStatus::Success; ++k) {
    s = m.stepper->step(a, h, b);
    std::swap(a, b);
  }
  Eigen::internal::set_is_malloc_allowed(true);
  EXPECT_EQ(s, StepStatus::Success);
}
