// InitialStep.hpp — starting step size of Hairer, Nørsett & Wanner I, §II.4
// (the algorithm of Octave's ode45, starting_stepsize.m), with the ode45 norm.
#ifndef ODEPKG_INITIAL_STEP_HPP
#define ODEPKG_INITIAL_STEP_HPP

#include "loop/ErrorNorm.hpp"
#include "HamiltonianProblem.hpp"

#include <algorithm>
#include <cmath>

namespace odepkg {

/// f0 = f(t0, x0) is given; costs one more call of f.  Returns |h| > 0.
inline double initial_step(HamiltonianProblem& problem, const ErrorNorm& norm, int order,
                           double t0, const ConstVecRef& x0, const ConstVecRef& f0,
                           double direction) {
  const double d0 = norm(x0, x0, x0);
  const double d1 = norm(f0, f0, f0);
  const double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  Vec x1 = x0 + direction * h0 * f0;
  Vec f1(x0.size());
  double d2 = 0.0;
  if (problem.field(t0 + direction * h0, x1, f1)) {
    Vec df = f1 - f0;
    d2 = norm(df, df, df) / h0;
  } else {
    return h0;
  }
  const double h1 = std::max(d1, d2) <= 1e-15 ? std::max(1e-6, h0 * 1e-3)
                                              : std::pow(1e-2 / std::max(d1, d2), 1.0 / (order + 1));
  return std::min(100 * h0, h1);
}

}  // namespace odepkg

#endif
