// SparseGramSolver.hpp — the multiplier systems of the sparse RATTLE path,
// K = G diag(w) G^T (G sparse m x d, w > 0 the diagonal of T_pp), solved by
// a sparse LDL^T factorization: Eigen's SimplicialLDLT with the fill-
// reducing AMD ordering, or, for a K of bandwidth <= 8 (a chain's is
// tridiagonal), a banded LDL^T in K's own order (O(m), no permutation,
// sequential memory access; a tridiagonal K of full rank factorized from
// both ends at once, band_factor).  Eigen's sparse modules are header-only: no
// library to link (SuiteSparse's CHOLMOD would need one, for supernodal
// speed that matters only for K with much fill, not for chains or trees).
//
// The symbolic analysis (ordering, elimination tree, pattern of L) is done
// once per pattern of K — that of G is fixed (HamiltonianProblem keeps the
// union of the patterns met) — and only the numeric factorization is
// repeated.
//
// Rank deficiency (redundant constraints, singular configurations: G loses
// rank, K is only semidefinite) shows as pivots D_i of LDL^T that are tiny
// (|D_i| <= tol max D) or not positive.  Those pivots are dropped in the
// solve (their component of L^{-1} b is set to 0: a truncated LDL^T, the
// rank-revealing use of a semidefinite Cholesky of Higham, "Accuracy and
// Stability of Numerical Algorithms", §10.3); for a consistent right-hand
// side b in range(K) this is a solution of K x = b, not the minimum-norm one,
// but G^T x, the constraint force, is the same for every solution.  An
// exactly zero pivot stops Eigen's factorization: K is then factorized again
// with a shift tol/1000 max K_ii on its diagonal (a regularisation far below
// the drop tolerance), whose tiny pivots are dropped in the same way.
#ifndef ODEPKG_CONSTRAINED_SPARSE_GRAM_SOLVER_HPP
#define ODEPKG_CONSTRAINED_SPARSE_GRAM_SOLVER_HPP

#include "Finite.hpp"
#include "SparsePatternUnion.hpp"
#include "SparseRowView.hpp"
#include "Types.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SparseCholesky>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace odepkg {

/// Eigen's sparse x dense products run on OpenMP threads when the oct-files
/// are built with OpenMP (Octave's flags) and the matrix has more than 20000
/// nonzeros; these memory-bound O(nnz) products then spend most of their
/// time in the threads' barriers (measured: a 10^4-link chain 30x slower on
/// a loaded 2-core machine).  The sparse path runs single-threaded inside
/// this guard, which restores the setting after.
class SingleThreadedEigen {
 public:
  SingleThreadedEigen() : saved_(Eigen::nbThreads()) {
    if (saved_ != 1) Eigen::setNbThreads(1);
  }
  ~SingleThreadedEigen() {
    if (saved_ != 1) Eigen::setNbThreads(saved_);
  }
  SingleThreadedEigen(const SingleThreadedEigen&) = delete;
  SingleThreadedEigen& operator=(const SingleThreadedEigen&) = delete;

 private:
  int saved_;
};

class SparseGramSolver {
 public:
  explicit SparseGramSolver(double tol = 1e-10) : tol_(tol) {}

  /// Factorize K = G diag(w) G^T.  Returns false if K is not finite.
  /// `pattern`: a token of G's structure (HamiltonianProblem's pattern
  /// version), or -1; while it is the one last seen, the structure is not
  /// compared again (an O(nnz) pass).
  bool factor(const SpMat& G, const ConstVecRef& w, long pattern = -1) {
    sync_gram(G, pattern);
    return factor_synced(G, w);
  }

  /// The same factorization, with K's band (a banded K, once analysed by
  /// the overload above or by this one's first call) assembled from `rows`,
  /// a row view of G: over each row i, K_ii = sum_t w_col(t) G_t^2, and
  /// K_ij (0 < i - j <= b) over the columns rows i and j share, from a list
  /// of their pairs of positions in the view built once per structure.
  /// Reads the view's arrays sequentially where the other path gathers
  /// from G's values by per-product lists; the products are summed in the
  /// same order (by column, (w_k G_ik) G_jk), so K is the same.
  /// Precondition: `rows` holds G's values (rows.assign(G, ...) or assign_multiply since G
  /// last changed); K is assembled from the view's values.  Only its sizes
  /// and count of nonzeros are checked per call, its structure against G's
  /// once per structure; a view that fails these gets the path above.
  /// `w_constant`: w is one value repeated (equal masses), read once
  /// instead of per product (the same products, so the same K).
  bool factor(const SpMat& G, const SparseRowView& rows, const ConstVecRef& w, long pattern = -1,
              bool w_constant = false) {
    sync_gram(G, pattern);
    if (!natural_ || band_version_ != gram_version_ || !row_pairs(G, rows)) return factor_synced(G, w);
    if (w_constant && w.size() > 0) {
      const double c = w(0);
      return factor_band_from_rows(rows, [c](int) { return c; });
    }
    const double* wp = w.data();
    return factor_band_from_rows(rows, [wp](int k) { return wp[k]; });
  }

  /// Where K's band goes (K_ii at [2i], K_i+1,i at [2i + 1]) when K = G W
  /// G^T is tridiagonal in G's row order and `rows` (prepared for G) holds
  /// G's structure: the caller fills it as it gathers G's rows
  /// (SparseRowView::assign_multiply_gram) and calls factor_band; null
  /// otherwise (factor() then, as before).
  double* tridiagonal_band(const SpMat& G, const SparseRowView& rows, long pattern = -1) {
    sync_gram(G, pattern);
    band_offered_ = natural_ && b_ == 1 && band_version_ == gram_version_ && row_pairs(G, rows);
    return band_offered_ ? Kb_.data() : nullptr;
  }
  /// factor() of the band tridiagonal_band handed out, once filled;
  /// `zero`: 0 iff its entries are finite (else false, as factor()).  Only
  /// right after a tridiagonal_band that offered the band.
  bool factor_band(double zero) {
    if (!band_offered_) throw std::logic_error("SparseGramSolver::factor_band without a band offered");
    band_offered_ = false;
    valid_ = false;
    null_ready_ = false;
    twisted_ = false;
    if (zero != 0.0) return false;
    return band_factor(false);
  }

 private:
  /// factor()'s band from the row view, with w_k = weight(k).
  template <class Weight>
  bool factor_band_from_rows(const SparseRowView& rows, Weight weight) {
    valid_ = false;
    null_ready_ = false;
    twisted_ = false;
    const int m = static_cast<int>(K_.rows()), b = b_;
    const int* rs = rows.row_starts();
    const int* col = rows.columns();
    const double* v = rows.values();
    const int* ps = pair_start_.data();  // off-diagonal slot (j, j + d) at j b + d - 1
    const int* pr = pairs_.data();       // (t_i, t_j) of each shared column
    double* kb = Kb_.data();
    double z = 0.0;  // sum of 0 K_ij: NaN iff an entry is not finite (all_finite fused in)
    // K_jj = sum over row j of w_col(t) G_t^2
    auto diagonal = [&](int j) {
      double s = 0.0;
      for (int t = rs[j]; t < rs[j + 1]; ++t) s += weight(col[t]) * v[t] * v[t];
      return s;
    };
    // K_ij = sum over the columns k rows i and j share of w_k G_ik G_jk
    auto shared = [&](int slot) {
      double s = 0.0;
      for (int u = ps[slot]; u < ps[slot + 1]; ++u) {
        const int ti = pr[2 * u], tj = pr[2 * u + 1];
        s += weight(col[ti]) * v[ti] * v[tj];
      }
      return s;
    };
    if (b == 1) {  // tridiagonal (a chain): no loop over the band's slots
      for (int j = 0; j < m; ++j) {
        const double s = diagonal(j), e = shared(j);
        kb[2 * j] = s;
        kb[2 * j + 1] = e;
        z += s * 0.0 + e * 0.0;
      }
    } else {
      for (int j = 0; j < m; ++j, kb += b + 1) {
        kb[0] = diagonal(j);
        z += kb[0] * 0.0;
        for (int d = 1; d <= b; ++d) {
          kb[d] = shared(j * b + d - 1);
          z += kb[d] * 0.0;
        }
      }
    }
    if (z != 0.0) return false;
    return band_factor(false);
  }

  /// G's structure against the one analysed: compared unless `pattern` is
  /// the token last seen (an O(nnz) pass), analysed again if it differs.
  void sync_gram(const SpMat& G, long pattern) {
    if (!gram_ready_ || pattern < 0 || pattern != token_) {
      if (!gram_ready_ || !same_pattern(G, Gpattern_)) gram_pattern(G);
      token_ = pattern;
    }
  }

  /// factor() once G's structure is synced.
  bool factor_synced(const SpMat& G, const ConstVecRef& w) {
    const double* gv = G.valuePtr();
    const int* outer = G.outerIndexPtr();
    if (natural_ && band_version_ == gram_version_) {
      // banded K: each entry of its lower band summed from its own list of
      // products w_k G_ak G_ck (gathered: no entry waits for the last
      // update of another, as it would if the products were added column by
      // column), no K_ in between
      valid_ = false;
      null_ready_ = false;
      twisted_ = false;
      double* kb = Kb_.data();
      const int* start = band_start_.data();
      const int* pa = band_a_.data();
      const int* pc = band_c_.data();
      const int* pk = band_k_.data();
      const double* wp = w.data();
      const int nslots = static_cast<int>(Kb_.size());
      for (int slot = 0; slot < nslots; ++slot) {
        double sum = 0.0;
        for (int t = start[slot]; t < start[slot + 1]; ++t) sum += wp[pk[t]] * gv[pa[t]] * gv[pc[t]];
        kb[slot] = sum;
      }
      if (!all_finite(Kb_)) return false;
      return band_factor(false);
    }
    // K = sum over the columns k of G of w_k g_k g_k^T, into K's fixed
    // pattern through the precomputed positions: O(sum_k nnz(g_k)^2)
    Eigen::Map<Vec> kv(K_.valuePtr(), K_.nonZeros());
    kv.setZero();
    const int* pos = pos_.data();
    for (int k = 0; k < G.outerSize(); ++k) {
      const double wk = w(k);
      for (int a = outer[k]; a < outer[k + 1]; ++a) {
        const double ga = wk * gv[a];
        for (int c = outer[k]; c < outer[k + 1]; ++c) kv[*pos++] += ga * gv[c];
      }
    }
    return factor_K();
  }

  /// The pairs of view positions for the row-view assembly, for G's
  /// structure and that of `rows`: false if the view is not of G's
  /// structure.  The view's layout is a function of G's structure (a
  /// counting sort by row), so the pairs are rebuilt only when G's changes;
  /// a view analysed again is only checked against G.
  bool row_pairs(const SpMat& G, const SparseRowView& rows) {
    if (rows.structure_id() == 0 || rows.rows() != G.rows() || rows.cols() != G.cols() ||
        rows.nonzeros() != G.nonZeros())
      return false;
    if (pair_view_ == rows.structure_id() && pair_checked_ == gram_version_) return pair_ok_;
    pair_view_ = rows.structure_id();
    pair_checked_ = gram_version_;
    pair_ok_ = rows_match(G, rows);
    if (pair_ok_ && pair_version_ != gram_version_) build_pairs(rows);
    return pair_ok_;
  }

  /// Every entry of G, column by column, at the next position of its row
  /// in the view (the view's columns ascend within a row).
  bool rows_match(const SpMat& G, const SparseRowView& rows) {
    const int m = static_cast<int>(G.rows());
    const int* rs = rows.row_starts();
    const int* col = rows.columns();
    if (rs[0] != 0 || rs[m] != G.nonZeros()) return false;
    pair_next_.assign(rs, rs + m);
    const int* outer = G.outerIndexPtr();
    const int* inner = G.innerIndexPtr();
    for (int k = 0; k < G.outerSize(); ++k)
      for (int a = outer[k]; a < outer[k + 1]; ++a) {
        const int r = inner[a], t = pair_next_[r]++;
        if (t >= rs[r + 1] || col[t] != k) return false;
      }
    return true;
  }

  /// For each off-diagonal slot (i, j), 0 < i - j <= b_, the positions
  /// (t_i, t_j) in the view of G_ik and G_jk for the columns k the two rows
  /// share (a merge of their ascending columns), in column order.
  void build_pairs(const SparseRowView& rows) {
    const int m = static_cast<int>(K_.rows()), b = b_;
    const int* rs = rows.row_starts();
    const int* col = rows.columns();
    pair_start_.assign(static_cast<std::size_t>(m) * b + 1, 0);
    pairs_.clear();
    for (int j = 0; j < m; ++j)
      for (int d = 1; d <= b; ++d) {
        const int i = j + d;
        if (i < m) {
          int ti = rs[i], tj = rs[j];
          while (ti < rs[i + 1] && tj < rs[j + 1]) {
            if (col[ti] < col[tj]) {
              ++ti;
            } else if (col[tj] < col[ti]) {
              ++tj;
            } else {
              pairs_.push_back(ti++);
              pairs_.push_back(tj++);
            }
          }
        }
        pair_start_[static_cast<std::size_t>(j) * b + d] = static_cast<int>(pairs_.size() / 2);
      }
    pair_version_ = gram_version_;
  }

 public:
  /// Factorize the nonsymmetric S = A diag(w) B^T (A and B on one
  /// structure, as G(q_1) and G(q_0) on the fixed pattern) when its pattern,
  /// that of A A^T, has bandwidth <= kNaturalBand: a banded LU without
  /// pivoting (Golub, Van Loan, "Matrix Computations", §4.3; S is a small
  /// perturbation of the semidefinite K, whose LDL^T needs none), pivots
  /// |U_jj| <= tol max_i |S_ii| dropped as in band_factor.  Returns false
  /// when S is not banded (the caller iterates with K instead) or not
  /// finite; solve_product() then solves S x = r in O(m b).  A tridiagonal
  /// S (a chain) of full rank takes the twisted LU instead
  /// (twisted_product_factor): two recurrences of half the length.
  bool factor_product(const SpMat& A, const ConstVecRef& w, const SpMat& B, long pattern = -1) {
    lu_valid_ = false;
    lu_twisted_ = false;
    if (!gram_ready_ || pattern < 0 || pattern != token_) {
      if (!gram_ready_ || !same_pattern(A, Gpattern_)) gram_pattern(A);
      token_ = pattern;
    }
    if (B.nonZeros() != A.nonZeros()) return false;
    if (!lu_analysed_ || lu_version_ != gram_version_) {
      const int band = bandwidth(K_);
      lu_banded_ = band <= kNaturalBand;
      lu_b_ = band;
      lu_version_ = gram_version_;
      lu_analysed_ = true;
      if (lu_banded_) {
        // the slot in Sb_ of each product of gram_pattern (pos_ order)
        const Eigen::Index m = K_.rows(), w2 = 2 * band + 1;
        Sb_.resize(m * w2);
        Sinv_.resize(m);
        lu_pos_.resize(pos_.size());
        for (size_t t = 0; t < pos_.size(); ++t) {
          const int p = pos_[t];
          const int j = column_of(p);
          const int i = K_.innerIndexPtr()[p];
          lu_pos_[t] = i * static_cast<int>(w2) + (j - i + band);
        }
      }
    }
    if (!lu_banded_) return false;
    assemble_product(A, w, B);
    if (!Sb_.allFinite()) return false;
    // S(i, j) at Sb_[i w2 + j - i + b]; L (unit, below) and U overwrite it
    const int m = static_cast<int>(K_.rows()), b = lu_b_, w2 = 2 * b + 1;
    double* S = Sb_.data();
    double smax = 0.0;
    for (int i = 0; i < m; ++i) smax = std::max(smax, std::abs(S[i * w2 + b]));
    const double drop = tol_ * smax;
    lu_twisted_ = b == 1 && smax > 0.0 && twisted_product_factor(drop);
    if (lu_twisted_) {
      lu_valid_ = true;
      return true;
    }
    if (b == 1 && smax > 0.0) assemble_product(A, w, B);  // the twisted attempt overwrote it
    for (int k = 0; k < m; ++k) {
      const double piv = S[k * w2 + b];
      const bool keep = smax > 0.0 && std::abs(piv) > drop;
      Sinv_(k) = keep ? 1.0 / piv : 0.0;
      const int iend = std::min(m - 1, k + b);
      for (int i = k + 1; i <= iend; ++i) {
        double& lik = S[i * w2 + (k - i + b)];
        lik = keep ? lik * Sinv_(k) : 0.0;
        if (lik == 0.0) continue;
        for (int jj = k + 1; jj <= iend; ++jj) S[i * w2 + (jj - i + b)] -= lik * S[k * w2 + (jj - k + b)];
      }
    }
    lu_valid_ = true;
    return true;
  }

  /// x = S^+ r for the S of the last factor_product (x may alias r).
  void solve_product(const ConstVecRef& r, VecRef x) const {
    const int m = static_cast<int>(Sinv_.size()), b = lu_b_, w2 = 2 * b + 1;
    if (x.data() != r.data()) x = r;
    if (m == 0) return;
    const double* S = Sb_.data();
    const double* inv = Sinv_.data();
    double* xp = x.data();
    if (lu_twisted_) {
      twisted_product_solve(xp);
      return;
    }
    if (b == 1) {  // L(i, i-1) at S[3i], U(i, i) at S[3i + 1], U(i, i+1) at S[3i + 2]
      double y = xp[0];
      for (int i = 1; i < m; ++i) xp[i] = y = xp[i] - S[3 * i] * y;
      double xn = xp[m - 1] * inv[m - 1];
      xp[m - 1] = xn;
      for (int i = m - 2; i >= 0; --i) xp[i] = xn = (xp[i] - S[3 * i + 2] * xn) * inv[i];
      return;
    }
    for (int i = 1; i < m; ++i) {
      double s = xp[i];
      for (int k = std::max(0, i - b); k < i; ++k) s -= S[i * w2 + (k - i + b)] * xp[k];
      xp[i] = s;
    }
    for (int i = m - 1; i >= 0; --i) {
      double s = xp[i];
      const int jend = std::min(m - 1, i + b);
      for (int j = i + 1; j <= jend; ++j) s -= S[i * w2 + (j - i + b)] * xp[j];
      xp[i] = s * inv[i];
    }
  }

  /// S factorized by the last factor_product.
  bool product_valid() const { return lu_valid_; }
  /// ... by its twisted factorization (tridiagonal, no pivot dropped).
  bool product_twisted() const { return lu_valid_ && lu_twisted_; }
  void invalidate_product() { lu_valid_ = false; }

  bool valid() const { return valid_; }
  void invalidate() { valid_ = false; }
  bool rank_deficient() const { return deficient_; }
  int rank() const { return rank_; }
  /// Ratio of the largest pivot to the smallest kept one (full rank) or to
  /// the largest dropped one (rank-deficient; infinite for a zero one).
  double condition_estimate() const { return cond_; }

  /// x = K^+ b by the truncated LDL^T (x may alias b); for a rank-deficient
  /// K, the minimum-norm solution (project_out_null).
  void solve(const ConstVecRef& b, VecRef x) {
    if (natural_) {
      band_solve(b, x);
      if (deficient_) project_out_null(x);
      return;
    }
    with_ldlt([&](auto& l) {
      const auto& D = l.vectorD();
      const bool permuted = l.permutationP().size() > 0;
      if (permuted)
        y_ = l.permutationP() * b;
      else
        y_ = b;
      l.matrixL().solveInPlace(y_);
      if (deficient_)
        for (Eigen::Index i = 0; i < y_.size(); ++i) y_(i) = keep_(i) ? y_(i) / D(i) : 0.0;
      else
        y_.array() /= D.array();
      l.matrixU().solveInPlace(y_);
      if (permuted)
        x = l.permutationPinv() * y_;
      else
        x = y_;
    });
    if (deficient_) project_out_null(x);
  }

  /// x <- x - Z (Z^T Z)^{-1} Z^T x, Z a basis of the null space of the
  /// factorized K: of all the solutions x + Z c of a consistent K x = b the
  /// one of minimum norm.  With P K P^T = L D L^T and the pivots D_j, j in J,
  /// dropped, z_j = P^T L^{-T} e_j satisfies K z_j = P^T L D e_j = D_j P^T
  /// L e_j ~ 0: one triangular solve per dropped pivot, done once per
  /// factorization when first needed.  Above kMaxNullDim dropped pivots (a
  /// dense m x k basis) x is left as it is: a solution, not the minimum-
  /// norm one (the constraint force G^T x is the same).
  void project_out_null(VecRef x) {
    if (!deficient_ || !null_basis()) return;
    c_.noalias() = Z_.transpose() * x;
    c_ = ZtZ_.solve(c_);
    x.noalias() -= Z_ * c_;
  }

  /// Largest null space projected out by project_out_null.
  static constexpr int kMaxNullDim = 32;

  /// The ordering in use: true for the natural one (a banded K).
  bool natural_ordering() const { return natural_; }
  /// The factorization in use is the twisted one of a tridiagonal K
  /// (band_factor; full rank), not a one-sided LDL^T.
  bool twisted() const { return twisted_; }

 private:
  bool factor_K() {
    valid_ = false;
    null_ready_ = false;
    twisted_ = false;
    const Eigen::Map<const Vec> v(K_.valuePtr(), K_.nonZeros());
    if (!v.allFinite()) return false;
    if (!analysed_ || !same_pattern(K_, Kpattern_)) {
      // A K of small bandwidth (a chain: tridiagonal) is factorized in its
      // own order: no fill beyond the band, no permutation, sequential
      // memory access; otherwise approximate minimum degree (AMD).
      const int band = bandwidth(K_);
      natural_ = band <= kNaturalBand;
      if (natural_)
        band_pattern(band);
      else
        amd_.analyzePattern(K_);
      Kpattern_ = K_;
      analysed_ = true;
    } else if (natural_ && band_version_ != gram_version_) {
      band_pattern(b_);  // G's pattern grew inside K's: new product slots
    }
    if (natural_) return band_factor();
    with_ldlt([&](auto& l) { l.factorize(K_); });
    if (info() != Eigen::Success) {  // an exactly zero pivot: shift
      double dmax = 0.0;
      for (int j = 0; j < K_.outerSize(); ++j) dmax = std::max(dmax, std::abs(K_.coeff(j, j)));
      const double shift = (dmax > 0.0 ? dmax : 1.0) * tol_ * 1e-3;
      Ks_ = K_;
      for (int j = 0; j < Ks_.outerSize(); ++j) Ks_.coeffRef(j, j) += shift;
      if (!same_pattern(Ks_, Kpattern_)) {  // a structurally missing diagonal entry
        with_ldlt([&](auto& l) { l.analyzePattern(Ks_); });
        Kpattern_ = Ks_;
      }
      with_ldlt([&](auto& l) { l.factorize(Ks_); });
      if (info() != Eigen::Success) return false;
    }
    const Vec& D = amd_.vectorD();
    const Eigen::Index n = D.size();
    keep_.resize(n);
    double dmax = 0.0;
    for (Eigen::Index i = 0; i < n; ++i) dmax = std::max(dmax, D(i));
    double kept_min = std::numeric_limits<double>::infinity(), dropped_max = 0.0;
    rank_ = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      keep_(i) = dmax > 0.0 && D(i) > tol_ * dmax;
      if (keep_(i)) {
        ++rank_;
        kept_min = std::min(kept_min, D(i));
      } else {
        dropped_max = std::max(dropped_max, std::max(D(i), 0.0));
      }
    }
    return finish_rank(n, dmax, kept_min, dropped_max);
  }

  /// The rank and condition estimate of a factorization of order n from
  /// its pivots: the largest, the smallest kept and the largest dropped.
  bool finish_rank(Eigen::Index n, double dmax, double kept_min, double dropped_max) {
    deficient_ = rank_ < n;
    if (rank_ == 0)
      cond_ = std::numeric_limits<double>::infinity();
    else if (deficient_)
      cond_ = dropped_max > 0.0 ? dmax / dropped_max : std::numeric_limits<double>::infinity();
    else
      cond_ = dmax / kept_min;
    valid_ = true;
    return true;
  }

  /// The column of K_'s value at position p.
  int column_of(int p) const {
    return static_cast<int>(std::upper_bound(K_.outerIndexPtr(), K_.outerIndexPtr() + K_.outerSize() + 1, p) -
                            K_.outerIndexPtr()) - 1;
  }

  /// Z_ and the factorization of Z^T Z for project_out_null (false: none,
  /// more than kMaxNullDim dropped pivots).
  bool null_basis() {
    if (null_ready_) return null_ok_;
    null_ready_ = true;
    null_ok_ = false;
    const Eigen::Index m = K_.rows(), k = m - rank_;
    if (k <= 0 || k > kMaxNullDim) return false;
    Z_.setZero(m, k);
    Eigen::Index col = 0;
    for (Eigen::Index j = 0; j < m; ++j) {
      if (keep_(j)) continue;
      auto z = Z_.col(col++);
      if (natural_) {  // L^T z = e_j, L unit lower of bandwidth b_
        const int b = b_;
        z(j) = 1.0;
        for (Eigen::Index i = j - 1; i >= 0; --i) {
          double s = 0.0;
          const Eigen::Index rend = std::min<Eigen::Index>(m - 1, i + b);
          for (Eigen::Index r = i + 1; r <= rend; ++r) s -= Lb_(r * b + (r - 1 - i)) * z(r);
          z(i) = s;
        }
      } else {
        y_.setZero(m);
        y_(j) = 1.0;
        amd_.matrixU().solveInPlace(y_);
        if (amd_.permutationP().size() > 0)
          z = amd_.permutationPinv() * y_;
        else
          z = y_;
      }
    }
    for (Eigen::Index c = 0; c < k; ++c) Z_.col(c).normalize();
    ZtZ_.compute(Z_.transpose() * Z_);
    c_.resize(k);
    null_ok_ = ZtZ_.info() == Eigen::Success;
    return null_ok_;
  }

  // ---- K of bandwidth b <= kNaturalBand, in its own order ----------------
  // A banded LDL^T without pivoting (Golub, Van Loan, "Matrix
  // Computations", §4.3): L_ij for 0 < i - j <= b, O(m b^2) to factor,
  // O(m b) to solve, no allocation after the first.  A pivot D_j <= tol
  // max_i K_ii is dropped as it is met: column j of L is set to 0 and
  // component j of the solution to 0 (the truncated LDL^T of the header),
  // so the later pivots are those of K without that direction.
  //
  // A tridiagonal K (b = 1, a chain) is first factorized from both ends
  // (twisted_factor); only when that meets a pivot to drop is the one-sided
  // loop run instead, so a rank-deficient K (and null_basis, which reads
  // the one-sided L) is handled as by the one-sided LDL^T alone.  The rank
  // test then judges other pivots: the one-sided last pivot is
  // 1 / (K^{-1})_{m-1,m-1}, the twist's 1 / (K^{-1})_kk, so a K that is
  // nearly singular in a direction small at row k (a null vector localised
  // at one end) can pass as full rank where the one-sided loop would drop a
  // pivot; its solution is then that of the regular, ill-conditioned K, and
  // the step's residual tests (RattleAcceptance) still judge the result.

  void band_pattern(int band) {
    b_ = band;
    const int m = static_cast<int>(K_.rows());
    band_src_.clear();
    band_dst_.clear();
    for (int j = 0; j < K_.outerSize(); ++j)
      for (int p = K_.outerIndexPtr()[j]; p < K_.outerIndexPtr()[j + 1]; ++p) {
        const int i = K_.innerIndexPtr()[p];
        if (i < j) continue;
        band_src_.push_back(p);
        band_dst_.push_back(j * (b_ + 1) + (i - j));  // Kb(j, i - j) = K(i, j)
      }
    // the slot in Kb_ of each product of gram_pattern (pos_ order), -1 for
    // the upper triangle
    std::vector<int> band_pos(pos_.size());
    for (size_t t = 0; t < pos_.size(); ++t) {
      const int p = pos_[t];
      const int j = column_of(p);
      const int i = K_.innerIndexPtr()[p];
      band_pos[t] = i >= j ? j * (b_ + 1) + (i - j) : -1;
    }
    band_version_ = gram_version_;
    Kb_.resize(static_cast<Eigen::Index>(m) * (b_ + 1));
    // the products of each slot of the lower band, by slot (a counting
    // sort of band_pos): positions a, c in G's values and G's column k
    const int nslots = static_cast<int>(Kb_.size());
    band_start_.assign(static_cast<std::size_t>(nslots) + 1, 0);
    for (const int slot : band_pos)
      if (slot >= 0) ++band_start_[slot + 1];
    for (int slot = 0; slot < nslots; ++slot) band_start_[slot + 1] += band_start_[slot];
    std::vector<int> next(band_start_.begin(), band_start_.end() - 1);
    band_a_.resize(band_start_[nslots]);
    band_c_.resize(band_start_[nslots]);
    band_k_.resize(band_start_[nslots]);
    const int* outer = Gpattern_.outerIndexPtr();
    std::size_t t = 0;
    for (int k = 0; k < Gpattern_.outerSize(); ++k)
      for (int a = outer[k]; a < outer[k + 1]; ++a)
        for (int c = outer[k]; c < outer[k + 1]; ++c, ++t) {
          const int slot = band_pos[t];
          if (slot < 0) continue;
          const int u = next[slot]++;
          band_a_[u] = a;
          band_c_[u] = c;
          band_k_[u] = k;
        }
    Lb_.resize(static_cast<Eigen::Index>(m) * std::max(b_, 1));
    Db_.resize(m);
    Dinv_.resize(m);
    keep_.resize(m);
  }

  /// `from_K`: Kb_ is first filled from K_'s values (else it holds K's band).
  bool band_factor(bool from_K = true) {
    const int m = static_cast<int>(K_.rows()), b = b_;
    if (from_K) {
      Kb_.setZero();
      const double* kv = K_.valuePtr();
      for (size_t t = 0; t < band_src_.size(); ++t) Kb_(band_dst_[t]) = kv[band_src_[t]];
    }
    // raw pointers: the oct-files keep Eigen's bounds checks (EigenConfig)
    const double* K = Kb_.data();
    double* Lp = Lb_.data();
    double* D = Db_.data();
    double* Di = Dinv_.data();
    const int w1 = b + 1;
    double kmax = 0.0;
    for (int j = 0; j < m; ++j) kmax = std::max(kmax, K[j * w1]);
    const double drop = tol_ * kmax;
    PivotTally tally;
    twisted_ = false;
    if (b == 1 && kmax > 0.0 && twisted_factor(drop, tally)) {
      twisted_ = true;
      keep_.setConstant(true);
      return finish_tally(m, tally);
    }
    if (b == 1) {  // tridiagonal (a chain): D_j = K_jj - K_j,j-1^2 / D_j-1, L(j+1, j) = K_j+1,j / D_j
      bool* keep = keep_.data();
      double lj = 0.0;  // L(j, j-1), 0 for j = 0
      for (int j = 0; j < m; ++j) {
        const double dj = K[2 * j] - (j > 0 ? lj * lj * D[j - 1] : 0.0);
        D[j] = dj;
        const bool kj = kmax > 0.0 && dj > drop;
        keep[j] = kj;
        const double inv = kj ? 1.0 / dj : 0.0;
        Di[j] = inv;
        if (j + 1 < m) Lp[j + 1] = lj = kj ? K[2 * j + 1] * inv : 0.0;
        tally.add(kj, dj);
      }
      return finish_tally(m, tally);
    }
    for (int j = 0; j < m; ++j) {
      // L(i, k), i - b <= k < i, at Lp[i b + (i - 1 - k)]
      const double* lj = Lp + static_cast<Eigen::Index>(j) * b;
      double dj = K[j * w1];
      for (int k = std::max(0, j - b); k < j; ++k) dj -= lj[j - 1 - k] * lj[j - 1 - k] * D[k];
      D[j] = dj;
      const bool keep = kmax > 0.0 && dj > drop;
      keep_(j) = keep;
      Di[j] = keep ? 1.0 / dj : 0.0;
      const int iend = std::min(m - 1, j + b);
      for (int i = j + 1; i <= iend; ++i) {
        double* li = Lp + static_cast<Eigen::Index>(i) * b;
        if (!keep) {
          li[i - 1 - j] = 0.0;
          continue;
        }
        double sij = K[j * w1 + (i - j)];
        for (int k = std::max(0, i - b); k < j; ++k) sij -= li[i - 1 - k] * lj[j - 1 - k] * D[k];
        li[i - 1 - j] = sij * Di[j];
      }
      tally.add(keep, dj);
    }
    return finish_tally(m, tally);
  }

  /// The pivots met by band_factor: their number kept, the largest kept,
  /// the smallest kept and the largest dropped (finish_rank's inputs).
  struct PivotTally {
    int rank = 0;
    double dmax = 0.0, kept_min = std::numeric_limits<double>::infinity(), dropped_max = 0.0;
    void add(bool kept, double d) {
      if (kept) {
        ++rank;
        dmax = std::max(dmax, d);
        kept_min = std::min(kept_min, d);
      } else {
        dropped_max = std::max(dropped_max, std::max(d, 0.0));
      }
    }
  };
  bool finish_tally(Eigen::Index n, const PivotTally& t) {
    rank_ = t.rank;
    return finish_rank(n, t.dmax, t.kept_min, t.dropped_max);
  }

  /// S(row_a, row_c) = sum over the columns k of A_ak w_k B_ck, straight
  /// into the band Sb_ (S(i, j) at Sb_[i (2b + 1) + j - i + b]).
  void assemble_product(const SpMat& A, const ConstVecRef& w, const SpMat& B) {
    Sb_.setZero();
    double* S = Sb_.data();
    const double* av = A.valuePtr();
    const double* bv = B.valuePtr();
    const int* outer = A.outerIndexPtr();
    const int* slot = lu_pos_.data();
    const double* wp = w.data();
    for (int k = 0; k < A.outerSize(); ++k) {
      const double wk = wp[k];
      for (int a = outer[k]; a < outer[k + 1]; ++a) {
        const double ga = wk * av[a];
        for (int c = outer[k]; c < outer[k + 1]; ++c) S[*slot++] += ga * bv[c];
      }
    }
  }

  /// The twisted LU of a tridiagonal S, in place (twisted_factor's
  /// recurrences without symmetry): with a_i = S(i, i-1), d_i = S(i, i),
  /// c_i = S(i, i+1) (at Sb_[3i], Sb_[3i + 1], Sb_[3i + 2]) and k = m/2,
  ///   u_i = d_i - l_i c_i-1,  l_i = a_i / u_i-1      (i < k, top-down),
  ///   v_j = d_j - r_j a_j+1,  r_j = c_j / v_j+1      (j > k, bottom-up),
  ///   g_k = d_k - l_k c_k-1 - r_k a_k+1,
  /// l_i replacing a_i (i <= k), r_j replacing c_j (j >= k), the pivots
  /// u, v, g replacing d and their inverses in Sinv_: two independent
  /// chains of divisions of half the length of the one-sided LU's.  False
  /// (Sb_ no longer S) if a pivot is not above `drop` in magnitude.
  bool twisted_product_factor(double drop) {
    const int m = static_cast<int>(Sinv_.size()), k = m / 2, nb = m - 1 - k;
    double* S = Sb_.data();
    double* inv = Sinv_.data();
    bool ok = true;  // (a NaN pivot fails |p| > drop)
    double it = 0.0, ib = 0.0;  // 1/u_i-1, 1/v_j+1
    auto top = [&](int i) {
      const double l = i > 0 ? S[3 * i] * it : 0.0;
      const double u = S[3 * i + 1] - (i > 0 ? l * S[3 * i - 1] : 0.0);
      S[3 * i] = l;
      S[3 * i + 1] = u;
      inv[i] = it = 1.0 / u;
      ok &= std::abs(u) > drop;
    };
    auto bottom = [&](int j) {
      const double r = j < m - 1 ? S[3 * j + 2] * ib : 0.0;
      const double v = S[3 * j + 1] - (j < m - 1 ? r * S[3 * j + 3] : 0.0);
      S[3 * j + 2] = r;
      S[3 * j + 1] = v;
      inv[j] = ib = 1.0 / v;
      ok &= std::abs(v) > drop;
    };
    for (int t = 0; t < nb; ++t) {
      top(t);
      bottom(m - 1 - t);
    }
    if (k > nb) top(k - 1);
    const double l = k > 0 ? S[3 * k] * it : 0.0, r = k < m - 1 ? S[3 * k + 2] * ib : 0.0;
    const double g = S[3 * k + 1] - (k > 0 ? l * S[3 * k - 1] : 0.0) - (k < m - 1 ? r * S[3 * k + 3] : 0.0);
    S[3 * k] = l;
    S[3 * k + 2] = r;
    S[3 * k + 1] = g;
    inv[k] = 1.0 / g;
    ok &= std::abs(g) > drop;
    return ok;
  }

  /// x <- S^{-1} x from twisted_product_factor: z from both ends (z_i =
  /// x_i - l_i z_i-1 above k, z_j = x_j - r_j z_j+1 below), x_k = (z_k -
  /// l_k z_k-1 - r_k z_k+1) / g_k, then outwards: x_i = (z_i - c_i x_i+1) /
  /// u_i, x_j = (z_j - a_j x_j-1) / v_j.  Two independent recurrences.
  void twisted_product_solve(double* x) const {
    const int m = static_cast<int>(Sinv_.size()), k = m / 2, nb = m - 1 - k;
    const double* S = Sb_.data();
    const double* inv = Sinv_.data();
    double zt = k > 0 ? x[0] : 0.0, zb = nb > 0 ? x[m - 1] : 0.0;  // z_i-1, z_j+1
    // top rows 1 .. k-1 and bottom rows m-2 .. k+1 (k - 1 >= nb - 1 of them)
    for (int i = 1, j = m - 2; j > k; ++i, --j) {
      x[i] = zt = x[i] - S[3 * i] * zt;
      x[j] = zb = x[j] - S[3 * j + 2] * zb;
    }
    if (k - 1 > nb - 1 && k > 1) x[k - 1] = zt = x[k - 1] - S[3 * (k - 1)] * zt;
    double zk = x[k];
    if (k > 0) zk -= S[3 * k] * zt;
    if (k < m - 1) zk -= S[3 * k + 2] * zb;
    double xt = x[k] = zk * inv[k], xb = xt;  // x_i+1, x_j-1
    // outwards: rows k-1 .. 0 and k+1 .. m-1 (k >= nb of them)
    for (int i = k - 1, j = k + 1; j < m; --i, ++j) {
      x[i] = xt = (x[i] - S[3 * i + 2] * xt) * inv[i];
      x[j] = xb = (x[j] - S[3 * j] * xb) * inv[j];
    }
    if (k > nb) x[0] = (x[0] - S[2] * xt) * inv[0];  // the top's extra row 0
  }

  /// The twisted ("burn at both ends") factorization of a tridiagonal K,
  /// K = N diag(D) N^T with the twist at k = m/2 (van der Vorst, Parallel
  /// Computing 5, 1987; Parlett, Dhillon, "Fernando's solution to
  /// Wilkinson's problem", Linear Algebra Appl. 267, 1997):
  ///   D_i = K_ii - K_i,i-1^2 / D_i-1   (i < k, top-down),
  ///   D_j = K_jj - K_j+1,j^2 / D_j+1   (j > k, bottom-up),
  ///   D_k = K_kk - K_k,k-1^2 / D_k-1 - K_k+1,k^2 / D_k+1,
  /// N unit, N(i+1, i) = K_i+1,i / D_i (i < k) at Lb_[i + 1], N(j-1, j) =
  /// K_j,j-1 / D_j (j > k) at Lb_[j].  The two recurrences run in one loop:
  /// two independent chains of divisions, each of half the length of the
  /// one-sided one.  False (the factor unusable) if a pivot is <= drop.
  bool twisted_factor(double drop, PivotTally& tally) {
    const int m = static_cast<int>(Db_.size()), k = m / 2, nb = m - 1 - k;  // k rows above, nb = k or k - 1 below
    const double* K = Kb_.data();  // K_ii at K[2i], K_i+1,i at K[2i + 1]
    double* N = Lb_.data();
    double* D = Db_.data();
    double* Di = Dinv_.data();
    // K_i,i-1^2 / D_i-1 and K_j+1,j^2 / D_j+1 for the next i, j, as K^2 (1/D):
    // one multiply after the division on each chain (an overflow of K^2
    // gives a pivot -inf, hence the one-sided loop)
    double pt = 0.0, pb = 0.0;
    double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
    bool ok = true;  // (a NaN pivot fails d > drop)
    auto top = [&](int i) {
      const double d = K[2 * i] - pt, inv = 1.0 / d, e = K[2 * i + 1], l = e * inv;
      D[i] = d;
      Di[i] = inv;
      N[i + 1] = l;
      pt = e * e * inv;
      ok &= d > drop;
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    };
    auto bottom = [&](int j) {
      const double d = K[2 * j] - pb, inv = 1.0 / d, e = K[2 * j - 1], u = e * inv;
      D[j] = d;
      Di[j] = inv;
      N[j] = u;
      pb = e * e * inv;
      ok &= d > drop;
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    };
    for (int i = 0; i < nb; ++i) {
      top(i);
      bottom(m - 1 - i);
    }
    if (k > nb) top(k - 1);
    const double dk = K[2 * k] - pt - pb;
    D[k] = dk;
    Di[k] = 1.0 / dk;
    ok &= dk > drop;
    if (!ok) return false;
    tally.rank = m;
    tally.dmax = std::max(hi, dk);
    tally.kept_min = std::min(lo, dk);
    return true;
  }

  /// x = N^{-T} D^{-1} N^{-1} x for the twisted factor: N y = x inward from
  /// both ends (y_i = x_i - N(i, i-1) y_i-1, i < k; y_j = x_j - N(j, j+1)
  /// y_j+1, j > k), the twist y_k = x_k - N(k, k-1) y_k-1 - N(k, k+1) y_k+1,
  /// z = D^{-1} y, then N^T x = z outward from x_k = z_k (x_i = z_i -
  /// N(i+1, i) x_i+1, x_j = z_j - N(j-1, j) x_j-1): each sweep two
  /// independent recurrences in one loop.  The inward sweep reads the
  /// right-hand side from r (r may be x: each r_i is read before x_i is
  /// written), so no copy of it precedes the solve.
  void twisted_solve(const double* r, double* x) const {
    const int m = static_cast<int>(Db_.size()), k = m / 2, nb = m - 1 - k;
    const double* N = Lb_.data();
    const double* di = Dinv_.data();
    double yt = 0.0, yb = 0.0;  // y_i-1, y_j+1
    if (nb > 0) {
      yt = r[0];
      x[0] = yt * di[0];
      yb = r[m - 1];
      x[m - 1] = yb * di[m - 1];
    }
    for (int i = 1, j = m - 2; i < nb; ++i, --j) {
      yt = r[i] - N[i] * yt;
      x[i] = yt * di[i];
      yb = r[j] - N[j + 1] * yb;
      x[j] = yb * di[j];
    }
    if (k > nb) {  // the top's extra row k - 1
      const int i = k - 1;
      yt = i > 0 ? r[i] - N[i] * yt : r[i];
      x[i] = yt * di[i];
    }
    double yk = r[k];
    if (k > 0) yk -= N[k] * yt;
    if (k < m - 1) yk -= N[k + 1] * yb;
    const double xk = yk * di[k];
    x[k] = xk;
    double xt = xk, xb = xk;  // x_i+1, x_j-1
    for (int i = k - 1, j = k + 1; j < m; --i, ++j) {
      x[i] = xt = x[i] - N[i + 1] * xt;
      x[j] = xb = x[j] - N[j] * xb;
    }
    if (k > nb) x[0] -= N[1] * xt;  // the top's extra row 0
  }

  /// x = L^{-T} D^+ L^{-1} rhs: forward substitution with the scaling by
  /// D^+ (Dinv_, zero for a dropped pivot) fused into it, then the backward
  /// one; a tridiagonal K (b = 1, a chain) in two tight recurrences, or by
  /// twisted_solve when band_factor kept its twisted factorization.
  void band_solve(const ConstVecRef& rhs, VecRef x) {
    const int m = static_cast<int>(Db_.size()), b = b_;
    if (m == 0) return;
    if (twisted_) {
      twisted_solve(rhs.data(), x.data());
      return;
    }
    if (x.data() != rhs.data()) x = rhs;
    const double* Lp = Lb_.data();
    const double* di = Dinv_.data();
    double* xp = x.data();
    if (b == 1) {  // L(i, i-1) at Lp[i]
      double y = xp[0];  // y_i = rhs_i - L(i, i-1) y_{i-1};  z_i = y_i / D_i
      xp[0] = y * di[0];
      for (int i = 1; i < m; ++i) {
        y = xp[i] - Lp[i] * y;
        xp[i] = y * di[i];
      }
      for (int i = m - 2; i >= 0; --i) xp[i] -= Lp[i + 1] * xp[i + 1];
      return;
    }
    for (int i = 1; i < m; ++i) {
      double s = xp[i];
      const double* li = Lp + static_cast<Eigen::Index>(i) * b;
      for (int k = i - 1, t = 0; k >= std::max(0, i - b); --k, ++t) s -= li[t] * xp[k];
      xp[i] = s;  // L y = rhs
    }
    for (int i = 0; i < m; ++i) xp[i] *= di[i];
    for (int i = m - 2; i >= 0; --i) {  // L^T x = y
      double s = xp[i];
      const int rend = std::min(m - 1, i + b);
      for (int r = i + 1; r <= rend; ++r) s -= Lp[static_cast<Eigen::Index>(r) * b + (r - 1 - i)] * xp[r];
      xp[i] = s;
    }
  }

  /// The pattern of K = G G^T (structural) and, for every pair of entries
  /// of one column of G, the position of their product in K's values.
  void gram_pattern(const SpMat& G) {
    Gpattern_ = G;
    K_ = G * SpMat(G.transpose());
    K_.makeCompressed();
    pos_.clear();
    const int* outer = G.outerIndexPtr();
    const int* inner = G.innerIndexPtr();
    for (int k = 0; k < G.outerSize(); ++k)
      for (int a = outer[k]; a < outer[k + 1]; ++a)
        for (int c = outer[k]; c < outer[k + 1]; ++c) {
          const int row = inner[a], col = inner[c];
          const int* b = K_.innerIndexPtr() + K_.outerIndexPtr()[col];
          const int* e = K_.innerIndexPtr() + K_.outerIndexPtr()[col + 1];
          const int* f = std::find(b, e, row);
          if (f == e) throw EigenAssertion("SparseGramSolver: an entry missing from the pattern of G G^T");
          pos_.push_back(static_cast<int>(f - K_.innerIndexPtr()));
        }
    gram_ready_ = true;
    ++gram_version_;
  }

  static int bandwidth(const SpMat& K) {
    int band = 0;
    for (int j = 0; j < K.outerSize(); ++j)
      for (SpMat::InnerIterator it(K, j); it; ++it) band = std::max(band, std::abs(static_cast<int>(it.row()) - j));
    return band;
  }

  static bool same_pattern(const SpMat& a, const SpMat& b) { return SparsePatternUnion::same_pattern(a, b); }

  /// Largest bandwidth of K factorized in its own order.
  static constexpr int kNaturalBand = 8;

  template <class F>
  void with_ldlt(F&& f) {
    f(amd_);
  }
  Eigen::ComputationInfo info() const { return amd_.info(); }

  double tol_;
  SpMat Gpattern_, K_, Ks_, Kpattern_;
  std::vector<int> pos_;  ///< positions in K_'s values of the products (gram_pattern)
  bool gram_ready_ = false;
  long gram_version_ = 0;  ///< counts gram_pattern's analyses
  // the banded LU of factor_product
  bool lu_analysed_ = false, lu_banded_ = false, lu_valid_ = false;
  bool lu_twisted_ = false;  ///< Sb_, Sinv_ hold twisted_product_factor's factors
  long lu_version_ = -1;
  int lu_b_ = 0;
  std::vector<int> lu_pos_;  ///< products of gram_pattern -> slots of Sb_
  Vec Sb_, Sinv_;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> amd_;
  bool natural_ = false;  ///< K banded: factorized by band_factor in its own order
  int b_ = 0;             ///< its bandwidth
  bool band_offered_ = false;  ///< tridiagonal_band handed out Kb_ for factor_band
  bool twisted_ = false;  ///< Lb_, Db_, Dinv_ hold twisted_factor's N and D (b = 1, full rank), else L and D of LDL^T
  std::vector<int> band_src_, band_dst_;  ///< K's lower values -> slots of Kb_
  std::vector<int> band_start_, band_a_, band_c_, band_k_;  ///< each slot's products (a, c in G's values, column k)
  long band_version_ = -1;                ///< the gram_version_ of the band's product lists
  long token_ = -1;                       ///< the caller's token of Gpattern_
  // the row-view assembly of the band (factor with a SparseRowView)
  std::vector<int> pair_start_, pairs_;  ///< each off-diagonal slot's pairs (t_i, t_j) of view positions
  std::vector<int> pair_next_;           ///< rows_match's cursor per row
  long pair_version_ = -1;               ///< the gram_version_ of pairs_
  long pair_view_ = -1, pair_checked_ = -1;  ///< the view's structure id and gram_version_ last checked
  bool pair_ok_ = false;                 ///< that view matched G's structure
  Vec Kb_, Lb_, Db_, Dinv_;  ///< K's band, L's band, D, D^+ (0 for a dropped pivot)
  Eigen::Array<bool, Eigen::Dynamic, 1> keep_;
  Vec y_;
  Mat Z_;                       ///< null-space basis (project_out_null)
  Eigen::LLT<Mat> ZtZ_;
  Vec c_;
  bool null_ready_ = false, null_ok_ = false;
  bool analysed_ = false, valid_ = false, deficient_ = false;
  int rank_ = 0;
  double cond_ = 1.0;
};

}  // namespace odepkg

#endif
