// CompensatedSum.hpp — compensated summation of a state update,
//   x_{n+1} = x_n + delta_n,
// carrying the part of each sum lost to rounding in a compensation vector e
// into the next increment (Kahan 1965; Møller, "Quasi double-precision in
// floating point addition", BIT 5, 1965).  Over 10^6..10^7 steps the rounding
// of the plain sum performs a random walk of size ~ sqrt(N) eps |x| that
// dominates the error of a high-order method; compensated, the increments
// are summed as if in twice the precision (Hairer, McLachlan, Razakarivony,
// "Achieving Brouwer's law with implicit Runge-Kutta methods", BIT 48,
// 2008, Sect. 3).  The exact error of each sum comes from Knuth's TwoSum
// (Knuth, "The Art of Computer Programming", vol. 2, Sect. 4.2.2), exact
// whatever the magnitudes (Kahan's Fast2Sum needs |x| >= |delta|, which an
// oscillating component crossing zero violates).  Needs IEEE arithmetic
// without reassociation (no -ffast-math).
#ifndef ODEPKG_COMPENSATED_SUM_HPP
#define ODEPKG_COMPENSATED_SUM_HPP

#include "Types.hpp"

namespace odepkg {

/// x_out = fl(x + (delta + e)) and e_out = its rounding error, exactly
/// (x + (delta + e) = x_out + e_out when delta + e is exact).  Component
/// by component, so x_out may be x and e_out may be e; no allocation.
template <class X, class E, class D, class XO, class EO>
inline void compensated_add(const X& x, const E& e, const D& delta, XO&& x_out, EO&& e_out) {
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double a = x(i);
    const double b = delta(i) + e(i);
    const double s = a + b;
    const double bb = s - a;                   // TwoSum: the part of b that made it into s
    e_out(i) = (a - (s - bb)) + (b - bb);      // what was lost, exactly
    x_out(i) = s;
  }
}

}  // namespace odepkg

#endif
