// DampedMultiplierNewton.hpp — the globalised solve of the separable
// RATTLE/SHAKE position equation for the multipliers L = h/2 lambda,
//
//   r(L) = g(q_1(L)) = 0,   q_1(L) = q_0 + h T_p(pbase - G_0^T L),
//
// taken when the fast (chord) iteration fails or lands on a distant root:
// Newton with the Jacobian -h G(q_1(L)) T_pp G_0^T re-formed at every
// iterate, solved in the minimum-norm sense (rank loss of G at singular
// configurations: Moore-Penrose, as the fast path), and a backtracking line
// search on |r|_2 (Dennis and Schnabel, Numerical Methods for Unconstrained
// Optimization, Sect. 6.3), so that a start far from the root (L = 0, or a
// warm start near a fold) neither overshoots to another branch nor diverges.
//
// Stopping at the round-off of r's own evaluation: |g(q_1)| <= 4 eps
// max(1, |G_1| |q_1|) is as small as g can be evaluated there (no Newton
// correction can reduce it further, and on tiny steps or near-singular
// G T_pp G^T the correction it asks for is round-off amplified by
// 1/(h sigma_min)); a line search that stalls within 64 times that floor is
// taken as convergence too.
#ifndef ODEPKG_CONSTRAINED_DAMPED_MULTIPLIER_NEWTON_HPP
#define ODEPKG_CONSTRAINED_DAMPED_MULTIPLIER_NEWTON_HPP

#include "ConstraintProjection.hpp"
#include "Stats.hpp"
#include "Types.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class DampedMultiplierNewton {
 public:
  enum class Outcome { Converged, Failed, NonFinite };
  static constexpr int kMaxHalvings = 12;
  static constexpr double kStallFactor = 64.0;  ///< stagnation within this factor of the floor converges

  DampedMultiplierNewton(int d, int m, double rank_tolerance)
      : small_(std::max(m, 1), rank_tolerance), S_(m, m), dL_(m), Ltry_(m), gtry_(m), q1try_(d) {}

  /// The round-off floor of |g(q)|_inf for |G|_inf = Gn, |q|_inf = qn.
  static double residual_floor(double Gn, double qn) {
    return 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, Gn * qn);
  }

  /// Solve from L (overwritten).  `eval(L, q1, g)` forms q_1(L) and
  /// evaluates g there, `grad(q1, G)` evaluates G (false: a non-finite
  /// value); B0 = T_pp G_0^T (d x m), so that dq_1/dL = -h B0; `note(solver)`
  /// sees each factorization (rank bookkeeping); at most `max_iterations`
  /// iterations (MaxNewtonIterations).  On Converged, q1, g and G hold the
  /// values at the returned L.
  template <class Eval, class Grad, class Note>
  Outcome solve(Eval&& eval, Grad&& grad, Note&& note, const Mat& B0, double h, int max_iterations, VecRef L,
                Vec& q1, Vec& g, Mat& G, Stats& st) {
    if (!eval(L, q1, g) || !grad(q1, G)) return Outcome::NonFinite;
    double rn = g.norm();
    for (int it = 0; it < max_iterations; ++it) {
      const double floor = residual_floor(row_norm(G), q1.lpNorm<Eigen::Infinity>());
      if (g.lpNorm<Eigen::Infinity>() <= floor) return Outcome::Converged;
      S_.noalias() = G * B0;
      if (!small_.compute(S_)) return Outcome::NonFinite;
      note(small_);
      small_.solve(g, dL_);
      dL_ /= h;  // r(L + dL) ~ g - h S dL = 0
      if (!dL_.allFinite()) return Outcome::NonFinite;
      ++st.newton_iterations;
      // backtracking on |r|_2 (Armijo with c = 1e-4); a non-finite trial
      // point is shortened too
      double alpha = 1.0;
      bool accepted = false;
      for (int k = 0; k <= kMaxHalvings && !accepted; ++k, alpha *= 0.5) {
        Ltry_ = L + alpha * dL_;
        accepted = eval(Ltry_, q1try_, gtry_) && gtry_.norm() <= (1.0 - 1e-4 * alpha) * rn;
      }
      // no decrease: at the round-off level this is convergence
      if (!accepted) return g.lpNorm<Eigen::Infinity>() <= kStallFactor * floor ? Outcome::Converged : Outcome::Failed;
      L = Ltry_;
      q1.swap(q1try_);
      g.swap(gtry_);
      if (!grad(q1, G)) return Outcome::NonFinite;
      rn = g.norm();
    }
    const double floor = residual_floor(row_norm(G), q1.lpNorm<Eigen::Infinity>());
    return g.lpNorm<Eigen::Infinity>() <= kStallFactor * floor ? Outcome::Converged : Outcome::Failed;
  }

  /// The root is on another branch of g(q_1(L)) = 0 than the one the step
  /// continues.  RATTLE is the root that tends to the unconstrained step as
  /// h -> 0 (Hairer, Lubich, Wanner, GNI VII.1.4): its multipliers'
  /// displacement c = h T_pp G_0^T L removes the normal part of the free
  /// displacement dq (c_lin, linear) plus a curvature term, about
  /// |dq|^2 / (2 R) for a manifold of curvature radius R; a root across the
  /// manifold has a term of about its diameter 2 R.  Far: the curvature
  /// term |c - c_lin|_2 exceeds ratio |dq|_2 (plus sqrt(eps) max(1, |q_0|)).
  /// kDoubtRatio (a chord root is re-solved from L = 0) separates the two
  /// while |dq| < R; kRefuseRatio (no nearer root was found: the step is
  /// refused) while |dq| < 2 R / 3, and never refuses a root that near-fold
  /// steps of |dq| ~ R have (curvature term up to R).
  static bool distant(double curvature_term, double free_displacement, double q0n, double ratio) {
    return curvature_term >
           ratio * free_displacement + std::sqrt(std::numeric_limits<double>::epsilon()) * std::max(1.0, q0n);
  }
  static constexpr double kDoubtRatio = 0.5;
  static constexpr double kRefuseRatio = 2.0;


 private:
  static double row_norm(const Mat& G) { return G.size() ? G.cwiseAbs().rowwise().sum().maxCoeff() : 0.0; }

  MinNormSolver small_;
  Mat S_;
  Vec dL_, Ltry_, gtry_, q1try_;
};

/// The root kept by a globalised solve from several starts: the one with
/// the smallest multiplier displacement (the branch the step continues);
/// a distinct farther root offered is counted in stats as rejected.  GMat:
/// Mat or SpMat (the storage of G).
template <class GMat>
class NearestRoot {
 public:
  void reset() { found_ = false; }
  bool found() const { return found_; }
  /// Offer the root (L, q1, g, G) whose displacement is `corr`.
  void offer(double corr, const Vec& L, const Vec& q1, const Vec& g, const GMat& G, Stats& st) {
    if (found_ && !(corr < best_)) {  // the root kept is nearer (or the same)
      if (distinct(corr, best_)) ++st.distant_roots;
      return;
    }
    if (found_ && distinct(best_, corr)) ++st.distant_roots;
    found_ = true;
    best_ = corr;
    L_ = L;
    q1_ = q1;
    g_ = g;
    G_ = G;
  }
  /// The kept root back into the caller's storage.
  void restore(Vec& L, Vec& q1, Vec& g, GMat& G) const {
    L = L_;
    q1 = q1_;
    g = g_;
    G = G_;
  }

 private:
  static bool distinct(double far, double near) { return far > near * (1.0 + 1e-6) + 1e-12; }
  bool found_ = false;
  double best_ = 0.0;
  Vec L_, q1_, g_;
  GMat G_;
};

}  // namespace odepkg

#endif
