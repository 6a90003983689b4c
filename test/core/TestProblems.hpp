// TestProblems.hpp — reference problems with known solutions for the core tests.
#ifndef ODEPKG_TEST_PROBLEMS_HPP
#define ODEPKG_TEST_PROBLEMS_HPP

#include "HamiltonianProblem.hpp"
#include "Integrator.hpp"

#include <cmath>
#include <ostream>
#include <vector>

namespace odepkg {
/// Readable step statuses in gtest failure messages.
inline void PrintTo(StepStatus s, std::ostream* os) { *os << describe(s); }
}  // namespace odepkg

namespace odepkg::test {

/// Kepler problem H = |p|^2/2 - 1/|q|, eccentricity e, period 2 pi.
struct Kepler {
  double e = 0.6;
  Vec initial() const {
    Vec x(4);
    x << 1 - e, 0, 0, std::sqrt((1 + e) / (1 - e));
    return x;
  }
  static void field(double, const ConstVecRef& x, VecRef dx) {
    const double r = x.head(2).norm();
    dx.head(2) = x.tail(2);
    dx.tail(2) = -x.head(2) / (r * r * r);
  }
  static double energy(const Vec& x) { return 0.5 * x.tail(2).squaredNorm() - 1.0 / x.head(2).norm(); }
  /// Exact solution at time t (Kepler's equation solved by Newton).
  Vec exact(double t) const {
    double E = t;
    for (int i = 0; i < 50; ++i) E -= (E - e * std::sin(E) - t) / (1 - e * std::cos(E));
    const double c = std::cos(E), s = std::sin(E), w = std::sqrt(1 - e * e);
    const double Ed = 1.0 / (1 - e * c);
    Vec x(4);
    x << c - e, w * s, -s * Ed, w * c * Ed;
    return x;
  }
  HamiltonianProblem make() const { return HamiltonianProblem(2, &Kepler::field); }
};

/// Records every output point.
struct Recorder : Observer {
  std::vector<double> t;
  std::vector<Vec> x;
  bool operator()(double tt, const Vec& xx) override {
    t.push_back(tt);
    x.push_back(xx);
    return true;
  }
};

/// Least-squares slope of log(err) against log(h).
inline double fitted_order(const std::vector<double>& h, const std::vector<double>& err) {
  const int n = static_cast<int>(h.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; ++i) {
    const double lx = std::log(h[i]), ly = std::log(err[i]);
    sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}


/// A non-separable H(q, p) with d = 2 (no closed form; for orders, Hessians,
/// symplecticity and call counts):
///   H = |p|^2/2 a(q) - cos q1 - cos q2 + 0.2 sin(q1) p2,  a = 1 + 0.2 q1^2 + 0.1 q2^2.
inline void nonsep(double, const ConstVecRef& x, VecRef dx) {
  const double q1 = x(0), q2 = x(1), p1 = x(2), p2 = x(3);
  const double a = 1 + 0.2 * q1 * q1 + 0.1 * q2 * q2, pp = p1 * p1 + p2 * p2;
  dx(0) = p1 * a;
  dx(1) = p2 * a + 0.2 * std::sin(q1);
  dx(2) = -(0.2 * pp * q1 + std::sin(q1) + 0.2 * std::cos(q1) * p2);
  dx(3) = -(0.1 * pp * q2 + std::sin(q2));
}
inline void nonsep_hess(double, const ConstVecRef& x, MatRef H) {
  const double q1 = x(0), q2 = x(1), p1 = x(2), p2 = x(3);
  const double a = 1 + 0.2 * q1 * q1 + 0.1 * q2 * q2, pp = p1 * p1 + p2 * p2;
  H.setZero();
  H(0, 0) = 0.2 * pp + std::cos(q1) - 0.2 * std::sin(q1) * p2;
  H(1, 1) = 0.1 * pp + std::cos(q2);
  H(0, 2) = H(2, 0) = 0.4 * q1 * p1;
  H(0, 3) = H(3, 0) = 0.4 * q1 * p2 + 0.2 * std::cos(q1);
  H(1, 2) = H(2, 1) = 0.2 * q2 * p1;
  H(1, 3) = H(3, 1) = 0.2 * q2 * p2;
  H(2, 2) = H(3, 3) = a;
}
inline Vec nonsep_x0() {
  Vec x(4);
  x << 0.7, -0.4, 0.3, 0.5;
  return x;
}

}  // namespace odepkg::test

#endif
