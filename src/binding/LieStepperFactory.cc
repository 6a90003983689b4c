// LieStepperFactory.cc — make_lie_stepper (LieProblem.h): the dense and the
// sparse RATTLie, constructed (and so compiled) in this translation unit of
// the package's oct-file only.
#include "EigenConfig.hpp"
#include "LieProblem.h"

#include "lie/NonholonomicRattLie.hpp"
#include "lie/RattLie.hpp"
#include "lie/SparseRattLie.hpp"

#include <memory>
#include <string>

namespace odepkg::binding {

std::unique_ptr<lie::LieStepper> make_lie_stepper(lie::LieGroupProblem& lp, const NewtonOptions& opts,
                                                  const std::string& who) {
  if (lp.has_sparse_constraint_grad()) {
    if (!lie::SparseRattLie::blocks_for(lp).empty()) return std::make_unique<lie::SparseRattLie>(lp, opts);
    if (static_cast<double>(lp.constraints()) * lp.n() > kMaxDensifiedEntries ||
        static_cast<double>(lp.n()) * lp.n() > kMaxDensifiedEntries)
      error_with_id("odepkg:invalidOption",
                    "%s: option \"MassMatrix\" couples the factors of the group, so the sparse ConstraintGradFcn "
                    "cannot be used as such (the sparse RATTLie needs M block diagonal with one block per "
                    "factor), and the dense RATTLie would have to make the %d-by-%d B dense (more than 4e6 entries)",
                    who.c_str(), lp.constraints(), lp.n());
  }
  return std::make_unique<lie::RattLie>(lp, opts);
}

std::unique_ptr<lie::LieStepper> make_nonholonomic_lie_stepper(lie::LieGroupProblem& lp, OctaveLieProblem& op,
                                                               const NewtonOptions& opts, const std::string& who) {
  const int k = op.velocity_constraints(), m = lp.constraints(), n = lp.n();
  if (k + m >= n)
    error_with_id("odepkg:invalidOption",
                  "%s: options \"NonholonomicsNb\" + \"ConstraintsNb\" (%d + %d) must be smaller than the dimension "
                  "of %s (%d)", who.c_str(), k, m, lp.group().name().c_str(), n);
  if (static_cast<double>(n) * n > kMaxDensifiedEntries)
    error_with_id("odepkg:invalidOption",
                  "%s: option \"NonholonomicFcn\" runs the dense RATTLie (n-by-n matrices), and n = %d is too "
                  "large for that (more than 4e6 entries)", who.c_str(), n);
  lp.require_densifiable("the nonholonomic RATTLie (NonholonomicFcn)");
  return std::make_unique<lie::NonholonomicRattLie>(lp, k, op.velocity_constraint(), opts);
}

bool project_nonholonomic_velocity(lie::LieStepper& stepper, VecRef y, double& before, double& after) {
  auto* nh = dynamic_cast<lie::NonholonomicRattLie*>(&stepper);
  return nh && nh->project_velocity(y, before, after);
}

bool is_sparse_rattlie(const lie::LieStepper& stepper) {
  return dynamic_cast<const lie::SparseRattLie*>(&stepper) != nullptr;
}

}  // namespace odepkg::binding
