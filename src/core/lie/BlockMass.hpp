// BlockMass.hpp — the constant mass matrix M of a Lie-group problem stored
// as its diagonal blocks M_i (symmetric positive definite), with M_i⁻¹ and
// a factor L_i of M_i⁻¹ = L_i L_iᵀ.  A rigid body's M is block diagonal with
// one block per factor of its group (inertia tensor, mass times I), so a
// chain of N bodies needs O(N) numbers, not O(N²): M v and M⁻¹ b are O(n).
//
// The partition is the first of the candidates (FactorBlocks) on which M
// has no entry outside the blocks; a coupled M is one n × n block (the dense
// RATTLie's case).
#ifndef ODEPKG_LIE_BLOCK_MASS_HPP
#define ODEPKG_LIE_BLOCK_MASS_HPP

#include "../Types.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace odepkg::lie {

class BlockMass {
 public:
  BlockMass() = default;

  /// The identity on the partition `sizes`.
  static BlockMass identity(const std::vector<int>& sizes) {
    std::vector<double> v;
    for (int s : sizes)
      for (int j = 0; j < s; ++j)
        for (int i = 0; i < s; ++i) v.push_back(i == j ? 1.0 : 0.0);
    return BlockMass(sizes, v);
  }

  /// From a dense n × n M: the first partition of `candidates` on which M
  /// is block diagonal, else one block.
  static BlockMass from_dense(const Mat& M, const std::vector<std::vector<int>>& candidates) {
    for (const auto& sizes : candidates) {
      if (!is_block_diagonal_dense(M, sizes)) continue;
      std::vector<double> v;
      int off = 0;
      for (int s : sizes) {
        for (int j = 0; j < s; ++j)
          for (int i = 0; i < s; ++i) v.push_back(M(off + i, off + j));
        off += s;
      }
      return BlockMass(sizes, v);
    }
    const int n = static_cast<int>(M.rows());
    return BlockMass({n}, std::vector<double>(M.data(), M.data() + M.size()));
  }

  /// From a sparse n × n M (O(nnz)): the first partition of `candidates` on
  /// which it is block diagonal; `ok` false if there is none.
  static BlockMass from_sparse(const SpMat& M, const std::vector<std::vector<int>>& candidates, bool& ok) {
    ok = false;
    for (const auto& sizes : candidates) {
      std::vector<int> block_of, offset;
      owners(sizes, block_of, offset);
      bool inside = true;
      for (int j = 0; j < M.outerSize() && inside; ++j)
        for (SpMat::InnerIterator it(M, j); it; ++it)
          if (it.value() != 0.0 && block_of[it.row()] != block_of[j]) {
            inside = false;
            break;
          }
      if (!inside) continue;
      std::vector<int> start(sizes.size() + 1, 0);
      for (std::size_t b = 0; b < sizes.size(); ++b) start[b + 1] = start[b] + sizes[b] * sizes[b];
      std::vector<double> v(start.back(), 0.0);
      for (int j = 0; j < M.outerSize(); ++j)
        for (SpMat::InnerIterator it(M, j); it; ++it) {
          const int b = block_of[j], s = sizes[b];
          v[start[b] + (j - offset[b]) * s + (static_cast<int>(it.row()) - offset[b])] = it.value();
        }
      ok = true;
      return BlockMass(sizes, v);
    }
    return BlockMass();
  }

  /// Blocks `sizes`, their entries column-major one after the other.
  /// Throws odepkg:invalidOption for a block that is not symmetric
  /// positive definite.
  BlockMass(const std::vector<int>& sizes, const std::vector<double>& values) : sizes_(sizes) {
    int off = 0, boff = 0;
    for (int s : sizes_) {
      off_.push_back(off);
      boff_.push_back(boff);
      off += s;
      boff += s * s;
    }
    n_ = off;
    val_ = Eigen::Map<const Vec>(values.data(), boff);
    inv_.resize(boff);
    fac_.resize(boff);
    diagonal_ = true;
    for (int b = 0; b < blocks(); ++b) {
      const int s = sizes_[b];
      const Eigen::Map<const Mat> Mb(val_.data() + boff_[b], s, s);
      const double scale = std::max(1.0, Mb.cwiseAbs().maxCoeff());
      if (!(Mb - Mb.transpose()).isZero(1e-12 * scale))
        throw InputError("invalidOption", "MassMatrix must be symmetric");
      Eigen::LDLT<Mat> ldlt(Mb);
      if (ldlt.info() != Eigen::Success || !(ldlt.vectorD().minCoeff() > 0.0))
        throw InputError("invalidOption", "MassMatrix must be positive definite");
      Eigen::Map<Mat> Ib(inv_.data() + boff_[b], s, s);
      Ib = ldlt.solve(Mat::Identity(s, s));
      Ib = 0.5 * (Ib + Ib.transpose()).eval();
      Eigen::Map<Mat>(fac_.data() + boff_[b], s, s) = Eigen::LLT<Mat>(Ib).matrixL();
      for (int j = 0; j < s; ++j)
        for (int i = 0; i < s; ++i)
          if (i != j && Mb(i, j) != 0.0) diagonal_ = false;
    }
  }

  int n() const { return n_; }
  int blocks() const { return static_cast<int>(sizes_.size()); }
  int size(int b) const { return sizes_[b]; }
  int offset(int b) const { return off_[b]; }
  const std::vector<int>& sizes() const { return sizes_; }
  /// No entry off the diagonal at all.
  bool diagonal() const { return diagonal_; }
  Eigen::Map<const Mat> block(int b) const { return {val_.data() + boff_[b], sizes_[b], sizes_[b]}; }
  Eigen::Map<const Mat> inverse(int b) const { return {inv_.data() + boff_[b], sizes_[b], sizes_[b]}; }
  /// L_b with M_b⁻¹ = L_b L_bᵀ (lower triangular).
  Eigen::Map<const Mat> inverse_factor(int b) const { return {fac_.data() + boff_[b], sizes_[b], sizes_[b]}; }

  /// out = M v (out may not alias v).
  void apply(const ConstVecRef& v, VecRef out) const {
    for (int b = 0; b < blocks(); ++b) out.segment(off_[b], sizes_[b]).noalias() = block(b) * v.segment(off_[b], sizes_[b]);
  }
  /// out = M⁻¹ v (out may not alias v).
  void solve(const ConstVecRef& v, VecRef out) const {
    for (int b = 0; b < blocks(); ++b)
      out.segment(off_[b], sizes_[b]).noalias() = inverse(b) * v.segment(off_[b], sizes_[b]);
  }
  /// The diagonal of M⁻¹ (for a diagonal M).
  Vec inverse_diagonal() const {
    Vec d(n_);
    for (int b = 0; b < blocks(); ++b) d.segment(off_[b], sizes_[b]) = inverse(b).diagonal();
    return d;
  }
  /// M (or M⁻¹) as a dense n × n matrix.
  Mat dense(bool inverse_matrix = false) const {
    Mat M = Mat::Zero(n_, n_);
    for (int b = 0; b < blocks(); ++b)
      M.block(off_[b], off_[b], sizes_[b], sizes_[b]) = inverse_matrix ? Mat(inverse(b)) : Mat(block(b));
    return M;
  }

 private:
  static void owners(const std::vector<int>& sizes, std::vector<int>& block_of, std::vector<int>& offset) {
    int off = 0;
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      offset.push_back(off);
      for (int j = 0; j < sizes[b]; ++j) block_of.push_back(static_cast<int>(b));
      off += sizes[b];
    }
  }
  static bool is_block_diagonal_dense(const Mat& M, const std::vector<int>& sizes) {
    std::vector<int> block_of, offset;
    owners(sizes, block_of, offset);
    if (static_cast<Eigen::Index>(block_of.size()) != M.rows() || M.rows() != M.cols()) return false;
    for (Eigen::Index j = 0; j < M.cols(); ++j)
      for (Eigen::Index i = 0; i < M.rows(); ++i)
        if (M(i, j) != 0.0 && block_of[i] != block_of[j]) return false;
    return true;
  }

  std::vector<int> sizes_, off_, boff_;
  int n_ = 0;
  bool diagonal_ = true;
  Vec val_, inv_, fac_;
};

}  // namespace odepkg::lie

#endif
