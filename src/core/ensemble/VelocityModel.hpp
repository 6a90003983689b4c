// VelocityModel.hpp — the velocity H_p(p) = A_j p + b_j of each member j of
// a separable H = T(p) + V(q) with quadratic T, learned once from
// differences of f and then checked on every step (the ensemble's form of
// unconstrained/AffineVelocity.hpp; the reason is the same: with one combined
// f(t, [q; p]) an explicit kick-drift-kick step needs H_p(p_{n+1/2}) before
// it can move q and the force at q_{n+1} after, two dependent calls; with
// the model, one call at [q_{n+1}; p_{n+1/2}] gives the force and checks the
// predicted velocity).
//
// Learning: d calls of f, each moving p_i of every member by
// max(1, |p_i|) (forward differences are exact for an affine map up to
// round-off), and one more moving every p_i with alternating signs to check
// the model before it is trusted (T not quadratic: the model is refused).
// Memory d^2 K: the model is learned for d <= kMaxDim only.
// The identity model (velocity Verlet, f = [v; a]) needs no learning.
#ifndef ODEPKG_ENSEMBLE_VELOCITY_MODEL_HPP
#define ODEPKG_ENSEMBLE_VELOCITY_MODEL_HPP

#include "ensemble/EnsembleProblem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg::ensemble {

class VelocityModel {
 public:
  static constexpr int kMaxDim = 64;

  /// The identity model H_p(p) = p (velocity Verlet's state [x; v]).
  void set_identity(int d, int K) {
    d_ = d;
    identity_ = true;
    active_ = true;
    A_.resize(0, 0);
    b_ = Mat::Zero(d, K);
    norm_.setOnes(K);
  }

  bool active() const { return active_; }
  void disable() { active_ = false; }

  /// Learns A_j, b_j of all K members at (t, X), F0 = f(t, X) (n x K).
  /// Returns active(); false if T is not quadratic (or d > kMaxDim).
  bool learn(EnsembleProblem& pb, double t, const ConstMatRef& X, const ConstMatRef& F0) {
    const int d = pb.dim(), K = static_cast<int>(X.cols());
    d_ = d;
    identity_ = false;
    active_ = false;
    if (d > kMaxDim) return false;
    A_.resize(d, d * K);
    b_.resize(d, K);
    norm_.resize(K);
    Mat Xp = X, F1(2 * d, K);
    for (int i = 0; i < d; ++i) {
      Xp = X;
      for (int j = 0; j < K; ++j) Xp(d + i, j) += probe(X(d + i, j));
      pb.field(t, Xp, F1);
      for (int j = 0; j < K; ++j)
        A_.col(j * d + i) = (F1.col(j).head(d) - F0.col(j).head(d)) / probe(X(d + i, j));
    }
    for (int j = 0; j < K; ++j) {
      b_.col(j) = F0.col(j).head(d) - member(j) * X.col(j).tail(d);
      norm_(j) = member(j).cwiseAbs().rowwise().sum().maxCoeff();
    }
    if (!A_.allFinite() || !b_.allFinite()) return false;
    // the check: p moved by +-max(1, |p_i|), alternating
    Xp = X;
    for (int j = 0; j < K; ++j)
      for (int i = 0; i < d; ++i) Xp(d + i, j) += (i % 2 ? -1.0 : 1.0) * probe(X(d + i, j));
    pb.field(t, Xp, F1);
    Vec v(d);
    for (int j = 0; j < K; ++j) {
      predict(j, Xp.col(j).tail(d).data(), v.data());
      if (!matches(j, Xp.col(j).tail(d).data(), v.data(), F1.col(j).head(d).data())) return false;
    }
    active_ = true;
    return true;
  }

  /// v = A_j p + b_j.
  // Raw offsets into A_ and b_ (no Eigen block per call: this runs per
  // member and step).
  void predict(int j, const double* p, double* v) const {
    if (identity_) {
      for (int i = 0; i < d_; ++i) v[i] = p[i];
      return;
    }
    const double* b = b_.data() + static_cast<Eigen::Index>(j) * d_;
    const double* a = A_.data() + static_cast<Eigen::Index>(j) * d_ * d_;  // d x d, column-major
    for (int i = 0; i < d_; ++i) v[i] = b[i];
    for (int c = 0; c < d_; ++c) {
      const double pc = p[c];
      const double* ac = a + c * d_;
      for (int i = 0; i < d_; ++i) v[i] += ac[i] * pc;
    }
  }

  /// out = A_j x for a d-vector x (no b).
  void apply(int j, const double* x, double* out) const {
    if (identity_) {
      for (int i = 0; i < d_; ++i) out[i] = x[i];
      return;
    }
    const double* a = A_.data() + static_cast<Eigen::Index>(j) * d_ * d_;
    for (int i = 0; i < d_; ++i) out[i] = 0.0;
    for (int c = 0; c < d_; ++c)
      for (int i = 0; i < d_; ++i) out[i] += a[c * d_ + i] * x[c];
  }

  /// A_j as a d x d map (not for the identity model).
  Eigen::Map<const Mat> member(int j) const { return Eigen::Map<const Mat>(A_.col(j * d_).data(), d_, d_); }
  bool identity() const { return identity_; }

  /// The true H_p(p) agrees with the prediction v (AffineVelocity::confirm's
  /// tolerance: 1e3 eps (|A| |p| + |b| + |H_p|)).
  bool matches(int j, const double* p, const double* v, const double* hp) const {
    if (identity_) return true;  // f's velocity part is v itself
    double p_max = 0.0, hp_max = 0.0, miss = 0.0, b_max = 0.0;
    const double* b = b_.data() + static_cast<Eigen::Index>(j) * d_;
    for (int i = 0; i < d_; ++i) {
      if (!std::isfinite(hp[i])) return false;
      p_max = std::max(p_max, std::abs(p[i]));
      hp_max = std::max(hp_max, std::abs(hp[i]));
      b_max = std::max(b_max, std::abs(b[i]));
      miss = std::max(miss, std::abs(hp[i] - v[i]));
    }
    const double eps = std::numeric_limits<double>::epsilon();
    return miss <= 1e3 * eps * (norm_.data()[j] * p_max + b_max + hp_max);
  }

 private:
  static double probe(double p) { return std::max(1.0, std::abs(p)); }

  int d_ = 0;
  bool identity_ = false;
  bool active_ = false;
  Mat A_;    ///< d x (d K): A_j in columns j d .. j d + d - 1
  Mat b_;    ///< d x K
  Vec norm_; ///< |A_j|_inf
};

}  // namespace odepkg::ensemble

#endif
