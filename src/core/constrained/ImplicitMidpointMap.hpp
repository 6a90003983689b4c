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

 private:
  Vec mid_, f_;
};

}  // namespace odepkg

#endif
