// ReversibleIntegrator.hpp — the run path of the time-reversible adaptive
// step control (StepControl "reversible"): a symmetric stepper whose steps
// follow a step density (ReversibleStepDensity, Hairer and Söderlind 2005),
// with the outputs, observer, interrupt hook, statistics and partial results
// of Integrator.  No step is ever rejected: the step sequence must stay a
// function of the state for the map to be reversible.
//
// rho_0 and eps (Hairer and Söderlind leave both to the user): the run
// starts from the density of its state, rho_0 = rho(y_0), when the rate
// knows it (StepDensityRate::last_density: the default TimeScaleDensity, a
// StepDensityFcn returning [G; rho], odeRATTLie's LieSpeedDensity), else
// from rho_0 = 1 (a StepDensityFcn returning G alone); DensityStart::rho0
// (InitialStepDensity) overrides it.  eps, in this order:
//   1. DensityStart::eps (StepDensityEps), given;
//   2. InitialStep h_0 given: eps = min(h_0, MaxStep) rho_0, so that the
//      first step is about h_0 (h_0 = eps / rho_{1/2});
//   3. a density that is a rate (1/time: TimeScaleDensity, a user's rho):
//      eps = 2 RelTol^(1/(p+1)), p the method's (composed) order: the steps
//      that step doubling accepts at the same RelTol for Störmer–Verlet on
//      a harmonic oscillator (measured 1.81 to 1.90 RelTol^(1/3) for RelTol
//      1e-4 .. 1e-8; McLachlan4 accepts 4.3 RelTol^(1/5), so this is
//      conservative for compositions).  It depends on RelTol and p alone,
//      not on y_0 or the units: a run cut into chunks, or reversed, keeps
//      its eps.  AbsTol does not enter (a rate is scale-free; a tolerance in
//      the units of y would need a scale of y, i.e. y_0);
//   4. otherwise eps = h_tol rho_0, h_tol the step that step doubling
//      accepts at t0 under RelTol/AbsTol (its estimate brought within
//      [0.3, 1] of the tolerance, trial steps not taken): this eps depends
//      on y_0, so continuations should pass the returned eps (case 1).
// DensityStart::first_eps makes the first step's eps another (a reversed
// run retracing the shortened last step of the run it reverses).  At the
// end the run reports final_rho() and last_eps(): rho at the returned state
// and the eps of the step that reached it (for the shortened last step
// Phi_{tf - t_n}(y_n), the e of the map step of that size,
// ReversibleStepDensity::shortened_eps, and rho_n + e (G_n + G(y(tf)))/2):
// a reversal from (y(tf) with p -> -p, final_rho) with first_eps =
// last_eps and eps takes the forward steps back to round-off.

// Output at requested times (more than two TIMES): a time t_k that the next
// step would reach or pass is output from a separate, shortened step
// Phi_{t_k - t_n}(y_n); the reversible sequence of steps goes on from y_n
// unchanged.  The last output (tf) is such a step too.  Output and event
// steps are side steps (Stepper::begin_side_steps/end_side_steps): an
// implicit stepper's warm start (geometric RATTLE's extrapolated Newton
// guesses and Hessian models) is kept across them, so the sequence goes on
// bitwise as without them.
//
// Events (set_events): located on each step, the shortened last one
// included, by the EventLocator of the ordinary loop (regula falsi on the
// method's own step from y_n, Integrator.hpp).  The locator's trial steps
// leave y_n, y_{n+1} and the density alone, so the steps after a
// non-terminal event are those of the run without events; a terminal event
// ends the run at the event's time and state (requested times before it
// are output, those after it are not).
#ifndef ODEPKG_REVERSIBLE_INTEGRATOR_HPP
#define ODEPKG_REVERSIBLE_INTEGRATOR_HPP

#include "loop/InitialStep.hpp"
#include "loop/Integrator.hpp"
#include "loop/ReversibleStepDensity.hpp"
#include "loop/TimeScaleDensity.hpp"
#include "loop/StepDoubling.hpp"
#include "Stepper.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

namespace odepkg {

/// Stepper::begin_side_steps on construction, end_side_steps on leaving
/// the scope (returns included).
class SideSteps {
 public:
  explicit SideSteps(Stepper& stepper) : stepper_(stepper) { stepper_.begin_side_steps(); }
  ~SideSteps() { stepper_.end_side_steps(); }
  SideSteps(const SideSteps&) = delete;
  SideSteps& operator=(const SideSteps&) = delete;

 private:
  Stepper& stepper_;
};

class ReversibleIntegrator {
 public:
  /// `rate` = the control function G (nullptr: TimeScaleDensity for a
  /// state [q; p] of 2d numbers, FieldSpeedDensity, rho = |f|, otherwise).
  ReversibleIntegrator(Stepper& stepper, IntegratorOptions opts, StepDensityRate* rate = nullptr)
      : stepper_(stepper),
        problem_(stepper.problem()),
        opts_(std::move(opts)),
        cur_(problem_.state_size()),
        next_(problem_.state_size()),
        out_(problem_.state_size()) {
    if (!stepper.symmetric())
      throw InputError("invalidOption",
                       std::string("the reversible step control needs a symmetric method; \"") +
                           stepper.name() + "\" is not symmetric");
    if (opts_.fixed_step > 0.0)
      throw InputError("invalidOption",
                       "the reversible step control chooses the steps itself: remove TimeStepSize "
                       "(and TimeStepNumber) or use the default StepControl \"doubling\"");
    if (rate) {
      rate_ = rate;
    } else {
      if (problem_.state_size() == 2 * problem_.dim())
        default_rate_ = std::make_unique<TimeScaleDensity>(problem_);
      else
        default_rate_ = std::make_unique<FieldSpeedDensity>(problem_);
      rate_ = default_rate_.get();
    }
  }

  /// As Integrator::run.  `f0` = f(t0, x0) if the caller has it.  With a
  /// progress meter (set_progress): started here, told of every step,
  /// finished where the run ends.
  IntegrationResult run(const ConstVecRef& times, const ConstVecRef& x0, Observer& observer,
                        const Integrator::InterruptHook& interrupt = nullptr, const Vec* f0 = nullptr) {
    if (!progress_ || times.size() < 2) return run_steps(times, x0, observer, interrupt, f0);
    progress_->start(times(0), times(times.size() - 1));
    const IntegrationResult res = run_steps(times, x0, observer, interrupt, f0);
    progress_->finish(res.t);
    return res;
  }

  /// Report progress to this meter (ProgressMeter.hpp); null: none.
  void set_progress(ProgressMeter* progress) { progress_ = progress; }

  /// Locate the zero crossings of these event functions on every step
  /// (EventLocator.hpp, as Integrator::set_events); null: none.
  void set_events(EventLocator* events) { events_ = events; }

  /// Start the density so (StepDensityEps, InitialStepDensity).
  void set_density_start(const DensityStart& start) { start_ = start; }

  /// eps = 2 RelTol^(1/(p+1)) for a density that is a rate (case 3 above).
  static double tolerance_eps(double rel_tol, int p) { return 2.0 * std::pow(rel_tol, 1.0 / (p + 1)); }

 private:
  IntegrationResult run_steps(const ConstVecRef& times, const ConstVecRef& x0, Observer& observer,
                              const Integrator::InterruptHook& interrupt, const Vec* f0) {
    const Eigen::Index nt = times.size();
    if (nt < 2) throw InputError("invalidInput", "at least two times are needed");
    const double tf = times(nt - 1);
    const double direction = tf >= times(0) ? 1.0 : -1.0;
    const bool every_step = nt == 2;
    check_span(times);
    cur_.set(times(0), x0);
    if (f0) {
      cur_.force = f0->tail(problem_.dim());
      cur_.has_force = true;
    }
    IntegrationResult res;
    res.t = cur_.t;
    min_step_ = std::numeric_limits<double>::infinity();
    max_step_taken_ = 0.0;
    if (!observer(cur_.t, cur_.x)) return stopped(res);

    ReversibleStepDensity density(*rate_, direction, opts_.max_step);
    if (!density.start(cur_.t, cur_.x)) return failed(res, "the step density's control function G failed");
    const double known = rate_->last_density();
    const double rho0 = start_.rho0 > 0.0 ? start_.rho0 : std::isfinite(known) ? known : 1.0;
    if (!(rho0 > 0.0) || !std::isfinite(rho0)) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "the step density is %g at the start (the default density has no time scale where "
                    "the force or the motion vanishes): give StepDensityFcn, or InitialStepDensity",
                    rho0);
      return failed(res, buf);
    }
    double e = 0.0;
    if (start_.eps > 0.0)
      e = start_.eps;
    else if (opts_.initial_step > 0.0)
      e = std::min(opts_.initial_step, opts_.max_step) * rho0;
    else if (std::isfinite(known) && rate_->density_is_rate())
      e = tolerance_eps(opts_.norm.rel_tol, stepper_.order());
    else
      e = tolerance_step(direction, f0) * rho0;
    eps_ = direction * e;
    density.restart(rho0, eps_, direction * start_.first_eps);
    final_rho_ = rho0;
    last_eps_ = eps_;

    if (events_ && !events_->start(cur_.t, cur_.x))
      return failed(res, "the Events function returned a non-finite value");

    Stats& st = problem_.stats();
    Eigen::Index k = 1;  // next requested time
    for (;;) {
      if (interrupt) interrupt();
      double h = 0.0;
      if (!density.half_step(h)) {
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "the step density became %g (rho_n = %g, G = %g, eps = %g): it varies too fast "
                      "for this eps; lower RelTol or InitialStep",
                      density.rho_half(), density.rho(), density.G(), eps_);
        return failed(res, buf);
      }
      // The step of the density, or, when it would reach tf, the shortened
      // last step Phi_{tf - t_n}(y_n) that ends the run.
      const bool last = direction * (cur_.t + h - tf) >= 0.0;
      if (last) {
        if (!output_step(tf, next_, res)) return res;
      } else {
        if (!(std::abs(h) >= Integrator::time_resolution(cur_.t, tf))) {
          char buf[240];
          std::snprintf(buf, sizeof buf, "step size %g fell below the minimum %g at t = %.15g", std::abs(h),
                        Integrator::time_resolution(cur_.t, tf), cur_.t);
          return failed(res, buf);
        }
        const StepStatus s = stepper_.step(cur_, h, next_);
        if (s != StepStatus::Success) return failed(res, s, h);
        if (!next_.x.allFinite()) return failed(res, StepStatus::NonFinite, h);
        next_.t = cur_.t + h;
      }
      // Events located on this step from y_n by the locator's own trial
      // steps: y_n, y_{n+1} and the density are untouched, so a run goes on
      // through non-terminal events with the step sequence it has without
      // them.  A terminal event moves next_ to the event.  The trial and
      // output steps are side steps: the stepper's warm start (Newton's
      // guesses, extrapolated from its last steps) is kept across them.
      SideSteps side(stepper_);
      bool terminal = false;
      if (events_) {
        bool failed_eval = false;
        terminal = events_->check(cur_, next_.t - cur_.t, next_, failed_eval);
        if (failed_eval) return failed(res, "the Events function returned a non-finite value (or a trial step failed)");
      }
      const double step_eps = density.step_eps();
      if (!last && !terminal && !density.finish(next_.t, next_.x))
        return failed(res, "the step density's control function G failed");
      // The requested times this step reaches (before a terminal event:
      // strictly before it), each from its own shortened step from y_n.
      while (k < nt - 1 && (terminal ? direction * (next_.t - times(k)) > 0.0
                                     : direction * (cur_.t + h - times(k)) >= 0.0)) {
        if (!output_step(times(k), out_, res)) return res;
        if (!observer(out_.t, out_.x)) return stopped(res);
        ++k;
      }
      const double t_n = cur_.t;
      std::swap(cur_, next_);
      ++st.steps;
      if (progress_) progress_->step(cur_.t);
      if (last || terminal) {
        end_density(density, t_n);
      } else {
        final_rho_ = density.rho();
        last_eps_ = step_eps;
      }
      if (terminal) {
        observer(cur_.t, cur_.x);
        res.outcome = IntegrationResult::Outcome::StoppedByEvent;
        res.t = cur_.t;
        return res;
      }
      if (last) {
        if (!observer(cur_.t, cur_.x)) return stopped(res);
        res.t = cur_.t;
        return res;
      }
      min_step_ = std::min(min_step_, std::abs(h));
      max_step_taken_ = std::max(max_step_taken_, std::abs(h));
      if (every_step && !observer(cur_.t, cur_.x)) return stopped(res);
    }
  }

 public:
  const Point& current() const { return cur_; }
  /// eps, signed with the direction of time.
  double eps() const { return eps_; }
  /// rho at the last state the run reached, and the eps of the step that
  /// reached it (signed): the start of a continuation or reversal.
  double final_rho() const { return final_rho_; }
  double last_eps() const { return last_eps_; }
  /// Smallest and largest step of the density (the shortened output steps
  /// not counted); min > max when no step was taken.
  double min_step() const { return min_step_; }
  double max_step() const { return max_step_taken_; }

 private:
  ProgressMeter* progress_ = nullptr;
  EventLocator* events_ = nullptr;
  // The shortened step Phi_{target - t_n}(y_n) into `to` (y_n itself when
  // target is within the time resolution of t_n).
  bool output_step(double target, Point& to, IntegrationResult& res) {
    const double h = target - cur_.t;
    if (std::abs(h) < Integrator::time_resolution(cur_.t, target)) {
      to.t = target;
      to.x = cur_.x;
      to.force = cur_.force;
      to.has_force = cur_.has_force;
      return true;
    }
    const StepStatus s = stepper_.step(cur_, h, to);
    if (s != StepStatus::Success || !to.x.allFinite()) {
      failed(res, s == StepStatus::Success ? StepStatus::NonFinite : s, h);
      return false;
    }
    to.t = target;
    return true;
  }

  // The density at cur_, reached from (t_n, y_n, rho_n, G_n) by a shortened
  // step (ReversibleStepDensity::shortened_eps); y_n itself when that step
  // was within the time resolution.
  void end_density(const ReversibleStepDensity& density, double t_n) {
    const double h = cur_.t - t_n;
    final_rho_ = density.rho();  // last_eps_: the e of the step that reached y_n
    if (std::abs(h) < Integrator::time_resolution(t_n, cur_.t)) return;
    double G1 = 0.0;
    const double e = density.shortened_eps(h);
    if (!(*rate_)(cur_.t, cur_.x, G1)) {
      final_rho_ = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    final_rho_ = density.rho() + 0.5 * e * (density.G() + G1);
    last_eps_ = e;
  }

  // The step that step doubling accepts at t0: from the initial-step
  // heuristic of Hairer, Nørsett and Wanner I, Sect. II.4, corrected by the
  // standard controller until the estimate is within [0.3, 1] of the
  // tolerance (at most 20 trials; a failed trial halves the step).
  double tolerance_step(double direction, const Vec* f0) {
    Vec f(problem_.state_size());
    if (f0)
      f = *f0;
    else if (!problem_.field(cur_.t, cur_.x, f))
      return 1e-6;
    const int p = stepper_.order();
    double h = initial_step(problem_, opts_.norm, p, cur_.t, cur_.x, f, direction);
    h = std::min(h, opts_.max_step);
    StepDoubling doubling(stepper_);
    Point trial(problem_.state_size());
    double accepted = 0.0;
    for (int i = 0; i < 20; ++i) {
      StepStatus s = doubling.attempt(cur_, direction * h, trial);
      if (s == StepStatus::Success && !trial.x.allFinite()) s = StepStatus::NonFinite;
      if (s != StepStatus::Success) {
        stepper_.reset();
        h *= 0.5;
        continue;
      }
      const double err = opts_.norm(doubling.error(), trial.x, cur_.x);
      if (err <= 1.0) accepted = h;
      if (err <= 1.0 && (err >= 0.3 || h >= opts_.max_step)) break;
      const double fac = err == 0.0 ? 5.0 : 0.9 * std::pow(err, -1.0 / (p + 1));
      h = std::min(h * std::min(5.0, std::max(0.2, fac)), opts_.max_step);
    }
    stepper_.reset();
    return accepted > 0.0 ? accepted : h;
  }

  void check_span(const ConstVecRef& times) const {
    const Eigen::Index nt = times.size();
    for (Eigen::Index k = 1; k < nt; ++k)
      if (!(std::abs(times(k) - times(k - 1)) >= Integrator::time_resolution(times(k - 1), times(k))))
        throw InputError("invalidInput", "TSPAN's times are closer than the time resolution 16 eps(t)");
    const double res = Integrator::time_resolution(times(0), times(nt - 1));
    if (opts_.initial_step > 0.0 && opts_.initial_step < res)
      throw InputError("invalidInput", "InitialStep is below the time resolution 16 eps(t) of the span");
    if (opts_.max_step < res)
      throw InputError("invalidInput", "MaxStep is below the time resolution 16 eps(t) of the span");
  }

  IntegrationResult stopped(IntegrationResult& r) {
    r.outcome = IntegrationResult::Outcome::StoppedByObserver;
    r.t = cur_.t;
    return r;
  }

  IntegrationResult failed(IntegrationResult& r, const char* why) {
    r.outcome = IntegrationResult::Outcome::Failed;
    r.message = why;
    r.t = cur_.t;
    return r;
  }

  IntegrationResult failed(IntegrationResult& r, StepStatus s, double h) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s in the step of size %g from t = %.15g (the reversible step control rejects no "
                  "step: lower RelTol or InitialStep)",
                  describe(s), std::abs(h), cur_.t);
    return failed(r, buf);
  }

  Stepper& stepper_;
  HamiltonianProblem& problem_;
  IntegratorOptions opts_;
  std::unique_ptr<StepDensityRate> default_rate_;
  DensityStart start_;
  double final_rho_ = std::numeric_limits<double>::quiet_NaN();
  double last_eps_ = 0.0;
  StepDensityRate* rate_ = nullptr;
  Point cur_, next_, out_;
  double eps_ = 0.0;
  double min_step_ = std::numeric_limits<double>::infinity();
  double max_step_taken_ = 0.0;
};

}  // namespace odepkg

#endif
