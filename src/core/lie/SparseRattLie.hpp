// SparseRattLie.hpp — RattLie's step (read its header: Hante and Arnold's
// RATTLie, the discrete Legendre transforms (A) and (B)) for a product group
// with a sparse constraint Jacobian B (m x n) and a mass matrix that is block
// diagonal with one block per factor: O(nnz(B) + n) time and memory per
// step, no m x n, n x n or m x m dense matrix anywhere.
//
// Structure.  For G = G₁ × … × G_k the operators T(w), T(w)^{-T} and
// ∂_w[T(w)^{-T}x] are block diagonal (FactorBlocks), and so is M (BlockMass,
// same partition), hence the Newton matrix of (A) in Ω,
//   J = T(−hΩ)^{-T} M − h D(−hΩ, MΩ),
// is block diagonal: its blocks are inverted one by one (3 x 3 for a rigid
// body's rotation, 1 x 1 for a translation).  The Newton system of (A) in
// (ΔΩ, Δλ) reduces, as in the dense path, to the Schur complement
//   (h²/2) S Δλ = Φ − h Bt J⁻¹ r1,   S = Bt J⁻¹ B_nᵀ,   Bt = B(q_{n+1}) T(hΩ),
// applied as a product of sparse and block-diagonal factors, never formed.
//
// S is not symmetric (B(q_{n+1}) ≠ B_n, J ≠ Jᵀ).  It is formed sparse and
// factorized by a sparse LU (SchurLU: products and LU on a pattern analysed
// once per pattern of B, no allocation after that) at the first Newton
// iteration of a step; the later iterations solve S x = r by x ← x + S₀⁻¹(r − S x) with
// that factorization S₀ and the exact S applied as a product (it changes by
// O(h |ΔΩ|) while Newton converges: one or two sweeps), refactorizing only
// when this does not converge.  Why not the iteration preconditioned by the
// symmetric K = B_n M⁻¹ B_nᵀ of the velocity system, as SparseSeparableRattle
// does: S − K = O(h) (J = M + O(h), Bt = B_n + O(h)) is amplified by the
// condition of K, which grows like N² along a chain: measured on N = 10⁴
// hanging rods at h = 5e-3 the iteration diverged (contraction 0.7 to 16
// per sweep), where the LU converges in one.  K's LDLᵀ (SparseGramSolver:
// banded for a chain, AMD otherwise, tiny pivots dropped; LieGram) stays the
// preconditioner when K is rank deficient (redundant constraints, singular
// configurations: S is then singular and its LU useless) and as the
// fallback when the LU fails; rank deficiency is reported from K as on the
// dense path (odepkg:singularConstraints).  The Newton iteration is then
// inexact (Dembo, Eisenstat and Steihaug 1982) with inner corrections 1e-10
// relative: it converges to round-off like the exact one.

// (B) is linear in (v_{n+1}, μ) when f does not depend on v:
//   (h/2) K₁ μ = B₁ M⁻¹(b − h/2 f₁),  K₁ = B₁ M⁻¹ B₁ᵀ,  M v = b − h/2 (f₁ + B₁ᵀμ).
// A force depending on v (probed as in RattLie) makes it the fixed point
// v = Ψ(f(t, q_{n+1}, v)) of that linear solve, iterated with the same K₁
// (one call of f per sweep): it contracts by about h/2 |M⁻¹ ∂f/∂v|, fast for
// the damping of mechanical systems at the steps that resolve them; when
// it does not contract the step fails (NewtonDiverged: a smaller step in
// adaptive mode, an error naming it with fixed steps), never a wrong answer.
//
// Compositions (Order/Composition) use this step as their base like the
// dense one: symmetric, any sign of h, the warm start of the stages.
#ifndef ODEPKG_LIE_SPARSE_RATTLIE_HPP
#define ODEPKG_LIE_SPARSE_RATTLIE_HPP

#include "../NewtonSolver.hpp"
#include "../constrained/SparseGramSolver.hpp"
#include "BlockDiagonal.hpp"
#include "FactorBlocks.hpp"
#include "LieGram.hpp"
#include "LieGroupProblem.hpp"
#include "LieStepper.hpp"
#include "SchurLU.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg::lie {

class SparseRattLie final : public LieStepper {
 public:
  static constexpr int kVelocityRecheck = 16;
  static constexpr double kRankTolerance = 1e-10;
  static constexpr double kRefreshB = 1e-3;
  /// Sweeps of x ← x + P⁻¹(r − S x) before P is refactorized.
  static constexpr int kInner = 30;
  /// Relative size of the last inner correction.
  static constexpr double kInnerTol = 1e-10;
  /// Refinements of the velocity system's solution at most.
  static constexpr int kRefine = 4;

  /// The partition of M that the sparse path needs: the group's factors
  /// (Rᵏ split into scalars or whole); empty if M is coupled across them.
  static std::vector<FactorBlock> blocks_for(const LieGroupProblem& lp) {
    for (bool split : {true, false}) {
      auto b = factor_blocks(lp.group(), split);
      if (block_sizes(b) == lp.block_mass().sizes()) return b;
    }
    return {};
  }

  SparseRattLie(LieGroupProblem& lp, NewtonOptions opts)
      : LieStepper(lp.embedded()),
        lp_(lp),
        G_(lp.group()),
        M_(lp.block_mass()),
        blocks_(blocks_for(lp)),
        nq_(lp.nq()),
        n_(lp.n()),
        m_(lp.constraints()),
        opts_(opts),
        K_(lp.block_mass(), kRankTolerance),
        Kmul_(lp.block_mass(), kRankTolerance) {
    if (blocks_.empty())
      throw InputError("invalidOption",
                       "MassMatrix must be block diagonal with one block per factor of the group " +
                           G_.name().substr(0, 80) + " for a sparse ConstraintGradFcn (the sparse RATTLie)");
    if (m_ == 0 || !lp.has_sparse_constraint_grad())
      throw InputError("invalidInput", "the sparse RATTLie needs constraints with a sparse ConstraintGradFcn");
    sizes_ = block_sizes(blocks_);
    Tm_ = BlockDiagonal(sizes_);
    Tp_ = BlockDiagonal(sizes_);
    D_ = BlockDiagonal(sizes_);
    J_ = BlockDiagonal(sizes_);
    Jinv_ = BlockDiagonal(sizes_);
    const int n = n_, m = m_, ns = nq_ + n_;
    for (Cached* c : {&start_, &end_}) {
      c->y.resize(ns);
      c->f.resize(n);
    }
    for (Vec* v : {&f0_, &f1_, &fk_, &Om_, &w_, &wm_, &MOm_, &c_, &r1_, &u_, &dOm_, &b_, &v1_, &vprev_, &tmp_,
                   &tmp2_, &z_, &z2_, &pred_})
      v->resize(n);
    for (Vec* v : {&phi_, &rhs_, &x_, &res_, &cc_, &dlam_, &mu_, &rows_}) v->resize(m);
    lam_ = Vec::Zero(m);
    mu_prev_ = Vec::Zero(m);
    b_lam_ = Vec::Zero(m);
    lam_chain_ = Vec::Zero(m);
    g_delta_ = Vec::Zero(n);
    delta_ = Vec::Zero(n);
    g_eps_ = Vec::Zero(m);
    g_lam_ = Vec::Zero(m);
    eps_lam_ = Vec::Zero(m);
    q1_.resize(nq_);
    qs_.resize(nq_);
    y_.resize(ns);
  }

  const char* name() const override { return "rattlie"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }
  void reset() override {
    have_prev_ = false;
    guess_loaded_ = false;
  }

  /// The composition's warm start: as RattLie ([δ; ε; λ; h; c]).
  int guess_size() const override { return n_ + 2 * m_ + 2; }
  void save_guess(VecRef g) const override {
    g.head(n_) = delta_;
    g.segment(n_, m_) = eps_lam_;
    g.segment(n_ + m_, m_) = lam_;
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
  /// λ of a singular S is one solution (K-preconditioned iteration); μ is
  /// minimum-norm (LieGram).
  bool minimum_norm_position_multipliers() const override { return false; }
  /// Sweeps of the inner iteration for S, the refactorizations it needed,
  /// the LU factorizations of S and their symbolic analyses.
  long inner_sweeps() const { return inner_sweeps_; }
  long inner_restarts() const { return inner_restarts_; }
  long schur_factorizations() const { return slu_.factorizations(); }
  long schur_analyses() const { return slu_.analyses(); }

  StepStatus step(Point& from, double h, Point& to) override {
    const SingleThreadedEigen single;
    Stats& st = lp_.stats();
    const double t0 = from.t, t1 = from.t + h;
    const auto q0 = from.x.head(nq_);
    const auto v0 = from.x.tail(n_);
    const bool continues = have_prev_ && end_.valid && matches(end_, from);
    const bool warm = guess_loaded_ && g_h_ * h > 0.0 && std::abs(h) <= 4 * std::abs(g_h_) &&
                      std::abs(g_h_) <= 4 * std::abs(h);
    guess_loaded_ = false;
    const double r2 = warm ? (h / g_h_) * (h / g_h_) : 0.0;
    const Cached* src = nullptr;
    if (!load_start(from, src)) return StepStatus::NonFinite;
    // K at B_n: the last step's velocity system when this step continues it
    const bool reuse = K_at_end_ && src == &end_ && K_.valid();
    K_at_end_ = false;
    if (!reuse && !factor_K(B0_, t0)) return StepStatus::NonFinite;

    // ---- (A): Ω and λ ------------------------------------------------------
    M_.apply(v0, c_);
    c_ -= (0.5 * h) * f0_;
    chain_guess_ = continues;
    if (continues) {
      extrapolate(h / h_prev_);
      lam_ = mu_prev_;
      if (have_b_) lam_ += (h + h_prev_) * b_lam_;
      lam_chain_ = lam_;
      if (warm && g_chain_) lam_ += r2 * g_eps_;
    } else {
      Bex_ = B0_;
      lam_.setZero();
      if (warm) lam_ = g_lam_;
    }
    // P(λ) = v_n + h/2 M⁻¹(ad(v_n)ᵀMv_n − f_n − B_nᵀλ)
    lp_.inertial(v0, tmp_);
    tmp_ -= f0_;
    M_.solve(tmp_, pred_);
    pred_ = v0 + (0.5 * h) * pred_;
    tmp_.noalias() = B0_.transpose() * lam_;
    M_.solve(tmp_, tmp2_);
    Om_ = pred_ - (0.5 * h) * tmp2_;
    if (warm) Om_ += r2 * g_delta_;

    ++st.newton_solves;
    const double eps = std::numeric_limits<double>::epsilon();
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0, phi_norm = 0.0, r1_floor = 0.0;
    bool ok = false;
    long it = 0;
    for (;;) {
      w_ = h * Om_;
      G_.compose_exp(q0, w_, q1_);
      wm_ = -w_;
      M_.apply(Om_, MOm_);
      newton_blocks(h);
      Tm_.apply(MOm_, r1_);
      tmp2_.noalias() = B0_.transpose() * lam_;
      // the round-off of r1: its terms' sizes times eps
      r1_floor = eps * (inf_norm(r1_) + inf_norm(c_) + 0.5 * std::abs(h) * inf_norm(tmp2_));
      r1_ -= c_;
      r1_.noalias() += (0.5 * h) * tmp2_;
      if (!lp_.constraint(q1_, phi_)) return StepStatus::NonFinite;
      phi_norm = inf_norm(phi_);
      if (it == 0 && (fresh_B_ || !continues)) {
        if (continues) tmpB_ = Bex_;
        if (!lp_.constraint_grad_sparse(q1_, Bex_)) return StepStatus::NonFinite;
        if (continues) fresh_B_ = !(max_difference(tmpB_, Bex_) <= 1e-4 * max_abs(B0_));
      } else if (it > 0 && std::abs(h) * prev > kRefreshB) {
        if (!lp_.constraint_grad_sparse(q1_, Bex_)) return StepStatus::NonFinite;
      }
      if (!r1_.allFinite() || !q1_.allFinite()) return StepStatus::NonFinite;
      if (it == 0) {
        // S₀ for this step: LU unless K is rank deficient (S singular)
        use_lu_ = !K_.rank_deficient() && slu_.factor(Bex_, Tp_, Jinv_, B0_, sizes_);
      }
      Jinv_.apply(r1_, u_);
      // (h²/2) S Δλ = Φ − h Bt u,  Bt = Bex T(hΩ):  x = (h²/2) Δλ
      Tp_.apply(u_, tmp_);
      rhs_ = phi_;
      rhs_.noalias() -= h * (Bex_ * tmp_);
      if (!solve_S(rhs_, x_, t0)) return StepStatus::NonFinite;
      // ΔΩ = −u − (h/2) J⁻¹ B_nᵀ Δλ = −u − (1/h) J⁻¹ B_nᵀ x
      tmp_.noalias() = B0_.transpose() * x_;
      Jinv_.apply(tmp_, z_);
      dOm_ = -u_ - (1.0 / h) * z_;
      lam_ += (2.0 / (h * h)) * x_;
      Om_ += dOm_;
      const double nd = inf_norm(dOm_);
      if (!std::isfinite(nd)) break;
      if (it > 0) theta = nd / prev;
      ++it;
      ++st.newton_iterations;
      const double rest = (it > 1 && theta < 1.0) ? theta / (1.0 - theta) * nd : nd;
      const double scale = std::max(1.0, inf_norm(Om_));
      const double qscale = std::max(1.0, inf_norm(q1_));
      if (rest <= 4 * eps * scale || std::abs(h) * rest <= 4 * eps * qscale) {
        ok = true;
        break;
      }
      if ((it > 1 && theta >= 1.0) || it >= opts_.max_iterations) {
        // stagnation at round-off counts as converged: a small correction,
        // or both residuals of the iterate at their round-off (a long chain
        // amplifies the rounding of Φ, eps |q| at each joint, into
        // corrections of Ω of N eps |q| / h: measured 4e-8 for N = 1000,
        // |q| = 10³, h = 2e-3, with |Φ| = 3e-13 and r1 at round-off)
        const double Bscale = std::max(1.0, row_norm(B0_));
        ok = nd <= 64 * eps * scale || std::abs(h) * nd <= 64 * eps * qscale ||
             (theta >= 1.0 && nd <= 1e-6 * scale && phi_norm <= 16 * eps * qscale * Bscale &&
              inf_norm(r1_) <= 64 * r1_floor);
        break;
      }
      prev = nd;
    }
    st.newton_max_iterations = std::max(st.newton_max_iterations, it);
    if (it > 3) fresh_B_ = true;
    if (!ok) {
      have_prev_ = false;
      return StepStatus::NewtonDiverged;
    }
    w_ = h * Om_;
    G_.compose_exp(q0, w_, q1_);
    delta_ = Om_ - pred_;
    tmp_.noalias() = B0_.transpose() * lam_;
    M_.solve(tmp_, tmp2_);
    delta_ += (0.5 * h) * tmp2_;
    if (chain_guess_) eps_lam_ = lam_ - lam_chain_;
    {
      const double gb = phi_norm * std::min(1.0, theta);
      if (!(gb <= std::sqrt(opts_.tol) * std::max(1.0, inf_norm(q1_)))) {
        have_prev_ = false;
        return StepStatus::ConstraintsViolated;
      }
      const double floor = 4 * eps * std::max(1.0, row_norm(B0_));
      st.max_constraint_residual = std::max(st.max_constraint_residual, std::max(gb, floor));
    }

    // ---- (B): v_{n+1} and μ ------------------------------------------------
    // b = T(hΩ)^{-T} M Ω (Tm_ reused for T(+hΩ)^{-T})
    M_.apply(Om_, MOm_);
    for (int k = 0; k < static_cast<int>(blocks_.size()); ++k) {
      const FactorBlock& fb = blocks_[k];
      fb.group->tangent_inv_transpose(w_.segment(fb.voff, fb.dim), Tm_.block(k));
    }
    Tm_.apply(MOm_, b_);
    if (!lp_.constraint_grad_sparse(q1_, B1_)) return StepStatus::NonFinite;
    if (!factor_K(B1_, t1)) return StepStatus::NonFinite;
    y_.head(nq_) = q1_;
    if (!velocity_dependent_) {
      // v* = M⁻¹(b − h/2 f_n) ≈ v_{n+1}: f does not depend on it
      tmp_ = b_ - (0.5 * h) * f0_;
      M_.solve(tmp_, v1_);
      y_.tail(n_) = v1_;
      if (!lp_.force(t1, y_, f1_)) return StepStatus::NonFinite;
      solve_velocity_linear(h);
      if (probe_due_ || ++since_probe_ >= kVelocityRecheck) {
        since_probe_ = 0;
        probe_due_ = false;
        y_.tail(n_) = v1_;
        if (!lp_.force(t1, y_, fk_)) return StepStatus::NonFinite;
        if (fk_ != f1_) velocity_dependent_ = true;
      }
    }
    if (velocity_dependent_) {
      const StepStatus s = solve_velocity_fixed_point(h, t1);
      if (s != StepStatus::Success) {
        have_prev_ = false;
        return s;
      }
    }
    rhs_.noalias() = B1_ * v1_;
    const double hfloor = 4 * eps * std::max(1.0, row_norm(B1_) * inf_norm(v1_));
    st.max_hidden_residual = std::max(st.max_hidden_residual, std::max(inf_norm(rhs_), hfloor));

    to.t = t1;
    to.x.head(nq_) = q1_;
    to.x.tail(n_) = v1_;
    to.has_force = false;
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    end_.t = t1;
    end_.y = to.x;
    end_.f = f1_;
    end_.B.swap(B1_);  // B1_ is not needed after the step
    end_.valid = true;
    K_at_end_ = true;  // K₁ = K at end_.B: the next step's preconditioner
    // the last B_n for the extrapolation of the next step
    Bprev_.swap(B0_);
    if (continues && std::abs(h + h_prev_) > 0.25 * std::max(std::abs(h), std::abs(h_prev_))) {
      b_lam_ = (lam_ - mu_prev_) / (h + h_prev_);
      have_b_ = true;
    } else if (!continues) {
      have_b_ = false;
    }
    mu_prev_ = mu_;
    h_prev_ = h;
    have_prev_ = true;
    return StepStatus::Success;
  }

  /// λ(t): (B M⁻¹ Bᵀ) λ = B M⁻¹(ad(v)ᵀMv − f) + Z, Z = d/dε [B(q∘exp(εṽ)) v]
  /// by central differences, as RattLie::multipliers, sparse.
  bool multipliers(double t, const ConstVecRef& y, VecRef lambda) override {
    const SingleThreadedEigen single;
    const auto q = y.head(nq_);
    const auto v = y.tail(n_);
    const Cached* c = nullptr;
    if (end_.valid && same_time(end_.t, t) && end_.y == y) c = &end_;
    else if (start_.valid && same_time(start_.t, t) && start_.y == y) c = &start_;
    if (c) {
      fk_ = c->f;
      Bm_ = c->B;
    } else {
      if (!lp_.force(t, y, fk_) || !lp_.constraint_grad_sparse(q, Bm_)) return false;
    }
    const double vn = inf_norm(v);
    rhs_.setZero();
    if (vn > 0.0) {
      const double delta = std::cbrt(std::numeric_limits<double>::epsilon()) / vn;
      w_ = delta * v;
      G_.compose_exp(q, w_, qs_);
      if (!lp_.constraint_grad_sparse(qs_, Bt_)) return false;
      rhs_.noalias() = Bt_ * v;
      w_ = -delta * v;
      G_.compose_exp(q, w_, qs_);
      if (!lp_.constraint_grad_sparse(qs_, Bt_)) return false;
      rhs_.noalias() -= Bt_ * v;
      rhs_ /= 2 * delta;
    }
    lp_.inertial(v, tmp_);
    tmp_ -= fk_;
    M_.solve(tmp_, tmp2_);
    rhs_.noalias() += Bm_ * tmp2_;
    if (!Kmul_.factor(Bm_)) return false;
    Kmul_.solve(rhs_, lambda);
    return lambda.allFinite();
  }

 private:
  struct Cached {
    double t = 0.0;
    Vec y, f;
    SpMat B;
    bool valid = false;
  };

  static double inf_norm(const ConstVecRef& v) { return v.lpNorm<Eigen::Infinity>(); }
  static double max_abs(const SpMat& A) {
    return Eigen::Map<const Vec>(A.valuePtr(), A.nonZeros()).lpNorm<Eigen::Infinity>();
  }
  /// max |A − B| over the entries (O(nnz); on the values for one pattern).
  static double max_difference(const SpMat& A, const SpMat& B) {
    if (SparsePatternUnion::same_pattern(A, B))
      return (Eigen::Map<const Vec>(A.valuePtr(), A.nonZeros()) - Eigen::Map<const Vec>(B.valuePtr(), B.nonZeros()))
          .lpNorm<Eigen::Infinity>();
    const SpMat d = A - B;
    return max_abs(d);
  }
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
      B0_ = c->B;
    } else {
      if (!lp_.force(from.t, from.x, f0_)) return false;
      if (!lp_.constraint_grad_sparse(from.x.head(nq_), B0_)) return false;
    }
    if (c != &start_) {
      start_.t = from.t;
      start_.y = from.x;
      start_.f = f0_;
      start_.B = B0_;
      start_.valid = true;
    }
    return true;
  }

  /// Bex = B_n + s (B_n − B_{n−1}), on the values when the patterns agree.
  void extrapolate(double s) {
    if (SparsePatternUnion::same_pattern(B0_, Bprev_)) {
      Bex_ = B0_;
      Eigen::Map<Vec> e(Bex_.valuePtr(), Bex_.nonZeros());
      const Eigen::Map<const Vec> a(B0_.valuePtr(), B0_.nonZeros()), b(Bprev_.valuePtr(), Bprev_.nonZeros());
      e = a + s * (a - b);
    } else {
      Bex_ = B0_ + s * (B0_ - Bprev_);
    }
  }

  /// The blocks of (A)'s Newton matrix at Ω: T(−hΩ)^{-T}, D(−hΩ, MΩ),
  /// J = T(−hΩ)^{-T} M − h D and J⁻¹, T(hΩ).
  void newton_blocks(double h) {
    for (int k = 0; k < static_cast<int>(blocks_.size()); ++k) {
      const FactorBlock& fb = blocks_[k];
      const auto wm = wm_.segment(fb.voff, fb.dim);
      auto Tm = Tm_.block(k);
      auto D = D_.block(k);
      auto J = J_.block(k);
      fb.group->tangent_inv_transpose(wm, Tm);
      fb.group->d_tangent_inv_transpose(wm, MOm_.segment(fb.voff, fb.dim), D);
      J.noalias() = Tm * M_.block(k);
      J -= h * D;
      fb.group->tangent(w_.segment(fb.voff, fb.dim), Tp_.block(k));
    }
    Jinv_.set_inverse(J_);
  }

  /// x = S⁻¹ r, S x = Bex T(hΩ) J⁻¹ B_nᵀ x, by x ← x + P⁻¹(r − S x) with P
  /// the LU of S at the step's first iteration (use_lu_), else K = B_n M⁻¹
  /// B_nᵀ; P is refactorized at the current S (or K at Bex) once if that
  /// does not converge.
  bool solve_S(const Vec& r, Vec& x, double t) {
    auto precondition = [this](const Vec& b, Vec& out) {
      if (use_lu_)
        slu_.solve(b, out);
      else
        K_.solve(b, out);
    };
    for (int round = 0; round < 2; ++round) {
      precondition(r, x);
      double prev = std::numeric_limits<double>::infinity();
      bool converged = false;
      for (int k = 0; k < kInner; ++k) {
        ++inner_sweeps_;
        z_.noalias() = B0_.transpose() * x;
        Jinv_.apply(z_, z2_);
        Tp_.apply(z2_, z_);
        res_ = r;
        res_.noalias() -= Bex_ * z_;
        precondition(res_, cc_);
        x += cc_;
        const double nc = inf_norm(cc_);
        if (!std::isfinite(nc)) break;
        if (nc <= kInnerTol * inf_norm(x) || nc == 0.0) {
          converged = true;
          break;
        }
        if (nc > 0.5 * prev) break;
        prev = nc;
      }
      if (converged) return true;
      if (round == 1) return x.allFinite();
      ++inner_restarts_;
      if (use_lu_) {
        use_lu_ = slu_.factor(Bex_, Tp_, Jinv_, B0_, sizes_);
        if (!use_lu_ && !factor_K(Bex_, t)) return false;
      } else if (!factor_K(Bex_, t)) {
        return false;
      }
    }
    return true;
  }

  /// (B) with f_{n+1} = f1_ fixed and K = K₁ factorized:
  /// (h/2) K₁ μ = B₁ M⁻¹(b − h/2 f),  v = M⁻¹(b − h/2 (f + B₁ᵀμ)); up to
  /// kRefine refinements while B₁ v is above round-off (dropped pivots, the
  /// shift of LieGram).
  void solve_velocity_linear(double h) {
    tmp_ = b_ - (0.5 * h) * f1_;
    M_.solve(tmp_, v1_);
    rhs_.noalias() = B1_ * v1_;
    K_.solve(rhs_, x_);  // x = (h/2) μ
    tmp2_.noalias() = B1_.transpose() * x_;
    M_.solve(tmp2_, z_);
    v1_ -= z_;
    rhs_.noalias() = B1_ * v1_;
    const double scale = std::max(1.0, row_norm(B1_) * inf_norm(v1_));
    for (int k = 0; k < kRefine && inf_norm(rhs_) > 64 * std::numeric_limits<double>::epsilon() * scale; ++k) {
      K_.solve(rhs_, cc_);
      x_ += cc_;
      tmp2_.noalias() = B1_.transpose() * cc_;
      M_.solve(tmp2_, z_);
      v1_ -= z_;
      rhs_.noalias() = B1_ * v1_;
    }
    mu_ = (2.0 / h) * x_;
  }

  /// (B) for f depending on v: v = Ψ(f(t₁, q₁, v)) by fixed-point sweeps
  /// (one call of f each), from v1_ (the solution with the f at hand).
  StepStatus solve_velocity_fixed_point(double h, double t1) {
    Stats& st = lp_.stats();
    const double eps = std::numeric_limits<double>::epsilon();
    ++st.newton_solves;
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0;
    for (long it = 1;; ++it) {
      y_.tail(n_) = v1_;
      if (!lp_.force(t1, y_, f1_)) return StepStatus::NonFinite;
      vprev_ = v1_;
      solve_velocity_linear(h);
      ++st.newton_iterations;
      const double nd = (v1_ - vprev_).lpNorm<Eigen::Infinity>();
      if (!std::isfinite(nd)) return StepStatus::NonFinite;
      if (it > 1) theta = nd / prev;
      const double rest = (it > 1 && theta < 1.0) ? theta / (1.0 - theta) * nd : nd;
      if (rest <= 4 * eps * std::max(1.0, inf_norm(v1_))) {
        st.newton_max_iterations = std::max(st.newton_max_iterations, it);
        return StepStatus::Success;
      }
      if ((it > 2 && theta >= 1.0) || it >= std::max<long>(opts_.max_iterations, 50))
        return StepStatus::NewtonDiverged;
      prev = nd;
    }
  }

  bool factor_K(const SpMat& B, double t) {
    if (!K_.factor(B)) return false;
    ++lp_.stats().lu_factorizations;
    cond_max_ = std::max(cond_max_, K_.condition_estimate());
    if (K_.rank_deficient()) {
      ++lp_.stats().rank_deficient;
      if (!rank_seen_) {
        rank_seen_ = true;
        rank_t_ = t;
      }
    }
    return true;
  }

  /// max_i Σ_j |B_ij| (O(nnz)).
  double row_norm(const SpMat& B) {
    rows_.setZero();
    for (int j = 0; j < B.outerSize(); ++j)
      for (SpMat::InnerIterator it(B, j); it; ++it) rows_(it.row()) += std::abs(it.value());
    return rows_.size() ? rows_.maxCoeff() : 0.0;
  }

  LieGroupProblem& lp_;
  const LieGroup& G_;
  const BlockMass& M_;
  std::vector<FactorBlock> blocks_;
  std::vector<int> sizes_;
  const int nq_, n_, m_;
  NewtonOptions opts_;
  LieGram K_;     ///< B M⁻¹ Bᵀ of the last velocity system (S's preconditioner)
  LieGram Kmul_;  ///< the same at an output state (multipliers)
  bool K_at_end_ = false;  ///< K_ is factorized at end_.B
  SchurLU slu_;            ///< S at the step's first Newton iteration
  bool use_lu_ = false;    ///< slu_ preconditions S this step (else K_)
  BlockDiagonal Tm_, Tp_, D_, J_, Jinv_;
  Cached start_, end_;
  bool have_prev_ = false;
  double h_prev_ = 0.0;
  bool velocity_dependent_ = false, probe_due_ = true;
  int since_probe_ = 0;
  bool fresh_B_ = true;
  bool guess_loaded_ = false, g_chain_ = false, chain_guess_ = false;
  double g_h_ = 0.0;
  Vec g_delta_, g_eps_, g_lam_, delta_, eps_lam_, lam_chain_, pred_;
  Vec mu_prev_, b_lam_;
  bool have_b_ = false;
  bool rank_seen_ = false;
  double rank_t_ = std::numeric_limits<double>::quiet_NaN();
  double cond_max_ = 1.0;
  long inner_sweeps_ = 0, inner_restarts_ = 0;
  SpMat B0_, Bprev_, Bex_, tmpB_, B1_, Bt_, Bm_;
  Vec f0_, f1_, fk_, Om_, w_, wm_, MOm_, c_, r1_, u_, dOm_, b_, v1_, vprev_, tmp_, tmp2_, z_, z2_;
  Vec q1_, qs_, y_;
  Vec lam_, mu_, dlam_, phi_, rhs_, x_, res_, cc_, rows_;
};

}  // namespace odepkg::lie

#endif
