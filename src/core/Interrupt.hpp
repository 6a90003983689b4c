// Interrupt.hpp — a poll for a user's interrupt (Ctrl-C) inside long steps.
//
// The integration loop polls once per step (Integrator::run's hook); a single
// step of a large implicit method (SPVI with many unknowns: finite-difference
// Hessians of 2d calls each, an LU of (Q + P + 2) d unknowns) can take
// seconds, so the core also polls between Newton iterations, between the
// columns of finite-difference Jacobians and between the panels of a large
// LU (InterruptibleLU.hpp).  The host installs the poll — Octave's binding
// installs octave_quit, which throws when Ctrl-C was pressed — for the
// duration of one call (ScopedInterruptPoll); without a host nothing is
// polled.  The core is exception safe: a poll that throws unwinds through
// RAII storage only.
#ifndef ODEPKG_INTERRUPT_HPP
#define ODEPKG_INTERRUPT_HPP

namespace odepkg {

using InterruptPoll = void (*)();

namespace detail {
inline InterruptPoll& interrupt_poll_slot() {
  static InterruptPoll poll = nullptr;
  return poll;
}
}  // namespace detail

/// Poll the host for an interrupt (may throw the host's exception).
inline void poll_interrupt() {
  if (InterruptPoll p = detail::interrupt_poll_slot()) p();
}

/// Installs a poll for the lifetime of this object, restoring the previous one.
class ScopedInterruptPoll {
 public:
  explicit ScopedInterruptPoll(InterruptPoll p) : prev_(detail::interrupt_poll_slot()) {
    detail::interrupt_poll_slot() = p;
  }
  ~ScopedInterruptPoll() { detail::interrupt_poll_slot() = prev_; }
  ScopedInterruptPoll(const ScopedInterruptPoll&) = delete;
  ScopedInterruptPoll& operator=(const ScopedInterruptPoll&) = delete;

 private:
  InterruptPoll prev_;
};

}  // namespace odepkg

#endif
