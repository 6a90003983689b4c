// SingularConstraintsWarning.h — the warning odepkg:singularConstraints after
// a run that met a rank-deficient multiplier system, saying what the
// multipliers then were: minimum-norm on the dense paths (complete
// orthogonal decompositions); on the sparse paths minimum-norm only for the
// velocity multipliers (LDLᵀ with the null space projected out, up to
// SparseGramSolver::kMaxNullDim dimensions) and one solution of the singular
// system for the position multipliers (LU with dropped pivots, or an
// iteration), with the same constraint forces.
#ifndef ODEPKG_BINDING_SINGULAR_CONSTRAINTS_WARNING_H
#define ODEPKG_BINDING_SINGULAR_CONSTRAINTS_WARNING_H

#include "constrained/SparseGramSolver.hpp"

#include <octave/oct.h>

namespace odepkg::binding {

/// `minimum_norm_positions`: the stepper's position multipliers were
/// minimum-norm (the dense paths), else only its velocity multipliers.
/// `minimum_norm_velocities` false too: the sparse general path (one
/// solution of each singular system, SparseRankRevealingLU).
inline void warn_singular_constraints(const char* who, double t, double cond, bool minimum_norm_positions,
                                      bool minimum_norm_velocities = true) {
  if (!minimum_norm_positions && !minimum_norm_velocities)
    warning_with_id("odepkg:singularConstraints",
                    "%s: rank-deficient constraint system met first at t = %.15g "
                    "(condition estimate %g); the sparse path used one solution of each singular "
                    "multiplier system (a rank-revealing sparse QR), with the same constraint forces",
                    who, t, cond);
  else if (minimum_norm_positions)
    warning_with_id("odepkg:singularConstraints",
                    "%s: rank-deficient constraint system met first at t = %.15g "
                    "(condition estimate %g); minimum-norm multipliers were used",
                    who, t, cond);
  else
    warning_with_id("odepkg:singularConstraints",
                    "%s: rank-deficient constraint system met first at t = %.15g "
                    "(condition estimate %g); the sparse path used minimum-norm velocity multipliers "
                    "(where the null space has dimension up to %d; one solution, with the same "
                    "constraint forces, above) and one solution of the singular position system",
                    who, t, cond, SparseGramSolver::kMaxNullDim);
}

}  // namespace odepkg::binding

#endif
