// NonholonomicRattle.hpp — a symmetric RATTLE-type step for nonholonomic
// (velocity) constraints A(q) v = 0, v = H_p, alone or with holonomic
// g(q) = 0, for separable H = T(p) + V(q):
//
//   q' = H_p,  p' = -H_q - G(q)^T lambda - A(q)^T mu,  g(q) = 0,  A(q) H_p = 0.
//
// With C(q) = [G(q); A(q)] ((m + k) x d), F = -V_q, L = h/2 [lambda; mu_0],
// M = h/2 [lambda'; mu_1]:
//
//   p_{1/2} = p_0 + h/2 F(q_0) - C(q_0)^T L
//   q_1     = q_0 + h T_p(p_{1/2})
//   0       = g(q_1),   0 = A(q_{1/2}) T_p(p_{1/2}),   q_{1/2} = (q_0 + q_1)/2
//   p_1     = p_{1/2} + h/2 F(q_1) - C(q_1)^T M
//   0       = G(q_1) T_p(p_1),   0 = A(q_1) T_p(p_1).
//
// The holonomic part is RATTLE (Hairer, Lubich, Wanner, Geometric Numerical
// Integration, Sect. VII.1.4).  The velocity constraint of the first half
// kick is imposed at the midpoint q_{1/2} on the velocity of the drift, as in
// the reversible nonholonomic integrators of McLachlan and Perlmutter
// (J. Nonlinear Sci. 16, 2006, Sect. 4), whose symmetric scheme imposes the
// constraint at the midpoint; its final kick projects onto the constraint
// as RATTLE does.  Symmetry: the step with -h from (q_1, p_1) has the same
// p_{1/2}, with its first multiplier -M (the last kick read backwards) and
// its midpoint condition the same; its last condition A(q_0) T_p(p_0) = 0
// holds for data on the constraint.  So Phi_{-h} Phi_h = id (for the
// roots near the unconstrained step), the order is even and, the scheme
// being consistent, 2; symmetric compositions raise it (Hairer, Lubich,
// Wanner, Sect. V.3).  Nonholonomic systems are not Hamiltonian on the
// constraint distribution and the map is not symplectic; what it keeps is
// reversibility, which gives bounded energy errors without drift (Modin and
// Verdier, Numer. Math. 145, 2020).
//
// Solve.  The position stage is a chord iteration on L for the residual
// r(L) = [g(q_1)/h; A(q_{1/2}) v_{1/2}] with the matrix S = C_0 T_pp C_0^T
// (the Jacobian up to O(h): dr/dL = -[G_1; A_{1/2}] T_pp C_0^T + O(h)),
// solved in the minimum-norm sense (a singular C T_pp C^T: dependent rows
// of G and A, counted as rank-deficient).  v_{1/2} moves with L through the
// linear model v -= T_pp C_0^T dL, exact for quadratic T (learned and
// checked: AffineVelocity); one call of f at [q_1; p_{1/2}] then gives the
// force F(q_1) and checks v_{1/2} (otherwise the iteration continues from
// the true v).  When the chord iteration fails, the globalised Newton of
// the holonomic RATTLE (DampedMultiplierNewton: re-formed Jacobian,
// backtracking) solves the same equations, from the warm guess and from
// L = 0.  The velocity stage is the linear system C_1 T_pp C_1^T M =
// C_1 T_p(p*) (exact for quadratic T, iterated with f otherwise).  Per step
// for quadratic T: f once, g and A(q_{1/2}) once per iteration, G(q_1) and
// A(q_1) once (reused as G(q_0), A(q_0) of the next step).
#ifndef ODEPKG_CONSTRAINED_NONHOLONOMIC_RATTLE_HPP
#define ODEPKG_CONSTRAINED_NONHOLONOMIC_RATTLE_HPP

#include "ConstraintProjection.hpp"
#include "HamiltonianProblem.hpp"
#include "NewtonSolver.hpp"
#include "SameBits.hpp"
#include "Stepper.hpp"
#include "constrained/DampedMultiplierNewton.hpp"
#include "unconstrained/AffineVelocity.hpp"
#include "unconstrained/SeparabilityProbe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>

namespace odepkg {

class NonholonomicRattle final : public Stepper {
 public:
  /// A(q) (k x d) into A.
  using VelocityConstraint = std::function<void(const ConstVecRef& q, MatRef A)>;
  static constexpr double rank_tolerance = 1e-10;
  /// Error left in the multipliers' displacement accepted as round-off.
  static constexpr double kRoundoffLeft = 4 * std::numeric_limits<double>::epsilon();

  NonholonomicRattle(HamiltonianProblem& problem, int k, VelocityConstraint A,
                     NewtonOptions newton = NewtonOptions())
      : Stepper(problem),
        d_(problem.dim()),
        m_(problem.constraints()),
        k_(k),
        nc_(problem.constraints() + k),
        A_(std::move(A)),
        opts_(newton),
        velocity_(problem.dim()),
        separability_(problem.dim()),
        small_(problem.constraints() + k, rank_tolerance),
        damped_(problem.dim(), problem.constraints() + k, rank_tolerance) {
    if (k < 1) throw InputError("invalidInput", "NonholonomicFcn: the number k of velocity constraints must be >= 1");
    if (nc_ >= d_)
      throw InputError("invalidInput", "NonholonomicsNb + ConstraintsNb (" + std::to_string(nc_) +
                                           ") must be smaller than the dimension of q (" + std::to_string(d_) + ")");
    const int d = d_, nc = nc_;
    work_.resize(2 * d);
    x2_.resize(2 * d);
    C0_.resize(nc, d);
    C1_.resize(nc, d);
    Chat_.resize(nc, d);
    Am_.resize(k_, d);
    Tpp_.resize(d, d);
    B0_.resize(d, nc);
    TC1_.resize(d, nc);
    S_.resize(nc, nc);
    L_ = Vec::Zero(nc);
    Lprev_ = Vec::Zero(nc);
    Lsaved_ = Vec::Zero(nc);
    M_ = Vec::Zero(nc);
    ell_ = Vec::Zero(nc);
    lend_ = Vec::Zero(nc);
    dldh_ = Vec::Zero(nc);
    delta_.resize(nc);
    r_.resize(nc);
    hid_.resize(nc);
    gv_.resize(std::max(m_, 1));
    av_.resize(k_);
    for (Vec* v : {&ph_, &pbase_, &v_, &q1_, &qm_, &F1_, &pstar_, &vstar_, &p1_, &v1_, &dp_, &vt_})
      v->resize(d);
    last_q1_.setConstant(d, std::numeric_limits<double>::quiet_NaN());
  }

  const char* name() const override { return "nonholonomic_rattle"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }

  int velocity_constraints() const { return k_; }

  /// A(q) into A (k x d), counted; false if not finite.
  bool velocity_matrix(const ConstVecRef& q, MatRef A) {
    ++problem_.stats().nonholonomic_evals;
    A_(q, A);
    return A.allFinite();
  }

  /// The scheme needs a separable H = T(p) + V(q): probed at (t, x) (2 calls of f).
  void check_claims(double t, const ConstVecRef& x, const ConstVecRef& fx) override {
    const SeparabilityProbe::Finding r = separability_.probe(problem_, t, x, fx);
    if (r.separable) return;
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "NonholonomicFcn: the nonholonomic RATTLE needs a separable H = T(p) + V(q), but FCN is not "
                  "separable at t = %.15g: its %s changed by %g (round-off bound %g) when %s moved with %s fixed",
                  r.t, r.force_moved ? "p-part -dH/dq" : "q-part dH/dp", r.change, r.bound,
                  r.force_moved ? "p" : "q", r.force_moved ? "q" : "p");
    throw InputError("notSeparable", buf);
  }

  void reset() override {
    have_guess_ = false;
    have_last_ = false;
    have_tpp_ = false;
  }

  // Warm start for compositions: [L of the last step; its h].
  int guess_size() const override { return nc_ + 1; }
  void save_guess(VecRef g) const override {
    g.head(nc_) = Lprev_;
    g(nc_) = have_guess_ ? h_prev_ : 0.0;
  }
  void load_guess(const ConstVecRef& g) override {
    Lprev_ = g.head(nc_);
    h_prev_ = g(nc_);
    have_guess_ = h_prev_ != 0.0;
  }
  void begin_side_steps() override {
    Lsaved_ = Lprev_;
    h_saved_ = h_prev_;
    guess_saved_ = have_guess_;
  }
  void end_side_steps() override {
    Lprev_ = Lsaved_;
    h_prev_ = h_saved_;
    have_guess_ = guess_saved_;
  }

  /// Rank-deficient multiplier systems (dependent rows of [G; A]).
  bool rank_deficiency_seen() const { return rank_seen_; }
  double rank_deficiency_t() const { return rank_t_; }
  double condition_estimate() const { return cond_max_; }

  StepStatus step(Point& from, double h, Point& to) override {
    const StepStatus s = step_impl(from, h, to, false);
    if (s != StepStatus::NewtonDiverged) return s;
    ++problem_.stats().newton_retries;
    return step_impl(from, h, to, true);
  }

  /// Initial data: p moved along C(q)^T (C = [G; A]) until C(q) T_p(p) = 0,
  /// minimum-norm in the metric T_pp (the holonomic q is projected before,
  /// ConstraintProjection.hpp).  Returns |A(q) T_p(p)|_inf before and after.
  struct InitialProjection {
    double before = 0.0, after = 0.0;
    bool finite = true, converged = true;
  };
  InitialProjection project_initial(double t, Vec& x) {
    InitialProjection out;
    const int d = d_;
    Mat C(nc_, d), T(d, d), TC(d, nc_), K(nc_, nc_);
    Vec f(2 * d), w(nc_), dl(nc_);
    MinNormSolver solver(nc_, rank_tolerance);
    if (!constraint_rows(x.head(d), C) || !problem_.field(t, x, f)) {
      out.finite = false;
      return out;
    }
    out.before = (C.bottomRows(k_) * f.head(d)).lpNorm<Eigen::Infinity>();
    if (!problem_.field_jacobian_block(t, x, 0, 1, T)) {
      out.finite = false;
      return out;
    }
    TC.noalias() = T * C.transpose();
    K.noalias() = C * TC;
    if (!solver.compute(K)) {
      out.finite = false;
      return out;
    }
    out.converged = false;
    for (int it = 0; it < 20; ++it) {
      w.noalias() = C * f.head(d);
      const double scale = std::max(1.0, f.head(d).lpNorm<Eigen::Infinity>()) *
                           std::max(1.0, C.cwiseAbs().rowwise().sum().maxCoeff());
      if (w.lpNorm<Eigen::Infinity>() <= 1e-14 * scale) {
        out.converged = true;
        break;
      }
      solver.solve(w, dl);
      x.tail(d).noalias() -= C.transpose() * dl;
      if (!problem_.field(t, x, f)) {
        out.finite = false;
        return out;
      }
    }
    out.after = (C.bottomRows(k_) * f.head(d)).lpNorm<Eigen::Infinity>();
    return out;
  }

 private:
  static double inf_norm(const ConstVecRef& v) { return v.lpNorm<Eigen::Infinity>(); }
  static double row_norm(const Mat& A) { return A.size() ? A.cwiseAbs().rowwise().sum().maxCoeff() : 0.0; }

  /// C(q) = [G(q); A(q)].
  bool constraint_rows(const ConstVecRef& q, Mat& C) {
    if (m_ > 0 && !problem_.constraint_grad(q, C.topRows(m_))) return false;
    return velocity_matrix(q, C.bottomRows(k_));
  }

  void note_rank(double t) {
    cond_max_ = std::max(cond_max_, small_.condition_estimate());
    if (!small_.rank_deficient()) return;
    ++problem_.stats().rank_deficient;
    if (!rank_seen_) {
      rank_seen_ = true;
      rank_t_ = t;
    }
  }

  /// T_p(p) into v: the model where active, else a call of f at [q0; p]
  /// (separable: T_p does not depend on q).
  bool velocity_at(double t, const ConstVecRef& q0, const ConstVecRef& p, Vec& v) {
    if (velocity_.active()) {
      v = velocity_.predict(p);
      return true;
    }
    x2_.head(d_) = q0;
    x2_.tail(d_) = p;
    if (!problem_.field(t, x2_, work_)) return false;
    v = work_.head(d_);
    return true;
  }

  /// out = T_pp X (the model's matrix where active).
  template <class In, class Out>
  void apply_tpp(const In& X, Out& out) const {
    if (velocity_.active())
      velocity_.apply(X, out);
    else
      out.noalias() = Tpp_ * X;
  }

  /// r = [g(q_1)/h; A(q_{1/2}) v] for q_1 = q_0 + h v; Am_ = A(q_{1/2}).
  bool position_residual(const ConstVecRef& q0, double h) {
    q1_ = q0 + h * v_;
    qm_ = 0.5 * (q0 + q1_);
    if (m_ > 0) {
      if (!problem_.constraint(q1_, gv_)) return false;
      r_.head(m_) = gv_ / h;
    }
    if (!velocity_matrix(qm_, Am_)) return false;
    av_.noalias() = Am_ * v_;
    r_.tail(k_) = av_;
    return true;
  }

  /// |g(q_1)| and |A(q_{1/2}) v| at the round-off of their evaluation.
  bool at_roundoff() const {
    const double eps = std::numeric_limits<double>::epsilon();
    const double fa = 8 * eps * std::max(1.0, row_norm(Am_) * inf_norm(v_));
    if (inf_norm(av_) > fa) return false;
    if (m_ == 0) return true;
    return inf_norm(gv_) <= DampedMultiplierNewton::residual_floor(row_norm(C0_), inf_norm(q1_));
  }

  StepStatus step_impl(Point& from, double h, Point& to, bool globalised) {
    const int d = d_;
    Stats& st = problem_.stats();
    const double t1 = from.t + h;
    if (!from.has_force) {
      if (!problem_.field(from.t, from.x, work_)) return StepStatus::NonFinite;
      from.force = work_.tail(d);
      from.has_force = true;
    }
    const auto q0 = from.x.head(d);
    velocity_.prepare(problem_, from.t, from.x);
    // C(q_0): the last step's C(q_1) when this step continues it
    const bool continues = have_last_ && same_bits(last_q1_, q0);
    if (continues) {
      C0_ = C1_;
    } else if (!constraint_rows(q0, C0_)) {
      return StepStatus::NonFinite;
    }
    if (!velocity_.active() && (!have_tpp_ || globalised)) {
      if (!problem_.field_jacobian_block(from.t, from.x, 0, 1, Tpp_)) return StepStatus::NonFinite;
      have_tpp_ = true;
    }
    apply_tpp(C0_.transpose(), B0_);
    pbase_ = from.x.tail(d) + (0.5 * h) * from.force;
    ++st.newton_solves;

    // 1. Position stage: L with g(q_1) = 0, A(q_{1/2}) v_{1/2} = 0.
    // The warm start along a chain of steps: by the symmetry the last step's
    // 2M/h is the multiplier 2L/h of the step -h_prev from q_0, so
    // 2L/h ~ 2M_prev/h_prev + (h + h_prev) d(2L/h)/dh, the derivative the
    // difference quotient of the last step's pair (O(h^2) from the root);
    // otherwise the last step's (or, in a composition, the same stage's) L
    // scaled by h/h_prev (O(h)).
    if (continues) {
      ell_ = lend_;
      if (have_dldh_) ell_ += (h + h_last_) * dldh_;
      L_ = (0.5 * h) * ell_;
    } else if (have_guess_) {
      L_ = (h / h_prev_) * Lprev_;
    } else {
      L_.setZero();
    }
    warm_ = continues || have_guess_;
    long it = 0;
    bool ok = false;
    if (globalised) {
      const StepStatus g = solve_globalised(from, h);
      if (g != StepStatus::Success) {
        have_guess_ = have_last_ = have_tpp_ = false;
        return g;
      }
      ok = true;
    } else {
      S_.noalias() = C0_ * B0_;
      if (!small_.compute(S_)) return StepStatus::NonFinite;
      note_rank(from.t);
      ph_ = pbase_;
      ph_.noalias() -= C0_.transpose() * L_;
      if (!velocity_at(t1, q0, ph_, v_)) return StepStatus::NonFinite;
    }
    // passes: chord iterations with v moved linearly, then one call of f at
    // [q_1; p_{1/2}] (force F(q_1), check of v); on a miss, again from the true v
    for (int pass = 0; pass <= opts_.max_iterations; ++pass) {
      if (!ok) {
        double prev = std::numeric_limits<double>::infinity();
        for (int pass_it = 0;; ++pass_it) {
          if (!position_residual(q0, h)) return StepStatus::NonFinite;
          if (at_roundoff()) {
            ok = true;
            break;
          }
          small_.solve(r_, delta_);
          dp_.noalias() = C0_.transpose() * delta_;
          const double nd = inf_norm(dp_) / std::max(1.0, inf_norm(ph_));
          if (!std::isfinite(nd)) break;
          L_ += delta_;
          ph_ -= dp_;
          v_.noalias() -= B0_ * delta_;
          // Converged when the error left after this correction, bounded by
          // theta/(1 - theta) |delta| (Hairer, Wanner, Solving ODEs II,
          // (IV.8.10)), is at round-off, or when the corrections below the
          // tolerance stop contracting (round-off noise): an error of the
          // size of the tolerance would break the symmetry at that size.
          // The first correction of a pass has no rate of its own: the last
          // one measured stands for it (the chord matrix changes little).
          const bool measured = pass_it > 0;
          const double theta = measured ? nd / prev : theta_last_;
          if (measured && theta < 1.0) theta_last_ = theta;
          if (nd <= opts_.tol &&
              (nd <= kRoundoffLeft || (measured && theta >= 0.5) || it >= opts_.max_iterations ||
               (theta < 0.5 && theta / (1.0 - theta) * nd <= kRoundoffLeft))) {
            q1_ = q0 + h * v_;
            ok = true;
            break;
          }
          if (nd > opts_.tol && ((it > 0 && nd >= prev) || it >= opts_.max_iterations)) break;
          prev = nd;
          ++it;
          ++st.newton_iterations;
        }
        st.newton_max_iterations = std::max(st.newton_max_iterations, it);
        if (!ok) {
          have_guess_ = have_last_ = have_tpp_ = false;
          return StepStatus::NewtonDiverged;
        }
      }
      x2_.head(d) = q1_;
      x2_.tail(d) = ph_;
      if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
      vt_ = work_.head(d);
      if (velocity_.active()) {
        velocity_.predict(ph_);
        if (velocity_.confirm(ph_, vt_)) break;  // the model holds: v_ is T_p(p_{1/2})
      } else {
        const double eps = std::numeric_limits<double>::epsilon();
        const double miss = (vt_ - v_).lpNorm<Eigen::Infinity>();
        if (miss <= 1e3 * eps * (row_norm(Tpp_) * inf_norm(ph_) + inf_norm(vt_))) break;
      }
      if (pass == opts_.max_iterations) return StepStatus::NewtonDiverged;
      v_ = vt_;  // T not quadratic (or the model dropped): on from the true v
      if (!have_tpp_) {
        if (!problem_.field_jacobian_block(from.t, from.x, 0, 1, Tpp_)) return StepStatus::NonFinite;
        have_tpp_ = true;
      }
      ok = false;
    }
    F1_ = work_.tail(d);
    if (m_ > 0) record(st.max_constraint_residual, inf_norm(gv_));

    // 2. Velocity stage: C_1 T_p(p* - C_1^T M) = 0, p* = p_{1/2} + h/2 F(q_1).
    if (!constraint_rows(q1_, C1_)) return StepStatus::NonFinite;
    pstar_ = ph_ + (0.5 * h) * F1_;
    apply_tpp(F1_, vstar_);
    vstar_ = v_ + (0.5 * h) * vstar_;  // T_p(p*), exact for quadratic T
    apply_tpp(C1_.transpose(), TC1_);
    S_.noalias() = C1_ * TC1_;
    if (!small_.compute(S_)) return StepStatus::NonFinite;
    note_rank(from.t);
    hid_.noalias() = C1_ * vstar_;
    small_.solve(hid_, M_);
    p1_ = pstar_;
    p1_.noalias() -= C1_.transpose() * M_;
    v1_ = vstar_;
    v1_.noalias() -= TC1_ * M_;
    if (!velocity_.active()) {  // T_p(p_1) from f, M corrected until C_1 T_p(p_1) = 0
      double prev = std::numeric_limits<double>::infinity();
      long it2 = 0;
      for (;;) {
        x2_.head(d) = q1_;
        x2_.tail(d) = p1_;
        if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
        v1_ = work_.head(d);
        hid_.noalias() = C1_ * v1_;
        small_.solve(hid_, delta_);
        dp_.noalias() = C1_.transpose() * delta_;
        const double nd = inf_norm(dp_) / std::max(1.0, inf_norm(p1_));
        if (!std::isfinite(nd)) return StepStatus::NewtonDiverged;
        // a chord iteration (T_pp of an earlier state): the last correction
        // applied when the error it leaves, theta/(1 - theta) |delta|, is at
        // round-off, or when corrections below the tolerance stop contracting
        const double theta = it2 > 0 ? nd / prev : 1.0;
        if (nd <= opts_.tol && (nd <= kRoundoffLeft || it2 >= opts_.max_iterations ||
                                (it2 > 0 && (theta >= 0.5 || theta / (1.0 - theta) * nd <= kRoundoffLeft)))) {
          M_ += delta_;
          p1_ -= dp_;
          v1_.noalias() -= TC1_ * delta_;
          break;
        }
        if ((it2 > 0 && nd >= prev) || it2 >= opts_.max_iterations) {
          have_tpp_ = false;
          return StepStatus::NewtonDiverged;
        }
        prev = nd;
        M_ += delta_;
        p1_ -= dp_;
        ++it2;
        ++st.newton_iterations;
      }
    }
    hid_.noalias() = C1_ * v1_;
    if (m_ > 0) record(st.max_hidden_residual, inf_norm(hid_.head(m_)));
    record(st.max_nonholonomic_residual, inf_norm(hid_.tail(k_)));
    to.force = F1_;  // separable: the force depends on q only
    to.has_force = true;
    to.t = t1;
    to.x.head(d) = q1_;
    to.x.tail(d) = p1_;
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    // continuity and the guess of the next step: d(2L/h)/dh at q_0 unless
    // the two sizes nearly cancel (a composition's sign change)
    ell_ = (2.0 / h) * L_;
    if (continues && std::abs(h + h_last_) > 0.25 * std::max(std::abs(h), std::abs(h_last_))) {
      dldh_ = (ell_ - lend_) / (h + h_last_);
      have_dldh_ = true;
    } else if (!continues) {
      have_dldh_ = false;
    }
    lend_ = (2.0 / h) * M_;
    h_last_ = h;
    last_q1_ = q1_;
    have_last_ = true;
    Lprev_ = L_;
    h_prev_ = h;
    have_guess_ = true;
    return StepStatus::Success;
  }

  static void record(double& slot, double value) { slot = std::max(slot, value); }

  /// The position stage by the globalised Newton of RATTLE
  /// (DampedMultiplierNewton) on r(L) = [g(q_1); h A(q_{1/2}) v_{1/2}],
  /// whose Jacobian is -h [G(q_1); A(q_{1/2})] T_pp C_0^T up to the O(h^2)
  /// derivative of A: from the warm guess, then from L = 0.  On success
  /// L_, ph_, v_, q1_, gv_ are the step's (the true T_p(p_{1/2})).
  StepStatus solve_globalised(const Point& from, double h) {
    const int d = d_;
    Stats& st = problem_.stats();
    const double t1 = from.t + h;
    const auto q0 = from.x.head(d);
    Vec& rr = r_;
    auto eval = [&](const ConstVecRef& L, Vec& q1, Vec& r) {
      ph_ = pbase_;
      ph_.noalias() -= C0_.transpose() * L;
      if (!velocity_at(t1, q0, ph_, v_)) return false;
      q1 = q0 + h * v_;
      qm_ = 0.5 * (q0 + q1);
      if (m_ > 0) {
        if (!problem_.constraint(q1, gv_)) return false;
        r.head(m_) = gv_;
      }
      if (!velocity_matrix(qm_, Am_)) return false;
      r.tail(k_).noalias() = h * (Am_ * v_);
      return true;
    };
    auto grad = [&](const Vec& q1, Mat& C) {
      if (m_ > 0 && !problem_.constraint_grad(q1, C.topRows(m_))) return false;
      qm_ = 0.5 * (q0 + q1);
      return velocity_matrix(qm_, C.bottomRows(k_));
    };
    auto note = [&](const MinNormSolver& s) {
      cond_max_ = std::max(cond_max_, s.condition_estimate());
      if (s.rank_deficient()) ++st.rank_deficient;
    };
    for (int start = 0; start < 2; ++start) {
      if (start == 1) L_.setZero();
      else if (!warm_) continue;
      const auto out = damped_.solve(eval, grad, note, B0_, h, opts_.max_iterations, L_, q1_, rr, Chat_, st);
      if (out == DampedMultiplierNewton::Outcome::NonFinite) return StepStatus::NonFinite;
      if (out == DampedMultiplierNewton::Outcome::Converged) {
        // the state of the returned L (eval's last call may have been a rejected trial)
        if (!eval(L_, q1_, rr)) return StepStatus::NonFinite;
        av_ = rr.tail(k_) / h;
        return StepStatus::Success;
      }
    }
    return StepStatus::NewtonDiverged;
  }

  const int d_, m_, k_, nc_;
  VelocityConstraint A_;
  const NewtonOptions opts_;
  AffineVelocity velocity_;
  SeparabilityProbe separability_;
  MinNormSolver small_;
  DampedMultiplierNewton damped_;
  Vec work_, x2_;
  Mat C0_, C1_, Chat_, Am_, Tpp_, B0_, TC1_, S_;
  Vec L_, Lprev_, Lsaved_, M_, delta_, r_, hid_, gv_, av_;
  Vec ell_, lend_, dldh_;  // 2L/h; 2M/h of the last step; d(2L/h)/dh of the chain
  Vec ph_, pbase_, v_, q1_, qm_, F1_, pstar_, vstar_, p1_, v1_, dp_, vt_;
  Vec last_q1_;
  double h_prev_ = 0.0, h_saved_ = 0.0, h_last_ = 0.0;
  double theta_last_ = 1.0;  // the last contraction rate measured (1: none yet)
  bool have_guess_ = false, guess_saved_ = false, have_last_ = false, have_tpp_ = false;
  bool have_dldh_ = false, warm_ = false;
  bool rank_seen_ = false;
  double rank_t_ = std::numeric_limits<double>::quiet_NaN();
  double cond_max_ = 1.0;
};

}  // namespace odepkg

#endif
