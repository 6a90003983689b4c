// EnsembleIntegrator.hpp — the time loop of an ensemble: one step size for
// all live members, each member with its own outcome.
//
// Fixed steps (TimeStepSize), or adaptive steps by step doubling with the
// error of the step the largest over the members (ode45's weighted norm per
// member): one step size keeps every callback batched over the whole
// ensemble, at the price that the member that needs the smallest step sets
// it for all (per-member steps would split the calls, each member then
// paying the cost of a callback of its own, which is what an ensemble
// avoids).  A member whose step fails is retried with smaller steps (the
// whole ensemble's step shrinks); once the step is at its floor, that
// member alone is given up: it is reported failed, its later outputs are
// NaN, and the others go on.
//
// Events (odeset's Events, evaluated once per step on all live members):
// a sign change of component i of member j is located by the Illinois
// variant of regula falsi on φ(τ) = e_i(Φ_τ(x_n)), Φ_τ the method's own step
// of size τ for member j alone (loop/EventLocator.hpp's rule, so a member
// reports the events a single run reports); a terminal event ends that
// member only.
#ifndef ODEPKG_ENSEMBLE_INTEGRATOR_HPP
#define ODEPKG_ENSEMBLE_INTEGRATOR_HPP

#include "ensemble/EnsembleMethod.hpp"
#include "loop/ErrorNorm.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace odepkg::ensemble {

struct EnsembleOptions {
  ErrorNorm norm;
  double fixed_step = 0.0;  ///< > 0: fixed steps
  double initial_step = 0.0;
  double max_step = std::numeric_limits<double>::infinity();
  double safety = 0.9, fac_min = 0.2, fac_max = 5.0;
};

struct MemberEvent {
  double t;
  Vec x;
  int index;  ///< zero-based event component
};

struct MemberOutcome {
  enum class State { Running, Event, Failed } state = State::Running;
  double t_end = 0.0;
  std::string message;
  std::vector<MemberEvent> events;
};

class EnsembleObserver {
 public:
  virtual ~EnsembleObserver() = default;
  /// X: n x K, NaN columns for the members that have ended.  False stops.
  virtual bool output(double t, const ConstMatRef& X) = 0;
};

class EnsembleIntegrator {
 public:
  /// values (nev x k) at (t, X = n x k), terminal and direction (nev).
  using EventFn = std::function<void(double t, const ConstMatRef& X, MatRef values, VecRef terminal,
                                     VecRef direction)>;

  EnsembleIntegrator(EnsembleMethod& method, EnsembleOptions opts)
      : method_(method), pb_(method.problem()), opts_(std::move(opts)) {
    const int n = 2 * pb_.dim(), d = pb_.dim(), K = pb_.members(), na = method.aux_size();
    X_.resize(n, K);
    F_.resize(d, K);
    A_.resize(na, K);
    for (Mat* m : {&Xa_, &X1_, &Xh_, &Xf_}) m->resize(n, K);
    for (Mat* m : {&Fa_, &F1_, &Fh_, &Ff_}) m->resize(d, K);
    for (Mat* m : {&Aa_, &A1_, &Ah_, &Af_}) m->resize(na, K);
    Xt_.resize(n, 1);
    Ft_.resize(d, 1);
    At_.resize(na, 1);
    ids_.resize(K);
    st1_.resize(K);
    st2_.resize(K);
    st3_.resize(K);
    outcome_.resize(K);
    err_.resize(n);
  }

  void set_events(EventFn fn, int nev) {
    events_ = std::move(fn);
    nev_ = nev;
    V0_.resize(nev, pb_.members());
    V1_.resize(nev, pb_.members());
    Xe_.resize(2 * pb_.dim(), pb_.members());
    Ve_.resize(nev, pb_.members());
    term_.resize(nev);
    dir_.resize(nev);
  }

  const std::vector<MemberOutcome>& outcomes() const { return outcome_; }
  int order() const { return method_.order(); }

  enum class Result { Completed, Stopped };

  /// From X0 (n x K) at times(0) to times(end): every step output when
  /// times has two entries, else exactly those times.
  Result run(const Vec& times, const Mat& X0, EnsembleObserver& obs) {
    const int n = 2 * pb_.dim(), K = pb_.members();
    const double t0 = times(0), tf = times(times.size() - 1);
    const double dir = tf >= t0 ? 1.0 : -1.0;
    X_ = X0;
    pb_.set_background(&X_);
    Mat F0(n, K);
    pb_.field(t0, X_, F0);
    for (int j = 0; j < K; ++j)
      if (!column_finite(F0, j))
        throw InputError("nonFiniteFcn", "the ODE function returned a non-finite value at t0 for member " +
                                             std::to_string(j + 1));
    method_.start(t0, X_, F0, F_, A_);
    for (auto& o : outcome_) o = MemberOutcome();
    ended_ = 0;
    if (events_) call_events(t0, X_, V0_);
    if (!obs.output(t0, X_)) return Result::Stopped;
    Xout_.resize(n, K);
    double t = t0;
    double h = opts_.fixed_step > 0 ? dir * opts_.fixed_step : dir * first_step(t0, F0, std::abs(tf - t0));
    std::size_t next_out = 1;
    const bool every_step = times.size() == 2;
    while (dir * (tf - t) > 0) {
      int k = 0;
      for (int j = 0; j < K; ++j)
        if (outcome_[j].state == MemberOutcome::State::Running) ids_[k++] = j;
      if (k == 0) break;
      const double target = times(static_cast<Eigen::Index>(next_out));
      // a step that reaches the next output time (or falls short of it by
      // round-off: fixed steps t0 + i h summed) lands on it
      double hs = h;
      const double rem = target - t;
      const bool lands = dir * (hs - rem) >= 0 || std::abs(rem - hs) <= 1e-10 * std::abs(hs);
      if (lands) hs = rem;
      gather(k);
      double t_new;
      if (opts_.fixed_step > 0) {
        method_.step(t, hs, ids_.data(), k, Xa_.leftCols(k), Fa_.leftCols(k), Aa_.leftCols(k),
                     X1_.leftCols(k), F1_.leftCols(k), A1_.leftCols(k), st1_.data());
        for (int u = 0; u < k; ++u)
          if (st1_[u] != StepStatus::Success) fail(ids_[u], t, st1_[u]);
        t_new = lands ? target : t + hs;
      } else {
        // step doubling: one step of hs against two of hs/2
        const double hmin = 16 * std::numeric_limits<double>::epsilon() * std::max(std::abs(t), std::abs(tf));
        method_.step(t, hs, ids_.data(), k, Xa_.leftCols(k), Fa_.leftCols(k), Aa_.leftCols(k),
                     Xf_.leftCols(k), Ff_.leftCols(k), Af_.leftCols(k), st1_.data());
        method_.step(t, 0.5 * hs, ids_.data(), k, Xa_.leftCols(k), Fa_.leftCols(k), Aa_.leftCols(k),
                     Xh_.leftCols(k), Fh_.leftCols(k), Ah_.leftCols(k), st2_.data());
        method_.step(t + 0.5 * hs, 0.5 * hs, ids_.data(), k, Xh_.leftCols(k), Fh_.leftCols(k),
                     Ah_.leftCols(k), X1_.leftCols(k), F1_.leftCols(k), A1_.leftCols(k), st3_.data());
        bool any_failed = false;
        for (int u = 0; u < k; ++u) {
          if (st3_[u] == StepStatus::Success && st2_[u] != StepStatus::Success) st3_[u] = st2_[u];
          if (st3_[u] == StepStatus::Success && st1_[u] != StepStatus::Success) st3_[u] = st1_[u];
          st1_[u] = st3_[u];
          any_failed = any_failed || st1_[u] != StepStatus::Success;
        }
        if (any_failed && std::abs(hs) > hmin) {
          ++pb_.stats().rejected;
          h = 0.25 * hs;
          continue;
        }
        for (int u = 0; u < k; ++u)
          if (st1_[u] != StepStatus::Success) fail(ids_[u], t, st1_[u]);
        // the error of the two half steps, the largest over the members
        const double denom = std::pow(2.0, order()) - 1.0;
        double E = 0.0;
        for (int u = 0; u < k; ++u) {
          if (st1_[u] != StepStatus::Success) continue;
          err_ = (X1_.col(u) - Xf_.col(u)) / denom;
          E = std::max(E, opts_.norm(err_, X1_.col(u), Xa_.col(u)));
        }
        if (!std::isfinite(E)) E = 1e10;
        double fac = E > 0 ? opts_.safety * std::pow(E, -1.0 / (order() + 1)) : opts_.fac_max;
        if (E > 1.0 && std::abs(hs) > hmin) {
          ++pb_.stats().rejected;
          h = hs * std::max(opts_.fac_min, std::min(1.0, fac));
          continue;
        }
        t_new = lands ? target : t + hs;
        h = hs * std::max(opts_.fac_min, std::min(opts_.fac_max, fac));
        if (std::abs(h) > opts_.max_step) h = dir * opts_.max_step;
      }
      ++pb_.stats().steps;
      // commit the members that succeeded
      bool all_ok = k == pb_.members();
      for (int u = 0; u < k && all_ok; ++u) all_ok = st1_[u] == StepStatus::Success;
      if (all_ok) {
        X_.swap(X1_);
        F_.swap(F1_);
        A_.swap(A1_);
        pb_.set_background(&X_);
      }
      for (int u = 0; u < k && !all_ok; ++u) {
        if (st1_[u] != StepStatus::Success) continue;
        const int j = ids_[u];
        X_.col(j) = X1_.col(u);
        F_.col(j) = F1_.col(u);
        A_.col(j) = A1_.col(u);
      }
      if (events_) check_events(t, hs, k);
      t = t_new;
      if (lands) ++next_out;
      if (every_step || lands) {
        if (!obs.output(t, output_states())) return Result::Stopped;
      }
    }
    for (int j = 0; j < K; ++j)
      if (outcome_[j].state == MemberOutcome::State::Running) outcome_[j].t_end = t;
    return Result::Completed;
  }

 private:
  void gather(int k) {
    if (k == pb_.members()) {  // all live: ids_ is 0..K-1
      Xa_ = X_;
      Fa_ = F_;
      Aa_ = A_;
      return;
    }
    for (int u = 0; u < k; ++u) {
      const int j = ids_[u];
      Xa_.col(u) = X_.col(j);
      Fa_.col(u) = F_.col(j);
      Aa_.col(u) = A_.col(j);
    }
  }

  /// A member ends: its state stays in X_ (the background of later calls
  /// on the others), its outputs are NaN from now on.
  void fail(int j, double t, StepStatus s) {
    MemberOutcome& o = outcome_[j];
    o.state = MemberOutcome::State::Failed;
    o.t_end = t;
    o.message = describe(s);
    ++ended_;
    ++pb_.stats().failed_members;
  }

  const Mat& output_states() {
    if (ended_ == 0) return X_;
    Xout_ = X_;
    for (int j = 0; j < pb_.members(); ++j)
      if (outcome_[j].state != MemberOutcome::State::Running)
        Xout_.col(j).setConstant(std::numeric_limits<double>::quiet_NaN());
    return Xout_;
  }

  /// The events of all K members at (t, X) (the ended ones' values unused).
  void call_events(double t, const Mat& X, Mat& V) {
    ++pb_.stats().event_calls;
    events_(t, X, V, term_, dir_);
  }

  /// After the committed step t -> t + h of the members ids_[0..k-1] (their
  /// starts in Xa_, Fa_, Aa_): records crossings; a terminal one ends the member.
  void check_events(double t, double h, int k) {
    call_events(t + h, X_, V1_);
    for (int u = 0; u < k; ++u) {
      const int j = ids_[u];
      if (outcome_[j].state != MemberOutcome::State::Running) continue;
      pending_.clear();
      for (int i = 0; i < nev_; ++i) {
        const double a = V0_(i, j), b = V1_(i, j);
        const bool up = a < 0.0 && b >= 0.0, down = a > 0.0 && b <= 0.0;
        if (!((up && dir_(i) >= 0) || (down && dir_(i) <= 0))) continue;
        double tau = h;
        Vec xe = X_.col(j);
        if (b != 0.0 && !locate(t, h, u, i, tau, xe)) {
          fail(j, t, StepStatus::NonFinite);
          break;
        }
        pending_.push_back({t + tau, xe, i});
      }
      if (outcome_[j].state != MemberOutcome::State::Running) continue;
      std::stable_sort(pending_.begin(), pending_.end(),
                       [](const MemberEvent& a, const MemberEvent& b) { return a.t < b.t; });
      for (const MemberEvent& e : pending_) {
        outcome_[j].events.push_back(e);
        if (term_(e.index) != 0.0) {
          outcome_[j].state = MemberOutcome::State::Event;
          outcome_[j].t_end = e.t;
          X_.col(j) = e.x;
          ++ended_;
          break;
        }
      }
      V0_.col(j) = V1_.col(j);
    }
  }

  /// Illinois on φ(τ) = e_i(Φ_τ(x_n)) for member ids_[u] alone.
  bool locate(double t, double h, int u, int i, double& tau, Vec& xe) {
    const int j = ids_[u];
    double a = 0.0, b = h, fa = V0_(i, j), fb = V1_(i, j);
    int side = 0;
    const double tol = 4 * std::numeric_limits<double>::epsilon() * std::max(std::abs(t), std::abs(t + h));
    bool have_best = false;
    double best_tau = h;
    for (int it = 0; it < 100 && std::abs(b - a) > tol; ++it) {
      double c = (a * fb - b * fa) / (fb - fa);
      if (!(std::abs(c - a) > 0.0 && std::abs(b - c) > 0.0) || !std::isfinite(c)) c = 0.5 * (a + b);
      if (!trial(t, c, u)) return false;
      // all K columns (the others at their step ends), member j's the trial
      Xe_ = X_;
      Xe_.col(j) = Xt_.col(0);
      ++pb_.stats().event_calls;
      events_(t + c, Xe_, Ve_, term_, dir_);
      const double fc = Ve_(i, j);
      if (!std::isfinite(fc)) return false;
      if (fc == 0.0) {
        best_tau = c;
        xe = Xt_.col(0);
        have_best = true;
        break;
      }
      if ((fc < 0.0) == (fb < 0.0)) {
        b = c;
        fb = fc;
        best_tau = c;
        xe = Xt_.col(0);
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
    if (!have_best) {
      best_tau = b;
      if (!trial(t, b, u)) return false;
      xe = Xt_.col(0);
    }
    tau = best_tau;
    return true;
  }

  /// One step of size c of member ids_[u] alone from its step start.
  bool trial(double t, double c, int u) {
    StepStatus s;
    method_.step(t, c, &ids_[u], 1, Xa_.col(u), Fa_.col(u), Aa_.col(u), Xt_, Ft_, At_, &s);
    return s == StepStatus::Success;
  }

  /// Hairer, Nørsett, Wanner, "Solving ODEs I", II.4: h = 0.01 |x| / |f| in
  /// the weighted norm, the largest over the members; at most the span.
  double first_step(double t0, const Mat& F0, double span) const {
    (void)t0;
    if (opts_.initial_step > 0) return std::min(opts_.initial_step, span);
    double d0 = 0.0, d1 = 0.0;
    for (Eigen::Index j = 0; j < F0.cols(); ++j) {
      d0 = std::max(d0, opts_.norm(X_.col(j), X_.col(j), X_.col(j)));
      d1 = std::max(d1, opts_.norm(F0.col(j), X_.col(j), X_.col(j)));
    }
    double h = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h = std::min({h, span, opts_.max_step});
    return h;
  }

  EnsembleMethod& method_;
  EnsembleProblem& pb_;
  EnsembleOptions opts_;
  Mat X_, F_, A_;
  Mat Xa_, Fa_, Aa_, X1_, F1_, A1_, Xh_, Fh_, Ah_, Xf_, Ff_, Af_;
  Mat Xt_, Ft_, At_;
  std::vector<int> ids_;
  std::vector<StepStatus> st1_, st2_, st3_;
  std::vector<MemberOutcome> outcome_;
  Vec err_;
  EventFn events_;
  int nev_ = 0;
  Mat V0_, V1_, Xe_, Ve_, Xout_;
  int ended_ = 0;
  Vec term_, dir_;
  std::vector<MemberEvent> pending_;
};

}  // namespace odepkg::ensemble

#endif
