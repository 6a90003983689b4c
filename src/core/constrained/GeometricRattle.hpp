// GeometricRattle.hpp — geometric SHAKE and RATTLE (McLachlan, Modin, Verdier,
// Wilkins 2014, Def. 1.3/1.4)
// for coisotropic constraints g(q, p) = 0 over any symplectic base method:
//
//   SHAKE:   y = exp(s X_g) z_0,  z_1^- = phi_h(y),  g(z_1^-) = 0,
//   RATTLE:  z_1 = exp(sigma X_g) z_1^-,  {g, H}(z_1) = Dg(z_1) f(z_1) = 0,
//
// X_g = J grad g (fibres: FibreMap), phi_h a BaseMethod, s and sigma the
// roots nearest 0 (Newton from small guesses).  SHAKE is one Newton system
// in (w, s), w the base method's unknowns:
//   R(w, exp(s X_g) z_0) = 0,   g(Z(w, exp(s X_g) z_0)) / h = 0,
// whose Jacobian [R_w, R_y W; Dg Z_w / h, Dg Z_y W / h], W = ds exp(s X_g) z_0
// ~ J Dg(y)^T (exact for m = 1 and for holonomic g), contains
// dg . D phi_h . X_g exactly (up to the age of the H Hessian model).
// RATTLE: Newton on sigma with the matrix {g_i, {g_j, H}} (Lemma 3.11) formed
// from the Hessians of g and H at the step's start (simplified Newton).
// Under Assumptions 1 and 2 both solves are well posed for small h
// (Thm. 4.1); the RATTLE map is symplectic on M_H (Cor. 4.8), symmetric when
// phi_h is (Prop. 4.9), of the base method's order for symmetric phi_h and
// at least 1 otherwise (Prop. 4.4).
//
// Per Newton iteration: one fibre flow, the base method's f calls, g and Dg
// at z_1^- and Dg at y (not for holonomic g, whose fibres keep q).  The H
// Hessian is taken once per step, or once for good when it is found constant
// (re-checked every 16 steps); the constraint Hessians likewise.
// Guesses: the last step's increments and multipliers scaled by h/h_prev.
#ifndef ODEPKG_CONSTRAINED_GEOMETRIC_RATTLE_HPP
#define ODEPKG_CONSTRAINED_GEOMETRIC_RATTLE_HPP

#include "SameBits.hpp"
#include "ConstraintProjection.hpp"
#include "NewtonSolver.hpp"
#include "Stepper.hpp"
#include "constrained/BaseMethodFactory.hpp"
#include "constrained/ConstraintSet.hpp"
#include "constrained/DampedMultiplierNewton.hpp"
#include "constrained/RattleAcceptance.hpp"
#include "constrained/FibreMap.hpp"
#include "constrained/IntegratedFibre.hpp"
#include "constrained/SparseGeometricNewton.hpp"
#include "constrained/StructureChecks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

namespace odepkg {

class GeometricRattle final : public Stepper {
 public:
  static constexpr double rank_tolerance = 1e-12;
  static constexpr double kLooseRankTolerance = 1.5e-8;  ///< sqrt(eps): the last retry near singular configurations
  static constexpr int kStaticRecheck = 16;
  static constexpr int kMaxDamping = 6;  ///< halvings of a growing SHAKE correction
  static constexpr double kHessianRefreshRate = 0.1;  ///< SHAKE rate above which H's Hessian is retaken
  static constexpr int kReuseAbove = 64;  ///< SHAKE unknowns above which a factorization is kept

  GeometricRattle(HamiltonianProblem& problem, std::unique_ptr<ConstraintSet> g,
                  std::unique_ptr<FibreMap> fibre, std::unique_ptr<BaseMethod> base, bool shake,
                  NewtonOptions newton = NewtonOptions())
      : Stepper(problem),
        g_(std::move(g)),
        fibre_(std::move(fibre)),
        base_(std::move(base)),
        shake_(shake),
        opts_(newton),
        d_(problem.dim()),
        n_(2 * problem.dim()),
        m_(g_->count()),
        nw_(base_->unknowns()),
        nu_(nw_ + m_),
        solver_(sparse_linear_algebra(*g_) ? 0 : nu_, rank_tolerance),
        small_(sparse_linear_algebra(*g_) ? 0 : m_, rank_tolerance) {
    if (g_->dim() != d_) throw InputError("invalidInput", "the constraints and the problem differ in dimension");
    const int n = n_, m = m_, nw = nw_, nu = nu_;
    if (sparse_linear_algebra(*g_))  // no matrix of size d^2, m^2 or m d below
      sparse_ = std::make_unique<SparseGeometricNewton>(
          problem, *g_, *base_, rank_tolerance, "RATTLE/SHAKE with a sparse ConstraintGradFcn and a non-separable H");
    if (!sparse_) {
      hess_ = Mat::Zero(n, n);
      hess_prev_ = Mat::Zero(n, n);
      Rw_.resize(nw, nw);
      Ry_.resize(nw, n);
      Zw_.resize(n, nw);
      Zy_.resize(n, n);
      RyW_.resize(nw, m);
      ZyW_.resize(n, m);
      JF_.resize(nu, nu);
      lu_ = Eigen::PartialPivLU<Mat>(nu);
      Dg1_.resize(m, n);
      Dgy_.resize(m, n);
      W_.resize(n, m);
      V_.resize(n, m);
      Msig_.resize(m, m);
      side_.hess = Mat::Zero(n, n);
      side_.hess_prev = Mat::Zero(n, n);
    }
    if (!g_->holonomic() && !sparse_) {  // 2d x 2dm: the slide of holonomic g needs no g Hessians
      Hg_.resize(n, n * m);
      Hg_prev_ = Mat::Zero(n, n * m);
    }
    if (!sparse_) {
      rwlu_ = Eigen::PartialPivLU<Mat>(nw);
      Tw_.resize(nw, m);
    }
    F_.resize(nu);
    cvec_.resize(n);
    zfree_.resize(n);
    Fs_.resize(nu);
    rs_ = Vec::Ones(nu);
    cs_ = Vec::Ones(nu);
    du_.resize(nu);
    du_last_ = Vec::Zero(nu);
    r_last_.resize(m);
    dr_.resize(m);
    hw_.resize(n);
    xm_.resize(n);
    w_.resize(nw);
    anchor_.resize(nw);
    inc_ = Vec::Zero(nw);
    s_ = Vec::Zero(m);
    sigma_ = Vec::Zero(m);
    for (int k = 0; k < 3; ++k) {
      wh_[k] = Vec::Zero(nw);
      sh_[k] = Vec::Zero(m);
      gh_[k] = Vec::Zero(m);
    }
    dsig_.resize(m);
    y_.resize(n);
    z1_.resize(n);
    z_.resize(n);
    zs_.resize(n);
    f_.resize(n);
    dz_.resize(n);
    gv_.resize(m);
    r_.resize(m);
    last_z1_.resize(n);
    // 1 where an unknown of the base method is a momentum (anchored on p)
    wmask_.resize(nw);
    dz_.head(d_).setZero();
    dz_.tail(d_).setOnes();
    base_->anchor(dz_, wmask_);
    if (shake_) {
      errA_.resize(n);
      errB_.resize(n);
      errsig_.resize(m);
    }
    side_guess_ = Vec::Zero(guess_size());
    side_last_z1_ = Vec::Zero(n);
    if (!g_->holonomic()) {
      side_.Hg = Mat::Zero(n, n * m);
      side_.Hg_prev = Mat::Zero(n, n * m);
    }
  }

  const char* name() const override { return shake_ ? "shake" : "rattle"; }
  int order() const override { return base_->order(); }
  /// RATTLE over a symmetric base method is symmetric (Prop. 4.9 of
  /// McLachlan, Modin, Verdier, Wilkins 2014); SHAKE is not (its momenta are
  /// not projected).
  bool symmetric() const override { return !shake_ && base_->symmetric(); }
  /// The guess history (w, s, sigma of the last three steps, the increment,
  /// h_prev, the chain length); not last_z1_, so that a loaded history is
  /// used only if the step starts where this stepper's last one ended.
  int guess_size() const override {
    return static_cast<int>(4 * w_.size() + 3 * (s_.size() + sigma_.size()) + 3);
  }
  void save_guess(VecRef g) const override {
    const Eigen::Index nw = w_.size(), ns = s_.size(), ng = sigma_.size();
    Eigen::Index k = 0;
    for (int j = 0; j < 3; ++j) {
      g.segment(k, nw) = wh_[j]; k += nw;
      g.segment(k, ns) = sh_[j]; k += ns;
      g.segment(k, ng) = gh_[j]; k += ng;
    }
    g.segment(k, inc_.size()) = inc_; k += inc_.size();
    g(k++) = h_prev_;
    g(k++) = chain_;
    g(k++) = have_inc_ ? 1.0 : 0.0;
  }
  void load_guess(const ConstVecRef& g) override {
    const Eigen::Index nw = w_.size(), ns = s_.size(), ng = sigma_.size();
    Eigen::Index k = 0;
    for (int j = 0; j < 3; ++j) {
      wh_[j] = g.segment(k, nw); k += nw;
      sh_[j] = g.segment(k, ns); k += ns;
      gh_[j] = g.segment(k, ng); k += ng;
    }
    inc_ = g.segment(k, inc_.size()); k += inc_.size();
    h_prev_ = g(k++);
    chain_ = static_cast<int>(g(k++));
    have_inc_ = have_inc_ && g(k++) != 0.0;
  }
  /// Kept across side steps, so that the next step from y_{n+1} continues
  /// the sequence: the guess history and the point it continues from
  /// (last_z1_), and the Hessian models with their constancy checks (a side
  /// step from y_n takes H's Hessian at y_n again, and comparing it with the
  /// last one, at y_n too, would find H quadratic and freeze a stale model:
  /// Newton then failed two steps after an output time).
  void begin_side_steps() override {
    save_guess(side_guess_);
    side_last_z1_ = last_z1_;
    side_have_inc_ = have_inc_;
    if (sparse_) {
      sparse_->save_side();
    } else {
      side_.hess = hess_;
      side_.hess_prev = hess_prev_;
    }
    side_.have_hess = have_hess_;
    side_.hess_static = hess_static_;
    side_.static_age = static_age_;
    if (Hg_.size() > 0) {
      side_.Hg = Hg_;
      side_.Hg_prev = Hg_prev_;
    }
    side_.hg_known = hg_known_;
    side_.hg_static = hg_static_;
    side_.hg_age = hg_age_;
  }
  void end_side_steps() override {
    load_guess(side_guess_);
    last_z1_ = side_last_z1_;
    have_inc_ = side_have_inc_;
    if (sparse_) {
      sparse_->restore_side();
    } else {
      hess_ = side_.hess;
      hess_prev_ = side_.hess_prev;
    }
    have_hess_ = side_.have_hess;
    hess_static_ = side_.hess_static;
    static_age_ = side_.static_age;
    if (Hg_.size() > 0) {
      Hg_ = side_.Hg;
      Hg_prev_ = side_.Hg_prev;
    }
    hg_known_ = side_.hg_known;
    hg_static_ = side_.hg_static;
    hg_age_ = side_.hg_age;
    if (!sparse_) set_hessian_model();
    lu_valid_ = false;
  }
  void reset() override {
    have_inc_ = false;
    chain_ = 0;
    have_hess_ = hess_static_ = false;
    hg_known_ = hg_static_ = false;
    lu_valid_ = false;
    if (sparse_) sparse_->forget_grads();
  }

  ConstraintSet& constraints() { return *g_; }
  FibreMap& fibre() { return *fibre_; }
  BaseMethod& base() { return *base_; }
  bool shake() const { return shake_; }
  /// A rank-deficient Newton or multiplier system was met (warn once).
  bool rank_deficiency_seen() const { return rank_seen_; }
  double rank_deficiency_t() const { return rank_t_; }
  double condition_estimate() const { return cond_max_; }
  /// The Newton systems are sparse (SparseGeometricNewton).
  bool sparse() const { return static_cast<bool>(sparse_); }
  /// SHAKE's error estimate on the sparse path: e_p without its component
  /// along G(q)^T (Rattle::restrict_error).
  bool restrict_momenta(const ConstVecRef& q, VecRef ep) { return sparse_->restrict_momenta(q, ep); }
  /// The sparse path is taken for a sparse ConstraintGradFcn.
  static bool sparse_linear_algebra(const ConstraintSet& g) { return g.sparse_grad(); }

  /// SHAKE's next step depends on its start only through the fibre
  /// [z] = {exp(s X_g) z} (it slides to M_H along it first; McLachlan et al. 2014,
  /// Sect. 4: S_h is constant on fibres), and its two results lie O(h)
  /// along their fibres, differently after one step and two half steps.
  /// The estimate compares the points of the two fibres on M_H instead,
  /// err = (Pi(to) - Pi(full)) / denom (Pi: slide_to_hidden, a Newton
  /// solve in sigma each).  Dropping only the linear fibre component leaves
  /// an O(h^2) remainder (the fibre flow turns the difference) that still
  /// made adaptive SHAKE take 5x RATTLE's steps at RelTol 1e-7; without
  /// any restriction it crawled (8840 steps for RATTLE's 72; issue 13,
  /// defect 4).
  bool restrict_error(const Point& to, const Point& full, double denom, VecRef err) override {
    if (!shake_) return true;
    errsig_ = sigma_;  // the step's guess state
    sigma_.setZero();
    StepStatus s = slide_to_hidden(to.t, to.x, errA_, false);
    if (s == StepStatus::Success) {
      sigma_.setZero();
      s = slide_to_hidden(to.t, full.x, errB_, false);
    }
    sigma_ = errsig_;
    if (s == StepStatus::NonFinite) return false;
    // A slide that did not converge leaves the plain estimate: the step is
    // judged on its points as they are.
    if (s == StepStatus::Success) err = (errA_ - errB_) / denom;
    return true;
  }

  StepStatus step(Point& from, double h, Point& to) override {
    // sparse products single-threaded (SingleThreadedEigen: OpenMP's
    // barriers cost more than these O(nnz) products)
    std::optional<SingleThreadedEigen> single;
    if (sparse_) single.emplace();
    const Vec& z0 = from.x;
    const double t1 = from.t + h;
    t_rank_ = from.t;
    t_step_ = from.t;
    base_->begin(from.t, h);
    if (!update_hessian(from.t, z0)) return StepStatus::NonFinite;
    form_base_blocks();

    // Guess: along equal steps w, s and sigma are smooth in the step index:
    // extrapolate the last three (O(h^3)) or two; otherwise the last step's
    // increment and multipliers scaled by h/h_prev; else explicit Euler.
    const bool cont = have_inc_ && same_bits(last_z1_, z0);
    base_->anchor(z0, anchor_);
    if (cont && chain_ >= 3 && same_step(h, h_prev_)) {
      w_ = 3.0 * (wh_[0] - wh_[1]) + wh_[2];
      s_ = 3.0 * (sh_[0] - sh_[1]) + sh_[2];
      sigma_ = 3.0 * (gh_[0] - gh_[1]) + gh_[2];
    } else if (cont && chain_ >= 2 && same_step(h, h_prev_)) {
      w_ = 2.0 * wh_[0] - wh_[1];
      s_ = 2.0 * sh_[0] - sh_[1];
      sigma_ = 2.0 * gh_[0] - gh_[1];
    } else if (cont) {
      const double r = h / h_prev_;
      w_ = anchor_ + r * inc_;
      s_ = r * sh_[0];
      sigma_ = r * gh_[0];
    }

    // From an extrapolated guess plain Newton (damping there can settle on
    // a root of another branch); if it fails, from s = 0 with damping, which
    // finds the root nearest s = 0 also from starts off M_H (SHAKE points).
    // SHAKE: S_h is constant on fibres (McLachlan et al. 2014, Sect. 4: S_h = phi_h o
    // Gamma, Gamma a projection along them), so its root is sought from
    // Pi(z_0), the point of the fibre on M_H, where Thm. 4.1 puts it O(h)
    // away; a SHAKE point z_0 itself lies O(h) off M_H and Newton from
    // there may miss the root or reach one of another branch.  The same for
    // RATTLE from a point it did not produce (a restart, step doubling).
    // Holonomic fibres are straight lines p - G(q)^T s along which the
    // SHAKE equation g(q_1) = 0 is solved from any of their points alike
    // (the classical SHAKE): no slide while the step continues the last.
    const Vec* start = &z0;
    if (!cont) sigma_.setZero();
    if ((shake_ && !g_->holonomic()) || !cont) {  // RATTLE continuing its own output is on M_H already
      const StepStatus sl = slide_to_hidden(from.t, z0, zs_, false);
      if (sl != StepStatus::Success) {
        have_inc_ = false;
        return sl;
      }
      start = &zs_;
    }
    if (!cont && !explicit_guess(from.t, *start)) return StepStatus::NonFinite;
    StepStatus st = solve_shake(*start, h, !cont);
    // A root on another branch: from a warm start, solved again from s = 0;
    // from s = 0, refused (DampedMultiplierNewton::distant)
    if (st == StepStatus::Success &&
        distant_shake_root(*start,
                           cont ? DampedMultiplierNewton::kDoubtRatio : DampedMultiplierNewton::kRefuseRatio))
      st = StepStatus::DistantRoot;
    if ((st == StepStatus::NewtonDiverged || st == StepStatus::DistantRoot) && cont) {
      ++problem_.stats().newton_retries;
      // The failed solve may have re-taken H's Hessian at the midpoint of a
      // far iterate: back to the model at z_0 (hess_prev_), or the retry
      // works with a wrong Jacobian (it then failed where a fresh stepper
      // succeeded: S^3 with a quartic potential over Störmer–Verlet).
      restore_hessian_model();
      if (!explicit_guess(from.t, *start)) return StepStatus::NonFinite;
      st = solve_shake(*start, h, true);
      if (st == StepStatus::Success && distant_shake_root(*start, DampedMultiplierNewton::kRefuseRatio))
        st = StepStatus::DistantRoot;
    }
    if (st == StepStatus::NewtonDiverged && !sparse_) {
      // Near a singular configuration (G losing rank: a parallelogram
      // linkage through its collinear positions) the Newton matrix is
      // nearly singular without being so at rank_tolerance, and its
      // corrections along the near-null directions diverge: once more from
      // the explicit guess with pivots below sqrt(eps) of the largest taken
      // as zero (minimum-norm corrections, Moore-Penrose).
      ++problem_.stats().newton_retries;
      restore_hessian_model();
      if (!explicit_guess(from.t, *start)) return StepStatus::NonFinite;
      rank_tol_now_ = kLooseRankTolerance;
      solver_.set_threshold(rank_tol_now_);
      st = solve_shake(*start, h, true);
      rank_tol_now_ = rank_tolerance;
      solver_.set_threshold(rank_tol_now_);
      if (st == StepStatus::Success && distant_shake_root(*start, DampedMultiplierNewton::kRefuseRatio))
        st = StepStatus::DistantRoot;
    }
    if (st != StepStatus::Success) {
      have_inc_ = false;
      return st;
    }
    Stats& stats = problem_.stats();
    if (constraints_violated(gnorm_, z1_)) {
      have_inc_ = false;
      return StepStatus::ConstraintsViolated;
    }
    record_end(stats.max_constraint_residual, gnorm_, z1_.lpNorm<Eigen::Infinity>());

    if (shake_) {
      // SHAKE does not enforce {g, H} = Dg f = 0 (it is O(h)): measured for
      // Stats at the returned point, one call of f (Dg from the last Newton
      // iterate, within the last correction, below NewtonTol, of z_1)
      to.x = z1_;
      if (!problem_.field(t1, z1_, f_)) return StepStatus::NonFinite;
      if (sparse_) {  // G from the last Newton iterate, as Dg1_
        sparse_->hidden(f_, r_);
      } else {
        r_.noalias() = Dg1_ * f_;
      }
      record_end(stats.max_hidden_residual, inf_norm(r_), inf_norm(f_));
    } else {
      st = slide_to_hidden(t1, z1_, z_, true);
      if (st != StepStatus::Success) {
        have_inc_ = false;
        return st;
      }
      to.x = z_;
    }
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    to.t = t1;
    to.has_force = false;
    // remember the unknowns for the next guess
    inc_ = w_ - anchor_;
    chain_ = (cont && same_step(h, h_prev_)) ? std::min(chain_ + 1, 3) : 1;
    for (int k = 2; k > 0; --k) {
      wh_[k] = wh_[k - 1];
      sh_[k] = sh_[k - 1];
      gh_[k] = gh_[k - 1];
    }
    wh_[0] = w_;
    sh_[0] = s_;
    gh_[0] = sigma_;
    h_prev_ = h;
    last_z1_ = to.x;
    have_inc_ = true;
    return StepStatus::Success;
  }

 private:
  static double inf_norm(const ConstVecRef& v) { return v.lpNorm<Eigen::Infinity>(); }

  /// The SHAKE root just found is on another branch
  /// (DampedMultiplierNewton::distant): the multipliers' displacement of
  /// q_1, linearised through the base method as c = D s with
  /// D = (Z_y W - Z_w R_w^{-1} R_y W)_q (s moves y, and w with it through
  /// R(w, y) = 0), less its linear part c_lin = D s_lin, G_0 (dq + c_lin) =
  /// 0 (the normal part of dq at q_0), against the free displacement
  /// dq = q_1 - q_0 - c.  Dense constraints
  /// (g(q, p): distant_phase_space_root; the sparse path is not checked).  Counted in
  /// stats.
  bool distant_shake_root(const Vec& start, double ratio) {
    if (sparse_) return false;
    if (!g_->holonomic()) return distant_phase_space_root(start, ratio);
    const auto q0 = start.head(d_);
    RyW_.noalias() = Ry_ * W_;
    ZyW_.noalias() = Zy_ * W_;
    rwlu_.compute(Rw_);
    Tw_.noalias() = rwlu_.solve(RyW_);
    ZyW_.noalias() -= Zw_ * Tw_;  // D (all of z_1)
    cvec_.noalias() = ZyW_ * s_;
    zfree_.head(d_) = z1_.head(d_) - cvec_.head(d_) - q0;  // dq
    Msig_.noalias() = Dgy_.leftCols(d_) * ZyW_.topRows(d_);  // holonomic: Dgy_ is [G(q_0) 0]
    if (!small_.compute(Msig_)) return false;
    r_.noalias() = -Dgy_.leftCols(d_) * zfree_.head(d_);  // q_1 = q_0 + dq + D s_lin on G_0's tangent
    small_.solve(r_, dsig_);
    dsig_ -= s_;  // s_lin - s
    cvec_.noalias() = ZyW_ * dsig_;
    if (!DampedMultiplierNewton::distant(cvec_.head(d_).norm(), zfree_.head(d_).norm(), inf_norm(q0), ratio))
      return false;
    ++problem_.stats().distant_roots;
    return true;
  }

  /// The same for g(q, p): the multipliers move z along the fibres, the
  /// flows of X_g, tangent to {g = 0} (coisotropic: {g_i, g_j} = 0), by an
  /// amount that can exceed the free step (and is not unique on closed
  /// fibres such as the Hopf circles), so the test is on z_1 itself: the
  /// part of the chord z_1 - z_s (z_s the start on the fibre of z_0) normal
  /// to {g = 0} at z_1, |N (z_1 - z_s)|_2 with N = Dg^T (Dg Dg^T)^+ Dg (the
  /// last Newton iterate's Dg, within a correction of z_1): about
  /// |z_1 - z_s|^2 / (2 R) on a root of the branch, about the diameter across
  /// {g = 0}; against the free displacement dz = z_1 - z_s - D s, D s the
  /// multipliers' displacement linearised as for holonomic g.  No user call.
  bool distant_phase_space_root(const Vec& zs, double ratio) {
    RyW_.noalias() = Ry_ * W_;
    ZyW_.noalias() = Zy_ * W_;
    rwlu_.compute(Rw_);
    Tw_.noalias() = rwlu_.solve(RyW_);
    ZyW_.noalias() -= Zw_ * Tw_;  // D (all of z_1)
    cvec_.noalias() = ZyW_ * s_;
    zfree_ = z1_ - cvec_ - zs;  // dz
    cvec_ = z1_ - zs;           // the chord
    Msig_.noalias() = Dg1_ * Dg1_.transpose();
    if (!small_.compute(Msig_)) return false;
    r_.noalias() = Dg1_ * cvec_;
    small_.solve(r_, dsig_);
    const double normal = std::sqrt(std::max(0.0, r_.dot(dsig_)));
    if (!DampedMultiplierNewton::distant(normal, zfree_.norm(), inf_norm(zs), ratio)) return false;
    ++problem_.stats().distant_roots;
    return true;
  }

  /// The H Hessian model at the step's start: every step, or once while it
  /// stays constant (quadratic H), re-checked every kStaticRecheck steps.
  bool update_hessian(double t, const ConstVecRef& z0) {
    if (have_hess_ && hess_static_ && ++static_age_ < kStaticRecheck) return true;
    ++problem_.stats().jacobian_evals;
    if (sparse_) {
      if (!sparse_->take_hessian(t, z0, have_hess_, hess_static_)) return false;
      have_hess_ = true;
      static_age_ = 0;
      return true;
    }
    if (!problem_.hamiltonian_hessian(t, z0, hess_)) return false;
    const double scale = std::max(1.0, hess_.cwiseAbs().maxCoeff());
    hess_static_ = have_hess_ && (hess_ - hess_prev_).cwiseAbs().maxCoeff() <= 1e-10 * scale;
    hess_prev_ = hess_;
    have_hess_ = true;
    static_age_ = 0;
    set_hessian_model();
    return true;
  }

  /// The model of update_hessian (at the step's start) again, after a
  /// solve re-took it elsewhere.
  void restore_hessian_model() {
    if (sparse_ && have_hess_) {
      sparse_->restore_model();
      form_base_blocks();
      lu_valid_ = false;
    }
    if (sparse_ || !have_hess_ || hess_ == hess_prev_) return;
    hess_ = hess_prev_;
    set_hessian_model();
    form_base_blocks();
    lu_valid_ = false;
  }

  /// The base method's blocks R_w, R_y, Z_w, Z_y from the model (the
  /// sparse ones are formed with it: SparseGeometricNewton::set_model).
  void form_base_blocks() {
    if (!sparse_) base_->jacobian(Rw_, Ry_, Zw_, Zy_);
  }

  /// hess_ is the model: to the base method, and whether its H_pp block is
  /// diagonal (diagonal masses), which makes the slide's H_pp G^T O(d m).
  void set_hessian_model() {
    base_->set_hessian(hess_);
    const auto Hpp = hess_.bottomRightCorner(d_, d_);
    pp_diagonal_ = true;
    for (int j = 0; j < d_ && pp_diagonal_; ++j)
      for (int i = 0; i < d_; ++i)
        if (i != j && Hpp(i, j) != 0.0) {
          pp_diagonal_ = false;
          break;
        }
  }

  /// w from explicit Euler (one call of f), s = sigma = 0.
  bool explicit_guess(double t, const Vec& z) {
    if (!problem_.field(t, z, f_)) return false;
    base_->guess(z, f_, w_);
    s_.setZero();
    sigma_.setZero();
    chain_ = 0;
    return true;
  }

  /// Hessians of g at z into Hg_: every step, or once while they stay
  /// constant (quadratic g: spheres, distances), re-checked every
  /// kStaticRecheck steps, as for H.
  bool constraint_hessians(const ConstVecRef& z) {
    if (hg_known_ && hg_static_ && ++hg_age_ < kStaticRecheck) return true;
    if (!g_->hess(z, Hg_)) return false;
    const double scale = std::max(1.0, Hg_.cwiseAbs().maxCoeff());
    hg_static_ = hg_known_ && (Hg_ - Hg_prev_).cwiseAbs().maxCoeff() <= 1e-10 * scale;
    Hg_prev_ = Hg_;
    hg_known_ = true;
    hg_age_ = 0;
    return true;
  }

  /// W = J Dg^T: the fibre directions X_{g_i} as columns.
  void fibre_directions(const Mat& Dg, MatRef W) const {
    W.topRows(d_) = Dg.rightCols(d_).transpose();
    W.bottomRows(d_) = -Dg.leftCols(d_).transpose();
  }

  /// Rank bookkeeping from a MinNormSolver or a SparseRankRevealingLU.
  template <class Solver>
  void note_rank(const Solver& s, double t) {
    cond_max_ = std::max(cond_max_, s.condition_estimate());
    if (!s.rank_deficient()) return;
    ++problem_.stats().rank_deficient;
    if (!rank_seen_) {
      rank_seen_ = true;
      rank_t_ = t;
    }
  }

  /// Newton in u = (w, s) for R(w, y(s)) = 0, g(Z(w, y(s)))/h = 0.  On
  /// success z1_ is z_1^- at the accepted iterate (the last correction
  /// applied through the linearization, exact for midpoint's Z = w),
  /// gnorm_ bounds |g(z1_)|.
  StepStatus solve_shake(const ConstVecRef& z0, double h, bool damped) {
    Stats& st = problem_.stats();
    ++st.newton_solves;
    const bool holonomic = g_->holonomic();
    if (holonomic && !(sparse_ ? sparse_->grad_start(z0) : g_->grad(z0, Dgy_)))
      return StepStatus::NonFinite;  // fibres keep q: W fixed
    double prev = std::numeric_limits<double>::infinity();
    long it = 0;
    damping_ = damped ? 0 : kMaxDamping;
    // On tiny steps g(q_1)/h = 0 fixes s (and the momenta along the fibre)
    // only to eps |q| / (|h| |H_pp|): their corrections are weighted so
    // that they converge (RattleAcceptance::roundoff_weight; weight 1 for
    // ordinary steps).  Holonomic g; g(q, p) keeps weight 1.  q_1 is
    // determined to round-off and is not weighted.
    const double weight =
        holonomic ? RattleAcceptance::roundoff_weight(
                        h, sparse_ ? sparse_->hpp_norm()
                                   : hess_.bottomRightCorner(d_, d_).cwiseAbs().rowwise().sum().maxCoeff(),
                        z0.head(d_), z0.tail(d_), opts_.tol)
                  : 1.0;
    bool refreshed = false;
    for (;;) {
      if (sparse_ && holonomic)
        sparse_->flow(z0, s_, false, y_);
      else if (!fibre_->flow(z0, s_, y_))
        return fail(it, StepStatus::NonFinite);
      if (!base_->residual(y_, w_, F_.head(nw_), z1_)) return fail(it, StepStatus::NonFinite);
      if (!g_->value(z1_, gv_) || !(sparse_ ? sparse_->grad_end(z1_) : g_->grad(z1_, Dg1_)))
        return fail(it, StepStatus::NonFinite);
      if (!holonomic && !(sparse_ ? sparse_->grad_start(y_) : g_->grad(y_, Dgy_)))
        return fail(it, StepStatus::NonFinite);
      F_.tail(m_) = gv_ / h;
      gnorm_ = inf_norm(gv_);
      if (!sparse_) fibre_directions(Dgy_, W_);
      // Small systems: the matrix at every iterate (quadratic convergence).
      // Large ones (more than kReuseAbove unknowns, where the O(n^3)
      // factorization outweighs the callbacks): the last factorization is
      // kept across iterations and steps of the same h while it contracts
      // fast, and re-formed at the iterate where it stops doing so.
      const bool keep = opts_.reuse_factorization && nu_ > kReuseAbove && lu_valid_ && lu_h_ == h;
      bool fresh = !keep;
      if (fresh && !factor_jacobian(h)) return fail(it, StepStatus::NonFinite);
      if (!solve_correction()) return fail(it, StepStatus::NonFinite);
      double nd = correction_size(weight);
      if (!std::isfinite(nd)) return fail(it, StepStatus::NonFinite);
      double theta = nd / prev;
      if (!fresh && it > 0 && theta > opts_.refresh_rate) {
        if (!factor_jacobian(h) || !solve_correction()) return fail(it, StepStatus::NonFinite);
        fresh = true;
        nd = correction_size(weight);
        if (!std::isfinite(nd)) return fail(it, StepStatus::NonFinite);
        theta = nd / prev;
      }
      if (it > 0 && theta >= 1.0 && damping_ < kMaxDamping) {
        // The Newton correction grew: far from the root (a start off M_H,
        // where the fibre parameter is large) the full step overshoots.
        // Back to the last iterate with half its correction (damped Newton).
        ++damping_;
        w_ += 0.5 * du_last_.head(nw_);
        s_ += 0.5 * du_last_.tail(m_);
        du_last_ *= 0.5;
        ++it;
        ++st.newton_iterations;
        if (it >= opts_.max_iterations) return fail(it, StepStatus::NewtonDiverged);
        continue;
      }
      w_ -= du_.head(nw_);
      s_ -= du_.tail(m_);
      du_last_ = du_;
      ++it;
      ++st.newton_iterations;
      if (converged(nd, theta, it, fresh && exact_shake_jacobian())) {
        // z_1^- at the new iterate, to first order in the (tiny) correction
        if (sparse_) {
          sparse_->apply_z(du_.head(nw_), dz_, z1_);
        } else {
          z1_.noalias() -= Zw_ * du_.head(nw_);
          z1_.noalias() -= Zy_ * dz_;
        }
        // |g| there: the linear part of the correction removes gv, what is
        // left is of second order, bounded by theta |gv|; unless the system
        // was singular (a zero or redundant G): the minimum-norm correction
        // then leaves h |F_g - J_g du| of gv, nonzero when g = 0 has no
        // solution in reach (the step must then be refused, not returned)
        gnorm_ = std::min(gnorm_, std::max(theta, nd) * gnorm_);
        if (min_norm_) {  // (scratch: dr_ serves the slide otherwise)
          if (sparse_) {
            sparse_->shake_g_defect(du_, F_, dr_);
          } else {
            // JF = D_r^-1 JF_ D_c^-1 (JF_ holds the equilibrated matrix)
            Fs_ = du_.cwiseQuotient(cs_);
            dr_.noalias() = JF_.bottomRows(m_) * Fs_;
            dr_.array() /= rs_.tail(m_).array();
            dr_ -= F_.tail(m_);
          }
          gnorm_ += std::abs(h) * inf_norm(dr_);
        }
        finish(it);
        return StepStatus::Success;
      }
      if (it >= opts_.max_iterations || (theta >= 1.0 && damping_ >= kMaxDamping))
        return fail(it, StepStatus::NewtonDiverged);
      if (it > 1 && theta > kHessianRefreshRate && !hess_static_ && !refreshed) {
        // Slow: H's Hessian model (from z_0) is off where the method
        // evaluates f; the s-column of the Jacobian is O(h) and sensitive to
        // it.  Once per solve, take it at the step's midpoint (y + z_1^-)/2.
        refreshed = true;
        xm_ = 0.5 * (y_ + z1_);
        ++st.jacobian_evals;
        if (sparse_ ? !sparse_->take_model_at(t_step_ + 0.5 * h, xm_)
                    : !problem_.hamiltonian_hessian(t_step_ + 0.5 * h, xm_, hess_))
          return fail(it, StepStatus::NonFinite);
        if (!sparse_) set_hessian_model();
        form_base_blocks();
        lu_valid_ = false;
      }
      prev = nd;
    }
  }

  /// Newton in sigma_ for Dg(z) f(t, z) = 0, z = exp(sigma X_g) zin: the
  /// projection Pi onto M_H along the fibre (RATTLE's last stage; SHAKE's
  /// start).  `record`: the residual goes into the stats.
  StepStatus slide_to_hidden(double t1, const Vec& zin, Vec& zout, bool record_hidden) {
    Stats& st = problem_.stats();
    bool have_matrix = false;
    double prev = std::numeric_limits<double>::infinity();
    long it = 0;
    // sparse g(q): G at zin's q serves the whole slide (the fibre keeps q)
    const bool curved = !g_->holonomic();
    if (sparse_ && !curved && !sparse_->grad_end(zin)) return StepStatus::NonFinite;
    for (;;) {
      if (inf_norm(sigma_) == 0.0) {
        zout = zin;
      } else if (sparse_ && !curved) {
        sparse_->flow(zin, sigma_, true, zout);
      } else if (!fibre_->flow(zin, sigma_, zout)) {
        return StepStatus::NonFinite;
      }
      // Sparse: M from the model, for g(q) M = -G H_pp G^T kept for the
      // slide, for g(q, p) re-formed at every iterate (no Broyden: its
      // update would fill M)
      const bool broyden = !sparse_ && have_matrix && !hess_static_;
      if (sparse_) {
        if (!problem_.field(t1, zout, f_) || (curved && !sparse_->grad_end(zout))) return StepStatus::NonFinite;
        sparse_->hidden(f_, r_);
        if (!have_matrix || curved) {
          if (curved && !have_matrix && !sparse_->constraint_hessians(zout)) return StepStatus::NonFinite;
          if (!sparse_->factor_slide(f_, curved)) return StepStatus::NonFinite;
          note_rank(sparse_->slide_solver(), t1);
          have_matrix = true;
        }
      } else if (!problem_.field(t1, zout, f_) || !g_->grad(zout, Dg1_)) {
        return StepStatus::NonFinite;
      } else {
        r_.noalias() = Dg1_ * f_;
        fibre_directions(Dg1_, W_);
      }
      if (broyden) {
        // H's Hessian model is a step old: Broyden's update of M from the
        // measured change of r keeps the iteration superlinear (the secant
        // method for m = 1) without further calls
        dr_ = r_ - r_last_;
        const double den = dsig_.squaredNorm();
        if (den > 0.0) {
          dr_.noalias() += Msig_ * dsig_;  // r_new - r_old - M (sigma_new - sigma_old), dsig = old - new
          Msig_.noalias() += (dr_ / den) * (-dsig_).transpose();
          if (!small_.compute(Msig_)) return StepStatus::NonFinite;
        }
      } else if (!sparse_ && !(have_matrix && g_->holonomic())) {
        // M_ij = d/dsigma_j (grad g_i . f) = (H_i f + Df^T grad g_i) . X_{g_j}
        //      = {{g_i, H}, g_j}  (Lemma 3.11), re-formed at every iterate from
        // the current f, Dg and the Hessians of g (at z_1^-) and of H (model).
        // Holonomic g: the first term vanishes (W's q-rows are 0 and H_i
        // has only its qq block) and M = -G H_pp G^T, constant along the
        // fibre (q fixed) for the static H this branch has: formed once.
        if (curved && !have_matrix && !constraint_hessians(zout)) return StepStatus::NonFinite;
        // Df = J Hess with J = [0 I; -I 0]: (Df W)_q = (Hess W)_p, (Df W)_p = -(Hess W)_q
        if (curved) {
          V_.noalias() = hess_ * W_;
          Msig_.noalias() = Dg1_.leftCols(d_) * V_.bottomRows(d_);
          Msig_.noalias() -= Dg1_.rightCols(d_) * V_.topRows(d_);
        } else {
          if (pp_diagonal_)
            V_.bottomRows(d_).noalias() = hess_.bottomRightCorner(d_, d_).diagonal().asDiagonal() * W_.bottomRows(d_);
          else
            V_.bottomRows(d_).noalias() = hess_.bottomRightCorner(d_, d_) * W_.bottomRows(d_);
          Msig_.noalias() = Dg1_.leftCols(d_) * V_.bottomRows(d_);
        }
        if (curved) {
          for (int i = 0; i < m_; ++i) {  // f . (H_i W_j) = (H_i f) . W_j, H_i symmetric
            hw_.noalias() = Hg_.middleCols(i * n_, n_) * f_;
            Msig_.row(i).noalias() += hw_.transpose() * W_;
          }
        }
        if (!small_.compute(Msig_)) return StepStatus::NonFinite;
        note_rank(small_, t1);
        have_matrix = true;
      }
      r_last_ = r_;
      if (sparse_) {
        sparse_->solve_slide(r_, dsig_);
        sparse_->directions(dsig_, true, dz_);
      } else {
        small_.solve(r_, dsig_);
        dz_.noalias() = W_ * dsig_;
      }
      sigma_ -= dsig_;
      ++it;
      ++st.projection_iterations;
      const double nd = inf_norm(dz_) / std::max(1.0, inf_norm(zout));
      if (!std::isfinite(nd)) return StepStatus::NonFinite;
      const double theta = nd / prev;
      // exact matrix: static H's Hessian and, for g(q, p), static g Hessians
      if (converged(nd, theta, it, hess_static_ && (g_->holonomic() || hg_static_) && !broyden)) {
        zout -= dz_;
        const double hid = std::min(inf_norm(r_), std::max(theta, nd) * inf_norm(r_));
        // with a differenced Dg, what {g, H} = Dg f may be off by is added
        if (record_hidden) record_end(st.max_hidden_residual, hid + g_->grad_error(f_), inf_norm(f_));
        return StepStatus::Success;
      }
      if ((it > 1 && theta >= 1.0) || it >= opts_.max_iterations) return StepStatus::NewtonDiverged;
      prev = nd;
    }
  }

  /// Newton has converged once the correction just applied is below tol,
  /// or once the error it leaves, theta/(1 - theta) |du| with theta the
  /// rate measured in this solve (HW IV.8, (8.10)), is below tol for an
  /// exact Jacobian (convergence is quadratic: the error actually left is
  /// far smaller) and at round-off for a model one (linear convergence: an
  /// error of tol left at every step would be smooth along the trajectory,
  /// a drift of the symplectic map; Hairer, McLachlan, Razakarivony, BIT 48
  /// (2008); the classical separable RATTLE asks the same).  The round-off
  /// bound is for holonomic g only, whose tiny steps are weighted
  /// (roundoff_weight); for g(q, p) the fibre parameter of tiny steps is
  /// not, and tol is kept.
  bool converged(double nd, double theta, long it, bool exact) const {
    if (nd <= opts_.tol) return true;
    if (it <= 1 || !(theta < 1.0)) return false;
    const bool strict = !exact && g_->holonomic();
    const double bound = strict ? std::min(opts_.tol, RattleAcceptance::kRoundoffLeft) : opts_.tol;
    return theta / (1.0 - theta) * nd <= bound;
  }

  /// The SHAKE Newton matrix is the exact Jacobian when H's Hessian is
  /// constant (the base method's blocks are then exact) and the fibre
  /// direction W = J Dg(y)^T is d/ds exp(s X_g) z_0 (m = 1, or holonomic g).
  bool exact_shake_jacobian() const { return hess_static_ && (m_ == 1 || g_->holonomic()); }

  /// The SHAKE Newton matrix at the current iterate (W_, Dg1_ and the base
  /// method's blocks), [R_w, R_y W; Dg Z_w / h, Dg Z_y W / h], factorized:
  /// LU, or the minimum-norm solver where it is numerically singular.
  bool factor_jacobian(double h) {
    lu_valid_ = false;
    if (sparse_) {
      ++problem_.stats().lu_factorizations;
      if (!sparse_->factor_shake(h)) return false;
      min_norm_ = sparse_->shake_solver().rank_deficient();
      if (min_norm_) note_rank(sparse_->shake_solver(), t_rank_);
      lu_valid_ = true;
      lu_h_ = h;
      return true;
    }
    RyW_.noalias() = Ry_ * W_;
    ZyW_.noalias() = Zy_ * W_;
    JF_.topLeftCorner(nw_, nw_) = Rw_;
    JF_.topRightCorner(nw_, m_) = RyW_;
    JF_.bottomLeftCorner(m_, nw_).noalias() = Dg1_ * Zw_;
    JF_.bottomRightCorner(m_, m_).noalias() = Dg1_ * ZyW_;
    JF_.bottomRows(m_) /= h;
    if (!JF_.allFinite()) return false;
    ++problem_.stats().lu_factorizations;
    // Equilibrated, D_r JF D_c with rows then columns scaled to unit max
    // norm: the blocks of JF scale with 1 and 1/h, and an unscaled pivot
    // ratio fell below the rank tolerance on small steps of a well-posed
    // system (h = 1e-5: "condition 2.7e12" for cond(G M^-1 G^T) = 7e4).
    // Rank and condition are judged, and the system solved, in the scaled
    // variables: du = D_c (D_r JF D_c)^{-1} D_r F.
    for (int i = 0; i < nu_; ++i) {
      const double r = JF_.row(i).cwiseAbs().maxCoeff();
      rs_(i) = r > 0.0 ? 1.0 / r : 1.0;
    }
    JF_.array().colwise() *= rs_.array();
    for (int j = 0; j < nu_; ++j) {
      const double c = JF_.col(j).cwiseAbs().maxCoeff();
      cs_(j) = c > 0.0 ? 1.0 / c : 1.0;
    }
    JF_.array().rowwise() *= cs_.array().transpose();
    lu_.compute(JF_);
    const auto u = lu_.matrixLU().diagonal().cwiseAbs();
    min_norm_ = !(u.minCoeff() > rank_tol_now_ * u.maxCoeff());
    if (min_norm_) {
      if (!solver_.compute(JF_)) return false;
      note_rank(solver_, t_rank_);
    }
    lu_valid_ = true;
    lu_h_ = h;
    return true;
  }

  /// du_ = JF^{-1} F_ with the factorization at hand.
  bool solve_correction() {
    if (sparse_) {
      sparse_->solve_shake(F_, du_);
      return du_.allFinite();
    }
    Fs_ = rs_.cwiseProduct(F_);  // the equilibrated system (factor_jacobian)
    if (min_norm_)
      solver_.solve(Fs_, du_);
    else
      du_.noalias() = lu_.solve(Fs_);
    du_.array() *= cs_.array();
    return du_.allFinite();
  }

  /// Scaled size of the correction of the state: w, and y through W ds
  /// (dz_ = W ds).
  double correction_size(double weight) {
    if (sparse_)
      sparse_->directions(du_.tail(m_), false, dz_);
    else
      dz_.noalias() = W_ * du_.tail(m_);
    // momentum-like and position-like unknowns, each relative to its own
    // size (the round-off floor of the weight is relative to |p|)
    double dp = 0.0, wp = 1.0, dq = 0.0, wq = 1.0;
    for (int i = 0; i < nw_; ++i) {
      if (wmask_(i) != 0.0) {
        dp = std::max(dp, std::abs(du_(i)));
        wp = std::max(wp, std::abs(w_(i)));
      } else {
        dq = std::max(dq, std::abs(du_(i)));
        wq = std::max(wq, std::abs(w_(i)));
      }
    }
    return std::max({weight * dp / wp, dq / wq, weight * inf_norm(dz_) / std::max(1.0, inf_norm(y_))});
  }

  StepStatus fail(long it, StepStatus s) {
    lu_valid_ = false;  // a retry starts from a fresh matrix
    finish(it);
    return s;
  }
  void finish(long it) {
    Stats& st = problem_.stats();
    st.newton_max_iterations = std::max(st.newton_max_iterations, it);
  }

  /// As the classical RATTLE: estimates raised to their round-off floor,
  /// and |g| above sqrt(tol) max(1, |z|) means Newton settled on a
  /// least-squares point (RattleAcceptance).
  static void record(double& stat, double value, const Mat& Dg, double zn) {
    RattleAcceptance::record_residual(stat, value, Dg, zn);
  }
  /// record() with Dg(z_1) of the last evaluation (dense or sparse).
  void record_end(double& stat, double value, double zn) {
    if (sparse_)
      RattleAcceptance::record_residual_norm(stat, value, sparse_->end_grad_norm(), zn);
    else
      record(stat, value, Dg1_, zn);
  }
  bool constraints_violated(double g_bound, const ConstVecRef& z) const {
    return RattleAcceptance::constraints_violated(g_bound, z, opts_.tol);
  }

  // kept by begin_side_steps for end_side_steps
  Vec side_guess_, side_last_z1_;
  bool side_have_inc_ = false;
  struct {
    Mat hess, hess_prev, Hg, Hg_prev;
    bool have_hess = false, hess_static = false, hg_known = false, hg_static = false;
    int static_age = 0, hg_age = 0;
  } side_;
  std::unique_ptr<ConstraintSet> g_;
  std::unique_ptr<FibreMap> fibre_;
  std::unique_ptr<BaseMethod> base_;
  std::unique_ptr<SparseGeometricNewton> sparse_;  // null: dense matrices
  bool shake_;
  NewtonOptions opts_;
  int d_, n_, m_, nw_, nu_;
  // H Hessian model
  Mat hess_, hess_prev_;
  bool have_hess_ = false, hess_static_ = false;
  int static_age_ = 0;
  // SHAKE system
  Mat Hg_, Rw_, Ry_, Zw_, Zy_, RyW_, ZyW_, JF_;
  Eigen::PartialPivLU<Mat> lu_;
  MinNormSolver solver_, small_;
  Vec F_, du_, w_, anchor_, inc_, s_, sigma_, dsig_;
  Vec Fs_, rs_, cs_;
  Vec cvec_, zfree_;  // distant_shake_root
  Eigen::PartialPivLU<Mat> rwlu_;
  Mat Tw_;  // the SHAKE system's right-hand side equilibrated, and its row and column scales
  Vec y_, z1_, z_, zs_, f_, dz_, gv_, r_;
  Mat Dg1_, Dgy_, W_, V_, Msig_;
  Vec errA_, errB_, errsig_;  // restrict_error (SHAKE): the two points on M_H
  double gnorm_ = 0.0;
  Vec du_last_, r_last_, dr_, hw_, xm_;
  Mat Hg_prev_;
  bool hg_known_ = false, hg_static_ = false;
  int hg_age_ = 0;
  double t_step_ = 0.0;
  int damping_ = 0;
  bool pp_diagonal_ = false;  // H_pp of the model is diagonal
  bool min_norm_ = false;  // the factorization at hand is the minimum-norm solver's
  bool lu_valid_ = false;  // a SHAKE factorization is kept (large systems), for step lu_h_
  double lu_h_ = 0.0;
  Vec wmask_;  // 1 for the base method's momentum-like unknowns (round-off weight)
  // guesses: the last three steps' w, s, sigma (index 0 the newest)
  Vec wh_[3], sh_[3], gh_[3];
  int chain_ = 0;  // equal, continuing steps behind them
  Vec last_z1_;
  double h_prev_ = 0.0;
  bool have_inc_ = false;
  // rank deficiency
  bool rank_seen_ = false;
  double rank_t_ = std::numeric_limits<double>::quiet_NaN();
  double t_rank_ = 0.0;
  double cond_max_ = 1.0;
  double rank_tol_now_ = rank_tolerance;  // of the SHAKE system (kLooseRankTolerance in the last retry)
};

}  // namespace odepkg

#endif
