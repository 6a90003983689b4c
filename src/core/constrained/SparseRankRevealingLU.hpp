// SparseRankRevealingLU.hpp — a square sparse system A x = b on a fixed
// pattern, for the Newton systems of the sparse geometric RATTLE/SHAKE
// (SparseGeometricNewton): Eigen's supernodal SparseLU with the COLAMD
// column ordering and partial pivoting.  These matrices are unsymmetric
// (the SHAKE system [R_w, R_y W; Dg Z_w / h, 0]) or symmetric but
// indefinite in general (the RATTLE matrix {g_i, {g_j, H}}), so a
// Cholesky/LDL^T without pivoting is not safe for them; LU is.
//
// The symbolic analysis (COLAMD ordering, elimination tree) is done once per
// pattern: the caller passes the version of the pattern (SparsePatternUnion)
// and the analysis is repeated only when it changes; every compute() is one
// numeric factorization, reused by any number of solve() calls.
//
// First an LU without pivoting on the fixed pattern (FixedPatternLU: no
// allocation, where Eigen's SparseLU allocates at every factorize), in a
// symmetric order (AMD, the first `first` unknowns eliminated first: the
// SHAKE system's w, whose block R_w = I + O(h) never needs pivoting; the
// RATTLE matrix -G H_pp G^T is definite where H_pp is).  It is taken when
// its pivots pass the rank test below; else (a pivot tiny or zero) A goes
// to SparseLU and, rank-deficient, to SparseQR as described below.
//
// Rank deficiency (redundant constraints, singular configurations) shows as
// a pivot of U tiny against the largest (|u_jj| <= tol max |u_jj|, the test
// the dense GeometricRattle makes on its PartialPivLU), or as a zero pivot
// that stops the factorization.  A is then factorized again by Eigen's
// SparseQR (COLAMD, column pivoting by the threshold tol max_j |A e_j|),
// rank-revealing: its solve gives a basic solution, not the minimum-norm
// one, but for the consistent systems of RATTLE (a constraint listed twice)
// the state correction W ds it yields is the same for every solution.
#ifndef ODEPKG_CONSTRAINED_SPARSE_RANK_REVEALING_LU_HPP
#define ODEPKG_CONSTRAINED_SPARSE_RANK_REVEALING_LU_HPP

#include "FixedPatternLU.hpp"
#include "Types.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseLU>
#include <Eigen/SparseQR>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace odepkg {

class SparseRankRevealingLU {
 public:
  explicit SparseRankRevealingLU(double tol) : tol_(tol) {}

  /// Factorizes A (compressed, on the pattern of `version`).  False if A is
  /// not finite or not even the rank-revealing factorization succeeded.
  bool compute(const SpMat& A, long version, int first = 0) {
    const Eigen::Map<const Vec> values(A.valuePtr(), A.nonZeros());
    if (!values.allFinite()) return false;
    // after the LU without pivoting failed, it is tried again only every
    // kFastRetry calls on one pattern (a matrix that needs pivoting would
    // otherwise be factorized twice per call)
    if (version != fast_version_) fast_skip_ = 0;
    use_fast_ = false;
    if (fast_skip_ > 0) {
      --fast_skip_;
    } else {
      use_fast_ = fast_factorize(A, version, first);
      if (!use_fast_) fast_skip_ = kFastRetry;
    }
    if (use_fast_) {
      use_qr_ = rank_deficient_ = false;
      return true;
    }
    if (version != analysed_ || A.rows() != rows_) {
      lu_.analyzePattern(A);
      analysed_ = version;
      rows_ = A.rows();
    }
    lu_.factorize(A);
    use_qr_ = lu_.info() != Eigen::Success;
    double big = 0.0, small = std::numeric_limits<double>::infinity();
    if (!use_qr_) {
      // the diagonal of U is stored in the supernodes of L (as Eigen's
      // SparseLU::absDeterminant reads it)
      const auto& L = lu_.matrixL().m_mapL;
      for (Eigen::Index j = 0; j < A.cols(); ++j)
        for (typename std::decay_t<decltype(L)>::InnerIterator it(L, j); it; ++it)
          if (it.index() == j) {
            big = std::max(big, std::abs(it.value()));
            small = std::min(small, std::abs(it.value()));
            break;
          }
      use_qr_ = !(small > tol_ * big);
    }
    if (!use_qr_) {
      cond_ = big / small;
      rank_deficient_ = false;
      return true;
    }
    double colmax = 0.0;
    for (Eigen::Index j = 0; j < A.cols(); ++j) colmax = std::max(colmax, A.col(j).norm());
    qr_.setPivotThreshold(tol_ * colmax);
    qr_.compute(A);
    if (qr_.info() != Eigen::Success) return false;
    rank_deficient_ = qr_.rank() < A.cols();
    cond_ = rank_deficient_ ? std::numeric_limits<double>::infinity() : big / std::max(small, 1e-300);
    return true;
  }

  /// x = A^{-1} b (a basic solution when A is rank-deficient).
  void solve(const ConstVecRef& b, VecRef x) {
    if (use_fast_)
      fast_.solve(b, x);
    else if (use_qr_)
      x = qr_.solve(b);
    else
      x = lu_.solve(b);
  }

  bool rank_deficient() const { return rank_deficient_; }
  /// max |u_jj| / min |u_jj| (infinite when rank-deficient): a cheap
  /// estimate of the condition, as the dense path's from its pivots.
  double condition_estimate() const { return cond_; }

 private:
  /// The LU without pivoting; true if its pivots pass the rank test
  /// (|u_jj| > tol max |u_jj|), cond_ then from them.
  bool fast_factorize(const SpMat& A, long version, int first) {
    const int nnz = static_cast<int>(A.nonZeros());
    if (version != fast_version_ || A.rows() != fast_.rows() || nnz != static_cast<int>(to_.size()) ||
        first != fast_first_) {
      fast_.analyse(A, first);
      to_.resize(nnz);
      for (int j = 0; j < A.outerSize(); ++j)
        for (int p = A.outerIndexPtr()[j]; p < A.outerIndexPtr()[j + 1]; ++p)
          to_[p] = fast_.position(A.innerIndexPtr()[p], j);
      fast_version_ = version;
      fast_first_ = first;
    }
    fast_.zero();
    double* v = fast_.values();
    for (int p = 0; p < nnz; ++p) v[to_[p]] += A.valuePtr()[p];
    if (!fast_.factorize()) return false;
    double big = 0.0, small = std::numeric_limits<double>::infinity();
    for (int j = 0; j < fast_.rows(); ++j) {
      big = std::max(big, fast_.pivot(j));
      small = std::min(small, fast_.pivot(j));
    }
    if (!(small > tol_ * big)) return false;
    cond_ = big / small;
    return true;
  }

  static constexpr int kFastRetry = 16;
  double tol_;
  int fast_skip_ = 0;  ///< calls left before the LU without pivoting is tried again
  FixedPatternLU fast_;
  std::vector<int> to_;  // A's values' places in fast_
  long fast_version_ = -1;
  int fast_first_ = 0;
  bool use_fast_ = false;
  Eigen::SparseLU<SpMat, Eigen::COLAMDOrdering<int>> lu_;
  Eigen::SparseQR<SpMat, Eigen::COLAMDOrdering<int>> qr_;
  long analysed_ = -1;
  Eigen::Index rows_ = -1;
  bool use_qr_ = false, rank_deficient_ = false;
  double cond_ = 1.0;
};

}  // namespace odepkg

#endif
