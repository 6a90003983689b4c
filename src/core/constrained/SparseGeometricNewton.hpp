// SparseGeometricNewton.hpp — the matrices of geometric RATTLE/SHAKE
// (McLachlan, Modin, Verdier, Wilkins 2014, Def. 1.3/1.4) kept sparse: the
// general (non-separable H) path of odeRATTLE/odeSHAKE with a sparse
// ConstraintGradFcn, for g(q) (holonomic fibres (q, p - G(q)^T s), Sect.
// 5.1.1/5.1.3) and for g(q, p) (ConstraintSet::sparse_grad).
// GeometricRattle runs the same Newton iterations as on its dense matrices
// and asks this class for every product and solve; nothing here is of size
// d^2 or m^2.
//
// Dg (m x 2d; [G 0] for g(q)) and W = J Dg^T are never formed dense:
//   SHAKE:   JF = [R_w, R_y W; Dg Z_w / h, Dg Z_y W / h] (nw + m square),
//            R_w, R_y, Z_w, Z_y the base method's blocks from the sparse
//            Hessian of H (BaseMethod::sparse_jacobian);
//   RATTLE:  M_ij = {g_i, {g_j, H}} = (Dg J Hess W)_ij + f . H_i W_j
//            (Lemma 3.11; H_i the Hessians of g_i), m x m; for g(q) the
//            second term vanishes and M = -G H_pp G^T, tridiagonal for a
//            chain with a diagonal H_pp.
// Both are assembled into a fixed pattern (SparsePatternUnion: G's and the
// Hessian's patterns are fixed unions, so theirs only grow when those do)
// and factorized by SparseRankRevealingLU: the symbolic analysis once per
// pattern, a numeric factorization per refresh of the Newton matrix, reused
// across iterations.  The products, transposes, blocks and assemblies are
// done on their fixed structures (SparseFixedPattern.hpp) and the LU is
// FixedPatternLU where it needs no pivoting, so that after the first steps
// a step allocates nothing (Stepper.hpp); only a grown pattern (its new
// analysis) or a rank-deficient matrix (SparseLU, SparseQR) does.
#ifndef ODEPKG_CONSTRAINED_SPARSE_GEOMETRIC_NEWTON_HPP
#define ODEPKG_CONSTRAINED_SPARSE_GEOMETRIC_NEWTON_HPP

#include "SameBits.hpp"
#include "HamiltonianProblem.hpp"
#include "SparseFixedPattern.hpp"
#include "SparsePatternUnion.hpp"
#include "Types.hpp"
#include "constrained/BaseMethod.hpp"
#include "constrained/ConstraintSet.hpp"
#include "constrained/SparseGramSolver.hpp"  // SingleThreadedEigen
#include "constrained/SparseRankRevealingLU.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace odepkg {

class SparseGeometricNewton {
 public:
  SparseGeometricNewton(HamiltonianProblem& problem, ConstraintSet& g, BaseMethod& base, double rank_tol,
                        const std::string& who)
      : problem_(problem), g_(g), base_(base), d_(problem.dim()), n_(2 * problem.dim()), m_(g.count()),
        nw_(base.unknowns()), key_(g.holonomic() ? d_ : n_), shake_lu_(rank_tol), slide_lu_(rank_tol),
        gram_lu_(rank_tol), JFdu_(nw_ + m_), wm_(m_), Gv_(n_), z0_(key_), z1_(key_) {
    problem.require_sparse_hessian(who);
    SpMat empty(n_, n_);
    if (!base_.sparse_jacobian(empty, Rw_, Ry_, Zw_, Zy_))
      throw InputError("invalidOption", who + ": the base method \"" + std::string(base.name()) +
                                            "\" has no sparse form (use \"stormer_verlet\" or \"midpoint\")");
    for (int k = 0; k < d_; ++k) {  // J = [0 I; -I 0]
      trip_.emplace_back(k, d_ + k, 1.0);
      trip_.emplace_back(d_ + k, k, -1.0);
    }
    J_.resize(n_, n_);
    J_.setFromTriplets(trip_.begin(), trip_.end());
    trip_.clear();
    shake_pattern_.reset(nw_ + m_, nw_ + m_);
    slide_pattern_.reset(m_, m_);
    gram_pattern_.reset(m_, m_);
  }

  // ---- the Hessian model of H -------------------------------------------
  /// The Hessian at (t, z) as the model; `is_static` whether it equals the
  /// last one taken so (values on the same pattern, to 1e-10 relative).
  bool take_hessian(double t, const ConstVecRef& z, bool have_prev, bool& is_static) {
    if (!problem_.hamiltonian_hessian_sparse(t, z, hess_)) return false;
    is_static = false;
    if (have_prev && HamiltonianProblem::same_pattern(hess_, hess_prev_)) {
      const Eigen::Map<const Vec> a(hess_.valuePtr(), hess_.nonZeros()), b(hess_prev_.valuePtr(), hess_.nonZeros());
      const double scale = std::max(1.0, a.lpNorm<Eigen::Infinity>());
      is_static = (a - b).lpNorm<Eigen::Infinity>() <= 1e-10 * scale;
    }
    hess_prev_ = hess_;
    return set_model();
  }
  /// The Hessian at (t, x) as the model, the step's one kept (a refresh).
  bool take_model_at(double t, const ConstVecRef& x) {
    return problem_.hamiltonian_hessian_sparse(t, x, hess_) && set_model();
  }
  /// Back to the model taken by take_hessian.
  void restore_model() {
    hess_ = hess_prev_;
    set_model();
  }
  /// The base method's blocks for the step (h changed) from the model.
  bool set_model() {
    if (!base_.sparse_jacobian(hess_, Rw_, Ry_, Zw_, Zy_)) return false;
    hpp_of_hess_.block(hess_, d_, d_, d_, d_, Hpp_);
    hpp_norm_ = 0.0;
    Gv_.setZero();  // (scratch) the absolute row sums of H_pp
    for (int j = 0; j < d_; ++j)
      for (SpMat::InnerIterator it(Hpp_, j); it; ++it) Gv_(it.row()) += std::abs(it.value());
    hpp_norm_ = d_ > 0 ? Gv_.maxCoeff() : 0.0;
    return true;
  }
  /// |H_pp|_inf of the model (RattleAcceptance::roundoff_weight).
  double hpp_norm() const { return hpp_norm_; }
  void save_side() {
    side_hess_ = hess_;
    side_hess_prev_ = hess_prev_;
  }
  void restore_side() {
    hess_ = side_hess_;
    hess_prev_ = side_hess_prev_;
    if (hess_.rows() == n_) set_model();
  }

  // ---- Dg at the start (y, fibre directions) and at the end (z_1) -------
  /// Dg at z into Dg0 (the start) or Dg1 (the end); the last Dg of either
  /// is reused at the same point (for g(q): the same q, which the fibres
  /// keep; a step starts where the last one ended).
  bool grad_start(const ConstVecRef& z) { return grad_at(z.head(key_), z, Dg0_, z0_, have0_); }
  bool grad_end(const ConstVecRef& z) { return grad_at(z.head(key_), z, Dg1_, z1_, have1_); }
  void forget_grads() { have0_ = have1_ = false; }

  /// g(q): out = exp(s X_g) z = (q, p - G^T s), G from Dg0 (start) or Dg1.
  void flow(const ConstVecRef& z, const ConstVecRef& s, bool at_end, VecRef out) {
    out = z;
    out.tail(d_).noalias() -= (at_end ? Dg1_ : Dg0_).leftCols(d_).transpose() * s;
  }
  /// out = W v = J Dg^T v, W the fibre directions at the start or end.
  void directions(const ConstVecRef& v, bool at_end, VecRef out) const {
    const SpMat& Dg = at_end ? Dg1_ : Dg0_;
    out.head(d_).noalias() = Dg.rightCols(d_).transpose() * v;
    out.tail(d_).noalias() = Dg.leftCols(d_).transpose() * v;
    out.tail(d_) = -out.tail(d_);  // (negating the product expression would evaluate it into a temporary)
  }
  /// r = Dg(z_1) f, the hidden constraint {g, H}.
  void hidden(const ConstVecRef& f, VecRef r) const { r.noalias() = Dg1_ * f; }
  /// |Dg(z_1)|_inf (RattleAcceptance::record_residual_norm).
  double end_grad_norm() {
    Vec& rows = JFdu_;  // (scratch, m <= nw + m)
    rows.head(m_).setZero();
    for (int j = 0; j < n_; ++j)
      for (SpMat::InnerIterator it(Dg1_, j); it; ++it) rows(it.row()) += std::abs(it.value());
    return m_ > 0 ? rows.head(m_).maxCoeff() : 0.0;
  }

  // ---- SHAKE: [R_w, R_y W; Dg Z_w / h, Dg Z_y W / h] -------------------
  bool factor_shake(double h) {
    // W = J Dg0^T (n x m), Dg = Dg1 (m x n)
    Dg0t_of_.transpose(Dg0_, Dg0t_);
    W0_of_.run(J_, Dg0t_, W0_);
    RyW_of_.run(Ry_, W0_, RyW_);
    ZyW_of_.run(Zy_, W0_, ZyW_);
    DgZw_of_.run(Dg1_, Zw_, DgZw_);
    DgZyW_of_.run(Dg1_, ZyW_, DgZyW_);
    append(Rw_, 0, 0, 1.0);
    append(RyW_, 0, nw_, 1.0);
    append(DgZw_, nw_, 0, 1.0 / h);
    append(DgZyW_, nw_, nw_, 1.0 / h);
    shake_of_.run(trip_, nw_ + m_, nw_ + m_, raw_shake_);
    trip_.clear();
    shake_pattern_.fit(raw_shake_, JF_);
    return shake_lu_.compute(JF_, shake_pattern_.version(), nw_);
  }
  void solve_shake(const ConstVecRef& F, VecRef du) { shake_lu_.solve(F, du); }
  /// out = (JF du - F)_g, the part of F_g a minimum-norm (basic) correction
  /// leaves.
  void shake_g_defect(const ConstVecRef& du, const ConstVecRef& F, VecRef out) {
    JFdu_.noalias() = JF_ * du;
    out = JFdu_.tail(m_) - F.tail(m_);
  }
  /// z_1 -= Z_w dw + Z_y dz (the last correction through the linearization).
  void apply_z(const ConstVecRef& dw, const ConstVecRef& dz, VecRef z1) const {
    z1.noalias() -= Zw_ * dw;
    z1.noalias() -= Zy_ * dz;
  }
  const SparseRankRevealingLU& shake_solver() const { return shake_lu_; }

  // ---- RATTLE: M = Dg J Hess W + (f . H_i W_j) at the end ---------------
  /// g(q, p): the Hessians of g at z as the model of the slide (sparse,
  /// [H_1 ... H_m], 2d x 2d m).
  bool constraint_hessians(const ConstVecRef& z) { return g_.hess_sparse(z, Hg_); }
  /// M at the end (Dg1, f = f(z_1)); `curved`: with the g Hessians'
  /// term (g(q, p)), else M = -G H_pp G^T.
  bool factor_slide(const ConstVecRef& f, bool curved) {
    if (!curved) {
      G1_of_.block(Dg1_, 0, 0, m_, d_, G1_);
      G1t_of_.transpose(G1_, G1t_);
      HG_of_.run(Hpp_, G1t_, HG_);
      M_of_.run(G1_, HG_, raw_slide_, -1.0);
    } else {
      Dg1t_of_.transpose(Dg1_, Dg1t_);
      W1_of_.run(J_, Dg1t_, W1_);
      HW_of_.run(hess_, W1_, HW_);
      JHW_of_.run(J_, HW_, JHW_);  // J Hess W (J^T J = I: Df = J Hess)
      DgJHW_of_.run(Dg1_, JHW_, DgJHW_);
      // (f . H_i W_j) = (H_i f)^T W_j: the rows (H_i f)^T as triplets, O(nnz(Hg))
      for (int c = 0; c < Hg_.outerSize(); ++c) {
        const int i = c / n_, col = c % n_;
        for (SpMat::InnerIterator it(Hg_, c); it; ++it)
          trip_.emplace_back(i, static_cast<int>(it.row()), it.value() * f(col));
      }
      HfT_of_.run(trip_, m_, n_, HfT_);
      trip_.clear();
      HfTW_of_.run(HfT_, W1_, HfTW_);
      // the sum as triplets on a fixed structure (Eigen's sparse sum allocates)
      append(DgJHW_, 0, 0, 1.0);
      append(HfTW_, 0, 0, 1.0);
      slide_sum_of_.run(trip_, m_, m_, raw_curved_);
      trip_.clear();
    }
    // each plan writes its own matrix (a plan checks its output's nonzeros only)
    slide_pattern_.fit(curved ? raw_curved_ : raw_slide_, M_);
    return slide_lu_.compute(M_, slide_pattern_.version());
  }
  void solve_slide(const ConstVecRef& r, VecRef dsig) { slide_lu_.solve(r, dsig); }
  const SparseRankRevealingLU& slide_solver() const { return slide_lu_; }

  /// SHAKE's error estimate: e_p <- e_p - G^T (G G^T)^{-1} G e_p at q (left
  /// as is where G G^T is singular), as Rattle::restrict_error does dense.
  bool restrict_momenta(const ConstVecRef& q, VecRef ep) {
    if (!problem_.constraint_grad_sparse(q, Ge_)) return false;
    Get_of_.transpose(Ge_, Get_);
    K_of_.run(Ge_, Get_, raw_gram_);
    gram_pattern_.fit(raw_gram_, K_);
    if (!gram_lu_.compute(K_, gram_pattern_.version()) || gram_lu_.rank_deficient()) return true;
    JFdu_.head(m_).noalias() = Ge_ * ep;
    gram_lu_.solve(JFdu_.head(m_), wm_);
    ep.noalias() -= Get_ * wm_;
    return true;
  }

 private:
  /// Dg at z (key: the part of z it depends on) into G, cached by key.
  bool grad_at(const ConstVecRef& key, const ConstVecRef& z, SpMat& G, Vec& gkey, bool& have) {
    if (have && same_bits(gkey, key)) return true;
    // the other end's Dg at this point (a step starting where the last ended)
    const bool other_is_0 = &G == &Dg1_;
    const Vec& okey = other_is_0 ? z0_ : z1_;
    if ((other_is_0 ? have0_ : have1_) && same_bits(okey, key)) {
      G = other_is_0 ? Dg0_ : Dg1_;
    } else {
      have = false;
      if (!g_.grad_sparse(z, G)) return false;
    }
    gkey = key;
    have = true;
    return true;
  }
  /// Triplets of A shifted by (r0, c0), times `scale`.
  void append(const SpMat& A, int r0, int c0, double scale) {
    for (int j = 0; j < A.outerSize(); ++j)
      for (SpMat::InnerIterator it(A, j); it; ++it)
        trip_.emplace_back(r0 + static_cast<int>(it.row()), c0 + j, scale * it.value());
  }

  HamiltonianProblem& problem_;
  ConstraintSet& g_;
  BaseMethod& base_;
  int d_, n_, m_, nw_;
  int key_;  // Dg depends on z.head(key_): q (d) for g(q), else z (2d)
  SparseRankRevealingLU shake_lu_, slide_lu_, gram_lu_;
  SparsePatternUnion shake_pattern_, slide_pattern_, gram_pattern_;
  SpMat hess_, hess_prev_, side_hess_, side_hess_prev_, Hpp_;
  SpMat Rw_, Ry_, Zw_, Zy_;
  SpMat Dg0_, Dg1_, JF_, M_, K_, J_, Hg_;
  // the intermediate products, each on its own fixed structure
  SpMat Dg0t_, W0_, RyW_, ZyW_, DgZw_, DgZyW_, raw_shake_;                  // SHAKE
  SpMat G1_, G1t_, HG_, Dg1t_, W1_, HW_, JHW_, DgJHW_, HfT_, HfTW_, raw_slide_, raw_curved_;  // RATTLE
  SpMat Ge_, Get_, raw_gram_;                                                // restrict_momenta
  SparseGather hpp_of_hess_, Dg0t_of_, G1_of_, G1t_of_, Dg1t_of_, Get_of_;
  SparseProduct W0_of_, RyW_of_, ZyW_of_, DgZw_of_, DgZyW_of_, HG_of_, M_of_, W1_of_, HW_of_, JHW_of_, DgJHW_of_,
      HfTW_of_, K_of_;
  TripletAssembly shake_of_, HfT_of_, slide_sum_of_;
  std::vector<Eigen::Triplet<double, int>> trip_;
  Vec JFdu_, wm_, Gv_, z0_, z1_;
  bool have0_ = false, have1_ = false;
  double hpp_norm_ = 0.0;
};

}  // namespace odepkg

#endif
