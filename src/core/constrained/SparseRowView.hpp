// SparseRowView.hpp — a row-major copy of a compressed-column G whose
// structure is fixed: the structure and the permutation from G's values to
// the rows' order once per structure, then one gather of the values per G.
//
// Why: y = G x over compressed columns scatters, y_i += G_ij x_j, and
// consecutive columns of a chain's G add to the same rows, so each update
// waits for the last one's store (measured: 11% of a 10^4-link RATTLE step
// on one store instruction).  Over rows, each y_i is a private sum.
#ifndef ODEPKG_CONSTRAINED_SPARSE_ROW_VIEW_HPP
#define ODEPKG_CONSTRAINED_SPARSE_ROW_VIEW_HPP

#include "Types.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

namespace odepkg {

class SparseRowView {
 public:
  /// Takes G's values; its structure is analysed again when `token` (a
  /// version of G's structure, HamiltonianProblem's pattern version) is
  /// negative or differs from the last one.
  void assign(const SpMat& G, long token) {
    prepare(G, token);
    const double* v = G.valuePtr();
    const int* p = perm_.data();
    double* out = val_.data();
    for (std::size_t t = 0; t < perm_.size(); ++t) out[t] = v[p[t]];
  }

  /// y = G x; returns max_i sum_j |G_ij| (G's infinity norm).
  double multiply(const double* x, double* y) const { return product(Stored{val_.data()}, x, Unscaled{}, y); }
  /// y = G (w x) for a scalar w, w x_j formed as each entry is read (the
  /// velocity w p of equal masses, never stored); same norm.
  double multiply_scaled(const double* x, double w, double* y) const {
    return product(Stored{val_.data()}, x, Scaled{w}, y);
  }
  /// assign(G, token) and multiply(x, y) in one pass: each value gathered
  /// from G, stored in the view and used at once (the same sums).
  double assign_multiply(const SpMat& G, long token, const double* x, double* y) {
    prepare(G, token);
    return product(Gathered{G.valuePtr(), perm_.data(), val_.data()}, x, Unscaled{}, y);
  }
  /// assign(G, token) and multiply_scaled(x, w, y) in one pass.
  double assign_multiply_scaled(const SpMat& G, long token, const double* x, double w, double* y) {
    prepare(G, token);
    return product(Gathered{G.valuePtr(), perm_.data(), val_.data()}, x, Scaled{w}, y);
  }

  /// The tridiagonal K = G W G^T (W = diag(w_k), w_k = weight(k)) of a G
  /// whose rows i and i + 2 share no column (a chain's: the caller's
  /// analysis of K's band, SparseGramSolver::tridiagonal_band), formed in
  /// the gather from each row's values as they are stored: K_ii at
  /// band[2i], K_i+1,i at band[2i + 1] (band[2m - 1] = 0), each summed as
  /// SparseGramSolver's assembly from the rows sums it (the same products
  /// in the same order: over row i, then over the columns rows i and i + 1
  /// share, ascending).  No pass over the view after the gather; a chain's
  /// rows of four entries are summed from the gather's registers.
  template <class Weight>
  struct TridiagonalGram {
    Weight weight;
    double* band;
    double zero = 0.0;  ///< 0 iff every entry written is finite
  };
  /// assign_multiply(G, token, x, y) with K's band on the way, the view
  /// prepared for G already (prepare(G, token) before tridiagonal_band,
  /// which checked this structure: not analysed again here).
  template <class Weight>
  double assign_multiply_gram(const SpMat& G, const double* x, double* y, TridiagonalGram<Weight>& k) {
    require_prepared(G);
    return product(Gathered{G.valuePtr(), perm_.data(), val_.data()}, x, Unscaled{}, y, GramRows<Weight>(this, &k));
  }
  /// assign_multiply_scaled(G, token, x, w, y) with K's band on the way
  /// (the view prepared for G, as above).
  template <class Weight>
  double assign_multiply_scaled_gram(const SpMat& G, const double* x, double w, double* y,
                                     TridiagonalGram<Weight>& k) {
    require_prepared(G);
    return product(Gathered{G.valuePtr(), perm_.data(), val_.data()}, x, Scaled{w}, y, GramRows<Weight>(this, &k));
  }

  /// The view analysed for a matrix of G's shape and count of nonzeros (the
  /// _gram assigns trust the caller's prepare for the rest).
  void require_prepared(const SpMat& G) const {
    if (!analysed_ || G.rows() != rows_ || G.cols() != cols_ ||
        G.nonZeros() != static_cast<Eigen::Index>(perm_.size()))
      throw EigenAssertion("SparseRowView: a _gram assign without prepare() for its G");
  }

  /// The structure analysed again if `token` says it may have changed (the
  /// assigns call it; public so that a caller can check the structure
  /// before a gather: SparseGramSolver::tridiagonal_band).
  void prepare(const SpMat& G, long token) {
    if (token < 0 || token != token_ || !analysed_ || G.rows() != rows_ || G.cols() != cols_ ||
        G.nonZeros() != static_cast<Eigen::Index>(perm_.size()))
      analyse(G);
    token_ = token;
  }

 private:
  /// product()'s hook after each row: nothing, or K's band (GramRows).
  struct NoGram {
    void row(Eigen::Index, int, int) {}
    void row4(Eigen::Index, int, int, int, int, int, double, double, double, double) {}
    void finish() {}
  };
  template <class Weight>
  struct GramRows {
    GramRows(const SparseRowView* view, TridiagonalGram<Weight>* k)
        : col(view->col_.data()), v(view->val_.data()), start(view->start_.data()), rows(view->rows_),
          weight(k->weight), band(k->band), out(k) {}
    const int* col;
    const double* v;
    const int* start;
    Eigen::Index rows;
    Weight weight;
    double* band;
    TridiagonalGram<Weight>* out;
    double zero = 0.0;
    // the last row's last two entries when it had four (else pc2 = -1):
    // a chain's next row shares exactly these columns
    int pc2 = -1, pc3 = -1;
    double pv2 = 0.0, pv3 = 0.0;
    /// A row of four entries, from the gather's registers: K_ii, and
    /// K_i,i-1 without a merge when the last row's last two columns are
    /// this row's first two (columns ascending in each row: exactly these
    /// two pairs, in column order); otherwise row() from the view.
    void row4(Eigen::Index i, int t0, int c0, int c1, int c2, int c3, double v0, double v1, double v2, double v3) {
      if (!(i > 0 && c0 == pc2 && c1 == pc3)) {
        row(i, t0, t0 + 4);
      } else {
        double s = 0.0;
        s += weight(c0) * v0 * v0;
        s += weight(c1) * v1 * v1;
        s += weight(c2) * v2 * v2;
        s += weight(c3) * v3 * v3;
        band[2 * i] = s;
        double e = 0.0;
        e += weight(c0) * v0 * pv2;
        e += weight(c1) * v1 * pv3;
        band[2 * i - 1] = e;
        zero += s * 0.0 + e * 0.0;
      }
      pc2 = c2;
      pc3 = c3;
      pv2 = v2;
      pv3 = v3;
    }
    /// Row i (entries t0 .. t1-1) is stored: K_ii, and K_i,i-1 over the
    /// columns rows i and i - 1 share (both rows in L1 now).
    void row(Eigen::Index i, int t0, int t1) {
      pc2 = -1;
      double s = 0.0;
      for (int t = t0; t < t1; ++t) s += weight(col[t]) * v[t] * v[t];
      band[2 * i] = s;
      double e = 0.0;
      if (i > 0) {  // a merge of the two rows' ascending columns
        int a = t0, b = start[i - 1];
        while (a < t1 && b < t0) {
          if (col[a] < col[b]) {
            ++a;
          } else if (col[b] < col[a]) {
            ++b;
          } else {
            e += weight(col[a]) * v[a] * v[b];
            ++a;
            ++b;
          }
        }
        band[2 * i - 1] = e;
      }
      zero += s * 0.0 + e * 0.0;
    }
    void finish() {
      if (rows > 0) band[2 * rows - 1] = 0.0;
      out->zero = zero;
    }
  };
  /// Entry t's value: read from the view, or gathered from G and stored.
  struct Stored {
    const double* v;
    double operator()(int t) const { return v[t]; }
  };
  struct Gathered {
    const double* g;
    const int* perm;
    double* out;
    double operator()(int t) const { return out[t] = g[perm[t]]; }
  };
  struct Unscaled {
    double operator()(double x) const { return x; }
  };
  struct Scaled {
    double w;
    double operator()(double x) const { return w * x; }
  };
  template <class Value, class S, class Gram = NoGram>
  double product(Value value, const double* x, S scale, double* y, Gram gram = Gram{}) const {
    const int* start = start_.data();
    const int* col = col_.data();
    double norm = 0.0;
    int t0 = rows_ > 0 ? start[0] : 0;  // (start_ is empty before the first analysis)
    for (Eigen::Index i = 0; i < rows_; ++i) {
      const int t1 = start[i + 1];
      double s = 0.0, a = 0.0;
      if (t1 - t0 == 4) {
        // a chain's row (two points, two coordinates each) without the
        // loop and its branches: 17-20% faster at 10^4 links; the loop's
        // sums in its order and form, one product added at a time (so a
        // compiler that contracts to FMA contracts both alike), 0 + a + b =
        // a + b up to the sign of a zero
        const double v0 = value(t0), v1 = value(t0 + 1), v2 = value(t0 + 2), v3 = value(t0 + 3);
        const int c0 = col[t0], c1 = col[t0 + 1], c2 = col[t0 + 2], c3 = col[t0 + 3];
        s = v0 * scale(x[c0]);
        s += v1 * scale(x[c1]);
        s += v2 * scale(x[c2]);
        s += v3 * scale(x[c3]);
        a = std::abs(v0) + std::abs(v1);
        a += std::abs(v2);
        a += std::abs(v3);
        gram.row4(i, t0, c0, c1, c2, c3, v0, v1, v2, v3);
      } else {
        for (int t = t0; t < t1; ++t) {
          const double v = value(t);
          s += v * scale(x[col[t]]);
          a += std::abs(v);
        }
        gram.row(i, t0, t1);
      }
      t0 = t1;
      y[i] = s;
      norm = std::max(norm, a);
    }
    gram.finish();
    return norm;
  }

 public:
  // Read-only access (SparseGramSolver assembles K = G W G^T from the rows).
  Eigen::Index rows() const { return rows_; }
  Eigen::Index cols() const { return cols_; }
  Eigen::Index nonzeros() const { return static_cast<Eigen::Index>(perm_.size()); }
  /// Row i's entries at positions row_starts()[i] .. row_starts()[i+1]-1.
  const int* row_starts() const { return start_.data(); }
  /// Each entry's column, ascending within a row.
  const int* columns() const { return col_.data(); }
  /// Each entry's value (the last assign's G).
  const double* values() const { return val_.data(); }
  /// Identifies the structure analysed last: a new one, unique over all
  /// views, at every analysis; 0 before the first.
  long structure_id() const { return id_; }

 private:
  /// Counting sort of G's entries by row (columns stay ascending per row).
  void analyse(const SpMat& G) {
    if (!G.isCompressed()) throw EigenAssertion("SparseRowView: G must be compressed");
    rows_ = G.rows();
    cols_ = G.cols();
    const Eigen::Index nnz = G.nonZeros();
    start_.assign(static_cast<std::size_t>(rows_) + 1, 0);
    const int* outer = G.outerIndexPtr();
    const int* inner = G.innerIndexPtr();
    for (Eigen::Index k = 0; k < nnz; ++k) ++start_[inner[k] + 1];
    for (Eigen::Index i = 0; i < rows_; ++i) start_[i + 1] += start_[i];
    std::vector<int> next(start_.begin(), start_.end() - 1);
    perm_.resize(static_cast<std::size_t>(nnz));
    col_.resize(static_cast<std::size_t>(nnz));
    val_.resize(nnz);
    for (Eigen::Index j = 0; j < cols_; ++j)
      for (int k = outer[j]; k < outer[j + 1]; ++k) {
        const int t = next[inner[k]]++;
        perm_[t] = k;
        col_[t] = static_cast<int>(j);
      }
    analysed_ = true;
    id_ = next_id();
  }

  static long next_id() {
    static std::atomic<long> last{0};
    return ++last;
  }

  bool analysed_ = false;
  long token_ = -1;
  long id_ = 0;
  Eigen::Index rows_ = 0, cols_ = 0;
  std::vector<int> start_, col_, perm_;  ///< row starts, column of each entry, its position in G's values
  Vec val_;
};

}  // namespace odepkg

#endif
