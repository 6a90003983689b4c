// SparsePatternUnion.hpp — a sparse matrix-valued function G(q) (m x n) on a
// fixed pattern: the union of the patterns returned so far.  Octave's
// sparse() drops exact zeros, so an entry that happens to vanish (the
// vertical component of a horizontal link) leaves the pattern and comes
// back later; the solvers analyse a pattern once (ordering, elimination
// tree) and need it fixed.  A result inside the union gets its values
// scattered into it (explicit zeros elsewhere) by one merge of the sorted
// columns, O(nnz) and without allocation once G has the pattern's size; a
// new entry grows the union and version(), after which the solvers analyse
// again (rare: once per entry ever met, and grow() seeds the union with the
// pattern at a generic point).
#ifndef ODEPKG_SPARSE_PATTERN_UNION_HPP
#define ODEPKG_SPARSE_PATTERN_UNION_HPP

#include "Types.hpp"

#include <algorithm>

namespace odepkg {

class SparsePatternUnion {
 public:
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
  void fit(SpMat& user, SpMat& G) {
    user.makeCompressed();
    if (!scatter(user, G)) {
      grow(user);
      scatter(user, G);
    }
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
  /// G <- the entries of u on the union's structure (zeros elsewhere): a
  /// merge of each column's sorted row indices.  False if u has an entry
  /// outside the union (G is then to be filled again after it grew).
  bool scatter(const SpMat& u, SpMat& G) {
    const int cols = static_cast<int>(pattern_.cols());
    // (a copy: no allocation once the buffers are large enough)
    if (!(G.rows() == pattern_.rows() && same_pattern(G, pattern_))) G = pattern_;
    if (u.rows() == G.rows() && same_pattern(u, G)) {
      // the usual case (the user's structure is the union): the values as they are
      std::copy(u.valuePtr(), u.valuePtr() + u.nonZeros(), G.valuePtr());
      return true;
    }
    const int* po = G.outerIndexPtr();
    const int* pi = G.innerIndexPtr();
    double* pv = G.valuePtr();
    const int* uo = u.outerIndexPtr();
    const int* ui = u.innerIndexPtr();
    const double* uv = u.valuePtr();
    // Without a branch on each match: the user's zeros (pruned by Octave's
    // sparse) fall irregularly, and a mispredicted branch per entry cost
    // twice the copy.  ac never passes the column's last entry, so every
    // read is in bounds.
    for (int j = 0; j < cols; ++j) {
      int a = uo[j];
      const int aend = uo[j + 1];
      if (a == aend) {
        for (int p = po[j]; p < po[j + 1]; ++p) pv[p] = 0.0;
        continue;
      }
      for (int p = po[j]; p < po[j + 1]; ++p) {
        const int ac = a < aend ? a : aend - 1;
        const bool in = a < aend;
        const int r = ui[ac];
        if (in && r < pi[p]) return false;  // a row the union lacks
        const bool match = in && r == pi[p];
        pv[p] = match ? uv[ac] : 0.0;
        a += match;
      }
      if (a < aend) return false;
    }
    return true;
  }

  SpMat pattern_, merged_;
  long version_ = 0;
};

}  // namespace odepkg

#endif
