// EventLocator.hpp — ode45's "Events" for every stepper: after each accepted
// step the event functions are evaluated once at its end; a sign change of
// component i (in its direction) is located by the Illinois variant of
// regula falsi on  φ(τ) = g_i(Φ_τ(x_n)),  Φ_τ the method's own step of size τ
// from the step's start.  The reported state is therefore a state of the
// method (constraints hold to round-off, as on every step), and t_e is the
// root of the event function along the discrete flow, accurate to the
// method's error.  All crossings of a step are reported in time order; a
// terminal one ends the integration there.
#ifndef ODEPKG_EVENT_LOCATOR_HPP
#define ODEPKG_EVENT_LOCATOR_HPP

#include "Stepper.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace odepkg {

struct EventRecord {
  double t;
  Vec x;
  int index;  ///< zero-based event component
};

class EventLocator {
 public:
  /// value(i), terminal(i) != 0, direction(i) in {-1, 0, 1} at (t, x).
  using EventFn = std::function<void(double t, const ConstVecRef& x, VecRef value, VecRef terminal,
                                     VecRef direction)>;

  EventLocator(Stepper& stepper, EventFn fn, int k)
      : stepper_(stepper), fn_(std::move(fn)), k_(k), g0_(k), g1_(k), gt_(k), term_(k), dir_(k),
        trial_(stepper.problem().state_size()), best_(stepper.problem().state_size()) {}

  int size() const { return k_; }
  const std::vector<EventRecord>& events() const { return events_; }
  long evaluations() const { return evals_; }

  /// The values at the initial point.
  bool start(double t0, const ConstVecRef& x0) { return eval(t0, x0, g0_); }

  /// After an accepted step of size h from `from` to `to`: records the
  /// crossings; on a terminal one, `to` becomes the state at its time and
  /// true is returned.  `failed` is set if a callback or a trial step failed.
  bool check(Point& from, double h, Point& to, bool& failed) {
    failed = false;
    if (!eval(to.t, to.x, g1_)) return failed = true, false;
    pending_.clear();
    for (int i = 0; i < k_; ++i) {
      const double a = g0_(i), b = g1_(i);
      const bool up = a < 0.0 && b >= 0.0, down = a > 0.0 && b <= 0.0;
      if (!((up && dir_(i) >= 0) || (down && dir_(i) <= 0))) continue;
      double tau;
      if (b == 0.0) {
        tau = h;
        best_.x = to.x;
      } else if (!locate(from, h, i, tau)) {
        return failed = true, false;
      }
      pending_.push_back({from.t + tau, best_.x, i});
    }
    if (pending_.empty()) {
      g0_ = g1_;
      return false;
    }
    stepper_.reset();  // the trial steps broke the chain of equal steps
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const EventRecord& a, const EventRecord& b) { return a.t < b.t; });
    for (const EventRecord& e : pending_) {
      events_.push_back(e);
      if (term_(e.index) != 0.0) {
        to.t = e.t;
        to.x = e.x;
        to.has_force = false;
        return true;
      }
    }
    g0_ = g1_;
    return false;
  }

 private:
  bool eval(double t, const ConstVecRef& x, Vec& g) {
    ++evals_;
    fn_(t, x, g, term_, dir_);
    return g.allFinite();
  }

  /// Root of φ(τ) = g_i(Φ_τ(x_n)) in (0, h]: Illinois iteration on the
  /// bracket [0, h] (φ(0) = g0, φ(h) = g1), to round-off in t.
  bool locate(Point& from, double h, int i, double& tau) {
    double a = 0.0, b = h, fa = g0_(i), fb = g1_(i);
    int side = 0;
    const double tol = 4 * std::numeric_limits<double>::epsilon() * std::max(std::abs(from.t), std::abs(from.t + h));
    double best_tau = h;
    bool have_best = false;
    for (int it = 0; it < 100 && std::abs(b - a) > tol; ++it) {
      double c = (a * fb - b * fa) / (fb - fa);
      if (!(std::abs(c - a) > 0.0 && std::abs(b - c) > 0.0) || !std::isfinite(c)) c = 0.5 * (a + b);
      if (stepper_.step(from, c, trial_) != StepStatus::Success) return false;
      trial_.t = from.t + c;
      if (!eval(trial_.t, trial_.x, gt_)) return false;
      const double fc = gt_(i);
      if (fc == 0.0) {
        a = b = c;
        best_tau = c;
        best_.x = trial_.x;
        have_best = true;
        break;
      }
      if ((fc < 0.0) == (fb < 0.0)) {  // root in [a, c]
        b = c;
        fb = fc;
        best_tau = c;  // the side past the crossing: the event has happened
        best_.x = trial_.x;
        have_best = true;
        if (side == -1) fa *= 0.5;
        side = -1;
      } else {
        a = c;
        fa = fc;
        if (side == 1) fb *= 0.5;
        side = 1;
      }
    }
    if (!have_best) {  // the bracket shrank onto h without a trial past the crossing
      best_tau = b;
      if (stepper_.step(from, b, trial_) != StepStatus::Success) return false;
      best_.x = trial_.x;
    }
    tau = best_tau;
    return true;
  }

  Stepper& stepper_;
  EventFn fn_;
  int k_;
  Vec g0_, g1_, gt_, term_, dir_;
  Point trial_, best_;
  std::vector<EventRecord> pending_, events_;
  long evals_ = 0;
};

}  // namespace odepkg

#endif
