// EnsembleRattle.hpp — RATTLE (Andersen 1983; Hairer, Lubich, Wanner,
// "Geometric Numerical Integration", VII.1.4) on an ensemble of a separable
// H = T(p) + V(q) with quadratic T (H_p = A p + b learned per member,
// VelocityModel.hpp) and holonomic constraints g(q) = 0:
//   p_{1/2} = p_0 + h/2 F(q_0) - G(q_0)^T λ,   q_1 = q_0 + h H_p(p_{1/2}),
//   g(q_1) = 0,
//   p_1 = p_{1/2} + h/2 F(q_1) - G(q_1)^T μ,  G(q_1) H_p(p_1) = 0.
// q_1 is affine in λ, so each member's Newton iteration on r(λ) = g(q_1(λ))
// calls g only, on all members not yet converged at once; its matrix
// h G_1 A G_0^T uses G_1 extrapolated from the member's last two steps
// (G_0 at the first), factorised once per step.  Then one call of f at
// [q_1; p_{1/2}] gives every member's force F(q_1) and checks the velocity
// model, one call of G gives G(q_1), and μ solves the linear system
// G_1 A G_1^T μ = G_1 H_p(p_{1/2} + h/2 F_1): about 3 calls of g, one of f and
// one of G per step for the whole ensemble, as the separable path of the
// single-trajectory RATTLE (constrained/SeparableRattle.hpp).
// Each member converges (or fails) on its own; a member's multiplier
// systems found singular use minimum-norm solutions (and are counted).
//
// At the edges (steps of the order of the manifold's curvature radius,
// near folds), as the single-trajectory path (SeparableRattle::step): a
// member whose chord iteration fails, or whose root is off the branch of
// the unconstrained step (DampedMultiplierNewton::distant with kDoubtRatio),
// is solved again by the globalised Newton of DampedMultiplierNewton.hpp
// (Jacobian -h G(q_1) A G_0^T at every iterate, minimum-norm, backtracking
// on |g|_2), from the warm guess and from λ = 0, the root nearest the
// unconstrained step kept, refused (StepStatus::DistantRoot) if it fails
// kRefuseRatio.  The members retried iterate together: one call of g per
// line-search round and one of G per iteration for all of them; a step in
// which no member needs it makes no extra call.  The chord also stops when
// |g| is at the round-off floor of its evaluation.
//
// A member's aux column: G(q) (m x d), G at the step before (m x d), the
// last λ, the last step size, and whether the last two are set.
#ifndef ODEPKG_ENSEMBLE_RATTLE_HPP
#define ODEPKG_ENSEMBLE_RATTLE_HPP

#include "ConstraintProjection.hpp"
#include "constrained/DampedMultiplierNewton.hpp"
#include "ensemble/EnsembleMethod.hpp"
#include "ensemble/EnsembleSplitting.hpp"
#include "ensemble/SmallLU.hpp"
#include "ensemble/VelocityModel.hpp"

#include <Eigen/LU>
#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

namespace odepkg::ensemble {

struct EnsembleRattleOptions {
  double tol = 1e-12;  ///< on |Δq|_inf / max(1, |q_1|_inf), as NewtonOptions::tol
  int max_iterations = 30;
};

class EnsembleRattle final : public EnsembleMethod {
 public:
  using Options = EnsembleRattleOptions;

  EnsembleRattle(EnsembleProblem& pb, Options opts = Options())
      : EnsembleMethod(pb), opts_(opts), d_(pb.dim()), m_(pb.constraints()), K_(pb.members()) {
    if (m_ < 1) throw InputError("invalidInput", "RATTLE needs constraints (ConstraintFcn, ConstraintsNb)");
    const int d = d_, m = m_, K = K_;
    Y_.resize(2 * d, K);
    W_.resize(2 * d, K);
    Qa_.resize(d, K);
    Ra_.resize(m, K);
    Ga_.resize(m, d * K);
    Ph_.resize(d, K);
    lam_.resize(m, K);
    Sinv_.resize(m, m * K);
    B0_.resize(d, m * K);
    idx_.resize(K);
    sub_ids_.resize(K);
    piv_.resize(static_cast<std::size_t>(m) * K);
    singular_.resize(K);
    dq_prev_.resize(K);
    iters_.resize(K);
    G1e_.resize(m, d);
    S_.resize(m, m);
    Bm_.resize(d, m);
    v_.resize(d);
    w_.resize(d);
    r_.resize(m);
    delta_.resize(m);
    dp_.resize(d);
    Mm_.resize(m, m);
    gn_.resize(K);
    retry_.resize(K);
    act_.resize(K);
    rL_.resize(m, K);
    rLt_.resize(m, K);
    rdL_.resize(m, K);
    rg_.resize(m, K);
    rQ_.resize(d, K);
    rQt_.resize(d, K);
    rG_.resize(m, d * K);
    rP_.resize(d, K);
    bL_.resize(m, K);
    bQ_.resize(d, K);
    rstate_.resize(K);
    rout_.resize(K);
    rfound_.resize(K);
    rsing_.resize(K);
    ralpha_.resize(K);
    rrn_.resize(K);
    rfloor_.resize(K);
    rbest_.resize(K);
  }

  const char* name() const override { return "rattle"; }
  int order() const override { return 2; }
  bool symmetric() const override { return true; }
  int aux_size() const override { return 2 * m_ * d_ + m_ + 2; }
  /// Members whose multiplier systems were singular (minimum-norm used).
  bool model_mismatch() const { return model_mismatch_; }

  void start(double t0, const ConstMatRef& X0, const ConstMatRef& F0, MatRef force, MatRef aux) override {
    const int d = d_, m = m_, K = K_;
    probe_separability(pb_, t0, X0, F0);
    if (!model_.learn(pb_, t0, X0, F0))
      throw InputError("ensembleFallback",
                       "the kinetic energy is not quadratic in p (or d > 64): the batched RATTLE needs H_p = A p + b");
    // consistent initial data: g(q0) = 0 and G(q0) H_p(p0) = 0 for every member
    auto Q = Qa_.leftCols(K);
    Q = X0.topRows(d);
    auto R = Ra_.leftCols(K);
    pb_.constraint(Q, R);
    auto G = Ga_.leftCols(d * K);
    pb_.constraint_grad(Q, G);
    std::ostringstream bad;
    int nbad = 0;
    for (int j = 0; j < K; ++j) {
      const auto Gj = G.middleCols(j * d, d);
      model_.predict(j, X0.col(j).tail(d).data(), v_.data());
      const double gr = R.col(j).lpNorm<Eigen::Infinity>();
      const double hr = (Gj * v_).lpNorm<Eigen::Infinity>();
      const double scale = std::max(1.0, Gj.cwiseAbs().maxCoeff() * v_.lpNorm<Eigen::Infinity>());
      if (!(gr <= 1e-10) || !(hr <= 1e-10 * scale)) {
        if (nbad < 5) bad << (nbad ? ", " : "") << "member " << j + 1 << " (|g(q0)| = " << gr
                          << ", |G(q0) H_p| = " << hr << ")";
        ++nbad;
      }
      auto a = aux.col(j);
      a.segment(0, m * d) = Eigen::Map<const Vec>(Gj.data(), m * d);  // contiguous: a block of whole columns
      a.segment(m * d, m * d).setZero();
      a.segment(2 * m * d, m).setZero();
      a(2 * m * d + m) = 0.0;      // h_last
      a(2 * m * d + m + 1) = 0.0;  // has_prev
    }
    if (nbad > 0) {
      std::ostringstream msg;
      msg << "the initial data of " << nbad << " member(s) violate the constraints: " << bad.str()
          << (nbad > 5 ? ", ..." : "")
          << "; an ensemble starts on the constraint manifold (a single run projects its Y0)";
      throw InputError("inconsistentInitialData", msg.str());
    }
    force = F0.bottomRows(d);
  }

  // Per member and step the work is O(m d (m + d)) on raw column pointers
  // (SmallLU.hpp): no Eigen block built per access, no heap (the rare
  // singular system aside).
  void step(double t, double h, const int* ids, int k, const ConstMatRef& X0, const ConstMatRef& force0,
            const ConstMatRef& aux0, MatRef X1, MatRef force1, MatRef aux1, StepStatus* status) override {
    const int d = d_, m = m_, n = 2 * d;
    const int md = m * d;
    EnsembleStats& st = pb_.stats();
    const double eps = std::numeric_limits<double>::epsilon();
    const Eigen::Index sx0 = X0.outerStride(), sf0 = force0.outerStride(), sa0 = aux0.outerStride();
    const Eigen::Index sx1 = X1.outerStride(), sf1 = force1.outerStride(), sa1 = aux1.outerStride();
    const double* x0 = X0.data();
    const double* f0 = force0.data();
    const double* a0 = aux0.data();
    double* x1 = X1.data();
    double* fo = force1.data();
    double* a1 = aux1.data();
    double* v = v_.data();
    double* w = w_.data();
    double* r = r_.data();
    double* delta = delta_.data();
    double* g1e = G1e_.data();
    // 1. Per member: the guess λ, p_{1/2}, q_1(λ) and the factorised matrix.
    for (int j = 0; j < k; ++j) {
      status[j] = StepStatus::Success;
      const int id = ids[j];
      const double* a = a0 + j * sa0;
      const double* G0 = a;        // m x d
      const double* Gp = a + md;   // m x d
      const bool prev = a[2 * md + m + 1] != 0.0;
      const double s = prev ? h / a[2 * md + m] : 0.0;
      double* lam = lam_.data() + j * m;
      for (int c = 0; c < m; ++c) lam[c] = prev ? s * a[2 * md + c] : 0.0;
      for (int i = 0; i < md; ++i) g1e[i] = prev ? G0[i] + s * (G0[i] - Gp[i]) : G0[i];
      gn_[j] = row_norm(g1e, m, d);  // |G_1|_inf, for the round-off floor of g
      double* B0 = B0_.data() + j * d * m;  // A G_0^T, d x m
      for (int c = 0; c < m; ++c) {
        for (int i = 0; i < d; ++i) w[i] = G0[c + i * m];
        model_.apply(id, w, B0 + c * d);
      }
      // S = h G_1e A G_0^T (m x m), factorised
      double* S = Sinv_.data() + j * m * m;
      for (int c = 0; c < m; ++c)
        for (int rr = 0; rr < m; ++rr) {
          double acc = 0.0;
          for (int i = 0; i < d; ++i) acc += g1e[rr + i * m] * B0[i + c * d];
          S[rr + c * m] = h * acc;
        }
      singular_[j] = !small_lu_factor(S, m, piv_.data() + j * m);
      if (singular_[j]) {
        // rare: the minimum-norm solution, from the unfactorised matrix
        for (int c = 0; c < m; ++c)
          for (int rr = 0; rr < m; ++rr) {
            double acc = 0.0;
            for (int i = 0; i < d; ++i) acc += g1e[rr + i * m] * B0[i + c * d];
            S_(rr, c) = h * acc;
          }
        Eigen::Map<Mat>(S, m, m) = S_.completeOrthogonalDecomposition().pseudoInverse();
        ++st.rank_deficient;
      }
      // p_{1/2} = p_0 + h/2 F_0 - G_0^T λ,  q_1 = q_0 + h (A p_{1/2} + b)
      double* ph = Ph_.data() + j * d;
      const double* xj = x0 + j * sx0;
      const double* fj = f0 + j * sf0;
      for (int i = 0; i < d; ++i) {
        double acc = xj[d + i] + 0.5 * h * fj[i];
        for (int c = 0; c < m; ++c) acc -= G0[c + i * m] * lam[c];
        ph[i] = acc;
      }
      model_.predict(id, ph, v);
      double* q1 = x1 + j * sx1;
      for (int i = 0; i < d; ++i) q1[i] = xj[i] + h * v[i];
      iters_[j] = 0;
      dq_prev_[j] = std::numeric_limits<double>::infinity();
      idx_[j] = j;
    }
    // 2. Newton on λ, all unconverged members per call of g.
    int n_open = k;
    while (n_open > 0) {
      double* qa = Qa_.data();
      for (int u = 0; u < n_open; ++u) {
        const double* q1 = x1 + idx_[u] * sx1;
        for (int i = 0; i < d; ++i) qa[u * d + i] = q1[i];
      }
      for (int u = 0; u < n_open; ++u) sub_ids_[u] = ids[idx_[u]];
      auto Q = Qa_.leftCols(n_open);
      auto R = Ra_.leftCols(n_open);
      pb_.constraint(Q, R, sub_ids_.data());
      const double* ra = Ra_.data();
      int still = 0;
      for (int u = 0; u < n_open; ++u) {
        const int j = idx_[u];
        if (!column_finite(R, u)) {
          status[j] = StepStatus::NonFinite;
          continue;
        }
        const double* G0 = a0 + j * sa0;
        const double* S = Sinv_.data() + j * m * m;
        {  // g as small as it can be evaluated: converged (no correction asks for more)
          const double* q1 = x1 + j * sx1;
          double rinf = 0.0, qinf = 0.0;
          for (int c = 0; c < m; ++c) rinf = std::max(rinf, std::abs(ra[u * m + c]));
          for (int i = 0; i < d; ++i) qinf = std::max(qinf, std::abs(q1[i]));
          if (rinf <= DampedMultiplierNewton::residual_floor(gn_[j], qinf)) continue;
        }
        if (singular_[j]) {
          for (int rr = 0; rr < m; ++rr) {
            double acc = 0.0;
            for (int c = 0; c < m; ++c) acc += S[rr + c * m] * ra[u * m + c];
            delta[rr] = acc;
          }
        } else {
          small_lu_solve(S, m, piv_.data() + j * m, ra + u * m, delta);
        }
        double* lam = lam_.data() + j * m;
        for (int c = 0; c < m; ++c) lam[c] += delta[c];
        double* ph = Ph_.data() + j * d;
        const double* B0 = B0_.data() + j * d * m;
        double* q1 = x1 + j * sx1;
        double dq = 0.0, qn = 1.0;
        for (int i = 0; i < d; ++i) {
          double dp = 0.0, vi = 0.0;
          for (int c = 0; c < m; ++c) {
            dp += G0[c + i * m] * delta[c];
            vi += B0[i + c * d] * delta[c];  // A G_0^T δ
          }
          ph[i] -= dp;
          q1[i] -= h * vi;
          dq = std::max(dq, std::abs(h * vi));
          qn = std::max(qn, std::abs(q1[i]));
        }
        ++iters_[j];
        ++st.newton_iterations;
        if (!std::isfinite(dq)) {  // the chord ran away: the globalised solve looks again
          status[j] = StepStatus::NewtonDiverged;
          continue;
        }
        if (dq <= opts_.tol * qn || dq <= 4 * eps * qn) continue;  // converged, the last correction applied
        if ((iters_[j] > 2 && dq >= dq_prev_[j]) || iters_[j] >= opts_.max_iterations) {
          status[j] = StepStatus::NewtonDiverged;
          continue;
        }
        dq_prev_[j] = dq;
        idx_[still++] = j;
      }
      n_open = still;
    }
    for (int j = 0; j < k; ++j) {
      ++st.newton_solves;
      st.newton_max_iterations = std::max(st.newton_max_iterations, static_cast<long>(iters_[j]));
    }
    // 2b. The members whose chord failed or reached a root off the branch:
    // the globalised solve, all of them together.
    int nr = 0;
    for (int j = 0; j < k; ++j) {
      const bool doubt = status[j] == StepStatus::Success &&
                         off_branch(j, h, x0 + j * sx0, x1 + j * sx1, a0 + j * sa0,
                                    DampedMultiplierNewton::kDoubtRatio);
      if (doubt || status[j] == StepStatus::NewtonDiverged) retry_[nr++] = j;
    }
    if (nr > 0) solve_globalised(h, ids, nr, X0, force0, aux0, X1, status);
    // 3. The force at q_1 (and the velocity model's check), G(q_1), then μ.
    int ns = 0;
    for (int j = 0; j < k; ++j)
      if (status[j] == StepStatus::Success) idx_[ns++] = j;
    if (ns == 0) return;
    double* y = Y_.data();
    for (int u = 0; u < ns; ++u) {
      const int j = idx_[u];
      const double* q1 = x1 + j * sx1;
      const double* ph = Ph_.data() + j * d;
      for (int i = 0; i < d; ++i) {
        y[u * n + i] = q1[i];
        y[u * n + d + i] = ph[i];
        Qa_.data()[u * d + i] = q1[i];
      }
    }
    for (int u = 0; u < ns; ++u) sub_ids_[u] = ids[idx_[u]];
    auto Y = Y_.leftCols(ns);
    auto W = W_.leftCols(ns);
    pb_.field(t + h, Y, W, sub_ids_.data());
    auto Q = Qa_.leftCols(ns);
    auto G = Ga_.leftCols(d * ns);
    pb_.constraint_grad(Q, G, sub_ids_.data());
    const double* wv = W_.data();
    const double* ga = Ga_.data();
    double* Mm = S_.data();  // m x m scratch
    int piv[kMaxPivots];
    for (int u = 0; u < ns; ++u) {
      const int j = idx_[u], id = ids[j];
      const double* G1 = ga + u * md;
      bool finite = column_finite(W, u);
      for (int i = 0; i < md; ++i) finite = finite && std::isfinite(G1[i]);
      if (!finite) {
        status[j] = StepStatus::NonFinite;
        continue;
      }
      const double* ph = Ph_.data() + j * d;
      model_.predict(id, ph, v);
      if (!model_.matches(id, ph, v, wv + u * n)) {
        model_mismatch_ = true;
        status[j] = StepStatus::NewtonDiverged;
        continue;
      }
      // p* = p_{1/2} + h/2 F_1;  (G_1 A G_1^T) μ = G_1 (A p* + b)
      double* p1 = x1 + j * sx1 + d;
      const double* F1 = wv + u * n + d;
      for (int i = 0; i < d; ++i) p1[i] = ph[i] + 0.5 * h * F1[i];
      model_.predict(id, p1, w);
      double* Bm = Bm_.data();  // A G_1^T, d x m
      for (int c = 0; c < m; ++c) {
        for (int i = 0; i < d; ++i) v[i] = G1[c + i * m];
        model_.apply(id, v, Bm + c * d);
      }
      for (int c = 0; c < m; ++c) {
        double acc = 0.0;
        for (int i = 0; i < d; ++i) acc += G1[c + i * m] * w[i];
        r[c] = acc;
        for (int rr = 0; rr < m; ++rr) {
          double s2 = 0.0;
          for (int i = 0; i < d; ++i) s2 += G1[rr + i * m] * Bm[i + c * d];
          Mm[rr + c * m] = s2;
        }
      }
      if (m <= kMaxPivots && small_lu_factor(Mm, m, piv)) {
        small_lu_solve(Mm, m, piv, r, delta);
      } else {
        Mat M(m, m);  // rare: singular (or m > kMaxPivots): minimum norm; allocates
        for (int c = 0; c < m; ++c)
          for (int rr = 0; rr < m; ++rr) {
            double s2 = 0.0;
            for (int i = 0; i < d; ++i) s2 += G1[rr + i * m] * Bm[i + c * d];
            M(rr, c) = s2;
          }
        delta_ = M.completeOrthogonalDecomposition().solve(r_);
        delta = delta_.data();
        ++st.rank_deficient;
      }
      for (int i = 0; i < d; ++i) {
        double acc = 0.0;
        for (int c = 0; c < m; ++c) acc += G1[c + i * m] * delta[c];
        p1[i] -= acc;
      }
      double* fj = fo + j * sf1;
      for (int i = 0; i < d; ++i) fj[i] = F1[i];
      // the hidden constraint G_1 H_p(p_1) = 0, as reached
      model_.predict(id, p1, w);
      double hid = 0.0;
      for (int c = 0; c < m; ++c) {
        double acc = 0.0;
        for (int i = 0; i < d; ++i) acc += G1[c + i * m] * w[i];
        hid = std::max(hid, std::abs(acc));
      }
      st.max_hidden_residual = std::max(st.max_hidden_residual, hid);
      double* aj = a1 + j * sa1;
      const double* a = a0 + j * sa0;
      for (int i = 0; i < md; ++i) {
        aj[i] = G1[i];
        aj[md + i] = a[i];
      }
      const double* lam = lam_.data() + j * m;
      for (int c = 0; c < m; ++c) aj[2 * md + c] = lam[c];
      aj[2 * md + m] = h;
      aj[2 * md + m + 1] = 1.0;
      if (!column_finite(X1, j)) status[j] = StepStatus::NonFinite;
    }
  }

 private:
  static double row_norm(const double* G, int m, int d) {  // |G|_inf, G m x d column-major
    double nm = 0.0;
    for (int r = 0; r < m; ++r) {
      double acc = 0.0;
      for (int i = 0; i < d; ++i) acc += std::abs(G[r + i * m]);
      nm = std::max(nm, acc);
    }
    return nm;
  }

  /// x = M^+ b for the m x m matrix M (overwritten by its factors): LU, or
  /// the minimum-norm solution if M is numerically singular (returns false
  /// then, or if M is not finite: x not finite).  No heap.
  bool solve_small(double* M, const double* b, double* x) {
    const int m = m_;
    if (m <= kMaxPivots) {
      int piv[kMaxPivots];
      Mm_ = Eigen::Map<const Mat>(M, m, m);
      if (small_lu_factor(M, m, piv)) {
        small_lu_solve(M, m, piv, b, x);
        return true;
      }
      M = Mm_.data();  // the unfactorised copy
    }
    Eigen::Map<Vec> xv(x, m);
    if (!minnorm_.compute(Eigen::Map<const Mat>(M, m, m))) {
      xv.setConstant(std::numeric_limits<double>::quiet_NaN());
      return false;
    }
    minnorm_.solve(Eigen::Map<const Vec>(b, m), xv);
    return false;
  }

  /// q_1 = q_0 + h (A (pbase - G_0^T L) + b) for member `id` (pbase = p_0 + h/2 F_0).
  void positions(int id, double h, const double* q0, const double* G0, const double* pbase, const double* L,
                 double* q1) {
    const int d = d_, m = m_;
    double* p = dp_.data();
    for (int i = 0; i < d; ++i) {
      double acc = pbase[i];
      for (int c = 0; c < m; ++c) acc -= G0[c + i * m] * L[c];
      p[i] = acc;
    }
    model_.predict(id, p, v_.data());
    for (int i = 0; i < d; ++i) q1[i] = q0[i] + h * v_[i];
  }

  /// Member j's root λ (lam_) with positions q1 is on another branch
  /// (SeparableRattle::off_branch): dq = q_1 - q_0 + c the free displacement,
  /// c = h B0 λ (B0 = A G_0^T), c_lin = h B0 λ_lin with G_0 (dq - c_lin) = 0;
  /// distant if |c - c_lin|_2 is beyond `ratio` |dq|_2.  No callback.
  bool off_branch(int j, double h, const double* q0, const double* q1, const double* G0, double ratio) {
    const int d = d_, m = m_;
    const double* B0 = B0_.data() + j * d * m;
    const double* lam = lam_.data() + j * m;
    double* dq = w_.data();
    double* hid = r_.data();
    double* S = S_.data();
    double* Llin = delta_.data();
    double dqn = 0.0, q0n = 0.0;
    for (int i = 0; i < d; ++i) {
      double c = 0.0;
      for (int cc = 0; cc < m; ++cc) c += B0[i + cc * d] * lam[cc];
      dq[i] = q1[i] - q0[i] + h * c;
      dqn += dq[i] * dq[i];
      q0n = std::max(q0n, std::abs(q0[i]));
    }
    for (int rr = 0; rr < m; ++rr) {
      double acc = 0.0;
      for (int i = 0; i < d; ++i) acc += G0[rr + i * m] * dq[i];
      hid[rr] = acc / h;
      for (int c = 0; c < m; ++c) {
        double s2 = 0.0;
        for (int i = 0; i < d; ++i) s2 += G0[rr + i * m] * B0[i + c * d];
        S[rr + c * m] = s2;  // S_0 = G_0 A G_0^T
      }
    }
    solve_small(S, hid, Llin);
    double curv = 0.0;
    for (int i = 0; i < d; ++i) {
      double c = 0.0;
      for (int cc = 0; cc < m; ++cc) c += B0[i + cc * d] * (Llin[cc] - lam[cc]);
      curv += h * c * h * c;
    }
    if (!std::isfinite(curv)) return true;
    return DampedMultiplierNewton::distant(std::sqrt(curv), std::sqrt(dqn), q0n, ratio);
  }

  enum class Slot : char { Active, Search, NeedGrad, Converged, Failed, NonFinite, Idle };

  /// g at rQt_ (trial = true) or rQ_ for the slots act_[0..na-1], into
  /// rg_ (kept) or Ra_ (trial, column u for act_[u]); one call.
  void call_g(const int* ids, int na, bool trial) {
    const Mat& Qs = trial ? rQt_ : rQ_;
    for (int u = 0; u < na; ++u) {
      const int s = act_[u];
      Qa_.col(u) = Qs.col(s);
      sub_ids_[u] = ids[retry_[s]];
    }
    pb_.constraint(Qa_.leftCols(na), Ra_.leftCols(na), sub_ids_.data());
  }

  /// G at rQ_ for the slots act_[0..na-1], into rG_; one call.
  void call_G(const int* ids, int na) {
    const int d = d_;
    for (int u = 0; u < na; ++u) {
      const int s = act_[u];
      Qa_.col(u) = rQ_.col(s);
      sub_ids_[u] = ids[retry_[s]];
    }
    pb_.constraint_grad(Qa_.leftCols(na), Ga_.leftCols(d * na), sub_ids_.data());
    for (int u = 0; u < na; ++u) rG_.middleCols(act_[u] * d, d) = Ga_.middleCols(u * d, d);
  }

  /// The globalised Newton (DampedMultiplierNewton::solve, its stopping
  /// rules) for the members retry_[0..nr-1] (slot s: member retry_[s]),
  /// from the warm guess (skipped where it is 0) and from λ = 0; the root
  /// with the smaller displacement h |A G_0^T λ| kept; writes lam_, Ph_,
  /// the positions of X1 and each member's status.
  void solve_globalised(double h, const int* ids, int nr, const ConstMatRef& X0, const ConstMatRef& force0,
                        const ConstMatRef& aux0, MatRef X1, StepStatus* status) {
    using DMN = DampedMultiplierNewton;
    const int d = d_, m = m_, md = m * d;
    EnsembleStats& st = pb_.stats();
    const Eigen::Index sx0 = X0.outerStride(), sf0 = force0.outerStride(), sa0 = aux0.outerStride();
    const Eigen::Index sx1 = X1.outerStride();
    st.newton_retries += nr;
    for (int s = 0; s < nr; ++s) {
      const int j = retry_[s];
      const double* xj = X0.data() + j * sx0;
      const double* fj = force0.data() + j * sf0;
      for (int i = 0; i < d; ++i) rP_(i, s) = xj[d + i] + 0.5 * h * fj[i];  // pbase
      rfound_[s] = 0;
      rsing_[s] = 0;
      rout_[s] = Slot::Failed;
    }
    for (int start = 0; start < 2; ++start) {
      // the starting points; their g and G
      int na = 0;
      for (int s = 0; s < nr; ++s) {
        rstate_[s] = Slot::Idle;
        if (rout_[s] == Slot::NonFinite) continue;
        const int j = retry_[s];
        const double* a = aux0.data() + j * sa0;
        double Lmax = 0.0;
        for (int c = 0; c < m; ++c) {
          // warm: the guess of step 1 (the last λ scaled by h / h_last)
          const double prev = a[2 * md + m + 1] != 0.0 ? h / a[2 * md + m] * a[2 * md + c] : 0.0;
          rL_(c, s) = start == 0 ? prev : 0.0;
          Lmax = std::max(Lmax, std::abs(rL_(c, s)));
        }
        if (start == 0 && Lmax == 0.0) continue;  // the same as the cold start
        positions(ids[j], h, X0.data() + j * sx0, a, &rP_(0, s), &rL_(0, s), &rQ_(0, s));
        rstate_[s] = Slot::Active;
        act_[na++] = s;
      }
      if (na == 0) continue;
      call_g(ids, na, false);
      int ng = 0;
      for (int u = 0; u < na; ++u) {
        const int s = act_[u];
        rg_.col(s) = Ra_.col(u);
        if (!column_finite(Ra_, u)) {
          rstate_[s] = Slot::NonFinite;
          continue;
        }
        act_[ng++] = s;
      }
      if (ng > 0) call_G(ids, ng);
      for (int u = 0; u < ng; ++u) {
        const int s = act_[u];
        if (!rG_.middleCols(s * d, d).allFinite()) rstate_[s] = Slot::NonFinite;
        rrn_[s] = rg_.col(s).norm();
      }
      for (int it = 0; it < opts_.max_iterations; ++it) {
        // Newton directions: dλ = (G_1 A G_0^T)^+ g / h
        int ns = 0;
        for (int s = 0; s < nr; ++s) {
          if (rstate_[s] != Slot::Active) continue;
          const int j = retry_[s];
          const double* G = rG_.data() + s * md;
          const double qn = rQ_.col(s).lpNorm<Eigen::Infinity>();
          rfloor_[s] = DMN::residual_floor(row_norm(G, m, d), qn);
          if (rg_.col(s).lpNorm<Eigen::Infinity>() <= rfloor_[s]) {
            rstate_[s] = Slot::Converged;
            continue;
          }
          const double* B0 = B0_.data() + j * d * m;
          double* S = S_.data();
          for (int c = 0; c < m; ++c)
            for (int rr = 0; rr < m; ++rr) {
              double acc = 0.0;
              for (int i = 0; i < d; ++i) acc += G[rr + i * m] * B0[i + c * d];
              S[rr + c * m] = acc;
            }
          if (!solve_small(S, &rg_(0, s), &rdL_(0, s))) rsing_[s] = 1;
          rdL_.col(s) /= h;
          if (!rdL_.col(s).allFinite()) {
            rstate_[s] = Slot::NonFinite;
            continue;
          }
          ++st.newton_iterations;
          ralpha_[s] = 1.0;
          rstate_[s] = Slot::Search;
          ++ns;
        }
        if (ns == 0) break;
        // backtracking on |g|_2 (Armijo, c = 1e-4), all searching members per call
        for (int half = 0; half <= DMN::kMaxHalvings && ns > 0; ++half) {
          int nt = 0;
          for (int s = 0; s < nr; ++s) {
            if (rstate_[s] != Slot::Search) continue;
            const int j = retry_[s];
            rLt_.col(s) = rL_.col(s) + ralpha_[s] * rdL_.col(s);
            positions(ids[j], h, X0.data() + j * sx0, aux0.data() + j * sa0, &rP_(0, s), &rLt_(0, s),
                      &rQt_(0, s));
            act_[nt++] = s;
          }
          call_g(ids, nt, true);
          ns = 0;
          for (int u = 0; u < nt; ++u) {
            const int s = act_[u];
            const double alpha = ralpha_[s];
            if (column_finite(Ra_, u) && Ra_.col(u).norm() <= (1.0 - 1e-4 * alpha) * rrn_[s]) {
              rL_.col(s) = rLt_.col(s);
              rQ_.col(s) = rQt_.col(s);
              rg_.col(s) = Ra_.col(u);
              rstate_[s] = Slot::NeedGrad;
            } else if (half == DMN::kMaxHalvings) {  // no decrease: at the round-off level, convergence
              rstate_[s] = rg_.col(s).lpNorm<Eigen::Infinity>() <= DMN::kStallFactor * rfloor_[s]
                               ? Slot::Converged
                               : Slot::Failed;
            } else {
              ralpha_[s] = 0.5 * alpha;
              ++ns;
            }
          }
        }
        int ngr = 0;
        for (int s = 0; s < nr; ++s)
          if (rstate_[s] == Slot::NeedGrad) act_[ngr++] = s;
        if (ngr > 0) call_G(ids, ngr);
        for (int u = 0; u < ngr; ++u) {
          const int s = act_[u];
          rstate_[s] = rG_.middleCols(s * d, d).allFinite() ? Slot::Active : Slot::NonFinite;
          rrn_[s] = rg_.col(s).norm();
        }
      }
      // the iteration budget spent: converged within the stall factor of the floor
      for (int s = 0; s < nr; ++s) {
        if (rstate_[s] != Slot::Active) continue;
        const double floor =
            DMN::residual_floor(row_norm(rG_.data() + s * md, m, d), rQ_.col(s).lpNorm<Eigen::Infinity>());
        rstate_[s] = rg_.col(s).lpNorm<Eigen::Infinity>() <= DMN::kStallFactor * floor ? Slot::Converged
                                                                                       : Slot::Failed;
      }
      // keep the root nearer the unconstrained step (the first on a tie)
      for (int s = 0; s < nr; ++s) {
        if (rstate_[s] == Slot::NonFinite) rout_[s] = Slot::NonFinite;
        if (rstate_[s] != Slot::Converged || rout_[s] == Slot::NonFinite) continue;
        const double* B0 = B0_.data() + retry_[s] * d * m;
        double corr = 0.0;
        for (int i = 0; i < d; ++i) {
          double c = 0.0;
          for (int cc = 0; cc < m; ++cc) c += B0[i + cc * d] * rL_(cc, s);
          corr = std::max(corr, std::abs(h * c));
        }
        if (rfound_[s]) {
          const double best = rbest_[s];
          if (!(corr < best)) {
            if (corr > best * (1.0 + 1e-6) + 1e-12) ++st.distant_roots;
            continue;
          }
          if (best > corr * (1.0 + 1e-6) + 1e-12) ++st.distant_roots;
        }
        rfound_[s] = 1;
        rbest_[s] = corr;
        bL_.col(s) = rL_.col(s);
        bQ_.col(s) = rQ_.col(s);
      }
    }
    for (int s = 0; s < nr; ++s) {
      const int j = retry_[s];
      if (rsing_[s]) ++st.rank_deficient;
      if (rout_[s] == Slot::NonFinite) {
        status[j] = StepStatus::NonFinite;
        continue;
      }
      if (!rfound_[s]) {
        status[j] = StepStatus::NewtonDiverged;
        continue;
      }
      double* lam = lam_.data() + j * m;
      double* q1 = X1.data() + j * sx1;
      const double* G0 = aux0.data() + j * sa0;
      for (int c = 0; c < m; ++c) lam[c] = bL_(c, s);
      for (int i = 0; i < d; ++i) q1[i] = bQ_(i, s);
      if (off_branch(j, h, X0.data() + j * sx0, q1, G0, DMN::kRefuseRatio)) {
        ++st.distant_roots;
        status[j] = StepStatus::DistantRoot;
        continue;
      }
      double* ph = Ph_.data() + j * d;  // p_{1/2} = pbase - G_0^T λ
      for (int i = 0; i < d; ++i) {
        double acc = rP_(i, s);
        for (int c = 0; c < m; ++c) acc -= G0[c + i * m] * lam[c];
        ph[i] = acc;
      }
      status[j] = StepStatus::Success;
    }
  }

  Options opts_;
  int d_, m_, K_;
  VelocityModel model_;
  bool model_mismatch_ = false;
  static constexpr int kMaxPivots = 64;
  Mat Y_, W_, Qa_, Ra_, Ga_, Ph_, lam_, Sinv_, B0_;
  std::vector<int> idx_, sub_ids_, iters_, piv_;
  std::vector<char> singular_;
  std::vector<double> dq_prev_;
  Mat G1e_, S_, Bm_, Mm_;
  Vec v_, w_, r_, delta_, dp_;
  MinNormSolver minnorm_{std::max(m_, 1), 1e-10};  // RattleState::rank_tolerance
  // the globalised solve, slot s for member retry_[s]: the iterate (λ,
  // positions, g, G), the trial point, the direction, pbase; the best root
  std::vector<double> gn_;
  std::vector<int> retry_, act_;
  Mat rL_, rLt_, rdL_, rg_, rQ_, rQt_, rG_, rP_, bL_, bQ_;
  std::vector<Slot> rstate_, rout_;
  std::vector<char> rfound_, rsing_;
  std::vector<double> ralpha_, rrn_, rfloor_, rbest_;
};

}  // namespace odepkg::ensemble

#endif
