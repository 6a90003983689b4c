// LieGroupProblem.hpp — the user's problem on a Lie group (Hante's RATTLie):
//
//   q̇ = dL_q(e) ṽ,   M v̇ = v̂ᵀ M v − f(t, q, v) − B(q)ᵀ λ,   0 = Φ(q),
//
// q ∈ G in nq coordinates, v ∈ Rⁿ, M constant symmetric positive definite,
// f the negative applied forces, B(q) w = dΦ(q)·(q ∘ w̃).  The state is
// y = [q; v].  Callbacks write into preallocated outputs and are counted in
// the Stats of the embedded HamiltonianProblem, which also gives the
// Integrator the vector field y' (for its initial step) and the sizes.
#ifndef ODEPKG_LIE_LIE_GROUP_PROBLEM_HPP
#define ODEPKG_LIE_LIE_GROUP_PROBLEM_HPP

#include "../HamiltonianProblem.hpp"
#include "../SparsePatternUnion.hpp"
#include "BlockMass.hpp"
#include "FactorBlocks.hpp"
#include "LieGroup.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <memory>

namespace odepkg::lie {

class LieGroupProblem {
 public:
  /// f(t, y) with y = [q; v], writing the n-vector of negative forces.
  using Force = std::function<void(double t, const ConstVecRef& y, VecRef f)>;
  using Constraint = std::function<void(const ConstVecRef& q, VecRef phi)>;
  using ConstraintGrad = std::function<void(const ConstVecRef& q, MatRef B)>;
  /// A sparse B(q) (m x n): the callback (re)fills B, any pattern.
  using SparseConstraintGrad = std::function<void(const ConstVecRef& q, SpMat& B)>;

  LieGroupProblem(std::unique_ptr<LieGroup> group, const Mat& mass, Force force)
      : group_(std::move(group)),
        nq_(group_->coord_size()),
        n_(group_->dim()),
        mass_(mass),
        force_(std::move(force)),
        embedded_(n_, nq_ + n_, [this](double t, const ConstVecRef& y, VecRef dy) { vector_field(t, y, dy); }) {
    if (mass_.rows() != n_ || mass_.cols() != n_)
      throw InputError("invalidOption", "MassMatrix must be " + std::to_string(n_) + "-by-" +
                                            std::to_string(n_) + " (the dimension of " +
                                            group_->name() + ")");
    if (!(mass_ - mass_.transpose()).isZero(1e-12 * std::max(1.0, mass_.cwiseAbs().maxCoeff())))
      throw InputError("invalidOption", "MassMatrix must be symmetric");
    chol_.compute(mass_);
    if (chol_.info() != Eigen::Success || chol_.vectorD().minCoeff() <= 0.0)
      throw InputError("invalidOption", "MassMatrix must be positive definite");
    mass_inv_ = chol_.solve(Mat::Identity(n_, n_));
    have_dense_mass_ = true;
    bmass_ = BlockMass::from_dense(mass_, mass_partitions(*group_));
    init_work();
  }

  /// M given by its blocks (no n × n matrix is formed until mass() is asked
  /// for): a chain of N bodies in O(N) memory.
  LieGroupProblem(std::unique_ptr<LieGroup> group, BlockMass mass, Force force)
      : group_(std::move(group)),
        nq_(group_->coord_size()),
        n_(group_->dim()),
        bmass_(std::move(mass)),
        force_(std::move(force)),
        embedded_(n_, nq_ + n_, [this](double t, const ConstVecRef& y, VecRef dy) { vector_field(t, y, dy); }) {
    if (bmass_.n() != n_)
      throw InputError("invalidOption", "MassMatrix must be " + std::to_string(n_) + "-by-" +
                                            std::to_string(n_) + " (the dimension of " + group_->name() + ")");
    init_work();
  }

  /// The candidate partitions of M, finest first: the group's blocks with
  /// Rᵏ factors split into scalars, then one block per factor.
  static std::vector<std::vector<int>> mass_partitions(const LieGroup& G) {
    return {block_sizes(factor_blocks(G, true)), block_sizes(factor_blocks(G, false))};
  }
  LieGroupProblem(const LieGroupProblem&) = delete;
  LieGroupProblem& operator=(const LieGroupProblem&) = delete;

  void set_constraints(int m, Constraint phi, ConstraintGrad B = nullptr) {
    if (m < 1 || m >= n_)
      throw InputError("invalidOption", "ConstraintsNb must satisfy 1 <= m < " + std::to_string(n_) +
                                            " (the dimension of " + group_->name() + ")");
    m_ = m;
    phi_ = std::move(phi);
    B_ = std::move(B);
    phi_base_.resize(m);
    phi_pert_.resize(m);
    Bs_ = nullptr;
  }

  /// A sparse ConstraintGradFcn (after set_constraints), replacing a dense
  /// one.
  void set_sparse_constraint_grad(SparseConstraintGrad B) {
    if (m_ == 0) throw InputError("invalidInput", "a sparse ConstraintGradFcn needs constraints (ConstraintFcn)");
    Bs_ = std::move(B);
    B_ = nullptr;
    pattern_.reset(m_, n_);
  }
  bool has_sparse_constraint_grad() const { return static_cast<bool>(Bs_); }
  /// Number of times the union of the patterns of B grew.
  long sparse_pattern_version() const { return pattern_.version(); }

  /// B(q) from the sparse callback on the union of its patterns; false if
  /// not finite.  O(nnz).
  bool constraint_grad_sparse(const ConstVecRef& q, SpMat& B) {
    if (!Bs_) throw InputError("invalidInput", "constraint_grad_sparse: no sparse ConstraintGradFcn was set");
    ++stats().constraint_grad_evals;
    Bs_(q, user_B_);
    if (user_B_.rows() != m_ || user_B_.cols() != n_)
      throw InputError("badFcnOutput", "ConstraintGradFcn must return a sparse m-by-n matrix (" + std::to_string(m_) +
                                           "-by-" + std::to_string(n_) + "), but returned " +
                                           std::to_string(user_B_.rows()) + "-by-" + std::to_string(user_B_.cols()));
    pattern_.fit(user_B_, B);
    return Eigen::Map<const Vec>(B.valuePtr(), B.nonZeros()).allFinite();
  }

  /// Throws odepkg:sparseGradient when a sparse B would have to be made
  /// dense by `who` and is too large for that.
  void require_densifiable(const std::string& who) const {
    if (!Bs_ || static_cast<double>(m_) * n_ <= kMaxDensifiedEntries) return;
    throw InputError("sparseGradient",
                     "ConstraintGradFcn returns a sparse " + std::to_string(m_) + "-by-" + std::to_string(n_) +
                         " matrix, which " + who + " would have to make dense (more than 4e6 entries)");
  }

  const LieGroup& group() const { return *group_; }
  int nq() const { return nq_; }
  int n() const { return n_; }
  int constraints() const { return m_; }
  bool has_constraint_grad() const { return static_cast<bool>(B_) || static_cast<bool>(Bs_); }
  /// M by its diagonal blocks.
  const BlockMass& block_mass() const { return bmass_; }
  /// M and M⁻¹ dense (n × n), formed on the first call when M was given by
  /// blocks.
  const Mat& mass() {
    dense_mass();
    return mass_;
  }
  const Mat& mass_inverse() {
    dense_mass();
    return mass_inv_;
  }
  HamiltonianProblem& embedded() { return embedded_; }
  Stats& stats() { return embedded_.stats(); }

  /// f(t, y) (n-vector); false if not finite.
  bool force(double t, const ConstVecRef& y, VecRef f) {
    ++stats().field_evals;
    force_(t, y, f);
    return f.allFinite();
  }

  bool constraint(const ConstVecRef& q, VecRef phi) {
    ++stats().constraint_evals;
    phi_(q, phi);
    return phi.allFinite();
  }

  /// B(q) (m x n): analytic, or central differences along the group,
  /// B e_j ≈ (Φ(q∘exp(δe_j)) − Φ(q∘exp(−δe_j))) / 2δ (2n calls; error
  /// O(δ²) = 1e-11 relative with δ = eps^(1/3)).
  bool constraint_grad(const ConstVecRef& q, MatRef B) {
    if (B_) {
      ++stats().constraint_grad_evals;
      B_(q, B);
      return B.allFinite();
    }
    if (Bs_) {  // a sparse B made dense, for a consumer that needs it so
      require_densifiable("the dense RATTLie");
      if (!constraint_grad_sparse(q, dense_src_)) return false;
      B.setZero();
      for (int j = 0; j < dense_src_.outerSize(); ++j)
        for (SpMat::InnerIterator it(dense_src_, j); it; ++it) B(it.row(), j) = it.value();
      return true;
    }
    const double delta = std::cbrt(std::numeric_limits<double>::epsilon());
    for (int j = 0; j < n_; ++j) {
      w_.setZero();
      w_(j) = delta;
      group_->compose_exp(q, w_, qp_);
      if (!constraint(qp_, phi_pert_)) return false;
      w_(j) = -delta;
      group_->compose_exp(q, w_, qp_);
      if (!constraint(qp_, phi_base_)) return false;
      B.col(j) = (phi_pert_ - phi_base_) / (2 * delta);
    }
    ++stats().fd_jacobians;
    return B.allFinite();
  }

  /// The user's B (ConstraintGradFcn) at q against central differences of
  /// Φ along the group, d/ds Φ(q∘exp(s ṽ)) = B(q) v, along random v
  /// (DerivativeCheck: 4 calls of Φ per direction, one B); throws
  /// InputError "derivativeCheck".
  void check_derivatives(const ConstVecRef& q) {
    if (m_ == 0 || !has_constraint_grad()) return;
    DerivativeCheck check;
    Mat B;
    SpMat Bsp;
    if (Bs_ ? !constraint_grad_sparse(q, Bsp) : !constraint_grad(q, (B.resize(m_, n_), B)))
      throw InputError("nonFiniteFcn", "ConstraintGradFcn returned a non-finite value at the initial data");
    const double Bnorm = Bs_ ? Bsp.norm() : B.norm();
    Vec v(n_), w(n_), qs(nq_), Bv(m_);
    for (int k = 0; k < DerivativeCheck::kDirections; ++k) {
      check.random_direction(v);
      if (Bs_)
        Bv.noalias() = Bsp * v;
      else
        Bv.noalias() = B * v;
      auto curve = [&](double s, VecRef out) {
        w = s * v;
        group_->compose_exp(q, w, qs);
        return constraint(qs, out);
      };
      DerivativeCheck::require(DerivativeCheck::compare(curve, DerivativeCheck::step(0.0), Bv, Bnorm),
                               "ConstraintGradFcn", "differences of ConstraintFcn along the group (B(q) v = d/ds "
                               "Phi(q o exp(s v)))");
    }
  }

  /// The inertial term ad(v)ᵀ M v, ad block by block (FactorBlocks).
  void inertial(const ConstVecRef& v, VecRef out) {
    bmass_.apply(v, Mv_);
    for (const FactorBlock& b : blocks_) {
      Eigen::Map<Mat> A(A_.data(), b.dim, b.dim);
      b.group->ad(v.segment(b.voff, b.dim), A);
      out.segment(b.voff, b.dim).noalias() = A.transpose() * Mv_.segment(b.voff, b.dim);
    }
  }

 private:
  // y' in coordinates: q' ≈ (q∘exp(δv) − q)/δ, v' = M⁻¹(ad(v)ᵀMv − f) (the
  // constraint forces left out: used only to size the first step).
  void vector_field(double t, const ConstVecRef& y, VecRef dy) {
    const auto q = y.head(nq_);
    const auto v = y.tail(n_);
    force_(t, y, fv_);
    const double delta = std::sqrt(std::numeric_limits<double>::epsilon());
    w_ = delta * v;
    group_->compose_exp(q, w_, qp_);
    dy.head(nq_) = (qp_ - q) / delta;
    inertial(v, w_);
    w_ -= fv_;
    bmass_.solve(w_, dy.tail(n_));
  }

  void init_work() {
    blocks_ = factor_blocks(*group_, false);
    int s = 1;
    for (const FactorBlock& b : blocks_) s = std::max(s, b.dim);
    fv_.resize(n_);
    qp_.resize(nq_);
    w_.resize(n_);
    Mv_.resize(n_);
    A_.resize(s * s);
  }

  void dense_mass() {
    if (have_dense_mass_) return;
    mass_ = bmass_.dense(false);
    mass_inv_ = bmass_.dense(true);
    have_dense_mass_ = true;
  }

  std::unique_ptr<LieGroup> group_;
  int nq_, n_, m_ = 0;
  Mat mass_, mass_inv_;
  bool have_dense_mass_ = false;
  Eigen::LDLT<Mat> chol_;
  BlockMass bmass_;
  std::vector<FactorBlock> blocks_;  ///< the group's factors (ad block by block)
  Force force_;
  Constraint phi_;
  ConstraintGrad B_;
  SparseConstraintGrad Bs_;
  SparsePatternUnion pattern_;
  SpMat user_B_, dense_src_;
  HamiltonianProblem embedded_;
  Vec fv_, qp_, w_, Mv_, phi_base_, phi_pert_;
  Vec A_;  ///< scratch of one factor's ad
};

}  // namespace odepkg::lie

#endif
