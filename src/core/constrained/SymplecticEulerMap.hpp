// SymplecticEulerMap.hpp — phi_h of symplectic Euler with p implicit,
//   p_1 = p_0 - h H_q(q_0, p_1),  q_1 = q_0 + h H_p(q_0, p_1),
// order 1, not symmetric (HLW §VI.3; McLachlan et al. 2014, Sect. 5.1.3: SHAKE/RATTLE
// over it are the first-order methods of HLW §VII.1.3).  Unknowns w = p_1.
#ifndef ODEPKG_CONSTRAINED_SYMPLECTIC_EULER_MAP_HPP
#define ODEPKG_CONSTRAINED_SYMPLECTIC_EULER_MAP_HPP

#include "constrained/BaseMethod.hpp"

namespace odepkg {

class SymplecticEulerMap final : public BaseMethod {
 public:
  explicit SymplecticEulerMap(HamiltonianProblem& problem)
      : BaseMethod(problem, problem.dim()), x_(2 * problem.dim()), f_(2 * problem.dim()) {}

  const char* name() const override { return "symplectic_euler"; }
  int order() const override { return 1; }
  bool symmetric() const override { return false; }

  void anchor(const ConstVecRef& y, VecRef a) const override { a = y.tail(d_); }
  void guess(const ConstVecRef& y, const ConstVecRef& fy, VecRef w) const override {
    w = y.tail(d_) + h_ * fy.tail(d_);
  }

  bool residual(const ConstVecRef& y, const ConstVecRef& w, VecRef R, VecRef z1) override {
    x_.head(d_) = y.head(d_);
    x_.tail(d_) = w;
    if (!problem_.field(t_, x_, f_)) return false;
    R = w - y.tail(d_) - h_ * f_.tail(d_);
    z1.head(d_) = y.head(d_) + h_ * f_.head(d_);
    z1.tail(d_) = w;
    return true;
  }

  void jacobian(MatRef Rw, MatRef Ry, MatRef Zw, MatRef Zy) const override {
    const int d = d_;
    Rw = -h_ * Dpp();
    Rw.diagonal().array() += 1.0;
    Ry.leftCols(d) = -h_ * Dpq();
    Ry.rightCols(d).setZero();
    Ry.rightCols(d).diagonal().array() = -1.0;
    Zw.topRows(d) = h_ * Dqp();
    Zw.bottomRows(d).setIdentity();
    Zy.setZero();
    Zy.topLeftCorner(d, d) = h_ * Dqq();
    Zy.topLeftCorner(d, d).diagonal().array() += 1.0;
  }

 private:
  Vec x_, f_;
};

}  // namespace odepkg

#endif
