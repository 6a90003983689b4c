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

}  // namespace odepkg::test

#endif
