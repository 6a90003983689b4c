// Rattle.hpp — RATTLE and SHAKE for constrained Hamiltonian systems
//   q' = H_p,  p' = -H_q - G(q)^T lambda,  g(q) = 0        (HLW §VII.1.4),
// order 2, symmetric, symplectic on M = {g = 0, G H_p = 0}:
//   p_{1/2} = p_0 - h/2 (H_q(q_0, p_{1/2}) + G(q_0)^T lambda)
//   q_1     = q_0 + h/2 (H_p(q_0, p_{1/2}) + H_p(q_1, p_{1/2}))
//   0       = g(q_1)
//   p_1     = p_{1/2} - h/2 (H_q(q_1, p_{1/2}) + G(q_1)^T mu)
//   0       = G(q_1) H_p(q_1, p_1)
// (seed 000, whose Jacobian had the sign of the mu * d2g term wrong).  SHAKE
// (seed 002, §5.1.3) is the same map without the last projection (mu = 0);
// its positions are those of RATTLE.
//
// The paths live in src/core/constrained/: SeparableRattle.hpp (separable
// H = T(p) + V(q), with the fast path for quadratic T), GeneralRattle.hpp
// (general H: one Newton system); they share RattleState.hpp (G cache,
// rank bookkeeping, step continuity) and RattleAcceptance.hpp (round-off
// floors and acceptance tests).  This class only dispatches to them.
//
// Redundant constraints / singular configurations (seed 001): the multiplier
// systems are solved by a rank-revealing complete orthogonal decomposition,
// giving minimum-norm multipliers; such events are counted in
// stats().rank_deficient and reported by rank_deficiency_seen().
#ifndef ODEPKG_RATTLE_HPP
#define ODEPKG_RATTLE_HPP

#include "NewtonSolver.hpp"
#include "Stepper.hpp"
#include "constrained/GeneralRattle.hpp"
#include "constrained/RattleAcceptance.hpp"
#include "constrained/RattleState.hpp"
#include "constrained/SeparableRattle.hpp"

namespace odepkg {

class Rattle final : public Stepper {
 public:
  /// Pivots below this fraction of the largest one count as zero.
  static constexpr double rank_tolerance = RattleState::rank_tolerance;
  static constexpr double kResidualAtIterate = RattleAcceptance::kResidualAtIterate;
  static constexpr double kRoundoffLeft = RattleAcceptance::kRoundoffLeft;

  Rattle(HamiltonianProblem& problem, bool separable, bool shake = false,
         NewtonOptions newton = NewtonOptions())
      : Stepper(problem),
        state_(problem, shake, newton),
        separable_(separable),
        separable_path_(state_),
        general_path_(state_),
        errG_(shake ? problem.constraints() : 0, shake ? problem.dim() : 0),
        errS_(shake ? problem.constraints() : 0, shake ? problem.constraints() : 0),
        errw_(shake ? problem.constraints() : 0),
        errldlt_(shake ? problem.constraints() : 0) {}

  const char* name() const override { return state_.shake ? "shake" : "rattle"; }
  int order() const override { return 2; }

  void reset() override {
    general_path_.reset();
    separable_path_.reset();
  }

  StepStatus step(Point& from, double h, Point& to) override {
    if (!separable_) return general_path_.step(from, h, to);
    return separable_path_.step(from, h, to);
  }

  /// SHAKE's momenta are not projected: their component along G(q_1)' is
  /// O(h) and differs between the step and the two half steps, but the
  /// next step's multiplier absorbs it (the positions, what SHAKE carries,
  /// do not depend on it).  The estimate keeps e_q and the rest of e_p:
  /// e_p <- e_p - G' (G G')^{-1} G e_p at q_1 (G(q_1) from the step's
  /// gradient cache: no extra call; left as is where G G' is singular).  Without this adaptive SHAKE sees
  /// an O(h) "error" and crawls (issue 13, defect 4).
  bool restrict_error(const Point& to, const Point&, double, VecRef err) override {
    if (!state_.shake || errG_.rows() == 0) return true;
    const int d = problem_.dim();
    if (!state_.grads.grad_at(to.x.head(d), errG_)) return false;
    errS_.noalias() = errG_ * errG_.transpose();
    errldlt_.compute(errS_);
    if (errldlt_.info() != Eigen::Success || !(errldlt_.vectorD().minCoeff() > 0.0)) return true;
    errw_.noalias() = errG_ * err.tail(d);
    errldlt_.solveInPlace(errw_);
    err.tail(d).noalias() -= errG_.transpose() * errw_;
    return true;
  }

  /// A rank-deficient multiplier system was met (warn once).
  bool rank_deficiency_seen() const { return state_.rank_seen; }
  /// Start time of the first step that met one (NaN if none).
  double rank_deficiency_t() const { return state_.rank_t; }
  /// Largest condition estimate of the multiplier systems met so far
  /// (infinite if an exactly singular one was met).
  double condition_estimate() const { return state_.cond_max; }

  // ---- the general path's nonlinear system, exposed for tests ------------
  /// Size 3d + 2m of y = [v; p_{1/2}; p_1; h/2 lambda; h/2 mu].
  int system_size() const { return general_path_.system_size(); }
  /// Residual of the general system for the step (from, h) at y.
  bool system_residual(const Point& from, double h, const ConstVecRef& y, VecRef r) {
    return general_path_.system_residual(from, h, y, r);
  }
  /// Its Jacobian, analytic (needs both Hessians) or by finite differences.
  bool system_jacobian(const Point& from, double h, const ConstVecRef& y, MatRef J,
                       bool finite_differences) {
    return general_path_.system_jacobian(from, h, y, J, finite_differences);
  }

 private:
  RattleState state_;  // first: the paths hold references to it
  bool separable_;
  SeparableRattle separable_path_;
  GeneralRattle general_path_;
  Mat errG_, errS_;  // restrict_error (SHAKE): G(q_1) and G G'
  Vec errw_;
  Eigen::LDLT<Mat> errldlt_;
};

}  // namespace odepkg

#endif
