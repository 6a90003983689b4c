// EnsembleSplitting.hpp — the explicit splitting methods on an ensemble of
// a separable H = T(p) + V(q), one call of f per step for all members:
//   Störmer–Verlet (kick-drift-kick; Hairer, Lubich, Wanner, "Geometric
//   Numerical Integration", (I.3.6)), order 2, symmetric:
//     p_{1/2} = p_0 + h/2 F(q_0),  q_1 = q_0 + h H_p(p_{1/2}),
//     p_1 = p_{1/2} + h/2 F(q_1);
//   velocity Verlet, the same on the state [x; v] with f = [v; a(x)]
//   (H_p(v) = v);
//   symplectic Euler (HLW Theorem VI.3.3), order 1:
//     p_1 = p_0 + h F(q_0),  q_1 = q_0 + h H_p(p_1).
// H_p comes from the learned velocity model (VelocityModel.hpp), checked by
// the call at [q_1; p_{1/2}] (p_1 for symplectic Euler) that yields the force
// F(q_1); when no model holds, two calls per step: H_p at the new p, then the
// force.  The force at q_1 is kept for the next step (first same as last).
// Separability, the claim of Explicit, is probed at the start for every
// member (2 calls): H_p must not move with q, nor the force with p.
#ifndef ODEPKG_ENSEMBLE_SPLITTING_HPP
#define ODEPKG_ENSEMBLE_SPLITTING_HPP

#include "ensemble/EnsembleMethod.hpp"
#include "ensemble/VelocityModel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

namespace odepkg::ensemble {

/// Separability of every member at (t, X), F0 = f(t, X): f at [q + s; p]
/// must give the same H_p, f at [q; p + s] the same force (s = max(1, |x|)
/// per component).  Throws odepkg:notSeparable naming the first member.
inline void probe_separability(EnsembleProblem& pb, double t, const ConstMatRef& X, const ConstMatRef& F0,
                               const char* option = "Explicit") {
  const int d = pb.dim();
  const Eigen::Index K = X.cols();
  Mat Xp = X, F1(2 * d, K);
  const double eps = std::numeric_limits<double>::epsilon();
  for (int part = 0; part < 2; ++part) {  // 0: move q, watch H_p; 1: move p, watch the force
    Xp = X;
    for (Eigen::Index j = 0; j < K; ++j)
      for (int i = 0; i < d; ++i) Xp(part * d + i, j) += std::max(1.0, std::abs(X(part * d + i, j)));
    pb.field(t, Xp, F1);
    const int watch = part == 0 ? 0 : d;
    for (Eigen::Index j = 0; j < K; ++j) {
      const Vec a = F0.col(j).segment(watch, d), b = F1.col(j).segment(watch, d);
      if (!b.allFinite()) continue;  // a probe into a singularity says nothing
      const double scale = std::max(a.lpNorm<Eigen::Infinity>(), b.lpNorm<Eigen::Infinity>());
      if ((a - b).lpNorm<Eigen::Infinity>() > 1e3 * eps * std::max(1.0, scale)) {
        std::ostringstream msg;
        msg << "option \"" << option << "\" claims a separable H = T(p) + V(q), but for member " << j + 1
            << (part == 0 ? " dH/dp changed when q moved" : " dH/dq changed when p moved")
            << " (by " << (a - b).lpNorm<Eigen::Infinity>() << "); remove \"" << option
            << "\" for the implicit scheme";
        throw InputError("notSeparable", msg.str());
      }
    }
  }
}

class EnsembleSplitting final : public EnsembleMethod {
 public:
  enum class Kind { StormerVerlet, VelocityVerlet, SymplecticEuler };

  EnsembleSplitting(EnsembleProblem& pb, Kind kind)
      : EnsembleMethod(pb), kind_(kind), Y_(2 * pb.dim(), pb.members()), W_(2 * pb.dim(), pb.members()),
        ok_(pb.members()), miss_(pb.members(), 0) {}

  const char* name() const override {
    switch (kind_) {
      case Kind::StormerVerlet: return "stormer_verlet";
      case Kind::VelocityVerlet: return "velocity_verlet";
      default: return "symplectic_euler";
    }
  }
  int order() const override { return kind_ == Kind::SymplecticEuler ? 1 : 2; }
  bool symmetric() const override { return kind_ != Kind::SymplecticEuler; }
  /// Calls of f per step: 1 with the velocity model, else 2.
  bool one_call_per_step() const { return model_.active(); }

  void start(double t0, const ConstMatRef& X0, const ConstMatRef& F0, MatRef force, MatRef aux) override {
    (void)aux;
    const int d = pb_.dim();
    if (kind_ == Kind::VelocityVerlet) {
      model_.set_identity(d, static_cast<int>(X0.cols()));
    } else {
      probe_separability(pb_, t0, X0, F0);
      model_.learn(pb_, t0, X0, F0);
    }
    force = F0.bottomRows(d);
  }

  // The loops run per member and step: raw column pointers, no Eigen
  // block per access (its run-time checks stay on: EigenConfig.hpp).
  void step(double t, double h, const int* ids, int k, const ConstMatRef& X0, const ConstMatRef& force0,
            const ConstMatRef& aux0, MatRef X1, MatRef force1, MatRef aux1, StepStatus* status) override {
    (void)aux0;
    (void)aux1;
    const int d = pb_.dim(), n = 2 * d;
    require(X0, n, k);
    require(force0, d, k);
    require(X1, n, k);
    require(force1, d, k);
    auto Y = Y_.leftCols(k);
    auto W = W_.leftCols(k);
    double* y = Y_.data();
    const double* w = W_.data();
    const double* x0 = X0.data();
    const double* f0 = force0.data();
    const Eigen::Index sx0 = X0.outerStride(), sf0 = force0.outerStride();
    const double c = kind_ == Kind::SymplecticEuler ? h : 0.5 * h;  // the first kick
    const double c2 = kind_ == Kind::SymplecticEuler ? 0.0 : 0.5 * h;  // the closing kick
    double* x1 = X1.data();
    double* f1 = force1.data();
    const Eigen::Index sx1 = X1.outerStride(), sf1 = force1.outerStride();
    // f member by member (a compiled model): the whole step of each member
    // in one pass, the members across threads; the same operations as the
    // batched path below, so the same results, for any number of threads.
    if (model_.active() && pb_.has_member_field()) {
      pb_.count_member_field_call();
      double* wm = W_.data();
      const VelocityModel& model = model_;
      const EnsembleProblem& pb = pb_;
      char* miss = miss_.data();
      auto body = [=, &model, &pb](int begin, int end) {
        for (int j = begin; j < end; ++j) {
          double* yj = y + j * n;
          double* wj = wm + j * n;
          for (int i = 0; i < d; ++i) yj[d + i] = x0[j * sx0 + d + i] + c * f0[j * sf0 + i];
          model.predict(ids[j], yj + d, yj);
          for (int i = 0; i < d; ++i) yj[i] = x0[j * sx0 + i] + h * yj[i];
          pb.member_field(t + h, ids[j], yj, wj);
          const bool ok = finite(wj, n);
          miss[j] = 0;
          if (ok && !model.identity()) {
            double v[VelocityModel::kMaxDim];
            model.predict(ids[j], yj + d, v);
            miss[j] = !model.matches(ids[j], yj + d, v, wj);
          }
          status[j] = close(d, c2, yj, wj, x1 + j * sx1, f1 + j * sf1, ok);
        }
      };
      pb_.threads()->for_members(k, body);
      bool any_miss = false;
      for (int j = 0; j < k; ++j) any_miss = any_miss || miss[j];
      if (!any_miss) return;
      model_.disable();  // T is not quadratic after all: for good (the two-call step below)
    }
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < d; ++i) y[j * n + d + i] = x0[j * sx0 + d + i] + c * f0[j * sf0 + i];
    bool two_calls = !model_.active();
    if (!two_calls) {
      for (int j = 0; j < k; ++j) {
        double* yj = y + j * n;
        model_.predict(ids[j], yj + d, yj);  // H_p(p_new) into the q rows
        for (int i = 0; i < d; ++i) yj[i] = x0[j * sx0 + i] + h * yj[i];
      }
      pb_.field(t + h, Y, W, ids);
      for (int j = 0; j < k; ++j) {
        ok_(j) = finite(w + j * n, n);
        if (!ok_(j) || model_.identity()) continue;
        // the prediction again (Y's q rows now hold q_1) against f's H_p
        double v[VelocityModel::kMaxDim];
        model_.predict(ids[j], y + j * n + d, v);
        if (!model_.matches(ids[j], y + j * n + d, v, w + j * n)) two_calls = true;
      }
      if (two_calls) model_.disable();  // T is not quadratic after all: for good
    }
    if (two_calls) {
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < d; ++i) y[j * n + i] = x0[j * sx0 + i];
      const double tv = kind_ == Kind::SymplecticEuler ? t : t + 0.5 * h;
      pb_.field(tv, Y, W, ids);
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < d; ++i) y[j * n + i] = x0[j * sx0 + i] + h * w[j * n + i];
      pb_.field(t + h, Y, W, ids);
      for (int j = 0; j < k; ++j) ok_(j) = finite(w + j * n, n);
    }
    for (int j = 0; j < k; ++j)
      status[j] = close(d, c2, y + j * n, w + j * n, x1 + j * sx1, f1 + j * sf1, ok_(j));
  }

 private:
  /// The closing kick of one member from y = [q_1; p_{1/2}] and w = f at
  /// y: x1 = [q_1; p_{1/2} + c2 F(q_1)], f1 = F(q_1).
  static StepStatus close(int d, double c2, const double* y, const double* w, double* x1, double* f1, bool ok) {
    const double* force = w + d;
    double zero = 0.0;
    for (int i = 0; i < d; ++i) {
      f1[i] = force[i];
      x1[i] = y[i];
      x1[d + i] = y[d + i] + c2 * force[i];
      zero += x1[i] * 0.0 + x1[d + i] * 0.0;  // NaN unless finite
    }
    return ok && zero == 0.0 ? StepStatus::Success : StepStatus::NonFinite;
  }

  /// The n numbers at x are finite (one pass, no Eigen block per member).
  static bool finite(const double* x, int n) {
    double zero = 0.0;
    for (int i = 0; i < n; ++i) zero += x[i] * 0.0;
    return zero == 0.0;
  }

  /// The caller's blocks must have the sizes the raw loops assume.
  static void require(const ConstMatRef& A, int rows, int cols) {
    if (A.rows() != rows || A.cols() < cols || A.innerStride() != 1)
      throw EigenAssertion("EnsembleSplitting: a block of the wrong size");
  }

  Kind kind_;
  VelocityModel model_;
  Mat Y_, W_;
  Eigen::Array<bool, Eigen::Dynamic, 1> ok_;
  std::vector<char> miss_;  ///< per member: f's H_p missed the velocity model (member-field path)
};

}  // namespace odepkg::ensemble

#endif
