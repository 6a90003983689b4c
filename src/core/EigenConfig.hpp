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
}  // namespace odepkg

#ifndef eigen_assert
#define eigen_assert(x)                                                        \
  do {                                                                         \
    if (!(x))                                                                  \
      throw ::odepkg::EigenAssertion(std::string("Eigen assertion failed: ") + \
                                     #x);                                      \
  } while (false)
#endif

#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/Cholesky>

#endif
