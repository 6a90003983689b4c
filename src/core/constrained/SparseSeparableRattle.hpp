// SparseSeparableRattle.hpp — SeparableRattle's RATTLE/SHAKE steps for a
// separable H = T(p) + V(q) with a sparse constraint gradient G (m x d):
// the same mathematics, in O(nnz(G) + d) time and memory per step, no m x d,
// m x m or d x d dense matrix anywhere.
//
// As in SeparableRattle (read its header): Newton on the position
// multipliers L with r(L) = g(q_1(L)),
//   p_{1/2} = p_0 + h/2 F_0 - G_0^T L,  q_1 = q_0 + h T_p(p_{1/2}),
// Jacobian -h S, S = G_1 W G_0^T (G_1 extrapolated from the last steps, W
// the diagonal of T_pp), then the velocity multipliers M from
// G_1 T_p(p_1) = 0, p_1 = p_{1/2} + h/2 F_1 - G_1^T M, Newton matrix
// K_1 = G_1 W G_1^T; for quadratic T (AffineVelocity, here always its
// diagonal model, learned after 8 steps from 3 calls of f) the position
// Newton calls g only and M solves one linear system; that step's vector
// work is a few passes over the columns of G (AffineRattleSweeps.hpp) and
// G_1 v goes over G_1's rows (SparseRowView.hpp).
//
// Position Newton matrix: first the simplified one, K_0 = G_0 W G_0^T,
// which the last step's velocity system has already factorized (no
// factorization and no extrapolated G_1: one solve per iteration).  Its
// contraction |I - K_0^+ S| = O(h |G_1 - G_0| / |G|) is measured on every
// step (1e-4 to 2e-2 on a released chain at h = 1e-2); above
// kSimplifiedRate, when Newton needs a third call of g, or fails, the next
// kExactSteps steps take S itself (below), whose Newton converges
// quadratically, and K_0 is tried again after them.
//
// Linear algebra (SparseGramSolver): K_1 = G_1 W G_1^T is symmetric
// semidefinite and is factorized by a sparse LDL^T (symbolic analysis once
// per run, the pattern of G being fixed).  The position matrix S is not
// symmetric (G_1 != G_0).  When its pattern (that of K) is banded (a chain:
// tridiagonal) S is factorized directly, once per step, by a banded LU
// without pivoting (factor_product), and every Newton iteration costs one
// O(m) solve.  Otherwise S x = r is solved by the iteration
// x <- x + K^+ (r - S x) preconditioned with the factorization of the last
// velocity system, K = G_0 W G_0^T (this step's start is the last step's
// end, so it is already there).  Its contraction is |K^+ (K - S)| =
// O(h |G_1 - G_0| / |G|) (measured 2e-4 to 1.3e-3 on chains at h = 1e-2,
// N = 10^3 to 10^5: one or two iterations); without convergence K is
// refactorized at G_1 and the iteration restarted.  The position Newton is
// then an inexact Newton with corrections 1e-6 relative (kInnerTol).
//
// W: the learned diagonal A of T_p = A p + b when the quadratic model is
// active; before that (the first 8 steps) or for a non-quadratic T, the
// diagonal of T_pp from one probe of f moving every p_i (2 calls, repeated
// only when Newton converges slowly).  A T_pp far from diagonal makes these
// Newton matrices poor, so Newton converges slowly or not at all (the
// usual mechanical systems have diagonal masses).
//
// Redundant constraints or singular configurations: pivots of LDL^T below
// RattleState::rank_tolerance times the largest are dropped
// (SparseGramSolver), counted and reported as by the dense path
// (odepkg:singularConstraints); the multipliers are then a solution of the
// consistent singular system, not the minimum-norm one — the constraint
// forces G^T L, G^T M, and so the trajectory, are the same.
#ifndef ODEPKG_CONSTRAINED_SPARSE_SEPARABLE_RATTLE_HPP
#define ODEPKG_CONSTRAINED_SPARSE_SEPARABLE_RATTLE_HPP

#include "SameBits.hpp"
#include "Stepper.hpp"
#include "constrained/AffineRattleSweeps.hpp"
#include "constrained/RattleAcceptance.hpp"
#include "constrained/RattleState.hpp"
#include "constrained/SparseDampedMultiplierNewton.hpp"
#include "constrained/SparseGramSolver.hpp"
#include "constrained/SparseRowView.hpp"
#include "unconstrained/AffineVelocity.hpp"
#include "unconstrained/SeparabilityProbe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class SparseSeparableRattle : private RattleAcceptance {
 public:
  /// Iterations of x <- x + K^+ (r - S x) before K is refactorized.
  static constexpr int kInner = 12;
  /// Relative accuracy of the solution of S x = r: an inexact Newton
  /// (Dembo, Eisenstat, Steihaug 1982) whose corrections are 1e-6 relative
  /// converges as fast as the exact one from the guesses' distance (<= 1e-6
  /// relative after extrapolation): its second correction is negligible.
  static constexpr double kInnerTol = 1e-6;
  /// Contraction of the simplified Newton (matrix K_0) above which S is
  /// taken for the next kExactSteps steps: from extrapolated guesses
  /// (within ~1e-6) two iterations at 1e-2 leave round-off, as Newton with
  /// S does; at higher rates K_0 costs more calls of g than S saves.
  static constexpr double kSimplifiedRate = 1e-2;
  static constexpr int kExactSteps = 32;
  /// Corrections (relative) below which their ratio is round-off, not a
  /// contraction.
  static constexpr double kRateFloor = 1e-12;
  /// Half the largest double: the bound on |p_{1/2}| of the position Newton.
  static constexpr double kHalfMax = 0.5 * std::numeric_limits<double>::max();
  /// Relative change of the multipliers from the last step's within which
  /// the root is taken as on the last root's branch (near_last_root()).
  static constexpr double kSameBranch = 0.125;

  /// The next step's position Newton takes K_0 (false: S).
  bool simplified_newton() const { return exact_steps_left_ == 0; }
  /// Position Newton solves that took S (the others took K_0).
  long exact_newton_solves() const { return exact_solves_; }
  /// The learned model of T_p (AffineVelocity.hpp) the quadratic-T step uses.
  const AffineVelocity& velocity_model() const { return velocity_; }

  explicit SparseSeparableRattle(RattleState& shared)
      : shared_(shared),
        problem_(shared.problem),
        opts_(shared.opts),
        d_(shared.d),
        m_(shared.m),
        shake_(shared.shake),
        velocity_(shared.d, true),
        separability_(shared.d),
        K_(RattleState::rank_tolerance),
        err_(RattleState::rank_tolerance),
        S_(RattleState::rank_tolerance),
        branch_(RattleState::rank_tolerance),
        damped_(shared.d, shared.m, RattleState::rank_tolerance) {
    const int d = d_, m = m_;
    work_.resize(2 * d);
    work2_.resize(2 * d);
    x2_.resize(2 * d);
    gv_.resize(m);
    L_ = Vec::Zero(m);
    dfree_.resize(d);
    Lprev_ = Vec::Zero(m);
    Lprev2_ = Vec::Zero(m);
    Lprev3_ = Vec::Zero(m);
    M_ = Vec::Zero(m);
    delta_.resize(m);
    hid_.resize(m);
    r_.resize(m);
    c_.resize(m);
    ph_.resize(d);
    pbase_.resize(d);
    q1_.resize(d);
    q1pred_.resize(d);
    Tp_.resize(d);
    F1_.resize(d);
    pstar_.resize(d);
    p1_.resize(d);
    dp_.resize(d);
    u_.resize(d);
    us_.resize(d);
    vtmp_.resize(d);
    vel_.resize(d);
    W_ = Vec::Ones(d);
    dq_prev_ = Vec::Zero(d);
    rows_.resize(m);
    for (auto& q : cache_q_) q.setConstant(d, std::numeric_limits<double>::quiet_NaN());
  }

  /// The probe of separability at (t, x), fx = f(t, x): 2 calls of f.
  void check_claims(double t, const ConstVecRef& x, const ConstVecRef& fx) {
    const SeparabilityProbe::Finding r = separability_.probe(problem_, t, x, fx);
    if (!r.separable) SeparabilityProbe::refuse(r);
  }

  void reset() {
    have_G0_ = false;
    have_guess_ = false;
    have_last_ = false;
    have_tpp_ = false;
    S_tried_ = false;
    exact_steps_left_ = 0;
    K_.invalidate();
  }

  /// One step: the quadratic-T path when its model is active and holds,
  /// else the general one; when their fast iterations fail or reach a root
  /// off the branch of the unconstrained step, the step is solved again by
  /// the globalised Newton (SparseDampedMultiplierNewton) from the warm
  /// guess and from L = 0, as SeparableRattle::step does.
  StepStatus step(Point& from, double h, Point& to) {
    const SingleThreadedEigen single;
    StepStatus s = StepStatus::NewtonDiverged;
    bool done = false;
    if (velocity_.prepare(problem_, from.t, from.x)) done = step_affine(from, h, to, s);
    if (!done) s = step_separable(from, h, to, false);
    if (s != StepStatus::NewtonDiverged && s != StepStatus::DistantRoot) return s;
    ++problem_.stats().newton_retries;
    return step_separable(from, h, to, true);
  }

  /// SHAKE's error estimate without its O(h) normal momentum (Rattle::
  /// restrict_error): e_p <- e_p - G^T (G G^T)^+ G e_p at q_1.
  bool restrict_momenta(const ConstVecRef& q1, VecRef ep) {
    const SingleThreadedEigen single;
    if (!grad_at(q1, Gerr_)) return false;
    if (!err_.factor(Gerr_, Vec::Ones(d_), pattern_token(Gerr_)) || err_.rank_deficient()) return true;
    r_.noalias() = Gerr_ * ep;
    err_.solve(r_, c_);
    ep.noalias() -= Gerr_.transpose() * c_;
    return true;
  }

 private:
  // ---- the general separable step ------------------------------------------
  StepStatus step_separable(Point& from, double h, Point& to, bool globalised) {
    const int d = d_;
    Stats& st = problem_.stats();
    if (!shared_.ensure_force(from, work_)) return StepStatus::NonFinite;
    const auto q0 = from.x.head(d);
    const double t1 = from.t + h;
    const bool extrap = continues(q0);
    if (!grad_at_q0(q0, extrap)) return StepStatus::NonFinite;
    const double s = have_guess_ ? h / shared_.h_prev : 0.0;
    pbase_ = from.x.tail(d) + (0.5 * h) * from.force;
    ++st.newton_solves;

    bool ok = false;
    double theta = 0.0, rate = 0.0;
    long it = 0;
    if (globalised) {
      const StepStatus g = solve_globalised(from, h, s, extrap);
      if (g != StepStatus::Success) {
        have_tpp_ = have_guess_ = false;
        return g;
      }
      ok = true;
    }
    for (int attempt = 0; attempt < 2 && !ok; ++attempt) {
      const bool fresh = attempt == 1 || (!have_tpp_ && !extrap);
      if (attempt == 1 || !have_tpp_) {
        if (!estimate_tpp(from.t, from.x)) return StepStatus::NonFinite;
        have_tpp_ = true;
        K_.invalidate();  // its W is stale
      }
      if (!prepare_K(G0_, W_, from.t)) return StepStatus::NonFinite;
      const double weight = roundoff_weight(h, W_.lpNorm<Eigen::Infinity>(), q0, from.x.tail(d), opts_.tol);
      simplified_ = exact_steps_left_ == 0;
      bool have_S = simplified_;  // G1e is needed for S only
      if (!simplified_ && attempt == 0 && extrap) {
        extrapolate_G1(h);
        have_S = true;
      }
      guess_L(s, h, extrap);
      ph_ = pbase_;
      ph_.noalias() -= G0_.transpose() * L_;
      q1pred_ = q0;
      if (have_dq_) q1pred_ += s * dq_prev_;
      double prev = std::numeric_limits<double>::infinity();
      it = 0;
      for (;;) {
        x2_.head(d) = q1pred_;
        x2_.tail(d) = ph_;
        if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
        Tp_ = work_.head(d);
        q1_ = q0 + h * Tp_;
        if (!problem_.constraint(q1_, gv_)) return StepStatus::NonFinite;
        if (!have_S) {
          S_tried_ = false;
          if (!problem_.constraint_grad_sparse(q1_, G1e_)) return StepStatus::NonFinite;
          have_S = true;
        }
        solve_S(W_, gv_, delta_, from.t, 1e-3 * opts_.tol * std::abs(h) * std::max(1.0, inf_norm(ph_)) / weight);
        delta_ /= h;
        dp_.noalias() = G0_.transpose() * delta_;
        const double nd = weight * inf_norm(dp_) / std::max(1.0, inf_norm(ph_));
        if (!std::isfinite(nd)) break;
        if (it > 0) theta = nd / prev;
        if (it > 0 && nd > kRateFloor) rate = std::max(rate, theta);
        if (nd <= opts_.tol) {
          L_ += delta_;
          ph_ -= dp_;
          u_ = W_.cwiseProduct(dp_);  // T_pp G_0^T delta
          Tp_ -= u_;
          q1_.noalias() -= h * u_;
          q1pred_.noalias() -= h * u_;
          ok = true;
          break;
        }
        if ((it > 0 && theta >= 1.0) || it >= opts_.max_iterations) {
          // stagnation with g as small as it can be evaluated (G ~ G_0): a
          // root (tiny steps, near-singular S: the correction asked for is
          // round-off amplified); q_1, p_{1/2}, L are those g was taken at
          ok = at_roundoff(gv_, G0_, q1_);
          break;
        }
        prev = nd;
        L_ += delta_;
        ph_ -= dp_;
        q1pred_ = q1_;
        q1pred_.noalias() -= h * W_.cwiseProduct(dp_);
        ++it;
        ++st.newton_iterations;
      }
      shared_.finish(it);
      const bool was_simplified = simplified_;
      judge_simplified(ok, rate, it);
      if (!ok && fresh && !was_simplified) break;
    }
    if (!ok) {
      have_tpp_ = have_last_ = have_guess_ = false;
      return StepStatus::NewtonDiverged;
    }
    if (!globalised && !near_last_root(h, extrap) &&
        off_branch(q0, q1_, h, W_, DampedMultiplierNewton::kDoubtRatio))  // the globalised solve looks again
      return StepStatus::DistantRoot;
    if (it > 1 && theta > opts_.refresh_rate) have_tpp_ = false;
    if (constraints_violated(inf_norm(gv_), q1_, opts_.tol)) return StepStatus::ConstraintsViolated;
    record_residual_norm(st.max_constraint_residual, inf_norm(gv_), row_norm(G1e_), inf_norm(q1_));

    // 2. Force at q_1 (reused from the last evaluation if it was at q_1).
    if ((q1_ - q1pred_).lpNorm<Eigen::Infinity>() >
        4 * std::numeric_limits<double>::epsilon() * std::max(1.0, inf_norm(q1_))) {
      x2_.head(d) = q1_;
      x2_.tail(d) = ph_;
      if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
    }
    F1_ = work_.tail(d);
    if (!problem_.constraint_grad_sparse(q1_, G1_, kUnionShaped)) return StepStatus::NonFinite;
    pstar_ = ph_ + (0.5 * h) * F1_;

    // 3. Velocity multipliers: G_1 T_p(pstar - G_1^T M) = 0.
    if (shake_) {
      p1_ = pstar_;
      x2_.head(d) = q1_;
      x2_.tail(d) = p1_;
      if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
      hid_.noalias() = G1_ * work_.head(d);
      record_residual_norm(st.max_hidden_residual, inf_norm(hid_), row_norm(G1_), inf_norm(work_.head(d)));
      to.force = F1_;
    } else {
      if (!factor_K(G1_, W_, from.t)) return StepStatus::NonFinite;
      vtmp_ = Tp_;
      vtmp_.noalias() += (0.5 * h) * W_.cwiseProduct(F1_);
      hid_.noalias() = G1_ * vtmp_;
      K_.solve(hid_, M_);
      double prev = std::numeric_limits<double>::infinity();
      long it2 = 0;
      for (;;) {
        p1_ = pstar_;
        p1_.noalias() -= G1_.transpose() * M_;
        x2_.head(d) = q1_;
        x2_.tail(d) = p1_;
        if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
        hid_.noalias() = G1_ * work_.head(d);
        K_.solve(hid_, delta_);
        dp_.noalias() = G1_.transpose() * delta_;
        const double nd = inf_norm(dp_) / std::max(1.0, inf_norm(p1_));
        if (!std::isfinite(nd)) return StepStatus::NewtonDiverged;
        if (nd <= opts_.tol) break;
        if ((it2 > 0 && nd >= prev) || it2 >= opts_.max_iterations) {
          // G_1 T_p(p_1) as small as it can be evaluated: converged
          if (inf_norm(hid_) <= DampedMultiplierNewton::residual_floor(row_norm(G1_), inf_norm(work_.head(d))))
            break;
          have_tpp_ = false;
          return StepStatus::NewtonDiverged;
        }
        prev = nd;
        M_ += delta_;
        ++it2;
        ++st.newton_iterations;
      }
      record_residual_norm(st.max_hidden_residual, inf_norm(hid_), row_norm(G1_), inf_norm(work_.head(d)));
      to.force = work_.tail(d);
    }
    to.has_force = true;
    to.t = t1;
    to.x.head(d) = q1_;
    to.x.tail(d) = p1_;
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    remember_step(q0, q1_, h, extrap, true);
    return StepStatus::Success;
  }

  // ---- the constrained Newton at the edges -----------------------------------
  /// The globalised position solve (SparseDampedMultiplierNewton) for this
  /// step, W the diagonal of T_pp probed afresh: from the warm guess, then
  /// from L = 0; the root with the smaller multiplier displacement
  /// h |W G_0^T L| is taken (SeparableRattle::solve_globalised: from a warm
  /// start Newton may reach another branch, from L = 0 it follows the one
  /// the step continues as h -> 0).  On success L_, ph_, q1_, gv_, G1e_
  /// (G at q_1), Tp_ and q1pred_ (where the force in work_ was taken) are
  /// those of the step's positions.
  StepStatus solve_globalised(const Point& from, double h, double s, bool extrap) {
    const int d = d_;
    Stats& st = problem_.stats();
    const double t1 = from.t + h;
    const auto q0 = from.x.head(d);
    if (!estimate_tpp(from.t, from.x)) return StepStatus::NonFinite;
    have_tpp_ = true;
    K_.invalidate();  // its W is stale
    x2_.head(d) = q0;  // separable: T_p(p) does not depend on the q it is taken at
    auto eval = [&](const ConstVecRef& L, Vec& q1, Vec& g) {
      x2_.tail(d) = pbase_;
      x2_.tail(d).noalias() -= G0_.transpose() * L;
      if (!problem_.field(t1, x2_, work_)) return false;
      q1 = q0 + h * work_.head(d);
      return problem_.constraint(q1, g);
    };
    auto grad = [&](const Vec& q1, SpMat& G) { return problem_.constraint_grad_sparse(q1, G, kUnionShaped); };
    nearest_.reset();
    for (int start = 0; start < 2; ++start) {
      if (start == 0) {
        guess_L(s, h, extrap);
        if (inf_norm(L_) == 0.0) continue;  // the same as the cold start
      } else {
        L_.setZero();
      }
      const auto out = damped_.solve(eval, grad, G0_, W_, h, opts_.max_iterations, L_, q1_, gv_, G1_, st);
      if (out == SparseDampedMultiplierNewton::Outcome::NonFinite) return StepStatus::NonFinite;
      if (damped_.rank_deficient()) note_rank_of(damped_.condition_estimate(), from.t);
      if (out == SparseDampedMultiplierNewton::Outcome::Failed) continue;
      us_.noalias() = G0_.transpose() * L_;
      nearest_.offer(h * us_.cwiseProduct(W_).lpNorm<Eigen::Infinity>(), L_, q1_, gv_, G1_, st);
    }
    if (!nearest_.found()) return StepStatus::NewtonDiverged;
    nearest_.restore(L_, q1_, gv_, G1e_);
    S_tried_ = false;  // G1e_ is no longer the extrapolation S_ was formed from
    if (off_branch(q0, q1_, h, W_, DampedMultiplierNewton::kRefuseRatio)) {
      ++st.distant_roots;
      return StepStatus::DistantRoot;
    }
    ph_ = pbase_;
    ph_.noalias() -= G0_.transpose() * L_;
    Tp_ = (q1_ - q0) / h;
    x2_.head(d) = q0;  // work_ may hold f at the other start's last iterate
    x2_.tail(d) = ph_;
    if (!problem_.field(t1, x2_, work_)) return StepStatus::NonFinite;
    q1pred_ = q0;  // the force in work_ is at q_0: retaken at q_1 unless equal
    return StepStatus::Success;
  }

  /// The root L_ (positions q1) is on another branch than the unconstrained
  /// step's (DampedMultiplierNewton::distant with `ratio`): the free
  /// displacement dq = q_1 - q_0 + c, c = h W G_0^T L, and c_lin with
  /// G_0 (dq - c_lin) = 0, c - c_lin = W G_0^T K_0^+ G_0 (q_1 - q_0),
  /// K_0 = G_0 W G_0^T (factorized here, in branch_: K_ may hold another
  /// matrix).  O(nnz(G)) and one factorization: taken on the steps that
  /// near_last_root() does not clear.
  bool off_branch(const ConstVecRef& q0, const ConstVecRef& q1, double h, const Vec& w, double ratio) {
    if (!branch_.factor(G0_, w, pattern_token(G0_))) return true;
    dfree_ = q1 - q0;
    hid_.noalias() = G0_ * dfree_;  // G_0 (q_1 - q_0)
    branch_.solve(hid_, c_);
    us_.noalias() = G0_.transpose() * L_;
    dfree_.array() += h * w.array() * us_.array();
    us_.noalias() = G0_.transpose() * c_;
    us_.array() *= w.array();  // c - c_lin
    return DampedMultiplierNewton::distant(us_.norm(), dfree_.norm(), inf_norm(q0), ratio);
  }

  /// The cheap check of ordinary steps, O(m): the step continues a chain of
  /// equal steps and its multipliers are within kSameBranch (relative,
  /// largest entry) of the last step's, whose root was checked (by this
  /// test or off_branch): the root is on the branch the run follows, the
  /// other roots being a displacement of about the manifold's diameter
  /// away (GNI VII.1.4).  A multiplier that changes faster (a release, a
  /// collision, steps of the order of the curvature radius) takes the full
  /// check.
  bool near_last_root(double h, bool cont) const {
    if (!(cont && have_guess_ && same_step(h, shared_.h_prev))) return false;
    double dl = 0.0, lp = 0.0;
    const double* a = L_.data();
    const double* b = Lprev_.data();
    for (int i = 0; i < m_; ++i) {
      dl = std::max(dl, std::abs(a[i] - b[i]));
      lp = std::max(lp, std::abs(b[i]));
    }
    return dl <= kSameBranch * lp;  // (false for NaN)
  }

  /// |g(q_1)| at the round-off of its evaluation (G ~ G(q_1)).
  bool at_roundoff(const Vec& g, const SpMat& G, const Vec& q1) {
    return inf_norm(g) <= DampedMultiplierNewton::residual_floor(row_norm(G), inf_norm(q1));
  }

  // ---- the quadratic-T step ------------------------------------------------
  // The vector work in a few passes over the columns of G (AffineRattleSweeps);
  // q_1 and p_{1/2} live in X = [q_1; p_{1/2}], where f is called and whose
  // head g and G take: the problem's argument buffer (read by the callbacks
  // in place), else x2_ (state_argument).
  bool step_affine(Point& from, double h, Point& to, StepStatus& status) {
    // equal masses: the sweeps read one scalar (AffineVelocity::is_uniform)
    if (velocity_.is_uniform())
      return step_affine_with(sweeps::UniformVelocity{velocity_.uniform_value()}, from, h, to, status);
    const sweeps::Velocity vel{velocity_.diagonal().data(), velocity_.offset().data()};
    return step_affine_with(vel, from, h, to, status);
  }
  /// G_1 T_p(p) into hid_, from vel_ (= T_p(p), written by the sweeps) or
  /// from p itself for equal masses; returns |G_1|_inf.
  template <class V>
  double velocity_product(const V& vel, const double* p) {
    if constexpr (V::kStored)
      return G1rows_.multiply(vel_.data(), hid_.data());
    else
      return G1rows_.multiply_scaled(p, vel.w, hid_.data());
  }
  /// G_1 T_p(p_1), the hidden constraint after the projection, is formed
  /// by the apply pass itself (a scatter into hid_, the same sums) from
  /// this many nonzeros of G_1 on, by a pass over the row view below: at
  /// 10^5 links (4e5 nonzeros, out of the caches) the scatter saved 0.33
  /// of 12.6 ms a step, at 10^4 (4e4) it cost 0.05 of 1.18 (ABBA pairs).
  static constexpr Eigen::Index kScatterHidden = Eigen::Index(1) << 18;
  /// p_1 = p_from - G_1^T M (sweeps::apply_velocity_multipliers, q_1
  /// copied to q_out unless null), then G_1 T_p(p_1) into hid_.
  template <class V>
  sweeps::SweepNorms apply_multipliers(const V& vel, const double* M, const double* p_from, double* p1,
                                       const double* q1, double* q_out) {
    const bool scatter = G1_.nonZeros() >= kScatterHidden;
    if (scatter) hid_.setZero();
    const sweeps::SweepNorms out = sweeps::apply_velocity_multipliers(G1_, M, vel, p_from, p1, vel_.data(), q1, q_out,
                                                                      scatter ? hid_.data() : nullptr);
    if (!scatter) velocity_product(vel, p1);
    return out;
  }
  /// The same with G1_'s values taken into the row view on the way.
  template <class V>
  double assign_velocity_product(const V& vel, const double* p) {
    const long token = pattern_token(G1_);
    if constexpr (V::kStored)
      return G1rows_.assign_multiply(G1_, token, vel_.data(), hid_.data());
    else
      return G1rows_.assign_multiply_scaled(G1_, token, p, vel.w, hid_.data());
  }
  /// assign_velocity_product with K = G_1 W G_1^T's band formed in the
  /// same gather (SparseRowView::assign_multiply_gram), when K is
  /// tridiagonal (a chain): |G_1|_inf into `norm`, `zero` 0 iff the band is
  /// finite, for factor_K_band; false (nothing done) for another K.  At
  /// 10^5 links (phase timer) the gather and factor_K took 0.42 + 0.74 ms
  /// with the band assembled in a pass of its own, 0.64 + 0.35 ms this way
  /// (the whole step 12.40 -> 12.17 ms, ABBA pairs).
  template <class V>
  bool gather_K_band(const V& vel, const double* p, double& norm, double& zero) {
    const long token = pattern_token(G1_);
    G1rows_.prepare(G1_, token);
    double* band = K_.tridiagonal_band(G1_, G1rows_, token);
    if (!band) return false;
    if constexpr (V::kStored) {
      const double* wp = velocity_.diagonal().data();
      const auto weight = [wp](int k) { return wp[k]; };
      SparseRowView::TridiagonalGram<decltype(weight)> k{weight, band};
      norm = G1rows_.assign_multiply_gram(G1_, vel_.data(), hid_.data(), k);
      zero = k.zero;
    } else {
      const double c = velocity_.diagonal()(0);  // (factor_K's w_constant: w(0) for every k)
      const auto weight = [c](int) { return c; };
      SparseRowView::TridiagonalGram<decltype(weight)> k{weight, band};
      norm = G1rows_.assign_multiply_scaled_gram(G1_, p, vel.w, hid_.data(), k);
      zero = k.zero;
    }
    return true;
  }
  /// factor_K from the band gather_K_band formed (`zero` its flag).
  bool factor_K_band(double zero, double t) {
    if (!K_.factor_band(zero)) return false;
    note_rank(t);
    return true;
  }

  template <class V>
  bool step_affine_with(const V& vel, Point& from, double h, Point& to, StepStatus& status) {
    const int d = d_;
    Stats& st = problem_.stats();
    status = StepStatus::NonFinite;
    if (!shared_.ensure_force(from, work_)) return true;
    const auto q0 = from.x.head(d);
    const double t1 = from.t + h;
    const bool cont = continues(q0);
    if (!grad_at_q0(q0, cont)) return true;
    const double s = have_guess_ ? h / shared_.h_prev : 0.0;
    const Vec& w = velocity_.diagonal();
    if (!have_model_weights_) {  // the model's W replaces the probed one
      K_.invalidate();
      have_model_weights_ = true;
    }
    if (!prepare_K(G0_, w, from.t)) return true;
    guess_L(s, h, cont);
    simplified_ = exact_steps_left_ == 0;
    bool have_S = simplified_;  // G1e is needed for S only
    if (!simplified_ && cont) {
      extrapolate_G1(h);
      have_S = true;
    }
    double* X = state_argument();
    double* q1 = X;
    double* ph = X + d;
    const sweeps::SweepNorms start =
        sweeps::start_positions(G0_, L_.data(), vel, h, from.x.data(), from.x.data() + d, from.force.data(), q1, ph);
    if (!(start.zero == 0.0)) return true;  // a non-finite guess (status NonFinite): g is not called there
    const double weight = roundoff_weight_of_norms(h, velocity_.matrix_norm(), start.q_in, start.p_in, opts_.tol);
    // the scale of p in the corrections' test: |p_{1/2}| at the guess (the
    // corrections change it by round-off, relative)
    const double phn = start.p_out;
    // a bound on |p_{1/2}|_inf through the corrections (|ph - dp| <= |ph| +
    // |dp|): below half the largest double no correction can overflow p_{1/2},
    // which their finiteness check, on q_1 only, would not see
    // (finite_through_q)
    double ph_bound = phn;
    long it = 0;
    double prev = std::numeric_limits<double>::infinity(), g_scale = 1.0, rate = 0.0, q1n = 0.0;
    bool ok = false;
    const double* gp = nullptr;  // g(q_1), read where the problem holds it (until g's next call)
    for (;;) {
      if (!(gp = problem_.constraint_view(Eigen::Map<const Vec>(X, d), gv_))) return true;
      if (!have_S) {
        S_tried_ = false;
        if (!problem_.constraint_grad_sparse(Eigen::Map<const Vec>(X, d), G1e_)) return true;
        have_S = true;
      }
      X = state_argument();  // (after the callbacks: the memory to write now)
      q1 = X;
      ph = X + d;
      solve_S(w, Eigen::Map<const Vec>(gp, m_), delta_, from.t,
              1e-3 * opts_.tol * std::abs(h) * std::max(1.0, phn) / weight);
      const double ih = 1.0 / h;
      for (int i = 0; i < m_; ++i) {
        delta_(i) *= ih;
        L_(i) += delta_(i);
      }
      const sweeps::SweepNorms corr = sweeps::correct_positions(G0_, delta_.data(), vel, h, q1, ph);
      const double nd = weight * corr.dp / std::max(1.0, phn);
      ph_bound += corr.dp;  // (this correction's included: none overflowed if below kHalfMax)
      if (!std::isfinite(nd) || !(corr.zero == 0.0) || !(ph_bound < kHalfMax)) break;
      const double theta = it > 0 ? nd / prev : 1.0;
      if (it > 0 && nd > kRateFloor) rate = std::max(rate, theta);
      const double eta = theta / (1.0 - theta);
      if (nd <= opts_.tol || (theta < 0.5 && eta * nd <= std::min(opts_.tol, kRoundoffLeft))) {
        if (nd > opts_.tol) g_scale = eta;
        q1n = corr.q_out;  // (q_1 and p_{1/2} finite: corr.zero)
        ok = true;
        break;
      }
      if ((it > 0 && nd >= 0.5 * prev) || it >= opts_.max_iterations) break;
      prev = nd;
      ++it;
      ++st.newton_iterations;
    }
    shared_.finish(it);
    judge_simplified(ok, rate, it);
    if (!ok) return false;
    if (!near_last_root(h, cont) &&
        off_branch(q0, Eigen::Map<const Vec>(X, d), h, w, DampedMultiplierNewton::kDoubtRatio)) {
      status = StepStatus::DistantRoot;  // the globalised solve looks again
      return true;
    }
    const double gn = g_scale * inf_norm(Eigen::Map<const Vec>(gp, m_));
    if (constraints_violated_at_norm(gn, q1n, opts_.tol)) {
      status = StepStatus::ConstraintsViolated;
      return true;
    }
    // 2. f at [q_1; p_{1/2}]: the force F_1 and a check of T_p(p_{1/2}),
    // both checked finite by the half kick's pass (f is called unchecked).
    // (f's values read where the problem holds them: field_unchecked_view)
    const Eigen::Map<const Vec> x2(X, 2 * d);  // read only from here on: no fetch after a callback
    const double* fx = problem_.field_unchecked_view(t1, x2, work_);
    const sweeps::VelocityCheck check =
        sweeps::confirm_and_kick(d, vel, h, ph, fx, fx + d, pstar_.data(), to.force.data(), vel_.data());
    if (!velocity_.judge(check.zero, check.p_max, check.hp_max, check.miss)) {
      if (!(check.zero == 0.0)) return false;  // a non-finite f: the general step redoes it (the model stays)
      have_model_weights_ = false;
      have_tpp_ = false;
      if (fx != work_.data()) work_ = Eigen::Map<const Vec>(fx, 2 * d);
      check_claims(t1, x2, work_);
      return false;
    }
    ++st.newton_solves;
    if (!problem_.constraint_grad_sparse(x2.head(d), G1_, kUnionShaped)) return true;
    // 3. Velocity multipliers, linear for affine T_p: G_1 W G_1^T M = G_1 T_p(p*).
    // (K = G_1 W G_1^T formed in the same gather when it is tridiagonal)
    double Gn = 0.0, band_zero = 0.0;
    const bool band = !shake_ && gather_K_band(vel, pstar_.data(), Gn, band_zero);
    if (!band) Gn = assign_velocity_product(vel, pstar_.data());  // G1rows_ <- G1_
    record_residual_norm(st.max_constraint_residual, gn, Gn, q1n);
    double* p1 = to.x.data() + d;
    if (shake_) {
      record_residual_norm(st.max_hidden_residual, inf_norm(hid_), Gn, velocity_.matrix_norm() * inf_norm(pstar_));
      to.x.head(d) = x2.head(d);
      to.x.tail(d) = pstar_;
    } else {
      if (band ? !factor_K_band(band_zero, from.t) : !factor_K(G1_, w, from.t, &G1rows_, !V::kStored))
        return true;  // (equal masses: w = a 1)
      K_.solve(hid_, M_);
      sweeps::SweepNorms out = apply_multipliers(vel, M_.data(), pstar_.data(), p1, q1, to.x.data());
      // One step of iterative refinement when the solve left more than
      // round-off (ill-conditioned K, dropped pivots): O(nnz).  Round-off
      // is measured against the terms p_1 = p* - G_1^T M is formed from,
      // 4 eps |G_1| |A| (|p_1| + max_j (|G_1|^T |M|)_j), whose rounding
      // alone leaves a residual of that size, but never above 16 times the
      // bound by |p_1| alone (large multipliers, near a singular
      // configuration, are still refined to a residual that small).  A
      // chain of 10^5 links under tension: terms of 10-30 against |p_1| of
      // 0.6-2, 0.5-2e-14 left, 2-3 times the bound by |p_1|, which had it
      // refined at every step, 0.8 of its 14 ms.
      double hp_scale = velocity_.matrix_norm() * out.p_out;  // |A| |p_1|
      const double terms_scale = velocity_.matrix_norm() * std::min(out.p_out + out.terms, 16.0 * out.p_out);
      if (inf_norm(hid_) > kRoundoffLeft * std::max(1.0, Gn * terms_scale)) {
        K_.solve(hid_, delta_);
        M_ += delta_;
        const double first = out.zero;
        out = apply_multipliers(vel, delta_.data(), p1, p1, nullptr, nullptr);
        out.zero += first;
        hp_scale = velocity_.matrix_norm() * out.p_out;
      }
      record_residual_norm(st.max_hidden_residual, inf_norm(hid_), Gn, hp_scale);
      if (!(out.zero == 0.0)) return true;  // (status NonFinite)
    }
    to.has_force = true;
    to.t = t1;
    if (shake_ && !all_finite(to.x)) return true;
    remember_step(q0, x2.head(d), h, cont, false);
    status = StepStatus::Success;
    return true;
  }

  /// [q_1; p_{1/2}]'s memory for the quadratic-T step, valid until the next
  /// callback: the problem's argument buffer, else x2_.
  double* state_argument() {
    double* b = problem_.argument_buffer(2 * static_cast<Eigen::Index>(d_));
    return b ? b : x2_.data();
  }

  // ---- linear algebra --------------------------------------------------------
  /// K = G W G^T factorized (rank noted in the shared state).
  /// `rows`: a row view holding G's values (G1rows_ for G1_), from which K's
  /// band is assembled (SparseGramSolver::factor's second form);
  /// `w_constant`: every w_k is w(0) (the uniform velocity model).
  bool factor_K(const SpMat& G, const Vec& w, double t, const SparseRowView* rows = nullptr,
                bool w_constant = false) {
    if (!(rows ? K_.factor(G, *rows, w, pattern_token(G), w_constant) : K_.factor(G, w, pattern_token(G))))
      return false;
    note_rank(t);
    return true;
  }
  /// A factorization to precondition S with: the last one (the last step's
  /// velocity system at this q_0), else K at G_0.
  bool prepare_K(const SpMat& G0, const Vec& w, double t) {
    if (K_.valid() && !shake_) return true;
    return factor_K(G0, w, t);
  }

  /// x = S^{-1} r, S = G1e W G_0^T, by x <- x + K^+ (r - S x); K is
  /// refactorized at G1e once if that does not converge.
  /// `negligible`: a bound on |G_0^T x|_inf below which x is a correction
  /// too small to matter (Newton's last); its first approximation is then
  /// taken as it is.
  void solve_S(const Vec& w, const ConstVecRef& r, Vec& x, double t, double negligible) {
    if (simplified_) {  // the simplified Newton: K_0 itself
      K_.solve(r, x);
      return;
    }
    // a banded S (a chain): factorized once per G1e, solved directly
    if (!S_tried_) {
      S_tried_ = true;
      S_.factor_product(G1e_, w, G0_, shared_structure() ? problem_.sparse_pattern_version() : -1);
    }
    if (S_.product_valid()) {
      S_.solve_product(r, x);
      return;
    }
    for (int round = 0; round < 2; ++round) {
      K_.solve(r, x);
      double prev = std::numeric_limits<double>::infinity();
      bool converged = false;
      const bool fused = shared_structure();
      for (int k = 0; k < kInner; ++k) {
        const double u = residual_S(w, r, x, fused);  // r_ = r - S x; u = |G_0^T x|_inf
        if (k == 0 && u <= negligible) return;
        K_.solve(r_, c_);
        x += c_;
        const double nc = inf_norm(c_);
        // A relative error 1e-8 of the Newton correction leaves, after it,
        // 1e-8 of what it corrected: below round-off from the second
        // correction on (extrapolated guesses start within ~1e-6).  The
        // error left after x += c is about rate * |c|.
        // (k = 0: the rate measured in the last solve, if it was small)
        const double rate = k > 0 ? nc / prev : (last_rate_ < 0.1 ? 4.0 * last_rate_ : 1.0);
        if (k > 0) last_rate_ = rate;
        if (!(nc * std::min(1.0, rate) > kInnerTol * inf_norm(x))) {  // also 0 and NaN
          converged = std::isfinite(nc);
          break;
        }
        if (nc > 0.5 * prev) break;
        prev = nc;
      }
      if (converged || round == 1) return;
      if (!factor_K(G1e_, w, t)) return;  // K at q_1: contraction O(h) smaller
    }
  }

  /// After a position Newton with K_0: S for the next kExactSteps steps if
  /// it failed, contracted slowly or took a third call of g (Newton with S,
  /// from its extrapolated G_1, needs two).
  void judge_simplified(bool ok, double rate, long iterations) {
    if (!simplified_) ++exact_solves_;
    if (simplified_ && (!ok || rate > kSimplifiedRate || iterations >= 2)) {
      exact_steps_left_ = kExactSteps;
      simplified_ = false;
    }
  }

  /// A token of G's structure for SparseGramSolver: the pattern's version
  /// when G is on the current pattern (the pattern only grows, so its count
  /// of nonzeros identifies it), else -1 (the solver compares).
  long pattern_token(const SpMat& G) const {
    return G.isCompressed() && G.nonZeros() == problem_.sparse_pattern_nonzeros() ? problem_.sparse_pattern_version()
                                                                                  : -1;
  }

  /// G_0 and G1e on the same structure: both on the current pattern (it
  /// only grows, so its count of nonzeros identifies it).
  bool shared_structure() const {
    const Eigen::Index nnz = problem_.sparse_pattern_nonzeros();
    return G0_.nonZeros() == nnz && G1e_.nonZeros() == nnz && G0_.isCompressed() && G1e_.isCompressed();
  }

  /// r_ = r - G1e W G_0^T x; returns |G_0^T x|_inf.  On a shared structure
  /// in one pass over the columns of G (column j: the dot product of G_0's
  /// column with x, scaled by w_j, subtracted along G1e's column), without
  /// the d-vector in between.
  double residual_S(const Vec& w, const ConstVecRef& r, const Vec& x, bool fused) {
    r_ = r;
    if (!fused) {
      us_.noalias() = G0_.transpose() * x;
      const double u = inf_norm(us_);
      us_.array() *= w.array();
      r_.noalias() -= G1e_ * us_;
      return u;
    }
    const int* outer = G0_.outerIndexPtr();
    const int* inner = G0_.innerIndexPtr();
    const double* a = G0_.valuePtr();
    const double* b = G1e_.valuePtr();
    const double* xp = x.data();
    double* rp = r_.data();
    double u = 0.0;
    for (int j = 0; j < d_; ++j) {
      double sj = 0.0;
      for (int p = outer[j]; p < outer[j + 1]; ++p) sj += a[p] * xp[inner[p]];
      u = std::max(u, std::abs(sj));
      sj *= w(j);
      for (int p = outer[j]; p < outer[j + 1]; ++p) rp[inner[p]] -= b[p] * sj;
    }
    return u;
  }

  /// G1e = G_0 + h/h_last (G_0 - G_{-1}): on the values when the patterns
  /// agree (always, but after the pattern of G grew).
  void extrapolate_G1(double h) {
    S_tried_ = false;
    SparsePatternUnion::extrapolate(G0_, last_G0_, h / last_h_, G1e_);
  }

  void note_rank(double t) {
    shared_.cond_max = std::max(shared_.cond_max, K_.condition_estimate());
    if (!K_.rank_deficient()) return;
    note_rank_of(K_.condition_estimate(), t);
  }
  /// A rank-deficient multiplier system met at t.
  void note_rank_of(double cond, double t) {
    shared_.cond_max = std::max(shared_.cond_max, cond);
    ++problem_.stats().rank_deficient;
    if (!shared_.rank_seen) {
      shared_.rank_seen = true;
      shared_.rank_t = t;
    }
  }

  /// The diagonal of T_pp at x: one probe of f moving every p_i by
  /// max(1, |p_i|), against f at x (2 calls).  Non-positive entries (T_pp
  /// not diagonal) are replaced by the largest one.
  bool estimate_tpp(double t, const Vec& x) {
    const int d = d_;
    if (!problem_.field(t, x, work2_)) return false;
    x2_ = x;
    for (int i = 0; i < d; ++i) x2_(d + i) += std::max(1.0, std::abs(x(d + i)));
    if (!problem_.field(t, x2_, work_)) return false;
    for (int i = 0; i < d; ++i) W_(i) = (work_(i) - work2_(i)) / (x2_(d + i) - x(d + i));
    const double wmax = W_.maxCoeff();
    if (!(wmax > 0.0) || !W_.allFinite()) W_.setOnes();
    for (int i = 0; i < d; ++i)
      if (!(W_(i) > 0.0)) W_(i) = wmax > 0.0 ? wmax : 1.0;
    ++problem_.stats().jacobian_evals;
    ++problem_.stats().fd_jacobians;
    ++problem_.stats().fd_field_jacobians;
    work_ = work2_;  // f at x: ensure_force's convention leaves it in work_
    return true;
  }

  /// max_i sum_j |G_ij| (O(nnz)).
  double row_norm(const SpMat& G) {
    rows_.setZero();
    if (G.isCompressed()) {  // one pass over the values (raw: no bounds check per entry)
      double* r = rows_.data();
      const double* v = G.valuePtr();
      const int* inner = G.innerIndexPtr();
      for (Eigen::Index p = 0; p < G.nonZeros(); ++p) r[inner[p]] += std::abs(v[p]);
    } else {
      for (int j = 0; j < G.outerSize(); ++j)
        for (SpMat::InnerIterator it(G, j); it; ++it) rows_(it.row()) += std::abs(it.value());
    }
    return rows_.size() ? rows_.maxCoeff() : 0.0;
  }

  /// This step starts where the last accepted one ended (q_0 = its q_1):
  /// the one comparison of q per step; the cache and the guesses use it.
  bool continues(const ConstVecRef& q0) const {
    return have_last_ && same_bits(shared_.last_q1, q0);
  }

  /// The key of cache entry i: the entry remember_step() wrote is keyed by
  /// shared_.last_q1 itself (no copy) until a store() or the next step.
  const Vec& key(int i) const { return i == implicit_key_ ? shared_.last_q1 : cache_q_[i]; }
  /// The implicit key made explicit (before last_q1 or the entry changes).
  void materialize_key() {
    if (implicit_key_ >= 0 && cache_ok_[implicit_key_]) cache_q_[implicit_key_] = shared_.last_q1;
    implicit_key_ = -1;
  }

  /// G(q) from the small cache (keyed by q, compared exactly), else
  /// evaluated and stored.
  bool grad_at(const ConstVecRef& q, SpMat& G) {
    for (int i = 0; i < kCache; ++i)
      if (cache_ok_[i] && same_bits(key(i), q)) {
        G = cache_G_[i];
        return true;
      }
    if (!problem_.constraint_grad_sparse(q, G, kUnionShaped)) return false;
    store(q, G);
    return true;
  }
  /// G_0 = G(q_0) into G0_: from the cache by a swap when it is the last
  /// step's G_1 (the entry is then moved out: a step from the same q_0
  /// again, after a rejection, finds it in G0_ itself).  `cont`: q_0 is
  /// shared_.last_q1 (continues()), compared already.
  bool grad_at_q0(const ConstVecRef& q, bool cont) {
    if (have_G0_ && (G0_at_last_q1_ ? cont : same_bits(G0_q_, q))) return true;
    const int last = (cache_next_ + kCache - 1) % kCache;
    const bool hit = cache_ok_[last] && ((cont && last == implicit_key_) || same_bits(key(last), q));
    if (hit) {
      G0_.swap(cache_G_[last]);
      cache_ok_[last] = false;
    } else if (!grad_at(q, G0_)) {
      return false;
    }
    G0_at_last_q1_ = cont;  // last_q1 stays until the next accepted step
    if (!cont) G0_q_ = q;
    have_G0_ = true;
    return true;
  }
  void store(const ConstVecRef& q, const SpMat& G) {
    materialize_key();
    cache_q_[cache_next_] = q;
    cache_G_[cache_next_] = G;
    cache_ok_[cache_next_] = true;
    cache_next_ = (cache_next_ + 1) % kCache;
  }

  /// After an accepted step from q_0 to q_1: G_1 into the cache (keyed by
  /// the new last_q1), the multiplier history for the guesses.  `cont`:
  /// the step continued the last one (continues()); `separable`: it was
  /// step_separable (dq_prev_ predicts its next q_1).
  void remember_step(const ConstVecRef& q0, const ConstVecRef& q1, double h, bool cont, bool separable) {
    if (exact_steps_left_ > 0) --exact_steps_left_;
    materialize_key();
    cache_G_[cache_next_].swap(G1_);  // G_1 moves into the cache (not needed after the step)
    cache_ok_[cache_next_] = true;
    implicit_key_ = cache_next_;
    cache_next_ = (cache_next_ + 1) % kCache;
    nL_ = cont && same_step(h, shared_.h_prev) ? std::min(nL_ + 1, 3) : 1;
    have_dq_ = separable;
    if (separable) dq_prev_ = q1 - q0;
    shared_.last_q1 = q1;
    last_G0_.swap(G0_);  // G_0 is not needed after the step
    have_G0_ = false;
    last_h_ = h;
    have_last_ = true;
    // L_{-3} <- L_{-2} <- L_{-1} <- L by swaps (L_ is guessed anew)
    Lprev3_.swap(Lprev2_);
    Lprev2_.swap(Lprev_);
    Lprev_.swap(L_);
    shared_.h_prev = h;
    have_guess_ = true;
  }

  void guess_L(double s, double h, bool extrap) {
    const bool chain = extrap && have_guess_ && same_step(h, shared_.h_prev);
    if (chain && nL_ >= 3)
      L_ = 3.0 * (Lprev_ - Lprev2_) + Lprev3_;
    else if (chain && nL_ >= 2)
      L_ = 2.0 * Lprev_ - Lprev2_;
    else
      L_ = s * Lprev_;
  }

  static constexpr int kCache = 3;

  RattleState& shared_;
  HamiltonianProblem& problem_;
  const NewtonOptions& opts_;
  const int d_, m_;
  const bool shake_;
  AffineVelocity velocity_;
  SeparabilityProbe separability_;
  SparseGramSolver K_;    ///< the last K = G W G^T (velocity system; S's preconditioner)
  SparseGramSolver err_;  ///< G G^T for SHAKE's error estimate
  SparseGramSolver S_;    ///< S = G1e W G_0^T, when banded (factor_product)
  SparseGramSolver branch_;  ///< K_0 = G_0 W G_0^T for off_branch()
  SparseDampedMultiplierNewton damped_;  ///< the globalised position solve
  NearestRoot<SpMat> nearest_;            ///< its root, from the two starts
  bool S_tried_ = false;  ///< S_ was (tried to be) factorized for this G1e_ and W
  bool simplified_ = true;     ///< this step's position Newton takes K_0 (else S)
  int exact_steps_left_ = 0;   ///< steps still to take S (after a slow K_0)
  long exact_solves_ = 0;
  // G0_, G1_, last_G0_, Gerr_ and cache_G_ are written only by the
  // problem's constraint_grad_sparse, by copies among them and by swaps:
  // each has the structure of some version of the problem's pattern union
  // (or is empty), which the union checks by size (kUnionShaped).  (G1e_
  // is also extrapolated from two of them, whose versions may differ: it
  // is fitted as any matrix.)
  static constexpr SparsePatternUnion::Target kUnionShaped = SparsePatternUnion::Target::UnionShaped;
  SpMat G0_, G1_, G1e_, last_G0_, Gerr_;
  Vec dfree_;
  SparseRowView G1rows_;  ///< G1_ by rows, for G_1 v (step_affine)
  Vec G0_q_;              ///< the q_0 of G0_ (valid while have_G0_ and not G0_at_last_q1_)
  bool have_G0_ = false;
  bool G0_at_last_q1_ = false;  ///< G0_ is G(shared_.last_q1)
  int implicit_key_ = -1;       ///< the cache entry keyed by shared_.last_q1 (key())
  bool have_dq_ = false;        ///< dq_prev_ is the last step's q_1 - q_0
  Vec cache_q_[kCache];
  SpMat cache_G_[kCache];
  bool cache_ok_[kCache] = {false, false, false};
  int cache_next_ = 0;
  Vec work_, work2_, x2_, gv_;
  Vec L_, Lprev_, Lprev2_, Lprev3_, M_, delta_, hid_, r_, c_;
  int nL_ = 0;
  Vec ph_, pbase_, q1_, q1pred_, Tp_, F1_, pstar_, p1_, dp_, u_, us_, vtmp_, vel_, W_, dq_prev_, rows_;
  bool have_tpp_ = false, have_guess_ = false, have_last_ = false, have_model_weights_ = false;
  double last_h_ = 0.0;
  double last_rate_ = 1.0;  ///< contraction of the S-iteration measured last
};

}  // namespace odepkg

#endif
