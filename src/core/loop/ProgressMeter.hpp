// ProgressMeter.hpp — how far a long integration is, at no measurable cost.
//
// The integration loop calls step(t) after every accepted step.  That call
// only counts; every `stride` steps it reads the clock
// (std::chrono::steady_clock), and it reports to the host's callback at most
// once per `report_interval` (a quarter of a second by default) with t, the
// span [t0, tf] and the wall time elapsed.  The stride adapts so that the
// clock is read about once per `poll_interval` (a few milliseconds): doubled
// while reads come faster than that, halved when slower — cheap explicit steps
// of a microsecond read it every few thousand steps, a step of a second on
// every step.  finish(t) makes the last report (state Done), whatever the time
// since the previous one.  Nothing here allocates; the callback is the host's
// (the Octave binding prints a line or moves a waitbar, at most four times a
// second, so its cost does not matter either).
#ifndef ODEPKG_PROGRESS_METER_HPP
#define ODEPKG_PROGRESS_METER_HPP

#include <chrono>
#include <cstdint>
#include <functional>

namespace odepkg {

struct ProgressReport {
  double t = 0.0;        ///< the time reached
  double t0 = 0.0;       ///< the span's start
  double tf = 0.0;       ///< the span's end
  double elapsed = 0.0;  ///< wall seconds since start()
  bool done = false;     ///< the last report of the run (finish())
  /// The fraction of [t0, tf] covered, in [0, 1] (1 for an empty span).
  double fraction() const {
    if (tf == t0) return 1.0;
    const double f = (t - t0) / (tf - t0);
    return f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
  }
};

class ProgressMeter {
 public:
  using Clock = std::chrono::steady_clock;
  using Callback = std::function<void(const ProgressReport&)>;

  struct Options {
    double report_interval = 0.25;  ///< seconds between two reports, at least
    double poll_interval = 0.005;   ///< aimed-at seconds between two clock reads
    std::uint32_t max_stride = 1u << 20;
  };

  explicit ProgressMeter(Callback report) : ProgressMeter(std::move(report), Options()) {}
  ProgressMeter(Callback report, Options opts) : report_(std::move(report)), opts_(opts) {}

  /// Start the clock for a run over [t0, tf].
  void start(double t0, double tf) {
    rep_.t0 = t0;
    rep_.tf = tf;
    rep_.t = t0;
    rep_.done = false;
    start_ = last_poll_ = last_report_ = Clock::now();
    stride_ = 1;
    count_ = 0;
    reports_ = 0;
    polls_ = 0;
  }

  /// After an accepted step that reached t.
  void step(double t) {
    if (++count_ < stride_) return;
    count_ = 0;
    poll(t);
  }

  /// The run ended at t (completed, stopped, or failed midway): the last report.
  void finish(double t) {
    const Clock::time_point now = Clock::now();
    send(t, now, true);
  }

  long reports() const { return reports_; }           ///< callback calls so far
  long polls() const { return polls_; }               ///< clock reads by step()
  std::uint32_t stride() const { return stride_; }    ///< steps between clock reads now

 private:
  void poll(double t) {
    const Clock::time_point now = Clock::now();
    ++polls_;
    const double since_poll = seconds(now - last_poll_);
    last_poll_ = now;
    if (since_poll < 0.5 * opts_.poll_interval) {
      if (stride_ < opts_.max_stride) stride_ *= 2;
    } else if (since_poll > 2.0 * opts_.poll_interval && stride_ > 1) {
      stride_ /= 2;
    }
    if (seconds(now - last_report_) >= opts_.report_interval) send(t, now, false);
  }

  void send(double t, Clock::time_point now, bool done) {
    last_report_ = now;
    rep_.t = t;
    rep_.elapsed = seconds(now - start_);
    rep_.done = done;
    ++reports_;
    if (report_) report_(rep_);
  }

  static double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

  Callback report_;
  Options opts_;
  ProgressReport rep_;
  Clock::time_point start_{}, last_poll_{}, last_report_{};
  std::uint32_t stride_ = 1, count_ = 0;
  long reports_ = 0, polls_ = 0;
};

}  // namespace odepkg

#endif
