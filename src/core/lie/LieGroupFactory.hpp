// LieGroupFactory.hpp — the group of odeRATTLie's option "LieGroup" by name:
//   "R<k>" (k ≥ 1), "SO3", "S3", "SE3", "S3sdR3", direct products "AxBxC" in
//   that order, a factor repeated by "^k" ("S3xR3^2" = S3 × R3 × R3), a
//   parenthesised product repeated as a whole ("(S3xR3)^3" = S3 × R3 × S3 ×
//   R3 × S3 × R3: N bodies of one kind; parentheses nest), and "Rn" alone,
//   whose n follows from the state size nq + n = 2n.
// A single factor is returned as itself, not as a one-factor product; a
// product is flat (its factors are the named groups, in order).
#ifndef ODEPKG_LIE_LIE_GROUP_FACTORY_HPP
#define ODEPKG_LIE_LIE_GROUP_FACTORY_HPP

#include "lie/LieGroup.hpp"
#include "lie/ProductGroup.hpp"
#include "lie/RnGroup.hpp"
#include "lie/S3Group.hpp"
#include "lie/S3sdR3Group.hpp"
#include "lie/SE3Group.hpp"
#include "lie/SO3Group.hpp"

#include <algorithm>
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
                       "e.g. \"S3xR3^2\", a product in parentheses as a whole, e.g. \"(S3xR3)^10\"), "
                       "or \"Rn\" alone");
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

/// The repeat count of a suffix "" (1) or "^k" (k), else −1.
inline int parse_repeat(const std::string& suffix) {
  if (suffix.empty()) return 1;
  if (suffix[0] != '^') return -1;
  return parse_positive(suffix.substr(1));
}

/// Appends the factor names of the product starting at `pos` (up to the end
/// or an unmatched ')'), recursive descent on
///   product := term ('x' term)*,  term := name ['^' k] | '(' product ')' ['^' k].
inline void parse_product(const std::string& spec, std::size_t& pos, int depth, std::vector<std::string>& out) {
  // At most this many factors in all (10^6 bodies of two factors): a
  // mistyped exponent is refused before it exhausts the memory.
  constexpr std::size_t kMaxFactors = 2000000;
  while (true) {
    const std::size_t start = pos;
    std::vector<std::string> term;
    std::string suffix;
    if (pos < spec.size() && spec[pos] == '(') {
      ++pos;
      parse_product(spec, pos, depth + 1, term);
      if (pos >= spec.size() || spec[pos] != ')')
        unknown_group(spec.substr(start), spec);  // unbalanced
      ++pos;
      const std::size_t end = std::min(spec.find_first_of("x)", pos), spec.size());
      suffix = spec.substr(pos, end - pos);
      pos = end;
    } else {
      // a name ends at 'x', inside parentheses also at ')'
      const std::size_t end = std::min(spec.find_first_of(depth > 0 ? "x)" : "x", pos), spec.size());
      const std::string part = spec.substr(start, end - start);
      const std::size_t caret = part.find('^');
      const std::string name = part.substr(0, caret);
      if (!make_factor(name)) unknown_group(part, spec);
      term.push_back(name);
      suffix = caret == std::string::npos ? "" : part.substr(caret);
      pos = end;
    }
    const int repeat = parse_repeat(suffix);
    if (repeat < 1) unknown_group(spec.substr(start, pos - start), spec);
    if (out.size() + static_cast<std::size_t>(repeat) * term.size() > kMaxFactors)
      throw InputError("invalidOption", "LieGroup \"" + spec.substr(0, 60) + "\": more than " +
                                            std::to_string(kMaxFactors) + " factors");
    for (int r = 0; r < repeat; ++r) out.insert(out.end(), term.begin(), term.end());
    if (pos >= spec.size()) return;
    if (spec[pos] == ')') {
      if (depth == 0) unknown_group(spec.substr(pos), spec);  // unmatched ')'
      return;
    }
    ++pos;  // 'x'
  }
}

}  // namespace detail

inline std::unique_ptr<LieGroup> make_lie_group(const std::string& spec, int state_size) {
  if (spec == "Rn") {
    if (state_size < 2 || state_size % 2 != 0)
      throw InputError("invalidOption", "LieGroup \"Rn\": the state size (nq + n = 2n) must be even and "
                                        "at least 2, got " + std::to_string(state_size));
    return std::make_unique<RnGroup>(state_size / 2);
  }
  std::vector<std::string> names;
  std::size_t pos = 0;
  detail::parse_product(spec, pos, 0, names);
  std::vector<std::unique_ptr<LieGroup>> factors;
  factors.reserve(names.size());
  for (const std::string& name : names) factors.push_back(detail::make_factor(name));
  if (factors.size() == 1) return std::move(factors.front());
  return std::make_unique<ProductGroup>(std::move(factors));
}

}  // namespace odepkg::lie

#endif
