// BlockRightProduct.hpp — C = B L for a sparse B (m x n) and a block-diagonal
// L (the blocks of a partition of 0..n−1, e.g. the factors M_i⁻¹ = L_i L_iᵀ
// of a BlockMass), in O(nnz(B) · block size), sparse.  Column j of C, in
// block [o, o + s), is Σ_k B(:, k) L(k, j) over the block's columns k, so its
// pattern is the union R of the row patterns of those columns of B: every
// column of a block has the pattern R (computed once per pattern of B).
#ifndef ODEPKG_LIE_BLOCK_RIGHT_PRODUCT_HPP
#define ODEPKG_LIE_BLOCK_RIGHT_PRODUCT_HPP

#include "../SparsePatternUnion.hpp"
#include "../Types.hpp"

#include <algorithm>
#include <vector>

namespace odepkg::lie {

class BlockRightProduct {
 public:
  /// C = B L; block(b) gives L's block b (s_b x s_b), sizes/offsets its partition.
  template <class BlockFn>
  const SpMat& compute(const SpMat& B, const std::vector<int>& sizes, BlockFn block) {
    if (!ready_ || !SparsePatternUnion::same_pattern(B, Bpattern_)) analyse(B, sizes);
    double* cv = C_.valuePtr();
    std::fill(cv, cv + C_.nonZeros(), 0.0);
    const int* bo = B.outerIndexPtr();
    const double* bv = B.valuePtr();
    const int* co = C_.outerIndexPtr();
    int off = 0;
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      const int s = sizes[b];
      const auto L = block(static_cast<int>(b));
      for (int k = off; k < off + s; ++k)
        for (int e = bo[k]; e < bo[k + 1]; ++e) {
          const double x = bv[e];
          const int p = pos_[e];
          for (int j = off; j < off + s; ++j) cv[co[j] + p] += x * L(k - off, j - off);
        }
      off += s;
    }
    return C_;
  }

 private:
  void analyse(const SpMat& B, const std::vector<int>& sizes) {
    Bpattern_ = B;
    const int n = static_cast<int>(B.cols());
    const int* bo = B.outerIndexPtr();
    const int* bi = B.innerIndexPtr();
    std::vector<int> outer(n + 1, 0), inner, rows;
    pos_.assign(B.nonZeros(), 0);
    int off = 0;
    for (int s : sizes) {
      rows.clear();
      for (int k = off; k < off + s; ++k) rows.insert(rows.end(), bi + bo[k], bi + bo[k + 1]);
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      for (int k = off; k < off + s; ++k)
        for (int e = bo[k]; e < bo[k + 1]; ++e)
          pos_[e] = static_cast<int>(std::lower_bound(rows.begin(), rows.end(), bi[e]) - rows.begin());
      for (int j = off; j < off + s; ++j) {
        inner.insert(inner.end(), rows.begin(), rows.end());
        outer[j + 1] = static_cast<int>(inner.size());
      }
      off += s;
    }
    C_.resize(B.rows(), n);
    C_.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
    std::copy(outer.begin(), outer.end(), C_.outerIndexPtr());
    std::copy(inner.begin(), inner.end(), C_.innerIndexPtr());
    ready_ = true;
  }

  SpMat Bpattern_, C_;
  std::vector<int> pos_;  ///< for each entry of B, its row's place in its block's pattern
  bool ready_ = false;
};

}  // namespace odepkg::lie

#endif
