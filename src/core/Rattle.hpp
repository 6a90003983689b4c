// Rattle.hpp — RATTLE and SHAKE for constrained Hamiltonian systems
//   q' = H_p,  p' = -H_q - G(q)^T lambda,  g(q) = 0        (HLW §VII.1.4),
// order 2, symmetric, symplectic on M = {g = 0, G H_p = 0}:
//   p_{1/2} = p_0 - h/2 (H_q(q_0, p_{1/2}) + G(q_0)^T lambda)
//   q_1     = q_0 + h/2 (H_p(q_0, p_{1/2}) + H_p(q_1, p_{1/2}))
//   0       = g(q_1)
//   p_1     = p_{1/2} - h/2 (H_q(q_1, p_{1/2}) + G(q_1)^T mu)
//   0       = G(q_1) H_p(q_1, p_1)
// (seed 000, whose Jacobian had the sign of the mu * d2g term wrong).  SHAKE
// (seed 002, §5.1.3) is the same map without the last projection (mu = 0);
// its positions are those of RATTLE.
//
// General H: one Newton system in y = [v; p_{1/2}; p_1; L; M] with
// q_1 = q_0 + h v, L = h/2 lambda, M = h/2 mu and residual rows
//   v - (H_p(q_0, p_{1/2}) + H_p(q_1, p_{1/2}))/2,
//   p_{1/2} - p_0 + h/2 H_q(q_0, p_{1/2}) + G_0^T L,
//   p_1 - p_{1/2} + h/2 H_q(q_1, p_{1/2}) + G_1^T M,
//   g(q_1)/h,
//   G_1 H_p(q_1, p_1)          (SHAKE: M),
// whose Jacobian is J_0 + O(h).  Systems of up to 64 unknowns: the
// Jacobian is re-formed at every iterate (no callback) from the current
// G(q_0), G(q_1), H_p(q_1, p_1), mu and cached Hessians of H and g (the
// user's HamiltonianHessFcn/ConstraintHessFcn, else forward differences of f
// and G from the values at hand).  The Hessians are taken at every step's
// guess, so Newton converges quadratically and its contraction estimate can
// be trusted, unless they are static (unchanged to 1e-6 between checks:
// quadratic T and V, quadratic constraints), then once and re-checked every
// 16 steps.  The guess extrapolates the last three steps' increments
// (3 inc_n - 3 inc_{n-1} + inc_{n-2}; O(h^3)).  The iterate is accepted from
// its correction alone, and only G is evaluated there (it is G(q_0) of the
// next step); the recorded residuals are the last iterate's, which bound the
// returned point's.  Pendulum, h = 0.01: 2 iterations and 11 calls per step
// (3 f, g, G per residual, G at the end); before, 3 iterations, a Jacobian
// per step and 25 calls with Hessians, 46 without.  Larger systems: NewtonSolver's
// strategy (factorization kept across steps, refreshed when iterating costs
// more calls than forming it, one retry with a fresh Jacobian; a singular
// Jacobian switches to the minimum-norm solver).
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
// Redundant constraints / singular configurations (seed 001): the multiplier
// systems are solved by a rank-revealing complete orthogonal decomposition,
// giving minimum-norm multipliers; such events are counted in
// stats().rank_deficient and reported by rank_deficiency_seen().
#ifndef ODEPKG_RATTLE_HPP
#define ODEPKG_RATTLE_HPP

#include "AffineVelocity.hpp"
#include "ConstraintProjection.hpp"
#include "NewtonSolver.hpp"
#include "Stepper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class Rattle final : public Stepper {
 public:
  /// Pivots below this fraction of the largest one count as zero.
  static constexpr double rank_tolerance = 1e-10;
  static constexpr double kResidualAtIterate = 0.01;  // of tol: see step_general
  static constexpr double kRoundoffLeft = 4 * std::numeric_limits<double>::epsilon();

  Rattle(HamiltonianProblem& problem, bool separable, bool shake = false,
         NewtonOptions newton = NewtonOptions())
      : Stepper(problem),
        d_(problem.dim()),
        m_(problem.constraints()),
        n_(3 * problem.dim() + 2 * std::max(problem.constraints(), 1)),
        separable_(separable),
        shake_(shake),
        opts_(newton),
        velocity_(problem.dim()) {
    if (!separable) velocity_.disable();
    if (m_ < 1)
      throw InputError("invalidInput", "RATTLE and SHAKE need constraints (ConstraintFcn)");
    const int d = d_, m = m_, n = n_;
    work_.resize(2 * d);
    x2_.resize(2 * d);
    G0_.resize(m, d);
    G1_.resize(m, d);
    gv_.resize(m);
    for (int i = 0; i < kCache; ++i) {
      cache_q_[i].resize(d);
      cache_G_[i].resize(m, d);
    }
    // separable path
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
    last_q1_.resize(d);
    // general path
    y_.resize(n);
    yg_.resize(n);
    r_.resize(n);
    rp_.resize(n);
    dy_.resize(n);
    yp_.resize(n);
    inc_ = Vec::Zero(n);
    inc2_ = Vec::Zero(n);
    inc3_ = Vec::Zero(n);
    incx_ = Vec::Zero(n);
    J_.resize(n, n);
    lu_ = Eigen::PartialPivLU<Mat>(n);
    xa_.resize(2 * d);
    xb_.resize(2 * d);
    xc_.resize(2 * d);
    fa_.resize(2 * d);
    fb_.resize(2 * d);
    fc_ = Vec::Zero(2 * d);
    Ha_.resize(2 * d, 2 * d);
    Hb_.resize(2 * d, 2 * d);
    Hc_ = Mat::Zero(2 * d, 2 * d);
    GH_.resize(d, d * m);
    q0_.resize(d);
    p0_.resize(d);
    q1G_.resize(d);
    Gp_.resize(m, d);
    Ha0_ = Mat::Zero(2 * d, 2 * d);
    Hb0_ = Mat::Zero(2 * d, 2 * d);
    Hc0_ = Mat::Zero(2 * d, 2 * d);
    GH0_ = Mat::Zero(d, d * m);
    assembled_ = n <= kAssembleMaxSize;
  }

  const char* name() const override { return shake_ ? "shake" : "rattle"; }
  int order() const override { return 2; }

  void reset() override {
    have_fact_ = false;
    have_inc_ = false;
    have_inc2_ = have_inc3_ = false;
    need_hess_ = true;
    have_hess_ = hess_static_ = false;
    have_guess_ = false;
    have_last_ = false;
    have_tpp_ = false;
  }

  StepStatus step(Point& from, double h, Point& to) override {
    if (!separable_) return step_general(from, h, to);
    if (velocity_.prepare(problem_, from.t, from.x)) {
      StepStatus s;
      if (step_affine(from, h, to, s)) return s;
    }
    return step_separable(from, h, to);
  }

  /// A rank-deficient multiplier system was met (warn once).
  bool rank_deficiency_seen() const { return rank_seen_; }
  /// Start time of the first step that met one (NaN if none).
  double rank_deficiency_t() const { return rank_t_; }
  /// Largest condition estimate of the multiplier systems met so far
  /// (infinite if an exactly singular one was met).
  double condition_estimate() const { return cond_max_; }

  // ---- the general path's nonlinear system, exposed for tests ------------
  /// Size 3d + 2m of y = [v; p_{1/2}; p_1; h/2 lambda; h/2 mu].
  int system_size() const { return n_; }
  /// Residual of the general system for the step (from, h) at y.
  bool system_residual(const Point& from, double h, const ConstVecRef& y, VecRef r) {
    if (!set_context(from, h)) return false;
    return residual(y, r);
  }
  /// Its Jacobian, analytic (needs both Hessians) or by finite differences.
  bool system_jacobian(const Point& from, double h, const ConstVecRef& y, MatRef J,
                       bool finite_differences) {
    if (!set_context(from, h) || !residual(y, r_)) return false;
    return finite_differences ? fd_jacobian(y, J) : analytic_jacobian(y, J);
  }

 private:
  static constexpr int kCache = 3;

  static double inf_norm(const ConstVecRef& v) { return v.lpNorm<Eigen::Infinity>(); }

  // ---- bookkeeping --------------------------------------------------------
  void note_rank(const MinNormSolver& s, double t) {
    cond_max_ = std::max(cond_max_, s.condition_estimate());
    if (!s.rank_deficient()) return;
    ++problem_.stats().rank_deficient;
    if (!rank_seen_) {
      rank_seen_ = true;
      rank_t_ = t;
    }
  }
  void finish(long it) {
    Stats& st = problem_.stats();
    st.newton_max_iterations = std::max(st.newton_max_iterations, it);
  }

  /// G(q) from a small cache keyed by q (G(q_1) of one step is G(q_0) of the
  /// next; step doubling restarts from the same point), else evaluated.
  bool grad_at(const ConstVecRef& q, MatRef G) {
    for (int i = 0; i < kCache; ++i)
      if (cache_ok_[i] && (cache_q_[i].array() == q.array()).all()) {
        G = cache_G_[i];
        return true;
      }
    if (!problem_.constraint_grad(q, G)) return false;
    cache_store(q, G);
    return true;
  }
  void cache_store(const ConstVecRef& q, const Eigen::Ref<const Mat>& G) {
    cache_q_[cache_next_] = q;
    cache_G_[cache_next_] = G;
    cache_ok_[cache_next_] = true;
    cache_next_ = (cache_next_ + 1) % kCache;
  }

  // ---- separable H = T(p) + V(q) -----------------------------------------
  StepStatus step_separable(Point& from, double h, Point& to) {
    const int d = d_;
    Stats& st = problem_.stats();
    if (!ensure_force(from, work_)) return StepStatus::NonFinite;
    const auto q0 = from.x.head(d);
    const double t1 = from.t + h;
    if (!grad_at(q0, G0_)) return StepStatus::NonFinite;
    // G(q_1) ~ G_0 + h/h_last (G_0 - G_{-1}) when this step continues the last.
    const bool extrap = have_last_ && (last_q1_.array() == q0.array()).all();
    const double s = have_guess_ ? h / h_prev_ : 0.0;
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
      const double weight =
          roundoff_weight(h, Tpp_.cwiseAbs().rowwise().sum().maxCoeff(), q0, from.x.tail(d_));
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
      finish(it);
      if (!ok && fresh) break;  // a fresh Jacobian did not help either
    }
    if (!ok) {
      have_tpp_ = have_last_ = have_guess_ = false;
      return StepStatus::NewtonDiverged;
    }
    if (it > 1 && theta > opts_.refresh_rate) have_tpp_ = false;  // T_pp looks stale
    if (constraints_violated(inf_norm(gv_), q1_)) return StepStatus::ConstraintsViolated;
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
      p1_ = pstar_;
      to.force = F1_;
    } else {
      TG1_.noalias() = Tpp_ * G1_.transpose();
      A_.noalias() = G1_ * TG1_;
      if (!small_.compute(A_)) return StepStatus::NonFinite;
      note_rank(small_, from.t);
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
      record_residual(st.max_hidden_residual, inf_norm(hid_), G1_, inf_norm(work_.head(d)));
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
    cache_store(q1_, G1_);
    const bool cont = have_last_ && (last_q1_.array() == q0.array()).all() && same_step(h, h_prev_);
    nL_ = cont ? std::min(nL_ + 1, 3) : 1;
    Lprev3_ = Lprev2_;
    Lprev2_ = Lprev_;
    last_q1_ = q1_;
    last_G0_ = G0_;
    last_h_ = h;
    have_last_ = true;
    Lprev_ = L_;
    dq_prev_ = q1_ - q0;
    h_prev_ = h;
    have_guess_ = true;
  }

  /// Guess of the position multipliers L = h/2 lambda: along equal steps
  /// that continue each other the extrapolation of the last three (O(h^3)),
  /// else the last one scaled by s = h/h_prev.
  void guess_L(double s, double h, bool extrap) {
    const bool chain = extrap && have_guess_ && same_step(h, h_prev_);
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
    if (!ensure_force(from, work_)) return true;
    const auto q0 = from.x.head(d);
    const double t1 = from.t + h;
    if (!grad_at(q0, G0_)) return true;
    const Mat& A = velocity_.matrix();
    const bool extrap = have_last_ && (last_q1_.array() == q0.array()).all();
    const double s = have_guess_ ? h / h_prev_ : 0.0;
    pbase_ = from.x.tail(d) + (0.5 * h) * from.force;
    vtmp_ = q0 + h * velocity_.predict(pbase_);  // q_1 at L = 0
    B0_.noalias() = A * G0_.transpose();
    const double weight = roundoff_weight(h, velocity_.matrix_norm(), q0, from.x.tail(d));
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
      if ((it > 0 && nd >= 0.5 * prev) || it >= opts_.max_iterations) break;  // slow: the general path
      prev = nd;
      ++it;
      ++st.newton_iterations;
    }
    finish(it);
    if (!ok) return false;
    if (constraints_violated(g_scale * inf_norm(gv_), q1_)) {  // before any further callback
      status = StepStatus::ConstraintsViolated;
      return true;
    }
    // 2. f at [q_1; p_{1/2}]: the force F_1 and a check of T_p(p_{1/2}).
    x2_.head(d) = q1_;
    x2_.tail(d) = ph_;
    if (!problem_.field(t1, x2_, work_)) return false;
    velocity_.predict(ph_);
    if (!velocity_.confirm(ph_, work_.head(d))) return false;  // model dropped
    ++st.newton_solves;
    F1_ = work_.tail(d);
    if (!problem_.constraint_grad(q1_, G1_)) return true;
    record_residual(st.max_constraint_residual, g_scale * inf_norm(gv_), G1_, inf_norm(q1_));
    pstar_ = ph_ + (0.5 * h) * F1_;
    // 3. Velocity multipliers, linear for affine T_p: G_1 A G_1^T M = G_1 T_p(p*).
    if (shake_) {
      p1_ = pstar_;
    } else {
      TG1_.noalias() = A * G1_.transpose();
      A_.noalias() = G1_ * TG1_;
      if (!small_.compute(A_)) return true;
      note_rank(small_, from.t);
      hid_.noalias() = G1_ * velocity_.predict(pstar_);
      small_.solve(hid_, M_);
      p1_ = pstar_;
      p1_.noalias() -= G1_.transpose() * M_;
      hid_.noalias() = G1_ * velocity_.predict(p1_);  // round-off
      record_residual(st.max_hidden_residual, inf_norm(hid_), G1_, velocity_.matrix_norm() * inf_norm(p1_));
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
    note_rank(small_, t);
    return true;
  }

  // ---- general H ----------------------------------------------------------
  bool set_context(const Point& from, double h) {
    const int d = d_;
    q0_ = from.x.head(d);
    p0_ = from.x.tail(d);
    t0_ = from.t;
    h_ = h;
    xa_.head(d) = q0_;
    g1_valid_ = false;
    return grad_at(q0_, G0_);
  }

  /// r = F(y); leaves q1_, gv_, G1_, fc_ at y.
  bool residual(const ConstVecRef& y, VecRef r) {
    const int d = d_, m = m_;
    const double h = h_, t1 = t0_ + h;
    const auto v = y.head(d);
    const auto ph = y.segment(d, d);
    const auto p1 = y.segment(2 * d, d);
    const auto L = y.segment(3 * d, m);
    const auto M = y.segment(3 * d + m, m);
    q1_ = q0_ + h * v;
    xa_.tail(d) = ph;
    xb_.head(d) = q1_;
    xb_.tail(d) = ph;
    if (!problem_.field(t0_, xa_, fa_) || !problem_.field(t1, xb_, fb_)) return false;
    if (!shake_) {
      xc_.head(d) = q1_;
      xc_.tail(d) = p1;
      if (!problem_.field(t1, xc_, fc_)) return false;
    }
    if (!problem_.constraint(q1_, gv_)) return false;
    // G by finite differences is noisy at the 1e-8 level: keep it while q_1
    // moves less than that, or Newton could not converge to round-off.
    if (problem_.has_constraint_grad() || !g1_valid_ ||
        (q1_ - q1G_).lpNorm<Eigen::Infinity>() > 1e-8 * std::max(1.0, inf_norm(q1_))) {
      if (!problem_.constraint_grad(q1_, G1_)) return false;
      q1G_ = q1_;
      g1_valid_ = true;
    }
    r.head(d) = v - 0.5 * (fa_.head(d) + fb_.head(d));
    r.segment(d, d) = ph - p0_ - (0.5 * h) * fa_.tail(d);
    r.segment(d, d).noalias() += G0_.transpose() * L;
    r.segment(2 * d, d) = p1 - ph - (0.5 * h) * fb_.tail(d);
    r.segment(2 * d, d).noalias() += G1_.transpose() * M;
    r.segment(3 * d, m) = gv_ / h;
    if (shake_)
      r.tail(m) = M;
    else
      r.tail(m).noalias() = G1_ * fc_.head(d);
    return r.allFinite();
  }

  /// dF/dy from the Hessians at the point of the last residual() call (= y).
  bool analytic_jacobian(const ConstVecRef& y, MatRef J) { return hessians() && assemble(y, J); }

  /// Ha_, Hb_, Hc_ (Hessians of H at xa_, xb_, xc_) and GH_ (of g at q_1)
  /// at the last residual: the user's functions, else forward differences
  /// from the f and G known there (2d f-calls per point, d G-calls).
  bool hessians() {
    const double t1 = t0_ + h_;
    if (!problem_.hamiltonian_hessian(t0_, xa_, fa_, Ha_) || !problem_.hamiltonian_hessian(t1, xb_, fb_, Hb_))
      return false;
    if (!shake_ && !problem_.hamiltonian_hessian(t1, xc_, fc_, Hc_)) return false;
    if (problem_.has_constraint_hess()) return problem_.constraint_hess(q1_, GH_);
    // d/dq_j of row k of G: column j of the Hessian of g_k.
    for (int j = 0; j < d_; ++j) {
      const double delta = HamiltonianProblem::fd_step(q1G_(j));
      vtmp_ = q1G_;
      vtmp_(j) += delta;
      if (!problem_.constraint_grad(vtmp_, Gp_)) return false;
      for (int k = 0; k < m_; ++k) GH_.col(k * d_ + j) = (Gp_.row(k) - G1_.row(k)).transpose() / delta;
    }
    return GH_.allFinite();
  }

  /// Static Hessians (constant ones: quadratic T and V, quadratic
  /// constraints; the benchmark pendulum) are taken once and re-checked every
  /// kStaticRecheck solves; any others at every step, since with older ones
  /// the contraction estimate can miss slow components and accept too early.
  void check_static() {
    auto same = [](const Mat& a, const Mat& b) {
      return (a - b).cwiseAbs().maxCoeff() <= 1e-6 * std::max(1.0, a.cwiseAbs().maxCoeff());
    };
    hess_static_ = have_hess_ && same(Ha_, Ha0_) && same(Hb_, Hb0_) && same(GH_, GH0_) &&
                   (shake_ || same(Hc_, Hc0_));
    Ha0_ = Ha_;
    Hb0_ = Hb_;
    Hc0_ = Hc_;
    GH0_ = GH_;
    have_hess_ = true;
    static_age_ = 0;
  }

  /// dF/dy at y from the cached Hessians and the current G_0, G_1, fc_.
  bool assemble(const ConstVecRef& y, MatRef J) {
    const int d = d_, m = m_;
    const double h = h_;
    const int iv = 0, iph = d, ip1 = 2 * d, iL = 3 * d, iM = 3 * d + m;
    // Hessian blocks in (q, p) order: topLeft H_qq, topRight H_qp,
    // bottomLeft H_pq, bottomRight H_pp.
    J.setZero();
    // v - (H_p(q0, ph) + H_p(q0 + h v, ph))/2
    J.block(0, iv, d, d).setIdentity();
    J.block(0, iv, d, d) -= (0.5 * h) * Hb_.bottomLeftCorner(d, d);
    J.block(0, iph, d, d) = -0.5 * (Ha_.bottomRightCorner(d, d) + Hb_.bottomRightCorner(d, d));
    // ph - p0 + h/2 H_q(q0, ph) + G0^T L
    J.block(d, iph, d, d).setIdentity();
    J.block(d, iph, d, d) += (0.5 * h) * Ha_.topRightCorner(d, d);
    J.block(d, iL, d, m) = G0_.transpose();
    // p1 - ph + h/2 H_q(q1, ph) + G1^T M   (d/dq1 of G1^T M = sum M_k g_k'')
    J.block(2 * d, iv, d, d) = (0.5 * h * h) * Hb_.topLeftCorner(d, d);
    for (int k = 0; k < m; ++k) J.block(2 * d, iv, d, d) += (h * y(iM + k)) * GH_.middleCols(k * d, d);
    J.block(2 * d, iph, d, d).setIdentity();
    J.block(2 * d, iph, d, d) *= -1.0;
    J.block(2 * d, iph, d, d) += (0.5 * h) * Hb_.topRightCorner(d, d);
    J.block(2 * d, ip1, d, d).setIdentity();
    J.block(2 * d, iM, d, m) = G1_.transpose();
    // g(q1)/h
    J.block(3 * d, iv, m, d) = G1_;
    if (shake_) {
      J.block(3 * d + m, iM, m, m).setIdentity();
    } else {
      // G1 c, c = H_p(q1, p1):  d/dq1 = G1 H_pq + [c^T g_k''],  d/dp1 = G1 H_pp
      J.block(3 * d + m, iv, m, d).noalias() = h * (G1_ * Hc_.bottomLeftCorner(d, d));
      for (int k = 0; k < m; ++k) {
        vtmp_.noalias() = GH_.middleCols(k * d, d) * fc_.head(d);
        J.block(3 * d + m + k, iv, 1, d) += h * vtmp_.transpose();
      }
      J.block(3 * d + m, ip1, m, d).noalias() = G1_ * Hc_.bottomRightCorner(d, d);
    }
    return J.allFinite();
  }

  /// Forward differences of the residual around y (r_ = F(y) given).
  bool fd_jacobian(const ConstVecRef& y, MatRef J) {
    ++problem_.stats().fd_jacobians;
    yp_ = y;
    for (int j = 0; j < n_; ++j) {
      const double delta = HamiltonianProblem::fd_step(y(j));
      yp_(j) = y(j) + delta;
      if (!residual(yp_, rp_)) return false;
      J.col(j) = (rp_ - r_) / delta;
      yp_(j) = y(j);
    }
    return J.allFinite();
  }

  /// J at y_ (residual() was just called at y_), LU-factorized; a
  /// numerically singular J falls back to the minimum-norm solver.
  bool refactor() {
    Stats& st = problem_.stats();
    ++st.lu_factorizations;
    bool ok;
    if (assembled_) {
      if (need_hess_) {
        ++st.jacobian_evals;
        if (!hessians()) {
          have_fact_ = false;
          hess_static_ = have_hess_ = false;
          return false;
        }
        need_hess_ = false;
        check_static();
      }
      ok = assemble(y_, J_);
    } else {
      ++st.jacobian_evals;
      const bool analytic = problem_.has_hessian() && problem_.has_constraint_hess();
      // an analytic Jacobian costs about one residual, an FD one n of them
      refresh_after_ = analytic ? 3 : std::max(3, n_ / 2);
      ok = analytic ? analytic_jacobian(y_, J_) : fd_jacobian(y_, J_);
    }
    if (!ok || !J_.allFinite()) {
      have_fact_ = false;
      return false;
    }
    // |H_pp| ~ |(H_pp(q0, ph) + H_pp(q1, ph))/2|, the block dF_1/dp_{1/2}
    hpp_ = J_.block(0, d_, d_, d_).cwiseAbs().rowwise().sum().maxCoeff();
    lu_.compute(J_);
    const auto u = lu_.matrixLU().diagonal().cwiseAbs();
    const double umax = u.maxCoeff(), umin = u.minCoeff();
    use_cod_ = !(umin > rank_tolerance * umax);
    if (use_cod_) {
      big_.compute(J_);
      note_rank(big_, t0_);
    } else {
      cond_max_ = std::max(cond_max_, umax / umin);
    }
    have_fact_ = true;
    return true;
  }

  /// Records a residual estimate in `stat`, raised to the round-off level of
  /// its evaluation, 4 eps max(1, |G|_inf |z|_inf) (z = q for g, H_p for
  /// G H_p): the estimates (last iterate's values, or scaled by the measured
  /// rate) then bound the residuals of the returned points up to round-off.
  static void record_residual(double& stat, double value, const Mat& G, double zn) {
    const double Gn = G.size() ? G.cwiseAbs().rowwise().sum().maxCoeff() : 0.0;
    const double floor = 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, Gn * zn);
    stat = std::max(stat, std::max(value, floor));
  }

  /// A step whose |g(q_1)| (bound) exceeds sqrt(tol) max(1, |q_1|) did not
  /// solve g = 0: with rank-deficient G (a zero gradient, a step across a
  /// singular configuration) the minimum-norm Newton iteration converges to
  /// a least-squares point instead.  Consistent redundant constraints still
  /// pass; the step is rejected (adaptive) or the run ends with the partial
  /// solution (fixed steps), never returned as if constrained.
  bool constraints_violated(double g_bound, const ConstVecRef& q) const {
    return !(g_bound <= std::sqrt(opts_.tol) * std::max(1.0, inf_norm(q)));
  }

  /// g(q_1) = 0 fixes the multipliers and the normal part of p_{1/2} only up
  /// to  floor = eps |q| / (|h| |H_pp|)  (round-off of g over the step), in
  /// units of max(1, |p|).  Their Newton corrections are weighted by
  /// min(1, tol / (10 floor)), so that tiny steps (adaptive starts) converge;
  /// the weight is 1 for ordinary steps.
  double roundoff_weight(double h, double hpp, const ConstVecRef& q, const ConstVecRef& p) const {
    if (!(hpp > 0.0)) return 1.0;
    const double floor = 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, inf_norm(q)) /
                         (std::abs(h) * hpp * std::max(1.0, inf_norm(p)));
    return std::min(1.0, opts_.tol / (10.0 * floor));
  }

  /// max_i w_i |dy_i| / max(1, |y_i|), w = roundoff_weight except for the
  /// RATTLE p_1, which the hidden constraint pins down to round-off.
  double scaled_norm(const ConstVecRef& dy, const ConstVecRef& y) const {
    const int d = d_;
    double s = 0.0;
    for (int i = 0; i < n_; ++i) {
      const double w = (!shake_ && i >= 2 * d && i < 3 * d) ? 1.0 : weight_;
      s = std::max(s, w * std::abs(dy(i)) / std::max(1.0, std::abs(y(i))));
    }
    return s;
  }

  /// Newton on F(y_) = 0 from the guess in y_.  Small systems (assembled_):
  /// J is re-formed at every iterate from the current G_0, G_1, H_p(q_1, p_1),
  /// M and the cached Hessians (no callback), so the iteration is Newton's
  /// up to the Hessians' age; those are refreshed when the contraction rate
  /// exceeds 0.1, and for the retry.  Larger systems: NewtonSolver's strategy
  /// (factorization kept across iterations and steps, one retry with a fresh
  /// Jacobian).  Either way the iterate is accepted from its correction
  /// alone, without a residual there; step_general then evaluates G at the
  /// accepted point.
  StepStatus newton_general() {
    Stats& st = problem_.stats();
    ++st.newton_solves;
    yg_ = y_;
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool fresh = false;
      if (attempt == 1) {
        y_ = yg_;
        need_hess_ = true;
      } else if (assembled_ && (!hess_static_ || ++static_age_ >= kStaticRecheck)) {
        need_hess_ = true;  // Hessians at this step's guess: Newton converges quadratically
      }
      if (!residual(y_, r_)) {
        have_fact_ = false;
        return StepStatus::NonFinite;
      }
      if (assembled_ || !have_fact_ || !opts_.reuse_factorization || attempt == 1) {
        fresh = !assembled_ || need_hess_;
        if (!refactor()) return StepStatus::NonFinite;
      }
      weight_ = roundoff_weight(h_, hpp_, q0_, p0_);
      double prev = std::numeric_limits<double>::infinity();
      long it = 0;
      while (it < opts_.max_iterations) {
        if (it > 0 && (assembled_ || !opts_.reuse_factorization) && !refactor()) break;
        if (use_cod_)
          big_.solve(r_, dy_);
        else
          dy_.noalias() = lu_.solve(r_);
        y_ -= dy_;
        ++it;
        ++st.newton_iterations;
        const double nd = scaled_norm(dy_, y_);
        if (!std::isfinite(nd)) break;
        const double theta = nd / prev;
        if (nd <= opts_.tol || (it > 1 && theta < 1.0 && theta / (1.0 - theta) * nd <= opts_.tol)) {
          finish(it);
          q1_ = q0_ + h_ * y_.head(d_);
          // Refresh for the next solve when the contraction degraded, or when
          // the iterations cost more calls than a new Jacobian would.
          if (!assembled_ && opts_.reuse_factorization && it > 1 &&
              (theta > opts_.refresh_rate || it >= refresh_after_))
            have_fact_ = false;
          return StepStatus::Success;
        }
        if (!residual(y_, r_)) break;
        if (it > 1 && theta >= 1.0) break;
        if (assembled_ && it > 1 && theta > kHessianRefreshRate) need_hess_ = true;
        prev = nd;
      }
      finish(it);
      if (fresh) break;
    }
    have_fact_ = false;
    need_hess_ = true;
    return StepStatus::NewtonDiverged;
  }

  StepStatus step_general(Point& from, double h, Point& to) {
    const int d = d_, m = m_;
    if (!set_context(from, h)) return StepStatus::NonFinite;
    // Starting guess: the previous step's increments scaled by h/h_prev;
    // along equal steps that continue each other, the increments are smooth
    // in the step index: 2 inc_n - inc_{n-1} (error O(h^3) in p, not O(h^2)).
    const bool chain = have_inc2_ && same_step(h, h_prev_) && same_step(h, h_prev2_) &&
                       (last_q1_.array() == q0_.array()).all();
    if (chain && have_inc3_ && same_step(h, h_prev3_)) {
      incx_ = 3.0 * (inc_ - inc2_) + inc3_;
    } else if (chain) {
      incx_ = 2.0 * inc_ - inc2_;
    } else if (have_inc_) {
      incx_ = (h / h_prev_) * inc_;
      incx_.head(d) = inc_.head(d);  // v is not scaled
    }
    if (have_inc_) {
      y_.head(d) = incx_.head(d);
      y_.segment(d, d) = p0_ + incx_.segment(d, d);
      y_.segment(2 * d, d) = p0_ + incx_.segment(2 * d, d);
      y_.tail(2 * m) = incx_.tail(2 * m);
    } else {  // an explicit Euler-like guess
      if (!problem_.field(from.t, from.x, work_)) return StepStatus::NonFinite;
      y_.head(d) = work_.head(d);
      y_.segment(d, d) = p0_ + (0.5 * h) * work_.tail(d);
      y_.segment(2 * d, d) = p0_ + h * work_.tail(d);
      y_.tail(2 * m).setZero();
      if (!from.has_force) {
        from.force = work_.tail(d);
        from.has_force = true;
      }
    }
    const StepStatus s = newton_general();
    if (s != StepStatus::Success) {
      have_inc_ = false;
      return s;
    }
    // G(q_1) at the accepted point: G(q_0) of the next step.  The recorded
    // residuals: the last iterate's when below 0.01 tol (the last correction
    // only reduces them, to O(|dy|^2)), else g and G H_p(q_1, p_1) measured
    // at the accepted point (first steps, poor guesses).
    Stats& st = problem_.stats();
    to.t = from.t + h;
    to.x.head(d) = q1_;
    to.x.tail(d) = y_.segment(2 * d, d);
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    const double small = kResidualAtIterate * opts_.tol;
    if (inf_norm(gv_) > small && !problem_.constraint(q1_, gv_)) return StepStatus::NonFinite;
    if (constraints_violated(inf_norm(gv_), q1_)) {
      have_inc_ = false;
      return StepStatus::ConstraintsViolated;
    }
    if (!problem_.constraint_grad(q1_, G1_)) return StepStatus::NonFinite;
    cache_store(q1_, G1_);
    record_residual(st.max_constraint_residual, inf_norm(gv_), G1_, inf_norm(q1_));
    to.has_force = false;
    if (!shake_) {
      if (inf_norm(r_.tail(m)) > small) {
        if (!problem_.field(to.t, to.x, fc_)) return StepStatus::NonFinite;
        hid_.noalias() = G1_ * fc_.head(d);
        to.force = fc_.tail(d);  // -H_q(q1, p1)
        to.has_force = true;
      } else {
        hid_ = r_.tail(m);
      }
      record_residual(st.max_hidden_residual, inf_norm(hid_), G1_, inf_norm(fc_.head(d)));
    }
    const bool cont = (last_q1_.array() == q0_.array()).all();
    have_inc3_ = have_inc2_ && cont;
    have_inc2_ = have_inc_ && cont;
    inc3_ = inc2_;
    h_prev3_ = h_prev2_;
    inc2_ = inc_;
    h_prev2_ = h_prev_;
    last_q1_ = q1_;
    inc_.head(d) = y_.head(d);
    inc_.segment(d, d) = y_.segment(d, d) - p0_;
    inc_.segment(2 * d, d) = y_.segment(2 * d, d) - p0_;
    inc_.tail(2 * m) = y_.tail(2 * m);
    h_prev_ = h;
    have_inc_ = true;
    return StepStatus::Success;
  }

  int d_, m_, n_;
  bool separable_, shake_;
  NewtonOptions opts_;
  Vec work_, x2_, gv_;
  Mat G0_, G1_;
  // G cache
  Vec cache_q_[kCache];
  Mat cache_G_[kCache];
  bool cache_ok_[kCache] = {false, false, false};
  int cache_next_ = 0;
  // separable path
  AffineVelocity velocity_;
  Mat Tpp_, B0_, TG1_, G1e_, last_G0_, S_, A_;
  MinNormSolver small_{std::max(m_, 1), rank_tolerance};
  Vec L_, Lprev_, Lprev2_, Lprev3_, M_, delta_, hid_;
  int nL_ = 0;  // length of the chain of equal steps behind Lprev_
  Vec ph_, pbase_, q1_, q1pred_, Tp_, F1_, pstar_, p1_, dp_, vtmp_, dq_prev_, last_q1_;
  bool have_tpp_ = false, have_guess_ = false, have_last_ = false;
  double h_prev_ = 0.0, last_h_ = 0.0;
  // general path
  Vec y_, yg_, r_, rp_, dy_, yp_, inc_, inc2_, inc3_, incx_;
  bool have_inc2_ = false, have_inc3_ = false;
  double h_prev2_ = 0.0, h_prev3_ = 0.0;
  Mat J_;
  Eigen::PartialPivLU<Mat> lu_;
  MinNormSolver big_{n_, rank_tolerance};
  Vec xa_, xb_, xc_, fa_, fb_, fc_;
  Mat Ha_, Hb_, Hc_, GH_;
  Vec q0_, p0_, q1G_;
  bool g1_valid_ = false;
  double t0_ = 0.0, h_ = 0.0;
  bool have_fact_ = false, use_cod_ = false, have_inc_ = false;
  int refresh_after_ = 3;
  // J re-formed at every iterate (small systems), Hessians cached
  bool assembled_ = false, need_hess_ = true;
  bool have_hess_ = false, hess_static_ = false;
  int static_age_ = 0;        // solves since the Hessians were last checked
  Mat Ha0_, Hb0_, Hc0_, GH0_;  // the Hessians of the last check
  Mat Gp_;
  static constexpr int kAssembleMaxSize = 64;
  static constexpr double kHessianRefreshRate = 0.01;
  static constexpr int kStaticRecheck = 16;
  double weight_ = 1.0, hpp_ = 0.0;
  // rank deficiency
  bool rank_seen_ = false;
  double rank_t_ = std::numeric_limits<double>::quiet_NaN();
  double cond_max_ = 1.0;
};

}  // namespace odepkg

#endif
