// ErrorGuard.h — the only way a DEFUN body runs: every C++ exception that is
// not Octave's own becomes an Octave error with an "odepkg:" identifier.  A
// foreign exception crossing a DEFUN boundary would abort the whole Octave
// session (shared/notes/octave-packaging.md §4).
#ifndef ODEPKG_BINDING_ERROR_GUARD_H
#define ODEPKG_BINDING_ERROR_GUARD_H

#include "EigenConfig.hpp"
#include "Interrupt.hpp"
#include "Types.hpp"

#include <octave/oct.h>
#include <octave/quit.h>

#include <exception>
#include <new>
#include <string>

namespace odepkg::binding {

/// The core's interrupt poll (Interrupt.hpp): Octave's Ctrl-C check, which
/// throws octave::interrupt_exception when the user pressed Ctrl-C.
inline void octave_interrupt_poll() { octave_quit(); }

template <class Body>
octave_value_list guarded(const char* who, Body&& body) {
  // Ctrl-C is seen inside long steps too (Newton iterations, LU panels,
  // every callback), not only between steps.
  const ScopedInterruptPoll poll(&octave_interrupt_poll);
  try {
    return body();
  } catch (const octave::execution_exception&) {
    throw;  // the user's own error (or ours, raised with error_with_id)
  } catch (const octave::interrupt_exception&) {
    throw;  // Ctrl-C
  } catch (const octave::exit_exception&) {
    throw;  // exit() or quit() in a callback ends the session as asked
  } catch (const std::bad_alloc&) {
    throw;  // Octave reports "out of memory"
  } catch (const odepkg::InputError& e) {
    const std::string id = "odepkg:" + e.id;
    error_with_id(id.c_str(), "%s: %s", who, e.what());
  } catch (const odepkg::EigenAssertion& e) {
    error_with_id("odepkg:internal", "%s: internal error (please report): %s", who, e.what());
  } catch (const std::exception& e) {
    error_with_id("odepkg:internal", "%s: internal error (please report): %s", who, e.what());
  }
  return octave_value_list();
}

}  // namespace odepkg::binding

#endif
