// CompositionStepper.hpp — a symmetric composition of a symmetric one-step map
//   Psi_h = Phi_{g_s h} o ... o Phi_{g_1 h}
// (Hairer, Lubich, Wanner, "Geometric Numerical Integration", Sect. II.4 and
// V.3): of the table's order, symplectic and symmetric when Phi is, and on
// the constraint manifold when Phi is (RATTLE: each substep ends on it).
//
// Calls of f: the substeps pass their end point, with its cached force, to
// the next one, so explicit Störmer–Verlet and velocity Verlet evaluate the
// force once per stage (first same as last across substeps and, through the
// caller's Point, across steps; the force at q does not depend on the sign
// of the substep).  Implicit substeps start Newton from the same stage of
// the previous step (Stepper::save_guess/load_guess), not from the previous
// substep, whose size (g_{i-1} h, maybe of the other sign) says little about
// this one's.
//
// Compensated summation (set_compensated_summation): the base method's,
// with the compensation passed from substep to substep in the intermediate
// points as their states are, so the s substeps' increments are summed as
// one compensated sequence.
//
// No allocation per step: two intermediate points and the s guess states are
// sized at construction.
#ifndef ODEPKG_COMPOSITION_STEPPER_HPP
#define ODEPKG_COMPOSITION_STEPPER_HPP

#include "Stepper.hpp"
#include "composition/CompositionTables.hpp"

#include <memory>
#include <string>

namespace odepkg {

class CompositionStepper final : public Stepper {
 public:
  /// Throws InputError("invalidOption") if `base` is not symmetric.
  CompositionStepper(std::unique_ptr<Stepper> base, const composition::CompositionTable& table)
      : Stepper(base->problem()),
        base_(std::move(base)),
        table_(table),
        mid_{Point(problem_.state_size()), Point(problem_.state_size())},
        guesses_(Mat::Zero(base_->guess_size(), table.stages)),
        have_guess_(Vec::Zero(table.stages)),
        side_guesses_(Mat::Zero(base_->guess_size(), table.stages)),
        side_have_guess_(Vec::Zero(table.stages)) {
    if (!base_->symmetric())
      throw InputError("invalidOption",
                       std::string("a composition (") + table.name + ") needs a symmetric base method; " +
                           base_->name() +
                           " is not (use Stormer-Verlet, velocity Verlet or RATTLE: odeSV, odeVV, odeRATTLE)");
    name_ = std::string(base_->name()) + "+" + table.name;
  }

  const char* name() const override { return name_.c_str(); }
  int order() const override { return table_.order; }
  bool symmetric() const override { return true; }
  int stages() const { return table_.stages; }
  const composition::CompositionTable& table() const { return table_; }
  Stepper& base() { return *base_; }

  bool set_compensated_summation(bool on) override { return base_->set_compensated_summation(on); }
  /// The last substep's check is the step's.
  bool checks_finite_state() const override { return base_->checks_finite_state(); }

  void reset() override {
    base_->reset();
    have_guess_.setZero();
  }

  /// The stages' warm starts and the base's, kept across side steps.
  void begin_side_steps() override {
    base_->begin_side_steps();
    side_guesses_ = guesses_;
    side_have_guess_ = have_guess_;
  }
  void end_side_steps() override {
    base_->end_side_steps();
    guesses_ = side_guesses_;
    have_guess_ = side_have_guess_;
  }

  StepStatus step(Point& from, double h, Point& to) override {
    if (guesses_.rows() == 0) return step_cold(from, h, to);
    // Implicit base: each stage starts Newton from the same stage of the
    // previous step.
    const int s = table_.stages;
    Point* a = &from;
    for (int i = 0; i < s; ++i) {
      Point& b = (i == s - 1) ? to : mid_[i % 2];
      if (have_guess_(i) != 0.0) base_->load_guess(guesses_.col(i));
      const StepStatus st = base_->step(*a, table_.weights[i] * h, b);
      if (st != StepStatus::Success) {
        have_guess_.setZero();
        return st;
      }
      base_->save_guess(guesses_.col(i));
      have_guess_(i) = 1.0;
      a = &b;
    }
    to.t = from.t + h;  // exactly, not the sum of the substeps
    return StepStatus::Success;
  }

  /// step() for a base without Newton guesses (the explicit ones): only
  /// the substeps, which are then most of the work (one call of f each).
  StepStatus step_cold(Point& from, double h, Point& to) {
    const int last = table_.stages - 1;
    const double* w = table_.weights;
    Point* a = &from;
    for (int i = 0; i <= last; ++i) {
      Point* b = i == last ? &to : &mid_[i & 1];
      const StepStatus st = base_->step(*a, w[i] * h, *b);
      if (st != StepStatus::Success) return st;
      a = b;
    }
    to.t = from.t + h;  // exactly, not the sum of the substeps
    return StepStatus::Success;
  }

  /// What the base method carries into its next step (SHAKE-like bases
  /// would restrict; the symmetric ones here keep every component).
  bool restrict_error(const Point& to, const Point& full, double denom, VecRef err) override {
    return base_->restrict_error(to, full, denom, err);
  }

 private:
  std::unique_ptr<Stepper> base_;
  const composition::CompositionTable& table_;
  Point mid_[2];
  Mat guesses_;      // column i: the base's guess state after stage i
  Vec have_guess_;   // 1 where column i is valid
  Mat side_guesses_;  // guesses_ and have_guess_ kept across side steps
  Vec side_have_guess_;
  std::string name_;
};

}  // namespace odepkg

#endif
