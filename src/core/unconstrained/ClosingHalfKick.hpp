// ClosingHalfKick.hpp — the last half kick of the explicit kick–drift–kick
// steps (Störmer–Verlet and velocity Verlet; Hairer, Lubich, Wanner,
// "Geometric Numerical Integration", (I.3.6)):
//   p_{n+1} = p_{n+1/2} + h/2 F(q_{n+1}),
// from y = (q_{n+1}, p_{n+1/2}) and f1 = F(q_{n+1}).  The end point keeps F
// (first same as last), and its finiteness is checked in the same pass
// (x * 0 is 0 for a finite x and NaN otherwise, as all_finite in Finite.hpp).
#ifndef ODEPKG_CLOSING_HALF_KICK_HPP
#define ODEPKG_CLOSING_HALF_KICK_HPP

#include "Stepper.hpp"

namespace odepkg {

inline StepStatus closing_half_kick(const double* y, const double* f1, double half, int d, Point& to) {
  double* force = to.force.data();
  double* x1 = to.x.data();
  double zero = 0.0;
  for (int i = 0; i < d; ++i) {
    force[i] = f1[i];
    x1[i] = y[i];
    x1[d + i] = y[d + i] + half * f1[i];
    zero += x1[i] * 0.0;
    zero += x1[d + i] * 0.0;
  }
  to.has_force = true;
  return zero == 0.0 ? StepStatus::Success : StepStatus::NonFinite;
}

}  // namespace odepkg

#endif
