// GeneralRattle.hpp — RATTLE/SHAKE steps for general H(q, p) (Rattle's
// non-separable path): the step's nonlinear system, its residual and
// Jacobian (analytic from cached Hessians, or forward differences), the
// starting guess, and the Newton iteration that solves it.
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
#ifndef ODEPKG_CONSTRAINED_GENERAL_RATTLE_HPP
#define ODEPKG_CONSTRAINED_GENERAL_RATTLE_HPP

#include "ConstraintProjection.hpp"
#include "HamiltonianProblem.hpp"
#include "NewtonSolver.hpp"
#include "Stepper.hpp"
#include "constrained/RattleAcceptance.hpp"
#include "constrained/RattleState.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class GeneralRattle : private RattleAcceptance {
 public:
  explicit GeneralRattle(RattleState& shared)
      : shared_(shared),
        problem_(shared.problem),
        opts_(shared.opts),
        d_(shared.d),
        m_(shared.m),
        n_(3 * shared.d + 2 * std::max(shared.m, 1)),
        shake_(shared.shake),
        lu_(n_),
        big_(n_, RattleState::rank_tolerance) {
    const int d = d_, m = m_, n = n_;
    work_.resize(2 * d);
    G0_.resize(m, d);
    G1_.resize(m, d);
    gv_.resize(m);
    hid_.resize(m);
    q1_.resize(d);
    vtmp_.resize(d);
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

  /// Drop the factorization, the guesses and the Hessians.
  void reset() {
    have_fact_ = false;
    have_inc_ = false;
    have_inc2_ = have_inc3_ = false;
    need_hess_ = true;
    have_hess_ = hess_static_ = false;
  }

  /// One step: the guess, Newton, then G (and, while the last iterate's
  /// residuals are not small, g and f) at the accepted point.
  StepStatus step(Point& from, double h, Point& to) {
    const int d = d_, m = m_;
    if (!set_context(from, h)) return StepStatus::NonFinite;
    // Starting guess: the previous step's increments scaled by h/h_prev;
    // along equal steps that continue each other, the increments are smooth
    // in the step index: 2 inc_n - inc_{n-1} (error O(h^3) in p, not O(h^2)).
    const bool chain = have_inc2_ && same_step(h, shared_.h_prev) && same_step(h, h_prev2_) &&
                       (shared_.last_q1.array() == q0_.array()).all();
    if (chain && have_inc3_ && same_step(h, h_prev3_)) {
      incx_ = 3.0 * (inc_ - inc2_) + inc3_;
    } else if (chain) {
      incx_ = 2.0 * inc_ - inc2_;
    } else if (have_inc_) {
      incx_ = (h / shared_.h_prev) * inc_;
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
    if (constraints_violated(inf_norm(gv_), q1_, opts_.tol)) {
      have_inc_ = false;
      return StepStatus::ConstraintsViolated;
    }
    if (!problem_.constraint_grad(q1_, G1_)) return StepStatus::NonFinite;
    shared_.grads.store(q1_, G1_);
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
    const bool cont = (shared_.last_q1.array() == q0_.array()).all();
    have_inc3_ = have_inc2_ && cont;
    have_inc2_ = have_inc_ && cont;
    inc3_ = inc2_;
    h_prev3_ = h_prev2_;
    inc2_ = inc_;
    h_prev2_ = shared_.h_prev;
    shared_.last_q1 = q1_;
    inc_.head(d) = y_.head(d);
    inc_.segment(d, d) = y_.segment(d, d) - p0_;
    inc_.segment(2 * d, d) = y_.segment(2 * d, d) - p0_;
    inc_.tail(2 * m) = y_.tail(2 * m);
    shared_.h_prev = h;
    have_inc_ = true;
    return StepStatus::Success;
  }

  /// Size 3d + 2m of y = [v; p_{1/2}; p_1; h/2 lambda; h/2 mu].
  int system_size() const { return n_; }
  /// Residual of the system for the step (from, h) at y.
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
  static constexpr int kAssembleMaxSize = 64;
  static constexpr double kHessianRefreshRate = 0.01;
  static constexpr int kStaticRecheck = 16;

  /// Newton on F(y_) = 0 from the guess in y_.  Small systems (assembled_):
  /// J is re-formed at every iterate from the current G_0, G_1, H_p(q_1, p_1),
  /// M and the cached Hessians (no callback), so the iteration is Newton's
  /// up to the Hessians' age; those are refreshed when the contraction rate
  /// exceeds 0.1, and for the retry.  Larger systems: NewtonSolver's strategy
  /// (factorization kept across iterations and steps, one retry with a fresh
  /// Jacobian).  Either way the iterate is accepted from its correction
  /// alone, without a residual there; step() then evaluates G at the
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
      weight_ = roundoff_weight(h_, hpp_, q0_, p0_, opts_.tol);
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
        const double nd = scaled_norm(dy_, y_, d_, shake_, weight_);
        if (!std::isfinite(nd)) break;
        const double theta = nd / prev;
        if (nd <= opts_.tol || (it > 1 && theta < 1.0 && theta / (1.0 - theta) * nd <= opts_.tol)) {
          shared_.finish(it);
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
      shared_.finish(it);
      if (fresh) break;
    }
    have_fact_ = false;
    need_hess_ = true;
    return StepStatus::NewtonDiverged;
  }

  bool set_context(const Point& from, double h) {
    const int d = d_;
    q0_ = from.x.head(d);
    p0_ = from.x.tail(d);
    t0_ = from.t;
    h_ = h;
    xa_.head(d) = q0_;
    g1_valid_ = false;
    return shared_.grads.grad_at(q0_, G0_);
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
    use_cod_ = !(umin > RattleState::rank_tolerance * umax);
    if (use_cod_) {
      big_.compute(J_);
      shared_.note_rank(big_, t0_);
    } else {
      shared_.cond_max = std::max(shared_.cond_max, umax / umin);
    }
    have_fact_ = true;
    return true;
  }

  RattleState& shared_;
  HamiltonianProblem& problem_;
  const NewtonOptions& opts_;
  const int d_, m_, n_;
  const bool shake_;
  Vec work_, gv_, hid_, q1_, vtmp_;
  Mat G0_, G1_;
  Vec y_, yg_, r_, rp_, dy_, yp_, inc_, inc2_, inc3_, incx_;
  bool have_inc2_ = false, have_inc3_ = false;
  double h_prev2_ = 0.0, h_prev3_ = 0.0;
  Mat J_;
  Eigen::PartialPivLU<Mat> lu_;
  MinNormSolver big_;
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
  double weight_ = 1.0, hpp_ = 0.0;
};

}  // namespace odepkg

#endif
