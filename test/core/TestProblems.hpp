// TestProblems.hpp — reference problems with known solutions for the core tests.
#ifndef ODEPKG_TEST_PROBLEMS_HPP
#define ODEPKG_TEST_PROBLEMS_HPP

#include "HamiltonianProblem.hpp"
#include "loop/Integrator.hpp"

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

/// McLachlan, Modin, Verdier, Wilkins 2014, Sect. 5.4, "harmonic
/// constraints": phase space R^{2d}, y = [q; p], the coisotropic constraint
/// g(y) = |q|^2 + |p|^2 - 1 (M = S^{2d-1}, m = 1) and H = |p|^2/2 - gvec.q,
/// so f = [p; gvec] (Sect. 5.4.1: gvec = 0; Sect. 5.4.2: gvec = (0, -1)).
/// The fibres are great circles, X_g = J grad g = (2p, -2q):
///   exp(s X_g)(q, p) = (cos(2s) q + sin(2s) p, -sin(2s) q + cos(2s) p).
/// Every callback writes into its output only (no allocation).
struct HarmonicSphere {
  int d = 2;
  double gvec[3] = {0.0, -1.0, 0.0};  ///< first d entries used

  HamiltonianProblem::Field field() const {
    const int n = d;
    const double g0 = gvec[0], g1 = gvec[1], g2 = gvec[2];
    return [n, g0, g1, g2](double, const ConstVecRef& x, VecRef dx) {
      const double gv[3] = {g0, g1, g2};
      for (int i = 0; i < n; ++i) {
        dx(i) = x(n + i);
        dx(n + i) = gv[i];
      }
    };
  }
  HamiltonianProblem::Hessian hessian() const {
    const int n = d;
    return [n](double, const ConstVecRef&, MatRef H) {
      H.setZero();
      for (int i = 0; i < n; ++i) H(n + i, n + i) = 1.0;
    };
  }
  double energy(const Vec& y) const {
    double e = 0.5 * y.tail(d).squaredNorm();
    for (int i = 0; i < d; ++i) e -= gvec[i] * y(i);
    return e;
  }
  static void g(const ConstVecRef& y, VecRef out) { out(0) = y.squaredNorm() - 1.0; }
  static void Dg(const ConstVecRef& y, MatRef D) { D.row(0) = 2.0 * y.transpose(); }
  static void Hg(const ConstVecRef&, MatRef H) {
    H.setZero();
    H.diagonal().setConstant(2.0);  // 2d x 2d, m = 1
  }
  /// The closed-form fibre flow (out must not alias z).
  static void flow(const ConstVecRef& z, const ConstVecRef& s, VecRef out) {
    const int n = static_cast<int>(z.size()) / 2;
    const double c = std::cos(2.0 * s(0)), si = std::sin(2.0 * s(0));
    for (int i = 0; i < n; ++i) {
      const double q = z(i), p = z(n + i);
      out(i) = c * q + si * p;
      out(n + i) = -si * q + c * p;
    }
  }
  /// Hidden constraint {g, H} = grad g . f = 2 q.p + 2 p.gvec.
  double hidden(const Vec& y) const {
    double r = 2.0 * y.head(d).dot(y.tail(d));
    for (int i = 0; i < d; ++i) r += 2.0 * gvec[i] * y(d + i);
    return r;
  }
  /// Hopf map (d = 2, eq. (21)) of z0 = q_0 + i p_0, z1 = q_1 + i p_1:
  /// (2 z0 conj(z1), |z0|^2 - |z1|^2) in C x R = R^3; constant on fibres.
  static Vec hopf(const Vec& y) {
    const double q0 = y(0), q1 = y(1), p0 = y(2), p1 = y(3);
    Vec h(3);
    h << 2 * (q0 * q1 + p0 * p1), 2 * (p0 * q1 - q0 * p1), q0 * q0 + p0 * p0 - q1 * q1 - p1 * p1;
    return h;
  }
  /// Table 1, z_a (q0, q1, p0, p1), "on M_H" up to its 7-8 printed digits
  /// (|z_a|^2 = 0.98: project before use).
  static Vec table1_za() {
    Vec y(4);
    y << -0.7865261200000000, -0.4043988000000000, -0.3880746864163783, 0.2173391755798215;
    return y;
  }
};

}  // namespace odepkg::test

#endif
