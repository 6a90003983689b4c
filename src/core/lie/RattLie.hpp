// RattLie.hpp — RATTLE on a Lie group (S. Hante's RATTLie; Störmer–Verlet on G
// without constraints).  From the discrete Lagrangian
//   L_h = h/2 ΩᵀMΩ − h/2 (U(q_n) + U(q_{n+1})),  q_{n+1} = q_n ∘ exp(hΩ̃),
// and its discrete Legendre transforms (left-trivialised momenta Mv):
//   (A) T(−hΩ)^{-T} MΩ = M v_n − h/2 (f_n + B(q_n)ᵀ λ),   Φ(q_n ∘ exp(hΩ̃)) = 0,
//   (B) M v_{n+1} = T(hΩ)^{-T} MΩ − h/2 (f_{n+1} + B(q_{n+1})ᵀ μ),   B(q_{n+1}) v_{n+1} = 0,
// f_k = f(t_k, q_k, v_k).  For G = Rⁿ (T = I) this is classical RATTLE; with
// T(±w)^{-T} = I ± ½ ad(w)ᵀ + O(w²) it is consistent with M v̇ = ad(v)ᵀ M v − f − Bᵀλ.
//
// (A) is Newton on (Ω, λ): ∂/∂Ω [T(−hΩ)^{-T} MΩ] = T(−hΩ)^{-T} M − h D(−hΩ, MΩ)
// (D = ∂_w[T(w)^{-T} x], no user calls), ∂Φ/∂Ω = h B(q_{n+1}) T(hΩ) with
// B(q_{n+1}) extrapolated from the last steps; λ by the Schur complement with
// minimum-norm solves (rank-deficient B).  Each iteration calls Φ once.
// (B) is linear in (v_{n+1}, μ) when f does not depend on v: one call of f and
// one of B per step, and f_{n+1}, B(q_{n+1}) start the next step.  Whether f
// depends on v is probed on the first step and re-checked every
// kVelocityRecheck steps by one call at the accepted state (a change of f
// redoes that step's (B) by Newton and switches to the velocity-dependent
// mode: Newton on (v, μ) with ∂f/∂v by differences, reused while it converges).
//
// Symmetric, Φ_h⁻¹ = Φ_{−h} (step −h from q_{n+1} is (A) and (B) swapped, with
// λ and μ exchanged), so symmetric compositions raise its order
// (CompositionStepper; Hairer, Lubich, Wanner, "Geometric Numerical
// Integration", Sect. II.4, V.3).  Substeps of any size and sign: the chain
// extrapolation of B is linear in the signed steps, and B is re-evaluated
// while Newton still moves q_{n+1} by more than kRefreshB; the caches are
// keyed by the state.  Newton's λ⁰ along a chain of steps: by the symmetry
// the last step's μ is λ of (A) for the step −h_prev from q_n, so
// λ⁰ = μ_prev + (h + h_prev) ∂λ/∂h (the derivative from the last step's pair),
// good for either sign.  Under a composition stage i also starts from the same
// stage of the previous step (save_guess/load_guess): Ω⁰ = P(λ⁰) + (h/h')² δ',
// λ⁰ += (h/h')² ε', with P the explicit O(h²) predictor below and δ' = Ω − P(λ),
// ε' = λ − (its λ⁰) of that stage (size h').
#ifndef ODEPKG_LIE_RATTLIE_HPP
#define ODEPKG_LIE_RATTLIE_HPP

#include "../ConstraintProjection.hpp"
#include "../NewtonSolver.hpp"
#include "../Stepper.hpp"
#include "LieGroupProblem.hpp"
#include "LieStepper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg::lie {

class RattLie final : public LieStepper {
 public:
  static constexpr int kVelocityRecheck = 16;
  static constexpr double kRankTolerance = 1e-10;
  static constexpr double kRefreshB = 1e-3;

  RattLie(LieGroupProblem& lp, NewtonOptions opts)
      : LieStepper(lp.embedded()),
        lp_(lp),
        G_(lp.group()),
        nq_(lp.nq()),
        n_(lp.n()),
        m_(lp.constraints()),
        opts_(opts),
        lu_(lp.n()),
        luv_(lp.n()),
        schur_(std::max(lp.constraints(), 1), kRankTolerance) {
    const int n = n_, m = std::max(m_, 1), ns = nq_ + n_;
    for (Cached* c : {&start_, &end_}) {
      c->y.resize(ns);
      c->f.resize(n);
      c->B.resize(m, n);
    }
    f0_.resize(n);
    g_delta_ = Vec::Zero(n);
    delta_ = Vec::Zero(n);
    pred_.resize(n);
    g_eps_ = Vec::Zero(m_);
    g_lam_ = Vec::Zero(m_);
    eps_lam_ = Vec::Zero(m_);
    lam_chain_ = Vec::Zero(m);
    XM_.resize(n, m);
    B0_.resize(m, n);
    Bprev_.resize(m, n);
    Bex_.resize(m, n);
    tmpB_.resize(m, n);
    Bt_.resize(m, n);
    B1_.resize(m, n);
    f1_.resize(n);
    fk_.resize(n);
    Om_.resize(n);
    w_.resize(n);
    wm_.resize(n);
    MOm_.resize(n);
    c_.resize(n);
    r1_.resize(n);
    u_.resize(n);
    dOm_.resize(n);
    b_.resize(n);
    v1_.resize(n);
    dv_.resize(n);
    tmp_.resize(n);
    tmp2_.resize(n);
    q1_.resize(nq_);
    y_.resize(ns);
    yp_.resize(ns);
    lam_ = Vec::Zero(m);
    mu_prev_ = Vec::Zero(m);
    b_lam_ = Vec::Zero(m);
    mu_ = Vec::Zero(m);
    dlam_.resize(m);
    phi_.resize(m);
    rhs_.resize(m);
    Tm_.resize(n, n);
    Tp_.resize(n, n);
    D_.resize(n, n);
    J_.resize(n, n);
    Jv_.resize(n, n);
    K_ = Mat::Zero(n, n);
    X_.resize(n, m);
    S_.resize(m, m);
  }

  const char* name() const override { return "rattlie"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }
  void reset() override {
    have_prev_ = false;
    guess_loaded_ = false;
  }

  /// Warm start of a composition's stage: [δ; ε; λ; h; c] (n + 2m + 2
  /// numbers) from its last step: δ = Ω − P(λ), ε = λ − (the chain's guess
  /// of λ), c = 1 if there was a chain guess (the step continued another).
  /// Both δ and ε are O(h²) and smooth along the solution, so the stage's
  /// next guesses P(λ⁰) + δ, chain + ε (scaled by (h/h')²) are off by
  /// O(h² H) instead of O(h²).
  int guess_size() const override { return n_ + 2 * m_ + 2; }
  void save_guess(VecRef g) const override {
    g.head(n_) = delta_;
    g.segment(n_, m_) = eps_lam_;
    g.segment(n_ + m_, m_) = lam_.head(m_);
    g(n_ + 2 * m_) = h_prev_;
    g(n_ + 2 * m_ + 1) = chain_guess_ ? 1.0 : 0.0;
  }
  void load_guess(const ConstVecRef& g) override {
    g_delta_ = g.head(n_);
    g_eps_ = g.segment(n_, m_);
    g_lam_ = g.segment(n_ + m_, m_);
    g_h_ = g(n_ + 2 * m_);
    g_chain_ = g(n_ + 2 * m_ + 1) != 0.0;
    guess_loaded_ = true;
  }

  bool velocity_dependent() const override { return velocity_dependent_; }
  bool rank_deficiency_seen() const override { return rank_seen_; }
  double rank_deficiency_t() const override { return rank_t_; }
  double condition_estimate() const override { return cond_max_; }
  bool minimum_norm_position_multipliers() const override { return true; }

  StepStatus step(Point& from, double h, Point& to) override {
    Stats& st = lp_.stats();
    const double t0 = from.t, t1 = from.t + h;
    const auto q0 = from.x.head(nq_);
    const auto v0 = from.x.tail(n_);
    const bool continues = have_prev_ && end_.valid && matches(end_, from);
    // a loaded guess serves this step only, and only a stage of the same sign
    // and a comparable size
    const bool warm = guess_loaded_ && g_h_ * h > 0.0 && std::abs(h) <= 4 * std::abs(g_h_) &&
                      std::abs(g_h_) <= 4 * std::abs(h);
    guess_loaded_ = false;
    const double r2 = warm ? (h / g_h_) * (h / g_h_) : 0.0;
    if (!load_start(from)) return StepStatus::NonFinite;
    const Mat& M = lp_.mass();

    // ---- (A): Ω and λ ------------------------------------------------------
    c_.noalias() = M * v0;
    c_ -= (0.5 * h) * f0_;
    if (m_ > 0) {
      // B(q_{n+1}) ≈ B_n + (h/h_prev)(B_n − B_{n−1}) along a chain of steps.
      // The signed ratio: linear in t through t_n − h_prev and t_n, whatever
      // the signs of the substeps of a composition.
      // λ(h) of (A) from q_n is the μ of (B) of the step −h ending at q_n
      // (symmetry), so the last step's μ is λ(−h_prev) exactly, and
      // λ(h) ≈ μ_prev + b (h + h_prev), b = ∂λ/∂h from the last step's pair.
      chain_guess_ = continues;
      if (continues) {
        Bex_ = B0_ + (h / h_prev_) * (B0_ - Bprev_);
        lam_ = mu_prev_;
        if (have_b_) lam_ += (h + h_prev_) * b_lam_;
        lam_chain_ = lam_;
        if (warm && g_chain_) lam_ += (r2 * g_eps_);
      } else {
        Bex_ = B0_;
        lam_.setZero();
        if (warm) lam_ = g_lam_;  // this stage's λ one step ago
      }
    }
    // P(λ) = v_n + h/2 M⁻¹(ad(v_n)ᵀMv_n − f_n − B_nᵀλ), O(h²) from Ω
    lp_.inertial(v0, tmp_);
    tmp_ -= f0_;
    pred_ = v0;
    pred_.noalias() += (0.5 * h) * (lp_.mass_inverse() * tmp_);
    Om_ = pred_;
    if (m_ > 0) {
      XM_.noalias() = lp_.mass_inverse() * B0_.transpose();
      Om_.noalias() -= (0.5 * h) * (XM_ * lam_);
    }
    if (warm) Om_ += r2 * g_delta_;

    ++st.newton_solves;
    const double eps = std::numeric_limits<double>::epsilon();
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0;
    bool ok = false;
    long it = 0;
    double phi_norm = 0.0;
    for (;;) {
      w_ = h * Om_;
      G_.compose_exp(q0, w_, q1_);
      wm_ = -w_;
      G_.tangent_inv_transpose(wm_, Tm_);
      MOm_.noalias() = M * Om_;
      r1_.noalias() = Tm_ * MOm_;
      r1_ -= c_;
      if (m_ > 0) {
        r1_.noalias() += (0.5 * h) * (B0_.transpose() * lam_);
        if (!lp_.constraint(q1_, phi_)) return StepStatus::NonFinite;
        phi_norm = inf_norm(phi_);
        // B at the first iterate (O(h²) from q_{n+1}) when the extrapolation
        // from B_n, off by O((h|Ω|)²), is too coarse: the fast heavy top turns
        // 0.15 rad per step at h = 2^-10 (7 iterations with it, 3 without).
        // Each such call measures the extrapolation's error; below 1e-4
        // (relative; Newton then contracts by about that factor) the next steps
        // extrapolate, until they converge slowly.
        if (it == 0 && (fresh_B_ || !continues)) {
          if (continues) tmpB_ = Bex_;
          if (!lp_.constraint_grad(q1_, Bex_)) return StepStatus::NonFinite;
          if (continues)
            fresh_B_ = !((tmpB_ - Bex_).lpNorm<Eigen::Infinity>() <=
                         1e-4 * B0_.lpNorm<Eigen::Infinity>());
        } else if (it > 0 && std::abs(h) * prev > kRefreshB) {
          // The last correction moved q_{n+1} by |h ΔΩ| > kRefreshB: B where
          // it was taken is off by about that much and Newton would contract
          // only by that factor per iteration (long substeps of a composition
          // from a coarse guess: 13 iterations, 4 with it).
          if (!lp_.constraint_grad(q1_, Bex_)) return StepStatus::NonFinite;
        }
      }
      if (!r1_.allFinite() || !q1_.allFinite()) return StepStatus::NonFinite;
      G_.d_tangent_inv_transpose(wm_, MOm_, D_);
      J_.noalias() = Tm_ * M;
      J_ -= h * D_;
      lu_.compute(J_);
      u_.noalias() = lu_.solve(r1_);
      if (m_ > 0) {
        // h Bt ΔΩ = −Φ,  J ΔΩ + h/2 B_nᵀ Δλ = −r1  (Bt = B(q_{n+1}) T(hΩ)):
        // (h²/2) Bt J⁻¹ B_nᵀ Δλ = Φ − h Bt J⁻¹ r1.
        G_.tangent(w_, Tp_);
        Bt_.noalias() = Bex_ * Tp_;
        X_.noalias() = lu_.solve(B0_.transpose());
        S_.noalias() = Bt_ * X_;
        if (!schur_.compute(S_)) return StepStatus::NonFinite;
        note_rank(t0);
        rhs_ = phi_;
        rhs_.noalias() -= h * (Bt_ * u_);
        schur_.solve(rhs_, dlam_);
        dlam_ *= 2.0 / (h * h);
        dOm_ = -u_;
        dOm_.noalias() -= (0.5 * h) * (X_ * dlam_);
        lam_ += dlam_;
      } else {
        dOm_ = -u_;
      }
      Om_ += dOm_;
      const double nd = inf_norm(dOm_);
      if (!std::isfinite(nd)) break;
      if (it > 0) theta = nd / prev;
      ++it;
      ++st.newton_iterations;
      // Converged when the remaining error of Ω, θ/(1−θ) |ΔΩ| (Newton's
      // contraction estimate), is at round-off: for Ω itself, or with
      // constraints for q_{n+1} = q_n ∘ exp(hΩ̃) — Φ = 0 fixes Ω only to
      // eps |q| / h (the rounding of Φ divided by h), and Φ(q_{n+1}) then
      // holds to round-off.
      const double rest = (it > 1 && theta < 1.0) ? theta / (1.0 - theta) * nd : nd;
      const double scale = std::max(1.0, inf_norm(Om_));
      const double qscale = std::max(1.0, inf_norm(q1_));
      if (rest <= 4 * eps * scale || (m_ > 0 && std::abs(h) * rest <= 4 * eps * qscale)) {
        ok = true;
        break;
      }
      if ((it > 1 && theta >= 1.0) || it >= opts_.max_iterations) {
        // stagnation at round-off counts as converged
        ok = nd <= 64 * eps * scale || (m_ > 0 && std::abs(h) * nd <= 64 * eps * qscale);
        break;
      }
      prev = nd;
    }
    st.newton_max_iterations = std::max(st.newton_max_iterations, it);
    if (m_ > 0 && it > 3) fresh_B_ = true;
    if (!ok) {
      have_prev_ = false;
      return StepStatus::NewtonDiverged;
    }
    w_ = h * Om_;
    G_.compose_exp(q0, w_, q1_);
    // δ and ε: a composition's warm start of this stage next step
    delta_ = Om_ - pred_;
    if (m_ > 0) {
      delta_.noalias() += (0.5 * h) * (XM_ * lam_);
      if (chain_guess_) eps_lam_ = lam_.head(m_) - lam_chain_.head(m_);
    }
    if (m_ > 0) {
      const double gb = phi_norm * std::min(1.0, theta);
      if (!(gb <= std::sqrt(opts_.tol) * std::max(1.0, inf_norm(q1_)))) {
        have_prev_ = false;
        return StepStatus::ConstraintsViolated;
      }
      const double floor = 4 * eps * std::max(1.0, B0_.cwiseAbs().rowwise().sum().maxCoeff());
      st.max_constraint_residual = std::max(st.max_constraint_residual, std::max(gb, floor));
    }

    // ---- (B): v_{n+1} and μ ------------------------------------------------
    G_.tangent_inv_transpose(w_, Tp_);
    MOm_.noalias() = M * Om_;
    b_.noalias() = Tp_ * MOm_;
    if (m_ > 0 && !lp_.constraint_grad(q1_, B1_)) return StepStatus::NonFinite;
    y_.head(nq_) = q1_;
    StepStatus s = StepStatus::Success;
    if (!velocity_dependent_) {
      // v* = M⁻¹(b − h/2 f_n) ≈ v_{n+1}: f does not depend on it
      tmp_ = b_ - (0.5 * h) * f0_;
      y_.tail(n_).noalias() = lp_.mass_inverse() * tmp_;
      if (!lp_.force(t1, y_, f1_)) return StepStatus::NonFinite;
      solve_velocity_linear(h, t1);
      if (probe_due_ || ++since_probe_ >= kVelocityRecheck) {
        since_probe_ = 0;
        probe_due_ = false;
        y_.tail(n_) = v1_;
        if (!lp_.force(t1, y_, fk_)) return StepStatus::NonFinite;
        if (fk_ != f1_) {
          velocity_dependent_ = true;
          have_K_ = false;
        }
      }
    }
    if (velocity_dependent_) {
      if ((s = solve_velocity_newton(h, t1)) != StepStatus::Success) {
        have_prev_ = false;
        return s;
      }
    }
    if (m_ > 0) {
      rhs_.noalias() = B1_ * v1_;
      const double floor =
          4 * eps * std::max(1.0, B1_.cwiseAbs().rowwise().sum().maxCoeff() * inf_norm(v1_));
      st.max_hidden_residual = std::max(st.max_hidden_residual, std::max(inf_norm(rhs_), floor));
    }

    to.t = t1;
    to.x.head(nq_) = q1_;
    to.x.tail(n_) = v1_;
    to.has_force = false;
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    // the end point's f and B start the next step
    end_.t = t1;
    end_.y = to.x;
    end_.f = f1_;
    if (m_ > 0) end_.B = B1_;
    end_.valid = true;
    if (m_ > 0) {
      Bprev_ = B0_;
      // b = (λ(h) − λ(−h_prev)) / (h + h_prev) at q_n, unless the two
      // sizes nearly cancel (a composition's sign change)
      if (continues && std::abs(h + h_prev_) > 0.25 * std::max(std::abs(h), std::abs(h_prev_))) {
        b_lam_ = (lam_ - mu_prev_) / (h + h_prev_);
        have_b_ = true;
      } else if (!continues) {
        have_b_ = false;
      }
      mu_prev_ = mu_;
    }
    h_prev_ = h;
    have_prev_ = true;
    return StepStatus::Success;
  }

  /// λ(t) at a state of the trajectory, consistent with the index-1 system
  /// (B M⁻¹ Bᵀ) λ = B M⁻¹(ad(v)ᵀMv − f) + Z,  Z = d/dε [B(q∘exp(εṽ)) v] by
  /// central differences (2 calls of B; f and B(q) reused from the step).
  bool multipliers(double t, const ConstVecRef& y, VecRef lambda) override {
    if (m_ == 0) return true;
    const auto q = y.head(nq_);
    const auto v = y.tail(n_);
    const Cached* c = nullptr;
    if (end_.valid && same_time(end_.t, t) && end_.y == y) c = &end_;
    else if (start_.valid && same_time(start_.t, t) && start_.y == y) c = &start_;
    if (c) {
      f1_ = c->f;
      B1_ = c->B;
    } else {
      if (!lp_.force(t, y, f1_) || !lp_.constraint_grad(q, B1_)) return false;
    }
    const double vn = inf_norm(v);
    rhs_.setZero();
    if (vn > 0.0) {
      const double delta = std::cbrt(std::numeric_limits<double>::epsilon()) / vn;
      w_ = delta * v;
      G_.compose_exp(q, w_, q1_);
      if (!lp_.constraint_grad(q1_, Bt_)) return false;
      rhs_.noalias() = Bt_ * v;
      w_ = -delta * v;
      G_.compose_exp(q, w_, q1_);
      if (!lp_.constraint_grad(q1_, Bt_)) return false;
      rhs_.noalias() -= Bt_ * v;
      rhs_ /= 2 * delta;
    }
    lp_.inertial(v, tmp_);
    tmp_ -= f1_;
    tmp2_.noalias() = lp_.mass_inverse() * tmp_;
    rhs_.noalias() += B1_ * tmp2_;
    X_.noalias() = lp_.mass_inverse() * B1_.transpose();
    S_.noalias() = B1_ * X_;
    if (!schur_.compute(S_)) return false;
    schur_.solve(rhs_, lambda);
    return lambda.allFinite();
  }

 private:
  struct Cached {
    double t = 0.0;
    Vec y, f;
    Mat B;
    bool valid = false;
  };

  static double inf_norm(const ConstVecRef& v) { return v.lpNorm<Eigen::Infinity>(); }
  /// The same point: equal states, times equal up to the rounding of sums
  /// of steps (the Integrator sets t_start + i h, the step computed t + h; a
  /// composition sets from.t + h where its s substeps summed to it).  The
  /// state decides; t only guards against a time-dependent f at another time.
  bool same_time(double a, double b) const {
    const double scale = std::max({std::abs(a), std::abs(b), std::abs(h_prev_)});
    return std::abs(a - b) <= 64 * std::numeric_limits<double>::epsilon() * scale;
  }
  bool matches(const Cached& c, const Point& p) const { return same_time(c.t, p.t) && c.y == p.x; }

  /// f_n and B_n at `from`: from the last step's end or start, else called.
  bool load_start(const Point& from) {
    const Cached* c = nullptr;
    if (end_.valid && matches(end_, from)) c = &end_;
    else if (start_.valid && matches(start_, from)) c = &start_;
    if (c) {
      f0_ = c->f;
      if (m_ > 0) B0_ = c->B;
    } else {
      if (!lp_.force(from.t, from.x, f0_)) return false;
      if (m_ > 0 && !lp_.constraint_grad(from.x.head(nq_), B0_)) return false;
    }
    if (c != &start_) {
      start_.t = from.t;
      start_.y = from.x;
      start_.f = f0_;
      if (m_ > 0) start_.B = B0_;
      start_.valid = true;
    }
    return true;
  }

  /// (B) with f_{n+1} = f1_ fixed: (h/2) B M⁻¹ Bᵀ μ = B M⁻¹(b − h/2 f),
  /// v = M⁻¹(b − h/2 (f + Bᵀμ)).
  void solve_velocity_linear(double h, double t1) {
    tmp_ = b_ - (0.5 * h) * f1_;
    if (m_ > 0) {
      X_.noalias() = lp_.mass_inverse() * B1_.transpose();
      S_.noalias() = B1_ * X_;
      schur_.compute(S_);
      note_rank(t1);
      rhs_.noalias() = X_.transpose() * tmp_;  // B M⁻¹ (b − h/2 f), M symmetric
      schur_.solve(rhs_, mu_);
      mu_ *= 2.0 / h;
      tmp_.noalias() -= (0.5 * h) * (B1_.transpose() * mu_);
    }
    v1_.noalias() = lp_.mass_inverse() * tmp_;
  }

  /// (B) for f depending on v: Newton on (v, μ) with ∂f/∂v = K (differences,
  /// kept while the iteration contracts fast), from v = v1_ (the linear
  /// solution with the f at hand).  f_{n+1} = f(v_k) + K Δv at the last tiny
  /// correction.
  StepStatus solve_velocity_newton(double h, double t1) {
    Stats& st = lp_.stats();
    const Mat& M = lp_.mass();
    const double eps = std::numeric_limits<double>::epsilon();
    if (!have_K_) {
      y_.tail(n_) = v1_;
      if (!lp_.force(t1, y_, fk_)) return StepStatus::NonFinite;
      for (int j = 0; j < n_; ++j) {
        const double delta = HamiltonianProblem::fd_step(v1_(j));
        yp_ = y_;
        yp_(nq_ + j) += delta;
        if (!lp_.force(t1, yp_, tmp2_)) return StepStatus::NonFinite;
        K_.col(j) = (tmp2_ - fk_) / delta;
      }
      ++st.jacobian_evals;
      ++st.fd_jacobians;
      ++st.fd_field_jacobians;
      have_K_ = true;
    }
    Jv_ = M + (0.5 * h) * K_;
    luv_.compute(Jv_);
    ++st.lu_factorizations;
    if (m_ > 0) {
      X_.noalias() = luv_.solve(B1_.transpose());
      S_.noalias() = B1_ * X_;
      if (!schur_.compute(S_)) return StepStatus::NonFinite;
      note_rank(t1);
    }
    ++st.newton_solves;
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0;
    for (long it = 1;; ++it) {
      y_.tail(n_) = v1_;
      if (!lp_.force(t1, y_, fk_)) return StepStatus::NonFinite;
      r1_.noalias() = M * v1_;
      r1_ -= b_;
      r1_ += (0.5 * h) * fk_;
      if (m_ > 0) r1_.noalias() += (0.5 * h) * (B1_.transpose() * mu_);
      u_.noalias() = luv_.solve(r1_);
      if (m_ > 0) {
        // B Δv = −B v,  Jv Δv + h/2 Bᵀ Δμ = −r:  (h/2) B Jv⁻¹ Bᵀ Δμ = B v − B Jv⁻¹ r
        rhs_.noalias() = B1_ * v1_;
        rhs_.noalias() -= B1_ * u_;
        schur_.solve(rhs_, dlam_);
        dlam_ *= 2.0 / h;
        mu_ += dlam_;
        dv_ = -u_;
        dv_.noalias() -= (0.5 * h) * (X_ * dlam_);
      } else {
        dv_ = -u_;
      }
      v1_ += dv_;
      ++st.newton_iterations;
      const double nd = inf_norm(dv_);
      if (!std::isfinite(nd)) return StepStatus::NonFinite;
      if (it > 1) theta = nd / prev;
      const double rest = (it > 1 && theta < 1.0) ? theta / (1.0 - theta) * nd : nd;
      if (rest <= 4 * eps * std::max(1.0, inf_norm(v1_)) || (it > 1 && rest <= opts_.tol * 1e-3 * std::max(1.0, inf_norm(v1_)))) {
        f1_ = fk_;
        f1_.noalias() += K_ * dv_;
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

  void note_rank(double t) {
    cond_max_ = std::max(cond_max_, schur_.condition_estimate());
    if (!schur_.rank_deficient()) return;
    ++lp_.stats().rank_deficient;
    if (!rank_seen_) {
      rank_seen_ = true;
      rank_t_ = t;
    }
  }

  LieGroupProblem& lp_;
  const LieGroup& G_;
  const int nq_, n_, m_;
  NewtonOptions opts_;
  Eigen::PartialPivLU<Mat> lu_, luv_;
  MinNormSolver schur_;
  Cached start_, end_;
  bool have_prev_ = false;
  double h_prev_ = 0.0;
  bool velocity_dependent_ = false, probe_due_ = true, have_K_ = false;
  bool fresh_B_ = true;  ///< evaluate B at the first iterate of (A)
  // warm start (save_guess/load_guess): the loaded stage, and the guess of
  // the last step
  bool guess_loaded_ = false, g_chain_ = false, chain_guess_ = false;
  double g_h_ = 0.0;
  Vec g_delta_, g_eps_, g_lam_, delta_, eps_lam_, lam_chain_, pred_;
  // μ of the last step and ∂λ/∂h (the λ guess along a chain of steps)
  Vec mu_prev_, b_lam_;
  bool have_b_ = false;
  Mat XM_;  ///< M⁻¹ B_nᵀ
  int since_probe_ = 0;
  bool rank_seen_ = false;
  double rank_t_ = std::numeric_limits<double>::quiet_NaN();
  double cond_max_ = 1.0;
  Vec f0_, f1_, fk_, Om_, w_, wm_, MOm_, c_, r1_, u_, dOm_, b_, v1_, dv_, tmp_, tmp2_, q1_, y_, yp_;
  Vec lam_, mu_, dlam_, phi_, rhs_;
  Mat B0_, Bprev_, Bex_, tmpB_, Bt_, B1_, Tm_, Tp_, D_, J_, Jv_, K_, X_, S_;
};

}  // namespace odepkg::lie

#endif
