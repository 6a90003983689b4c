// progress_test.cc — the progress meter of ProgressMeter.hpp and its hook in
// the integration loop: reports at most once per report interval of wall
// time (plus the last one), the last report at the end of the run with
// t = tf, the clock read every few thousand cheap steps rather than every
// step, and no heap allocation per step (counted by this binary's own
// operator new).
#include "loop/Integrator.hpp"
#include "loop/ProgressMeter.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "CountingNew.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <vector>

using namespace odepkg;
using Clock = std::chrono::steady_clock;

namespace {

void oscillator(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -x(0);
}

Vec span(double a, double b) {
  Vec t(2);
  t << a, b;
  return t;
}

/// Counts the output points without storing them (no allocation).
struct Counter : Observer {
  long n = 0;
  bool operator()(double, const Vec&) override {
    ++n;
    return true;
  }
};

/// Keeps the reports in storage reserved up front.
struct Reports {
  std::vector<ProgressReport> r;  // the first 1000 reports (the callback does not allocate)
  ProgressReport last;            // and always the last one, with the count of all
  long count = 0;
  Reports() { r.reserve(1000); }
  ProgressMeter::Callback callback() {
    return [this](const ProgressReport& p) {
      ++count;
      last = p;
      if (r.size() < r.capacity()) r.push_back(p);
    };
  }
};

double seconds_since(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

}  // namespace

// One wall second of cheap "steps" (a counter and a few flops each): at most
// 1 / 0.25 reports from step() plus the last one from finish(), times and
// elapsed times increasing, the last report done with t = tf; the clock read
// far less often than once per step.
TEST(ProgressMeter, BoundedReportsPerWallSecond) {
  Reports rec;
  ProgressMeter m(rec.callback());
  const double t0 = 2.0, tf = 7.0;
  m.start(t0, tf);
  const Clock::time_point begin = Clock::now();
  long steps = 0;
  volatile double sink = 0.0;
  double wall = 0.0;
  while ((wall = seconds_since(begin)) < 1.0) {
    for (int i = 0; i < 1000; ++i) {
      ++steps;
      sink = sink + 1e-9 * i;
      m.step(t0 + (tf - t0) * wall);
    }
  }
  m.finish(tf);
  wall = seconds_since(begin);
  ASSERT_GE(rec.r.size(), 2u);  // at least one report from step() in a second, and the last
  EXPECT_LE(static_cast<double>(rec.r.size()), wall / 0.25 + 1.0);
  for (size_t i = 1; i < rec.r.size(); ++i) {
    EXPECT_GE(rec.r[i].t, rec.r[i - 1].t);
    EXPECT_GT(rec.r[i].elapsed, rec.r[i - 1].elapsed);
    if (i + 1 < rec.r.size()) {
      EXPECT_GE(rec.r[i].elapsed - rec.r[i - 1].elapsed, 0.25);
    }
    EXPECT_FALSE(rec.r[i - 1].done);
  }
  EXPECT_TRUE(rec.r.back().done);
  EXPECT_EQ(rec.r.back().t, tf);
  EXPECT_EQ(rec.r.back().fraction(), 1.0);
  EXPECT_EQ(rec.r.back().t0, t0);
  EXPECT_EQ(rec.r.back().tf, tf);
  EXPECT_NEAR(rec.r.back().elapsed, wall, 0.05);
  EXPECT_EQ(m.reports(), static_cast<long>(rec.r.size()));
  // The clock: aimed at one read per 5 ms, so a few hundred in a second,
  // not one per step (millions of steps).
  EXPECT_GT(steps, 1000 * m.polls());
  EXPECT_LT(m.polls(), 2000);
  EXPECT_GT(m.stride(), 1000u);
}

// Slow steps (2 ms, above the 5 ms/2 of the poll interval): the stride stays
// small, so a run of steps of seconds is still reported on time.
TEST(ProgressMeter, SlowStepsReadTheClockEveryStep) {
  Reports rec;
  ProgressMeter::Options o;
  o.report_interval = 0.02;
  ProgressMeter m(rec.callback(), o);
  m.start(0.0, 1.0);
  const Clock::time_point begin = Clock::now();
  for (int i = 1; i <= 40; ++i) {
    const Clock::time_point a = Clock::now();
    while (seconds_since(a) < 0.002) {
    }
    m.step(i / 40.0);
  }
  m.finish(1.0);
  const double wall = seconds_since(begin);  // 80 ms, more on a loaded machine
  EXPECT_LE(m.stride(), 2u);
  EXPECT_GE(m.polls(), 20);
  // a report every 20 ms at the most, and the last
  EXPECT_GE(rec.r.size(), 3u);
  EXPECT_LE(static_cast<double>(rec.r.size()), wall / 0.02 + 1.0);
}

// The hook in the loop: a fixed-step and an adaptive run report through the
// meter, the last report is the end of the span (t = tf, done), and the
// report count is bounded by the run's wall time.
TEST(ProgressMeter, IntegratorReportsUpToTheEnd) {
  for (const bool fixed : {true, false}) {
    HamiltonianProblem P(1, &oscillator);
    StormerVerlet sv(P, true);
    IntegratorOptions o;
    if (fixed) {
      o.fixed_step = 1e-4;
    } else {
      o.norm.rel_tol = 1e-10;
      o.norm.abs_tol = Vec::Constant(1, 1e-10);
    }
    Integrator I(sv, o);
    Reports rec;
    ProgressMeter::Options mo;
    mo.report_interval = 0.001;
    ProgressMeter m(rec.callback(), mo);
    I.set_progress(&m);
    Counter c;
    Vec x0(2);
    x0 << 1.0, 0.0;
    const Clock::time_point begin = Clock::now();
    const IntegrationResult res = I.run(span(0.0, 200.0), x0, c);
    const double wall = seconds_since(begin);
    ASSERT_EQ(res.outcome, IntegrationResult::Outcome::Completed);
    // a slow run (valgrind: 20 s) makes more reports than are stored
    ASSERT_GE(rec.count, 1);
    EXPECT_TRUE(rec.last.done);
    EXPECT_EQ(rec.last.t, 200.0);
    EXPECT_EQ(rec.last.t0, 0.0);
    EXPECT_EQ(rec.last.tf, 200.0);
    EXPECT_LE(static_cast<double>(rec.count), wall / 0.001 + 1.0);
    const size_t before_last = std::min<size_t>(rec.r.size(), static_cast<size_t>(rec.count - 1));
    for (size_t i = 0; i < before_last; ++i) {
      EXPECT_FALSE(rec.r[i].done);
      EXPECT_GT(rec.r[i].t, 0.0);
      EXPECT_LT(rec.r[i].t, 200.0);
    }
    EXPECT_EQ(c.n, P.stats().steps + 1);
  }
}

// A run stopped midway (the observer says stop) finishes the meter where it
// stopped: the last report says how far it got.
TEST(ProgressMeter, StoppedRunReportsWhereItEnded) {
  struct StopAt : Observer {
    bool operator()(double t, const Vec&) override { return t < 0.5; }
  } stop;
  HamiltonianProblem P(1, &oscillator);
  StormerVerlet sv(P, true);
  IntegratorOptions o;
  o.fixed_step = 0.01;
  Integrator I(sv, o);
  Reports rec;
  ProgressMeter m(rec.callback());
  I.set_progress(&m);
  Vec x0(2);
  x0 << 1.0, 0.0;
  const IntegrationResult res = I.run(span(0.0, 1.0), x0, stop);
  EXPECT_EQ(res.outcome, IntegrationResult::Outcome::StoppedByObserver);
  ASSERT_EQ(rec.r.size(), 1u);  // a short run: only the last report
  EXPECT_TRUE(rec.r[0].done);
  EXPECT_EQ(rec.r[0].t, res.t);
  EXPECT_NEAR(rec.r[0].fraction(), 0.5, 1e-12);
}

// No heap allocation per step: a run of 2N steps with the meter makes as
// many operator new calls as a run of N steps (the set-up's only), and a
// million meter steps alone make none.
TEST(ProgressMeter, NoHeapAllocationPerStep) {
  auto news_for = [](long steps) {
    HamiltonianProblem P(1, &oscillator);
    StormerVerlet sv(P, true);
    IntegratorOptions o;
    o.fixed_step = 1e-3;
    Integrator I(sv, o);
    long reports = 0;
    ProgressMeter::Options mo;
    mo.report_interval = 0.0;  // a report at every clock read: the callback path too
    ProgressMeter m([&reports](const ProgressReport&) { ++reports; }, mo);
    I.set_progress(&m);
    Counter c;
    Vec x0(2);
    x0 << 1.0, 0.0;
    const Vec t = span(0.0, 1e-3 * steps);
    const long before = test::operator_news();
    I.run(t, x0, c);
    const long news = test::operator_news() - before;
    EXPECT_EQ(c.n, steps + 1);
    EXPECT_GT(reports, 1);
    return news;
  };
  const long n1 = news_for(20000), n2 = news_for(40000);
  EXPECT_EQ(n1, n2);

  long reports = 0;
  ProgressMeter m([&reports](const ProgressReport&) { ++reports; });
  m.start(0.0, 1.0);
  const long before = test::operator_news();
  for (int i = 0; i < 1000000; ++i) m.step(i * 1e-6);
  m.finish(1.0);
  EXPECT_EQ(test::operator_news() - before, 0);
  EXPECT_GE(reports, 1);
}
