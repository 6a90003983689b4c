// S3Group.hpp — unit quaternions S³ ⊂ R⁴, p = [p0; p1; p2; p3] (scalar first),
// the double cover of SO(3) with the same Lie algebra: v = body angular
// velocity Ω, R(p ∘ exp(w̃)) = R(p) exp(ŵ).  Hence ad, T, T^{-T} and the
// derivative are those of SO(3) (SO3Util.hpp).
//   compose_exp(p, w) = p ∗ [cos(φ/2); sin(φ/2) w/φ],  φ = |w|
// formed as p + p ∗ (e − 1) with e0 − 1 = −2 sin²(φ/4): the increment carries
// O(ε|w|) rounding, the final sum O(ε), so |p| drifts only at round-off.
#ifndef ODEPKG_LIE_S3_GROUP_HPP
#define ODEPKG_LIE_S3_GROUP_HPP

#include "lie/LieGroup.hpp"
#include "lie/SO3Util.hpp"

#include <cmath>
#include <string>

namespace odepkg::lie {

/// R(p) for a quaternion p (scalar first): R(p ∗ q) = R(p)R(q).
inline Eigen::Matrix3d rotation_matrix(const Eigen::Vector4d& p) { return so3::rotation_matrix(p); }

/// exp(w̃) − 1 on S³ (1 the identity quaternion), without cancellation.
inline so3::V4 quat_exp_minus_one(const so3::V3& w) {
  const double phi = w.norm(), s4 = std::sin(0.25 * phi);
  so3::V4 e;
  e(0) = -2.0 * s4 * s4;
  e.tail<3>() = (0.5 * so3::sinc(0.5 * phi)) * w;
  return e;
}

class S3Group final : public LieGroup {
 public:
  std::string name() const override { return "S3"; }
  int coord_size() const override { return 4; }
  int dim() const override { return 3; }

  void identity(VecRef q) const override { q << 1, 0, 0, 0; }

  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override {
    const so3::V4 p = q;
    out = p + so3::quat_mul(p, quat_exp_minus_one(w));
  }

  /// The exact inverse on S³: w = log(p0⁻¹ ∗ p1) with |w| < 2π, so that
  /// compose_exp(p0, w) = p1 (not only ±p1); |w| < π whenever p0·p1 > 0, i.e.
  /// for p1 within a quarter turn of the sphere, as along a trajectory.
  void log_between(const ConstVecRef& q0, const ConstVecRef& q1, VecRef w) const override {
    so3::V4 p0inv = q0;
    p0inv.tail<3>() = -p0inv.tail<3>();
    w = so3::quat_log(so3::quat_mul(p0inv, q1));
  }

  void ad(const ConstVecRef& v, MatRef A) const override { A = so3::skew(v); }
  void tangent(const ConstVecRef& w, MatRef T) const override { T = so3::tangent(w); }
  void tangent_inv_transpose(const ConstVecRef& w, MatRef Tit) const override {
    Tit = so3::tangent_inv_transpose(w);
  }
  void d_tangent_inv_transpose(const ConstVecRef& w, const ConstVecRef& x, MatRef D) const override {
    const so3::V3 w3 = w;
    D = so3::d_tangent_inv_transpose(w3, x, so3::inverse_coeffs(w3.norm(), 1));
  }

  /// | |p| − 1 |.
  double structure_defect(const ConstVecRef& q) const override { return std::abs(q.norm() - 1.0); }
};

}  // namespace odepkg::lie

#endif
