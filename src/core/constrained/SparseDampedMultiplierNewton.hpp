// SparseDampedMultiplierNewton.hpp — DampedMultiplierNewton (read its
// header) for a sparse constraint gradient: the globalised solve of
//
//   r(L) = g(q_1(L)) = 0,   q_1(L) = q_0 + h T_p(pbase - G_0^T L),
//
// Newton with the Jacobian -h S, S = G(q_1(L)) W G_0^T (W the diagonal of
// T_pp, as in SparseSeparableRattle) re-formed at every iterate, and the
// same backtracking line search on |r|_2 (Dennis and Schnabel, Sect. 6.3),
// the same round-off stopping rule.  S (m x m, sparse, unsymmetric) is
// factorized by SparseRankRevealingLU: through rank loss (redundant
// constraints, singular configurations) a basic solution, not the
// minimum-norm one (as the sparse fast path: the correction G_0^T dL is
// the same).  Taken only when the fast path failed or doubted its root:
// it allocates (the sparse product, a symbolic analysis per iterate).
#ifndef ODEPKG_CONSTRAINED_SPARSE_DAMPED_MULTIPLIER_NEWTON_HPP
#define ODEPKG_CONSTRAINED_SPARSE_DAMPED_MULTIPLIER_NEWTON_HPP

#include "Stats.hpp"
#include "Types.hpp"
#include "constrained/DampedMultiplierNewton.hpp"
#include "constrained/SparseRankRevealingLU.hpp"

#include <algorithm>
#include <cmath>

namespace odepkg {

class SparseDampedMultiplierNewton {
 public:
  using Outcome = DampedMultiplierNewton::Outcome;

  SparseDampedMultiplierNewton(int d, int m, double rank_tolerance)
      : lu_(rank_tolerance), dL_(m), Ltry_(m), gtry_(m), q1try_(d), rows_(m) {}

  /// Solve from L (overwritten).  `eval(L, q1, g)` forms q_1(L) and
  /// evaluates g there (false: a non-finite value), `grad(q1, G)` evaluates
  /// G; dq_1/dL = -h W G_0^T.  On Converged, q1, g and G hold the values at
  /// the returned L; rank_deficient() tells whether some S lost rank.  At
  /// most `max_iterations` iterations (MaxNewtonIterations).
  template <class Eval, class Grad>
  Outcome solve(Eval&& eval, Grad&& grad, const SpMat& G0, const Vec& w, double h, int max_iterations, VecRef L,
                Vec& q1, Vec& g, SpMat& G, Stats& st) {
    rank_deficient_ = false;
    if (!eval(L, q1, g) || !grad(q1, G)) return Outcome::NonFinite;
    double rn = g.norm();
    for (int it = 0; it < max_iterations; ++it) {
      const double floor = DampedMultiplierNewton::residual_floor(row_norm(G), q1.lpNorm<Eigen::Infinity>());
      if (g.lpNorm<Eigen::Infinity>() <= floor) return Outcome::Converged;
      S_ = (G * w.asDiagonal()) * G0.transpose();
      S_.makeCompressed();
      // a pattern of its own each time: the product's structure is not
      // tracked by the problem's pattern versions (re-analysed: rare path)
      if (!lu_.compute(S_, --token_)) return Outcome::NonFinite;
      rank_deficient_ = rank_deficient_ || lu_.rank_deficient();
      lu_.solve(g, dL_);
      dL_ /= h;  // r(L + dL) ~ g - h S dL = 0
      if (!dL_.allFinite()) return Outcome::NonFinite;
      ++st.newton_iterations;
      double alpha = 1.0;
      bool accepted = false;
      for (int k = 0; k <= DampedMultiplierNewton::kMaxHalvings && !accepted; ++k, alpha *= 0.5) {
        Ltry_ = L + alpha * dL_;
        accepted = eval(Ltry_, q1try_, gtry_) && gtry_.norm() <= (1.0 - 1e-4 * alpha) * rn;
      }
      if (!accepted)
        return g.lpNorm<Eigen::Infinity>() <= DampedMultiplierNewton::kStallFactor * floor ? Outcome::Converged
                                                                                          : Outcome::Failed;
      L = Ltry_;
      q1.swap(q1try_);
      g.swap(gtry_);
      if (!grad(q1, G)) return Outcome::NonFinite;
      rn = g.norm();
    }
    const double floor = DampedMultiplierNewton::residual_floor(row_norm(G), q1.lpNorm<Eigen::Infinity>());
    return g.lpNorm<Eigen::Infinity>() <= DampedMultiplierNewton::kStallFactor * floor ? Outcome::Converged
                                                                                      : Outcome::Failed;
  }

  bool rank_deficient() const { return rank_deficient_; }
  double condition_estimate() const { return lu_.condition_estimate(); }

 private:
  /// max_i sum_j |G_ij|.
  double row_norm(const SpMat& G) {
    rows_.setZero(G.rows());
    for (int j = 0; j < G.outerSize(); ++j)
      for (SpMat::InnerIterator it(G, j); it; ++it) rows_(it.row()) += std::abs(it.value());
    return rows_.size() ? rows_.maxCoeff() : 0.0;
  }

  SparseRankRevealingLU lu_;
  SpMat S_;
  long token_ = -1;
  bool rank_deficient_ = false;
  Vec dL_, Ltry_, gtry_, q1try_, rows_;
};

}  // namespace odepkg

#endif
