// FactorBlocks.hpp — the block-diagonal structure of a group's operators.
// For a direct product G₁ × … × G_k the Lie bracket acts factor by factor,
// so ad(v), T(w), T(w)^{-T} and ∂_w[T(w)^{-T} x] are block diagonal with one
// dim(G_i) block per factor (ProductGroup); a factor Rᵏ, abelian (T = I,
// ad = 0), splits further into k blocks of size 1.  The sparse RATTLie
// works block by block on this partition (O(n) per operator instead of
// O(n²)); a group that is no product is one block.
#ifndef ODEPKG_LIE_FACTOR_BLOCKS_HPP
#define ODEPKG_LIE_FACTOR_BLOCKS_HPP

#include "lie/LieGroup.hpp"
#include "lie/ProductGroup.hpp"
#include "lie/RnGroup.hpp"

#include <vector>

namespace odepkg::lie {

struct FactorBlock {
  const LieGroup* group;  ///< the group whose operators this block holds
  int voff;               ///< offset of the block in v (and in w, Ω)
  int dim;                ///< its size
};

namespace detail {
/// R¹, the group of one coordinate of an abelian factor split into scalars.
inline const LieGroup& scalar_line() {
  static const RnGroup r1(1);
  return r1;
}
inline void append_factor(const LieGroup& g, int voff, bool split_abelian, std::vector<FactorBlock>& out) {
  if (split_abelian && dynamic_cast<const RnGroup*>(&g) != nullptr) {
    for (int j = 0; j < g.dim(); ++j) out.push_back({&scalar_line(), voff + j, 1});
    return;
  }
  out.push_back({&g, voff, g.dim()});
}
}  // namespace detail

/// The blocks of G in order (they tile 0..dim G − 1).  `split_abelian`:
/// Rᵏ factors as k blocks of size 1.
inline std::vector<FactorBlock> factor_blocks(const LieGroup& G, bool split_abelian) {
  std::vector<FactorBlock> out;
  if (const auto* p = dynamic_cast<const ProductGroup*>(&G)) {
    out.reserve(p->factor_count());
    for (int i = 0; i < p->factor_count(); ++i)
      detail::append_factor(p->factor(i), p->dim_offset(i), split_abelian, out);
  } else {
    detail::append_factor(G, 0, split_abelian, out);
  }
  return out;
}

/// The block sizes of a partition.
inline std::vector<int> block_sizes(const std::vector<FactorBlock>& blocks) {
  std::vector<int> s;
  s.reserve(blocks.size());
  for (const FactorBlock& b : blocks) s.push_back(b.dim);
  return s;
}

}  // namespace odepkg::lie

#endif
