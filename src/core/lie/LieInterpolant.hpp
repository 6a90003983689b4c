// LieInterpolant.hpp — dense output of odeRATTLie (deval, Refine): between two
// output points (t0, q0, v0) and (t1, q1, v1) of a motion on G, h = t1 − t0,
//
//   q(t0 + s) = q0 ∘ exp(ξ(s)~),   v(t0 + s) = T(ξ(s)) ξ'(s),
//
// ξ the cubic Hermite interpolant in the Lie algebra with
//   ξ(0) = 0,  ξ'(0) = v0,  ξ(h) = W,  ξ'(h) = T(W)⁻¹ v1,   q1 = q0 ∘ exp(W̃),
// because d/ds q0∘exp(ξ(s)~) = q(s) ∘ (T(ξ)ξ')~ (LieGroup.hpp's T) and the
// kinematics are q̇ = q ∘ ṽ.  So q stays on G exactly, the interpolant is exact
// at both ends (q and v), and its error is O(h⁴) in q for smooth motions (the
// error of the Hermite cubic in ξ, a smooth function of s).  A cubic in the
// coordinates would leave G (a quaternion of norm ≠ 1, RᵀR ≠ I).
//
// W is found by Gauss–Newton on coords(q0 ∘ exp(W̃)) = coords(q1) from the
// trapezoidal guess h (v0 + v1)/2, so it is the increment along the motion,
// not a principal logarithm (which would turn the wrong way once the body
// turns by more than π between output points); this also serves groups given
// only by their compose_exp.  The chart s ↦ q0 ∘ exp(ξ(s)) degenerates where
// T(ξ) is singular, i.e. where ad(ξ) has an eigenvalue 2πik (a rotation by a
// full turn): the eigenvalues of T(W) = Σ(−ad W)^k/(k+1)! are
// (1 − e^{−λ})/λ, of modulus sin(φ/2)/(φ/2) for a rotation by φ, whatever
// the translations (a scale-free test, unlike rcond, which a translation of
// 1e6 in SE(3) makes small).  Output points whose increment has
// min |eig T(W)| < kMinChartEigenvalue (φ above about 5.2 rad) are refused
// rather than interpolated wrongly (a nutating top turning 6 rad between
// points: errors of 0.3 in q, 0.9 in v; past 2π the solve also lands on
// other branches).  The check needs an eigensolver of T (n ≤ kMaxCheckedDim).  Constraints Φ(q) = 0, B(q) v = 0 are restored
// afterwards by the M-orthogonal projection along G of LieInitialData.hpp.
#ifndef ODEPKG_LIE_LIE_INTERPOLANT_HPP
#define ODEPKG_LIE_LIE_INTERPOLANT_HPP

#include "LieGroup.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg::lie {

class LieInterpolant {
 public:
  explicit LieInterpolant(const LieGroup& group)
      : g_(group),
        nq_(group.coord_size()),
        n_(group.dim()),
        q0_(nq_), q1_(nq_), qa_(nq_), qb_(nq_), r_(nq_), scale_(nq_),
        v0_(n_), b_(n_), W_(n_), dW_(n_), wa_(n_), wb_(n_), xi_(n_), dxi_(n_),
        J_(nq_, n_), T_(n_, n_), lu_(n_) {}

  /// Smallest |eigenvalue| of T(W) accepted: sin(φ/2)/(φ/2) ≥ 0.2 admits
  /// rotations by φ up to about 5.2 rad between output points.
  static constexpr double kMinChartEigenvalue = 0.2;
  /// Groups of higher dimension (a user's R^1000) skip the check.
  static constexpr int kMaxCheckedDim = 64;

  /// Prepares the interval [t0, t1] (t1 < t0 for backward motions) from
  /// y0 = [q0; v0], y1 = [q1; v1].  False if no increment W joins q0 to q1
  /// from the trapezoidal guess, if the chart at W is degenerate (output
  /// points nearly a full turn apart), or on non-finite data.
  bool set_interval(double t0, const ConstVecRef& y0, double t1, const ConstVecRef& y1) {
    t0_ = t0;
    h_ = t1 - t0;
    q0_ = y0.head(nq_);
    q1_ = y1.head(nq_);
    v0_ = y0.tail(n_);
    if (!(h_ != 0.0) || !y0.allFinite() || !y1.allFinite()) return false;
    // each coordinate on its own scale (a translation of 1e7 must not loosen
    // the test on a quaternion)
    scale_ = q0_.cwiseAbs().cwiseMax(q1_.cwiseAbs()).cwiseMax(1.0);
    W_ = 0.5 * h_ * (y0.tail(n_) + y1.tail(n_));
    if (!solve_increment()) return false;
    // b = ξ'(h) = T(W)⁻¹ v1
    g_.tangent(W_, T_);
    if (!T_.allFinite()) return false;
    if (n_ <= kMaxCheckedDim) {
      Eigen::EigenSolver<Mat> es(T_, false);
      if (es.info() != Eigen::Success || !(es.eigenvalues().cwiseAbs().minCoeff() >= kMinChartEigenvalue))
        return false;
    }
    lu_.compute(T_);
    b_ = lu_.solve(y1.tail(n_));
    return b_.allFinite();
  }

  /// y = [q; v] at time t of the prepared interval; yp (optional, same
  /// size) = [d/dt of q's coordinates; v̇], by central differences of the
  /// interpolant (relative error ≈ 1e-10).
  void evaluate(double t, VecRef y, VecRef yp) {
    evaluate_at(t - t0_, y);
    if (yp.size() == 0) return;
    // q̇ = d/dε coords(q ∘ exp(ε ṽ)) at ε = 0
    const double vn = std::max(1.0, y.tail(n_).lpNorm<Eigen::Infinity>());
    const double e = kCbrtEps / vn;
    wa_ = e * y.tail(n_);
    g_.compose_exp(y.head(nq_), wa_, qa_);
    wa_ = -wa_;
    g_.compose_exp(y.head(nq_), wa_, qb_);
    yp.head(nq_) = (qa_ - qb_) / (2 * e);
    // v̇ from v(s ± δ)
    const double d = kCbrtEps * std::abs(h_);
    const double s = t - t0_;
    hermite(s + d, wa_, dxi_);
    g_.tangent(wa_, T_);
    wb_.noalias() = T_ * dxi_;
    hermite(s - d, wa_, dxi_);
    g_.tangent(wa_, T_);
    yp.tail(n_) = wb_;
    yp.tail(n_).noalias() -= T_ * dxi_;
    yp.tail(n_) /= 2 * d;
  }

  /// The increment W of the prepared interval (q1 = q0 ∘ exp(W̃)).
  const Vec& increment() const { return W_; }

 private:
  static constexpr double kCbrtEps = 6.0554544523933395e-06;  // ε^(1/3)

  // ξ(s) and ξ'(s) of the cubic Hermite interpolant, θ = s/h.
  void hermite(double s, VecRef xi, VecRef dxi) const {
    const double th = s / h_;
    const double h10 = th * (th * (th - 2) + 1), h01 = th * th * (3 - 2 * th), h11 = th * th * (th - 1);
    const double d10 = th * (3 * th - 4) + 1, d01 = 6 * th * (1 - th), d11 = th * (3 * th - 2);
    xi = (h_ * h10) * v0_ + h01 * W_ + (h_ * h11) * b_;
    dxi = d10 * v0_ + (d01 / h_) * W_ + d11 * b_;
  }

  void evaluate_at(double s, VecRef y) {
    hermite(s, xi_, dxi_);
    g_.compose_exp(q0_, xi_, y.head(nq_));
    g_.tangent(xi_, T_);
    y.tail(n_).noalias() = T_ * dxi_;
  }

  // Gauss–Newton on r(W) = coords(q0 ∘ exp(W̃)) − coords(q1), the Jacobian
  // by central differences (error ≈ 1e-10: the iteration still converges to
  // the root, at a linear rate of about 1e-10).
  bool solve_increment() {
    const double tol = 8 * std::numeric_limits<double>::epsilon();
    auto scaled = [&] { return r_.cwiseQuotient(scale_).lpNorm<Eigen::Infinity>(); };
    for (int it = 0; it < kMaxIterations; ++it) {
      g_.compose_exp(q0_, W_, r_);
      r_ -= q1_;
      if (!r_.allFinite()) return false;
      if (scaled() <= tol) return true;
      for (int j = 0; j < n_; ++j) {
        // per column: a rotation angle is not differenced on the scale of a
        // translation of 1e6
        const double delta = kCbrtEps * std::max(1.0, std::abs(W_(j)));
        wa_ = W_;
        wb_ = W_;
        wa_(j) += delta;
        wb_(j) -= delta;
        g_.compose_exp(q0_, wa_, qa_);
        g_.compose_exp(q0_, wb_, qb_);
        J_.col(j) = (qa_ - qb_) / (wa_(j) - wb_(j));
      }
      dW_ = J_.colPivHouseholderQr().solve(r_);
      if (!dW_.allFinite()) return false;
      W_ -= dW_;
      // converged to round-off in W although r stays above tol (coordinates
      // rounded in compose_exp): accept if r is still small
      if (dW_.lpNorm<Eigen::Infinity>() <= 4 * std::numeric_limits<double>::epsilon() *
                                                 std::max(1.0, W_.lpNorm<Eigen::Infinity>())) {
        g_.compose_exp(q0_, W_, r_);
        r_ -= q1_;
        return scaled() <= 1e3 * tol;
      }
    }
    g_.compose_exp(q0_, W_, r_);
    r_ -= q1_;
    return scaled() <= 1e3 * tol;
  }

  static constexpr int kMaxIterations = 20;

  const LieGroup& g_;
  int nq_, n_;
  double t0_ = 0.0, h_ = 0.0;
  Vec q0_, q1_, qa_, qb_, r_, scale_;
  Vec v0_, b_, W_, dW_, wa_, wb_, xi_, dxi_;
  Mat J_, T_;
  Eigen::PartialPivLU<Mat> lu_;
};

}  // namespace odepkg::lie

#endif
