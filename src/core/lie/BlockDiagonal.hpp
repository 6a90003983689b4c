// BlockDiagonal.hpp — a block-diagonal n x n matrix on a partition of
// 0..n−1 into small blocks (the factors of a product group), stored as its
// blocks one after the other: products and inverses block by block, O(Σ s²)
// memory and O(Σ s³) work, no n x n matrix.
#ifndef ODEPKG_LIE_BLOCK_DIAGONAL_HPP
#define ODEPKG_LIE_BLOCK_DIAGONAL_HPP

#include "../Types.hpp"

#include <Eigen/LU>

#include <vector>

namespace odepkg::lie {

class BlockDiagonal {
 public:
  BlockDiagonal() = default;
  explicit BlockDiagonal(const std::vector<int>& sizes) : sizes_(sizes) {
    int off = 0, boff = 0, smax = 1;
    for (int s : sizes_) {
      off_.push_back(off);
      boff_.push_back(boff);
      off += s;
      boff += s * s;
      smax = std::max(smax, s);
    }
    val_ = Vec::Zero(boff);
    lu_ = Eigen::PartialPivLU<Mat>(smax);
    eye_ = Mat::Identity(smax, smax);
  }

  int blocks() const { return static_cast<int>(sizes_.size()); }
  int size(int b) const { return sizes_[b]; }
  int offset(int b) const { return off_[b]; }
  Eigen::Map<Mat> block(int b) { return {val_.data() + boff_[b], sizes_[b], sizes_[b]}; }
  Eigen::Map<const Mat> block(int b) const { return {val_.data() + boff_[b], sizes_[b], sizes_[b]}; }

  /// out = A x (out may not alias x).
  void apply(const ConstVecRef& x, VecRef out) const {
    for (int b = 0; b < blocks(); ++b) {
      const int s = sizes_[b], o = off_[b];
      if (s == 1)
        out(o) = val_(boff_[b]) * x(o);
      else
        out.segment(o, s).noalias() = block(b) * x.segment(o, s);
    }
  }

  /// This = A⁻¹ block by block (3 x 3 by cofactors, 1 x 1 by division,
  /// others by LU with partial pivoting).
  void set_inverse(const BlockDiagonal& A) {
    for (int b = 0; b < blocks(); ++b) {
      const int s = sizes_[b];
      if (s == 1) {
        val_(boff_[b]) = 1.0 / A.val_(A.boff_[b]);
      } else if (s == 3) {
        Eigen::Map<Eigen::Matrix3d>(val_.data() + boff_[b]) =
            Eigen::Map<const Eigen::Matrix3d>(A.val_.data() + A.boff_[b]).inverse();
      } else {
        lu_.compute(A.block(b));
        block(b) = lu_.solve(eye_.topLeftCorner(s, s));
      }
    }
  }

 private:
  std::vector<int> sizes_, off_, boff_;
  Vec val_;
  Eigen::PartialPivLU<Mat> lu_;
  Mat eye_;
};

}  // namespace odepkg::lie

#endif
