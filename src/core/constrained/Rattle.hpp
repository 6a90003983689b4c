// Rattle.hpp — the classical RATTLE and SHAKE for holonomic constraints
//   q' = H_p,  p' = -H_q - G(q)^T lambda,  g(q) = 0        (HLW §VII.1.4),
// order 2, symmetric, symplectic on M = {g = 0, G H_p = 0}:
//   p_{1/2} = p_0 - h/2 (H_q(q_0, p_{1/2}) + G(q_0)^T lambda)
//   q_1     = q_0 + h/2 (H_p(q_0, p_{1/2}) + H_p(q_1, p_{1/2}))
//   0       = g(q_1)
//   p_1     = p_{1/2} - h/2 (H_q(q_1, p_{1/2}) + G(q_1)^T mu)
//   0       = G(q_1) H_p(q_1, p_1)
// (the 2013 odepkg rattle, blog post "RATTLE algorithm", whose Jacobian had
// the sign of the mu * d2g term wrong).  SHAKE (McLachlan et al. 2014,
// §5.1.3) is the same map without the last projection (mu = 0);
// its positions are those of RATTLE.
//
// This is geometric RATTLE (McLachlan et al. 2014, Def. 1.3/1.4) over Störmer–Verlet on
// the holonomic fibres {(q, p - G(q)^T s)} (Sect. 5.1.3): lambda and mu are
// the fibre parameters s and sigma scaled by 2/h.  For general H the step is
// literally that instance, GeometricRattle(HolonomicConstraints,
// HolonomicFibre, StormerVerletMap).  For separable H = T(p) + V(q) the
// same two projections have closed forms that the generic Newton cannot
// see: Störmer–Verlet is explicit, the fibre enters p_{1/2} linearly, and for
// quadratic T the SHAKE equation is g(affine in s) and the RATTLE one linear
// in sigma; SeparableRattle solves them so (about 4 callbacks per step
// instead of 11), sharing RattleState (G cache, rank bookkeeping, step
// continuity) and RattleAcceptance (round-off floors, acceptance tests).
//
// Redundant constraints / singular configurations (G(q) loses rank): the multiplier
// systems are solved by a rank-revealing complete orthogonal decomposition,
// giving minimum-norm multipliers; such events are counted in
// stats().rank_deficient and reported by rank_deficiency_seen().
//
// A sparse ConstraintGradFcn (HamiltonianProblem::set_sparse_constraint_grad)
// takes SparseSeparableRattle on the separable path: O(nnz(G)) per step,
// no dense m x d matrix.  On the general path GeometricRattle keeps its
// Newton systems sparse (SparseGeometricNewton): the SHAKE system in (w, s)
// and the m x m RATTLE matrix -G H_pp G^T assembled on fixed patterns and
// factorized by a sparse LU (FixedPatternLU, without allocation; Eigen's
// SparseLU where a pivot is tiny; analysed once per pattern, a numeric
// factorization per refresh, reused across Newton iterations; rank
// deficiency from its pivots, then a rank-revealing sparse QR).  The
// Hessian of H comes sparse from a HamiltonianHessFcn returning a sparse
// matrix; without one it is differenced densely (2d calls of f) while
// 4 d^2 <= kMaxDensifiedEntries and refused above (odepkg:invalidOption).
#ifndef ODEPKG_RATTLE_HPP
#define ODEPKG_RATTLE_HPP

#include "NewtonSolver.hpp"
#include "Stepper.hpp"
#include "constrained/BaseMethodFactory.hpp"
#include "constrained/ConstraintSet.hpp"
#include "constrained/FibreMap.hpp"
#include "constrained/GeometricRattle.hpp"
#include "constrained/RattleAcceptance.hpp"
#include "constrained/RattleState.hpp"
#include "constrained/SeparableRattle.hpp"
#include "constrained/SparseSeparableRattle.hpp"

#include <memory>
#include <optional>
#include <string>

namespace odepkg {

class Rattle final : public Stepper {
 public:
  /// Pivots below this fraction of the largest one count as zero.
  static constexpr double rank_tolerance = RattleState::rank_tolerance;
  static constexpr double kRoundoffLeft = RattleAcceptance::kRoundoffLeft;

  Rattle(HamiltonianProblem& problem, bool separable, bool shake = false,
         NewtonOptions newton = NewtonOptions())
      : Stepper(problem),
        state_(problem, shake, newton) {
    const bool sparse = problem.has_sparse_constraint_grad();
    if (!separable) {
      general_path_ = classical_instance(problem, shake, newton);
    } else if (sparse) {
      sparse_path_ = std::make_unique<SparseSeparableRattle>(state_);
    } else {
      separable_path_ = std::make_unique<SeparableRattle>(state_);
    }
    if (shake && !sparse) {
      const int m = problem.constraints(), d = problem.dim();
      errG_.resize(m, d);
      errDg_.resize(m, 2 * d);
      errS_.resize(m, m);
      errw_.resize(m);
      // constructed in place: a moved-from LDLT(m) copies its uninitialised
      // m_info (UBSan: "not a valid value for type 'ComputationInfo'")
      errldlt_.emplace(m);
    }
  }

  const char* name() const override { return state_.shake ? "shake" : "rattle"; }
  int order() const override { return 2; }
  /// RATTLE is symmetric (HLW Sect. VII.1.4), SHAKE is not.
  bool symmetric() const override { return !state_.shake; }
  int guess_size() const override { return general_path_ ? general_path_->guess_size() : 0; }
  void save_guess(VecRef g) const override {
    if (general_path_) general_path_->save_guess(g);
  }
  void load_guess(const ConstVecRef& g) override {
    if (general_path_) general_path_->load_guess(g);
  }
  void begin_side_steps() override {
    if (general_path_) general_path_->begin_side_steps();
  }
  void end_side_steps() override {
    if (general_path_) general_path_->end_side_steps();
  }

  void reset() override {
    if (separable_path_) separable_path_->reset();
    if (sparse_path_) sparse_path_->reset();
    if (general_path_) general_path_->reset();
  }

  /// Separable path ("Explicit"): H = T(p) + V(q) verified (SeparabilityProbe).
  void check_claims(double t, const ConstVecRef& x, const ConstVecRef& fx) override {
    if (separable_path_) separable_path_->check_claims(t, x, fx);
    if (sparse_path_) sparse_path_->check_claims(t, x, fx);
  }

  /// The sparse separable path checks its result (in its last pass).
  bool checks_finite_state() const override { return sparse_path_ != nullptr; }

  StepStatus step(Point& from, double h, Point& to) override {
    if (general_path_) return general_path_->step(from, h, to);
    if (sparse_path_) return sparse_path_->step(from, h, to);
    return separable_path_->step(from, h, to);
  }

  /// SHAKE's momenta are not projected: their component along G(q_1)' is
  /// O(h) and differs between the step and the two half steps, but the
  /// next step's multiplier absorbs it (the positions, what SHAKE carries,
  /// do not depend on it).  The estimate keeps e_q and the rest of e_p:
  /// e_p <- e_p - G' (G G')^{-1} G e_p at q_1 (G(q_1) from the step's
  /// gradient cache: no extra call; left as is where G G' is singular).  Without this adaptive SHAKE sees
  /// an O(h) "error" and crawls (issue 13, defect 4).
  bool restrict_error(const Point& to, const Point&, double, VecRef err) override {
    if (!state_.shake) return true;
    const int d = problem_.dim();
    if (sparse_path_) return sparse_path_->restrict_momenta(to.x.head(d), err.tail(d));
    if (general_path_ && general_path_->sparse()) return general_path_->restrict_momenta(to.x.head(d), err.tail(d));
    if (errG_.rows() == 0) return true;
    if (general_path_) {
      if (!general_path_->constraints().grad(to.x, errDg_)) return false;
      errG_ = errDg_.leftCols(d);
    } else if (!state_.grads.grad_at(to.x.head(d), errG_)) {
      return false;
    }
    errS_.noalias() = errG_ * errG_.transpose();
    errldlt_->compute(errS_);
    if (errldlt_->info() != Eigen::Success || !(errldlt_->vectorD().minCoeff() > 0.0)) return true;
    errw_.noalias() = errG_ * err.tail(d);
    errldlt_->solveInPlace(errw_);
    err.tail(d).noalias() -= errG_.transpose() * errw_;
    return true;
  }

  /// The constraint gradients stay sparse (either path).
  bool sparse() const { return sparse_path_ || (general_path_ && general_path_->sparse()); }

  /// The separable path for a sparse G (null on the others).
  const SparseSeparableRattle* sparse_separable() const { return sparse_path_.get(); }

  /// A rank-deficient multiplier system was met (warn once).
  bool rank_deficiency_seen() const {
    return general_path_ ? general_path_->rank_deficiency_seen() : state_.rank_seen;
  }
  /// Start time of the first step that met one (NaN if none).
  double rank_deficiency_t() const {
    return general_path_ ? general_path_->rank_deficiency_t() : state_.rank_t;
  }
  /// Whether the position multipliers of a rank-deficient system are the
  /// minimum-norm ones: on the dense paths; the sparse path's are one
  /// solution (its velocity multipliers are minimum-norm).
  bool minimum_norm_position_multipliers() const { return !sparse(); }
  /// The velocity multipliers are minimum-norm: on the dense paths and the
  /// separable sparse one; the general sparse path's are one solution.
  bool minimum_norm_velocity_multipliers() const { return !(general_path_ && general_path_->sparse()); }
  /// Largest condition estimate of the multiplier systems met so far
  /// (infinite if an exactly singular one was met).
  double condition_estimate() const {
    return general_path_ ? general_path_->condition_estimate() : state_.cond_max;
  }

 private:
  /// Geometric RATTLE (SHAKE) over Störmer–Verlet on the holonomic fibres.
  static std::unique_ptr<GeometricRattle> classical_instance(HamiltonianProblem& problem, bool shake,
                                                             NewtonOptions newton) {
    auto g = std::make_unique<HolonomicConstraints>(problem);
    auto fibre = std::make_unique<HolonomicFibre>(*g);
    return std::make_unique<GeometricRattle>(problem, std::move(g), std::move(fibre),
                                             make_base_method("stormer_verlet", problem), shake, newton);
  }

  RattleState state_;  // first: the separable path holds a reference to it
  std::unique_ptr<SeparableRattle> separable_path_;      // dense G
  std::unique_ptr<SparseSeparableRattle> sparse_path_;  // sparse G
  std::unique_ptr<GeometricRattle> general_path_;
  Mat errG_, errDg_, errS_;  // restrict_error (SHAKE): G(q_1), Dg(z_1) and G G'
  Vec errw_;
  std::optional<Eigen::LDLT<Mat>> errldlt_;  // SHAKE on a dense G only
};

}  // namespace odepkg

#endif
