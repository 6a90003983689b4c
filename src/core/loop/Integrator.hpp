// Integrator.hpp — the one integration loop serving every stepper: fixed
// steps, adaptive steps (step doubling + StepSizeController), output at every
// step or exactly at requested times, an observer, an interrupt hook, counted
// statistics, and a partial result with a message when a step fails.
#ifndef ODEPKG_INTEGRATOR_HPP
#define ODEPKG_INTEGRATOR_HPP

#include "loop/ErrorNorm.hpp"
#include "loop/EventLocator.hpp"
#include "Finite.hpp"
#include "loop/InitialStep.hpp"
#include "loop/ProgressMeter.hpp"
#include "loop/StepDoubling.hpp"
#include "loop/StepSizeController.hpp"
#include "Stepper.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>

namespace odepkg {

/// Receives the output points; returns false to stop the integration.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual bool operator()(double t, const Vec& x) = 0;
};

struct IntegratorOptions {
  ErrorNorm norm;              ///< RelTol, AbsTol, NormControl
  double initial_step = 0.0;   ///< 0: chosen automatically (adaptive mode)
  double max_step = std::numeric_limits<double>::infinity();
  double fixed_step = 0.0;     ///< > 0: fixed steps of this size (TimeStepSize)
  StepSizeController::Options controller;
};

struct IntegrationResult {
  enum class Outcome { Completed, StoppedByObserver, StoppedByEvent, Failed } outcome = Outcome::Completed;
  double t = 0.0;        ///< where the integration ended
  std::string message;   ///< cause of a failure
};

class Integrator {
 public:
  using InterruptHook = std::function<void()>;

  Integrator(Stepper& stepper, IntegratorOptions opts)
      : stepper_(stepper),
        problem_(stepper.problem()),
        opts_(std::move(opts)),
        doubling_(stepper),
        controller_(stepper.order(), with_max_step(opts_)),
        points_{Point(problem_.state_size()), Point(problem_.state_size())},
        err_(problem_.state_size()) {}
  /// Fixed steps of size |hs| over `span` (same sign): the last one
  /// shortened to end exactly there; a step within 1e-9 steps of the end
  /// is not taken.  NaN or >= 9e15 (t0 + i h no longer exact) for a span
  /// that needs too many.
  static double fixed_step_count(double span, double hs) {
    const double steps = std::ceil(span / hs - 1e-9);
    return steps < 1.0 ? 1.0 : steps;
  }

  // cur_ and next_ point into points_: a copy would point into the original.
  Integrator(const Integrator&) = delete;
  Integrator& operator=(const Integrator&) = delete;

  /// Integrate from times(0) to times(end).  With two times, every accepted
  /// step is output; with more, exactly those times are.  `f0` = f(t0, x0) if
  /// the caller already has it.  With a progress meter (set_progress), it is
  /// started here, told of every accepted step and finished where the run ends.
  IntegrationResult run(const ConstVecRef& times, const ConstVecRef& x0, Observer& observer,
                        const InterruptHook& interrupt = nullptr, const Vec* f0 = nullptr) {
    if (!progress_ || times.size() < 2) return run_steps(times, x0, observer, interrupt, f0);
    progress_->start(times(0), times(times.size() - 1));
    const IntegrationResult res = run_steps(times, x0, observer, interrupt, f0);
    progress_->finish(res.t);
    return res;
  }

  /// run() without the progress meter's start and finish.
  IntegrationResult run_steps(const ConstVecRef& times, const ConstVecRef& x0, Observer& observer,
                              const InterruptHook& interrupt = nullptr, const Vec* f0 = nullptr) {
    const Eigen::Index nt = times.size();
    if (nt < 2) throw InputError("invalidInput", "at least two times are needed");
    const double direction = times(nt - 1) >= times(0) ? 1.0 : -1.0;
    const bool every_step = nt == 2;
    check_time_resolution(times);
    cur_->set(times(0), x0);
    newton_failures_ = 0;
    newton_limited_ = 0;
    if (f0) {
      cur_->force = f0->tail(problem_.dim());
      cur_->has_force = true;
    }
    IntegrationResult res;
    res.t = cur_->t;
    if (!observer(cur_->t, cur_->x)) return stopped(res);
    if (events_ && !events_->start(cur_->t, cur_->x)) return failed(res, StepStatus::NonFinite);

    Stats& st = problem_.stats();
    const bool fixed = opts_.fixed_step > 0.0;
    const bool state_checked = stepper_.checks_finite_state();
    double h = 0.0;
    if (!fixed) {
      h = opts_.initial_step > 0.0 ? opts_.initial_step : automatic_initial_step(direction, f0);
      h = direction * std::min(h, opts_.max_step);
    }
    bool after_rejection = false;
    for (Eigen::Index k = 1; k < nt; ++k) {
      const double target = times(k);
      if (fixed) {
        // steps of size h, the last one shortened to end exactly on target.
        const double span = target - cur_->t;
        const double hs = direction * opts_.fixed_step;
        const double steps = fixed_step_count(span, hs);
        if (!(steps < 9.0e15))  // beyond 2^53 the count (and t0 + i h) is not exact
          throw InputError("invalidInput", "TimeStepSize is too small for the time span (" +
                                               std::to_string(steps) + " steps)");
        const long n = static_cast<long>(steps);
        const double t_start = cur_->t;
        for (long i = 1; i <= n; ++i) {
          if (interrupt) interrupt();
          const double t_end = i == n ? target : t_start + i * hs;
          // Interior steps are exactly hs (t_end - t would differ from it in
          // the last bits, and the steppers' equal-step predictors look for
          // equal steps); t itself follows t_start + i hs.
          const double h_step = i == n ? t_end - cur_->t : hs;
          const StepStatus s = stepper_.step(*cur_, h_step, *next_);
          if (s != StepStatus::Success) return failed(res, s);
          // A state that overflowed (an explicit step adds h f without any
          // callback seeing the sum) ends the run like a NaN from f (checked
          // here unless the stepper checks its result itself).
          if (!state_checked && !all_finite(next_->x)) return failed(res, StepStatus::NonFinite);
          next_->t = t_end;
          bool terminal = false;
          if (events_ && !check_events(h_step, terminal)) return failed(res, StepStatus::NonFinite);
          advance();
          ++st.steps;
          if (progress_) progress_->step(cur_->t);
          if (terminal) return terminated(res, observer);
          if ((every_step || i == n) && !observer(cur_->t, cur_->x)) return stopped(res);
        }
        continue;
      }
      // Adaptive steps up to target.
      while (direction * (target - cur_->t) > 0.0) {
        if (interrupt) interrupt();
        double h_try = h;
        const double remaining = target - cur_->t;
        const bool lands = direction * (cur_->t + 1.01 * h - target) >= 0.0;
        if (lands) h_try = remaining;
        const double min_step = time_resolution(cur_->t, target);
        if (!(std::abs(h_try) >= min_step)) {  // also a NaN step
          char buf[400];
          std::snprintf(buf, sizeof buf, "step size %g fell below the minimum %g at t = %.15g%s%s",
                        std::abs(h_try), min_step, cur_->t,
                        last_failure_ == StepStatus::Success ? "" : " after: ",
                        last_failure_ == StepStatus::Success ? "" : describe(last_failure_));
          res.outcome = IntegrationResult::Outcome::Failed;
          res.message = buf;
          res.t = cur_->t;
          return res;
        }
        const bool own = stepper_.has_error_estimate();
        StepStatus s = own ? stepper_.step_with_error(*cur_, h_try, *next_, err_)
                           : doubling_.attempt(*cur_, h_try, *next_);
        // An overflowed state is a failed attempt: a smaller step may avoid it.
        if (s == StepStatus::Success && !state_checked && !all_finite(next_->x)) s = StepStatus::NonFinite;
        if (s != StepStatus::Success) {
          ++st.rejected;
          ++st.failed_solves;
          last_failure_ = s;
          if (s == StepStatus::NewtonDiverged) ++newton_failures_;
          stepper_.reset();
          h = 0.5 * h_try;
          after_rejection = true;
          continue;
        }
        const double err = opts_.norm(own ? err_ : doubling_.error(), next_->x, cur_->x);
        // Steps the accuracy would allow far larger, reached only after
        // repeated Newton failures: Newton cannot converge at useful step
        // sizes (say MaxNewtonIterations 1, where only a first correction
        // below the tolerance converges).  Fail with the cause instead of
        // crawling (1.6 million steps for t in [0, 0.05] on Kepler; issue 13,
        // defect 4) — when the rest of the span would take more than
        // kNewtonLimitedCrawl steps.  A step limited by MaxStep or by the
        // accuracy resets the count.
        if (err >= kNewtonLimitedError || std::abs(h_try) >= 0.99 * opts_.max_step || lands) {
          newton_limited_ = 0;
          newton_failures_ = 0;
        } else if (newton_failures_ > 0) {
          ++newton_limited_;
        }
        const double steps_left = std::abs(times(nt - 1) - next_->t) / std::abs(h_try);
        if (newton_limited_ >= kNewtonLimitedSteps && newton_failures_ >= kNewtonLimitedSteps &&
            steps_left > kNewtonLimitedCrawl) {
          char buf[400];
          std::snprintf(buf, sizeof buf,
                        "the Newton iteration does not converge at the step sizes the tolerances "
                        "allow: %d Newton failures cut the last %d steps to sizes whose error "
                        "estimates are below %g of the tolerance (h = %g at t = %.15g; %.3g more "
                        "steps at that size); raise MaxNewtonIterations or NewtonTol, or give "
                        "HamiltonianHessFcn",
                        newton_failures_, newton_limited_, kNewtonLimitedError, std::abs(h_try), cur_->t,
                        steps_left);
          res.outcome = IntegrationResult::Outcome::Failed;
          res.message = buf;
          res.t = cur_->t;
          return res;
        }
        if (!controller_.accept(err)) {
          ++st.rejected;
          last_failure_ = StepStatus::Success;
          h = controller_.next(h_try, err, true);
          after_rejection = true;
          continue;
        }
        const double h_new = controller_.next(h_try, err, after_rejection);
        h = lands ? std::copysign(std::max(std::abs(h_new), std::abs(h)), h) : h_new;
        after_rejection = false;
        if (lands) next_->t = target;
        bool terminal = false;
        if (events_ && !check_events(next_->t - cur_->t, terminal)) return failed(res, StepStatus::NonFinite);
        advance();
        ++st.steps;
        if (progress_) progress_->step(cur_->t);
        if (terminal) return terminated(res, observer);
        if ((every_step || lands) && !observer(cur_->t, cur_->x)) return stopped(res);
      }
    }
    res.t = cur_->t;
    return res;
  }

  const Point& current() const { return *cur_; }

  /// Newton-limited steps (and Newton failures) in a row that end an
  /// adaptive run (see run()) when, at their size, the rest of the span
  /// would take more than kNewtonLimitedCrawl steps.  Runs that Newton
  /// limits but that finish go on (adaptive SPVI with Q = P = 8 on a
  /// non-separable H, t in [0, 50]: 59 steps and 29 attempts rejected by
  /// Newton failures).
  static constexpr int kNewtonLimitedSteps = 50;
  static constexpr double kNewtonLimitedCrawl = 1e5;
  /// An accepted step with an error estimate below this fraction of the
  /// tolerance, after Newton failures, counts as Newton-limited: the
  /// accuracy would allow a step 1e4^(1/(p+1)) times larger.
  static constexpr double kNewtonLimitedError = 1e-4;

  /// The smallest step the loop takes near times a and b: 16 eps(t), t the
  /// larger of |a| and |b| (at least 16 times the smallest subnormal, so a
  /// span or step at 0 is never "resolved" by a zero step).
  static double time_resolution(double a, double b) {
    const double t = std::max(std::abs(a), std::abs(b));
    return 16.0 * std::max(std::numeric_limits<double>::epsilon() * t,
                           std::numeric_limits<double>::denorm_min());
  }

  /// Locate the zero crossings of these event functions after every step.
  void set_events(EventLocator* events) { events_ = events; }

  /// Report progress to this meter (ProgressMeter.hpp); null: none.
  void set_progress(ProgressMeter* progress) { progress_ = progress; }

 private:
  static StepSizeController::Options with_max_step(const IntegratorOptions& o) {
    StepSizeController::Options c = o.controller;
    c.max_step = o.max_step;
    return c;
  }

  // Spans and steps the time axis cannot resolve are input errors before the
  // first step: a span or an interval of TIMES shorter than 16 eps(t) (an
  // adaptive run would halve its step to 0 without end), a TimeStepSize
  // below it (t0 + i h would repeat times), and an InitialStep or MaxStep
  // below it (no step could be taken).
  void check_time_resolution(const ConstVecRef& times) const {
    const Eigen::Index nt = times.size();
    char buf[320];
    const double t0 = times(0), tf = times(nt - 1);
    const double res = time_resolution(t0, tf);
    const double tmax = std::max(std::abs(t0), std::abs(tf));
    auto below = [&](const char* name, double h, const char* note) {
      std::snprintf(buf, sizeof buf,
                    "%s is too small for the time span [%.17g, %.17g]: %s = %g is below the "
                    "time resolution 16 eps(t) = %g at t = %g%s",
                    name, t0, tf, name, h, res, tmax, note);
      throw InputError("invalidInput", buf);
    };
    if (opts_.fixed_step > 0.0 && opts_.fixed_step < res)
      below("TimeStepSize", opts_.fixed_step, ": the output times would repeat");
    for (Eigen::Index k = 1; k < nt; ++k) {
      const double a = times(k - 1), b = times(k);
      const double gap_res = time_resolution(a, b);
      if (!(std::abs(b - a) >= gap_res)) {
        if (nt == 2)
          std::snprintf(buf, sizeof buf,
                        "TSPAN [%.17g, %.17g] spans %g, below the time resolution "
                        "16 eps(t) = %g at t = %g",
                        a, b, std::abs(b - a), gap_res, std::max(std::abs(a), std::abs(b)));
        else
          std::snprintf(buf, sizeof buf,
                        "TSPAN(%ld) = %.17g and TSPAN(%ld) = %.17g are %g apart, below the "
                        "time resolution 16 eps(t) = %g at t = %g",
                        static_cast<long>(k), a, static_cast<long>(k + 1), b, std::abs(b - a), gap_res,
                        std::max(std::abs(a), std::abs(b)));
        throw InputError("invalidInput", buf);
      }
    }
    if (opts_.fixed_step > 0.0) return;
    if (opts_.initial_step > 0.0 && opts_.initial_step < res)
      below("InitialStep", opts_.initial_step, "");
    if (opts_.max_step < res) below("MaxStep", opts_.max_step, " (MaxStep defaults to a tenth of the span)");
  }

  double automatic_initial_step(double direction, const Vec* f0) {
    Vec f(problem_.state_size());
    if (f0)
      f = *f0;
    else if (!problem_.field(cur_->t, cur_->x, f))
      return 1e-6;
    cur_->force = f.tail(problem_.dim());
    cur_->has_force = true;
    return initial_step(problem_, opts_.norm, stepper_.order(), cur_->t, cur_->x, f, direction);
  }

  void advance() {
    std::swap(cur_, next_);
  }

  // After each accepted step (next_ holds its end): crossings recorded, and
  // on a terminal one next_ moved to the event state.
  bool check_events(double h, bool& terminal) {
    bool failed_eval = false;
    terminal = events_->check(*cur_, h, *next_, failed_eval);
    return !failed_eval;
  }

  // A terminal event: the event state (now cur_) is the last output.
  IntegrationResult terminated(IntegrationResult& r, Observer& observer) {
    observer(cur_->t, cur_->x);
    r.outcome = IntegrationResult::Outcome::StoppedByEvent;
    r.t = cur_->t;
    return r;
  }

  IntegrationResult stopped(IntegrationResult& r) {
    r.outcome = IntegrationResult::Outcome::StoppedByObserver;
    r.t = cur_->t;
    return r;
  }

  IntegrationResult failed(IntegrationResult& r, StepStatus s) {
    char buf[320];
    std::snprintf(buf, sizeof buf, "%s in the step from t = %.15g", describe(s), cur_->t);
    r.outcome = IntegrationResult::Outcome::Failed;
    r.message = buf;
    r.t = cur_->t;
    return r;
  }

  EventLocator* events_ = nullptr;
  ProgressMeter* progress_ = nullptr;
  Stepper& stepper_;
  HamiltonianProblem& problem_;
  IntegratorOptions opts_;
  StepDoubling doubling_;
  StepSizeController controller_;
  Point points_[2];
  // The current point and the next one, swapped after each accepted step
  // (two pointers, not the points' vectors).
  Point* cur_ = &points_[0];
  Point* next_ = &points_[1];
  Vec err_;
  StepStatus last_failure_ = StepStatus::Success;
  int newton_failures_ = 0;   ///< Newton failures since the last accuracy-limited step
  int newton_limited_ = 0;    ///< accepted steps since then, all with tiny error estimates
};

}  // namespace odepkg

#endif
