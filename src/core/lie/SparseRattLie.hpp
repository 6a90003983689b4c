// SparseRattLie.hpp — the RATTLie step (RattLieStep.hpp: Hante's RATTLie,
// the discrete Legendre transforms (A) and (B)) for a product group
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

#include "../constrained/SparseGramSolver.hpp"
#include "BlockDiagonal.hpp"
#include "FactorBlocks.hpp"
#include "LieGram.hpp"
#include "RattLieStep.hpp"
#include "SchurLU.hpp"

namespace odepkg::lie {

class BlockSparseLieAlgebra {
 public:
  using Matrix = SpMat;
  using ThreadScope = SingleThreadedEigen;
  /// λ of a singular S is one solution (the K-preconditioned iteration); μ
  /// is minimum-norm (LieGram).
  static constexpr bool kMinimumNormPositions = false;
  static constexpr double kRankTolerance = 1e-10;
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

  BlockSparseLieAlgebra(LieGroupProblem& lp, NewtonOptions opts, RankLog& rank)
      : lp_(lp),
        G_(lp.group()),
        M_(lp.block_mass()),
        blocks_(blocks_for(lp)),
        n_(lp.n()),
        m_(lp.constraints()),
        opts_(opts),
        rank_(rank),
        K_(lp.block_mass(), kRankTolerance),
        Kmul_(lp.block_mass(), kRankTolerance) {
    if (blocks_.empty())
      throw InputError("invalidOption",
                       "MassMatrix must be block diagonal with one block per factor of the group " +
                           G_.name().substr(0, 80) + " for a sparse ConstraintGradFcn (the sparse RATTLie)");
    if (m_ == 0 || !lp.has_sparse_constraint_grad())
      throw InputError("invalidInput", "the sparse RATTLie needs constraints with a sparse ConstraintGradFcn");
    sizes_ = block_sizes(blocks_);
    for (BlockDiagonal* T : {&Tm_, &Tp_, &D_, &J_, &Jinv_}) *T = BlockDiagonal(sizes_);
    for (Vec* v : {&wm_, &tmp_, &tmp2_, &z_, &z2_, &vprev_}) v->resize(n_);
    for (Vec* v : {&rhs_, &x_, &res_, &cc_}) v->resize(m_);
  }

  void size(SpMat&) const {}
  bool grad(const ConstVecRef& q, SpMat& B) { return lp_.constraint_grad_sparse(q, B); }
  void mass_apply(const ConstVecRef& v, VecRef out) const { M_.apply(v, out); }
  void mass_solve(const ConstVecRef& v, VecRef out) const { M_.solve(v, out); }
  /// Bex = B_n + s (B_n − B_{n−1}).
  static void extrapolate(const SpMat& B0, const SpMat& Bprev, double s, SpMat& Bex) {
    SparsePatternUnion::extrapolate(B0, Bprev, s, Bex);
  }
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
  /// max_i Σ_j |B_ij| (O(nnz)).
  static double row_norm(const SpMat& B, Vec& rows) {
    rows.setZero();
    for (int j = 0; j < B.outerSize(); ++j)
      for (SpMat::InnerIterator it(B, j); it; ++it) rows(it.row()) += std::abs(it.value());
    return rows.size() ? rows.maxCoeff() : 0.0;
  }

  /// K at B_n: the last step's velocity system when this step continues it.
  bool begin_step(const SpMat& B0, bool from_end, double t) {
    const bool reuse = K_at_end_ && from_end && K_.valid();
    K_at_end_ = false;
    return reuse || factor_K(B0, t);
  }
  /// K₁ = K at the end point's B: the next step's preconditioner.
  void end_step() { K_at_end_ = true; }

  /// The blocks of (A)'s Newton matrix at Ω: T(−hΩ)^{-T}, D(−hΩ, MΩ),
  /// J = T(−hΩ)^{-T} M − h D and J⁻¹, T(hΩ).
  void newton_matrix(double h, const Vec& w, const Vec& MOm) {
    wm_ = -w;
    for (int k = 0; k < static_cast<int>(blocks_.size()); ++k) {
      const FactorBlock& fb = blocks_[k];
      const auto wm = wm_.segment(fb.voff, fb.dim);
      auto Tm = Tm_.block(k);
      auto D = D_.block(k);
      auto J = J_.block(k);
      fb.group->tangent_inv_transpose(wm, Tm);
      fb.group->d_tangent_inv_transpose(wm, MOm.segment(fb.voff, fb.dim), D);
      J.noalias() = Tm * M_.block(k);
      J -= h * D;
      fb.group->tangent(w.segment(fb.voff, fb.dim), Tp_.block(k));
    }
    Jinv_.set_inverse(J_);
  }
  void transport(const Vec& x, Vec& out) const { Tm_.apply(x, out); }
  void solve_J(const Vec& r, Vec& u) const { Jinv_.apply(r, u); }
  /// (h²/2) S Δλ = Φ − h Bt u,  Bt = Bex T(hΩ): x = (h²/2) Δλ by solve_S
  /// (S₀ for the step at its first iteration: the LU unless K is rank
  /// deficient, S then singular); ΔΩ = −u − (1/h) J⁻¹ B_nᵀ x.
  bool schur_step(long it, double h, double t, const Vec& phi, const Vec& u, const SpMat& Bex, const SpMat& B0,
                  Vec& dOm, Vec& dlam) {
    if (it == 0) use_lu_ = !K_.rank_deficient() && slu_.factor(Bex, Tp_, Jinv_, B0, sizes_);
    Tp_.apply(u, tmp_);
    rhs_ = phi;
    rhs_.noalias() -= h * (Bex * tmp_);
    if (!solve_S(rhs_, x_, Bex, B0, t)) return false;
    tmp_.noalias() = B0.transpose() * x_;
    Jinv_.apply(tmp_, z_);
    dOm = -u - (1.0 / h) * z_;
    dlam = (2.0 / (h * h)) * x_;
    return true;
  }
  /// b = T(w)^{-T} MΩ (Tm_ reused for T(+w)^{-T}).
  void momentum(const Vec& w, const Vec& MOm, Vec& b) {
    for (int k = 0; k < static_cast<int>(blocks_.size()); ++k) {
      const FactorBlock& fb = blocks_[k];
      fb.group->tangent_inv_transpose(w.segment(fb.voff, fb.dim), Tm_.block(k));
    }
    Tm_.apply(MOm, b);
  }

  bool begin_velocity(const SpMat& B1, double t) { return factor_K(B1, t); }
  /// (B) with f_{n+1} = f fixed and K = K₁ factorized:
  /// (h/2) K₁ μ = B₁ M⁻¹(b − h/2 f),  v = M⁻¹(b − h/2 (f + B₁ᵀμ)); up to
  /// kRefine refinements while B₁ v is above round-off (dropped pivots, the
  /// shift of LieGram).
  void velocity_linear(double h, double, const Vec& b, const Vec& f, const SpMat& B1, Vec& v, Vec& mu) {
    tmp_ = b - (0.5 * h) * f;
    M_.solve(tmp_, v);
    rhs_.noalias() = B1 * v;
    K_.solve(rhs_, x_);  // x = (h/2) μ
    tmp2_.noalias() = B1.transpose() * x_;
    M_.solve(tmp2_, z_);
    v -= z_;
    rhs_.noalias() = B1 * v;
    const double scale = std::max(1.0, row_norm(B1, res_) * v.lpNorm<Eigen::Infinity>());
    for (int k = 0; k < kRefine && rhs_.lpNorm<Eigen::Infinity>() > 64 * std::numeric_limits<double>::epsilon() * scale;
         ++k) {
      K_.solve(rhs_, cc_);
      x_ += cc_;
      tmp2_.noalias() = B1.transpose() * cc_;
      M_.solve(tmp2_, z_);
      v -= z_;
      rhs_.noalias() = B1 * v;
    }
    mu = (2.0 / h) * x_;
  }
  void velocity_dependence_found() {}

  /// (B) for f depending on v: v = Ψ(f(t₁, q₁, v)) by fixed-point sweeps of
  /// velocity_linear with the same K₁ (one call of f each), from v (the
  /// solution with the f at hand).  They contract by about h/2 |M⁻¹ ∂f/∂v|;
  /// when they do not, NewtonDiverged.  y holds q_{n+1}.
  StepStatus solve_velocity_dependent(double h, double t1, Vec& y, const Vec& b, const SpMat& B1, Vec& v, Vec& f,
                                      Vec& mu) {
    Stats& st = lp_.stats();
    const double eps = std::numeric_limits<double>::epsilon();
    ++st.newton_solves;
    double prev = std::numeric_limits<double>::infinity(), theta = 1.0;
    for (long it = 1;; ++it) {
      y.tail(n_) = v;
      if (!lp_.force(t1, y, f)) return StepStatus::NonFinite;
      vprev_ = v;
      velocity_linear(h, t1, b, f, B1, v, mu);
      ++st.newton_iterations;
      const double nd = (v - vprev_).lpNorm<Eigen::Infinity>();
      if (!std::isfinite(nd)) return StepStatus::NonFinite;
      if (it > 1) theta = nd / prev;
      const double rest = (it > 1 && theta < 1.0) ? theta / (1.0 - theta) * nd : nd;
      if (rest <= 4 * eps * std::max(1.0, v.lpNorm<Eigen::Infinity>())) {
        st.newton_max_iterations = std::max(st.newton_max_iterations, it);
        return StepStatus::Success;
      }
      if ((it > 2 && theta >= 1.0) || it >= std::max<long>(opts_.max_iterations, 50))
        return StepStatus::NewtonDiverged;
      prev = nd;
    }
  }

  /// λ = (B M⁻¹ Bᵀ)⁺ rhs by LieGram (its own factorization: K_ stays the
  /// next step's).
  bool multiplier_solve(const SpMat& B, const Vec& rhs, VecRef lambda) {
    if (!Kmul_.factor(B)) return false;
    Kmul_.solve(rhs, lambda);
    return true;
  }

  /// Sweeps of the inner iteration for S, the refactorizations it needed,
  /// the LU factorizations of S and their symbolic analyses.
  long inner_sweeps() const { return inner_sweeps_; }
  long inner_restarts() const { return inner_restarts_; }
  long schur_factorizations() const { return slu_.factorizations(); }
  long schur_analyses() const { return slu_.analyses(); }

 private:
  /// x = S⁻¹ r, S x = Bex T(hΩ) J⁻¹ B_nᵀ x, by x ← x + P⁻¹(r − S x) with P
  /// the LU of S at the step's first iteration (use_lu_), else K = B_n M⁻¹
  /// B_nᵀ; P is refactorized at the current S (or K at Bex) once if that
  /// does not converge.
  bool solve_S(const Vec& r, Vec& x, const SpMat& Bex, const SpMat& B0, double t) {
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
        z_.noalias() = B0.transpose() * x;
        Jinv_.apply(z_, z2_);
        Tp_.apply(z2_, z_);
        res_ = r;
        res_.noalias() -= Bex * z_;
        precondition(res_, cc_);
        x += cc_;
        const double nc = cc_.lpNorm<Eigen::Infinity>();
        if (!std::isfinite(nc)) break;
        if (nc <= kInnerTol * x.lpNorm<Eigen::Infinity>() || nc == 0.0) {
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
        use_lu_ = slu_.factor(Bex, Tp_, Jinv_, B0, sizes_);
        if (!use_lu_ && !factor_K(Bex, t)) return false;
      } else if (!factor_K(Bex, t)) {
        return false;
      }
    }
    return true;
  }

  bool factor_K(const SpMat& B, double t) {
    if (!K_.factor(B)) return false;
    ++lp_.stats().lu_factorizations;
    rank_.note(K_.condition_estimate(), K_.rank_deficient(), t, lp_.stats());
    return true;
  }

  LieGroupProblem& lp_;
  const LieGroup& G_;
  const BlockMass& M_;
  std::vector<FactorBlock> blocks_;
  std::vector<int> sizes_;
  const int n_, m_;
  NewtonOptions opts_;
  RankLog& rank_;
  LieGram K_;     ///< B M⁻¹ Bᵀ of the last velocity system (S's preconditioner)
  LieGram Kmul_;  ///< the same at an output state (multipliers)
  bool K_at_end_ = false;  ///< K_ is factorized at the end point's B
  SchurLU slu_;            ///< S at the step's first Newton iteration
  bool use_lu_ = false;    ///< slu_ preconditions S this step (else K_)
  BlockDiagonal Tm_, Tp_, D_, J_, Jinv_;
  long inner_sweeps_ = 0, inner_restarts_ = 0;
  Vec wm_, tmp_, tmp2_, z_, z2_, vprev_, rhs_, x_, res_, cc_;
};

/// RATTLie with sparse B, block-diagonal M and the Schur complement's
/// sparse LU.
class SparseRattLie final : public RattLieStep<BlockSparseLieAlgebra> {
 public:
  static constexpr double kRankTolerance = BlockSparseLieAlgebra::kRankTolerance;
  using RattLieStep::RattLieStep;
  static std::vector<FactorBlock> blocks_for(const LieGroupProblem& lp) {
    return BlockSparseLieAlgebra::blocks_for(lp);
  }
  long inner_sweeps() const { return algebra().inner_sweeps(); }
  long inner_restarts() const { return algebra().inner_restarts(); }
  long schur_factorizations() const { return algebra().schur_factorizations(); }
  long schur_analyses() const { return algebra().schur_analyses(); }
};

}  // namespace odepkg::lie

#endif
