// Finite.hpp — the per-step finiteness check in one cheap reduction.
//
// Every step checks its state and each value of f for NaN/Inf (a NaN must
// end the run with a message, not spread through the user's output).
// Eigen's allFinite() costs a call and a branchy loop per vector; here
// x_i * 0 is +-0 for finite x_i and NaN for Inf or NaN, and a sum of zeros
// stays 0 while one NaN makes it NaN: one multiply-add per element, no
// branch, and never a false alarm (unlike testing the plain sum, which can
// overflow).  Needs IEEE arithmetic (no -ffast-math, like CompensatedSum).
#ifndef ODEPKG_FINITE_HPP
#define ODEPKG_FINITE_HPP

#include "EigenConfig.hpp"

namespace odepkg {

/// True when x[0 .. n-1] are all finite.  Four sums, so that the adds
/// do not wait for each other (one chain: an add's latency per element).
inline bool all_finite(const double* x, Eigen::Index n) {
  double z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0;
  Eigen::Index i = 0;
  for (; i + 4 <= n; i += 4) {
    z0 += x[i] * 0.0;
    z1 += x[i + 1] * 0.0;
    z2 += x[i + 2] * 0.0;
    z3 += x[i + 3] * 0.0;
  }
  for (; i < n; ++i) z0 += x[i] * 0.0;
  return (z0 + z1) + (z2 + z3) == 0.0;
}

/// The same for a vector with contiguous storage (Vec, Ref, Map).
template <class V>
inline bool all_finite(const V& v) {
  return all_finite(v.data(), v.size());
}

}  // namespace odepkg

#endif
