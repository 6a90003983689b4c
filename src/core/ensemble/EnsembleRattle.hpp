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
// A member's aux column: G(q) (m x d), G at the step before (m x d), the
// last λ, the last step size, and whether the last two are set.
#ifndef ODEPKG_ENSEMBLE_RATTLE_HPP
#define ODEPKG_ENSEMBLE_RATTLE_HPP

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
        if (!std::isfinite(dq)) {
          status[j] = StepStatus::NonFinite;
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
  Options opts_;
  int d_, m_, K_;
  VelocityModel model_;
  bool model_mismatch_ = false;
  static constexpr int kMaxPivots = 64;
  Mat Y_, W_, Qa_, Ra_, Ga_, Ph_, lam_, Sinv_, B0_;
  std::vector<int> idx_, sub_ids_, iters_, piv_;
  std::vector<char> singular_;
  std::vector<double> dq_prev_;
  Mat G1e_, S_, Bm_;
  Vec v_, w_, r_, delta_, dp_;
};

}  // namespace odepkg::ensemble

#endif
