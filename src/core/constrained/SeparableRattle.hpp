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
#include "constrained/DampedMultiplierNewton.hpp"
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
        small_(std::max(shared.m, 1), RattleState::rank_tolerance),
        damped_(shared.d, shared.m, RattleState::rank_tolerance) {
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
    Lguess_ = Vec::Zero(m);
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
    dfree_.resize(d);
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
  /// and holds, else the general separable one; when their fast (chord)
  /// iterations fail or reach a distant root, the step is solved again by
  /// the globalised Newton from the warm guess and from L = 0 (the
  /// unconstrained step), and fails only when neither finds the root near
  /// the unconstrained step.
  StepStatus step(Point& from, double h, Point& to) {
    StepStatus s = StepStatus::NewtonDiverged;
    bool done = false;
    if (velocity_.prepare(problem_, from.t, from.x)) done = step_affine(from, h, to, s);
    if (!done) s = step_separable(from, h, to, false);
    if (s != StepStatus::NewtonDiverged && s != StepStatus::DistantRoot) return s;
    ++problem_.stats().newton_retries;
    return step_separable(from, h, to, true);
  }

 private:
  StepStatus step_separable(Point& from, double h, Point& to, bool globalised) {
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
    if (globalised) {
      const StepStatus g = solve_globalised(from, h, s, extrap);
      if (g != StepStatus::Success) {
        have_tpp_ = have_last_ = have_guess_ = false;
        return g;
      }
      ok = true;
    }
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
        if (at_roundoff(gv_, G1e_, q1_)) {  // g as small as it can be evaluated
          ok = true;
          break;
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
    if (!globalised && off_branch(q0, h, DampedMultiplierNewton::kDoubtRatio)) {  // the globalised solve looks again
      have_tpp_ = have_last_ = have_guess_ = false;
      return StepStatus::DistantRoot;
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
    Lguess_ = L_;
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
      sub_scaled(q1_, h, B0_, L_);
      if (!problem_.constraint(q1_, gv_)) return true;
      if (!have_S) {
        if (!problem_.constraint_grad(q1_, G1e_)) return true;
        if (!factor_S(from.t)) return true;
        have_S = true;
      }
      ph_ = pbase_;
      sub_transposed(ph_, G0_, L_);
      if (at_roundoff(gv_, G1e_, q1_)) {  // g as small as it can be evaluated
        ok = true;
        break;
      }
      small_.solve(gv_, delta_);
      delta_ /= h;
      set_transposed(dp_, G0_, delta_);
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
        sub_scaled(q1_, h, B0_, delta_);
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
    if (off_branch(q0, h, DampedMultiplierNewton::kDoubtRatio)) {
      status = StepStatus::DistantRoot;
      return true;
    }
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
      set_product(hid_, G1_, velocity_.predict(p1_));
      record_residual(st.max_hidden_residual, inf_norm(hid_), G1_, velocity_.matrix_norm() * inf_norm(p1_));
    } else {
      velocity_.apply(G1_.transpose(), TG1_);
      A_.noalias() = G1_ * TG1_;
      if (!small_.compute(A_)) return true;
      shared_.note_rank(small_, from.t);
      set_product(hid_, G1_, velocity_.predict(pstar_));
      small_.solve(hid_, M_);
      p1_ = pstar_;
      sub_transposed(p1_, G1_, M_);
      const Vec& hp = velocity_.predict(p1_);
      set_product(hid_, G1_, hp);  // round-off, plus the error of a differenced G
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

  /// The globalised position solve (DampedMultiplierNewton) for this step,
  /// B0_ = T_pp G_0^T with T_pp fresh: from the warm guess, then from L = 0;
  /// the first root near the unconstrained step is taken.  On success L_,
  /// ph_, q1_, gv_, G1e_ (G at q_1), Tp_ and q1pred_ (where the force in
  /// work_ was taken) are those of the step's positions.
  StepStatus solve_globalised(const Point& from, double h, double s, bool extrap) {
    const int d = d_;
    Stats& st = problem_.stats();
    const double t1 = from.t + h;
    const auto q0 = from.x.head(d);
    if (!problem_.field_jacobian_block(from.t, from.x, 0, 1, Tpp_)) return StepStatus::NonFinite;
    have_tpp_ = true;
    B0_.noalias() = Tpp_ * G0_.transpose();
    x2_.head(d) = q0;  // separable: T_p(p) does not depend on the q it is taken at
    auto eval = [&](const ConstVecRef& L, Vec& q1, Vec& g) {
      x2_.tail(d) = pbase_;
      x2_.tail(d).noalias() -= G0_.transpose() * L;
      if (!problem_.field(t1, x2_, work_)) return false;
      q1 = q0 + h * work_.head(d);
      return problem_.constraint(q1, g);
    };
    auto grad = [&](const Vec& q1, Mat& G) { return problem_.constraint_grad(q1, G); };
    auto note = [&](const MinNormSolver& solver) { shared_.note_rank(solver, from.t); };
    // Both starts are solved and the root with the smaller displacement
    // h |T_pp G_0^T L| taken: from a warm start Newton may reach another
    // branch (the sphere at h = 0.25: roots s = 0.49 and 1.75 of the SHAKE
    // quadratic, the second taken), from L = 0 it follows the branch that
    // the step continues as h -> 0.
    nearest_.reset();
    for (int start = 0; start < 2; ++start) {
      if (start == 0) {
        guess_L(s, h, extrap);
        if (inf_norm(L_) == 0.0) continue;  // the same as the cold start
      } else {
        L_.setZero();
      }
      const auto out = damped_.solve(eval, grad, note, B0_, h, opts_.max_iterations, L_, q1_, gv_, G1e_, st);
      if (out == DampedMultiplierNewton::Outcome::NonFinite) return StepStatus::NonFinite;
      if (out == DampedMultiplierNewton::Outcome::Failed) continue;
      dfree_.noalias() = h * (B0_ * L_);
      nearest_.offer(inf_norm(dfree_), L_, q1_, gv_, G1e_, st);
    }
    if (!nearest_.found()) return StepStatus::NewtonDiverged;
    nearest_.restore(L_, q1_, gv_, G1e_);
    if (distant_root(q0, h)) return StepStatus::DistantRoot;
    ph_ = pbase_;
    ph_.noalias() -= G0_.transpose() * L_;
    Tp_ = (q1_ - q0) / h;
    x2_.head(d) = q0;  // work_ may hold f at the other start's last iterate
    x2_.tail(d) = ph_;
    if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
    q1pred_ = q0;  // the force in work_ is at q_0: retaken at q_1 unless equal
    return StepStatus::Success;
  }

  /// The root L_ (q_1 = q1_) just found is on another branch
  /// (DampedMultiplierNewton::distant, with `ratio`): dq = q_1 - q_0 + c
  /// the free displacement, c = h B0 L, and c_lin = h B0 L_lin with
  /// G_0 (dq - c_lin) = 0 (the normal part of dq at q_0; S_0 = G_0 B0
  /// factorized in small_, which the velocity stage re-forms).  From a warm
  /// start a chord iteration can reach such a root (the sphere at h = 0.25:
  /// roots s = 0.49 and 1.75 of the SHAKE quadratic, the second taken in
  /// silence); the globalised solve then looks from L = 0 as well.
  bool off_branch(const ConstVecRef& q0, double h, double ratio) {
    S_.noalias() = G0_ * B0_;
    if (!small_.compute(S_)) return true;
    set_scaled(dfree_, h, B0_, L_);
    dfree_ += q1_;
    dfree_ -= q0;
    set_product(hid_, G0_, dfree_);
    small_.solve(hid_, delta_);
    delta_ /= h;
    delta_ -= L_;  // L_lin - L
    set_scaled(vtmp_, h, B0_, delta_);
    return DampedMultiplierNewton::distant(vtmp_.norm(), dfree_.norm(), inf_norm(q0), ratio);
  }

  // One constraint (m = 1): the products of the quadratic-T path with an
  // m-vector, and of G (1 x d) with a d-vector, written out in the
  // operations of Eigen's matrix-vector kernels (gemv: out += alpha (0 + a_i
  // v_0); a 1-row product: the dot product summed in order) -- the same
  // results, without the call of the out-of-line kernel (about 10 % of a
  // pendulum stage).  Any other m: the Eigen expressions.
  /// out -= c (B v), B d x m.
  void sub_scaled(Vec& out, double c, const Mat& B, const Vec& v) const {
    if (m_ != 1) {
      out.noalias() -= c * (B * v);
      return;
    }
    const double alpha = -1.0 * c, v0 = v(0);
    const double* b = B.data();
    for (Eigen::Index i = 0; i < out.size(); ++i) out(i) += alpha * (0.0 + b[i] * v0);
  }
  /// out = c (B v), B d x m.
  void set_scaled(Vec& out, double c, const Mat& B, const Vec& v) const {
    if (m_ != 1) {
      out.noalias() = c * (B * v);
      return;
    }
    const double v0 = v(0);
    const double* b = B.data();
    for (Eigen::Index i = 0; i < out.size(); ++i) out(i) = 0.0 + c * (0.0 + b[i] * v0);
  }
  /// out -= G^T v, G m x d.
  void sub_transposed(Vec& out, const Mat& G, const Vec& v) const {
    if (m_ != 1) {
      out.noalias() -= G.transpose() * v;
      return;
    }
    const double v0 = v(0);
    const double* g = G.data();
    for (Eigen::Index i = 0; i < out.size(); ++i) out(i) += -1.0 * (0.0 + g[i] * v0);
  }
  /// out = G^T v, G m x d.
  void set_transposed(Vec& out, const Mat& G, const Vec& v) const {
    if (m_ != 1) {
      out.noalias() = G.transpose() * v;
      return;
    }
    const double v0 = v(0);
    const double* g = G.data();
    for (Eigen::Index i = 0; i < out.size(); ++i) out(i) = 0.0 + 1.0 * (0.0 + g[i] * v0);
  }
  /// out = G x, G m x d, x a d-vector.
  void set_product(Vec& out, const Mat& G, const Vec& x) const {
    if (m_ != 1) {
      out.noalias() = G * x;
      return;
    }
    const double* g = G.data();
    double dot = g[0] * x(0);
    for (Eigen::Index i = 1; i < x.size(); ++i) dot = dot + g[i] * x(i);
    out(0) = 0.0 + 1.0 * dot;
  }

  /// |g(q_1)| at the round-off of its evaluation (G ~ G(q_1)).
  static bool at_roundoff(const Vec& g, const Mat& G, const Vec& q1) {
    return inf_norm(g) <= DampedMultiplierNewton::residual_floor(
                              G.size() ? G.cwiseAbs().rowwise().sum().maxCoeff() : 0.0, inf_norm(q1));
  }

  /// The root L_ of the globalised solve is on another branch (off_branch,
  /// refusal ratio).  Counted in stats.
  bool distant_root(const ConstVecRef& q0, double h) {
    if (!off_branch(q0, h, DampedMultiplierNewton::kRefuseRatio)) return false;
    ++problem_.stats().distant_roots;
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
  DampedMultiplierNewton damped_;  // the globalised position solve
  Vec work_, x2_, gv_;
  Mat G0_, G1_;
  Mat Tpp_, B0_, TG1_, G1e_, last_G0_, S_, A_;
  Vec L_, Lprev_, Lprev2_, Lprev3_, M_, delta_, hid_;
  Vec Lguess_;  // the warm guess
  NearestRoot<Mat> nearest_;  // the globalised solve's root
  int nL_ = 0;  // length of the chain of equal steps behind Lprev_
  Vec ph_, pbase_, q1_, q1pred_, Tp_, F1_, pstar_, p1_, dp_, vtmp_, dq_prev_, dfree_;
  bool have_tpp_ = false, have_guess_ = false, have_last_ = false;
  double last_h_ = 0.0;
};

}  // namespace odepkg

#endif
