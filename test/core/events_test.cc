// events_test.cc — EventLocator: crossings of the harmonic oscillator found
// at the method's own states, in time order, with direction and terminal
// semantics as ode45, for fixed and adaptive steps.
#include "loop/EventLocator.hpp"
#include "loop/Integrator.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "TestProblems.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace odepkg;

namespace {

void oscillator(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -x(0);
}

struct Outcome {
  std::vector<EventRecord> events;
  IntegrationResult res;
  test::Recorder rec;
  long calls = 0;
};

// Events: g1 = q (direction `dir1`, terminal `term1`), g2 = p.
Outcome run(double h, double tf, double dir1, bool term1, bool adaptive = false) {
  HamiltonianProblem problem(1, oscillator);
  StormerVerlet sv(problem, true);
  Outcome o;
  EventLocator ev(sv,
                  [&o, dir1, term1](double, const ConstVecRef& x, VecRef g, VecRef term, VecRef dir) {
                    ++o.calls;
                    g << x(0), x(1);
                    term << (term1 ? 1.0 : 0.0), 0.0;
                    dir << dir1, 0.0;
                  },
                  2);
  IntegratorOptions io;
  if (adaptive) {
    io.norm.rel_tol = 1e-8;
    io.norm.abs_tol = Vec::Constant(1, 1e-10);
  } else {
    io.fixed_step = h;
  }
  Integrator integ(sv, io);
  integ.set_events(&ev);
  Vec times(2), x0(2);
  times << 0.0, tf;
  x0 << 1.0, 0.0;
  o.res = integ.run(times, x0, o.rec);
  o.events = ev.events();
  return o;
}

}  // namespace

TEST(Events, CrossingsInTimeOrderAtMethodStates) {
  // q = cos t, p = -sin t: q crosses 0 at π/2 + kπ, p at kπ (k >= 1).
  const double h = 0.05;
  const Outcome o = run(h, 7.0, 0.0, false);
  ASSERT_EQ(o.res.outcome, IntegrationResult::Outcome::Completed);
  ASSERT_EQ(o.events.size(), 4u);  // q at π/2, 3π/2; p at π, 2π (t ≤ 7)
  for (std::size_t k = 1; k < o.events.size(); ++k) EXPECT_LT(o.events[k - 1].t, o.events[k].t);
  for (const EventRecord& e : o.events) {
    // the event function vanishes at the reported state (a method state)
    EXPECT_LT(std::abs(e.x(e.index)), 1e-12);
    // and t_e is the exact crossing up to the method's O(h²) global error
    const double exact = e.index == 0 ? M_PI / 2 + M_PI * std::round((e.t - M_PI / 2) / M_PI)
                                      : M_PI * std::round(e.t / M_PI);
    EXPECT_LT(std::abs(e.t - exact), 10 * h * h) << "event " << e.index << " at " << e.t;
  }
  // one call per step, plus the start and what location needs
  EXPECT_LT(o.calls, long(o.rec.t.size()) + 1 + 6 * 20);
}

TEST(Events, DirectionAndTerminal) {
  // only increasing crossings of q (t = 3π/2), terminal: the run ends there
  const Outcome o = run(0.05, 7.0, 1.0, true);
  EXPECT_EQ(o.res.outcome, IntegrationResult::Outcome::StoppedByEvent);
  ASSERT_GE(o.events.size(), 1u);
  const EventRecord& last = o.events.back();
  EXPECT_EQ(last.index, 0);
  EXPECT_NEAR(last.t, 1.5 * M_PI, 10 * 0.05 * 0.05);
  EXPECT_EQ(o.rec.t.back(), last.t);  // the event state is the last output
  EXPECT_EQ(o.rec.x.back(), last.x);
  // the p-crossing at π came before and was reported, the decreasing q one at π/2 not
  EXPECT_EQ(o.events.size(), 2u);
  EXPECT_EQ(o.events.front().index, 1);
}

TEST(Events, AdaptiveStepsLocateToTheMethodsAccuracy) {
  const Outcome o = run(0.0, 4.0, -1.0, false, true);
  ASSERT_EQ(o.res.outcome, IntegrationResult::Outcome::Completed);
  int q_events = 0;
  for (const EventRecord& e : o.events)
    if (e.index == 0) {
      ++q_events;
      EXPECT_NEAR(e.t, M_PI / 2, 1e-5);
      EXPECT_LT(std::abs(e.x(0)), 1e-12);
    }
  EXPECT_EQ(q_events, 1);  // the increasing one at 3π/2 is excluded
}
