// ProductGroup.hpp — the direct product G₁ × … × G_m: coordinates and
// velocities are the factors' concatenated in order, the group operations act
// factor by factor, so ad, T, T^{-T} and ∂[T^{-T}x]/∂w are block diagonal
// (the Lie bracket of a direct product is componentwise).
#ifndef ODEPKG_LIE_PRODUCT_GROUP_HPP
#define ODEPKG_LIE_PRODUCT_GROUP_HPP

#include "lie/LieGroup.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace odepkg::lie {

class ProductGroup final : public LieGroup {
 public:
  explicit ProductGroup(std::vector<std::unique_ptr<LieGroup>> factors) : factors_(std::move(factors)) {
    for (const auto& g : factors_) {
      qoff_.push_back(nq_);
      voff_.push_back(n_);
      nq_ += g->coord_size();
      n_ += g->dim();
    }
  }

  std::string name() const override {
    std::string s;
    for (const auto& g : factors_) s += (s.empty() ? "" : "x") + g->name();
    return s;
  }
  int coord_size() const override { return nq_; }
  int dim() const override { return n_; }
  int factor_count() const { return static_cast<int>(factors_.size()); }
  const LieGroup& factor(int i) const { return *factors_[i]; }
  int coord_offset(int i) const { return qoff_[i]; }  ///< of factor i in q
  int dim_offset(int i) const { return voff_[i]; }    ///< of factor i in v

  void identity(VecRef q) const override {
    for (int i = 0; i < factor_count(); ++i) factors_[i]->identity(qseg(q, i));
  }
  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override {
    for (int i = 0; i < factor_count(); ++i) factors_[i]->compose_exp(qseg(q, i), vseg(w, i), qseg(out, i));
  }
  void log_between(const ConstVecRef& q0, const ConstVecRef& q1, VecRef w) const override {
    for (int i = 0; i < factor_count(); ++i) factors_[i]->log_between(qseg(q0, i), qseg(q1, i), vseg(w, i));
  }
  void ad(const ConstVecRef& v, MatRef A) const override {
    A.setZero();
    for (int i = 0; i < factor_count(); ++i) factors_[i]->ad(vseg(v, i), block(A, i));
  }
  void tangent(const ConstVecRef& w, MatRef T) const override {
    T.setZero();
    for (int i = 0; i < factor_count(); ++i) factors_[i]->tangent(vseg(w, i), block(T, i));
  }
  void tangent_inv_transpose(const ConstVecRef& w, MatRef Tit) const override {
    Tit.setZero();
    for (int i = 0; i < factor_count(); ++i) factors_[i]->tangent_inv_transpose(vseg(w, i), block(Tit, i));
  }
  void d_tangent_inv_transpose(const ConstVecRef& w, const ConstVecRef& x, MatRef D) const override {
    D.setZero();
    for (int i = 0; i < factor_count(); ++i)
      factors_[i]->d_tangent_inv_transpose(vseg(w, i), vseg(x, i), block(D, i));
  }
  /// The largest defect of the factors.
  double structure_defect(const ConstVecRef& q) const override {
    double d = 0;
    for (int i = 0; i < factor_count(); ++i) d = std::max(d, factors_[i]->structure_defect(qseg(q, i)));
    return d;
  }

 private:
  // Segments and blocks of Refs are Refs again: no copy, no allocation.
  ConstVecRef qseg(const ConstVecRef& q, int i) const { return q.segment(qoff_[i], factors_[i]->coord_size()); }
  VecRef qseg(VecRef& q, int i) const { return q.segment(qoff_[i], factors_[i]->coord_size()); }
  ConstVecRef vseg(const ConstVecRef& v, int i) const { return v.segment(voff_[i], factors_[i]->dim()); }
  VecRef vseg(VecRef& v, int i) const { return v.segment(voff_[i], factors_[i]->dim()); }
  MatRef block(MatRef& A, int i) const {
    const int n = factors_[i]->dim();
    return A.block(voff_[i], voff_[i], n, n);
  }

  std::vector<std::unique_ptr<LieGroup>> factors_;
  std::vector<int> qoff_, voff_;
  int nq_ = 0, n_ = 0;
};

}  // namespace odepkg::lie

#endif
