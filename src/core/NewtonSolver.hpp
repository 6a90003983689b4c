// NewtonSolver.hpp — (simplified) Newton iteration for F(y) = 0 that keeps its
// LU factorization across iterations and across solves while convergence is
// fast, and refreshes the Jacobian only when the contraction rate degrades
// (Hairer & Wanner, Solving ODEs II, §IV.8).  All storage is sized once.
//
// Stopping: the scaled correction |dy_k| <= tol, or, with the contraction
// rate theta_k = |dy_k| / |dy_{k-1}|, theta_k/(1 - theta_k) |dy_k| <= tol
// (the error bound of a contraction).  The first iterate can be accepted with
// the first rate theta_2 of the last solve that measured one, eta =
// max(theta_2/(1 - theta_2), eps)^0.8 (HW (IV.8.10)), which saves one call of F per solve when the
// iteration converges fast (a linear stage: one iteration).  At most 4 solves
// in a row end this way; the next one measures theta again.  Neither test
// needs F at the accepted iterate: with residual_at_solution = false the solve
// ends without that call (the caller then has F only at the iterate before).
#ifndef ODEPKG_NEWTON_SOLVER_HPP
#define ODEPKG_NEWTON_SOLVER_HPP

#include "InterruptibleLU.hpp"
#include "Stats.hpp"
#include "Types.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

struct NewtonOptions {
  double tol = 1e-12;          ///< on max_i |dy_i| / max(1, |y_i|)
  int max_iterations = 30;     ///< per solve
  bool reuse_factorization = true;  ///< false: full Newton, J refreshed every iteration
  double refresh_rate = 0.5;   ///< contraction rate above which J is refreshed next solve
  /// Evaluate F at the accepted iterate (callers that reuse it, e.g. the
  /// force at the end of a step).  Convergence is decided from the
  /// corrections alone, so callers that do not need it save one F per solve.
  bool residual_at_solution = true;
  /// First iteration whose rate theta may end the iteration.  3 for a
  /// quasi-Newton model: its first ratio reflects the well-modelled
  /// directions only (SPVI Kepler: one-step errors 25 tol with 2, 1.7 tol
  /// with 3, as with frozen exact Jacobians); it also disables the
  /// first-iterate shortcut.
  int rate_from = 2;
};

class NewtonSolver {
 public:
  using Options = NewtonOptions;


  NewtonSolver(int n, Stats* stats, Options opts = Options())
      : n_(n), opts_(opts), stats_(stats), r_(n), dy_(n), y0_(n), jac_(n, n), lu_(n) {}

  void set_options(const Options& o) { opts_ = o; }
  const Options& options() const { return opts_; }

  /// Factorize a Jacobian the caller already has (e.g. rescaled for a new
  /// step size), to be reused by the next solves.
  void set_jacobian(const Eigen::Ref<const Mat>& jac) {
    if (stats_) ++stats_->lu_factorizations;
    jac_ = jac;
    lu_.compute(jac_);
    have_lu_ = true;
  }

  /// Forget the factorization (the Jacobian changed, e.g. with the step size)
  /// and the measured contraction rate that belonged to it.
  void invalidate() {
    have_lu_ = false;
    eta_known_ = false;
  }
  bool has_factorization() const { return have_lu_; }

  int last_iterations() const { return last_iterations_; }
  bool retrying() const { return retrying_; }
  double last_rate() const { return last_rate_; }
  /// F at the last iterate.
  const Vec& residual() const { return r_; }

  /// Solve F(y) = 0 starting from y.  `F(y, r)` and `J(y, jac)` return false
  /// on non-finite values.  On success, the last call of F was at the returned y.
  template <class Residual, class Jacobian>
  StepStatus solve(Residual&& F, Jacobian&& J, VecRef y) {
    return solve(F, J, y, [this] { return !opts_.reuse_factorization; });
  }

  /// As above, for a caller that keeps its own Jacobian model (quasi-Newton):
  /// `remodel()`, asked after each call of F, is true when the model changed
  /// and J must be formed and factorized again before the next iteration.
  /// During the retry from the guess, retrying() is true: J should then be
  /// the true Jacobian, not the model.
  template <class Residual, class Jacobian, class Remodel>
  StepStatus solve(Residual&& F, Jacobian&& J, VecRef y, Remodel&& remodel) {
    if (stats_) ++stats_->newton_solves;
    y0_ = y;
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool fresh = false;
      retrying_ = attempt == 1;
      if (attempt == 1) y = y0_;  // restart from the guess with a fresh Jacobian
      if (!F(y, r_)) return fail(StepStatus::NonFinite);
      if (!have_lu_ || attempt == 1 || remodel()) {
        if (!refactor(J, y)) return fail(StepStatus::NonFinite);
        fresh = true;
      }
      double prev = std::numeric_limits<double>::infinity();
      double theta_first = 1.0;
      int it = 0;
      while (it < opts_.max_iterations) {
        if (it > 0 && remodel() && !refactor(J, y)) break;
        lu_.solve(r_, dy_);
        poll_interrupt();  // a long solve (large SPVI) stays interruptible
        y -= dy_;
        ++it;
        count_iteration();
        const double nd = scaled_norm(y);
        if (!std::isfinite(nd)) break;
        const double theta = nd / prev;
        last_rate_ = (it > 1) ? theta : 0.0;
        if (it == 2) theta_first = theta;
        // Both tests use the corrections only, not F at the new iterate.
        const bool shortcut = opts_.rate_from == 2 && it == 1 && eta_known_ && shortcuts_ < 4 && eta_ * nd <= opts_.tol;
        const bool converged =
            nd <= opts_.tol || (it >= opts_.rate_from && theta < 1.0 && theta / (1.0 - theta) * nd <= opts_.tol);
        if (!((shortcut || converged) && !opts_.residual_at_solution) && !F(y, r_)) break;
        if (shortcut) {
          ++shortcuts_;  // accepted with the last measured rate
          finish(it);
          return StepStatus::Success;
        }
        if (converged) {
          if (it > 1 && theta_first < 1.0) {  // a measured rate for the next solves
            // The first ratio |dy_2|/|dy_1|: the error of an accepted first
            // iterate; later ratios are smaller where convergence is
            // superlinear and would make the shortcut unsafe.
            eta_ = std::pow(std::max(theta_first / (1.0 - theta_first), std::numeric_limits<double>::epsilon()), 0.8);
            eta_known_ = true;
            shortcuts_ = 0;
          }
          finish(it);
          if (opts_.reuse_factorization && it > 1 && theta > opts_.refresh_rate) have_lu_ = false;
          return StepStatus::Success;
        }
        if (it > 1 && theta >= 1.0) break;  // not contracting
        prev = nd;
      }
      finish(it);
      // A stale factorization may be to blame: retry once with a fresh Jacobian.
      if (fresh) break;
    }
    return give_up();
  }

 private:
  StepStatus give_up() {
    have_lu_ = false;
    eta_known_ = false;
    return StepStatus::NewtonDiverged;
  }
  StepStatus fail(StepStatus s) {
    have_lu_ = false;
    eta_known_ = false;
    return s;
  }

  template <class Jacobian>
  bool refactor(Jacobian&& J, const ConstVecRef& y) {
    if (stats_) ++stats_->lu_factorizations;
    if (!J(y, jac_) || !jac_.allFinite()) {
      have_lu_ = false;
      return false;
    }
    lu_.compute(jac_);
    have_lu_ = true;
    return true;
  }

  double scaled_norm(const ConstVecRef& y) const {
    // NaN/Inf must propagate (std::max(s, NaN) would drop it): the caller
    // treats a non-finite norm as divergence.
    if (!dy_.allFinite() || !y.allFinite()) return std::numeric_limits<double>::infinity();
    double s = 0.0;
    for (int i = 0; i < n_; ++i) s = std::max(s, std::abs(dy_(i)) / std::max(1.0, std::abs(y(i))));
    return s;
  }

  void count_iteration() {
    if (stats_) ++stats_->newton_iterations;
  }
  void finish(int it) {
    retrying_ = false;
    last_iterations_ = it;
    if (stats_) stats_->newton_max_iterations = std::max<long>(stats_->newton_max_iterations, it);
  }

  int n_;
  Options opts_;
  Stats* stats_;
  Vec r_, dy_, y0_;
  Mat jac_;
  InterruptibleLU lu_;  // polls between panels when large
  bool have_lu_ = false;
  bool retrying_ = false;
  int last_iterations_ = 0;
  double last_rate_ = 0.0;
  double eta_ = 1.0;        ///< max(theta/(1 - theta), eps)^0.8 of the last measured solve
  bool eta_known_ = false;
  int shortcuts_ = 0;       ///< solves accepted after one iteration in a row
};

}  // namespace odepkg

#endif
