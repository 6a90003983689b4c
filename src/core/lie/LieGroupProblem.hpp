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
    fv_.resize(n_);
    qp_.resize(nq_);
    w_.resize(n_);
    Mv_.resize(n_);
    A_.resize(n_, n_);
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
  }

  const LieGroup& group() const { return *group_; }
  int nq() const { return nq_; }
  int n() const { return n_; }
  int constraints() const { return m_; }
  bool has_constraint_grad() const { return static_cast<bool>(B_); }
  const Mat& mass() const { return mass_; }
  const Mat& mass_inverse() const { return mass_inv_; }
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
    if (m_ == 0 || !B_) return;
    DerivativeCheck check;
    Mat B(m_, n_);
    if (!constraint_grad(q, B))
      throw InputError("nonFiniteFcn", "ConstraintGradFcn returned a non-finite value at the initial data");
    Vec v(n_), w(n_), qs(nq_), Bv(m_);
    for (int k = 0; k < DerivativeCheck::kDirections; ++k) {
      check.random_direction(v);
      Bv.noalias() = B * v;
      auto curve = [&](double s, VecRef out) {
        w = s * v;
        group_->compose_exp(q, w, qs);
        return constraint(qs, out);
      };
      DerivativeCheck::require(DerivativeCheck::compare(curve, DerivativeCheck::step(0.0), Bv, B.norm()),
                               "ConstraintGradFcn", "differences of ConstraintFcn along the group (B(q) v = d/ds "
                               "Phi(q o exp(s v)))");
    }
  }

  /// The inertial term ad(v)ᵀ M v.
  void inertial(const ConstVecRef& v, VecRef out) {
    group_->ad(v, A_);
    Mv_.noalias() = mass_ * v;
    out.noalias() = A_.transpose() * Mv_;
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
    dy.tail(n_) = chol_.solve(w_ - fv_);
  }

  std::unique_ptr<LieGroup> group_;
  int nq_, n_, m_ = 0;
  Mat mass_, mass_inv_;
  Eigen::LDLT<Mat> chol_;
  Force force_;
  Constraint phi_;
  ConstraintGrad B_;
  HamiltonianProblem embedded_;
  Vec fv_, qp_, w_, Mv_, phi_base_, phi_pert_;
  Mat A_;
};

}  // namespace odepkg::lie

#endif
