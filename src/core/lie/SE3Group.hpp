// SE3Group.hpp — the special Euclidean group SE(3), q = [R(:); x] (rotation
// column-major, then position: 12 numbers), product (R1,x1)(R2,x2) =
// (R1R2, x1 + R1x2), v = (Ω, U): body angular and body translational velocity.
// ṽ = [Ω̂ U; 0 0] (4x4), so (Murray–Li–Sastry, "A Mathematical Introduction to
// Robotic Manipulation", §2.3; Sonneville–Cardona–Brüls, CMAME 268 (2014)):
//   exp(Ω, U) = (exp Ω̂, V U),  V = Σ Ω̂^k/(k+1)! = I + α Ω̂ + β Ω̂² = T_SO3(Ω)ᵀ
//   ad(Ω, U)  = [Ω̂ 0; Û Ω̂]
// ad w is block lower triangular with equal diagonal blocks A = −Ω̂, so for
// any power series f:  f([A 0; B A]) = [f(A) 0; Df(A)[B] f(A)]  (the off-
// diagonal block of X^k is Σ_j A^j B A^{k−1−j}).  With B = −Û this gives
//   T(w)      = [T_SO3(Ω) 0; C T_SO3(Ω)],       C  = ∂_Ω T_SO3(Ω)[U]
//   T(w)^{-1} = [T_SO3^{-1}(Ω) 0; Ci T_SO3^{-1}(Ω)], Ci = ∂_Ω T_SO3^{-1}(Ω)[U]
// in closed form, with the small-φ series of SO3Util.hpp (no 0/0 at w = 0).
// These helpers (namespace se3) are shared by S3sdR3Group, whose algebra is
// the same.
#ifndef ODEPKG_LIE_SE3_GROUP_HPP
#define ODEPKG_LIE_SE3_GROUP_HPP

#include "lie/LieGroup.hpp"
#include "lie/SO3Util.hpp"

#include <string>

namespace odepkg::lie {

namespace se3 {

using so3::M3;
using so3::V3;

/// ad(Ω, U) = [Ω̂ 0; Û Ω̂]:  [ṽ, w̃]^∨ = (Ω₁×Ω₂, Ω₁×U₂ + U₁×Ω₂).
inline void ad(const ConstVecRef& v, MatRef A) {
  const M3 W = so3::skew(v.head<3>()), Uh = so3::skew(v.tail<3>());
  A.setZero();
  A.topLeftCorner<3, 3>() = W;
  A.bottomRightCorner<3, 3>() = W;
  A.bottomLeftCorner<3, 3>() = Uh;
}

/// T(w) = [T_SO3 0; C T_SO3] with T_SO3 = I − αΩ̂ + βΩ̂² and
/// C = ∂_Ω T_SO3[U] = −(α'/φ)(Ω·U)Ω̂ − αÛ + (β'/φ)(Ω·U)Ω̂² + β(ÛΩ̂ + Ω̂Û).
inline void tangent(const ConstVecRef& w, MatRef T) {
  const V3 Om = w.head<3>(), U = w.tail<3>();
  const so3::Coeffs c = so3::rotation_coeffs(Om.norm());
  const M3 W = so3::skew(Om), Uh = so3::skew(U), W2 = W * W;
  const double ou = Om.dot(U);
  const M3 Ts = M3::Identity() - c.alpha * W + c.beta * W2;
  T.setZero();
  T.topLeftCorner<3, 3>() = Ts;
  T.bottomRightCorner<3, 3>() = Ts;
  T.bottomLeftCorner<3, 3>() =
      -(c.alpha_d * ou) * W - c.alpha * Uh + (c.beta_d * ou) * W2 + c.beta * (Uh * W + W * Uh);
}

/// T(w)^{-T} = [T_SO3^{-T}  Ciᵀ; 0  T_SO3^{-T}], T_SO3^{-1} = I + ½Ω̂ + γΩ̂²,
/// Ci = ½Û + δ(Ω·U)Ω̂² + γ(ÛΩ̂ + Ω̂Û),  δ = γ'/φ.
inline void tangent_inv_transpose(const ConstVecRef& w, MatRef Tit) {
  const V3 Om = w.head<3>(), U = w.tail<3>();
  const so3::InvCoeffs c = so3::inverse_coeffs(Om.norm(), 1);
  const M3 W = so3::skew(Om), Uh = so3::skew(U), W2 = W * W;
  const M3 Tsit = M3::Identity() - 0.5 * W + c.gamma * W2;
  const M3 Ci = 0.5 * Uh + (c.delta * Om.dot(U)) * W2 + c.gamma * (Uh * W + W * Uh);
  Tit.setZero();
  Tit.topLeftCorner<3, 3>() = Tsit;
  Tit.bottomRightCorner<3, 3>() = Tsit;
  Tit.topRightCorner<3, 3>() = Ci.transpose();
}

/// ∂/∂w[T(w)^{-T} x], x = (a, b).  With F(Ω)c = T_SO3^{-T}(Ω)c and its
/// derivative D(Ω, c) (SO3Util.hpp), T^{-T}x = (F a + Ciᵀ b, F b) and
/// Ciᵀ b = D(Ω, b) U, hence
///   ∂/∂(Ω, U) = [D(Ω,a) + H   D(Ω,b);  D(Ω,b)   0],  H = ∂_Ω[D(Ω,b) U],
/// D(Ω,b)U = ½ b×U + δ(Ω·U)Ω̂²b + γ(Ω(b·U) + (Ω·b)U − 2b(Ω·U)), so with
/// M = ∂(Ω̂²b)/∂Ω and ε = δ'/φ:
///   H = ε(Ω·U)(Ω̂²b)Ωᵀ + δ(Ω̂²b)Uᵀ + δ(Ω·U)M
///       + δ(Ω(b·U) + (Ω·b)U − 2b(Ω·U))Ωᵀ + γ((b·U)I + Ubᵀ − 2bUᵀ).
inline void d_tangent_inv_transpose(const ConstVecRef& w, const ConstVecRef& x, MatRef D) {
  const V3 Om = w.head<3>(), U = w.tail<3>(), a = x.head<3>(), b = x.tail<3>();
  const so3::InvCoeffs c = so3::inverse_coeffs(Om.norm());
  const M3 Db = so3::d_tangent_inv_transpose(Om, b, c);
  const M3 W = so3::skew(Om);
  const V3 W2b = W * (W * b);
  const double ou = Om.dot(U), bu = b.dot(U), ob = Om.dot(b);
  const V3 g = Om * bu + ob * U - 2.0 * ou * b;
  const M3 H = (c.eps * ou) * W2b * Om.transpose() + c.delta * W2b * U.transpose() +
               (c.delta * ou) * so3::d_hat2(Om, b) + c.delta * g * Om.transpose() +
               c.gamma * (bu * M3::Identity() + U * b.transpose() - 2.0 * b * U.transpose());
  D.setZero();
  D.topLeftCorner<3, 3>() = so3::d_tangent_inv_transpose(Om, a, c) + H;
  D.topRightCorner<3, 3>() = Db;
  D.bottomLeftCorner<3, 3>() = Db;
}

/// V U = T_SO3(Ω)ᵀ U = U + α Ω×U + β Ω×(Ω×U): the translation of exp(Ω, U).
inline V3 translation_of_exp(const V3& Om, const V3& U) {
  const so3::Coeffs c = so3::rotation_coeffs(Om.norm(), false);
  const V3 oU = Om.cross(U);
  return U + c.alpha * oU + c.beta * Om.cross(oU);
}

}  // namespace se3

class SE3Group final : public LieGroup {
 public:
  std::string name() const override { return "SE3"; }
  int coord_size() const override { return 12; }
  int dim() const override { return 6; }

  void identity(VecRef q) const override {
    q.setZero();
    Eigen::Map<so3::M3>(q.data()).setIdentity();
  }

  /// (R, x)∘exp(Ω, U) = (R exp Ω̂, x + R V U); R exp Ω̂ formed as R + R(exp Ω̂ − I).
  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override {
    const Eigen::Map<const so3::M3> R(q.data());
    const so3::V3 Om = w.head<3>(), U = w.tail<3>();
    Eigen::Map<so3::M3>(out.data()) = R + R * so3::exp_minus_identity(Om);
    out.tail<3>() = q.tail<3>() + R * se3::translation_of_exp(Om, U);
  }

  /// Ω = log(R0ᵀR1), U = V(Ω)^{-1} R0ᵀ(x1 − x0) = T_SO3(Ω)^{-T} R0ᵀ(x1 − x0).
  void log_between(const ConstVecRef& q0, const ConstVecRef& q1, VecRef w) const override {
    const Eigen::Map<const so3::M3> R0(q0.data()), R1(q1.data());
    const so3::V3 Om = so3::log(R0.transpose() * R1);
    const so3::V3 dx = R0.transpose() * (q1.tail<3>() - q0.tail<3>());
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

  /// ‖RᵀR − I‖_F (the position is unconstrained).
  double structure_defect(const ConstVecRef& q) const override {
    const Eigen::Map<const so3::M3> R(q.data());
    return (R.transpose() * R - so3::M3::Identity()).norm();
  }
};

}  // namespace odepkg::lie

#endif
