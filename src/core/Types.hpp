// Types.hpp — vector/matrix aliases, step statuses and the typed fatal errors
// of the core.  Expected numerical failures are statuses the loop handles;
// fatal problems are exceptions the bindings map to Octave errors.
#ifndef ODEPKG_TYPES_HPP
#define ODEPKG_TYPES_HPP

#include "EigenConfig.hpp"

#include <Eigen/SparseCore>

#include <stdexcept>
#include <string>

namespace odepkg {

using Vec = Eigen::VectorXd;
using Mat = Eigen::MatrixXd;
using VecRef = Eigen::Ref<Vec>;
using ConstVecRef = Eigen::Ref<const Vec>;
using MatRef = Eigen::Ref<Mat>;
/// Compressed sparse columns (the layout of Octave's sparse matrices).
using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

/// Sparse constraint gradients are made dense for the methods that need a
/// dense G only up to this many entries m d (32 MB); above it they are refused.
constexpr double kMaxDensifiedEntries = 4e6;

/// Outcome of one step attempt.  Anything but Success is recoverable by a
/// smaller step in adaptive mode and ends a fixed-step run.
enum class StepStatus {
  Success,
  NewtonDiverged,   ///< Newton did not converge within its iteration budget
  NonFinite,        ///< a NaN/Inf appeared in the state or in a callback
  ConstraintsViolated,  ///< Newton settled on a point with g(q_1) != 0 (singular G)
  DistantRoot,      ///< the constraint equations' only root found is far from the unconstrained step
};

inline const char* describe(StepStatus s) {
  switch (s) {
    case StepStatus::Success: return "success";
    case StepStatus::NewtonDiverged: return "Newton iteration did not converge";
    case StepStatus::NonFinite: return "non-finite value in the state or in a user function";
    case StepStatus::ConstraintsViolated:
      return "the constraints cannot be satisfied: g(q) stays away from 0 (a singular or zero ConstraintGradFcn?)";
    case StepStatus::DistantRoot:
      return "the constrained step's equations have no root near the unconstrained step (only a distant one, "
             "on another branch of the constraint manifold): reduce the step size";
  }
  return "unknown status";
}

/// Fatal error caused by the user's input or callbacks (wrong sizes, ...).
/// `id` is the suffix of the Octave identifier "odepkg:<id>".
struct InputError : std::runtime_error {
  InputError(std::string id_, const std::string& msg)
      : std::runtime_error(msg), id(std::move(id_)) {}
  std::string id;
};

}  // namespace odepkg

#endif
