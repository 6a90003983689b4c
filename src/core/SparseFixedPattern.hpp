// SparseFixedPattern.hpp — sparse operations repeated on matrices of a fixed
// structure without allocating: the result's structure and, for each of its
// values, where it comes from are computed by Eigen once (and again only
// when an operand's structure changes); a call then only moves values.
// Eigen's own sparse products, transposes, blocks and setFromTriplets build
// their results (and temporaries) afresh at every call.  The values are
// those of Eigen's operations bit for bit (the same products, summed in the
// same order).  Each object owns its result: the caller must not change
// that matrix's structure (its nonzeros are checked, not its indices).
#ifndef ODEPKG_SPARSE_FIXED_PATTERN_HPP
#define ODEPKG_SPARSE_FIXED_PATTERN_HPP

#include "Types.hpp"

#include <algorithm>
#include <vector>

namespace odepkg {

/// The structure of a compressed sparse matrix, to tell when it changed.
class SparseStructure {
 public:
  bool same(const SpMat& A) const {
    return A.isCompressed() && A.rows() == rows_ && A.cols() == cols_ &&
           A.nonZeros() == static_cast<Eigen::Index>(inner_.size()) &&
           std::equal(outer_.begin(), outer_.end(), A.outerIndexPtr()) &&
           std::equal(inner_.begin(), inner_.end(), A.innerIndexPtr());
  }
  void take(const SpMat& A) {
    rows_ = A.rows();
    cols_ = A.cols();
    outer_.assign(A.outerIndexPtr(), A.outerIndexPtr() + A.outerSize() + 1);
    inner_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
  }

 private:
  Eigen::Index rows_ = -1, cols_ = -1;
  std::vector<int> outer_, inner_;
};

/// The plans read column j of an operand as its values outer[j] .. outer[j+1].
inline void require_compressed(const SpMat& A) {
  if (!A.isCompressed()) throw EigenAssertion("SparseFixedPattern: an operand must be compressed");
}

/// The place of A(i, j) in A's values (compressed A), -1 if not stored.
inline int sparse_position(const SpMat& A, int i, int j) {
  const int* first = A.innerIndexPtr() + A.outerIndexPtr()[j];
  const int* last = A.innerIndexPtr() + A.outerIndexPtr()[j + 1];
  const int* p = std::lower_bound(first, last, i);
  return (p != last && *p == i) ? static_cast<int>(p - A.innerIndexPtr()) : -1;
}

/// out = A^T or a block of A: out's values gathered from A's.
class SparseGather {
 public:
  void transpose(const SpMat& A, SpMat& out) {
    if (!current(A, out)) {
      out = A.transpose();
      plan(A, out, 0, 0, true);
    }
    gather(A, out);
  }
  /// The rows x cols block of A at (r0, c0).
  void block(const SpMat& A, int r0, int c0, int rows, int cols, SpMat& out) {
    if (!current(A, out)) {
      out = A.block(r0, c0, rows, cols);
      plan(A, out, r0, c0, false);
    }
    gather(A, out);
  }

 private:
  bool current(const SpMat& A, const SpMat& out) const {
    return key_.same(A) && out.isCompressed() && out.nonZeros() == static_cast<Eigen::Index>(from_.size());
  }
  void plan(const SpMat& A, SpMat& out, int r0, int c0, bool transposed) {
    require_compressed(A);
    out.makeCompressed();
    from_.resize(out.nonZeros());
    for (int j = 0; j < out.outerSize(); ++j)
      for (int p = out.outerIndexPtr()[j]; p < out.outerIndexPtr()[j + 1]; ++p) {
        const int i = out.innerIndexPtr()[p];
        from_[p] = transposed ? sparse_position(A, j, i) : sparse_position(A, r0 + i, c0 + j);
      }
    key_.take(A);
  }
  void gather(const SpMat& A, SpMat& out) const {
    const double* a = A.valuePtr();
    double* v = out.valuePtr();
    for (size_t k = 0; k < from_.size(); ++k) v[k] = a[from_[k]];
  }

  SparseStructure key_;
  std::vector<int> from_;
};

/// C = s A B: the products a_ik b_kj listed as (place in A, in B, in C) in
/// the order of Eigen's (conservative) sparse product, column j of B by
/// column: the same sums.
class SparseProduct {
 public:
  void run(const SpMat& A, const SpMat& B, SpMat& C, double s = 1.0) {
    if (!(ka_.same(A) && kb_.same(B) && C.isCompressed() && C.nonZeros() == nnz_)) plan(A, B, C);
    Eigen::Map<Vec> c(C.valuePtr(), C.nonZeros());
    c.setZero();
    const double* a = A.valuePtr();
    const double* b = B.valuePtr();
    double* v = C.valuePtr();
    for (const Term& t : terms_) v[t.c] += a[t.a] * b[t.b];
    if (s != 1.0) c *= s;
  }

 private:
  struct Term {
    int a, b, c;
  };
  void plan(const SpMat& A, const SpMat& B, SpMat& C) {
    require_compressed(A);
    require_compressed(B);
    C = A * B;
    C.makeCompressed();
    nnz_ = C.nonZeros();
    terms_.clear();
    for (int j = 0; j < B.outerSize(); ++j)
      for (int pb = B.outerIndexPtr()[j]; pb < B.outerIndexPtr()[j + 1]; ++pb) {
        const int k = B.innerIndexPtr()[pb];
        for (int pa = A.outerIndexPtr()[k]; pa < A.outerIndexPtr()[k + 1]; ++pa)
          terms_.push_back({pa, pb, sparse_position(C, A.innerIndexPtr()[pa], j)});
      }
    ka_.take(A);
    kb_.take(B);
  }

  SparseStructure ka_, kb_;
  Eigen::Index nnz_ = -1;
  std::vector<Term> terms_;
};

/// out = the sum of triplets (setFromTriplets): while the triplets' (i, j)
/// are those of the last call, their values are added at the places found
/// then, in their order (as setFromTriplets sums duplicates).
class TripletAssembly {
 public:
  using Triplet = Eigen::Triplet<double, int>;
  void run(const std::vector<Triplet>& t, int rows, int cols, SpMat& out) {
    if (!current(t, rows, cols, out)) {
      out.resize(rows, cols);
      out.setFromTriplets(t.begin(), t.end());
      out.makeCompressed();
      rows_ = rows;
      cols_ = cols;
      ij_.resize(t.size());
      to_.resize(t.size());
      for (size_t k = 0; k < t.size(); ++k) {
        ij_[k] = {t[k].row(), t[k].col()};
        to_[k] = sparse_position(out, t[k].row(), t[k].col());
      }
      nnz_ = out.nonZeros();
      return;
    }
    double* v = out.valuePtr();
    std::fill(v, v + out.nonZeros(), 0.0);
    for (size_t k = 0; k < t.size(); ++k) v[to_[k]] += t[k].value();
  }

 private:
  bool current(const std::vector<Triplet>& t, int rows, int cols, const SpMat& out) const {
    if (rows != rows_ || cols != cols_ || t.size() != ij_.size() || !out.isCompressed() || out.nonZeros() != nnz_ ||
        out.rows() != rows || out.cols() != cols)
      return false;
    for (size_t k = 0; k < t.size(); ++k)
      if (t[k].row() != ij_[k].first || t[k].col() != ij_[k].second) return false;
    return true;
  }

  int rows_ = -1, cols_ = -1;
  Eigen::Index nnz_ = -1;
  std::vector<std::pair<int, int>> ij_;
  std::vector<int> to_;
};

}  // namespace odepkg

#endif
