// SpectralVariational.hpp — spectral variational integrator (odeSPVI /
// spectral_var_int; the 2013 odepkg post "Spectral Variational Integrators";
// Marsden & West, Acta Numerica 10 (2001);
// Hall & Leok, "Spectral variational integrators", Numer. Math. 130 (2015)).
//
// On [t_k, t_k + h], z = 2 (t - t_k)/h - 1 in [-1, 1], q is a polynomial in
// Q = q_dofs Legendre modes, q(z) = sum_i q^i l_i(z), and the action is
// approximated by P = p_dofs point Gauss–Legendre quadrature (z_j, w_j).
// Stationarity of the discrete action with the end points q_k, q_{k+1}
// fixed, written with nodal momenta p_j, gives (as in the 2013 code) for the unknowns
//   y = [q^0 .. q^{Q-1}, p_0 .. p_{P-1}, q_{k+1}, p_{k+1}]   (each in R^d):
//   R_s = sum_j w_j [ l_s'(z_j) p_j - h/2 l_s(z_j) H_q(Q_j, p_j) ]
//         + l_s(-1) p_k - l_s(1) p_{k+1}                          (s < Q)
//   R_r = h/2 H_p(Q_r, p_r) - sum_i l_i'(z_r) q^i                   (r < P)
//   R_a = sum_i l_i(-1) q^i - q_k,   R_b = sum_i l_i(1) q^i - q_{k+1},
// with Q_j = sum_i l_i(z_j) q^i and H_q, H_p = -f_p, f_q of f(t_j, [Q_j; p_j])
// at the node times t_j = t_k + h (1 + z_j)/2 (the 2013 code evaluated every node
// at t_k).  R_r is the 2013 code's equation times h/2 (same solution, rows O(1)).
//
// Jacobian (the 2013 code omits it), with the Hessian blocks H_qq, H_qp, H_pq,
// H_pp of H at node j and dQ_j/dq^i = l_i(z_j) I:
//   dR_s/dq^i = -h/2 sum_j w_j l_s(z_j) l_i(z_j) H_qq(j)
//   dR_s/dp_j = w_j ( l_s'(z_j) I - h/2 l_s(z_j) H_qp(j) ),  dR_s/dp_{k+1} = -l_s(1) I
//   dR_r/dq^i = h/2 l_i(z_r) H_pq(r) - l_i'(z_r) I,          dR_r/dp_r = h/2 H_pp(r)
//   dR_a/dq^i = l_i(-1) I,  dR_b/dq^i = l_i(1) I,  dR_b/dq_{k+1} = -I.
// The Hessians come from HamiltonianProblem::hamiltonian_hessian: the user's
// HamiltonianHessFcn, else forward differences of f (2d + 1 calls per node,
// counted in Stats::fd_jacobians).  Newton keeps its LU across steps of the
// same h (NewtonSolver).
//
// Order (measured in test/core/spvi_test.cc on Kepler and the pendulum):
//   order = min(2 (Q - 1), 2 P),
// the rule for Galerkin variational integrators with degree-(Q-1) polynomials
// and a quadrature of order 2P (Ober-Blöbaum & Saake, Adv. Comput. Math. 43
// (2017)); for P = Q - 1 the map is the P-stage Gauss collocation method.
// P >= Q - 1 is required (constructor): the quadrature must see every mode
// vanishing at z = ±1 (sum_j w_j |qdot(z_j)|^2 definite on them).  With fewer
// nodes the equations are ill-posed: the Jacobian is singular for every h
// when Q >= 2P + 2, and Newton failed on Kepler for (3,1), (4,2), (5,2) and
// needed ~17 iterations per step for (5,3).  For P = Q - 1 the Jacobian's
// condition is independent of h; for P >= Q it grows like 1/h.
//
// Starting guess: the previous step's polynomials q(z) and p (through p_k,
// the nodal p_j and p_{k+1}) re-evaluated on the new interval (extrapolated
// after an accepted step, interpolated after a rejected one); without a
// previous step, or where that extrapolation would amplify Newton's
// tolerance beyond 1e-3, or when Newton diverges from it (after a change of
// step size), an explicit guess: max(1, (P+2)/4) RK4 substeps with cubic
// Hermite output at the nodes (rk4_guess).  Adaptive Q = P = 8 on a
// non-separable H, t in [0, 50]: 59 steps, 29 rejections by Newton failures,
// 10,120 calls of f with a one-step Euler-like start instead; 33 steps, 0
// Newton failures, 6,470 calls now (Q = P = 20: 52 steps, 23,979 calls ->
// 15 steps, 6,138 calls; fixed steps within -34 % .. +5 % of the calls).  (Extrapolating the
// last three solutions, y_{n+1} = 3 y_n - 3 y_{n-1} + y_{n-2}, was 70 times
// closer on Kepler e = 0.6, h = 0.1, (3,3), yet cost 10.9 f-calls per step
// against 9.0 with the quasi-Newton below (then accepting on the second
// iteration's rate): the larger first corrections feed it better secant
// pairs.)
//
// Error estimate (as the 2013 code): the same step with Q+1 modes and P+1 nodes,
// started from the low-order solution (modes padded with a zero, nodal
// momenta interpolated by the polynomial through p_k, p_j, p_{k+1} rather
// than the 2013 code's averages); err = x_high - x_low, the low-order local error
// up to O(h^{order+3}).
//
// Newton (systems of up to 64 unknowns): quasi-Newton on the structure.  J
// depends on the state only through the node Hessians, so those are the
// model: exact once (HamiltonianHessFcn, or 2d forward differences per node
// from the f already known there), then every residual gives each node a
// secant pair and a Powell-symmetric-Broyden update (secant_update); J is
// re-formed from the model for the current h (no callback) and refactorized.
// If the contraction rate exceeds 0.2, or Newton fails, the Hessians are
// taken exactly again.  F is not evaluated at the accepted iterate (the
// convergence test needs only the corrections).  Measured on Kepler e = 0.6,
// h = 0.1, (3,3), 1000 steps: 10.0 f-calls and 3.3 iterations per step,
// against 20.7 and 5.9 with one frozen LU per h.  Larger systems keep one LU per h
// (dropped when h changes: the Jacobian depends on h, not just through a
// factor), as refactorizing every iteration would cost more than it saves.
#ifndef ODEPKG_SPECTRAL_VARIATIONAL_HPP
#define ODEPKG_SPECTRAL_VARIATIONAL_HPP

#include "unconstrained/GaussLegendre.hpp"
#include "NewtonSolver.hpp"
#include "Stepper.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <vector>

namespace odepkg {
namespace detail {

/// The discrete Hamilton equations of one (Q, P) spectral step, F(y) = 0,
/// with all storage sized once.
class SpviSystem {
 public:
  SpviSystem(HamiltonianProblem& pb, int q_dofs, int p_dofs, NewtonOptions opts)
      : y((q_dofs + p_dofs + 2) * pb.dim()),
        pb_(pb),
        d_(pb.dim()),
        Q_(q_dofs),
        P_(p_dofs),
        tab_(q_dofs, p_dofs),
        newton_((q_dofs + p_dofs + 2) * pb.dim(), &pb.stats(), solver_options(opts, (q_dofs + p_dofs + 2) * pb.dim() <= kSecantMaxSize)),
        X_(2 * pb.dim(), p_dofs),
        F_(2 * pb.dim(), p_dofs),
        hess_(p_dofs, Mat(2 * pb.dim(), 2 * pb.dim())),
        secant_((q_dofs + p_dofs + 2) * pb.dim() <= kSecantMaxSize),
        Xs_(2 * pb.dim(), p_dofs),
        Fs_(2 * pb.dim(), p_dofs),
        s_(2 * pb.dim()),
        v_(2 * pb.dim()),
        r_(2 * pb.dim()) {}

  int size() const { return static_cast<int>(y.size()); }
  int q_dofs() const { return Q_; }
  int p_dofs() const { return P_; }
  const SpectralTables& tables() const { return tab_; }
  int iq(int i) const { return i * d_; }          ///< offset of mode q^i
  int ip(int j) const { return (Q_ + j) * d_; }   ///< offset of nodal p_j
  int iq1() const { return (Q_ + P_) * d_; }       ///< offset of q_{k+1}
  int ip1() const { return (Q_ + P_ + 1) * d_; }   ///< offset of p_{k+1}
  /// Node states [Q_j; p_j] (columns) of the last solution.
  const Mat& node_states() const { return X_; }
  const NewtonSolver& newton() const { return newton_; }
  void reset() {
    newton_.invalidate();
    model_ = false;
  }

  /// r = F(yy) for the step of size h from x_k at t0.  False if non-finite.
  bool residual(double t0, double h, const ConstVecRef& xk, const ConstVecRef& yy, VecRef r) {
    const int d = d_;
    const double hh = 0.5 * h;
    node_positions(yy);
    for (int j = 0; j < P_; ++j) {
      X_.col(j).tail(d) = yy.segment(ip(j), d);
      if (!pb_.field(t0 + hh * (1.0 + tab_.z(j)), X_.col(j), F_.col(j))) return false;
    }
    for (int s = 0; s < Q_; ++s) {  // R_s; F_ p-part = -H_q
      auto rs = r.segment(iq(s), d);
      rs = tab_.C(0, s) * xk.tail(d) - tab_.C(1, s) * yy.segment(ip1(), d);
      for (int j = 0; j < P_; ++j)
        rs += (tab_.w(j) * tab_.D(j, s)) * yy.segment(ip(j), d) +
              (hh * tab_.w(j) * tab_.L(j, s)) * F_.col(j).tail(d);
    }
    for (int k = 0; k < P_; ++k) {  // R_r; F_ q-part = H_p
      auto rr = r.segment(ip(k), d);
      rr = hh * F_.col(k).head(d);
      for (int i = 0; i < Q_; ++i) rr -= tab_.D(k, i) * yy.segment(iq(i), d);
    }
    auto ra = r.segment(iq1(), d);
    auto rb = r.segment(ip1(), d);
    ra = -xk.head(d);
    rb = -yy.segment(iq1(), d);
    for (int i = 0; i < Q_; ++i) {
      ra += tab_.C(0, i) * yy.segment(iq(i), d);
      rb += tab_.C(1, i) * yy.segment(iq(i), d);
    }
    return r.allFinite();
  }

  /// J = dF/dy at yy (formulas in the header comment).
  bool jacobian(double t0, double h, const ConstVecRef& yy, MatRef J) {
    return node_hessians(t0, h, yy) && assemble(h, J);
  }

  /// The Hessians of H at the nodes of yy (user's HamiltonianHessFcn or
  /// finite differences of f) into the model hess_.
  /// With `fields_known`, F_ holds f at the nodes of yy (the last residual
  /// was at yy): differencing then costs 2d calls per node, not 2d + 1.
  bool node_hessians(double t0, double h, const ConstVecRef& yy, bool fields_known = false) {
    const int d = d_;
    const double hh = 0.5 * h;
    ++pb_.stats().jacobian_evals;
    node_positions(yy);
    for (int j = 0; j < P_; ++j) {
      X_.col(j).tail(d) = yy.segment(ip(j), d);
      const double tj = t0 + hh * (1.0 + tab_.z(j));
      if (!(fields_known ? pb_.hamiltonian_hessian(tj, X_.col(j), F_.col(j), hess_[j])
                         : pb_.hamiltonian_hessian(tj, X_.col(j), hess_[j])))
        return false;
    }
    model_ = true;
    separable_ = true;
    for (int j = 0; j < P_; ++j) separable_ = separable_ && hess_[j].topRightCorner(d, d).isZero(0.0);
    return true;
  }

  /// J from the node Hessians in hess_ (no callbacks).
  bool assemble(double h, MatRef J) {
    const int d = d_;
    const double hh = 0.5 * h;
    J.setZero();
    for (int s = 0; s < Q_; ++s) {
      for (int j = 0; j < P_; ++j) {
        const Mat& H = hess_[j];
        const double a = hh * tab_.w(j) * tab_.L(j, s);
        for (int i = 0; i < Q_; ++i) J.block(iq(s), iq(i), d, d) -= (a * tab_.L(j, i)) * H.topLeftCorner(d, d);
        auto b = J.block(iq(s), ip(j), d, d);
        b = -a * H.topRightCorner(d, d);
        b.diagonal().array() += tab_.w(j) * tab_.D(j, s);
      }
      J.block(iq(s), ip1(), d, d).diagonal().array() -= tab_.C(1, s);
    }
    for (int k = 0; k < P_; ++k) {
      const Mat& H = hess_[k];
      for (int i = 0; i < Q_; ++i) {
        auto b = J.block(ip(k), iq(i), d, d);
        b = (hh * tab_.L(k, i)) * H.bottomLeftCorner(d, d);
        b.diagonal().array() -= tab_.D(k, i);
      }
      J.block(ip(k), ip(k), d, d) = hh * H.bottomRightCorner(d, d);
    }
    for (int i = 0; i < Q_; ++i) {
      J.block(iq1(), iq(i), d, d).diagonal().array() += tab_.C(0, i);
      J.block(ip1(), iq(i), d, d).diagonal().array() += tab_.C(1, i);
    }
    J.block(ip1(), iq1(), d, d).diagonal().array() -= 1.0;
    return J.allFinite();
  }

  /// Newton from the guess in y; on success y is the solution and the node
  /// states/fields are those of y.
  StepStatus solve(double t0, double h, const ConstVecRef& xk) {
    if (!secant_) {
      // J depends on h non-linearly: a factorization for another h is dropped.
      if (newton_.has_factorization() && std::abs(h - h_lu_) > 1e-10 * std::abs(h)) newton_.invalidate();
      auto F = [&](const ConstVecRef& yy, VecRef r) { return residual(t0, h, xk, yy, r); };
      auto J = [&](const ConstVecRef& yy, MatRef jac) {
        h_lu_ = h;
        return jacobian(t0, h, yy, jac);
      };
      const StepStatus st = newton_.solve(F, J, y);
      if (st == StepStatus::Success) node_states_at(y);
      return st;
    }
    // Quasi-Newton on the node Hessians (header comment): J is re-formed
    // from the model whenever a secant update changed it, or h changed.
    if (std::abs(h - h_lu_) > 1e-10 * std::abs(h)) model_changed_ = true;
    have_pair_ = false;
    want_exact_ = false;
    int n_res = 0;
    auto F = [&](const ConstVecRef& yy, VecRef r) {
      if (!residual(t0, h, xk, yy, r)) return false;
      ++n_res;
      secant_update();
      return true;
    };
    auto J = [&](const ConstVecRef& yy, MatRef jac) {
      if ((!model_ || want_exact_ || newton_.retrying()) && !node_hessians(t0, h, yy, true)) return false;
      h_lu_ = h;
      model_changed_ = want_exact_ = false;
      return assemble(h, jac);
    };
    auto remodel = [&] {
      if (!newton_.options().reuse_factorization ||  // full Newton asked for
          (n_res >= 3 && newton_.last_rate() > exact_rate_))
        want_exact_ = true;
      return model_changed_ || want_exact_;
    };
    const StepStatus st = newton_.solve(F, J, y, remodel);
    if (st == StepStatus::Success) node_states_at(y);
    return st;
  }

  Vec y;  ///< the unknowns: the guess before solve(), the solution after

 private:
  /// F is not evaluated at the accepted iterate (NewtonSolver): P calls saved
  /// per solve; nothing downstream needs f there.  The quasi-Newton's rate
  /// is trusted from the third iteration on (NewtonOptions::rate_from).
  static NewtonOptions solver_options(NewtonOptions o, bool secant) {
    o.residual_at_solution = false;
    if (secant) o.rate_from = 3;
    return o;
  }

  /// X_ = the node states [Q_j; p_j] of yy (no callbacks).
  void node_states_at(const ConstVecRef& yy) {
    node_positions(yy);
    for (int j = 0; j < P_; ++j) X_.col(j).tail(d_) = yy.segment(ip(j), d_);
  }

  /// X_ q-parts: Q_j = sum_i l_i(z_j) q^i.
  void node_positions(const ConstVecRef& yy) {
    for (int j = 0; j < P_; ++j) {
      auto xq = X_.col(j).head(d_);
      xq.setZero();
      for (int i = 0; i < Q_; ++i) xq += tab_.L(j, i) * yy.segment(iq(i), d_);
    }
  }

  /// Powell-symmetric-Broyden update of each node Hessian with the secant
  /// pair of the last two residuals at that node (same t_j):
  /// s = dX_j, v = Hess s = [-dF_p; dF_q] (F = [H_p; -H_q]),
  /// B += (r s' + s r')/(s's) - (r's) s s'/(s's)^2 with r = v - B s.
  /// When the exact Hessians had H_qp = 0 at every node (separable H), the
  /// model keeps that pattern and H_qq, H_pp are updated apart, from
  /// (dQ_j, -dF_p) and (dp_j, dF_q): twice the information per pair, and no
  /// coupling invented by the update.  Pairs with |s| below 1e-8 max(1, |X_j|)
  /// carry mostly round-off: skipped.
  void secant_update() {
    const int d = d_;
    if (have_pair_ && model_) {
      for (int j = 0; j < P_; ++j) {
        s_ = X_.col(j) - Xs_.col(j);
        v_.head(d) = Fs_.col(j).tail(d) - F_.col(j).tail(d);
        v_.tail(d) = F_.col(j).head(d) - Fs_.col(j).head(d);
        const double floor = 1e-8 * std::max(1.0, X_.col(j).lpNorm<Eigen::Infinity>());
        Mat& B = hess_[j];
        if (separable_) {
          model_changed_ |= psb(B.topLeftCorner(d, d), s_.head(d), v_.head(d), r_.head(d), floor);
          model_changed_ |= psb(B.bottomRightCorner(d, d), s_.tail(d), v_.tail(d), r_.tail(d), floor);
        } else {
          model_changed_ |= psb(B, s_, v_, r_, floor);
        }
      }
    }
    Xs_ = X_;
    Fs_ = F_;
    have_pair_ = true;
  }

  /// One PSB update of the symmetric B with B s = v; r is workspace.  False
  /// (B unchanged) when s is too short or B s = v holds already.
  static bool psb(Eigen::Ref<Mat> B, const ConstVecRef& s, const ConstVecRef& v, VecRef r, double floor) {
    if (!(s.lpNorm<Eigen::Infinity>() > floor)) return false;
    const double ss = s.squaredNorm();
    r.noalias() = v - B * s;
    // Already right along s (to 1e-6): no update, and no refactorization.
    if (!(r.lpNorm<Eigen::Infinity>() > 1e-6 * v.lpNorm<Eigen::Infinity>())) return false;
    const double c = r.dot(s) / (ss * ss);
    const Eigen::Index n = s.size();
    for (Eigen::Index b = 0; b < n; ++b)
      for (Eigen::Index a = 0; a < n; ++a) B(a, b) += (r(a) * s(b) + s(a) * r(b)) / ss - c * s(a) * s(b);
    return true;
  }

  HamiltonianProblem& pb_;
  int d_, Q_, P_;
  SpectralTables tab_;
  NewtonSolver newton_;
  Mat X_, F_;
  std::vector<Mat> hess_;
  double h_lu_ = 0.0;
  // Quasi-Newton model (secant_): hess_ holds it once model_ is set.  It
  // refactorizes J at every iteration: worth it while the LU is cheap next to
  // the 2dP calls of a fresh Jacobian; larger systems keep one LU per h.
  static constexpr int kSecantMaxSize = 64;
  bool secant_;
  bool model_ = false, model_changed_ = false, have_pair_ = false, want_exact_ = false;
  bool separable_ = false;  // the exact Hessians had H_qp = 0
  /// Contraction rate above which the model is replaced by exact Hessians
  /// (a safety net: between 0.05 and 1 the calls per step changed by < 5 %
  /// on Kepler e = 0.6 and the non-separable test problem).
  static constexpr double exact_rate_ = 0.2;
  Mat Xs_, Fs_;  // node states and fields of the previous residual
  Vec s_, v_, r_;
};

/// Lagrange basis through the points xs at x: out(m) = prod_{n != m} (x - xs_n)/(xs_m - xs_n).
inline void lagrange_basis(const Vec& xs, const Vec& denom, double x, VecRef out) {
  const Eigen::Index n = xs.size();
  for (Eigen::Index m = 0; m < n; ++m) {
    double v = 1.0;
    for (Eigen::Index k = 0; k < n; ++k)
      if (k != m) v *= x - xs(k);
    out(m) = v / denom(m);
  }
}

}  // namespace detail

class SpectralVariational final : public Stepper {
 public:
  SpectralVariational(HamiltonianProblem& problem, int q_dofs, int p_dofs, NewtonOptions newton = {})
      : Stepper(problem),
        d_(problem.dim()),
        Q_(checked(q_dofs, p_dofs)),
        P_(p_dofs),
        low_(problem, q_dofs, p_dofs, newton),
        high_(problem, q_dofs + 1, p_dofs + 1, newton),
        work_(problem.state_size()),
        xa_(problem.state_size()),
        xb_(problem.state_size()),
        xh_(problem.state_size()),
        prev_y_(low_.size()),
        tmp_(problem.dim()),
        lv_(q_dofs),
        xs_(p_dofs + 2),
        den_(p_dofs + 2),
        lb_(p_dofs + 2),
        Ip_(p_dofs + 1, p_dofs + 2),
        rk_m_(std::max(1, (p_dofs + 2) / 4)),
        rk_x_(problem.state_size(), rk_m_ + 1),
        rk_f_(problem.state_size(), rk_m_ + 1),
        rk_s_(problem.state_size()),
        rk_k2_(problem.state_size()),
        rk_k3_(problem.state_size()),
        rk_k4_(problem.state_size()) {
    gauss_legendre(Q_, eta_, omega_);  // projection onto the Q modes, exact for degree <= 2Q-1
    Lq_.resize(Q_, Q_);
    for (int m = 0; m < Q_; ++m) {
      legendre(eta_(m), Q_, lv_.data());
      Lq_.row(m) = lv_.transpose();
    }
    // Momentum interpolation points of a step: -1, the Gauss nodes, +1.
    xs_(0) = -1.0;
    xs_.segment(1, P_) = low_.tables().z;
    xs_(P_ + 1) = 1.0;
    for (int m = 0; m < P_ + 2; ++m) {
      den_(m) = 1.0;
      for (int k = 0; k < P_ + 2; ++k)
        if (k != m) den_(m) *= xs_(m) - xs_(k);
    }
    for (int j = 0; j < P_ + 1; ++j) {
      detail::lagrange_basis(xs_, den_, high_.tables().z(j), lb_);
      Ip_.row(j) = lb_.transpose();
    }
  }

  const char* name() const override { return "spectral_var_int"; }
  /// min(2, 2 P), as measured (header comment).
  int order() const override { return std::min(2 * (Q_ - 1), 2 * P_); }
  bool has_error_estimate() const override { return true; }
  void reset() override {
    low_.reset();
    high_.reset();
    have_prev_ = false;
  }

  int q_dofs() const { return Q_; }
  int p_dofs() const { return P_; }
  const SpectralTables& tables() const { return low_.tables(); }

  StepStatus step(Point& from, double h, Point& to) override {
    const int d = d_;
    Vec& y = low_.y;
    const bool warm = warm_guess(from, h);
    if (!warm && !rk4_guess(from, h)) {
      // Linear start (rk4_guess met a non-finite value): q(z) = q_k + h/2 (1+z) H_p,
      // p(z) = p_k - h/2 (1+z) H_q at x_k.
      if (!problem_.field(from.t, from.x, work_)) return StepStatus::NonFinite;
      from.force = work_.tail(d);
      from.has_force = true;
      y.setZero();
      y.segment(low_.iq(0), d) = from.x.head(d) + (0.5 * h) * work_.head(d);
      y.segment(low_.iq(1), d) = (0.5 * h) * work_.head(d);
      for (int j = 0; j < P_; ++j)
        y.segment(low_.ip(j), d) = from.x.tail(d) + (0.5 * h * (1.0 + low_.tables().z(j))) * work_.tail(d);
      y.segment(low_.iq1(), d) = from.x.head(d) + h * work_.head(d);
      y.segment(low_.ip1(), d) = from.x.tail(d) + h * work_.tail(d);
    }
    StepStatus s = low_.solve(from.t, h, from.x);
    if (s == StepStatus::NewtonDiverged && warm && rk4_guess(from, h)) {
      // The extrapolated polynomial can be far off after a change of step
      // size (first corrections of 1-3 where the solution is O(1)); before
      // the step is rejected, Newton once more from the explicit guess, with
      // exact Hessians (the quasi-Newton model saw the divergent iterates).
      low_.reset();
      s = low_.solve(from.t, h, from.x);
    }
    if (s != StepStatus::Success) return s;
    to.t = from.t + h;
    to.x.head(d) = y.segment(low_.iq1(), d);
    to.x.tail(d) = y.segment(low_.ip1(), d);
    to.has_force = false;
    if (!to.x.allFinite()) return StepStatus::NonFinite;
    prev_y_ = y;
    t_a_ = from.t;
    h_a_ = h;
    xa_ = from.x;
    xb_ = to.x;
    have_prev_ = true;
    return StepStatus::Success;
  }

  StepStatus step_with_error(Point& from, double h, Point& to, VecRef err) override {
    StepStatus s = step(from, h, to);
    if (s != StepStatus::Success) return s;
    s = estimate(from, h, to, xh_);
    if (s != StepStatus::Success) return s;
    err = xh_ - to.x;
    return StepStatus::Success;
  }

  /// The same step with Q+1 modes and P+1 nodes (as the 2013 code), started from the
  /// low-order result `low` of step(from, h, low); x_high = its end point.
  StepStatus estimate(Point& from, double h, const Point& low, Vec& x_high) {
    const int d = d_;
    if (x_high.size() != 2 * d) x_high.resize(2 * d);
    Vec& Y = high_.y;
    Y.setZero();
    const bool same = have_prev_ && from.t == t_a_ && h == h_a_ && from.x == xa_ && low.x == xb_;
    if (same) {
      // Modes padded with a zero; momenta interpolated through p_k, p_j, p_{k+1}.
      Y.head(Q_ * d) = prev_y_.head(Q_ * d);
      for (int j = 0; j < P_ + 1; ++j) {
        auto pj = Y.segment(high_.ip(j), d);
        pj = Ip_(j, 0) * from.x.tail(d) + Ip_(j, P_ + 1) * low.x.tail(d);
        for (int m = 0; m < P_; ++m) pj += Ip_(j, m + 1) * prev_y_.segment(low_.ip(m), d);
      }
    } else {
      // Straight line between from and low.
      Y.segment(high_.iq(0), d) = 0.5 * (from.x.head(d) + low.x.head(d));
      Y.segment(high_.iq(1), d) = 0.5 * (low.x.head(d) - from.x.head(d));
      for (int j = 0; j < P_ + 1; ++j) {
        const double c = 0.5 * (1.0 + high_.tables().z(j));
        Y.segment(high_.ip(j), d) = (1.0 - c) * from.x.tail(d) + c * low.x.tail(d);
      }
    }
    Y.segment(high_.iq1(), d) = low.x.head(d);
    Y.segment(high_.ip1(), d) = low.x.tail(d);
    const StepStatus s = high_.solve(from.t, h, from.x);
    if (s != StepStatus::Success) return s;
    x_high.head(d) = Y.segment(high_.iq1(), d);
    x_high.tail(d) = Y.segment(high_.ip1(), d);
    return x_high.allFinite() ? StepStatus::Success : StepStatus::NonFinite;
  }

  /// q and p at the P quadrature nodes of the last successful step (columns,
  /// d x P), at the times of node_times().  Local accuracy (measured): O(h^Q)
  /// for P = Q - 1, only O(h^{Q-1}) for P >= Q (the nodal momenta are the
  /// Legendre transform of the polynomial's velocity), below the step order.
  void node_values(Mat& q_nodes, Mat& p_nodes) const {
    q_nodes = low_.node_states().topRows(d_);
    p_nodes = low_.node_states().bottomRows(d_);
  }
  /// t_k + h (1 + z_j)/2 of the last step.
  void node_times(Vec& t) const {
    t = ((t_a_ + 0.5 * h_a_) + (0.5 * h_a_) * low_.tables().z.array()).matrix();
  }

  // ---- diagnostics (tests) --------------------------------------------------
  int system_size() const { return low_.size(); }
  /// The unknowns y of the last step (layout in the header comment).
  const Vec& solution() const { return low_.y; }
  int last_iterations() const { return low_.newton().last_iterations(); }
  bool system_residual(double t0, double h, const ConstVecRef& xk, const ConstVecRef& y, VecRef r) {
    return low_.residual(t0, h, xk, y, r);
  }
  bool system_jacobian(double t0, double h, const ConstVecRef& y, MatRef J) {
    return low_.jacobian(t0, h, y, J);
  }

 private:
  static int checked(int q_dofs, int p_dofs) {
    if (q_dofs < 2)
      throw InputError("invalidOption", "option \"Q_DoFs\" must be at least 2 (q needs a mode beyond the constant)");
    if (p_dofs < 1) throw InputError("invalidOption", "option \"P_DoFs\" must be at least 1");
    if (p_dofs < q_dofs - 1)
      throw InputError("invalidOption",
                       "option \"P_DoFs\" must be at least Q_DoFs - 1: with fewer quadrature nodes the "
                       "discrete equations are ill-posed");
    return q_dofs;
  }

  /// Guess from the last solved step when `from` is its start or end point:
  /// its q and p polynomials re-evaluated at the new nodes.
  bool warm_guess(const Point& from, double h) {
    if (!have_prev_) return false;
    double off;  // from.t - t_a_
    if (from.t == t_a_ && from.x == xa_)
      off = 0.0;
    else if (std::abs(from.t - (t_a_ + h_a_)) <= 1e-8 * std::abs(h_a_) && from.x == xb_)
      off = h_a_;
    else
      return false;
    auto xi = [&](double z) { return -1.0 + (2.0 * off + h * (1.0 + z)) / h_a_; };
    // The momentum interpolant has degree P + 1: beyond its interval its
    // Lagrange basis amplifies the errors of its values (Newton's tolerance)
    // by sum_m |l_m(xi)| — one equal step ahead 4e6 for P = 8, 5e9 for
    // P = 12, 7e15 for P = 20, far more after a step-size increase.  A guess
    // off by more than 1e-3 made Newton diverge: fixed steps with
    // Q = P = 20 failed at t = 0.3, adaptive ones rejected every second
    // step (13,513 steps, 3.7 million calls for t in [0, 50]).  Then start
    // cold, as after a restart.
    detail::lagrange_basis(xs_, den_, xi(1.0), lb_);
    const double tol = std::max(low_.newton().options().tol, std::numeric_limits<double>::epsilon());
    if (!(lb_.lpNorm<1>() * tol <= kMaxGuessError)) return false;
    guess_from_curve([&](double z, VecRef out) { prev_q(xi(z), out); },
                     [&](double z, VecRef out) { prev_p(xi(z), out); });
    return true;
  }

  /// low_.y from a curve (q(z), p(z)) over the step, z in [-1, 1]: the q
  /// modes by the Q-point Gauss projection
  /// c_i = (2i+1)/2 sum_m omega_m l_i(eta_m) q(eta_m), the momenta at the
  /// nodes, and q, p at the end z = 1.
  template <class Q, class P>
  void guess_from_curve(Q&& q_at, P&& p_at) {
    const int d = d_;
    Vec& y = low_.y;
    y.head(Q_ * d).setZero();
    for (int m = 0; m < Q_; ++m) {
      q_at(eta_(m), tmp_);
      for (int i = 0; i < Q_; ++i) y.segment(low_.iq(i), d) += (0.5 * (2 * i + 1) * omega_(m) * Lq_(m, i)) * tmp_;
    }
    for (int j = 0; j < P_; ++j) p_at(low_.tables().z(j), y.segment(low_.ip(j), d));
    q_at(1.0, y.segment(low_.iq1(), d));
    p_at(1.0, y.segment(low_.ip1(), d));
  }

  /// Guess without a previous step (first step, after a rejection, after a
  /// step-size change too large for warm_guess): m = max(1, (P+2)/4) classical
  /// RK4 substeps over [t_k, t_k + h] (4m + 1 calls of f), the states between
  /// them by cubic Hermite interpolation from the substeps' ends and fields,
  /// the unknowns from that curve (guess_from_curve, as warm_guess).  Its error O((h/m)^4) replaces the O(h^2) of the
  /// linear start, from which Newton diverged on steps the accuracy allowed
  /// (adaptive Q = P = 8 on a non-separable H: 29 failed solves in 59 steps).
  /// False (then the linear start) if a value is not finite.
  bool rk4_guess(Point& from, double h) {
    const int d = d_, m = rk_m_;
    const double hs = h / m;
    auto f = [&](double t, const ConstVecRef& x, VecRef dx) { return problem_.field(t, x, dx); };
    rk_x_.col(0) = from.x;
    if (!f(from.t, from.x, rk_f_.col(0))) return false;
    from.force = rk_f_.col(0).tail(d);
    from.has_force = true;
    for (int k = 0; k < m; ++k) {
      const double t = from.t + k * hs;
      rk_s_ = rk_x_.col(k) + (0.5 * hs) * rk_f_.col(k);
      if (!f(t + 0.5 * hs, rk_s_, rk_k2_)) return false;
      rk_s_ = rk_x_.col(k) + (0.5 * hs) * rk_k2_;
      if (!f(t + 0.5 * hs, rk_s_, rk_k3_)) return false;
      rk_s_ = rk_x_.col(k) + hs * rk_k3_;
      if (!f(t + hs, rk_s_, rk_k4_)) return false;
      rk_x_.col(k + 1) = rk_x_.col(k) + (hs / 6.0) * (rk_f_.col(k) + 2.0 * rk_k2_ + 2.0 * rk_k3_ + rk_k4_);
      if (!f(k + 1 == m ? from.t + h : t + hs, rk_x_.col(k + 1), rk_f_.col(k + 1))) return false;
    }
    // the curve at z in [-1, 1]
    auto at = [&](double z, VecRef out) {
      const double sub = 0.5 * (1.0 + z) * m;
      const int k = std::min(std::max(static_cast<int>(sub), 0), m - 1);
      const double th = sub - k, th2 = th * th, th3 = th2 * th;
      out = (2 * th3 - 3 * th2 + 1) * rk_x_.col(k) + (-2 * th3 + 3 * th2) * rk_x_.col(k + 1) +
            (hs * (th3 - 2 * th2 + th)) * rk_f_.col(k) + (hs * (th3 - th2)) * rk_f_.col(k + 1);
    };
    // (at z = 1 the curve is the last substep's end, rk_x_.col(m), exactly)
    guess_from_curve(
        [&](double z, VecRef out) {
          at(z, rk_s_);
          out = rk_s_.head(d);
        },
        [&](double z, VecRef out) {
          at(z, rk_s_);
          out = rk_s_.tail(d);
        });
    return low_.y.allFinite();
  }

  /// The last step's q polynomial at (its) xi.
  void prev_q(double xi, VecRef out) {
    legendre(xi, Q_, lv_.data());
    out.setZero();
    for (int i = 0; i < Q_; ++i) out += lv_(i) * prev_y_.segment(low_.iq(i), d_);
  }
  /// The last step's momentum interpolant through (-1, p_k), (z_j, p_j), (1, p_{k+1}).
  void prev_p(double xi, VecRef out) {
    detail::lagrange_basis(xs_, den_, xi, lb_);
    out = lb_(0) * xa_.tail(d_) + lb_(P_ + 1) * prev_y_.segment(low_.ip1(), d_);
    for (int m = 0; m < P_; ++m) out += lb_(m + 1) * prev_y_.segment(low_.ip(m), d_);
  }

  static constexpr double kMaxGuessError = 1e-3;  ///< warm guess: amplified tolerance bound
  int d_, Q_, P_;
  detail::SpviSystem low_, high_;
  Vec work_, xa_, xb_, xh_, prev_y_, tmp_, lv_;
  Vec eta_, omega_;  // Q-point Gauss rule for the mode projection
  Mat Lq_;           // l_i(eta_m)
  Vec xs_, den_, lb_;  // momentum interpolation points, Lagrange denominators, basis values
  Mat Ip_;             // low -> high nodal momenta interpolation
  bool have_prev_ = false;
  double t_a_ = 0.0, h_a_ = 0.0;  // start and size of the last step
  int rk_m_;                       // rk4_guess: substeps, their states and fields, stages
  Mat rk_x_, rk_f_;
  Vec rk_s_, rk_k2_, rk_k3_, rk_k4_;
};

}  // namespace odepkg

#endif
