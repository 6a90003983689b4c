// ImplicitMidpointMap.hpp — phi_h of the implicit midpoint rule,
//   z_1 = y + h f(t + h/2, (y + z_1)/2),
// symplectic, symmetric, order 2, for any H (McLachlan et al. 2014, Sect. 5.3-5.4).
// Unknowns w = z_1.
#ifndef ODEPKG_CONSTRAINED_IMPLICIT_MIDPOINT_MAP_HPP
#define ODEPKG_CONSTRAINED_IMPLICIT_MIDPOINT_MAP_HPP

#include "constrained/BaseMethod.hpp"

namespace odepkg {

class ImplicitMidpointMap final : public BaseMethod {
 public:
  explicit ImplicitMidpointMap(HamiltonianProblem& problem)
      : BaseMethod(problem, 2 * problem.dim()), mid_(2 * problem.dim()), f_(2 * problem.dim()) {}

  const char* name() const override { return "midpoint"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }

  void anchor(const ConstVecRef& y, VecRef a) const override { a = y; }
  void guess(const ConstVecRef& y, const ConstVecRef& fy, VecRef w) const override { w = y + h_ * fy; }

  bool residual(const ConstVecRef& y, const ConstVecRef& w, VecRef R, VecRef z1) override {
    mid_ = 0.5 * (y + w);
    if (!problem_.field(t_ + 0.5 * h_, mid_, f_)) return false;
    R = w - y - h_ * f_;
    z1 = w;
    return true;
  }

  void jacobian(MatRef Rw, MatRef Ry, MatRef Zw, MatRef Zy) const override {
    Rw = -(0.5 * h_) * Df_;
    Rw.diagonal().array() += 1.0;
    Ry = -(0.5 * h_) * Df_;
    Ry.diagonal().array() -= 1.0;
    Zw.setIdentity();
    Zy.setZero();
  }

  /// Rw = I - h/2 Df, Ry = -I - h/2 Df, Zw = I, Zy = 0 with
  /// Df = [Hess(p-rows); -Hess(q-rows)], entry by entry.
  bool sparse_jacobian(const SpMat& hess, SpMat& Rw, SpMat& Ry, SpMat& Zw, SpMat& Zy) override {
    const int n = 2 * d_;
    const double hh = 0.5 * h_;
    for (int k = 0; k < n; ++k) {
      tRw_.emplace_back(k, k, 1.0);
      tRy_.emplace_back(k, k, -1.0);
      tZw_.emplace_back(k, k, 1.0);
    }
    for (int j = 0; j < hess.outerSize(); ++j)
      for (SpMat::InnerIterator it(hess, j); it; ++it) {
        const int i = static_cast<int>(it.row());
        const int r = i < d_ ? i + d_ : i - d_;  // the row of Df
        const double df = i < d_ ? -it.value() : it.value();
        tRw_.emplace_back(r, j, -hh * df);
        tRy_.emplace_back(r, j, -hh * df);
      }
    assemble(tRw_, aRw_, n, n, Rw);
    assemble(tRy_, aRy_, n, n, Ry);
    assemble(tZw_, aZw_, n, n, Zw);
    Zy.resize(n, n);
    Zy.setZero();
    return true;
  }

 private:
  Vec mid_, f_;
};

}  // namespace odepkg

#endif
