// RattLie.hpp — the RATTLie step (RattLieStep.hpp: Hante's RATTLie, the
// discrete Legendre transforms (A) and (B)) with dense B, M and Schur
// complements: any group, any symmetric positive definite M, and no
// constraints at all (Störmer–Verlet on G).  J = T(−hΩ)^{-T} M − h D by a
// partial-pivoting LU; S = Bt J⁻¹ B_nᵀ formed and solved with minimum-norm
// solves (MinNormSolver: redundant constraints, singular configurations),
// as is the velocity system B M⁻¹ Bᵀ.  A force depending on v makes (B)
// Newton on (v, μ) with ∂f/∂v by differences, reused while it converges.
#ifndef ODEPKG_LIE_RATTLIE_HPP
#define ODEPKG_LIE_RATTLIE_HPP

#include "../ConstraintProjection.hpp"
#include "RattLieStep.hpp"

namespace odepkg::lie {

class DenseLieAlgebra {
 public:
  using Matrix = Mat;
  struct ThreadScope {
    ThreadScope() {}
  };
  static constexpr bool kMinimumNormPositions = true;
  static constexpr double kRankTolerance = 1e-10;

  DenseLieAlgebra(LieGroupProblem& lp, NewtonOptions opts, RankLog& rank)
      : lp_(lp),
        G_(lp.group()),
        M_(lp.mass()),
        Minv_(lp.mass_inverse()),
        nq_(lp.nq()),
        n_(lp.n()),
        m_(lp.constraints()),
        opts_(opts),
        rank_(rank),
        lu_(lp.n()),
        luv_(lp.n()),
        schur_(std::max(lp.constraints(), 1), kRankTolerance) {
    const int n = n_, m = std::max(m_, 1);
    for (Mat* A : {&Tm_, &Tp_, &D_, &J_, &Jv_}) A->resize(n, n);
    K_ = Mat::Zero(n, n);
    X_.resize(n, m);
    Bt_.resize(m, n);
    S_.resize(m, m);
    for (Vec* v : {&r_, &u_, &dv_, &fk_, &fp_, &tmp_}) v->resize(n);
    for (Vec* v : {&rhs_, &dmu_}) v->resize(m);
    yp_.resize(nq_ + n_);
  }

  void size(Mat& B) const { B.resize(std::max(m_, 1), n_); }
  bool grad(const ConstVecRef& q, Mat& B) { return lp_.constraint_grad(q, B); }
  void mass_apply(const ConstVecRef& v, VecRef out) const { out.noalias() = M_ * v; }
  void mass_solve(const ConstVecRef& v, VecRef out) const { out.noalias() = Minv_ * v; }
  static void extrapolate(const Mat& B0, const Mat& Bprev, double s, Mat& Bex) { Bex = B0 + s * (B0 - Bprev); }
  static double max_abs(const Mat& A) { return A.lpNorm<Eigen::Infinity>(); }
  static double max_difference(const Mat& A, const Mat& B) { return (A - B).lpNorm<Eigen::Infinity>(); }
  /// max_i Σ_j |B_ij|.
  static double row_norm(const Mat& B, Vec& rows) {
    rows.noalias() = B.cwiseAbs().rowwise().sum();
    return rows.maxCoeff();
  }

  bool begin_step(const Mat&, bool, double) { return true; }
  void end_step() {}

  /// T(−w)^{-T}, J = T(−w)^{-T} M − h D(−w, MΩ) and its LU, T(w).
  void newton_matrix(double h, const Vec& w, const Vec& MOm) {
    r_ = -w;
    G_.tangent_inv_transpose(r_, Tm_);
    G_.d_tangent_inv_transpose(r_, MOm, D_);
    J_.noalias() = Tm_ * M_;
    J_ -= h * D_;
    lu_.compute(J_);
    if (m_ > 0) G_.tangent(w, Tp_);
  }
  /// out = T(−hΩ)^{-T} x.
  void transport(const Vec& x, Vec& out) const { out.noalias() = Tm_ * x; }
  void solve_J(const Vec& r, Vec& u) const { u.noalias() = lu_.solve(r); }
  /// h Bt ΔΩ = −Φ,  J ΔΩ + h/2 B_nᵀ Δλ = −r1  (Bt = B(q_{n+1}) T(hΩ)):
  /// (h²/2) Bt J⁻¹ B_nᵀ Δλ = Φ − h Bt J⁻¹ r1, minimum-norm.
  bool schur_step(long, double h, double t, const Vec& phi, const Vec& u, const Mat& Bex, const Mat& B0, Vec& dOm,
                  Vec& dlam) {
    Bt_.noalias() = Bex * Tp_;
    X_.noalias() = lu_.solve(B0.transpose());
    S_.noalias() = Bt_ * X_;
    if (!schur_.compute(S_)) return false;
    note_rank(t);
    rhs_ = phi;
    rhs_.noalias() -= h * (Bt_ * u);
    schur_.solve(rhs_, dlam);
    dlam *= 2.0 / (h * h);
    dOm = -u;
    dOm.noalias() -= (0.5 * h) * (X_ * dlam);
    return true;
  }
  /// b = T(w)^{-T} MΩ.
  void momentum(const Vec& w, const Vec& MOm, Vec& b) {
    G_.tangent_inv_transpose(w, Tp_);
    b.noalias() = Tp_ * MOm;
  }

  bool begin_velocity(const Mat&, double) { return true; }
  /// (B) with f_{n+1} = f fixed: (h/2) B M⁻¹ Bᵀ μ = B M⁻¹(b − h/2 f),
  /// v = M⁻¹(b − h/2 (f + Bᵀμ)).
  void velocity_linear(double h, double t, const Vec& b, const Vec& f, const Mat& B1, Vec& v, Vec& mu) {
    tmp_ = b - (0.5 * h) * f;
    if (m_ > 0) {
      X_.noalias() = Minv_ * B1.transpose();
      S_.noalias() = B1 * X_;
      schur_.compute(S_);
      note_rank(t);
      rhs_.noalias() = X_.transpose() * tmp_;  // B M⁻¹ (b − h/2 f), M symmetric
      schur_.solve(rhs_, mu);
      mu *= 2.0 / h;
      tmp_.noalias() -= (0.5 * h) * (B1.transpose() * mu);
    }
    v.noalias() = Minv_ * tmp_;
  }
  void velocity_dependence_found() { have_K_ = false; }

  /// (B) for f depending on v: Newton on (v, μ) with ∂f/∂v = K (differences,
  /// kept while the iteration contracts fast), from v (the linear solution
  /// with the f at hand).  f_{n+1} = f(v_k) + K Δv at the last tiny
  /// correction.  y holds q_{n+1}.
  StepStatus solve_velocity_dependent(double h, double t1, Vec& y, const Vec& b, const Mat& B1, Vec& v, Vec& f,
                                      Vec& mu) {
    Stats& st = lp_.stats();
    const double eps = std::numeric_limits<double>::epsilon();
    if (!have_K_) {
      y.tail(n_) = v;
      if (!lp_.force(t1, y, fk_)) return StepStatus::NonFinite;
      for (int j = 0; j < n_; ++j) {
        const double delta = HamiltonianProblem::fd_step(v(j));
        yp_ = y;
        yp_(nq_ + j) += delta;
        if (!lp_.force(t1, yp_, fp_)) return StepStatus::NonFinite;
        K_.col(j) = (fp_ - fk_) / delta;
      }
      ++st.jacobian_evals;
      ++st.fd_jacobians;
      ++st.fd_field_jacobians;
      have_K_ = true;
    }
    Jv_ = M_ + (0.5 * h) * K_;
    luv_.compute(Jv_);
    ++st.lu_factorizations;
    if (m_ > 0) {
      X_.noalias() = luv_.solve(B1.transpose());
      S_.noalias() = B1 * X_;
      if (!schur_.compute(S_)) return StepStatus::NonFinite;
      note_rank(t1);
    }
    ++st.newton_solves;
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0;
    for (long it = 1;; ++it) {
      y.tail(n_) = v;
      if (!lp_.force(t1, y, fk_)) return StepStatus::NonFinite;
      r_.noalias() = M_ * v;
      r_ -= b;
      r_ += (0.5 * h) * fk_;
      if (m_ > 0) r_.noalias() += (0.5 * h) * (B1.transpose() * mu);
      u_.noalias() = luv_.solve(r_);
      if (m_ > 0) {
        // B Δv = −B v,  Jv Δv + h/2 Bᵀ Δμ = −r:  (h/2) B Jv⁻¹ Bᵀ Δμ = B v − B Jv⁻¹ r
        rhs_.noalias() = B1 * v;
        rhs_.noalias() -= B1 * u_;
        schur_.solve(rhs_, dmu_);
        dmu_ *= 2.0 / h;
        mu += dmu_;
        dv_ = -u_;
        dv_.noalias() -= (0.5 * h) * (X_ * dmu_);
      } else {
        dv_ = -u_;
      }
      v += dv_;
      ++st.newton_iterations;
      const double nd = dv_.lpNorm<Eigen::Infinity>();
      if (!std::isfinite(nd)) return StepStatus::NonFinite;
      if (it > 1) theta = nd / prev;
      const double rest = (it > 1 && theta < 1.0) ? theta / (1.0 - theta) * nd : nd;
      const double vscale = std::max(1.0, v.lpNorm<Eigen::Infinity>());
      if (rest <= 4 * eps * vscale || (it > 1 && rest <= opts_.tol * 1e-3 * vscale)) {
        f = fk_;
        f.noalias() += K_ * dv_;
        st.newton_max_iterations = std::max(st.newton_max_iterations, it);
        if (it > 2 && theta > opts_.refresh_rate) have_K_ = false;
        return StepStatus::Success;
      }
      if ((it > 1 && theta >= 1.0) || it >= opts_.max_iterations) {
        have_K_ = false;
        return StepStatus::NewtonDiverged;
      }
      prev = nd;
    }
  }

  /// λ = (B M⁻¹ Bᵀ)⁺ rhs, minimum-norm.
  bool multiplier_solve(const Mat& B, const Vec& rhs, VecRef lambda) {
    X_.noalias() = Minv_ * B.transpose();
    S_.noalias() = B * X_;
    if (!schur_.compute(S_)) return false;
    schur_.solve(rhs, lambda);
    return true;
  }

 private:
  void note_rank(double t) { rank_.note(schur_.condition_estimate(), schur_.rank_deficient(), t, lp_.stats()); }

  LieGroupProblem& lp_;
  const LieGroup& G_;
  const Mat& M_;
  const Mat& Minv_;
  const int nq_, n_, m_;
  NewtonOptions opts_;
  RankLog& rank_;
  Eigen::PartialPivLU<Mat> lu_, luv_;
  MinNormSolver schur_;
  bool have_K_ = false;
  Mat Tm_, Tp_, D_, J_, Jv_, K_, X_, Bt_, S_;
  Vec r_, u_, dv_, fk_, fp_, tmp_, rhs_, dmu_, yp_;
};

/// RATTLie with dense linear algebra.
class RattLie final : public RattLieStep<DenseLieAlgebra> {
 public:
  static constexpr double kRankTolerance = DenseLieAlgebra::kRankTolerance;
  using RattLieStep::RattLieStep;
};

}  // namespace odepkg::lie

#endif
