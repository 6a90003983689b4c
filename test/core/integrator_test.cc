// integrator_test.cc — the integration loop of Integrator.hpp: fixed steps,
// adaptive steps (step doubling + StepSizeController), output at requested
// times, the observer, failures and their partial results.
#include "loop/Integrator.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "TestProblems.hpp"
#include "unconstrained/VelocityVerlet.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace odepkg;
using Outcome = IntegrationResult::Outcome;

namespace {

/// Harmonic oscillator H = (p^2 + q^2)/2 with closed-form solution.
void oscillator(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -x(0);
}
Vec x0_osc() {
  Vec x(2);
  x << 1.0, 0.5;
  return x;
}
Vec exact_osc(double t) {
  const Vec x0 = x0_osc();
  Vec x(2);
  x << x0(0) * std::cos(t) + x0(1) * std::sin(t), x0(1) * std::cos(t) - x0(0) * std::sin(t);
  return x;
}

Vec times(std::initializer_list<double> v) {
  Vec t(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double a : v) t(i++) = a;
  return t;
}

/// Records points and stops after `limit` of them.
struct StopAfter : test::Recorder {
  size_t limit;
  explicit StopAfter(size_t n) : limit(n) {}
  bool operator()(double tt, const Vec& xx) override {
    test::Recorder::operator()(tt, xx);
    return t.size() < limit;
  }
};

IntegratorOptions adaptive(double tol) {
  IntegratorOptions o;
  o.norm.rel_tol = tol;
  o.norm.abs_tol = Vec::Constant(1, tol);
  return o;
}

}  // namespace

// ---- fixed steps ---------------------------------------------------------------------

// N steps of h: N + 1 output points at t_k = k h, the last exactly at tf, the
// same states as N manual steps; backwards over the same grid the symmetric
// SV comes back to x0 (up to rounding).  f0 given: no call for the first force.
TEST(Integrator, FixedStepsEveryStep) {
  const int N = 37;
  const double h = 0.1, tf = 3.7;
  HamiltonianProblem P(1, &oscillator);
  StormerVerlet sv(P, true);
  IntegratorOptions o;
  o.fixed_step = h;
  Integrator I(sv, o);
  test::Recorder r;
  const IntegrationResult res = I.run(times({0.0, tf}), x0_osc(), r);
  EXPECT_EQ(res.outcome, Outcome::Completed);
  ASSERT_EQ(r.t.size(), size_t(N + 1));
  EXPECT_EQ(r.t.back(), tf);
  EXPECT_EQ(res.t, tf);
  for (int k = 0; k <= N; ++k) EXPECT_NEAR(r.t[k], k * h, 1e-14);
  EXPECT_EQ(P.stats().steps, N);
  EXPECT_EQ(P.stats().rejected, 0);

  // The same N steps by hand.
  HamiltonianProblem Q(1, &oscillator);
  StormerVerlet sq(Q, true);
  Point a(2), b(2);
  a.set(0.0, x0_osc());
  for (int k = 0; k < N; ++k) {
    ASSERT_EQ(sq.step(a, h, b), StepStatus::Success);
    std::swap(a, b);
  }
  EXPECT_LT((r.x.back() - a.x).norm(), 1e-13);
  // SV on the oscillator: phase error ~ t h^2 / 24 (numerical frequency
  // from cos(theta) = 1 - h^2/2), amplitude error O(h^2).
  EXPECT_LT((r.x.back() - exact_osc(tf)).norm(), 2 * tf * h * h / 24 + h * h);

  // Backwards from tf to 0.
  test::Recorder back;
  Integrator Ib(sv, o);
  EXPECT_EQ(Ib.run(times({tf, 0.0}), r.x.back(), back).outcome, Outcome::Completed);
  ASSERT_EQ(back.t.size(), size_t(N + 1));
  EXPECT_EQ(back.t.back(), 0.0);
  EXPECT_LT((back.x.back() - x0_osc()).norm(), 1e-13);

  // f0 supplied: velocity Verlet then calls f once per step only.
  HamiltonianProblem V(1, &oscillator);
  VelocityVerlet vv(V);
  Integrator Iv(vv, o);
  test::Recorder rv;
  Vec f0(2);
  oscillator(0.0, x0_osc(), f0);
  Iv.run(times({0.0, tf}), x0_osc(), rv, nullptr, &f0);
  EXPECT_EQ(V.stats().field_evals, N);
}

// A step that does not divide the interval: steps of h, the last one
// shortened to end on tf (0.3, 0.6, 0.9, 1.0).
TEST(Integrator, FixedStepsLastStepShortened) {
  HamiltonianProblem P(1, &oscillator);
  VelocityVerlet vv(P);
  IntegratorOptions o;
  o.fixed_step = 0.3;
  Integrator I(vv, o);
  test::Recorder r;
  I.run(times({0.0, 1.0}), x0_osc(), r);
  ASSERT_EQ(r.t.size(), 5u);
  const double expect[] = {0.0, 0.3, 0.6, 0.9, 1.0};
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(r.t[k], expect[k], 1e-15);
  EXPECT_EQ(r.t.back(), 1.0);
}

// Output only (and exactly) at requested times.  Fixed steps of 0.1 restart
// at each requested time: spans 0.25, 0.85, 1.4, pi - 2.5 take 3 + 9 + 14 + 7
// steps.  Adaptive: the same output times, the values within the tolerance
// scale of the exact solution.
TEST(Integrator, OutputAtRequestedTimes) {
  const Vec ts = times({0.0, 0.25, 1.1, 2.5, M_PI});
  for (bool fixed : {true, false}) {
    HamiltonianProblem P(1, &oscillator);
    StormerVerlet sv(P, true);
    IntegratorOptions o = adaptive(1e-8);
    if (fixed) o.fixed_step = 0.1;
    Integrator I(sv, o);
    test::Recorder r;
    EXPECT_EQ(I.run(ts, x0_osc(), r).outcome, Outcome::Completed);
    ASSERT_EQ(r.t.size(), size_t(ts.size()));
    for (Eigen::Index k = 0; k < ts.size(); ++k) {
      EXPECT_EQ(r.t[k], ts(k)) << (fixed ? "fixed" : "adaptive");
      // fixed: SV's O(h^2) error (phase t h^2/24 + amplitude), adaptive: tol scale
      const double bound = fixed ? 2 * ts(k) * 0.01 / 24 + 0.01 : 1e-6;
      EXPECT_LT((r.x[k] - exact_osc(ts(k))).norm(), bound);
    }
    if (fixed) {
      EXPECT_EQ(P.stats().steps, 3 + 9 + 14 + 7);
    }
  }
}

// ---- adaptive steps ------------------------------------------------------------------

// Adaptive SV on the oscillator over two periods, tol (RelTol = AbsTol) 1e-4,
// 1e-6, 1e-8:
//   * ends exactly at tf, outputs every accepted step (Stats.steps + 1 points);
//   * tighter tol: smaller error, more steps.  With the local error per step
//     controlled (err ~ C h^3 ~ tol): h ~ tol^{1/3}, so the number of steps N
//     grows like tol^{-1/3} (x 4.64 per factor 1e-2 in tol) ...
//   * ... and the global error, a sum of N local errors carried by the
//     norm-preserving flow of the oscillator, is at most ~N tol |x| and
//     scales like N tol ~ tol^{2/3} (x 21.5 per factor 1e-2).
//     Note: e / tol itself grows like tol^{-1/3} (about 17, 73, 340 here), so
//     "below 100 tol" holds only down to tol ~ 1e-6 over two periods.
TEST(Integrator, AdaptiveStepsReachEndAndMeetTolerance) {
  const double tf = 4 * M_PI;
  std::vector<double> err;
  std::vector<long> steps;
  for (double tol : {1e-4, 1e-6, 1e-8}) {
    HamiltonianProblem P(1, &oscillator);
    StormerVerlet sv(P, true);
    Integrator I(sv, adaptive(tol));
    test::Recorder r;
    const IntegrationResult res = I.run(times({0.0, tf}), x0_osc(), r);
    EXPECT_EQ(res.outcome, Outcome::Completed);
    EXPECT_EQ(r.t.back(), tf);
    EXPECT_EQ(res.t, tf);
    EXPECT_EQ(long(r.t.size()), P.stats().steps + 1);
    for (size_t k = 1; k < r.t.size(); ++k) ASSERT_GT(r.t[k], r.t[k - 1]);
    double e = 0.0;
    for (size_t k = 0; k < r.t.size(); ++k) e = std::max(e, (r.x[k] - exact_osc(r.t[k])).norm());
    err.push_back(e);
    steps.push_back(P.stats().steps);
    std::printf("[adaptive] tol %.0e: %ld steps, %ld rejected, max global error %.2e (%.1f tol)\n", tol,
                P.stats().steps, P.stats().rejected, e, e / tol);
    EXPECT_LT(e, P.stats().steps * tol * x0_osc().norm());
    if (tol >= 1e-6) {
      EXPECT_LT(e, 100 * tol);
    }
  }
  for (int i = 0; i < 2; ++i) {
    const double steps_ratio = double(steps[i + 1]) / steps[i], err_ratio = err[i] / err[i + 1];
    EXPECT_GT(steps_ratio, 3.5);
    EXPECT_LT(steps_ratio, 6.0);
    EXPECT_GT(err_ratio, 15.0);
    EXPECT_LT(err_ratio, 30.0);
  }

  HamiltonianProblem V(1, &oscillator);
  VelocityVerlet vv(V);
  IntegratorOptions o = adaptive(1e-6);
  o.initial_step = 2.0;
  Integrator I(vv, o);
  test::Recorder r;
  EXPECT_EQ(I.run(times({0.0, tf}), x0_osc(), r).outcome, Outcome::Completed);
  const Stats& st = V.stats();
  EXPECT_GE(st.rejected, 1);
  EXPECT_EQ(st.field_evals, 1 + 3 * (st.steps + st.rejected));
  EXPECT_EQ(long(r.t.size()), st.steps + 1);
}

// MaxStep bounds every step; backwards integration works the same way.
TEST(Integrator, AdaptiveMaxStepAndBackwards) {
  HamiltonianProblem P(1, &oscillator);
  StormerVerlet sv(P, true);
  IntegratorOptions o = adaptive(1e-4);
  o.max_step = 0.05;
  Integrator I(sv, o);
  test::Recorder r;
  I.run(times({2.0, -1.0}), exact_osc(2.0), r);
  EXPECT_EQ(r.t.back(), -1.0);
  for (size_t k = 1; k < r.t.size(); ++k) {
    ASSERT_LT(r.t[k], r.t[k - 1]);
    ASSERT_LE(r.t[k - 1] - r.t[k], 0.05 * (1 + 1e-12));
  }
  EXPECT_GE(long(r.t.size()), 3.0 / 0.05);
  EXPECT_LT((r.x.back() - exact_osc(-1.0)).norm(), 1e-2);
}

// ---- observer, failures --------------------------------------------------------------

// The observer returning false stops the run at once: the points seen so far,
// outcome StoppedByObserver, t of the last point.
TEST(Integrator, ObserverStops) {
  for (bool fixed : {true, false}) {
    for (size_t limit : {1u, 4u}) {
      HamiltonianProblem P(1, &oscillator);
      StormerVerlet sv(P, true);
      IntegratorOptions o = adaptive(1e-6);
      if (fixed) o.fixed_step = 0.1;
      Integrator I(sv, o);
      StopAfter r(limit);
      const IntegrationResult res = I.run(times({0.0, 10.0}), x0_osc(), r);
      EXPECT_EQ(res.outcome, Outcome::StoppedByObserver);
      ASSERT_EQ(r.t.size(), limit);
      EXPECT_EQ(res.t, r.t.back());
      EXPECT_EQ(P.stats().steps, long(limit) - 1);
      if (fixed) {
        EXPECT_NEAR(res.t, 0.1 * (limit - 1), 1e-15);
      }
    }
  }
}

// f turns NaN for t > 1.  Fixed steps: the step from t = 1 fails, the run ends
// with Failed, a "non-finite" message and the 11 points up to t = 1 kept.
// Adaptive: steps crossing t = 1 are rejected and halved, the run creeps up to
// t = 1 and ends when the step size falls below its minimum, again with the
// cause named and all points kept (finite, t <= 1).
TEST(Integrator, NonFiniteFieldEndsRunWithPartialResult) {
  auto f = [](double t, const ConstVecRef& x, VecRef dx) {
    dx(0) = x(1);
    dx(1) = t > 1.0 ? std::nan("") : -x(0);
  };
  for (bool fixed : {true, false}) {
    HamiltonianProblem P(1, f);
    StormerVerlet sv(P, true);
    IntegratorOptions o = adaptive(1e-6);
    if (fixed) o.fixed_step = 0.1;
    Integrator I(sv, o);
    test::Recorder r;
    IntegrationResult res;
    EXPECT_NO_THROW(res = I.run(times({0.0, 3.0}), x0_osc(), r));
    std::printf("[nan] %s: %zu points, t = %.17g: %s\n", fixed ? "fixed" : "adaptive", r.t.size(),
                res.t, res.message.c_str());
    EXPECT_EQ(res.outcome, Outcome::Failed);
    EXPECT_NE(res.message.find("non-finite"), std::string::npos) << res.message;
    ASSERT_FALSE(r.t.empty());
    EXPECT_EQ(res.t, r.t.back());
    for (const Vec& x : r.x) EXPECT_TRUE(x.allFinite());
    EXPECT_LE(r.t.back(), 1.0);
    if (fixed) {
      EXPECT_EQ(r.t.size(), 11u);
      EXPECT_NEAR(r.t.back(), 1.0, 1e-14);
    } else {
      EXPECT_NE(res.message.find("fell below the minimum"), std::string::npos) << res.message;
      EXPECT_GT(r.t.back(), 1.0 - 1e-12);
      EXPECT_GT(P.stats().rejected, 0);
      EXPECT_EQ(P.stats().failed_solves, P.stats().rejected);  // all rejections were failures
    }
    EXPECT_LT((r.x.back() - exact_osc(r.t.back())).norm(), fixed ? 1e-3 : 1e-4);
  }
}

// Every attempt fails (f is NaN for t > 0): each failure halves the step,
// until it falls below 16 eps max(|t|, |tf|).  The run reports that with the
// cause, without exception, keeping the initial point; the number of
// rejections follows: 0.1 / 2^k < 16 eps first for k = ceil(log2(0.1 / (16 eps))).
// (There is no MaxSteps option; an unattainable tolerance such as 1e-30 is
// not a usable test: steps whose two estimates agree to the last bit have
// err = 0 and are accepted, so the run creeps on with tiny steps.)
TEST(Integrator, StepSizeUnderflowReported) {
  auto f = [](double t, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = t > 0.0 ? std::nan("") : -x(0);
  };
  HamiltonianProblem P(1, f);
  StormerVerlet sv(P, true);
  IntegratorOptions o = adaptive(1e-6);
  o.initial_step = 0.1;
  Integrator I(sv, o);
  test::Recorder r;
  IntegrationResult res;
  EXPECT_NO_THROW(res = I.run(times({0.0, 1.0}), x0_osc(), r));
  EXPECT_EQ(res.outcome, Outcome::Failed);
  EXPECT_NE(res.message.find("fell below the minimum"), std::string::npos) << res.message;
  EXPECT_NE(res.message.find("after: non-finite"), std::string::npos) << res.message;
  EXPECT_EQ(r.t.size(), 1u);
  EXPECT_EQ(res.t, 0.0);
  EXPECT_EQ(P.stats().steps, 0);
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_EQ(P.stats().rejected, long(std::ceil(std::log2(0.1 / (16 * eps)))));
}

// The interrupt hook runs before every step attempt; an exception from it
// (Ctrl-C in Octave) propagates out of run().  Fewer than two times: InputError.
TEST(Integrator, InterruptHookAndInputErrors) {
  HamiltonianProblem P(1, &oscillator);
  StormerVerlet sv(P, true);
  IntegratorOptions o;
  o.fixed_step = 0.1;
  Integrator I(sv, o);
  test::Recorder r;
  int calls = 0;
  I.run(times({0.0, 1.0}), x0_osc(), r, [&] { ++calls; });
  EXPECT_EQ(calls, 10);
  calls = 0;
  EXPECT_THROW(I.run(times({0.0, 1.0}), x0_osc(), r,
                     [&] {
                       if (++calls == 4) throw std::runtime_error("interrupted");
                     }),
               std::runtime_error);
  EXPECT_THROW(I.run(times({0.0}), x0_osc(), r), InputError);
  // A step so small that the step count is not exact (it once overflowed
  // to a single step over the whole span): an input error, not a result.
  IntegratorOptions tiny;
  tiny.fixed_step = 1e-20;
  Integrator It(sv, tiny);
  test::Recorder rt;
  EXPECT_THROW(It.run(times({0.0, 1.0}), x0_osc(), rt), InputError);
  EXPECT_TRUE(rt.x.empty() || rt.x.size() == 1u);
}

// ---- time resolution (issue 13, defect 1) --------------------------------------------

// A span, an interval of the requested times, or a step below the time
// resolution 16 eps(t) is an input error before the first step (the adaptive
// loop once halved a failed step to 0 and retried it forever on [0, 4.9e-324];
// fixed steps of 0.05 at t = 1e16 repeated the output times).  Spans just
// above it run.
TEST(Integrator, SpanOrStepBelowTimeResolutionIsInputError) {
  HamiltonianProblem P(1, &oscillator);
  StormerVerlet sv(P, true);
  const double tiny = std::numeric_limits<double>::denorm_min();
  auto expect_input_error = [&](IntegratorOptions o, const Vec& t, const char* name) {
    Integrator I(sv, o);
    test::Recorder r;
    try {
      I.run(t, x0_osc(), r);
      ADD_FAILURE() << "no InputError for " << name;
    } catch (const InputError& e) {
      EXPECT_EQ(e.id, "invalidInput");
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("time resolution"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(r.t.empty()) << name << ": output before the input error";
  };
  IntegratorOptions adapt = adaptive(1e-6);
  adapt.max_step = 1.0;
  expect_input_error(adapt, times({0.0, tiny}), "TSPAN");
  expect_input_error(adapt, times({0.0, -tiny}), "TSPAN");
  expect_input_error(adapt, times({1e16, 1e16 + 2}), "TSPAN");
  expect_input_error(adapt, times({0.0, 1.0, 1.0 + 2.2e-16, 2.0}), "TSPAN(2)");
  IntegratorOptions fixed;
  fixed.fixed_step = 0.05;
  expect_input_error(fixed, times({1e16, 1e16 + 64}), "TimeStepSize");
  expect_input_error(fixed, times({0.0, tiny}), "TSPAN");
  fixed.fixed_step = 1e-20;
  expect_input_error(fixed, times({0.0, 1.0}), "TimeStepSize");
  IntegratorOptions small_max = adaptive(1e-6);
  small_max.max_step = 1e-17;
  expect_input_error(small_max, times({1.0, 2.0}), "MaxStep");
  IntegratorOptions small_h0 = adaptive(1e-6);
  small_h0.initial_step = 1e-17;
  expect_input_error(small_h0, times({1.0, 2.0}), "InitialStep");

  // Resolvable: 1e-300 near 0 (adaptive), 128 at 1e16 with steps of 64
  // (16 eps(1e16) = 35.5).
  {
    Integrator I(sv, adapt);
    test::Recorder r;
    EXPECT_EQ(I.run(times({0.0, 1e-300}), x0_osc(), r).outcome, Outcome::Completed);
    EXPECT_EQ(r.t.back(), 1e-300);
  }
  {
    IntegratorOptions f;
    f.fixed_step = 64.0;
    Integrator I(sv, f);
    test::Recorder r;
    EXPECT_EQ(I.run(times({1e16, 1e16 + 128}), x0_osc(), r).outcome, Outcome::Completed);
    ASSERT_EQ(r.t.size(), 3u);
    EXPECT_LT(r.t[0], r.t[1]);
    EXPECT_LT(r.t[1], r.t[2]);
  }
}

// ---- non-finite state (issue 13, defect 2) -------------------------------------------

// Explicit symplectic Euler, f = 1 everywhere, x0 = 1e308: x overflows to
// Inf after steps of 1e307 with every value of f finite (odeSE once returned
// Inf rows silently).  Fixed steps: the run ends with NonFinite at once, the
// output (only finite rows) stops before the overflow.  Adaptive: the
// overflowed attempt is a failed one, the run ends with the cause named.
TEST(Integrator, NonFiniteStateEndsRun) {
  auto ones = [](double, const ConstVecRef&, VecRef dx) { dx.setOnes(); };
  for (bool fixed : {true, false}) {
    HamiltonianProblem P(1, ones);
    SymplecticEuler se(P, true);
    IntegratorOptions o = adaptive(1e-6);
    if (fixed) {
      o.fixed_step = 1e307;
    } else {
      o.initial_step = 1e307;
    }
    Integrator I(se, o);
    test::Recorder r;
    Vec x0(2);
    x0 << 1e308, 1e308;
    IntegrationResult res;
    EXPECT_NO_THROW(res = I.run(times({0.0, 1e308}), x0, r));
    std::printf("[overflow] %s: %zu points, t = %g: %s\n", fixed ? "fixed" : "adaptive", r.t.size(),
                res.t, res.message.c_str());
    EXPECT_EQ(res.outcome, Outcome::Failed);
    EXPECT_NE(res.message.find("non-finite"), std::string::npos) << res.message;
    ASSERT_FALSE(r.x.empty());
    for (const Vec& x : r.x) EXPECT_TRUE(x.allFinite());
    if (fixed) {
      EXPECT_EQ(r.t.size(), 8u);
      EXPECT_EQ(P.stats().steps, 7);
    }  // 1e308 + 7e307 < DBL_MAX < 1e308 + 8e307
  }
}

// Newton that cannot converge at useful step sizes ends an adaptive run with
// its cause (issue 13, defect 4).  With MaxNewtonIterations 1 the implicit
// Störmer–Verlet converges only where the first correction is below the
// tolerance (h ~ 1e-8 here): it took 1.6 million steps for t in [0, 0.05]
// on Kepler.  Now it fails within kNewtonLimitedSteps steps, with the
// partial result; with 2 iterations the same run completes untouched, and a
// MaxStep-limited run (tiny error estimates, no Newton failures) too.
TEST(Integrator, NewtonLimitedStepsFailFast) {
  auto kepler_field = [](double, const ConstVecRef& x, VecRef dx) {
    const double r = std::sqrt(x(0) * x(0) + x(1) * x(1));
    dx << x(2), x(3), -x(0) / (r * r * r), -x(1) / (r * r * r);
  };
  for (int maxit : {1, 2}) {
    for (double max_step : {std::numeric_limits<double>::infinity(), 1e-3}) {
      HamiltonianProblem P(2, kepler_field);
      NewtonOptions no;
      no.max_iterations = maxit;
      StormerVerlet s(P, false, no);
      IntegratorOptions o;
      o.norm.rel_tol = 1e-6;
      o.norm.abs_tol = Vec::Constant(1, 1e-6);
      o.max_step = max_step;
      test::Recorder rec;
      Vec x0(4), ts(2);
      x0 << 0.4, 0.0, 0.0, 2.0;
      ts << 0.0, 2.0;
      const IntegrationResult r = Integrator(s, o).run(ts, x0, rec);
      if (maxit == 1) {
        EXPECT_EQ(r.outcome, IntegrationResult::Outcome::Failed);
        EXPECT_NE(r.message.find("MaxNewtonIterations"), std::string::npos) << r.message;
        EXPECT_LE(P.stats().steps, Integrator::kNewtonLimitedSteps);
        EXPECT_EQ(rec.t.back(), r.t);  // the partial result ends where the run did
      } else {
        EXPECT_EQ(r.outcome, IntegrationResult::Outcome::Completed) << r.message;
        EXPECT_EQ(rec.t.back(), 2.0);
        if (max_step < 1.0) {
          EXPECT_GE(P.stats().steps, 2000);  // MaxStep-limited throughout
        }
      }
    }
  }
}
