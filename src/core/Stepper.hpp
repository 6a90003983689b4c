// Stepper.hpp — the one-step map interface shared by every method.
#ifndef ODEPKG_STEPPER_HPP
#define ODEPKG_STEPPER_HPP

#include "HamiltonianProblem.hpp"
#include "Types.hpp"

#include <cmath>
#include <utility>

namespace odepkg {

/// A point of the trajectory with the stepper's cached force.
///
/// `force` holds the p-part of f (that is -dH/dq, or the acceleration a for
/// velocity Verlet) at `x`, valid when `has_force`.  Explicit methods for
/// separable H produce it at the end of a step and reuse it at the start of
/// the next one ("first same as last"), so each step evaluates f only as often
/// as the method needs.
///
/// `comp` is the compensation of compensated summation (CompensatedSum.hpp):
/// the rounding error of the sums that produced `x`, carried into the next
/// step's increments by steppers with set_compensated_summation(true) (zero
/// otherwise).  It lives with the state, so the loop's copies and swaps of
/// points, a rejected attempt (which never touches the current point) and a
/// composition's substeps carry it as they carry x.
struct Point {
  double t = 0.0;
  Vec x;
  Vec force;
  Vec comp;
  bool has_force = false;

  Point() = default;
  explicit Point(int state_size) : x(state_size), force(state_size / 2), comp(Vec::Zero(state_size)) {}
  void set(double t_, const ConstVecRef& x_) {
    t = t_;
    x = x_;
    comp.setZero(x_.size());
    has_force = false;
  }
};

/// Steps of the same size up to round-off (t_end - t of a fixed-step loop
/// differs from h in the last bits): for the equal-step predictors.
inline bool same_step(double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(a); }

class Stepper {
 public:
  explicit Stepper(HamiltonianProblem& problem) : problem_(problem) {}
  virtual ~Stepper() = default;
  Stepper(const Stepper&) = delete;
  Stepper& operator=(const Stepper&) = delete;

  virtual const char* name() const = 0;
  /// Classical order p of the method (local error O(h^{p+1})).
  virtual int order() const = 0;
  /// One step of size h (of either sign) from `from` to `to`.  May fill
  /// `from.force` if it was missing.  Must not allocate.
  virtual StepStatus step(Point& from, double h, Point& to) = 0;

  /// Steppers with an error estimate of their own (SPVI: the same step with
  /// one more mode and node, as the 2013 spectral_var_int) return true and implement
  /// step_with_error; the others are estimated by step doubling.
  virtual bool has_error_estimate() const { return false; }
  /// One step as step(), and err = estimate of the local error of `to`.
  virtual StepStatus step_with_error(Point& from, double h, Point& to, VecRef err) {
    (void)err;
    return step(from, h, to);
  }

  /// Step doubling's estimate err = (to - full) / denom of the error of `to`
  /// (two half steps; `full` the one step), restricted to what the method
  /// carries into the next step (SHAKE: not its momenta along G(q)', which
  /// the next step's multiplier absorbs; geometric SHAKE: not its position
  /// along the fibre).  May call the problem's functions; must not
  /// allocate.  False: a callback failed.
  virtual bool restrict_error(const Point& to, const Point& full, double denom, VecRef err) {
    (void)to;
    (void)full;
    (void)denom;
    (void)err;
    return true;
  }

  /// Verify, before the first step from (t, x) with fx = f(t, x), what the
  /// scheme assumes of the problem beyond what f says at one point
  /// ("Explicit": a separable H, SeparabilityProbe); throws InputError when
  /// it does not hold.  Its calls of f are counted like any other.
  virtual void check_claims(double t, const ConstVecRef& x, const ConstVecRef& fx) {
    (void)t;
    (void)x;
    (void)fx;
  }

  /// True when every successful step() ends with a finite `to.x` (the
  /// stepper returns NonFinite otherwise), so the loop need not check it
  /// again.  Asked once per run.
  virtual bool checks_finite_state() const { return false; }

  /// Drop cached factorizations and guesses (after a rejected step, say).
  virtual void reset() {}

  /// Sum the state updates x_{n+1} = x_n + delta with compensation
  /// (CompensatedSum.hpp), reading and writing Point::comp.  False when the
  /// method does not implement it (and `on`): the caller refuses the option.
  virtual bool set_compensated_summation(bool on) { return !on; }

  /// The map is symmetric, Phi_h^{-1} = Phi_{-h} (Hairer, Lubich, Wanner,
  /// "Geometric Numerical Integration", Sect. V.1): only then does a
  /// symmetric composition raise its order (CompositionStepper), and only
  /// then may the reversible step control (ReversibleStepDensity) wrap it.
  virtual bool symmetric() const { return false; }

  /// Newton's warm start, for composition methods: the state (of
  /// guess_size() numbers) the stepper's guess for its next step is made
  /// from.  A composition saves it after its i-th substep and loads it
  /// before the i-th substep of its next step, so each stage starts from the
  /// same stage of the previous step, not from the previous substep (of
  /// another size, maybe of the other sign).  Must not allocate.
  virtual int guess_size() const { return 0; }
  virtual void save_guess(VecRef g) const { (void)g; }
  virtual void load_guess(const ConstVecRef& g) { (void)g; }

  /// Side steps: steps from y_n outside the sequence y_n -> y_{n+1} (the
  /// shortened output steps and the event location of ReversibleIntegrator).
  /// Between begin_side_steps() (called after the step to y_{n+1}) and
  /// end_side_steps() the stepper keeps the warm start of its sequence, so
  /// the step from y_{n+1} is the one it takes without side steps.  Must not
  /// allocate.  Default: no warm start to keep.
  virtual void begin_side_steps() {}
  virtual void end_side_steps() {}

  HamiltonianProblem& problem() { return problem_; }

 protected:
  /// Fill from.force = f_p(t, x) if absent, using `work` (size 2d).  A
  /// template so that the usual case, a cached force, builds no Ref.
  template <class Work>
  bool ensure_force(Point& from, Work&& work) {
    if (from.has_force) return true;
    if (!problem_.field(from.t, from.x, std::forward<Work>(work))) return false;
    from.force = work.tail(problem_.dim());
    from.has_force = true;
    return true;
  }

  HamiltonianProblem& problem_;
};

}  // namespace odepkg

#endif
