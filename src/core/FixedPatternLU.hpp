// FixedPatternLU.hpp — a sparse LU without pivoting on a fixed pattern:
// the ordering (AMD of A + Aᵀ) and the pattern of the factors (the
// symbolic Cholesky factorization of that symmetric pattern) are computed
// once by analyse(); factorize() then works in place on preallocated
// values, so a factorization and a solve allocate nothing.  For matrices
// that are small perturbations of a symmetric positive definite one (the
// Schur complement of RATTLie's Newton system, SchurLU), for which Gaussian
// elimination in a symmetric order needs no pivoting (Golub, Van Loan,
// "Matrix Computations", §4.3), and for systems whose pivots are safe in a
// chosen order (SparseRankRevealingLU: the SHAKE system with its block
// R_w = I + O(h) eliminated first, `first`; the RATTLE matrix -G H_pp G^T,
// definite where H_pp is); a pivot below kPivotTol times its column's size
// makes factorize() fail, and the caller falls back to another solver
// (with pivoting).  Why not Eigen's SparseLU: its factorize() allocates its
// work arrays and the factors' storage at every call (Eigen 3.4,
// SparseLU.h: `IndexVector segrep(m)`, ..., `Base::memInit`, which expands
// lusup, ucol, lsub and usub afresh).
//
// Storage: the filled pattern F of P A Pᵀ column by column, row indices
// ascending; in column j the rows above the diagonal hold U(:, j), the
// diagonal U(j, j), the rows below the multipliers L(:, j) (unit L).  The
// numeric factorization is left-looking (column j is updated by the
// columns k < j with U(k, j) ≠ 0, in ascending k): the pattern of every
// update lies in F by the symbolic factorization (Liu's elimination tree).
#ifndef ODEPKG_FIXED_PATTERN_LU_HPP
#define ODEPKG_FIXED_PATTERN_LU_HPP

#include "Types.hpp"

#include <Eigen/OrderingMethods>

#include <algorithm>
#include <cmath>
#include <vector>

namespace odepkg {

class FixedPatternLU {
 public:
  static constexpr double kPivotTol = 1e-13;

  /// The ordering and the factors' pattern for the structure of the
  /// square A (its values are not read); all values zero.  The first
  /// `first` rows and columns are eliminated before the others, each group
  /// in AMD's order (a saddle-point matrix [A B; C 0]: its primal block
  /// first, whose pivots do not vanish, then the Schur complement's).
  void analyse(const SpMat& A, int first = 0) {
    const int m = static_cast<int>(A.rows());
    m_ = m;
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> Pinv;
    Eigen::AMDOrdering<int>()(A, Pinv);  // on the pattern of A + Aᵀ
    old_of_new_.assign(Pinv.indices().data(), Pinv.indices().data() + m);
    if (first > 0) std::stable_partition(old_of_new_.begin(), old_of_new_.end(), [first](int k) { return k < first; });
    new_of_old_.assign(m, 0);
    for (int k = 0; k < m; ++k) new_of_old_[old_of_new_[k]] = k;
    // the symmetric pattern of P A Pᵀ, rows below the diagonal per column
    std::vector<std::vector<int>> lower(m);
    for (int j = 0; j < A.outerSize(); ++j)
      for (SpMat::InnerIterator it(A, j); it; ++it) {
        const int a = new_of_old_[it.row()], b = new_of_old_[j];
        if (a != b) lower[std::min(a, b)].push_back(std::max(a, b));
      }
    // row by row, the row pattern of L by climbing the elimination tree
    // from each entry left of the diagonal (each entry (i, k) of the
    // symmetric pattern with k < i is stored in lower[k]: transpose it)
    std::vector<std::vector<int>> left(m), Lcol(m), Ucol(m);
    for (int k = 0; k < m; ++k)
      for (int i : lower[k]) left[i].push_back(k);
    std::vector<int> parent(m, -1), flag(m, -1);
    for (int i = 0; i < m; ++i) {
      flag[i] = i;
      for (int k : left[i]) {
        while (flag[k] != i) {
          if (parent[k] == -1) parent[k] = i;
          Lcol[k].push_back(i);  // L(i, k), i ascending
          Ucol[i].push_back(k);  // U(k, i)
          flag[k] = i;
          k = parent[k];
        }
      }
    }
    Fp_.assign(m + 1, 0);
    diag_.assign(m, 0);
    Fi_.clear();
    for (int j = 0; j < m; ++j) {
      std::sort(Ucol[j].begin(), Ucol[j].end());
      Fi_.insert(Fi_.end(), Ucol[j].begin(), Ucol[j].end());
      diag_[j] = static_cast<int>(Fi_.size());
      Fi_.push_back(j);
      Fi_.insert(Fi_.end(), Lcol[j].begin(), Lcol[j].end());
      Fp_[j + 1] = static_cast<int>(Fi_.size());
    }
    Fx_.assign(Fi_.size(), 0.0);
    w_.assign(m, 0.0);
    valid_ = false;
  }

  int rows() const { return m_; }
  /// Entries of the factors (A's and the fill).
  int nonzeros() const { return static_cast<int>(Fx_.size()); }
  /// The place of A(i, j) in values(), -1 outside the analysed pattern.
  int position(int i, int j) const {
    const int a = new_of_old_[i], b = new_of_old_[j];
    const auto first = Fi_.begin() + Fp_[b], last = Fi_.begin() + Fp_[b + 1];
    const auto p = std::lower_bound(first, last, a);
    return (p != last && *p == a) ? static_cast<int>(p - Fi_.begin()) : -1;
  }
  /// A's values, to be set at the places position() gives after zero().
  double* values() { return Fx_.data(); }
  void zero() {
    std::fill(Fx_.begin(), Fx_.end(), 0.0);
    valid_ = false;
  }

  /// Factorizes the A held in values(), in place; false for a pivot below
  /// kPivotTol times its column's largest entry, or a non-finite value.
  bool factorize() {
    valid_ = false;
    const int* Fp = Fp_.data();
    const int* Fi = Fi_.data();
    double* Fx = Fx_.data();
    double* w = w_.data();
    for (int j = 0; j < m_; ++j) {
      double scale = 0.0;
      for (int p = Fp[j]; p < Fp[j + 1]; ++p) {
        w[Fi[p]] = Fx[p];
        scale = std::max(scale, std::abs(Fx[p]));
      }
      for (int p = Fp[j]; p < diag_[j]; ++p) {
        const int k = Fi[p];
        const double ukj = w[k];
        if (ukj == 0.0) continue;
        for (int q = diag_[k] + 1; q < Fp[k + 1]; ++q) w[Fi[q]] -= Fx[q] * ukj;
      }
      const double pivot = w[j];
      if (!std::isfinite(pivot) || !(std::abs(pivot) > kPivotTol * scale)) return false;
      for (int p = Fp[j]; p < diag_[j] + 1; ++p) Fx[p] = w[Fi[p]];
      for (int p = diag_[j] + 1; p < Fp[j + 1]; ++p) Fx[p] = w[Fi[p]] / pivot;
    }
    valid_ = Eigen::Map<const Vec>(Fx, static_cast<Eigen::Index>(Fx_.size())).allFinite();
    return valid_;
  }
  bool valid() const { return valid_; }
  /// |U(j, j)|, the j-th pivot (in the elimination order) of the factorized A.
  double pivot(int j) const { return std::abs(Fx_[diag_[j]]); }

  /// x = A⁻¹ b for the factorized A (x may alias b).
  void solve(const ConstVecRef& b, VecRef x) {
    const int* Fp = Fp_.data();
    const int* Fi = Fi_.data();
    const double* Fx = Fx_.data();
    double* y = w_.data();
    for (int k = 0; k < m_; ++k) y[k] = b(old_of_new_[k]);
    for (int j = 0; j < m_; ++j) {
      const double yj = y[j];
      for (int q = diag_[j] + 1; q < Fp[j + 1]; ++q) y[Fi[q]] -= Fx[q] * yj;
    }
    for (int j = m_ - 1; j >= 0; --j) {
      const double yj = (y[j] /= Fx[diag_[j]]);
      for (int q = Fp[j]; q < diag_[j]; ++q) y[Fi[q]] -= Fx[q] * yj;
    }
    for (int k = 0; k < m_; ++k) x(old_of_new_[k]) = y[k];
  }

 private:
  int m_ = 0;
  std::vector<int> old_of_new_, new_of_old_;
  std::vector<int> Fp_, Fi_, diag_;  ///< the filled pattern, diag_[j]: U(j, j)'s place
  std::vector<double> Fx_, w_;       ///< the factors' values; a dense column
  bool valid_ = false;
};

}  // namespace odepkg

#endif
