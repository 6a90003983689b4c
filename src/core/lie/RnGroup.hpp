// RnGroup.hpp — the additive group Rⁿ: q and v live in the same space,
// q ∘ exp(w̃) = q + w, the algebra is abelian (ad = 0), so T(w) = I.
#ifndef ODEPKG_LIE_RN_GROUP_HPP
#define ODEPKG_LIE_RN_GROUP_HPP

#include "lie/LieGroup.hpp"

#include <string>

namespace odepkg::lie {

class RnGroup final : public LieGroup {
 public:
  explicit RnGroup(int n) : n_(n) {}

  std::string name() const override { return "R" + std::to_string(n_); }
  int coord_size() const override { return n_; }
  int dim() const override { return n_; }

  void identity(VecRef q) const override { q.setZero(); }
  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override { out = q + w; }
  void log_between(const ConstVecRef& q0, const ConstVecRef& q1, VecRef w) const override { w = q1 - q0; }
  void ad(const ConstVecRef&, MatRef A) const override { A.setZero(); }
  void tangent(const ConstVecRef&, MatRef T) const override { T.setIdentity(); }
  void tangent_inv_transpose(const ConstVecRef&, MatRef Tit) const override { Tit.setIdentity(); }
  void d_tangent_inv_transpose(const ConstVecRef&, const ConstVecRef&, MatRef D) const override { D.setZero(); }
  double structure_defect(const ConstVecRef&) const override { return 0.0; }

 private:
  int n_;
};

}  // namespace odepkg::lie

#endif
