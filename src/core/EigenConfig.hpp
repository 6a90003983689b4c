// EigenConfig.hpp — include FIRST in every translation unit of the core.
//
// A failed eigen_assert calls abort() by default, which would kill the user's
// whole Octave session (shared/notes/octave-packaging.md §4).  We turn it into a
// typed C++ exception that the bindings convert into an Octave error.
#ifndef ODEPKG_EIGEN_CONFIG_HPP
#define ODEPKG_EIGEN_CONFIG_HPP

#include <stdexcept>
#include <string>

namespace odepkg {
/// Raised when an internal Eigen precondition fails (a bug, never user input).
struct EigenAssertion : std::logic_error {
  using std::logic_error::logic_error;
};

/// The throw of a failed eigen_assert, out of line: the check left in
/// Eigen's block and Ref constructors is then one compare and a call, small
/// enough to be inlined (with the throw and its std::string inline, GCC kept
/// every Block constructor out of line: about 15 % of a small RATTLE stage).
[[noreturn]] __attribute__((noinline, cold)) inline void eigen_assertion_failed(const char* what) {
  throw EigenAssertion(std::string("Eigen assertion failed: ") + what);
}
}  // namespace odepkg

#ifndef eigen_assert
#define eigen_assert(x)                                                   \
  do {                                                                    \
    if (__builtin_expect(!(x), 0)) ::odepkg::eigen_assertion_failed(#x); \
  } while (false)
#endif

#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/Cholesky>

#endif
