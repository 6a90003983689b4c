// LieStepper.hpp — what the odeRATTLie binding asks of a RATTLie stepper
// beyond Stepper: the multipliers at an output state and the reports after
// the run.  Implemented by the dense RattLie and the sparse SparseRattLie.
#ifndef ODEPKG_LIE_LIE_STEPPER_HPP
#define ODEPKG_LIE_LIE_STEPPER_HPP

#include "../Stepper.hpp"

namespace odepkg::lie {

class LieStepper : public Stepper {
 public:
  explicit LieStepper(HamiltonianProblem& embedded) : Stepper(embedded) {}
  /// λ(t) at a state y = [q; v] of the trajectory (the index-1 multipliers).
  virtual bool multipliers(double t, const ConstVecRef& y, VecRef lambda) = 0;
  virtual bool velocity_dependent() const = 0;
  virtual bool rank_deficiency_seen() const = 0;
  virtual double rank_deficiency_t() const = 0;
  virtual double condition_estimate() const = 0;
  /// Whether the position multipliers λ of a rank-deficient system are the
  /// minimum-norm ones (the dense path), or one solution of it (the sparse
  /// path, whose velocity multipliers μ are minimum-norm).
  virtual bool minimum_norm_position_multipliers() const = 0;
};

}  // namespace odepkg::lie

#endif
