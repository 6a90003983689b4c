// ConstraintSet.hpp — constraints g: R^{2d} -> R^m on the whole phase space,
// y = [q; p], with their gradients Dg (m x 2d) and Hessians, for the
// geometric SHAKE and RATTLE of McLachlan, Modin, Verdier, Wilkins (2014).
//
// Two sources: PhaseSpaceConstraints, the user's g(y) (finite differences
// where Dg or the Hessians are not given), and HolonomicConstraints, the
// classical g(q) of a HamiltonianProblem seen on phase space (Dg = [G(q) 0]).
// Calls are counted in the problem's Stats.
#ifndef ODEPKG_CONSTRAINED_CONSTRAINT_SET_HPP
#define ODEPKG_CONSTRAINED_CONSTRAINT_SET_HPP

#include "SameBits.hpp"
#include "HamiltonianProblem.hpp"
#include "SparsePatternUnion.hpp"
#include "Types.hpp"

#include <algorithm>
#include <functional>
#include <limits>

namespace odepkg {

class ConstraintSet {
 public:
  ConstraintSet(int d, int m) : d_(d), m_(m) {}
  virtual ~ConstraintSet() = default;
  ConstraintSet(const ConstraintSet&) = delete;
  ConstraintSet& operator=(const ConstraintSet&) = delete;

  int dim() const { return d_; }    ///< d, the dimension of q
  int count() const { return m_; }  ///< m, the number of constraints

  /// g(y) (m).  All return false on non-finite values.
  virtual bool value(const ConstVecRef& y, VecRef g) = 0;
  /// Dg(y) (m x 2d).
  virtual bool grad(const ConstVecRef& y, MatRef Dg) = 0;
  /// Hessians [H_1 ... H_m] (2d x 2d m), H_k = d^2 g_k / dy^2.
  virtual bool hess(const ConstVecRef& y, MatRef H) = 0;
  /// g depends on q only: the fibres are affine, (q, p - G(q)^T s).
  virtual bool holonomic() const { return false; }
  /// Dg comes sparse (a sparse ConstraintGradFcn): grad_sparse and
  /// hess_sparse serve the sparse geometric RATTLE (SparseGeometricNewton).
  virtual bool sparse_grad() const { return false; }
  /// Dg(y) as a sparse m x 2d matrix on a fixed pattern (the union of those
  /// met).  Only where sparse_grad().
  virtual bool grad_sparse(const ConstVecRef& y, SpMat& Dg) {
    (void)y, (void)Dg;
    throw InputError("invalidInput", "grad_sparse: the constraint gradient is not sparse");
  }
  /// The Hessians [H_1 ... H_m] as a sparse 2d x 2d m matrix.  Only where
  /// sparse_grad() and not holonomic() (the slide of g(q) needs none).
  virtual bool hess_sparse(const ConstVecRef& y, SpMat& H) {
    (void)y, (void)H;
    throw InputError("invalidInput", "hess_sparse: the constraint gradient is not sparse");
  }
  /// Bound on |(Dg_fd - Dg) f|_inf for the last differenced Dg (0 when the
  /// gradient is the user's): what {g, H} = Dg f, computed with differences,
  /// may be off by.
  virtual double grad_error(const ConstVecRef& f) const {
    (void)f;
    return 0.0;
  }
  /// Checks the user's Dg and Hessians at y against differences
  /// (DerivativeCheck); throws InputError "derivativeCheck".
  virtual void check_derivatives(const ConstVecRef& y) { (void)y; }

 protected:
  int d_, m_;
};

/// The user's g(y) on phase space.  Without Dg: central differences of g
/// (4d calls, error ~ eps^(2/3)); without Hessians: forward differences of
/// Dg (2d calls).
class PhaseSpaceConstraints final : public ConstraintSet {
 public:
  using Fn = std::function<void(const ConstVecRef& y, VecRef g)>;
  using GradFn = std::function<void(const ConstVecRef& y, MatRef Dg)>;
  using HessFn = std::function<void(const ConstVecRef& y, MatRef H)>;
  using SparseGradFn = std::function<void(const ConstVecRef& y, SpMat& Dg)>;
  using SparseHessFn = std::function<void(const ConstVecRef& y, SpMat& H)>;

  PhaseSpaceConstraints(int d, int m, Stats& stats, Fn g, GradFn Dg = nullptr, HessFn H = nullptr)
      : ConstraintSet(d, m), stats_(stats), g_(std::move(g)), Dg_(std::move(Dg)), H_(std::move(H)),
        y_pert_(2 * d), g_base_(m), g_pert_(m), grad_err_(Vec::Zero(2 * d)) {
    if (m < 1 || m >= d)
      throw InputError("invalidInput", "the number of constraints must satisfy 1 <= m < d");
  }

  /// A sparse ConstraintGradFcn (m x 2d) and, optional, sparse Hessians
  /// ([H_1 ... H_m], 2d x 2d m), replacing dense ones: the sparse
  /// geometric RATTLE uses them as such; grad() and hess() make them dense
  /// (refused above kMaxDensifiedEntries entries).  Without sparse
  /// Hessians hess_sparse keeps the nonzeros of hess() (differences of Dg),
  /// which is refused above that size too.
  void set_sparse(SparseGradFn Dg, SparseHessFn H = nullptr) {
    Dgs_ = std::move(Dg);
    Hs_ = std::move(H);
    Dg_ = nullptr;
    H_ = nullptr;
    grad_pattern_.reset(m_, 2 * d_);
    hess_pattern_.reset(2 * d_, 2 * d_ * m_);
  }
  bool sparse_grad() const override { return static_cast<bool>(Dgs_); }

  bool grad_sparse(const ConstVecRef& y, SpMat& Dg) override {
    ++stats_.constraint_grad_evals;
    Dgs_(y, user_);
    check_size(user_, m_, 2 * d_, "ConstraintGradFcn", "m-by-2d");
    grad_pattern_.fit(user_, Dg);
    return Eigen::Map<const Vec>(Dg.valuePtr(), Dg.nonZeros()).allFinite();
  }

  bool hess_sparse(const ConstVecRef& y, SpMat& H) override {
    const int n = 2 * d_;
    if (Hs_) {
      ++stats_.constraint_hess_evals;
      Hs_(y, user_);
      check_size(user_, n, n * m_, "ConstraintHessFcn", "2d-by-2dm (sparse [H_1 ... H_m])");
    } else {
      refuse_dense(static_cast<double>(n) * n * m_, "the Hessians of ConstraintFcn (give a sparse ConstraintHessFcn)");
      if (Hdense_.rows() != n) Hdense_.resize(n, n * m_);
      if (!hess(y, Hdense_)) return false;
      user_ = Hdense_.sparseView(1.0, 0.0);
    }
    hess_pattern_.fit(user_, H);
    return Eigen::Map<const Vec>(H.valuePtr(), H.nonZeros()).allFinite();
  }

  bool value(const ConstVecRef& y, VecRef g) override {
    ++stats_.constraint_evals;
    g_(y, g);
    return g.allFinite();
  }

  bool grad(const ConstVecRef& y, MatRef Dg) override {
    if (Dgs_) {  // made dense for a consumer that needs it so
      refuse_dense(static_cast<double>(m_) * 2 * d_, "ConstraintGradFcn");
      if (!grad_sparse(y, dense_src_)) return false;
      Dg = Mat(dense_src_);
      return true;
    }
    if (Dg_) {
      ++stats_.constraint_grad_evals;
      Dg_(y, Dg);
      return Dg.allFinite();
    }
    const double eps = std::numeric_limits<double>::epsilon();
    for (int j = 0; j < 2 * d_; ++j) {
      const double delta = DerivativeCheck::step(std::abs(y(j)));
      y_pert_ = y;
      y_pert_(j) = y(j) + delta;
      const double up = y_pert_(j);
      if (!value(y_pert_, g_pert_)) return false;
      y_pert_(j) = y(j) - delta;
      const double span = up - y_pert_(j);
      if (!value(y_pert_, g_base_)) return false;
      Dg.col(j) = (g_pert_ - g_base_) / span;
      grad_err_(j) =
          eps * std::max(g_pert_.lpNorm<Eigen::Infinity>(), g_base_.lpNorm<Eigen::Infinity>()) / span;
    }
    const double Dgmax = Dg.cwiseAbs().maxCoeff();
    for (int j = 0; j < 2 * d_; ++j) grad_err_(j) += HamiltonianProblem::central_difference_error(std::abs(y(j)), Dgmax);
    ++stats_.fd_jacobians;
    stats_.max_grad_error = std::max(stats_.max_grad_error, grad_err_.maxCoeff());
    return Dg.allFinite();
  }

  double grad_error(const ConstVecRef& f) const override {
    return Dg_ ? 0.0 : grad_err_.dot(f.cwiseAbs());
  }

  /// Dg against differences of g, the Hessians against differences of Dg
  /// (when both are the user's): 4 calls per direction, 2 directions each.
  void check_derivatives(const ConstVecRef& y) override {
    if (!Dg_ && !Dgs_) return;
    const int n = 2 * d_;
    DerivativeCheck check;
    Mat Dg(m_, n);
    if (!grad(y, Dg)) throw InputError("nonFiniteFcn", "ConstraintGradFcn returned a non-finite value at the initial data");
    check.require_jacobian(
        y, Dg, [&](const ConstVecRef& ys, VecRef out) { return value(ys, out); }, "ConstraintGradFcn",
        "differences of ConstraintFcn");
    if (!H_ && !Hs_) return;
    Mat H(n, n * m_);
    if (!hess(y, H)) throw InputError("nonFiniteFcn", "ConstraintHessFcn returned a non-finite value at the initial data");
    check.require_stacked_hessians(
        y, H, m_, [&](const ConstVecRef& ys, MatRef Gs) { return grad(ys, Gs); }, "ConstraintHessFcn",
        "differences of ConstraintGradFcn");
  }

  bool hess(const ConstVecRef& y, MatRef H) override {
    const int n = 2 * d_;
    if (Hs_) {
      if (!hess_sparse(y, dense_src_)) return false;
      H = Mat(dense_src_);
      return true;
    }
    if (H_) {
      ++stats_.constraint_hess_evals;
      H_(y, H);
      return H.allFinite();
    }
    if (!Dg_ && !Dgs_) return second_differences(y, H);
    Dg_base_.resize(m_, n);  // on first use (a sparse Dg with given Hessians never needs them)
    Dg_pert_.resize(m_, n);
    if (!grad(y, Dg_base_)) return false;
    for (int j = 0; j < n; ++j) {
      const double delta = HamiltonianProblem::fd_step(y(j));
      y_pert_ = y;
      y_pert_(j) += delta;
      if (!grad(y_pert_, Dg_pert_)) return false;
      for (int k = 0; k < m_; ++k)  // column j of H_k = d(grad g_k)/dy_j
        H.col(k * n + j) = (Dg_pert_.row(k) - Dg_base_.row(k)).transpose() / delta;
    }
    ++stats_.fd_jacobians;
    for (int k = 0; k < m_; ++k)  // symmetrize (the differences are not), in place
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < j; ++i) {
          const double a = 0.5 * (H(i, k * n + j) + H(j, k * n + i));
          H(i, k * n + j) = H(j, k * n + i) = a;
        }
    return H.allFinite();
  }

 private:
  /// Without Dg, differences of differenced gradients are noise (eps/delta^2
  /// = O(1)): second differences of g instead, with delta = eps^(1/4) |y|,
  ///   H_ij ~ (g(y+a+b) - g(y+a-b) - g(y-a+b) + g(y-a-b)) / (4 delta_i delta_j),
  /// errors ~ 1e-8 relative; 2n(n+1) calls of g.
  bool second_differences(const ConstVecRef& y, MatRef H) {
    const int n = 2 * d_;
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        const double di = 1.2e-4 * std::max(1.0, std::abs(y(i))), dj = 1.2e-4 * std::max(1.0, std::abs(y(j)));
        const int si[4] = {1, 1, -1, -1}, sj[4] = {1, -1, 1, -1};
        for (int c = 0; c < 4; ++c) {
          y_pert_ = y;
          y_pert_(i) += si[c] * di;
          y_pert_(j) += sj[c] * dj;
          if (!value(y_pert_, g_pert_)) return false;
          for (int k = 0; k < m_; ++k) {
            const double v = si[c] * sj[c] * g_pert_(k) / (4 * di * dj);
            H(i, k * n + j) = (c == 0 ? 0.0 : H(i, k * n + j)) + v;
          }
        }
        for (int k = 0; k < m_; ++k) H(j, k * n + i) = H(i, k * n + j);
      }
    ++stats_.fd_jacobians;
    return H.allFinite();
  }

  /// odepkg:sparseGradient where a sparse `what` would be made dense with
  /// more than kMaxDensifiedEntries entries.
  void refuse_dense(double entries, const std::string& what) const {
    if (entries <= kMaxDensifiedEntries) return;
    throw InputError("sparseGradient", "the constraints g(q, p) with a sparse ConstraintGradFcn need " + what +
                                           " as a full matrix of more than 4e6 entries");
  }
  static void check_size(const SpMat& A, int rows, int cols, const std::string& who, const std::string& shape) {
    if (A.rows() == rows && A.cols() == cols) return;
    throw InputError("badFcnOutput", who + " must return a sparse " + shape + " matrix (" + std::to_string(rows) +
                                         "-by-" + std::to_string(cols) + "), but returned " +
                                         std::to_string(A.rows()) + "-by-" + std::to_string(A.cols()));
  }

  Stats& stats_;
  Fn g_;
  GradFn Dg_;
  HessFn H_;
  SparseGradFn Dgs_;
  SparseHessFn Hs_;
  SparsePatternUnion grad_pattern_, hess_pattern_;
  SpMat user_, dense_src_;
  Mat Hdense_;
  Vec y_pert_, g_base_, g_pert_, grad_err_;
  Mat Dg_base_, Dg_pert_;
};

/// The holonomic g(q) of a HamiltonianProblem on phase space:
/// Dg = [G(q) 0], H_k = blockdiag(d^2 g_k/dq^2, 0).
class HolonomicConstraints final : public ConstraintSet {
 public:
  explicit HolonomicConstraints(HamiltonianProblem& problem)
      : ConstraintSet(problem.dim(), problem.constraints()), problem_(problem), q_pert_(problem.dim()),
        Gq_(problem.dim()) {
    // the dense matrices are sized on first use: the sparse general
    // RATTLE (SparseGeometricNewton) never asks for them
    if (m_ < 1) throw InputError("invalidInput", "RATTLE and SHAKE need constraints (ConstraintFcn)");
  }

  bool holonomic() const override { return true; }
  bool sparse_grad() const override { return problem_.has_sparse_constraint_grad(); }
  /// [G(q) 0] from the sparse ConstraintGradFcn (its fixed pattern).
  bool grad_sparse(const ConstVecRef& y, SpMat& Dg) override {
    if (!problem_.constraint_grad_sparse(y.head(d_), Gs_)) return false;
    const int nnz = static_cast<int>(Gs_.nonZeros());
    const bool same = Dg.isCompressed() && Dg.rows() == m_ && Dg.cols() == 2 * d_ && Dg.nonZeros() == nnz &&
                      std::equal(Gs_.outerIndexPtr(), Gs_.outerIndexPtr() + d_ + 1, Dg.outerIndexPtr()) &&
                      std::equal(Gs_.innerIndexPtr(), Gs_.innerIndexPtr() + nnz, Dg.innerIndexPtr());
    if (same) {  // G's fixed pattern: the values only (no reallocation of Dg's columns)
      std::copy(Gs_.valuePtr(), Gs_.valuePtr() + nnz, Dg.valuePtr());
      return true;
    }
    Dg = Gs_;
    Dg.conservativeResize(m_, 2 * d_);  // empty p-columns
    return true;
  }

  double grad_error(const ConstVecRef& f) const override { return problem_.constraint_grad_error(f.head(d_)); }

  bool value(const ConstVecRef& y, VecRef g) override { return problem_.constraint(y.head(d_), g); }

  /// G(q) is kept with its q and reused while q is the same: the fibres
  /// keep q, so G(q_1) serves every iteration of RATTLE's slide onto M_H and,
  /// the output keeping q_1, the next step's start.
  bool grad(const ConstVecRef& y, MatRef Dg) override {
    if (!have_G_ || !same_bits(Gq_, y.head(d_))) {
      have_G_ = false;
      G_.resize(m_, d_);
      if (!problem_.constraint_grad(y.head(d_), G_)) return false;
      Gq_ = y.head(d_);
      have_G_ = true;
    }
    Dg.leftCols(d_) = G_;
    Dg.rightCols(d_).setZero();
    return true;
  }

  bool hess(const ConstVecRef& y, MatRef H) override {
    const int d = d_, n = 2 * d;
    H.setZero();
    GH_.resize(d, d * m_);
    if (problem_.has_constraint_hess()) {
      if (!problem_.constraint_hess(y.head(d), GH_)) return false;
    } else {  // forward differences of G (d calls)
      G_base_.resize(m_, d);
      G_pert_.resize(m_, d);
      if (!problem_.constraint_grad(y.head(d), G_base_)) return false;
      for (int j = 0; j < d; ++j) {
        const double delta = HamiltonianProblem::fd_step(y(j));
        q_pert_ = y.head(d);
        q_pert_(j) += delta;
        if (!problem_.constraint_grad(q_pert_, G_pert_)) return false;
        for (int k = 0; k < m_; ++k)
          GH_.col(k * d + j) = (G_pert_.row(k) - G_base_.row(k)).transpose() / delta;
      }
      ++problem_.stats().fd_jacobians;
    }
    for (int k = 0; k < m_; ++k) H.block(0, k * n, d, d) = GH_.middleCols(k * d, d);
    return H.allFinite();
  }

 private:
  HamiltonianProblem& problem_;
  Mat G_, GH_, G_base_, G_pert_;
  SpMat Gs_;
  Vec q_pert_, Gq_;
  bool have_G_ = false;
};

}  // namespace odepkg

#endif
