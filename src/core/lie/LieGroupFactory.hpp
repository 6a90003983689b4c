// LieGroupFactory.hpp — the group of odeRATTLie's option "LieGroup" by name:
//   "R<k>" (k ≥ 1), "SO3", "S3", "SE3", "S3sdR3", direct products "AxBxC" in
//   that order, a factor repeated by "^k" ("S3xR3^2" = S3 × R3 × R3), and
//   "Rn" alone, whose n follows from the state size nq + n = 2n.
// A single factor is returned as itself, not as a one-factor product.
#ifndef ODEPKG_LIE_LIE_GROUP_FACTORY_HPP
#define ODEPKG_LIE_LIE_GROUP_FACTORY_HPP

#include "lie/LieGroup.hpp"
#include "lie/ProductGroup.hpp"
#include "lie/RnGroup.hpp"
#include "lie/S3Group.hpp"
#include "lie/S3sdR3Group.hpp"
#include "lie/SE3Group.hpp"
#include "lie/SO3Group.hpp"

#include <memory>
#include <string>
#include <vector>

namespace odepkg::lie {

namespace detail {

/// A positive decimal integer without sign or leading zero, else −1.
inline int parse_positive(const std::string& s) {
  if (s.empty() || s.size() > 6 || s[0] == '0') return -1;
  int k = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return -1;
    k = 10 * k + (ch - '0');
  }
  return k;
}

[[noreturn]] inline void unknown_group(const std::string& part, const std::string& spec) {
  throw InputError("invalidOption",
                   "LieGroup: unknown group \"" + part + "\" in \"" + spec +
                       "\"; expected R<k> (k >= 1, e.g. \"R3\"), \"SO3\", \"S3\", \"SE3\", \"S3sdR3\", "
                       "their direct products joined by \"x\" (a factor may be repeated as \"^k\", "
                       "e.g. \"S3xR3^2\"), or \"Rn\" alone");
}

/// One factor name without "^k", or nullptr.
inline std::unique_ptr<LieGroup> make_factor(const std::string& name) {
  if (name == "SO3") return std::make_unique<SO3Group>();
  if (name == "S3") return std::make_unique<S3Group>();
  if (name == "SE3") return std::make_unique<SE3Group>();
  if (name == "S3sdR3") return std::make_unique<S3sdR3Group>();
  if (name.size() > 1 && name[0] == 'R') {
    const int k = parse_positive(name.substr(1));
    if (k >= 1) return std::make_unique<RnGroup>(k);
  }
  return nullptr;
}

}  // namespace detail

inline std::unique_ptr<LieGroup> make_lie_group(const std::string& spec, int state_size) {
  if (spec == "Rn") {
    if (state_size < 2 || state_size % 2 != 0)
      throw InputError("invalidOption", "LieGroup \"Rn\": the state size (nq + n = 2n) must be even and "
                                        "at least 2, got " + std::to_string(state_size));
    return std::make_unique<RnGroup>(state_size / 2);
  }
  std::vector<std::unique_ptr<LieGroup>> factors;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = spec.find('x', start);
    const std::string part = spec.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::size_t caret = part.find('^');
    int repeat = 1;
    if (caret != std::string::npos) {
      repeat = detail::parse_positive(part.substr(caret + 1));
      if (repeat < 1) detail::unknown_group(part, spec);
    }
    const std::string name = part.substr(0, caret);
    for (int r = 0; r < repeat; ++r) {
      auto g = detail::make_factor(name);
      if (!g) detail::unknown_group(part, spec);
      factors.push_back(std::move(g));
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (factors.size() == 1) return std::move(factors.front());
  return std::make_unique<ProductGroup>(std::move(factors));
}

}  // namespace odepkg::lie

#endif
