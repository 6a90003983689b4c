// LieGroup.hpp — the configuration space of odeRATTLie (Hante's RATTLie): a Lie group
// G of dimension n whose elements are stored in nq coordinates.
//
// Conventions (fixed here; every group, built-in or user-defined, follows them):
//   tilde : R^n -> g            the Lie algebra,  v ↦ ṽ
//   compose_exp(q, w) = q ∘ exp(w̃)                      (RATTLie: "qlpexpDqtilde")
//   ad(v) = v̂ (n x n),  v̂ w = [ṽ, w̃]^∨                   (RATTLie: the hat operator)
//   T(w): d/dε exp(w̃ + ε δw̃)|₀ = exp(w̃) ∘ (T(w) δw)~, the left-trivialised
//         differential of exp,  T(w) = Σ_k (−ad w)^k / (k+1)! = I − ½ŵ + ⅙ŵ² − …
//   tangent_inv_transpose(w) = T(w)^{-T};  d_tangent_inv_transpose(w, x) =
//         ∂/∂w [T(w)^{-T} x]  (n x n).
// The inertial term of the equations of motion  M v̇ = v̂ᵀ M v − f − Bᵀλ  is
// ad(v)ᵀ M v (free rigid body on SO(3): J Ω̇ = JΩ × Ω).
//
// Implementations must be accurate for small |w| (series near 0, no 0/0) and
// must not allocate in compose_exp, tangent, tangent_inv_transpose, ad: the
// stepper calls them in every Newton iteration.
#ifndef ODEPKG_LIE_LIE_GROUP_HPP
#define ODEPKG_LIE_LIE_GROUP_HPP

#include "../Types.hpp"

#include <algorithm>
#include <string>

namespace odepkg::lie {

class LieGroup {
 public:
  virtual ~LieGroup() = default;

  virtual std::string name() const = 0;
  virtual int coord_size() const = 0;  ///< nq, numbers stored per element
  virtual int dim() const = 0;         ///< n, dimension of G (and of v)

  /// The identity element e.
  virtual void identity(VecRef q) const = 0;
  /// out = q ∘ exp(w̃).  `out` may not alias `q`.
  virtual void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const = 0;
  /// w with q1 = q0 ∘ exp(w̃), the principal branch (|w| < π for rotations).
  virtual void log_between(const ConstVecRef& q0, const ConstVecRef& q1, VecRef w) const = 0;
  /// A = ad(v) = v̂.
  virtual void ad(const ConstVecRef& v, MatRef A) const = 0;
  /// T = T(w).
  virtual void tangent(const ConstVecRef& w, MatRef T) const = 0;
  /// Tit = T(w)^{-T}.
  virtual void tangent_inv_transpose(const ConstVecRef& w, MatRef Tit) const = 0;
  /// D = ∂/∂w [T(w)^{-T} x].  Default: central differences of
  /// tangent_inv_transpose (error O(δ²) ≈ 1e-11 relative; used only in Newton
  /// matrices, where it changes the contraction rate, not the solution).
  virtual void d_tangent_inv_transpose(const ConstVecRef& w, const ConstVecRef& x, MatRef D) const;
  /// Distance of q from the group in its coordinates (|p|−1 for a unit
  /// quaternion, ‖RᵀR − I‖ for a rotation matrix, 0 for Rⁿ): for tests and
  /// for checking a user's initial data.
  virtual double structure_defect(const ConstVecRef& q) const = 0;
};

/// Central differences, column j: [Tit(w + h e_j) − Tit(w − h e_j)] x / (2h),
/// h = 1e-5·max(1, |w|), dividing by the step actually taken (w_j + h) − (w_j − h)
/// (truncation O(h²) and round-off O(ε/h) both ≈ 1e-10 relative).  Allocates
/// its scratch: the built-in groups override it with closed forms.
inline void LieGroup::d_tangent_inv_transpose(const ConstVecRef& w, const ConstVecRef& x, MatRef D) const {
  const int n = dim();
  const double h0 = 1e-5 * std::max(1.0, w.norm());
  Vec wp = w, wm = w;
  Mat Tp(n, n), Tm(n, n);
  for (int j = 0; j < n; ++j) {
    wp(j) = w(j) + h0;
    wm(j) = w(j) - h0;
    tangent_inv_transpose(wp, Tp);
    tangent_inv_transpose(wm, Tm);
    D.col(j).noalias() = (Tp - Tm) * x / (wp(j) - wm(j));
    wp(j) = wm(j) = w(j);
  }
}

}  // namespace odepkg::lie

#endif
