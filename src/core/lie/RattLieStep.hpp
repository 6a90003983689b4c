// RattLieStep.hpp — RATTLE on a Lie group (S. Hante's RATTLie; Störmer–Verlet
// on G without constraints), one step for either storage of B, M and the
// Schur complements: a linear-algebra policy (DenseLieAlgebra in RattLie.hpp,
// BlockSparseLieAlgebra in SparseRattLie.hpp) stores and solves them; this
// step holds what both share.  From the discrete Lagrangian
//   L_h = h/2 ΩᵀMΩ − h/2 (U(q_n) + U(q_{n+1})),  q_{n+1} = q_n ∘ exp(hΩ̃),
// and its discrete Legendre transforms (left-trivialised momenta Mv):
//   (A) T(−hΩ)^{-T} MΩ = M v_n − h/2 (f_n + B(q_n)ᵀ λ),   Φ(q_n ∘ exp(hΩ̃)) = 0,
//   (B) M v_{n+1} = T(hΩ)^{-T} MΩ − h/2 (f_{n+1} + B(q_{n+1})ᵀ μ),   B(q_{n+1}) v_{n+1} = 0,
// f_k = f(t_k, q_k, v_k).  For G = Rⁿ (T = I) this is classical RATTLE; with
// T(±w)^{-T} = I ± ½ ad(w)ᵀ + O(w²) it is consistent with M v̇ = ad(v)ᵀ M v − f − Bᵀλ.
//
// (A) is Newton on (Ω, λ): ∂/∂Ω [T(−hΩ)^{-T} MΩ] = J = T(−hΩ)^{-T} M − h D(−hΩ, MΩ)
// (D = ∂_w[T(w)^{-T} x], no user calls), ∂Φ/∂Ω = h B(q_{n+1}) T(hΩ) with
// B(q_{n+1}) extrapolated from the last steps; λ by the Schur complement
//   (h²/2) S Δλ = Φ − h Bt J⁻¹ r1,  S = Bt J⁻¹ B_nᵀ,  Bt = B(q_{n+1}) T(hΩ)
// (the policy's schur_step).  Each iteration calls Φ once.  (B) is linear
// in (v_{n+1}, μ) when f does not depend on v: one call of f and one of B
// per step, and f_{n+1}, B(q_{n+1}) start the next step.  Whether f depends
// on v is probed on the first step and re-checked every kVelocityRecheck
// steps by one call at the accepted state; a change switches to the
// policy's velocity-dependent solve.
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
//
// The policy `Algebra` provides: Matrix (B's type); ThreadScope; Algebra(lp,
// opts, RankLog&); kMinimumNormPositions; size(B); grad(q, B); mass_apply,
// mass_solve (M v, M⁻¹ v); extrapolate, max_abs, max_difference, row_norm
// (of B); begin_step(B_n, from_end, t) and end_step(); newton_matrix(h, w,
// MΩ); transport(x, out) (T(−hΩ)^{-T} x); solve_J(r, u) (J⁻¹ r);
// schur_step(it, h, t, Φ, u, Bex, B_n, ΔΩ, Δλ); momentum(w, MΩ, b)
// (T(w)^{-T} MΩ); begin_velocity(B₁, t); velocity_linear(h, t, b, f, B₁, v,
// μ); velocity_dependence_found(); solve_velocity_dependent(h, t, y, b, B₁,
// v, f, μ); multiplier_solve(B, rhs, λ).  Rank deficiency is reported to
// the RankLog.
#ifndef ODEPKG_LIE_RATTLIE_STEP_HPP
#define ODEPKG_LIE_RATTLIE_STEP_HPP

#include "../NewtonSolver.hpp"
#include "LieGroupProblem.hpp"
#include "LieStepper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg::lie {

/// The first rank-deficient multiplier system and the largest condition
/// estimate met (the policies' factorizations report here).
struct RankLog {
  bool seen = false;
  double t = std::numeric_limits<double>::quiet_NaN();
  double cond_max = 1.0;
  void note(double cond, bool deficient, double at, Stats& st) {
    cond_max = std::max(cond_max, cond);
    if (!deficient) return;
    ++st.rank_deficient;
    if (!seen) {
      seen = true;
      t = at;
    }
  }
};

template <class Algebra>
class RattLieStep : public LieStepper {
 public:
  using Matrix = typename Algebra::Matrix;
  static constexpr int kVelocityRecheck = 16;
  static constexpr double kRefreshB = 1e-3;
  /// The root checks' ratios (DampedMultiplierNewton's, flat RATTLE): a root
  /// whose curvature term exceeds kDoubtRatio |d| is solved again from
  /// λ = 0; one above kRefuseRatio |d| is refused.
  static constexpr double kDoubtRatio = 0.5;
  static constexpr double kRefuseRatio = 2.0;
  static constexpr double kSameBranch = 0.125;
  static constexpr long kColdIterations = 50;
  static constexpr int kMaxHalvings = 30;

  RattLieStep(LieGroupProblem& lp, NewtonOptions opts)
      : LieStepper(lp.embedded()),
        lp_(lp),
        G_(lp.group()),
        nq_(lp.nq()),
        n_(lp.n()),
        m_(lp.constraints()),
        opts_(opts),
        alg_(lp, opts, rank_) {
    const int n = n_, m = std::max(m_, 1), ns = nq_ + n_;
    for (Cached* c : {&start_, &end_}) {
      c->y.resize(ns);
      c->f.resize(n);
      alg_.size(c->B);
    }
    for (Matrix* B : {&B0_, &Bprev_, &Bex_, &tmpB_, &B1_, &Bt_, &Bm_}) alg_.size(*B);
    for (Vec* v : {&f0_, &f1_, &fk_, &Om_, &w_, &MOm_, &c_, &r1_, &u_, &dOm_, &b_, &v1_, &tmp_, &tmp2_, &pred_,
                   &Om_fast_, &Om_base_, &dfree_})
      v->resize(n);
    for (Vec* v : {&lam_fast_, &lam_base_, &xm_}) v->resize(m);
    lam_checked_ = Vec::Zero(m);
    for (Vec* v : {&phi_, &rhs_, &dlam_, &rows_}) v->resize(m);
    for (Vec* v : {&lam_, &mu_, &mu_prev_, &b_lam_, &lam_chain_}) *v = Vec::Zero(m);
    for (Vec* v : {&g_delta_, &delta_}) *v = Vec::Zero(n);
    for (Vec* v : {&g_eps_, &g_lam_, &eps_lam_}) *v = Vec::Zero(m_);
    for (Vec* v : {&q1_, &qs_}) v->resize(nq_);
    y_.resize(ns);
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
  bool rank_deficiency_seen() const override { return rank_.seen; }
  double rank_deficiency_t() const override { return rank_.t; }
  double condition_estimate() const override { return rank_.cond_max; }
  bool minimum_norm_position_multipliers() const override { return Algebra::kMinimumNormPositions; }

  StepStatus step(Point& from, double h, Point& to) override {
    const typename Algebra::ThreadScope scope;
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
    const Cached* src = nullptr;
    if (!load_start(from, src)) return StepStatus::NonFinite;
    if (m_ > 0 && !alg_.begin_step(B0_, src == &end_, t0)) return StepStatus::NonFinite;

    // ---- (A): Ω and λ ------------------------------------------------------
    alg_.mass_apply(v0, c_);
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
        alg_.extrapolate(B0_, Bprev_, h / h_prev_, Bex_);
        lam_ = mu_prev_;
        if (have_b_) lam_ += (h + h_prev_) * b_lam_;
        lam_chain_ = lam_;
        if (warm && g_chain_) lam_.head(m_) += r2 * g_eps_;
      } else {
        Bex_ = B0_;
        lam_.setZero();
        if (warm) lam_.head(m_) = g_lam_;  // this stage's λ one step ago
      }
    }
    // P(λ) = v_n + h/2 M⁻¹(ad(v_n)ᵀMv_n − f_n − B_nᵀλ), O(h²) from Ω
    lp_.inertial(v0, tmp_);
    tmp_ -= f0_;
    alg_.mass_solve(tmp_, pred_);
    pred_ = v0 + (0.5 * h) * pred_;
    Om_ = pred_;
    if (m_ > 0) {
      constraint_velocity(B0_, lam_);
      Om_ -= (0.5 * h) * tmp2_;
    }
    if (warm) Om_ += r2 * g_delta_;

    ++st.newton_solves;
    const double eps = std::numeric_limits<double>::epsilon();
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0, phi_norm = 0.0, r1_floor = 0.0;
    bool ok = false;
    long it = 0;
    for (;;) {
      w_ = h * Om_;
      G_.compose_exp(q0, w_, q1_);
      alg_.mass_apply(Om_, MOm_);
      alg_.newton_matrix(h, w_, MOm_);
      alg_.transport(MOm_, r1_);
      // the round-off of r1: its terms' sizes times eps
      r1_floor = eps * (inf_norm(r1_) + inf_norm(c_));
      r1_ -= c_;
      if (m_ > 0) {
        tmp2_.noalias() = B0_.transpose() * lam_;
        r1_floor += eps * 0.5 * std::abs(h) * inf_norm(tmp2_);
        r1_.noalias() += (0.5 * h) * tmp2_;
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
          if (!alg_.grad(q1_, Bex_)) return StepStatus::NonFinite;
          if (continues) fresh_B_ = !(Algebra::max_difference(tmpB_, Bex_) <= 1e-4 * Algebra::max_abs(B0_));
        } else if (it > 0 && std::abs(h) * prev > kRefreshB) {
          // The last correction moved q_{n+1} by |h ΔΩ| > kRefreshB: B where
          // it was taken is off by about that much and Newton would contract
          // only by that factor per iteration (long substeps of a composition
          // from a coarse guess: 13 iterations, 4 with it).
          if (!alg_.grad(q1_, Bex_)) return StepStatus::NonFinite;
        }
      }
      if (!r1_.allFinite() || !q1_.allFinite()) return StepStatus::NonFinite;
      alg_.solve_J(r1_, u_);
      if (m_ > 0) {
        if (!alg_.schur_step(it, h, t0, phi_, u_, Bex_, B0_, dOm_, dlam_)) return StepStatus::NonFinite;
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
        // stagnation at round-off counts as converged: a small correction,
        // or both residuals of the iterate at their round-off (a long chain
        // amplifies the rounding of Φ, eps |q| at each joint, into
        // corrections of Ω of N eps |q| / h: measured 4e-8 for N = 1000,
        // |q| = 10³, h = 2e-3, with |Φ| = 3e-13 and r1 at round-off)
        const double Bscale = m_ > 0 ? std::max(1.0, Algebra::row_norm(B0_, rows_)) : 1.0;
        ok = nd <= 64 * eps * scale || (m_ > 0 && std::abs(h) * nd <= 64 * eps * qscale) ||
             (m_ > 0 && theta >= 1.0 && nd <= 1e-6 * scale && phi_norm <= 16 * eps * qscale * Bscale &&
              inf_norm(r1_) <= 64 * r1_floor);
        break;
      }
      prev = nd;
    }
    st.newton_max_iterations = std::max(st.newton_max_iterations, it);
    if (m_ > 0 && it > 3) fresh_B_ = true;
    if (m_ == 0 && !ok) {
      have_prev_ = false;
      return StepStatus::NewtonDiverged;
    }
    double gb = 0.0;
    if (ok) {
      w_ = h * Om_;
      G_.compose_exp(q0, w_, q1_);
      gb = phi_norm * std::min(1.0, theta);
    }
    if (m_ > 0) {
      // The fast iteration (extrapolated B, warm start) can fail a solvable
      // step or reach another root of (A) (the sphere at h = 0.25: a root
      // across it, taken in silence): (A) is then solved again from λ = 0
      // with Newton's exact Jacobian and a line search, and the root nearer
      // the unconstrained step is kept; a root that stays far is refused.
      const bool fast = ok && holds(gb);
      double curv_fast = 0.0;
      const bool doubt = fast && !near_last_root(h, continues) && distant(q0, h, kDoubtRatio, curv_fast);
      if (!fast || doubt) {
        ++st.newton_retries;
        if (fast) {
          Om_fast_ = Om_;
          lam_fast_ = lam_;
        }
        double gb_cold = 0.0, curv_cold = 0.0;
        const bool cold = cold_positions(q0, h, t0, gb_cold) && holds(gb_cold);
        if (cold) distant(q0, h, kDoubtRatio, curv_cold);
        if (fast && !(cold && curv_cold < curv_fast)) {
          Om_ = Om_fast_;  // the fast root is the nearer one
          lam_ = lam_fast_;
          w_ = h * Om_;
          G_.compose_exp(q0, w_, q1_);
        } else if (cold) {
          if (fast) ++st.distant_roots;  // the fast root was another, farther one
          gb = gb_cold;
        } else {
          have_prev_ = false;
          return ok ? StepStatus::ConstraintsViolated : StepStatus::NewtonDiverged;
        }
        double curv = 0.0;
        if (distant(q0, h, kRefuseRatio, curv)) {
          ++st.distant_roots;
          have_prev_ = false;
          return StepStatus::DistantRoot;
        }
      }
      lam_checked_ = lam_;
    }
    // δ and ε: a composition's warm start of this stage next step
    delta_ = Om_ - pred_;
    if (m_ > 0) {
      constraint_velocity(B0_, lam_);
      delta_ += (0.5 * h) * tmp2_;
      if (chain_guess_) eps_lam_ = lam_.head(m_) - lam_chain_.head(m_);
      const double floor = 4 * eps * std::max(1.0, Algebra::row_norm(B0_, rows_));
      st.max_constraint_residual = std::max(st.max_constraint_residual, std::max(gb, floor));
    }

    // ---- (B): v_{n+1} and μ ------------------------------------------------
    alg_.mass_apply(Om_, MOm_);
    alg_.momentum(w_, MOm_, b_);  // b = T(hΩ)^{-T} M Ω
    if (m_ > 0 && (!alg_.grad(q1_, B1_) || !alg_.begin_velocity(B1_, t1))) return StepStatus::NonFinite;
    y_.head(nq_) = q1_;
    if (!velocity_dependent_) {
      // v* = M⁻¹(b − h/2 f_n) ≈ v_{n+1}: f does not depend on it
      tmp_ = b_ - (0.5 * h) * f0_;
      alg_.mass_solve(tmp_, v1_);
      y_.tail(n_) = v1_;
      if (!lp_.force(t1, y_, f1_)) return StepStatus::NonFinite;
      alg_.velocity_linear(h, t1, b_, f1_, B1_, v1_, mu_);
      if (probe_due_ || ++since_probe_ >= kVelocityRecheck) {
        since_probe_ = 0;
        probe_due_ = false;
        y_.tail(n_) = v1_;
        if (!lp_.force(t1, y_, fk_)) return StepStatus::NonFinite;
        if (fk_ != f1_) {
          velocity_dependent_ = true;
          alg_.velocity_dependence_found();
        }
      }
    }
    if (velocity_dependent_) {
      const StepStatus s = alg_.solve_velocity_dependent(h, t1, y_, b_, B1_, v1_, f1_, mu_);
      if (s != StepStatus::Success) {
        have_prev_ = false;
        return s;
      }
    }
    if (m_ > 0) {
      rhs_.noalias() = B1_ * v1_;
      const double hfloor = 4 * eps * std::max(1.0, Algebra::row_norm(B1_, rows_) * inf_norm(v1_));
      st.max_hidden_residual = std::max(st.max_hidden_residual, std::max(inf_norm(rhs_), hfloor));
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
    end_.valid = true;
    if (m_ > 0) {
      end_.B.swap(B1_);  // B1_ is not needed after the step
      alg_.end_step();   // the velocity system's factorization is at end_.B
      Bprev_.swap(B0_);  // B_n for the next step's extrapolation
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
    const typename Algebra::ThreadScope scope;
    const auto q = y.head(nq_);
    const auto v = y.tail(n_);
    const Cached* c = nullptr;
    if (end_.valid && same_time(end_.t, t) && end_.y == y) c = &end_;
    else if (start_.valid && same_time(start_.t, t) && start_.y == y) c = &start_;
    if (c) {
      fk_ = c->f;
      Bm_ = c->B;
    } else {
      if (!lp_.force(t, y, fk_) || !alg_.grad(q, Bm_)) return false;
    }
    const double vn = inf_norm(v);
    rhs_.setZero();
    if (vn > 0.0) {
      const double delta = std::cbrt(std::numeric_limits<double>::epsilon()) / vn;
      w_ = delta * v;
      G_.compose_exp(q, w_, qs_);
      if (!alg_.grad(qs_, Bt_)) return false;
      rhs_.noalias() = Bt_ * v;
      w_ = -delta * v;
      G_.compose_exp(q, w_, qs_);
      if (!alg_.grad(qs_, Bt_)) return false;
      rhs_.noalias() -= Bt_ * v;
      rhs_ /= 2 * delta;
    }
    lp_.inertial(v, tmp_);
    tmp_ -= fk_;
    alg_.mass_solve(tmp_, tmp2_);
    rhs_.noalias() += Bm_ * tmp2_;
    return alg_.multiplier_solve(Bm_, rhs_, lambda) && lambda.allFinite();
  }

 protected:
  const Algebra& algebra() const { return alg_; }

 private:
  struct Cached {
    double t = 0.0;
    Vec y, f;
    Matrix B;
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
  bool load_start(const Point& from, const Cached*& c) {
    c = nullptr;
    if (end_.valid && matches(end_, from)) c = &end_;
    else if (start_.valid && matches(start_, from)) c = &start_;
    if (c) {
      f0_ = c->f;
      if (m_ > 0) B0_ = c->B;
    } else {
      if (!lp_.force(from.t, from.x, f0_)) return false;
      if (m_ > 0 && !alg_.grad(from.x.head(nq_), B0_)) return false;
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

  /// tmp2_ = M⁻¹ Bᵀ λ (tmp_ overwritten).
  void constraint_velocity(const Matrix& B, const Vec& lambda) {
    tmp_.noalias() = B.transpose() * lambda;
    alg_.mass_solve(tmp_, tmp2_);
  }

  /// Φ(q_{n+1}) within the step's tolerance (the Newton estimate gb of |Φ|).
  bool holds(double gb) const { return gb <= std::sqrt(opts_.tol) * std::max(1.0, inf_norm(q1_)); }

  /// The cheap check of ordinary steps: the step continues a chain and its λ
  /// is within kSameBranch (relative, largest entry) of the last step's,
  /// whose root was checked: the other roots of (A) are a displacement of
  /// about the manifold's diameter away (Hairer, Lubich, Wanner, GNI
  /// VII.1.4), with multipliers of that size divided by h², while λ(h)
  /// differs from the continuous multiplier by O(h) (substeps of a
  /// composition of either sign included).
  bool near_last_root(double, bool continues) const {
    if (!continues) return false;
    const double dl = (lam_.head(m_) - lam_checked_.head(m_)).template lpNorm<Eigen::Infinity>();
    return dl <= kSameBranch * lam_checked_.head(m_).template lpNorm<Eigen::Infinity>();  // false for NaN
  }

  /// The root (Ω, λ) of (A) is on another branch than the step's: RATTLE's
  /// root tends to the unconstrained step as h → 0 (GNI VII.1.4).  With the
  /// displacement hΩ in the algebra and the free one d = hΩ + (h²/2) M⁻¹B_nᵀλ,
  /// the multipliers remove d's normal part (linear in d) plus a curvature
  /// term, the normal part of hΩ itself, |P hΩ|_M with P the M-orthogonal
  /// projector on M⁻¹B_nᵀ: |P hΩ|²_M = (B_n hΩ)ᵀ (B_n M⁻¹ B_nᵀ)⁺ (B_n hΩ).  Of
  /// about |d|²/(2R) on a manifold of curvature radius R, of about its
  /// diameter for a root across it.  Far: above `ratio` |d|_M (plus
  /// sqrt(eps) of the scale); |P hΩ|_M <= |hΩ|_M spares the solve when hΩ
  /// itself is that small.  `curv` gets the term (or its bound).
  bool distant(const ConstVecRef& q0, double h, double ratio, double& curv) {
    w_ = h * Om_;
    constraint_velocity(B0_, lam_);
    dfree_ = w_ + (0.5 * h * h) * tmp2_;
    alg_.mass_apply(dfree_, tmp_);
    const double free = std::sqrt(std::max(0.0, dfree_.dot(tmp_)));
    alg_.mass_apply(w_, tmp_);
    curv = std::sqrt(std::max(0.0, w_.dot(tmp_)));
    const double slack = std::sqrt(std::numeric_limits<double>::epsilon()) * std::max(free, std::max(1.0, inf_norm(q0)));
    if (curv <= ratio * free + slack) return false;
    rhs_.noalias() = B0_ * w_;
    if (!alg_.multiplier_solve(B0_, rhs_, xm_.head(m_))) return true;
    curv = std::sqrt(std::max(0.0, rhs_.head(m_).dot(xm_.head(m_))));
    return !(curv <= ratio * free + slack);  // true for NaN
  }

  /// (A) from the start, as a last resort: λ⁰ = 0, Ω⁰ = P(0) (the
  /// unconstrained predictor), B(q_{n+1}) at every iterate (Newton's exact
  /// Jacobian), and a backtracking line search on
  /// ψ = |Φ|² + (h |B_n|)² |M⁻¹ r1|² (Φ ≈ h B ΔΩ and M⁻¹ r1 ≈ ΔΩ: one unit;
  /// Armijo, Dennis and Schnabel, Sect. 6.3), so that it neither overshoots
  /// to another root nor diverges.  Converged when Φ and r1 are at the
  /// round-off of their evaluation, or a full step's correction is;
  /// stagnation within 64 times that floor counts as converged.  gb gets |Φ|.
  bool cold_positions(const ConstVecRef& q0, double h, double t0, double& gb) {
    Stats& st = lp_.stats();
    const double eps = std::numeric_limits<double>::epsilon();
    const double bs = std::max(1.0, Algebra::row_norm(B0_, rows_));
    lam_.setZero();
    Om_ = pred_;
    double psi = 0.0, trial = 0.0;
    if (!evaluate_positions(q0, h, bs, psi)) return false;
    const long max_it = std::max<long>(opts_.max_iterations, kColdIterations);
    for (long it = 0; it < max_it; ++it) {
      const double pfloor = 4 * eps * bs * std::max(1.0, inf_norm(q1_));
      if (inf_norm(phi_) <= pfloor && inf_norm(r1_) <= 4 * r1_floor_) break;
      if (!alg_.grad(q1_, Bex_)) return false;
      alg_.solve_J(r1_, u_);
      if (!alg_.schur_step(0, h, t0, phi_, u_, Bex_, B0_, dOm_, dlam_)) return false;
      ++st.newton_iterations;
      Om_base_ = Om_;
      lam_base_ = lam_;
      double alpha = 1.0;
      bool accepted = false;
      for (int k = 0; k <= kMaxHalvings && !accepted; ++k) {
        if (k > 0) alpha *= 0.5;
        Om_ = Om_base_ + alpha * dOm_;
        lam_ = lam_base_ + alpha * dlam_;
        accepted = evaluate_positions(q0, h, bs, trial) && trial <= (1.0 - 1e-4 * alpha) * psi;
      }
      if (!accepted) {  // no decrease: at the round-off level this is convergence
        Om_ = Om_base_;
        lam_ = lam_base_;
        if (!evaluate_positions(q0, h, bs, psi)) return false;
        gb = inf_norm(phi_);
        return gb <= 64 * pfloor && inf_norm(r1_) <= 256 * r1_floor_;
      }
      psi = trial;
      const double nd = inf_norm(dOm_);
      if (alpha == 1.0 && (nd <= 4 * eps * std::max(1.0, inf_norm(Om_)) ||
                           std::abs(h) * nd <= 4 * eps * std::max(1.0, inf_norm(q1_))))
        break;
      if (it + 1 == max_it) return false;
    }
    gb = inf_norm(phi_);
    return true;
  }

  /// At (Ω, λ): q_{n+1}, J (newton_matrix), r1 and its round-off r1_floor_,
  /// Φ, and ψ; false when not finite.
  bool evaluate_positions(const ConstVecRef& q0, double h, double bs, double& psi) {
    const double eps = std::numeric_limits<double>::epsilon();
    w_ = h * Om_;
    G_.compose_exp(q0, w_, q1_);
    alg_.mass_apply(Om_, MOm_);
    alg_.newton_matrix(h, w_, MOm_);
    alg_.transport(MOm_, r1_);
    r1_floor_ = eps * (inf_norm(r1_) + inf_norm(c_));
    r1_ -= c_;
    tmp2_.noalias() = B0_.transpose() * lam_;
    r1_floor_ += eps * 0.5 * std::abs(h) * inf_norm(tmp2_);
    r1_.noalias() += (0.5 * h) * tmp2_;
    if (!lp_.constraint(q1_, phi_)) return false;
    if (!r1_.allFinite() || !q1_.allFinite() || !phi_.allFinite()) return false;
    alg_.mass_solve(r1_, tmp_);
    psi = phi_.squaredNorm() + (h * bs) * (h * bs) * tmp_.squaredNorm();
    return std::isfinite(psi);
  }

  LieGroupProblem& lp_;
  const LieGroup& G_;
  const int nq_, n_, m_;
  NewtonOptions opts_;
  RankLog rank_;  // before alg_, which holds a reference to it
  Algebra alg_;
  Cached start_, end_;
  bool have_prev_ = false;
  double h_prev_ = 0.0;
  bool velocity_dependent_ = false, probe_due_ = true;
  int since_probe_ = 0;
  bool fresh_B_ = true;  ///< evaluate B at the first iterate of (A)
  // warm start (save_guess/load_guess): the loaded stage, and the guess of
  // the last step
  bool guess_loaded_ = false, g_chain_ = false, chain_guess_ = false;
  double g_h_ = 0.0;
  Vec g_delta_, g_eps_, g_lam_, delta_, eps_lam_, lam_chain_, pred_;
  // μ of the last step and ∂λ/∂h (the λ guess along a chain of steps)
  Vec mu_prev_, b_lam_;
  bool have_b_ = false;
  Matrix B0_, Bprev_, Bex_, tmpB_, B1_, Bt_, Bm_;
  Vec f0_, f1_, fk_, Om_, w_, MOm_, c_, r1_, u_, dOm_, b_, v1_, tmp_, tmp2_, q1_, qs_, y_;
  Vec lam_, mu_, dlam_, phi_, rhs_, rows_;
  // the retry of (A) and the root check
  Vec Om_fast_, lam_fast_, Om_base_, lam_base_, lam_checked_, dfree_, xm_;
  double r1_floor_ = 0.0;
};

}  // namespace odepkg::lie

#endif
