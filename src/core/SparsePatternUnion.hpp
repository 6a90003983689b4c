// SparsePatternUnion.hpp — a sparse matrix-valued function G(q) (m x n) on a
// fixed pattern: the union of the patterns returned so far.  Octave's
// sparse() drops exact zeros, so an entry that happens to vanish (the
// vertical component of a horizontal link) leaves the pattern and comes
// back later; the solvers analyse a pattern once (ordering, elimination
// tree) and need it fixed.  A result inside the union gets its values
// scattered into it (explicit zeros elsewhere): a copy when it has the
// union's structure, else each entry put in its slot of the sorted
// column, O(nnz) and without allocation once G has the pattern's size; a
// new entry grows the union and version(), after which the solvers analyse
// again (rare: once per entry ever met, and grow() seeds the union with the
// pattern at a generic point).  The result may also come as a view of
// arrays owned elsewhere (CscView: Octave's SparseMatrix, 64-bit indices),
// read in place: one pass into the union's pattern, no copy into an SpMat.
#ifndef ODEPKG_SPARSE_PATTERN_UNION_HPP
#define ODEPKG_SPARSE_PATTERN_UNION_HPP

#include "Types.hpp"

#include <algorithm>
#include <stdexcept>
#include <limits>
#include <type_traits>

namespace odepkg {

/// A compressed-column matrix (sorted row indices in each column, no
/// duplicates) as three arrays owned by someone else, valid while they
/// are: outer[0..cols] the column starts (outer[cols] = nnz), inner[0..nnz)
/// the row indices, values[0..nnz) the values.
template <class Index>
struct CscView {
  Eigen::Index rows = 0, cols = 0, nnz = 0;
  const Index* outer = nullptr;
  const Index* inner = nullptr;
  const double* values = nullptr;
};

/// The view of a compressed SpMat.
inline CscView<int> csc_view(const SpMat& a) {
  eigen_assert(a.isCompressed());
  return {a.rows(), a.cols(), a.nonZeros(), a.outerIndexPtr(), a.innerIndexPtr(), a.valuePtr()};
}

/// out = the matrix of a view (a copy, the indices narrowed to int).
/// Throws InputError beyond 2^31 - 1 nonzeros (SpMat's int indices); its
/// rows and columns must fit an int (the callers check them first: they
/// are the problem's m and d).
template <class I>
void to_spmat(const CscView<I>& u, SpMat& out) {
  if (u.nnz > std::numeric_limits<int>::max())
    throw InputError("invalidInput", "a sparse matrix with more than 2^31 nonzeros is not supported");
  out.resize(u.rows, u.cols);
  out.resizeNonZeros(u.nnz);
  std::copy(u.outer, u.outer + u.cols + 1, out.outerIndexPtr());  // (narrowing: values < 2^31)
  std::copy(u.inner, u.inner + u.nnz, out.innerIndexPtr());
  std::copy(u.values, u.values + u.nnz, out.valuePtr());
}

class SparsePatternUnion {
 public:
  /// What the caller of fit() knows of the matrix G it fills.
  enum class Target {
    /// Any matrix: its structure is compared with the union's (O(nnz)).
    Any,
    /// Empty, or last written by this union's fit() since its last
    /// reset() (at any version), or a copy of such a matrix, or swapped
    /// with one: it then has the union's structure exactly when its size
    /// and number of nonzeros are the union's, since each version holds
    /// the last and more (a chain of 10^5 links: 0.2 ms a fit).
    UnionShaped,
  };

  void reset(int rows, int cols) {
    pattern_ = SpMat(rows, cols);
    version_ = 0;
  }
  /// Number of times the union grew.
  long version() const { return version_; }
  /// Its nonzeros: a matrix that fit() filled and has this many has the
  /// union's structure (the union only grows).
  Eigen::Index nonzeros() const { return pattern_.nonZeros(); }

  /// `user` (a result of the function, compressed here) on the union's
  /// pattern into G (user is left as it is).
  void fit(SpMat& user, SpMat& G, Target target = Target::Any) {
    user.makeCompressed();
    if (!fit(csc_view(user), G, target)) {
      grow(user);
      // inside the union now, unless its columns' rows are not sorted and
      // unique (not a valid compressed matrix): never a G half-written
      if (!fit(csc_view(user), G, target)) throw std::logic_error("SparsePatternUnion::fit: a matrix with unsorted or duplicate entries");
    }
  }

  /// `u` (rows x cols of the union) on the union's pattern into G, read in
  /// place.  False if u has an entry outside the union: the caller grows
  /// it (grow(), from u made an SpMat: to_spmat) and fits again.
  template <class I>
  bool fit(const CscView<I>& u, SpMat& G, Target target = Target::Any) {
    eigen_assert(u.rows == pattern_.rows() && u.cols == pattern_.cols());
    shape(G, target);
    // the usual case (the user's structure is the union) in one pass
    if (u.nnz == G.nonZeros() && copy_if_same(u, G)) return true;
    return merge(u, G);
  }

  /// The union grows by the pattern of `user`.
  void grow(const SpMat& user) {
    merged_ = pattern_ + user;  // the union (structural: no entry is dropped)
    if (merged_.nonZeros() != pattern_.nonZeros()) {
      pattern_ = merged_;
      pattern_.coeffs().setZero();
      ++version_;
    }
  }

  static bool same_pattern(const SpMat& a, const SpMat& b) {
    if (a.nonZeros() != b.nonZeros() || a.outerSize() != b.outerSize() || !a.isCompressed() || !b.isCompressed())
      return false;
    return std::equal(a.outerIndexPtr(), a.outerIndexPtr() + a.outerSize() + 1, b.outerIndexPtr()) &&
           std::equal(a.innerIndexPtr(), a.innerIndexPtr() + a.nonZeros(), b.innerIndexPtr());
  }

  /// out = a + s (a - b): a linear extrapolation of sparse matrices (G or B
  /// at the next point from the last two), on the values when a and b have
  /// one structure (always, but after the pattern grew), else by Eigen's
  /// sparse sum.
  static void extrapolate(const SpMat& a, const SpMat& b, double s, SpMat& out) {
    if (same_pattern(a, b)) {
      out = a;
      Eigen::Map<Vec> e(out.valuePtr(), out.nonZeros());
      const Eigen::Map<const Vec> av(a.valuePtr(), a.nonZeros()), bv(b.valuePtr(), b.nonZeros());
      e = av + s * (av - bv);
    } else {
      out = a + s * (a - b);
    }
  }

 private:
  /// G takes the union's structure unless it has it (a copy: no allocation
  /// once the buffers are large enough).
  void shape(SpMat& G, Target target) const {
    const bool has = G.rows() == pattern_.rows() && G.cols() == pattern_.cols() && G.isCompressed() &&
                     G.nonZeros() == pattern_.nonZeros() &&
                     (target == Target::UnionShaped || same_pattern(G, pattern_));
    if (!has) G = pattern_;
  }

  /// G's values <- u's if u has G's structure (u has G's number of
  /// nonzeros); false, G's values left as garbage, if not.
  template <class I>
  static bool copy_if_same(const CscView<I>& u, SpMat& G) {
    const int* po = G.outerIndexPtr();
    const int* pi = G.innerIndexPtr();
    double* pv = G.valuePtr();
    if constexpr (std::is_same_v<I, int>) {
      // compared first, then copied: std::equal and std::copy are memcmp
      // and memcpy here, faster than the fused loop below
      if (!std::equal(u.outer, u.outer + u.cols + 1, po) || !std::equal(u.inner, u.inner + u.nnz, pi)) return false;
      std::copy(u.values, u.values + u.nnz, pv);
      return true;
    } else {
      // indices of another width: compared as the values are copied, one
      // pass over both
      I diff = 0;  // the bits in which any pair of indices differs
      for (Eigen::Index j = 0; j <= u.cols; ++j) diff |= u.outer[j] ^ static_cast<I>(po[j]);
      for (Eigen::Index k = 0; k < u.nnz; ++k) {
        pv[k] = u.values[k];
        diff |= u.inner[k] ^ static_cast<I>(pi[k]);
      }
      return diff == 0;
    }
  }

  /// G (with the union's structure) <- u's values where u has them, zeros
  /// elsewhere.  False if u has an entry outside the union (or its rows are
  /// not sorted and unique in a column).
  template <class I>
  bool merge(const CscView<I>& u, SpMat& G) const {
    const int cols = static_cast<int>(pattern_.cols());
    const int* po = G.outerIndexPtr();
    const int* pi = G.innerIndexPtr();
    double* pv = G.valuePtr();
    const I* uo = u.outer;
    const I* ui = u.inner;
    const double* uv = u.values;
    // G zeroed first (one streaming pass), then each of u's entries put in
    // its slot: the search starts after the slot found last in the column
    // (both sorted) and runs over u's entries only, where a merge over G's
    // entries took a dependent comparison for every entry of the union
    // (0.58 -> 0.41 ms for a half-pruned 10^5-link chain).  The user's
    // zeros (pruned by Octave's sparse: half of a chain's G while its
    // vertical links fall freely) cost nothing but the zeroing.
    std::fill(pv, pv + G.nonZeros(), 0.0);
    for (int j = 0; j < cols; ++j) {
      int p = po[j];
      const int pend = po[j + 1];
      for (I a = uo[j]; a < uo[j + 1]; ++a) {
        const I r = ui[a];
        while (p < pend && pi[p] < r) ++p;
        if (p == pend || pi[p] != r) return false;  // a row the union lacks
        pv[p++] = uv[a];
      }
    }
    return true;
  }

  SpMat pattern_, merged_;
  long version_ = 0;
};

}  // namespace odepkg

#endif
