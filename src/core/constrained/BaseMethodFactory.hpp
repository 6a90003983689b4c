// BaseMethodFactory.hpp — the base method of geometric SHAKE/RATTLE by name.
#ifndef ODEPKG_CONSTRAINED_BASE_METHOD_FACTORY_HPP
#define ODEPKG_CONSTRAINED_BASE_METHOD_FACTORY_HPP

#include "constrained/ImplicitMidpointMap.hpp"
#include "constrained/StormerVerletMap.hpp"
#include "constrained/SymplecticEulerMap.hpp"

#include <memory>
#include <string>

namespace odepkg {

inline std::unique_ptr<BaseMethod> make_base_method(const std::string& name, HamiltonianProblem& problem) {
  if (name == "midpoint") return std::make_unique<ImplicitMidpointMap>(problem);
  if (name == "stormer_verlet") return std::make_unique<StormerVerletMap>(problem);
  if (name == "symplectic_euler") return std::make_unique<SymplecticEulerMap>(problem);
  throw InputError("invalidOption", "unknown BaseMethod \"" + name +
                                        "\" (expected \"midpoint\", \"stormer_verlet\" or \"symplectic_euler\")");
}

}  // namespace odepkg

#endif
