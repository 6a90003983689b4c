// EnsembleMethod.hpp — a one-step method applied to many members at once,
// each member with its own outcome.
//
// A method is stateless between steps except for what it learned at the
// start (the velocity model): whatever a member carries from step to step
// (RATTLE's constraint gradients and multipliers, the warm start of its
// Newton iteration) lives in that member's `aux` column, so a trial step
// (step doubling, event location) is a step like any other and the caller
// keeps or drops its result.
#ifndef ODEPKG_ENSEMBLE_METHOD_HPP
#define ODEPKG_ENSEMBLE_METHOD_HPP

#include "ensemble/EnsembleProblem.hpp"

namespace odepkg::ensemble {

class EnsembleMethod {
 public:
  explicit EnsembleMethod(EnsembleProblem& pb) : pb_(pb) {}
  virtual ~EnsembleMethod() = default;
  EnsembleMethod(const EnsembleMethod&) = delete;
  EnsembleMethod& operator=(const EnsembleMethod&) = delete;

  virtual const char* name() const = 0;
  virtual int order() const = 0;
  virtual bool symmetric() const = 0;
  /// Numbers a member carries from step to step (0: none).
  virtual int aux_size() const { return 0; }

  /// From the initial states X0 (n x K) with F0 = f(t0, X0): checks and
  /// learns what the method assumes (throws InputError if it does not
  /// hold), and fills the members' force (d x K: the p-part of f) and aux.
  virtual void start(double t0, const ConstMatRef& X0, const ConstMatRef& F0, MatRef force, MatRef aux) = 0;

  /// One step of size h from t for the k members ids[0..k-1], whose states,
  /// forces and aux are the first k columns of X0, force0, aux0 (in the
  /// order of ids); writes the first k columns of X1, force1, aux1 and a
  /// status per member.  Must not allocate.
  virtual void step(double t, double h, const int* ids, int k, const ConstMatRef& X0,
                    const ConstMatRef& force0, const ConstMatRef& aux0, MatRef X1, MatRef force1,
                    MatRef aux1, StepStatus* status) = 0;

  EnsembleProblem& problem() { return pb_; }

 protected:
  EnsembleProblem& pb_;
};

}  // namespace odepkg::ensemble

#endif
