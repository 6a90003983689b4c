// SameBits.hpp — exact equality of two vectors of doubles, as a key test.
//
// The steppers test "is this the point I last evaluated at?" once or more
// per step (the continuation of a step, caches of G keyed by q): Eigen's
// (a.array() == b.array()).all() is a branch per element; memcmp is libc's
// vectorized loop.  Bit-for-bit equality differs from == only for +0
// against -0 (unequal here) and a NaN against itself (equal here); for a key
// either costs at most a recomputation, and a state with a NaN never gets
// this far (every step checks its state).
#ifndef ODEPKG_SAME_BITS_HPP
#define ODEPKG_SAME_BITS_HPP

#include <cstring>
#include <type_traits>

namespace odepkg {

/// a and b (contiguous storage: Vec, Ref, Map, a block of a Vec) hold the
/// same numbers bit for bit.
template <class A, class B>
inline bool same_bits(const A& a, const B& b) {
  static_assert(std::is_same_v<typename A::Scalar, double> && std::is_same_v<typename B::Scalar, double>,
                "same_bits compares doubles");
  static_assert(A::InnerStrideAtCompileTime == 1 && B::InnerStrideAtCompileTime == 1,
                "same_bits needs contiguous storage");
  return a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0);
}

}  // namespace odepkg

#endif
