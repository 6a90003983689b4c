// IntegratedFibre.hpp — the fibre flow exp(sum_i s_i X_{g_i})(z) integrated
// numerically to round-off where no closed form is given (McLachlan et al. 2014, Sect. 6:
// "integrating the fibres numerically to round-off error").
//
// z' = F(z) = J Dg(z)^T s on tau in [0, 1] by K = 6 stage Gauss–Legendre
// collocation (order 12, symmetric, so the computed flow of -s inverts that
// of s, and quadratic invariants such as |z|^2 are kept exactly).  N substeps
// with delta |L| <= 0.5, L = J sum_k s_k d^2 g_k: on a linear field the
// K-stage Gauss method is the (K, K) Padé approximant of exp, with local
// error (K!)^2/((2K)!(2K+1)!) (delta|L|)^13 = 1.7e-13 * 0.5^13 ~ 2e-17
// (HLW §II.1.3, §IV.3).  Typical fibre moves of a step (|s| ~ h |lambda|)
// need one substep.  Stage equations: a predictor that solves the linear
// model exactly, then simplified Newton with I - delta A (x) L; the Hessians
// behind L are cached and refreshed only when the iteration slows down.
// Calls of Dg per substep: 1 + K per iteration (1 + K for quadratic g).
#ifndef ODEPKG_CONSTRAINED_INTEGRATED_FIBRE_HPP
#define ODEPKG_CONSTRAINED_INTEGRATED_FIBRE_HPP

#include "unconstrained/GaussLegendre.hpp"
#include "constrained/FibreMap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class IntegratedFibre final : public FibreMap {
 public:
  static constexpr int kStages = 6;
  static constexpr double kStepBound = 0.5;  ///< delta |L|_inf per substep
  static constexpr int kMaxSubsteps = 4096;
  static constexpr int kMaxIterations = 12;

  explicit IntegratedFibre(ConstraintSet& g)
      : g_(g), n_(2 * g.dim()), m_(g.count()), Dg_(m_, n_), H_(n_, n_ * m_), L_(n_, n_),
        Z_(n_, kStages), F_(n_, kStages), R_(n_ * kStages), dZ_(n_ * kStages),
        M_(n_ * kStages, n_ * kStages), lu_(n_ * kStages), zn_(n_), f0_(n_) {
    Vec c, b;
    gauss_legendre(kStages, c, b);  // on [-1, 1]
    c_ = (c.array() + 1.0) / 2.0;
    b_ = b / 2.0;
    // A from the collocation conditions sum_j a_ij c_j^(k-1) = c_i^k / k.
    Mat V(kStages, kStages), C(kStages, kStages);
    for (int k = 0; k < kStages; ++k)
      for (int j = 0; j < kStages; ++j) {
        V(k, j) = std::pow(c_(j), k);
        C(j, k) = std::pow(c_(j), k + 1) / (k + 1);
      }
    A_ = C * V.transpose().inverse();
    // z_{n+1} = z_n + delta sum_j b_j F_j = z_n + sum_i e_i (Z_i - z_n), e = A^{-T} b:
    // the end point from the stages without evaluating F there.
    e_ = A_.transpose().partialPivLu().solve(b_);
  }

  bool flow(const ConstVecRef& z, const ConstVecRef& s, VecRef out) override {
    out = z;
    if (s.lpNorm<Eigen::Infinity>() == 0.0) return true;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!have_hess_ || attempt == 1) {
        if (!g_.hess(z, H_)) return false;
        have_hess_ = true;
      }
      // L = J sum_k s_k H_k: q-rows +(p-rows of H), p-rows -(q-rows of H)
      L_.setZero();
      for (int k = 0; k < m_; ++k) {
        L_.topRows(n_ / 2) += s(k) * H_.block(n_ / 2, k * n_, n_ / 2, n_);
        L_.bottomRows(n_ / 2) -= s(k) * H_.block(0, k * n_, n_ / 2, n_);
      }
      const double w = L_.cwiseAbs().rowwise().sum().maxCoeff();
      int N = std::max(1, static_cast<int>(std::ceil(w / kStepBound))) * (attempt + 1);
      if (!(N <= kMaxSubsteps)) return false;
      const double delta = 1.0 / N;
      for (int i = 0; i < kStages; ++i)
        for (int j = 0; j < kStages; ++j)
          M_.block(i * n_, j * n_, n_, n_) = (i == j ? 1.0 : 0.0) * Mat::Identity(n_, n_) - (delta * A_(i, j)) * L_;
      lu_.compute(M_);
      bool ok = true;
      out = z;
      for (int step = 0; step < N && ok; ++step) {
        zn_ = out;
        ok = substep(s, delta, out);
      }
      if (ok) return out.allFinite();
    }
    return false;
  }

 private:
  /// F(z) = J Dg(z)^T s.
  bool field(const ConstVecRef& z, const ConstVecRef& s, VecRef f) {
    if (!g_.grad(z, Dg_)) return false;
    const int d = n_ / 2;
    f.head(d).noalias() = Dg_.rightCols(d).transpose() * s;
    f.tail(d).setZero();
    f.tail(d).noalias() -= Dg_.leftCols(d).transpose() * s;
    return true;
  }

  /// One collocation step from zn_ to out.
  bool substep(const ConstVecRef& s, double delta, VecRef out) {
    // Predictor: the stages of the linear model F(z_n) + L (Z - z_n),
    // (I - delta A (x) L) (Z - z_n) = delta c (x) F(z_n) — exact for linear
    // fields (quadratic g), so one residual then confirms convergence.
    if (!field(zn_, s, f0_)) return false;
    for (int i = 0; i < kStages; ++i) R_.segment(i * n_, n_) = (delta * c_(i)) * f0_;
    dZ_.noalias() = lu_.solve(R_);
    for (int i = 0; i < kStages; ++i) Z_.col(i) = zn_ + dZ_.segment(i * n_, n_);
    const double scale = std::max(1.0, zn_.lpNorm<Eigen::Infinity>());
    const double floor = 4 * std::numeric_limits<double>::epsilon() * scale;
    double prev = std::numeric_limits<double>::infinity();
    for (int it = 0; it < kMaxIterations; ++it) {
      for (int j = 0; j < kStages; ++j)
        if (!field(Z_.col(j), s, F_.col(j))) return false;
      for (int i = 0; i < kStages; ++i) {
        auto Ri = R_.segment(i * n_, n_);
        Ri = Z_.col(i) - zn_;
        for (int j = 0; j < kStages; ++j) Ri.noalias() -= (delta * A_(i, j)) * F_.col(j);
      }
      dZ_.noalias() = lu_.solve(R_);
      for (int i = 0; i < kStages; ++i) Z_.col(i) -= dZ_.segment(i * n_, n_);
      const double nd = dZ_.lpNorm<Eigen::Infinity>();
      if (!std::isfinite(nd)) return false;
      // converged: the correction is at round-off, or the contraction bounds
      // the error left, theta/(1 - theta) |dZ|, by it (HW IV.8)
      const double theta = nd / prev;
      prev = nd;
      // (the first correction after the predictor, when it is a few ulp,
      // leaves theta times that: the predictor is exact for linear fields)
      if (nd <= floor || (it == 0 && nd <= 8 * floor) ||
          (it > 0 && theta < 1.0 && theta / (1.0 - theta) * nd <= floor)) {
        out = zn_;
        for (int i = 0; i < kStages; ++i) out.noalias() += e_(i) * (Z_.col(i) - zn_);
        return true;
      }
      if (it >= 3) have_hess_ = false;  // slow: refresh the Hessians next time
    }
    return false;
  }

  ConstraintSet& g_;
  int n_, m_;
  Vec c_, b_, e_;
  Mat A_;
  Mat Dg_, H_, L_, Z_, F_;
  Vec R_, dZ_;
  Mat M_;
  Eigen::PartialPivLU<Mat> lu_;
  Vec zn_, f0_;
  bool have_hess_ = false;
};

}  // namespace odepkg

#endif
