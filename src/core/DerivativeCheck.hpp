// DerivativeCheck.hpp — a user's derivative checked, once before the first
// step, against differences of the function it claims to differentiate,
// along a few random directions: O(1) calls whatever the dimension.
//
// For a curve c(s) through the function (c(s) = F(x + s v), or
// F(q ∘ exp(s ṽ)) on a Lie group) and the claimed derivative c'(0) = J v:
//   D(h) = (c(h) − c(−h)) / 2h,  D(2h) likewise,
//   R = (4 D(h) − D(2h)) / 3          (Richardson: error O(h⁴)),
// with the expected error of R bounded by |D(h) − D(2h)| / 3 (the O(h²)
// truncation of D(h), which R removes) plus the round-off of the quotients,
// eps max|c| / h (Dennis, Schnabel, "Numerical Methods for Unconstrained
// Optimization", §5.6; Nocedal, Wright, "Numerical Optimization", §8.1).
// Four calls of c per direction, h = cbrt(eps) max(1, |x|).
//
// The relative discrepancy |R − J v|_inf / scale is compared with a safety
// factor times the expected relative accuracy (never below eps^(2/3), the
// best accuracy of a central quotient): a derivative with a wrong sign or a
// missing factor is off by O(1), a correct one by the accuracy of R.
#ifndef ODEPKG_DERIVATIVE_CHECK_HPP
#define ODEPKG_DERIVATIVE_CHECK_HPP

#include "Types.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>

namespace odepkg {

class DerivativeCheck {
 public:
  /// c(s, out): the function along a curve through the checked point,
  /// s = 0 at the point; returns false on non-finite values.
  using Curve = std::function<bool(double s, VecRef out)>;

  struct Result {
    double discrepancy = 0.0;  ///< |R − J v|_inf / scale (relative)
    double accuracy = 0.0;     ///< expected relative accuracy of R
    bool finite = true;        ///< false if c returned a non-finite value
    bool passed() const { return finite && discrepancy <= kSafety * accuracy; }
  };

  /// A discrepancy this many times the expected accuracy fails the check.
  static constexpr double kSafety = 100.0;
  /// Directions per checked derivative.
  static constexpr int kDirections = 2;

  static double eps() { return std::numeric_limits<double>::epsilon(); }
  /// The best relative accuracy of a central quotient, eps^(2/3).
  static double floor_accuracy() { return std::pow(eps(), 2.0 / 3.0); }
  /// Difference step for a point of size `size` (inf-norm), unit directions.
  static double step(double size) { return std::cbrt(eps()) * std::max(1.0, size); }

  /// Deterministic seed: the same check gives the same verdict on every run.
  explicit DerivativeCheck(unsigned seed = 5489u) : rng_(seed) {}

  /// v <- a random unit vector (Gaussian components, normalised).
  void random_direction(VecRef v) {
    std::normal_distribution<double> normal;
    for (Eigen::Index i = 0; i < v.size(); ++i) v(i) = normal(rng_);
    const double nv = v.norm();
    if (nv > 0.0) v /= nv;
  }

  /// Compares `claimed` = c'(0) with the extrapolated quotient R of c at
  /// step h.  `scale` (> 0): the size the discrepancy is relative to, e.g.
  /// the norm of the whole Jacobian; the larger of it, |R| and |claimed| is used.
  /// `extra_error`: an absolute error of `claimed` itself (0 when exact).
  static Result compare(const Curve& c, double h, const ConstVecRef& claimed, double scale,
                        double extra_error = 0.0) {
    Result r;
    Vec R(claimed.size());
    double err = 0.0;
    if (!quotient(c, h, R, err) || !claimed.allFinite()) {
      r.finite = false;
      return r;
    }
    const double s = std::max({scale, R.lpNorm<Eigen::Infinity>(), claimed.lpNorm<Eigen::Infinity>(),
                               std::numeric_limits<double>::min()});
    r.discrepancy = (R - claimed).lpNorm<Eigen::Infinity>() / s;
    r.accuracy = std::max(floor_accuracy(), (err + extra_error) / s);
    return r;
  }

  /// R = (4 D(h) − D(2h)) / 3 and its expected absolute error (4 calls).
  static bool quotient(const Curve& c, double h, VecRef R, double& error) {
    const Eigen::Index k = R.size();
    Vec a(k), b(k), D1(k);
    if (!c(h, a) || !c(-h, b)) return false;
    D1 = (a - b) / (2 * h);
    double cmax = std::max(a.lpNorm<Eigen::Infinity>(), b.lpNorm<Eigen::Infinity>());
    if (!c(2 * h, a) || !c(-2 * h, b)) return false;
    cmax = std::max({cmax, a.lpNorm<Eigen::Infinity>(), b.lpNorm<Eigen::Infinity>()});
    R = (a - b) / (4 * h);  // D(2h)
    const double truncation = (D1 - R).lpNorm<Eigen::Infinity>() / 3.0;
    R = (4.0 * D1 - R) / 3.0;
    error = truncation + 4 * eps() * cmax / h;
    return true;
  }

  /// InputError "derivativeCheck" naming `what` unless r passed.
  /// `against`: what it was compared with ("central differences of ConstraintFcn").
  static void require(const Result& r, const std::string& what, const std::string& against,
                      const std::string& where = "at the initial data") {
    if (!r.finite)
      throw InputError("nonFiniteFcn", "a non-finite value met while checking " + what + " " + where);
    if (r.passed()) return;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s does not match %s %s: relative discrepancy %.3g along a random direction, where the "
                  "check is accurate to %.2g (a sign or a factor wrong?); option \"DerivativeCheck\", \"off\" "
                  "skips this check",
                  what.c_str(), against.c_str(), where.c_str(), r.discrepancy, r.accuracy);
    throw InputError("derivativeCheck", buf);
  }

  /// The m-by-n Jacobian J of g at x against differences of g along
  /// kDirections random directions (`value(x, out)` evaluates g): 4 calls
  /// of g per direction.  `what`/`against` name them in the error.
  /// J dense or sparse (Mat or SpMat: J v and |J|_F are all it needs).
  template <class Matrix, class Value>
  void require_jacobian(const ConstVecRef& x, const Matrix& J, Value value, const std::string& what,
                        const std::string& against) {
    const double h = step(x.lpNorm<Eigen::Infinity>());
    Vec v(x.size()), xs(x.size()), Jv(J.rows());
    for (int k = 0; k < kDirections; ++k) {
      random_direction(v);
      Jv.noalias() = J * v;
      auto curve = [&](double s, VecRef out) {
        xs = x + s * v;
        return value(xs, out);
      };
      require(compare(curve, h, Jv, J.norm()), what, against);
    }
  }

  /// The Hessians of g_1..g_m at x, stacked n-by-(n m) (block i that of
  /// g_i), against differences of the m-by-n gradient (`grad(x, G)`): along
  /// v, dG/ds has row i = (H_i v)^T.
  template <class Grad>
  void require_stacked_hessians(const ConstVecRef& x, const Mat& H, int m, Grad grad, const std::string& what,
                                const std::string& against) {
    const Eigen::Index n = x.size();
    const double h = step(x.lpNorm<Eigen::Infinity>());
    Mat Gs(m, n);
    Vec v(n), xs(n), Hv(n), HvT(m * n);
    for (int k = 0; k < kDirections; ++k) {
      random_direction(v);
      for (int i = 0; i < m; ++i) {
        Hv.noalias() = H.middleCols(i * n, n) * v;
        for (Eigen::Index j = 0; j < n; ++j) HvT(j * m + i) = Hv(j);  // column-major m x n
      }
      auto curve = [&](double s, VecRef out) {
        xs = x + s * v;
        if (!grad(xs, Gs)) return false;
        out = Eigen::Map<const Vec>(Gs.data(), m * n);
        return true;
      };
      require(compare(curve, h, HvT, H.norm()), what, against);
    }
  }

 private:
  std::mt19937 rng_;
};

}  // namespace odepkg

#endif
