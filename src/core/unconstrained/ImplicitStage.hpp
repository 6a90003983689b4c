// ImplicitStage.hpp — solves one implicit stage of the form
//     y = a + c * phi(y),      Jacobian  I - c * dphi/dy,
// as met in implicit symplectic Euler and Störmer–Verlet (HLW, (VI.3.4)).
// The expensive part dphi/dy (user Hessian or finite differences) is cached
// and only rescaled when c = h or h/2 changes, so step doubling does not force
// new user evaluations of the Jacobian.
#ifndef ODEPKG_IMPLICIT_STAGE_HPP
#define ODEPKG_IMPLICIT_STAGE_HPP

#include "NewtonSolver.hpp"

#include <cmath>

namespace odepkg {

class ImplicitStage {
 public:
  ImplicitStage(int n, Stats* stats, NewtonSolver::Options opts = NewtonSolver::Options())
      : newton_(n, stats, opts), B_(n, n), jac_(n, n) {}

  NewtonSolver& newton() { return newton_; }
  void reset() {
    newton_.invalidate();
    have_B_ = false;
  }

  /// phi(y, out) -> bool evaluates phi; dphi(y, B) -> bool its Jacobian.
  template <class Phi, class DPhi>
  StepStatus solve(const ConstVecRef& a, double c, Phi&& phi, DPhi&& dphi, VecRef y,
                   VecRef phi_y) {
    // Rescale the cached Jacobian only when c really changed (fixed steps
    // differ in the last bits: t_0 + k h - t_k).
    if (std::abs(c - c_) > 1e-10 * std::abs(c)) {
      if (have_B_) {
        jac_.setIdentity();
        jac_ -= c * B_;
        newton_.set_jacobian(jac_);
      } else {
        newton_.invalidate();
      }
      c_ = c;
    }
    auto residual = [&](const ConstVecRef& yy, VecRef r) {
      if (!phi(yy, phi_y)) return false;
      r = yy - a - c * phi_y;
      return true;
    };
    auto jacobian = [&](const ConstVecRef& yy, MatRef J) {
      if (!dphi(yy, B_)) return false;
      have_B_ = true;
      J.setIdentity();
      J -= c * B_;
      return true;
    };
    return newton_.solve(residual, jacobian, y);
  }

 private:
  NewtonSolver newton_;
  Mat B_, jac_;
  bool have_B_ = false;
  double c_ = 0.0;
};

}  // namespace odepkg

#endif
