// BaseMethod.hpp — the underlying symplectic one-step map phi_h of geometric
// SHAKE and RATTLE (McLachlan et al. 2014, Def. 1.3/1.4), written as an implicit map so
// that SHAKE can solve for phi_h and the fibre parameter s in one Newton
// system:  R(w, y) = 0 (unknowns w of the method),  z_1 = Z(w, y).
// The partial derivatives come from a model Df of the Jacobian of
// f = [H_p; -H_q] (taken once per step), so dg . D phi_h . X_g is formed
// exactly up to the model's age, never by differencing a whole step.
#ifndef ODEPKG_CONSTRAINED_BASE_METHOD_HPP
#define ODEPKG_CONSTRAINED_BASE_METHOD_HPP

#include "HamiltonianProblem.hpp"
#include "SparseFixedPattern.hpp"
#include "Types.hpp"

#include <vector>

namespace odepkg {

class BaseMethod {
 public:
  BaseMethod(HamiltonianProblem& problem, int unknowns)
      : problem_(problem), d_(problem.dim()), nw_(unknowns) {}
  virtual ~BaseMethod() = default;
  BaseMethod(const BaseMethod&) = delete;
  BaseMethod& operator=(const BaseMethod&) = delete;

  virtual const char* name() const = 0;
  virtual int order() const = 0;
  /// phi_h^{-1} = phi_{-h}: then RATTLE is symmetric too (McLachlan et al. 2014, Prop. 4.9).
  virtual bool symmetric() const = 0;
  int unknowns() const { return nw_; }

  /// The step: from t, of size h.
  void begin(double t, double h) {
    t_ = t;
    h_ = h;
  }
  /// The Jacobian model Df = d f / d(q, p), from the Hessian of H in (q, p)
  /// order: df_q/dx = Hess(p-rows), df_p/dx = -Hess(q-rows).
  void set_hessian(const Eigen::Ref<const Mat>& hess) {
    if (Df_.rows() != 2 * d_) Df_.resize(2 * d_, 2 * d_);  // on first use: a sparse run never forms it
    Df_.topRows(d_) = hess.bottomRows(d_);
    Df_.bottomRows(d_) = -hess.topRows(d_);
  }

  /// w with w - anchor(y) the step's increment (carried over as a guess).
  virtual void anchor(const ConstVecRef& y, VecRef a) const = 0;
  /// An explicit first guess of w from y and f(t, y) = fy.
  virtual void guess(const ConstVecRef& y, const ConstVecRef& fy, VecRef w) const = 0;
  /// R(w, y) (nw) and z_1 = Z(w, y) (2d), calling f as the method needs.
  virtual bool residual(const ConstVecRef& y, const ConstVecRef& w, VecRef R, VecRef z1) = 0;
  /// dR/dw (nw x nw), dR/dy (nw x 2d), dZ/dw (2d x nw), dZ/dy (2d x 2d) from Df.
  virtual void jacobian(MatRef Rw, MatRef Ry, MatRef Zw, MatRef Zy) const = 0;
  /// The same blocks as sparse matrices, from a sparse Hessian of H in
  /// (q, p) order (the sparse geometric RATTLE, SparseGeometricNewton).
  /// False if the method has no sparse form.
  virtual bool sparse_jacobian(const SpMat& hess, SpMat& Rw, SpMat& Ry, SpMat& Zw, SpMat& Zy) {
    (void)hess, (void)Rw, (void)Ry, (void)Zw, (void)Zy;
    return false;
  }

 protected:
  auto Dqq() const { return Df_.topLeftCorner(d_, d_); }
  auto Dqp() const { return Df_.topRightCorner(d_, d_); }
  auto Dpq() const { return Df_.bottomLeftCorner(d_, d_); }
  auto Dpp() const { return Df_.bottomRightCorner(d_, d_); }

  using Triplets = std::vector<Eigen::Triplet<double, int>>;
  /// out (rows x cols) from the triplets t, which are then cleared (their
  /// storage is kept for the next call); on out's last structure while the
  /// Hessian's is the same (TripletAssembly: no allocation).
  static void assemble(Triplets& t, TripletAssembly& a, int rows, int cols, SpMat& out) {
    a.run(t, rows, cols, out);
    t.clear();
  }

  HamiltonianProblem& problem_;
  int d_, nw_;
  Triplets tRw_, tRy_, tZw_;  // sparse_jacobian's scratch
  TripletAssembly aRw_, aRy_, aZw_;
  Mat Df_;
  double t_ = 0.0, h_ = 0.0;
};

}  // namespace odepkg

#endif
