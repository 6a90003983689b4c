// SparsePatternUnion.hpp — a sparse matrix-valued function G(q) (m x n) on a
// fixed pattern: the union of the patterns returned so far.  Octave's
// sparse() drops exact zeros, so an entry that happens to vanish (the
// vertical component of a horizontal link) leaves the pattern and comes
// back later; the solvers analyse a pattern once (ordering, elimination
// tree) and need it fixed.  A result inside the union gets its values
// scattered into it (explicit zeros elsewhere); a new entry grows the union
// and version(), after which the solvers analyse again (rare: once per
// entry ever met).  O(nnz) per call.
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

  /// `user` (a result of the function, compressed here) on the union's
  /// pattern into G; user's and G's buffers may be exchanged (the function
  /// refills `user` next time).
  void fit(SpMat& user, SpMat& G) {
    user.makeCompressed();
    if (same_pattern(user, pattern_)) {
      G.swap(user);
      return;
    }
    merged_ = pattern_ + user;  // the union (structural: no entry is dropped)
    if (merged_.nonZeros() != pattern_.nonZeros()) {
      pattern_ = merged_;
      pattern_.coeffs().setZero();
      ++version_;
    }
    merged_ = pattern_ + user;  // values on the pattern: zeros, then the user's entries
    G.swap(merged_);
  }

  static bool same_pattern(const SpMat& a, const SpMat& b) {
    if (a.nonZeros() != b.nonZeros() || a.outerSize() != b.outerSize() || !a.isCompressed() || !b.isCompressed())
      return false;
    return std::equal(a.outerIndexPtr(), a.outerIndexPtr() + a.outerSize() + 1, b.outerIndexPtr()) &&
           std::equal(a.innerIndexPtr(), a.innerIndexPtr() + a.nonZeros(), b.innerIndexPtr());
  }

 private:
  SpMat pattern_, merged_;
  long version_ = 0;
};

}  // namespace odepkg

#endif
