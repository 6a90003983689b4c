// SO3Util.hpp — formulas of so(3) shared by the groups whose rotation part is
// SO(3) or S³ (SO3Group, S3Group, SE3Group, S3sdR3Group): hat map, Rodrigues'
// exponential, the left-trivialised differential T(w) of exp and its inverse
// in closed form, their derivatives, and unit quaternions.
//
// With ŵ = skew(w), φ = |w| and ŵ³ = −φ²ŵ, every power series in ŵ collapses
// to I + a(φ)ŵ + b(φ)ŵ² (Hairer–Lubich–Wanner, GNI, §III.4 and §IV.8; Iserles
// et al., Acta Numerica 9 (2000), §B):
//   exp(ŵ)  = I + (sin φ/φ) ŵ + α ŵ²,          α = (1−cos φ)/φ²
//   T(w)    = Σ (−ŵ)^k/(k+1)! = I − α ŵ + β ŵ², β = (φ−sin φ)/φ³
//   T(w)^-1 = Σ B_k ŵ^k/k!    = I + ½ ŵ + γ ŵ², γ = (1 − (φ/2)cot(φ/2))/φ²
// (B_k Bernoulli numbers with B_1 = −½: the inverse of the series x/(e^x−1)
// evaluated at −ŵ).  The closed forms cancel catastrophically as φ → 0, so
// each coefficient (and the derivatives δ = γ'/φ, ε = δ'/φ, α'/φ, β'/φ used
// by SE(3) and by ∂T^{-T}) is a Taylor series in φ² below a threshold where
// the cancellation of the closed form costs at most a few ulps: φ < 3 for the
// entire functions α, β (alternating series with factorial decay) and for γ
// (radius of convergence 2π, terms decay like (φ/2π)^{2n}).  Relative
// accuracy ~1e-15 for every φ < π; the tests check the values against 50-digit
// references on both sides of each switch.
//
// Everything is fixed-size (Eigen::Vector3d, Matrix3d, Vector4d): no heap.
#ifndef ODEPKG_LIE_SO3_UTIL_HPP
#define ODEPKG_LIE_SO3_UTIL_HPP

#include "../EigenConfig.hpp"

#include <Eigen/Geometry>  // cross

#include <cmath>

namespace odepkg::lie::so3 {

using V3 = Eigen::Vector3d;
using M3 = Eigen::Matrix3d;
using V4 = Eigen::Vector4d;

/// ŵ with ŵ x = w × x.
inline M3 skew(const V3& w) {
  M3 S;
  S << 0, -w(2), w(1), w(2), 0, -w(0), -w(1), w(0), 0;
  return S;
}

/// sin x / x (no cancellation: sin is accurate to an ulp; a series only near 0).
inline double sinc(double x) {
  const double t = x * x;
  return std::abs(x) < 1e-3 ? 1.0 - t / 6.0 * (1.0 - t / 20.0) : std::sin(x) / x;
}

/// a_k = (−1)^k/(2k+2)!, b_k = (−1)^k/(2k+3)!, k < K, built at compile time.
struct RotationSeries {
  static constexpr int K = 16;
  double a[K] = {}, b[K] = {};
  constexpr RotationSeries() {
    double f = 0.5;  // 1/2!
    for (int k = 0; k < K; ++k) {
      a[k] = (k % 2 ? -f : f);
      f /= (2 * k + 3);
      b[k] = (k % 2 ? -f : f);
      f /= (2 * k + 4);
    }
  }
};
inline constexpr RotationSeries kSeries{};

/// The coefficients of the collapsed series at φ = |w| (see the header).
struct Coeffs {
  double s;        ///< sin φ / φ
  double alpha;    ///< (1 − cos φ)/φ²
  double beta;     ///< (φ − sin φ)/φ³
  double alpha_d;  ///< α'(φ)/φ
  double beta_d;   ///< β'(φ)/φ
};

/// s, α, β and α'/φ, β'/φ.  Series in φ² for φ < 3: α = Σ (−φ²)^k/(2k+2)!,
/// β = Σ (−φ²)^k/(2k+3)!, α'/φ = Σ 2k(−1)^k φ^{2k−2}/(2k+2)! (same for β);
/// 16 terms reach 1e-19 relative at φ = 3.  Above, 1 − cos φ = 2 sin²(φ/2).
/// Without `derivatives`, α'/φ and β'/φ are left 0.
inline Coeffs rotation_coeffs(double phi, bool derivatives = true) {
  Coeffs c{0, 0, 0, 0, 0};
  const double t = phi * phi;
  if (phi < 3.0) {
    const auto& a = kSeries.a;
    const auto& b = kSeries.b;
    double sa = 0, sb = 0, da = 0, db = 0;
    for (int k = kSeries.K - 1; k >= 0; --k) {
      sa = sa * t + a[k];
      sb = sb * t + b[k];
      if (derivatives && k >= 1) {
        da = da * t + 2 * k * a[k];
        db = db * t + 2 * k * b[k];
      }
    }
    c.s = sinc(phi);
    c.alpha = sa;
    c.beta = sb;
    c.alpha_d = da;
    c.beta_d = db;
  } else {
    const double sn = std::sin(phi), h = std::sin(0.5 * phi);
    const double omc = 2 * h * h;  // 1 − cos φ without cancellation
    c.s = sn / phi;
    c.alpha = omc / t;
    c.beta = (phi - sn) / (t * phi);
    c.alpha_d = (phi * sn - 2 * omc) / (t * t);
    c.beta_d = (omc * phi - 3 * (phi - sn)) / (t * t * phi);
  }
  return c;
}

/// γ(φ) = (1 − (φ/2)cot(φ/2))/φ², δ = γ'(φ)/φ, ε = δ'(φ)/φ.
struct InvCoeffs {
  double gamma, delta, eps;
};

/// c_n = (−1)^{n+1}B_{2n}/(2n)! = 2ζ(2n)/(2π)^{2n}, n = 1 … 40 (50-digit values).
inline constexpr double kInvSeries[40] = {
        8.33333333333333287e-02, 1.38888888888888894e-03, 3.30687830687830710e-05,
        8.26719576719576754e-07, 2.08767569878681002e-08, 5.28419013868749322e-10,
        1.33825365306846789e-11, 3.38968029632258272e-13, 8.58606205627784517e-15,
        2.17486869855806192e-16, 5.50900282836022953e-18, 1.39544646858125223e-19,
        3.53470703962946728e-21, 8.95351742703754628e-23, 2.26795245233768293e-24,
        5.74479066887220246e-26, 1.45517247561486496e-27, 3.68599494066531029e-29,
        9.33673425709504507e-31, 2.36502241570062995e-32, 5.99067176248213414e-34,
        1.51745488446829032e-35, 3.84375812545418860e-37, 9.73635307264669126e-39,
        2.46624704420068111e-40, 6.24707674182074342e-42, 1.58240302446449140e-43,
        4.00827368594893575e-45, 1.01530758555695573e-46, 2.57180415824187168e-48,
        6.51445603523381521e-50, 1.65013099068965249e-51, 4.17983062853947563e-53,
        1.05876346677029094e-54, 2.68187919126077075e-56, 6.79327935110742149e-58,
        1.72075776166814044e-59, 4.35873032934889413e-61, 1.10407929036846661e-62,
        2.79666551337813453e-64,
};

/// Series γ = Σ_{n≥1} c_n φ^{2n−2} (and its term-wise derivatives) for φ < 3,
/// with 14/24/40 terms for φ below 0.5/1.5/3: below 1e-19 relative, ε
/// included.  Above, with x = φ/2, h = 1 − x cot x, h' = x/sin²x − cot x,
/// h'' = 2h/sin²x:  γ = h/φ², γ' = h'/(2φ²) − 2h/φ³, γ'' = h''/(4φ²) −
/// 2h'/φ³ + 6h/φ⁴ (cancellation at φ = 3: ≤ 4 ulps for δ, ≤ 10 for ε).
/// `order` 0 computes γ only, 1 also δ, 2 also ε.
inline InvCoeffs inverse_coeffs(double phi, int order = 2) {
  InvCoeffs c{0, 0, 0};
  const double t = phi * phi;
  if (phi < 3.0) {
    const int N = phi < 0.5 ? 14 : phi < 1.5 ? 24 : 40;
    double g = 0, d = 0, e = 0;
    for (int i = N - 1; i >= 0; --i) {  // i = n − 1, the power of t
      g = g * t + kInvSeries[i];
      if (order >= 1 && i >= 1) d = d * t + 2 * i * kInvSeries[i];
      if (order >= 2 && i >= 2) e = e * t + 2 * i * (2 * i - 2) * kInvSeries[i];
    }
    c.gamma = g;
    c.delta = d;
    c.eps = e;
  } else {
    const double x = 0.5 * phi, sx = std::sin(x), cx = std::cos(x);
    const double cot = cx / sx, csc2 = 1.0 / (sx * sx);
    const double h = 1.0 - x * cot, h1 = x * csc2 - cot, h2 = 2.0 * h * csc2;
    const double p3 = t * phi, p4 = t * t;
    c.gamma = h / t;
    const double g1 = 0.5 * h1 / t - 2.0 * h / p3;
    const double g2 = 0.25 * h2 / t - 2.0 * h1 / p3 + 6.0 * h / p4;
    c.delta = g1 / phi;
    c.eps = (g2 - c.delta) / t;
  }
  return c;
}

/// exp(ŵ) − I = (sin φ/φ) ŵ + α ŵ² (Rodrigues), with α = ½ sinc(φ/2)²: both
/// coefficients without cancellation for every φ.  The increment alone, so
/// that R exp(ŵ) can be formed as R + R(exp(ŵ) − I).
inline M3 exp_minus_identity(const V3& w) {
  const double phi = w.norm(), h = sinc(0.5 * phi);
  const M3 W = skew(w);
  return sinc(phi) * W + (0.5 * h * h) * (W * W);
}

/// Rodrigues: exp(ŵ) = I + (sin φ/φ) ŵ + α ŵ².
inline M3 exp(const V3& w) { return M3::Identity() + exp_minus_identity(w); }

/// T(w) = I − α ŵ + β ŵ².
inline M3 tangent(const V3& w) {
  const Coeffs c = rotation_coeffs(w.norm());
  const M3 W = skew(w);
  return M3::Identity() - c.alpha * W + c.beta * (W * W);
}

/// T(w)^{-1} = I + ½ŵ + γ ŵ².
inline M3 tangent_inv(const V3& w) {
  const double g = inverse_coeffs(w.norm(), 0).gamma;
  const M3 W = skew(w);
  return M3::Identity() + 0.5 * W + g * (W * W);
}

/// T(w)^{-T} = I − ½ŵ + γ ŵ²  (ŵᵀ = −ŵ).
inline M3 tangent_inv_transpose(const V3& w) {
  const double g = inverse_coeffs(w.norm(), 0).gamma;
  const M3 W = skew(w);
  return M3::Identity() - 0.5 * W + g * (W * W);
}

/// ∂/∂w(ŵ² x) = ∂/∂w[w (w·x) − x |w|²] = w xᵀ + (w·x) I − 2 x wᵀ.
inline M3 d_hat2(const V3& w, const V3& x) {
  return w * x.transpose() + w.dot(x) * M3::Identity() - 2.0 * x * w.transpose();
}

/// ∂/∂w[T(w)^{-T} x] for T^{-T}x = x − ½ w×x + γ ŵ²x:
///   ½ x̂ + δ (ŵ²x) wᵀ + γ ∂(ŵ²x)/∂w.
inline M3 d_tangent_inv_transpose(const V3& w, const V3& x, const InvCoeffs& c) {
  const M3 W = skew(w);
  return 0.5 * skew(x) + c.delta * (W * (W * x)) * w.transpose() + c.gamma * d_hat2(w, x);
}

// ---- unit quaternions p = [p0; p1; p2; p3] (scalar first, Hamilton product) ----

/// p ∗ q = (p0q0 − p·q,  p0 q + q0 p + p × q).
inline V4 quat_mul(const V4& p, const V4& q) {
  V4 r;
  r(0) = p(0) * q(0) - p(1) * q(1) - p(2) * q(2) - p(3) * q(3);
  r(1) = p(0) * q(1) + p(1) * q(0) + p(2) * q(3) - p(3) * q(2);
  r(2) = p(0) * q(2) - p(1) * q(3) + p(2) * q(0) + p(3) * q(1);
  r(3) = p(0) * q(3) + p(1) * q(2) - p(2) * q(1) + p(3) * q(0);
  return r;
}

/// exp of the body angular increment w on S³: [cos(φ/2); sin(φ/2) w/φ],
/// sin(φ/2)/φ = ½ sinc(φ/2).
inline V4 quat_exp(const V3& w) {
  const double phi = w.norm();
  V4 e;
  e(0) = std::cos(0.5 * phi);
  e.tail<3>() = (0.5 * sinc(0.5 * phi)) * w;
  return e;
}

/// w with e = quat_exp(w), |w| < 2π: w = 2 atan2(|v|, e0) v/|v| (atan2 is
/// accurate for small |v|, no series needed; v = 0 gives w = 0).
inline V3 quat_log(const V4& e) {
  const V3 v = e.tail<3>();
  const double s = v.norm();
  if (s == 0.0) return V3::Zero();
  return (2.0 * std::atan2(s, e(0)) / s) * v;
}

/// R(p) = (p0² − |v|²) I + 2 v vᵀ + 2 p0 v̂, so that R(p ∗ q) = R(p) R(q) and
/// R(quat_exp(w)) = exp(ŵ).
inline M3 rotation_matrix(const V4& p) {
  const V3 v = p.tail<3>();
  return (p(0) * p(0) - v.squaredNorm()) * M3::Identity() + 2.0 * v * v.transpose() +
         2.0 * p(0) * skew(v);
}

/// A unit quaternion of R (sign with p0 ≥ 0) by Shepperd's method: the
/// largest of 1 + tr R, 1 + 2R_ii − tr R is taken under the square root, so no
/// component is recovered from a small difference (accurate up to φ = π).
inline V4 quat_from_rotation(const M3& R) {
  const double tr = R.trace();
  V4 p;
  int i = 0;
  double big = tr;
  for (int k = 0; k < 3; ++k)
    if (R(k, k) > big) {
      big = R(k, k);
      i = k + 1;
    }
  if (i == 0) {
    const double r = std::sqrt(1.0 + tr), f = 0.5 / r;
    p << 0.5 * r, (R(2, 1) - R(1, 2)) * f, (R(0, 2) - R(2, 0)) * f, (R(1, 0) - R(0, 1)) * f;
  } else {
    const int a = i - 1, b = (a + 1) % 3, c = (a + 2) % 3;
    const double r = std::sqrt(1.0 + 2.0 * R(a, a) - tr), f = 0.5 / r;
    p(0) = (R(c, b) - R(b, c)) * f;
    p(1 + a) = 0.5 * r;
    p(1 + b) = (R(b, a) + R(a, b)) * f;
    p(1 + c) = (R(c, a) + R(a, c)) * f;
    if (p(0) < 0) p = -p;
  }
  return p;
}

/// The principal logarithm of R (|w| ≤ π): via its quaternion with p0 ≥ 0.
inline V3 log(const M3& R) { return quat_log(quat_from_rotation(R)); }

}  // namespace odepkg::lie::so3

#endif
