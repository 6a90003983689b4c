// StormerVerletMap.hpp — phi_h of the Störmer–Verlet method for general H,
//   p_{1/2} = p_0 - h/2 H_q(q_0, p_{1/2})
//   q_1     = q_0 + h/2 (H_p(q_0, p_{1/2}) + H_p(q_1, p_{1/2}))
//   p_1     = p_{1/2} - h/2 H_q(q_1, p_{1/2}),
// symplectic, symmetric, order 2 (HLW §VI.3).  Over holonomic fibres the
// geometric RATTLE over it is the classical RATTLE (McLachlan et al. 2014, Sect. 5.1.3).
// Unknowns w = (p_{1/2}, q_1).
#ifndef ODEPKG_CONSTRAINED_STORMER_VERLET_MAP_HPP
#define ODEPKG_CONSTRAINED_STORMER_VERLET_MAP_HPP

#include "constrained/BaseMethod.hpp"

namespace odepkg {

class StormerVerletMap final : public BaseMethod {
 public:
  explicit StormerVerletMap(HamiltonianProblem& problem)
      : BaseMethod(problem, 2 * problem.dim()), xa_(2 * problem.dim()), xb_(2 * problem.dim()),
        fa_(2 * problem.dim()), fb_(2 * problem.dim()) {}

  const char* name() const override { return "stormer_verlet"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }

  void anchor(const ConstVecRef& y, VecRef a) const override {
    a.head(d_) = y.tail(d_);
    a.tail(d_) = y.head(d_);
  }
  void guess(const ConstVecRef& y, const ConstVecRef& fy, VecRef w) const override {
    w.head(d_) = y.tail(d_) + (0.5 * h_) * fy.tail(d_);
    w.tail(d_) = y.head(d_) + h_ * fy.head(d_);
  }

  bool residual(const ConstVecRef& y, const ConstVecRef& w, VecRef R, VecRef z1) override {
    const int d = d_;
    const auto ph = w.head(d);
    const auto q1 = w.tail(d);
    xa_.head(d) = y.head(d);
    xa_.tail(d) = ph;
    xb_.head(d) = q1;
    xb_.tail(d) = ph;
    if (!problem_.field(t_, xa_, fa_) || !problem_.field(t_ + h_, xb_, fb_)) return false;
    R.head(d) = ph - y.tail(d) - (0.5 * h_) * fa_.tail(d);
    R.tail(d) = q1 - y.head(d) - (0.5 * h_) * (fa_.head(d) + fb_.head(d));
    z1.head(d) = q1;
    z1.tail(d) = ph + (0.5 * h_) * fb_.tail(d);
    return true;
  }

  void jacobian(MatRef Rw, MatRef Ry, MatRef Zw, MatRef Zy) const override {
    const int d = d_;
    const double h = h_;
    // rows: R_1 (p_{1/2}), R_2 (q_1); columns of w: p_{1/2}, q_1; of y: q_0, p_0
    Rw.topLeftCorner(d, d) = -(0.5 * h) * Dpp();
    Rw.topLeftCorner(d, d).diagonal().array() += 1.0;
    Rw.topRightCorner(d, d).setZero();
    Rw.bottomLeftCorner(d, d) = -h * Dqp();
    Rw.bottomRightCorner(d, d) = -(0.5 * h) * Dqq();
    Rw.bottomRightCorner(d, d).diagonal().array() += 1.0;
    Ry.topLeftCorner(d, d) = -(0.5 * h) * Dpq();
    Ry.topRightCorner(d, d).setZero();
    Ry.topRightCorner(d, d).diagonal().array() = -1.0;
    Ry.bottomLeftCorner(d, d) = -(0.5 * h) * Dqq();
    Ry.bottomLeftCorner(d, d).diagonal().array() -= 1.0;
    Ry.bottomRightCorner(d, d).setZero();
    // z_1 = (q_1, p_{1/2} + h/2 f_p(q_1, p_{1/2}))
    Zw.topLeftCorner(d, d).setZero();
    Zw.topRightCorner(d, d).setIdentity();
    Zw.bottomLeftCorner(d, d) = (0.5 * h) * Dpp();
    Zw.bottomLeftCorner(d, d).diagonal().array() += 1.0;
    Zw.bottomRightCorner(d, d) = (0.5 * h) * Dpq();
    Zy.setZero();
  }

  /// The blocks of jacobian() entry by entry from the Hessian blocks
  /// H_qq, H_qp, H_pq, H_pp (Dqq = H_pq, Dqp = H_pp, Dpq = -H_qq,
  /// Dpp = -H_qp): O(nnz(hess) + d).
  bool sparse_jacobian(const SpMat& hess, SpMat& Rw, SpMat& Ry, SpMat& Zw, SpMat& Zy) override {
    const int d = d_;
    const double hh = 0.5 * h_;
    for (int k = 0; k < d; ++k) {
      tRw_.emplace_back(k, k, 1.0);
      tRw_.emplace_back(d + k, d + k, 1.0);
      tRy_.emplace_back(k, d + k, -1.0);
      tRy_.emplace_back(d + k, k, -1.0);
      tZw_.emplace_back(k, d + k, 1.0);
      tZw_.emplace_back(d + k, k, 1.0);
    }
    for (int j = 0; j < hess.outerSize(); ++j)
      for (SpMat::InnerIterator it(hess, j); it; ++it) {
        const int i = static_cast<int>(it.row());
        const double v = it.value();
        if (i < d && j < d) {  // H_qq
          tRy_.emplace_back(i, j, hh * v);
          tZw_.emplace_back(d + i, d + j, -hh * v);
        } else if (i < d) {  // H_qp
          tRw_.emplace_back(i, j - d, hh * v);
          tZw_.emplace_back(d + i, j - d, -hh * v);
        } else if (j < d) {  // H_pq
          tRw_.emplace_back(i, d + j, -hh * v);
          tRy_.emplace_back(i, j, -hh * v);
        } else {  // H_pp
          tRw_.emplace_back(i, j - d, -h_ * v);
        }
      }
    assemble(tRw_, aRw_, 2 * d, 2 * d, Rw);
    assemble(tRy_, aRy_, 2 * d, 2 * d, Ry);
    assemble(tZw_, aZw_, 2 * d, 2 * d, Zw);
    Zy.resize(2 * d, 2 * d);
    Zy.setZero();
    return true;
  }

 private:
  Vec xa_, xb_, fa_, fb_;
};

}  // namespace odepkg

#endif
