// NonholonomicRattLie.hpp — RATTLie (RattLieStep.hpp, Hante's RATTLE on a
// Lie group) with velocity constraints B_nh(q) v = 0 that are not
// derivatives of position constraints (rolling without slipping), alone or
// with holonomic Φ(q) = 0 (B its derivative along the group):
//
//   q̇ = dL_q(e) ṽ,  M v̇ = v̂ᵀ M v − f − Bᵀλ − B_nhᵀμ,  Φ(q) = 0,  B_nh(q) v = 0.
//
// With C(q) = [B(q); B_nh(q)] ((m + k) x n), ℓ = [λ; μ] and the midpoint
// q_{n+1/2} = q_n ∘ exp(hΩ̃/2):
//   (A) T(−hΩ)^{-T} MΩ = M v_n − h/2 (f_n + C(q_n)ᵀ ℓ),
//       Φ(q_n ∘ exp(hΩ̃)) = 0,  B_nh(q_{n+1/2}) Ω = 0,
//   (B) M v_{n+1} = T(hΩ)^{-T} MΩ − h/2 (f_{n+1} + C(q_{n+1})ᵀ ℓ'),
//       C(q_{n+1}) v_{n+1} = 0.
// The holonomic part is RATTLie; the velocity constraint of (A) is imposed on
// the step's algebra element Ω at the midpoint on the group, the analogue of
// the flat nonholonomic RATTLE (NonholonomicRattle.hpp; McLachlan and
// Perlmutter, J. Nonlinear Sci. 16, 2006, Sect. 4: the constraint at the
// midpoint makes the scheme symmetric).  Symmetry: the step −h from
// (q_{n+1}, v_{n+1}) has the same Ω (q_{n+1} ∘ exp(−hΩ̃) = q_n) and the same
// midpoint q_{n+1} ∘ exp(−hΩ̃/2) = q_{n+1/2}; its (A) is this (B) with ℓ'
// and its (B) this (A), so Φ_{−h} ∘ Φ_h = id, the order is even (2), and
// symmetric compositions raise it (Hairer, Lubich, Wanner, Geometric
// Numerical Integration, Sect. V.3).  The map is not symplectic
// (nonholonomic systems are not Hamiltonian on the distribution); its
// reversibility gives energy errors without drift (Modin and Verdier,
// Numer. Math. 145, 2020).  M is any constant symmetric positive definite
// matrix; m = 0 is allowed.
//
// Solve of (A): Newton on (Ω, ℓ) with J = ∂/∂Ω[T(−hΩ)^{-T}MΩ] (no user
// calls) and the constraint rows K ≈ ∂[Φ(q_{n+1})/h; B_nh(q_{n+1/2})Ω]/∂Ω,
// K = [B(q_{n+1}) T(hΩ); B_nh(q_{n+1/2})] at the first iterate, then
// improved by Broyden's rank-one updates from the residuals already
// computed (the derivative of B_nh along q, an O(h) term, is never called
// for); Δℓ from the (m + k)-square Schur complement (h/2) K J⁻¹ C_nᵀ,
// solved in the minimum-norm sense (dependent rows of C).  Along a chain
// of steps (as in RattLieStep.hpp) Newton starts from
//   ℓ⁰ = ℓ'_prev + (h + h_prev) ∂ℓ/∂h,   Ω⁰ = P(ℓ⁰) + (h/h_prev)² δ_prev:
// by the symmetry the last step's ℓ' is ℓ of (A) of the step −h_prev from
// q_n, ∂ℓ/∂h the difference quotient of the last step's pair at q_{n−1};
// P(ℓ) = v_n + h/2 M⁻¹(v̂ᵀMv − f − C_nᵀℓ) is Ω to O(h²), and δ = Ω − P(ℓ),
// even in h to leading order and smooth along the solution, is carried
// over (an error O(h³) left for Newton instead of O(h²)).  Per step: f
// once, Φ and B_nh(q_{n+1/2}) once per iteration, and C(q_{n+1}) once
// (reused as C(q_n) of the next step, and with f_{n+1} for the
// multipliers at the step's end).  A failed iteration is retried from
// ℓ = 0 with K formed afresh at every iterate.  (B) is linear in
// (v_{n+1}, ℓ') when f does not depend on v (probed on the first step and
// every kVelocityRecheck steps); otherwise fixed-point sweeps on
// f(v_{n+1}), which must contract.
#ifndef ODEPKG_LIE_NONHOLONOMIC_RATTLIE_HPP
#define ODEPKG_LIE_NONHOLONOMIC_RATTLIE_HPP

#include "../ConstraintProjection.hpp"
#include "../NewtonSolver.hpp"
#include "LieGroupProblem.hpp"
#include "LieStepper.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

namespace odepkg::lie {

class NonholonomicRattLie final : public LieStepper {
 public:
  /// B_nh(q) (k x n) into A.
  using VelocityConstraint = std::function<void(const ConstVecRef& q, MatRef A)>;
  static constexpr double kRankTolerance = 1e-10;
  static constexpr int kVelocityRecheck = 16;

  NonholonomicRattLie(LieGroupProblem& lp, int k, VelocityConstraint A, NewtonOptions opts = NewtonOptions())
      : LieStepper(lp.embedded()),
        lp_(lp),
        G_(lp.group()),
        nq_(lp.nq()),
        n_(lp.n()),
        m_(lp.constraints()),
        k_(k),
        c_(lp.constraints() + k),
        A_(std::move(A)),
        opts_(opts),
        M_(lp.mass()),
        Minv_(lp.mass_inverse()),
        lu_(lp.n()),
        schur_(lp.constraints() + k, kRankTolerance) {
    if (k < 1) throw InputError("invalidOption", "NonholonomicsNb must be >= 1");
    if (c_ >= n_)
      throw InputError("invalidOption", "NonholonomicsNb + ConstraintsNb (" + std::to_string(c_) +
                                            ") must be smaller than the dimension of " + G_.name() + " (" +
                                            std::to_string(n_) + ")");
    const int n = n_, c = c_;
    for (Mat* X : {&C0_, &C1_, &K_, &Cm_}) X->resize(c, n);
    for (Mat* X : {&Tm_, &Tp_, &D_, &J_}) X->resize(n, n);
    X_.resize(n, c);
    S_.resize(c, c);
    for (Vec* v : {&f0_, &f1_, &fk_, &Om_, &w_, &MOm_, &cvec_, &r1_, &u_, &dOm_, &b_, &v1_, &vprev_, &tmp_, &tmp2_,
                   &pred_})
      v->resize(n);
    delta_ = Vec::Zero(n);
    for (Vec* v : {&r23_, &r23_old_, &rhs_, &dl_, &l1_, &z_}) v->resize(c);
    l_ = Vec::Zero(c);
    lend_ = Vec::Zero(c);
    dldh_ = Vec::Zero(c);
    phi_.resize(std::max(m_, 1));
    for (Vec* v : {&q1_, &qm_, &qs_}) v->resize(nq_);
    y_.resize(nq_ + n_);
    yend_.resize(nq_ + n_);
  }

  const char* name() const override { return "nonholonomic_rattlie"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }
  void reset() override { have_end_ = false; }

  int velocity_constraints() const { return k_; }
  bool velocity_dependent() const override { return velocity_dependent_; }
  bool rank_deficiency_seen() const override { return rank_seen_; }
  double rank_deficiency_t() const override { return rank_t_; }
  double condition_estimate() const override { return cond_max_; }
  bool minimum_norm_position_multipliers() const override { return true; }

  /// B_nh(q) into A (k x n), counted; false if not finite.
  bool velocity_matrix(const ConstVecRef& q, MatRef A) {
    ++lp_.stats().nonholonomic_evals;
    A_(q, A);
    return A.allFinite();
  }

  /// C(q) = [B(q); B_nh(q)].
  bool constraint_rows(const ConstVecRef& q, Mat& C) {
    if (m_ > 0 && !lp_.constraint_grad(q, C.topRows(m_))) return false;
    return velocity_matrix(q, C.bottomRows(k_));
  }

  /// Initial velocities onto C(q) v = 0, M-orthogonally:
  /// v −= M⁻¹Cᵀ(C M⁻¹ Cᵀ)⁺ C v (after the holonomic projection of q).
  /// Returns |B_nh(q) v|_inf before and after in `before`, `after`.
  bool project_velocity(VecRef y, double& before, double& after) {
    const auto q = y.head(nq_);
    if (!constraint_rows(q, C0_)) return false;
    before = (C0_.bottomRows(k_) * y.tail(n_)).lpNorm<Eigen::Infinity>();
    X_.noalias() = Minv_ * C0_.transpose();
    S_.noalias() = C0_ * X_;
    if (!schur_.compute(S_)) return false;
    rhs_.noalias() = C0_ * y.tail(n_);
    schur_.solve(rhs_, dl_);
    y.tail(n_).noalias() -= X_ * dl_;
    after = (C0_.bottomRows(k_) * y.tail(n_)).lpNorm<Eigen::Infinity>();
    return y.allFinite();
  }

  StepStatus step(Point& from, double h, Point& to) override {
    StepStatus s = solve_step(from, h, to, false);
    if (s != StepStatus::NewtonDiverged) return s;
    ++lp_.stats().newton_retries;
    return solve_step(from, h, to, true);
  }

  /// ℓ(t) = [λ; μ] at a state of the trajectory, from the index-1 system
  /// (C M⁻¹ Cᵀ) ℓ = C M⁻¹(v̂ᵀMv − f) + Z,  Z = d/dε [C(q∘exp(εṽ)) v] by
  /// central differences (2 calls of each of B and B_nh; f and C(q) are the
  /// step's at its end, an output of the run).
  bool multipliers(double t, const ConstVecRef& y, VecRef lambda) override {
    const auto q = y.head(nq_);
    const auto v = y.tail(n_);
    if (!velocity_dependent_ && at_end(t, y)) {
      fk_ = f1_;
      Cm_ = C1_;
    } else if (!lp_.force(t, y, fk_) || !constraint_rows(q, Cm_)) {
      return false;
    }
    const double vn = v.lpNorm<Eigen::Infinity>();
    z_.setZero();
    if (vn > 0.0) {
      const double delta = std::cbrt(std::numeric_limits<double>::epsilon()) / vn;
      for (int sgn : {1, -1}) {
        w_ = (sgn * delta) * v;
        G_.compose_exp(q, w_, qs_);
        if (!constraint_rows(qs_, K_)) return false;
        z_.noalias() += (sgn / (2 * delta)) * (K_ * v);
      }
    }
    lp_.inertial(v, tmp_);
    tmp_ -= fk_;
    tmp2_.noalias() = Minv_ * tmp_;
    rhs_ = z_;
    rhs_.noalias() += Cm_ * tmp2_;
    X_.noalias() = Minv_ * Cm_.transpose();
    S_.noalias() = Cm_ * X_;
    if (!schur_.compute(S_)) return false;
    schur_.solve(rhs_, lambda);
    return lambda.allFinite();
  }

 private:
  static double inf_norm(const ConstVecRef& v) { return v.lpNorm<Eigen::Infinity>(); }

  /// (t, y) is the last step's end (its t up to the rounding of a sum of
  /// substeps).
  bool at_end(double t, const ConstVecRef& y) const {
    return have_end_ && std::abs(t - tend_) <= 1e-12 * std::max(1.0, std::abs(t)) && yend_ == y;
  }

  void note_rank(double t) {
    cond_max_ = std::max(cond_max_, schur_.condition_estimate());
    if (!schur_.rank_deficient()) return;
    ++lp_.stats().rank_deficient;
    if (!rank_seen_) {
      rank_seen_ = true;
      rank_t_ = t;
    }
  }

  /// At Ω: q_{n+1}, q_{n+1/2}, J and its LU, T(hΩ) and r1; with `rows` the
  /// residuals r23 = [Φ(q_{n+1})/h; B_nh(q_{n+1/2}) Ω] (B_nh(q_{n+1/2}) left
  /// in the bottom rows of Cm_).
  bool evaluate(const ConstVecRef& q0, double h) {
    w_ = h * Om_;
    G_.compose_exp(q0, w_, q1_);
    tmp_ = 0.5 * w_;
    G_.compose_exp(q0, tmp_, qm_);
    MOm_.noalias() = M_ * Om_;
    tmp_ = -w_;
    G_.tangent_inv_transpose(tmp_, Tm_);
    G_.d_tangent_inv_transpose(tmp_, MOm_, D_);
    J_.noalias() = Tm_ * M_;
    J_ -= h * D_;
    lu_.compute(J_);
    G_.tangent(w_, Tp_);
    r1_.noalias() = Tm_ * MOm_;
    r1_floor_ = std::numeric_limits<double>::epsilon() * (inf_norm(r1_) + inf_norm(cvec_));
    r1_ -= cvec_;
    tmp_.noalias() = C0_.transpose() * l_;
    r1_.noalias() += (0.5 * h) * tmp_;
    if (m_ > 0) {
      if (!lp_.constraint(q1_, phi_)) return false;
      r23_.head(m_) = phi_.head(m_) / h;
      phi_norm_ = inf_norm(phi_.head(m_));
    }
    if (!velocity_matrix(qm_, Cm_.bottomRows(k_))) return false;
    r23_.tail(k_).noalias() = Cm_.bottomRows(k_) * Om_;
    return r1_.allFinite() && r23_.allFinite() && q1_.allFinite();
  }

  /// K = [B(q_{n+1}) T(hΩ); B_nh(q_{n+1/2})] at the current iterate.
  bool form_rows() {
    if (m_ > 0) {
      if (!lp_.constraint_grad(q1_, Cm_.topRows(m_))) return false;
      K_.topRows(m_).noalias() = Cm_.topRows(m_) * Tp_;
    }
    K_.bottomRows(k_) = Cm_.bottomRows(k_);
    return true;
  }

  StepStatus solve_step(Point& from, double h, Point& to, bool fresh_rows) {
    Stats& st = lp_.stats();
    const double eps = std::numeric_limits<double>::epsilon();
    const double t0 = from.t, t1 = from.t + h;
    const auto q0 = from.x.head(nq_);
    const auto v0 = from.x.tail(n_);
    // f_n and C(q_n): the last step's end when this step continues it
    const bool continues = at_end(t0, from.x);
    if (continues) {
      f0_ = f1_;
      C0_ = C1_;
    } else {
      if (!lp_.force(t0, from.x, f0_) || !constraint_rows(q0, C0_)) return StepStatus::NonFinite;
    }
    cvec_.noalias() = M_ * v0;
    cvec_ -= (0.5 * h) * f0_;
    // the warm start along a chain: ℓ⁰ = ℓ'_prev + (h + h_prev) ∂ℓ/∂h
    // (ℓ'_prev is ℓ(−h_prev) at q_n), else ℓ⁰ = 0
    chain_ = continues && !fresh_rows;
    if (chain_) {
      l_ = lend_;
      if (have_dldh_) l_ += (h + h_prev_) * dldh_;
    } else {
      l_.setZero();
    }
    // Ω⁰ = P(ℓ⁰) (+ (h/h_prev)² δ_prev along a chain); pred_ = P(0)
    lp_.inertial(v0, tmp_);
    tmp_ -= f0_;
    pred_ = v0;
    pred_.noalias() += (0.5 * h) * (Minv_ * tmp_);
    tmp_.noalias() = C0_.transpose() * l_;
    Om_ = pred_;
    Om_.noalias() -= (0.5 * h) * (Minv_ * tmp_);
    if (chain_) Om_ += ((h / h_prev_) * (h / h_prev_)) * delta_;

    ++st.newton_solves;
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0;
    bool ok = false;
    long it = 0;
    for (;;) {
      if (!evaluate(q0, h)) return StepStatus::NonFinite;
      if (it == 0 || fresh_rows) {
        if (!form_rows()) return StepStatus::NonFinite;
      } else {
        // Broyden: K += ((r23 − r23_old) − K ΔΩ) ΔΩᵀ / |ΔΩ|²
        const double dd = dOm_.squaredNorm();
        if (dd > 0.0) {
          rhs_ = r23_ - r23_old_;
          rhs_.noalias() -= K_ * dOm_;
          K_.noalias() += (rhs_ / dd) * dOm_.transpose();
        }
      }
      r23_old_ = r23_;
      u_.noalias() = lu_.solve(r1_);
      X_.noalias() = lu_.solve(C0_.transpose());
      S_.noalias() = K_ * X_;
      if (!schur_.compute(S_)) return StepStatus::NonFinite;
      note_rank(t0);
      // J ΔΩ + h/2 C_nᵀ Δℓ = −r1,  K ΔΩ = −r23:  (h/2) K J⁻¹ C_nᵀ Δℓ = r23 − K J⁻¹ r1
      rhs_ = r23_;
      rhs_.noalias() -= K_ * u_;
      schur_.solve(rhs_, dl_);
      dl_ *= 2.0 / h;
      dOm_ = -u_;
      dOm_.noalias() -= (0.5 * h) * (X_ * dl_);
      l_ += dl_;
      Om_ += dOm_;
      const double nd = inf_norm(dOm_);
      if (!std::isfinite(nd)) break;
      if (it > 0) theta = nd / prev;
      ++it;
      ++st.newton_iterations;
      // converged when the error left, θ/(1−θ)|ΔΩ|, is at round-off for Ω
      // or for q_{n+1} (Φ = 0 fixes Ω to eps |q| / h only)
      const double rest = (it > 1 && theta < 1.0) ? theta / (1.0 - theta) * nd : nd;
      const double scale = std::max(1.0, inf_norm(Om_));
      const double qscale = std::max(1.0, inf_norm(q1_));
      if (rest <= 4 * eps * scale || (it > 1 && std::abs(h) * rest <= eps * qscale)) {
        ok = true;
        break;
      }
      if ((it > 1 && theta >= 1.0) || it >= opts_.max_iterations) {
        // stagnation at round-off counts as converged
        ok = nd <= 64 * eps * scale || std::abs(h) * nd <= 64 * eps * qscale;
        break;
      }
      prev = nd;
    }
    st.newton_max_iterations = std::max(st.newton_max_iterations, it);
    if (!ok) {
      have_end_ = false;
      return StepStatus::NewtonDiverged;
    }
    w_ = h * Om_;
    G_.compose_exp(q0, w_, q1_);
    // δ = Ω − P(ℓ) for the next step's Ω⁰
    tmp_.noalias() = C0_.transpose() * l_;
    delta_ = Om_ - pred_;
    delta_.noalias() += (0.5 * h) * (Minv_ * tmp_);
    if (m_ > 0) st.max_constraint_residual = std::max(st.max_constraint_residual, phi_norm_);

    // ---- (B): v_{n+1} and ℓ' ----------------------------------------------
    MOm_.noalias() = M_ * Om_;
    G_.tangent_inv_transpose(w_, Tp_);
    b_.noalias() = Tp_ * MOm_;  // T(hΩ)^{-T} MΩ
    if (!constraint_rows(q1_, C1_)) return StepStatus::NonFinite;
    X_.noalias() = Minv_ * C1_.transpose();
    S_.noalias() = C1_ * X_;
    if (!schur_.compute(S_)) return StepStatus::NonFinite;
    note_rank(t1);
    y_.head(nq_) = q1_;
    // v* = M⁻¹(b − h/2 f_n): f_{n+1} there when f does not depend on v
    tmp_ = b_ - (0.5 * h) * f0_;
    v1_.noalias() = Minv_ * tmp_;
    y_.tail(n_) = v1_;
    if (!lp_.force(t1, y_, f1_)) return StepStatus::NonFinite;
    velocity_linear(h);
    if (!velocity_dependent_ && (probe_due_ || ++since_probe_ >= kVelocityRecheck)) {
      since_probe_ = 0;
      probe_due_ = false;
      y_.tail(n_) = v1_;
      if (!lp_.force(t1, y_, fk_)) return StepStatus::NonFinite;
      if (fk_ != f1_) velocity_dependent_ = true;
    }
    if (velocity_dependent_) {
      // fixed-point sweeps v ← (B)(f(v)): contract by about h/2 |M⁻¹ ∂f/∂v|
      double prevv = std::numeric_limits<double>::infinity();
      for (long sweep = 1;; ++sweep) {
        y_.tail(n_) = v1_;
        if (!lp_.force(t1, y_, f1_)) return StepStatus::NonFinite;
        vprev_ = v1_;
        velocity_linear(h);
        ++st.newton_iterations;
        const double nd = inf_norm(v1_ - vprev_);
        if (!std::isfinite(nd)) return StepStatus::NonFinite;
        const double th = nd / prevv;
        const double rest = (sweep > 1 && th < 1.0) ? th / (1.0 - th) * nd : nd;
        if (rest <= 4 * eps * std::max(1.0, inf_norm(v1_))) break;
        if ((sweep > 1 && th >= 1.0) || sweep >= opts_.max_iterations) {
          have_end_ = false;
          return StepStatus::NewtonDiverged;
        }
        prevv = nd;
      }
    }
    rhs_.noalias() = C1_ * v1_;
    if (m_ > 0) st.max_hidden_residual = std::max(st.max_hidden_residual, inf_norm(rhs_.head(m_)));
    st.max_nonholonomic_residual = std::max(st.max_nonholonomic_residual, inf_norm(rhs_.tail(k_)));

    to.t = t1;
    to.x.head(nq_) = q1_;
    to.x.tail(n_) = v1_;
    to.has_force = false;
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    // ∂ℓ/∂h = (ℓ(h) − ℓ(−h_prev)) / (h + h_prev) at q_n, unless the two
    // sizes nearly cancel (a composition's sign change)
    if (chain_ && std::abs(h + h_prev_) > 0.25 * std::max(std::abs(h), std::abs(h_prev_))) {
      dldh_ = (l_ - lend_) / (h + h_prev_);
      have_dldh_ = true;
    } else if (!chain_) {
      have_dldh_ = false;
    }
    yend_ = to.x;
    tend_ = t1;
    lend_ = l1_;
    h_prev_ = h;
    have_end_ = true;
    return StepStatus::Success;
  }

  /// (B) with f_{n+1} = f1_: (h/2) C M⁻¹ Cᵀ ℓ' = C M⁻¹(b − h/2 f),
  /// v = M⁻¹(b − h/2 (f + Cᵀℓ')); X_ = M⁻¹C₁ᵀ and the Schur factors set.
  void velocity_linear(double h) {
    tmp_ = b_ - (0.5 * h) * f1_;
    rhs_.noalias() = X_.transpose() * tmp_;  // C M⁻¹ (b − h/2 f), M symmetric
    schur_.solve(rhs_, l1_);
    l1_ *= 2.0 / h;
    tmp_.noalias() -= (0.5 * h) * (C1_.transpose() * l1_);
    v1_.noalias() = Minv_ * tmp_;
  }

  LieGroupProblem& lp_;
  const LieGroup& G_;
  const int nq_, n_, m_, k_, c_;
  VelocityConstraint A_;
  NewtonOptions opts_;
  const Mat& M_;
  const Mat& Minv_;
  Eigen::PartialPivLU<Mat> lu_;
  MinNormSolver schur_;
  Mat C0_, C1_, K_, Cm_, Tm_, Tp_, D_, J_, X_, S_;
  Vec f0_, f1_, fk_, Om_, w_, MOm_, cvec_, r1_, u_, dOm_, b_, v1_, vprev_, tmp_, tmp2_;
  Vec pred_, delta_;  // P(0) = v_n + h/2 M⁻¹(v̂ᵀMv − f_n); δ = Ω − P(ℓ) of the last step
  Vec r23_, r23_old_, rhs_, dl_, l_, l1_, lend_, dldh_, z_, phi_;
  Vec q1_, qm_, qs_, y_, yend_;
  double r1_floor_ = 0.0, phi_norm_ = 0.0, tend_ = 0.0, h_prev_ = 0.0;
  bool have_end_ = false;  // yend_, tend_, f1_, C1_, lend_, h_prev_, delta_: the last step's
  bool chain_ = false;     // this step continues the last one (its warm start)
  bool have_dldh_ = false;
  bool velocity_dependent_ = false, probe_due_ = true;
  int since_probe_ = 0;
  bool rank_seen_ = false;
  double rank_t_ = std::numeric_limits<double>::quiet_NaN();
  double cond_max_ = 1.0;
};

}  // namespace odepkg::lie

#endif
