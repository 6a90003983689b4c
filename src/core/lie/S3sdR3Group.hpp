// S3sdR3Group.hpp — the semidirect product S³ ⋉ R³, q = [p; x] (unit
// quaternion, scalar first, then position: 7 numbers), product
// (p1,x1)(p2,x2) = (p1 ∗ p2, x1 + R(p1)x2).  It double-covers SE(3), so the
// algebra, ad, T, T^{-T} and the derivative are SE(3)'s (SE3Group.hpp), and
//   (p, x)∘exp(Ω, U) = (p ∗ exp_S³(Ω), x + R(p) V(Ω) U),  V = T_SO3(Ω)ᵀ.
// (Brüls–Cardona–Arnold, Mech. Mach. Theory 48 (2012); Hante–Arnold, RATTLie.)
#ifndef ODEPKG_LIE_S3SDR3_GROUP_HPP
#define ODEPKG_LIE_S3SDR3_GROUP_HPP

#include "lie/LieGroup.hpp"
#include "lie/S3Group.hpp"
#include "lie/SE3Group.hpp"

#include <cmath>
#include <string>

namespace odepkg::lie {

class S3sdR3Group final : public LieGroup {
 public:
  std::string name() const override { return "S3sdR3"; }
  int coord_size() const override { return 7; }
  int dim() const override { return 6; }

  void identity(VecRef q) const override {
    q.setZero();
    q(0) = 1;
  }

  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override {
    const so3::V4 p = q.head<4>();
    const so3::V3 Om = w.head<3>(), U = w.tail<3>();
    out.head<4>() = p + so3::quat_mul(p, quat_exp_minus_one(Om));
    out.tail<3>() = q.tail<3>() + so3::rotation_matrix(p) * se3::translation_of_exp(Om, U);
  }

  /// Ω = log_S³(p0⁻¹ ∗ p1) (exact on S³, |Ω| < 2π, see S3Group),
  /// U = T_SO3(Ω)^{-T} R(p0)ᵀ(x1 − x0).
  void log_between(const ConstVecRef& q0, const ConstVecRef& q1, VecRef w) const override {
    so3::V4 p0inv = q0.head<4>();
    p0inv.tail<3>() = -p0inv.tail<3>();
    const so3::V3 Om = so3::quat_log(so3::quat_mul(p0inv, q1.head<4>()));
    const so3::V3 dx = so3::rotation_matrix(q0.head<4>()).transpose() * (q1.tail<3>() - q0.tail<3>());
    w.head<3>() = Om;
    w.tail<3>() = so3::tangent_inv_transpose(Om) * dx;
  }

  void ad(const ConstVecRef& v, MatRef A) const override { se3::ad(v, A); }
  void tangent(const ConstVecRef& w, MatRef T) const override { se3::tangent(w, T); }
  void tangent_inv_transpose(const ConstVecRef& w, MatRef Tit) const override {
    se3::tangent_inv_transpose(w, Tit);
  }
  void d_tangent_inv_transpose(const ConstVecRef& w, const ConstVecRef& x, MatRef D) const override {
    se3::d_tangent_inv_transpose(w, x, D);
  }

  /// | |p| − 1 |.
  double structure_defect(const ConstVecRef& q) const override { return std::abs(q.head<4>().norm() - 1.0); }
};

}  // namespace odepkg::lie

#endif
