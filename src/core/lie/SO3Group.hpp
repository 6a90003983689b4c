// SO3Group.hpp — the rotation group SO(3), q = R stored column-major (9
// numbers), v = body angular velocity Ω ∈ R³ (so(3) ≅ R³ by the hat map).
//   compose_exp(R, w) = R exp(ŵ)         (Rodrigues, SO3Util.hpp)
//   ad(v) = v̂                            ([ṽ, w̃] = (v × w)^, GNI §IV.8)
//   T(w), T(w)^{-T} and ∂[T^{-T}x]/∂w    in closed form (SO3Util.hpp)
// The product R·exp(ŵ) is formed as R + R(exp(ŵ) − I): the increment is
// O(|w|), so its rounding is O(ε|w|) and only the final sum rounds at O(ε).
#ifndef ODEPKG_LIE_SO3_GROUP_HPP
#define ODEPKG_LIE_SO3_GROUP_HPP

#include "lie/LieGroup.hpp"
#include "lie/SO3Util.hpp"

#include <string>

namespace odepkg::lie {

class SO3Group final : public LieGroup {
 public:
  std::string name() const override { return "SO3"; }
  int coord_size() const override { return 9; }
  int dim() const override { return 3; }

  void identity(VecRef q) const override { Eigen::Map<so3::M3>(q.data()).setIdentity(); }

  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override {
    const Eigen::Map<const so3::M3> R(q.data());
    const so3::V3 w3 = w;
    Eigen::Map<so3::M3>(out.data()) = R + R * so3::exp_minus_identity(w3);
  }

  void log_between(const ConstVecRef& q0, const ConstVecRef& q1, VecRef w) const override {
    const Eigen::Map<const so3::M3> R0(q0.data()), R1(q1.data());
    w = so3::log(R0.transpose() * R1);
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

  /// ‖RᵀR − I‖_F.
  double structure_defect(const ConstVecRef& q) const override {
    const Eigen::Map<const so3::M3> R(q.data());
    return (R.transpose() * R - so3::M3::Identity()).norm();
  }
};

}  // namespace odepkg::lie

#endif
