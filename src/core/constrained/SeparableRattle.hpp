// SeparableRattle.hpp — RATTLE/SHAKE steps for separable H = T(p) + V(q)
// (Rattle's `separable` paths): Newton on the position multipliers only,
// then the velocity multipliers, with a fast path for quadratic T.
//
// Separable H = T(p) + V(q): Newton on L only, r(L) = g(q_1(L)) with
//   p_{1/2} = p_0 + h/2 F_0 - G_0^T L,  q_1 = q_0 + h T_p(p_{1/2}),  F = -grad V,
// Jacobian -h G_1 T_pp G_0^T (G_1 extrapolated from the previous steps, T_pp
// cached), then M from G_1 T_p(p_1) = 0, p_1 = p_{1/2} + h/2 F_1 - G_1^T M
// (a linear m x m system for quadratic T, checked by one evaluation).
//
// Separable H with quadratic T (AffineVelocity learned and checked): T_p is
// A p + b, so q_1(L) = q_0 + h (A pbase + b) - h A G_0^T L is affine in L and
// Newton on r(L) = g(q_1(L)) calls g only; one call of f at [q_1; p_{1/2}]
// then gives the force F_1 and checks the model, and M solves the linear
// system G_1 A G_1^T M = G_1 (A p* + b) exactly: f, G once and g about
// 2-3 times per step.  Any doubt (model mismatch, slow Newton) falls back to
// the path above for that step.
//
// Separability, the claim of "Explicit", is probed before the first step
// (check_claims) and when the velocity model's check fails
// (SeparabilityProbe, 2 calls each); a coupling is an odepkg:notSeparable
// error.
#ifndef ODEPKG_CONSTRAINED_SEPARABLE_RATTLE_HPP
#define ODEPKG_CONSTRAINED_SEPARABLE_RATTLE_HPP

#include "SameBits.hpp"
#include "unconstrained/AffineVelocity.hpp"
#include "ConstraintProjection.hpp"
#include "unconstrained/SeparabilityProbe.hpp"
#include "Stepper.hpp"
#include "constrained/RattleAcceptance.hpp"
#include "constrained/RattleState.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class SeparableRattle : private RattleAcceptance {
 public:
  explicit SeparableRattle(RattleState& shared)
      : shared_(shared),
        problem_(shared.problem),
        opts_(shared.opts),
        d_(shared.d),
        m_(shared.m),
        shake_(shared.shake),
        velocity_(shared.d),
        separability_(shared.d),
        small_(std::max(shared.m, 1), RattleState::rank_tolerance) {
    const int d = d_, m = m_;
    work_.resize(2 * d);
    x2_.resize(2 * d);
    G0_.resize(m, d);
    G1_.resize(m, d);
    gv_.resize(m);
    Tpp_.resize(d, d);
    B0_.resize(d, m);
    TG1_.resize(d, m);
    G1e_.resize(m, d);
    last_G0_.resize(m, d);
    S_.resize(m, m);
    A_.resize(m, m);
    L_ = Vec::Zero(m);
    Lprev_ = Vec::Zero(m);
    Lprev2_ = Vec::Zero(m);
    Lprev3_ = Vec::Zero(m);
    M_ = Vec::Zero(m);
    delta_.resize(m);
    hid_.resize(m);
    ph_.resize(d);
    pbase_.resize(d);
    q1_.resize(d);
    q1pred_.resize(d);
    Tp_.resize(d);
    F1_.resize(d);
    pstar_.resize(d);
    p1_.resize(d);
    dp_.resize(d);
    vtmp_.resize(d);
    dq_prev_ = Vec::Zero(d);
  }

  /// The probe of separability at (t, x), fx = f(t, x): 2 calls of f.
  void check_claims(double t, const ConstVecRef& x, const ConstVecRef& fx) {
    const SeparabilityProbe::Finding r = separability_.probe(problem_, t, x, fx);
    if (!r.separable) SeparabilityProbe::refuse(r);
  }

  /// Drop the guesses and the cached T_pp.
  void reset() {
    have_guess_ = false;
    have_last_ = false;
    have_tpp_ = false;
  }

  /// One step: the quadratic-T path when its model is (or becomes) active
  /// and holds, else the general separable one.
  StepStatus step(Point& from, double h, Point& to) {
    if (velocity_.prepare(problem_, from.t, from.x)) {
      StepStatus s;
      if (step_affine(from, h, to, s)) return s;
    }
    return step_separable(from, h, to);
  }

 private:
  StepStatus step_separable(Point& from, double h, Point& to) {
    const int d = d_;
    Stats& st = problem_.stats();
    if (!shared_.ensure_force(from, work_)) return StepStatus::NonFinite;
    const auto q0 = from.x.head(d);
    const double t1 = from.t + h;
    if (!shared_.grads.grad_at(q0, G0_)) return StepStatus::NonFinite;
    // G(q_1) ~ G_0 + h/h_last (G_0 - G_{-1}) when this step continues the last.
    const bool extrap = have_last_ && same_bits(shared_.last_q1, q0);
    const double s = have_guess_ ? h / shared_.h_prev : 0.0;
    pbase_ = from.x.tail(d) + (0.5 * h) * from.force;
    ++st.newton_solves;

    // 1. Position multipliers: r(L) = g(q_0 + h T_p(pbase - G_0^T L)) = 0.
    bool ok = false;
    double theta = 0.0;
    long it = 0;
    for (int attempt = 0; attempt < 2 && !ok; ++attempt) {
      // fresh: both T_pp and G(q_1) evaluated for this very step
      const bool fresh = attempt == 1 || (!have_tpp_ && !extrap);
      if (attempt == 1 || !have_tpp_) {
        if (!problem_.field_jacobian_block(from.t, from.x, 0, 1, Tpp_)) return StepStatus::NonFinite;
        have_tpp_ = true;
      }
      B0_.noalias() = Tpp_ * G0_.transpose();  // -dq_1/dL / h
      const double weight = roundoff_weight(h, Tpp_.cwiseAbs().rowwise().sum().maxCoeff(), q0,
                                            from.x.tail(d_), opts_.tol);
      bool have_S = false;
      if (attempt == 0 && extrap) {
        G1e_ = G0_ + (h / last_h_) * (G0_ - last_G0_);
        if (!factor_S(from.t)) return StepStatus::NonFinite;
        have_S = true;
      }
      guess_L(s, h, extrap);
      ph_ = pbase_;
      ph_.noalias() -= G0_.transpose() * L_;
      q1pred_ = q0 + s * dq_prev_;
      double prev = std::numeric_limits<double>::infinity();
      it = 0;
      for (;;) {
        // f at [predicted q_1; p_{1/2}]: q-part T_p(p_{1/2}), p-part the force
        // at the prediction (exact q_1 once the corrections are negligible).
        x2_.head(d) = q1pred_;
        x2_.tail(d) = ph_;
        if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
        Tp_ = work_.head(d);
        q1_ = q0 + h * Tp_;
        if (!problem_.constraint(q1_, gv_)) return StepStatus::NonFinite;
        if (!have_S) {
          if (!problem_.constraint_grad(q1_, G1e_)) return StepStatus::NonFinite;
          if (!factor_S(from.t)) return StepStatus::NonFinite;
          have_S = true;
        }
        small_.solve(gv_, delta_);
        delta_ /= h;  // L_new = L + (h G_1 T_pp G_0^T)^+ g
        dp_.noalias() = G0_.transpose() * delta_;
        const double nd = weight * inf_norm(dp_) / std::max(1.0, inf_norm(ph_));
        if (!std::isfinite(nd)) break;
        if (nd <= opts_.tol) {
          // Accept, with the last (tiny) correction applied linearly — exact
          // for quadratic T, O(delta^2) otherwise; the force F_1 below then
          // comes from a point O(h delta) away, well below round-off in p_1.
          L_ += delta_;
          ph_ -= dp_;
          Tp_.noalias() -= Tpp_ * dp_;
          q1_.noalias() -= h * (B0_ * delta_);
          q1pred_.noalias() -= h * (B0_ * delta_);
          ok = true;
          break;
        }
        if (it > 0) theta = nd / prev;
        if ((it > 0 && theta >= 1.0) || it >= opts_.max_iterations) break;
        prev = nd;
        L_ += delta_;
        ph_ -= dp_;
        q1pred_ = q1_;
        q1pred_.noalias() -= h * (B0_ * delta_);
        ++it;
        ++st.newton_iterations;
      }
      shared_.finish(it);
      if (!ok && fresh) break;  // a fresh Jacobian did not help either
    }
    if (!ok) {
      have_tpp_ = have_last_ = have_guess_ = false;
      return StepStatus::NewtonDiverged;
    }
    if (it > 1 && theta > opts_.refresh_rate) have_tpp_ = false;  // T_pp looks stale
    if (constraints_violated(inf_norm(gv_), q1_, opts_.tol)) return StepStatus::ConstraintsViolated;
    record_residual(st.max_constraint_residual, inf_norm(gv_), G1e_, inf_norm(q1_));

    // 2. Force at q_1 (reused from the last evaluation if it was at q_1).
    if ((q1_ - q1pred_).lpNorm<Eigen::Infinity>() <=
        4 * std::numeric_limits<double>::epsilon() * std::max(1.0, inf_norm(q1_))) {
      F1_ = work_.tail(d);
    } else {
      x2_.head(d) = q1_;
      x2_.tail(d) = ph_;
      if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
      F1_ = work_.tail(d);
    }
    if (!problem_.constraint_grad(q1_, G1_)) return StepStatus::NonFinite;
    pstar_ = ph_ + (0.5 * h) * F1_;

    // 3. Velocity multipliers: G_1 T_p(pstar - G_1^T M) = 0.
    if (shake_) {
      // SHAKE leaves G_1 T_p(p_1) = O(h): measured for Stats (one call of f
      // at the returned point; its force is F_1, the force depending on q only)
      p1_ = pstar_;
      x2_.head(d) = q1_;
      x2_.tail(d) = p1_;
      if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
      hid_.noalias() = G1_ * work_.head(d);
      record_residual(st.max_hidden_residual, inf_norm(hid_), G1_, inf_norm(work_.head(d)));
      to.force = F1_;
    } else {
      TG1_.noalias() = Tpp_ * G1_.transpose();
      A_.noalias() = G1_ * TG1_;
      if (!small_.compute(A_)) return StepStatus::NonFinite;
      shared_.note_rank(small_, from.t);
      // predictor T_p(pstar) ~ T_p(p_{1/2}) + h/2 T_pp F_1 (exact for quadratic T)
      vtmp_ = Tp_;
      vtmp_.noalias() += (0.5 * h) * (Tpp_ * F1_);
      hid_.noalias() = G1_ * vtmp_;
      small_.solve(hid_, M_);
      double prev = std::numeric_limits<double>::infinity();
      long it2 = 0;
      for (;;) {
        p1_ = pstar_;
        p1_.noalias() -= G1_.transpose() * M_;
        x2_.head(d) = q1_;
        x2_.tail(d) = p1_;
        if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
        hid_.noalias() = G1_ * work_.head(d);
        small_.solve(hid_, delta_);
        dp_.noalias() = G1_.transpose() * delta_;
        const double nd = inf_norm(dp_) / std::max(1.0, inf_norm(p1_));
        if (!std::isfinite(nd)) return StepStatus::NewtonDiverged;
        if (nd <= opts_.tol) break;
        if ((it2 > 0 && nd >= prev) || it2 >= opts_.max_iterations) {
          have_tpp_ = false;
          return StepStatus::NewtonDiverged;
        }
        prev = nd;
        M_ += delta_;
        ++it2;
        ++st.newton_iterations;
      }
      // with a differenced G, what G H_p may be off by is added
      record_residual(st.max_hidden_residual, inf_norm(hid_) + problem_.constraint_grad_error(work_.head(d)), G1_,
                      inf_norm(work_.head(d)));
      to.force = work_.tail(d);  // exactly at q_1
    }
    to.has_force = true;
    to.t = t1;
    to.x.head(d) = q1_;
    to.x.tail(d) = p1_;
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    remember_step(q0, h);
    return StepStatus::Success;
  }

  /// Guesses and caches for the next separable step, after an accepted one
  /// from q0 of size h (q1_, G1_, G0_, L_ belong to it).
  void remember_step(const ConstVecRef& q0, double h) {
    shared_.grads.store(q1_, G1_);
    const bool cont = have_last_ && same_bits(shared_.last_q1, q0) &&
                      same_step(h, shared_.h_prev);
    nL_ = cont ? std::min(nL_ + 1, 3) : 1;
    Lprev3_ = Lprev2_;
    Lprev2_ = Lprev_;
    shared_.last_q1 = q1_;
    last_G0_ = G0_;
    last_h_ = h;
    have_last_ = true;
    Lprev_ = L_;
    dq_prev_ = q1_ - q0;
    shared_.h_prev = h;
    have_guess_ = true;
  }

  /// Guess of the position multipliers L = h/2 lambda: along equal steps
  /// that continue each other the extrapolation of the last three (O(h^3)),
  /// else the last one scaled by s = h/h_prev.
  void guess_L(double s, double h, bool extrap) {
    const bool chain = extrap && have_guess_ && same_step(h, shared_.h_prev);
    if (chain && nL_ >= 3)
      L_ = 3.0 * (Lprev_ - Lprev2_) + Lprev3_;
    else if (chain && nL_ >= 2)
      L_ = 2.0 * Lprev_ - Lprev2_;
    else
      L_ = s * Lprev_;
  }

  /// The separable step for quadratic T (header comment).  Returns false,
  /// with nothing of the step's caches changed, when the caller must take
  /// the general separable path instead; else `status` is the step's.
  bool step_affine(Point& from, double h, Point& to, StepStatus& status) {
    const int d = d_;
    Stats& st = problem_.stats();
    status = StepStatus::NonFinite;
    if (!shared_.ensure_force(from, work_)) return true;
    const auto q0 = from.x.head(d);
    const double t1 = from.t + h;
    if (!shared_.grads.grad_at(q0, G0_)) return true;
    const bool extrap = have_last_ && same_bits(shared_.last_q1, q0);
    const double s = have_guess_ ? h / shared_.h_prev : 0.0;
    pbase_ = from.x.tail(d) + (0.5 * h) * from.force;
    vtmp_ = q0 + h * velocity_.predict(pbase_);  // q_1 at L = 0
    velocity_.apply(G0_.transpose(), B0_);
    const double weight =
        roundoff_weight(h, velocity_.matrix_norm(), q0, from.x.tail(d), opts_.tol);
    // 1. Position multipliers: g(q_1(L)) = 0, q_1(L) = vtmp - h B0 L.
    guess_L(s, h, extrap);
    bool have_S = false;
    if (extrap) {
      G1e_ = G0_ + (h / last_h_) * (G0_ - last_G0_);
      if (!factor_S(from.t)) return true;
      have_S = true;
    }
    long it = 0;
    double prev = std::numeric_limits<double>::infinity(), g_scale = 1.0;
    bool ok = false;
    for (;;) {
      q1_ = vtmp_;
      q1_.noalias() -= h * (B0_ * L_);
      if (!problem_.constraint(q1_, gv_)) return true;
      if (!have_S) {
        if (!problem_.constraint_grad(q1_, G1e_)) return true;
        if (!factor_S(from.t)) return true;
        have_S = true;
      }
      small_.solve(gv_, delta_);
      delta_ /= h;
      dp_.noalias() = G0_.transpose() * delta_;
      ph_ = pbase_;
      ph_.noalias() -= G0_.transpose() * L_;
      const double nd = weight * inf_norm(dp_) / std::max(1.0, inf_norm(ph_));
      if (!std::isfinite(nd)) break;
      L_ += delta_;
      // Converged when the correction is negligible, or when the rate theta
      // measured in this solve bounds the error left after it,
      // theta/(1 - theta) |delta| (HW IV.8, (8.10)), by a few units of
      // round-off: a larger error left would be smooth along the trajectory,
      // a systematic (drifting) perturbation of the symplectic map
      // (Hairer, McLachlan, Razakarivony, BIT 48 (2008), Brouwer's law).
      const double theta = it > 0 ? nd / prev : 1.0;
      const double eta = theta / (1.0 - theta);
      if (nd <= opts_.tol || (theta < 0.5 && eta * nd <= std::min(opts_.tol, kRoundoffLeft))) {
        ph_ -= dp_;  // the last correction, exactly (q_1 is affine in L)
        q1_.noalias() -= h * (B0_ * delta_);
        if (nd > opts_.tol) g_scale = eta;  // |g| left <= eta |g| before it
        ok = true;
        break;
      }
      if ((it > 0 && nd >= 0.5 * prev) || it >= opts_.max_iterations) break;  // slow: the general separable path
      prev = nd;
      ++it;
      ++st.newton_iterations;
    }
    shared_.finish(it);
    if (!ok) return false;
    if (constraints_violated(g_scale * inf_norm(gv_), q1_, opts_.tol)) {  // before any further callback
      status = StepStatus::ConstraintsViolated;
      return true;
    }
    // 2. f at [q_1; p_{1/2}]: the force F_1 and a check of T_p(p_{1/2}).
    x2_.head(d) = q1_;
    x2_.tail(d) = ph_;
    if (!problem_.field(t1, x2_, work_)) return false;
    velocity_.predict(ph_);
    if (!velocity_.confirm(ph_, work_.head(d))) {  // model dropped: H_p moved with q?
      if (!velocity_.active()) check_claims(t1, x2_, work_);
      return false;
    }
    ++st.newton_solves;
    F1_ = work_.tail(d);
    if (!problem_.constraint_grad(q1_, G1_)) return true;
    record_residual(st.max_constraint_residual, g_scale * inf_norm(gv_), G1_, inf_norm(q1_));
    pstar_ = ph_ + (0.5 * h) * F1_;
    // 3. Velocity multipliers, linear for affine T_p: G_1 A G_1^T M = G_1 T_p(p*).
    if (shake_) {
      p1_ = pstar_;  // G_1 T_p(p_1) = O(h), measured for Stats by the confirmed model
      hid_.noalias() = G1_ * velocity_.predict(p1_);
      record_residual(st.max_hidden_residual, inf_norm(hid_), G1_, velocity_.matrix_norm() * inf_norm(p1_));
    } else {
      velocity_.apply(G1_.transpose(), TG1_);
      A_.noalias() = G1_ * TG1_;
      if (!small_.compute(A_)) return true;
      shared_.note_rank(small_, from.t);
      hid_.noalias() = G1_ * velocity_.predict(pstar_);
      small_.solve(hid_, M_);
      p1_ = pstar_;
      p1_.noalias() -= G1_.transpose() * M_;
      const Vec& hp = velocity_.predict(p1_);
      hid_.noalias() = G1_ * hp;  // round-off, plus the error of a differenced G
      record_residual(st.max_hidden_residual, inf_norm(hid_) + problem_.constraint_grad_error(hp), G1_,
                      velocity_.matrix_norm() * inf_norm(p1_));
    }
    to.force = F1_;  // separable: the force depends on q only
    to.has_force = true;
    to.t = t1;
    to.x.head(d) = q1_;
    to.x.tail(d) = p1_;
    if (!to.x.allFinite()) return true;
    remember_step(q0, h);
    status = StepStatus::Success;
    return true;
  }

  /// S = G1e T_pp G_0^T, factorized by the minimum-norm solver.
  bool factor_S(double t) {
    S_.noalias() = G1e_ * B0_;
    if (!small_.compute(S_)) return false;
    shared_.note_rank(small_, t);
    return true;
  }

  RattleState& shared_;
  HamiltonianProblem& problem_;
  const NewtonOptions& opts_;
  const int d_, m_;
  const bool shake_;
  AffineVelocity velocity_;
  SeparabilityProbe separability_;
  MinNormSolver small_;
  Vec work_, x2_, gv_;
  Mat G0_, G1_;
  Mat Tpp_, B0_, TG1_, G1e_, last_G0_, S_, A_;
  Vec L_, Lprev_, Lprev2_, Lprev3_, M_, delta_, hid_;
  int nL_ = 0;  // length of the chain of equal steps behind Lprev_
  Vec ph_, pbase_, q1_, q1pred_, Tp_, F1_, pstar_, p1_, dp_, vtmp_, dq_prev_;
  bool have_tpp_ = false, have_guess_ = false, have_last_ = false;
  double last_h_ = 0.0;
};

}  // namespace odepkg

#endif
