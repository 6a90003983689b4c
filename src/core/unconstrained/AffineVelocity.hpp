// AffineVelocity.hpp — a learned, per-step verified model H_p(p) = A p + b
// of the velocity of a separable H = T(p) + V(q) with quadratic kinetic
// energy T = p'A p/2 + b'p (the usual T = p'M^{-1}p/2: A = M^{-1}, b = 0).
//
// Why: with one combined f(t, [q; p]) = [H_p; -H_q], an explicit Störmer–
// Verlet or symplectic Euler step needs H_p at p_{n+1/2} before it can move
// q, and the force at q_{n+1} after: two dependent calls of f.  When H_p is
// affine, the first is A p_{n+1/2} + b, and the one call at
// [q_{n+1}; p_{n+1/2}] that yields the force also returns the true
// H_p(p_{n+1/2}): the prediction is checked on every step at no cost.  A step
// whose check fails (T not quadratic, H_p depending on t or q) is redone the
// two-call way by the caller, and the model is dropped for good.
//
// Learning a dense A costs d + 1 calls of f (forward differences are exact
// for an affine map, up to round-off), so it starts only after max(8, d/2)
// steps, or earlier once the steps have cost max(16, d) calls of f (a
// RATTLE step with Newton on its multipliers calls f at every iteration:
// its model is learned after 4 steps, not 9): the probes never cost more
// than the calls already made, and the compiled single-step functions (at
// most three steps per call) never learn.
// Above kDenseMax unknowns a dense A would cost O(d^2) memory and time per
// step, more than the call it saves: the model is then a diagonal A (the
// usual particle masses), learned from one probe that moves every p_i and
// checked by a second with alternating signs — 3 calls, after 8 steps.  A
// dense A that turns out diagonal is also applied as a diagonal.
#ifndef ODEPKG_AFFINE_VELOCITY_HPP
#define ODEPKG_AFFINE_VELOCITY_HPP

#include "HamiltonianProblem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class AffineVelocity {
 public:
  /// Largest d for which A is learned as a dense matrix.
  static constexpr int kDenseMax = 64;

  /// `diagonal_only`: always the diagonal model (3 calls, after 8 steps),
  /// never a dense d x d A (the sparse RATTLE path: O(d) memory whatever d).
  explicit AffineVelocity(int d, bool diagonal_only = false)
      : A_(d <= kDenseMax && !diagonal_only ? d : 0, d <= kDenseMax && !diagonal_only ? d : 0),
        diag_(d), b_(d), v_(d), x_(2 * d), f0_(2 * d), f1_(2 * d), diagonal_only_(diagonal_only) {}

  bool active() const { return state_ == State::Active; }

  /// Called before each explicit step from (t, [q; p]): learns the model
  /// once enough steps have been taken.  Returns active().  A template so
  /// that the steps after learning build no Ref of x.
  template <class X>
  bool prepare(HamiltonianProblem& pb, double t, const X& x) {
    const bool dense = pb.dim() <= kDenseMax && !diagonal_only_;
    if (state_ != State::Waiting) return active();
    // The calls of f made while waiting: a stepper whose steps cost more
    // than the two calls of the explicit scheme (RATTLE's Newton on the
    // position multipliers calls f at every iteration) reaches the budget
    // of the two-call schemes, max(16, d) calls, in fewer steps and learns
    // then (never within the three steps of a single-step function).
    if (steps_ == 0) calls_at_start_ = pb.stats().field_evals;
    ++steps_;
    const long spent = pb.stats().field_evals - calls_at_start_;
    const long budget = dense ? std::max(16, pb.dim()) : 16;
    if (steps_ > (dense ? std::max(8, pb.dim() / 2) : 8) || (steps_ > 3 && spent >= budget)) {
      if (dense)
        learn_dense(pb, t, x);
      else
        learn_diagonal(pb, t, x);
    }
    return active();
  }

  /// The predicted H_p(p) (valid until the next call).
  const Vec& predict(const ConstVecRef& p) {
    require_size(p.size());
    return predict(p.data());
  }
  /// The same from p[0 .. d-1] (the explicit steppers' hot path: no Eigen
  /// block or Ref built per step).
  const Vec& predict(const double* p) {
    const Eigen::Index d = v_.size();
    double* v = v_.data();
    const double* b = b_.data();
    if (diagonal_) {
      const double* a = diag_.data();
      for (Eigen::Index i = 0; i < d; ++i) v[i] = a[i] * p[i] + b[i];
    } else {
      v_.noalias() = A_ * Eigen::Map<const Vec>(p, d);
      v_ += b_;
    }
    return v_;
  }

  /// A kick and a drift with the predicted velocity, in one pass when A is
  /// diagonal: p1 = p0 + c f, then predict(p1) and q1 = q0 + h H_p(p1)
  /// (the explicit steps' half kick and move of q; the same operations as
  /// the vector expressions, so the same results).  p1 and q1 must not
  /// overlap the inputs.
  void kick_drift(const double* p0, double c, const double* f, double* p1, double h, const double* q0,
                  double* q1) {
    const Eigen::Index d = v_.size();
    double* v = v_.data();
    if (!diagonal_) {
      for (Eigen::Index i = 0; i < d; ++i) p1[i] = p0[i] + c * f[i];
      predict(p1);
      for (Eigen::Index i = 0; i < d; ++i) q1[i] = q0[i] + h * v[i];
      return;
    }
    const double* a = diag_.data();
    const double* b = b_.data();
    for (Eigen::Index i = 0; i < d; ++i) {
      p1[i] = p0[i] + c * f[i];
      v[i] = a[i] * p1[i] + b[i];
      q1[i] = q0[i] + h * v[i];
    }
  }

  /// Compare the true H_p at the point of the last prediction with it; on a
  /// mismatch the model is dropped and false returned (the caller redoes the
  /// step without it).  A non-finite H_p (a trial step into a singularity)
  /// says nothing about the model: false, but the model is kept.
  bool confirm(const ConstVecRef& p, const ConstVecRef& hp_true) {
    require_size(p.size());
    require_size(hp_true.size());
    return confirm(p.data(), hp_true.data());
  }
  /// The same for p[0 .. d-1] and hp_true[0 .. d-1]: one pass for the
  /// finiteness of hp_true and the three maximum norms.
  bool confirm(const double* p, const double* hp_true) {
    const Eigen::Index d = v_.size();
    const double* v = v_.data();
    double zero = 0.0, p_max = 0.0, hp_max = 0.0, miss = 0.0;
    for (Eigen::Index i = 0; i < d; ++i) {
      zero += hp_true[i] * 0.0;  // NaN unless finite (Finite.hpp)
      p_max = std::max(p_max, std::abs(p[i]));
      hp_max = std::max(hp_max, std::abs(hp_true[i]));
      miss = std::max(miss, std::abs(hp_true[i] - v[i]));
    }
    return judge(zero, p_max, hp_max, miss);
  }
  /// confirm()'s verdict from its four figures, also for a caller that
  /// takes them in a pass of its own (the sparse RATTLE's half kick,
  /// AffineRattleSweeps.hpp): zero = sum of H_p * 0 (0 iff finite), the
  /// maxima of |p|, |H_p| and |H_p - (A p + b)|.  A non-finite H_p says
  /// nothing (false, model kept); a miss above round-off drops the model.
  bool judge(double zero, double p_max, double hp_max, double miss) {
    if (!(zero == 0.0)) return false;
    const double eps = std::numeric_limits<double>::epsilon();
    const double scale = a_norm_ * p_max + b_norm_ + hp_max;
    if (miss <= 1e3 * eps * scale) return true;
    state_ = State::Off;
    return false;
  }

  /// out = A X for the learned A = T_pp (valid when active()); no
  /// temporaries, so steps stay allocation-free.
  template <class In, class Out>
  void apply(const In& X, Out& out) const {
    if (diagonal_)
      out = diag_.asDiagonal() * X;
    else
      out.noalias() = A_ * X;
  }
  /// The model is a diagonal A (valid when active()).
  bool is_diagonal() const { return diagonal_; }
  /// The diagonal of A (valid when active()).
  const Vec& diagonal() const { return diag_; }
  /// b (valid when active()).
  const Vec& offset() const { return b_; }
  /// A = a I and b = 0 (equal masses; valid when active()): the sweeps may
  /// read the scalar uniform_value() instead of diagonal() and offset().
  bool is_uniform() const { return diagonal_ && uniform_; }
  double uniform_value() const { return uniform_value_; }
  /// |A|_inf, computed once when learned.
  double matrix_norm() const { return a_norm_; }

  /// Never use the model (the caller's option, or after a failed check).
  void disable() { state_ = State::Off; }

 private:
  enum class State { Waiting, Active, Off };

  /// A vector handed to predict/confirm must have d entries (a bug if not:
  /// thrown, as Eigen's own checks are, never read past the end).
  void require_size(Eigen::Index n) const {
    if (n != v_.size()) throw EigenAssertion("AffineVelocity: a vector of the wrong size");
  }

  /// Perturbation of p_i for the forward differences.
  static double probe_size(double p) { return std::max(1.0, std::abs(p)); }

  void learn_dense(HamiltonianProblem& pb, double t, const ConstVecRef& x) {
    const int d = pb.dim();
    state_ = State::Off;
    if (!pb.field(t, x, f0_)) return;
    for (int i = 0; i < d; ++i) {
      x_ = x;
      const double s = probe_size(x(d + i));
      x_(d + i) += s;
      if (!pb.field(t, x_, f1_)) return;
      A_.col(i) = (f1_.head(d) - f0_.head(d)) / s;
    }
    diag_ = A_.diagonal();
    diagonal_ = true;  // exact zeros off the diagonal (no temporary matrix)
    for (int j = 0; j < d && diagonal_; ++j)
      for (int i = 0; i < d; ++i)
        if (i != j && A_(i, j) != 0.0) diagonal_ = false;
    v_.noalias() = A_ * x.tail(d);  // no temporary: steps must not allocate
    b_ = f0_.head(d) - v_;
    a_norm_ = A_.cwiseAbs().rowwise().sum().maxCoeff();
    b_norm_ = b_.lpNorm<Eigen::Infinity>();
    if (A_.allFinite() && b_.allFinite()) state_ = State::Active;
  }

  /// A = diag(a) from the probe s (every p_i moved by s_i): a_i = df_i / s_i;
  /// a second probe with signs (-1)^i must agree with A s' to the same
  /// tolerance as confirm(), else A is not diagonal and the model is dropped.
  void learn_diagonal(HamiltonianProblem& pb, double t, const ConstVecRef& x) {
    const int d = pb.dim();
    state_ = State::Off;
    if (!pb.field(t, x, f0_)) return;
    x_ = x;
    for (int i = 0; i < d; ++i) x_(d + i) += probe_size(x(d + i));
    if (!pb.field(t, x_, f1_)) return;
    for (int i = 0; i < d; ++i) diag_(i) = (f1_(i) - f0_(i)) / probe_size(x(d + i));
    b_ = f0_.head(d) - diag_.cwiseProduct(x.tail(d));
    snap_uniform(x.tail(d));
    a_norm_ = diag_.lpNorm<Eigen::Infinity>();
    b_norm_ = b_.lpNorm<Eigen::Infinity>();
    if (!diag_.allFinite() || !b_.allFinite()) return;
    x_ = x;
    for (int i = 0; i < d; ++i) x_(d + i) += (i % 2 ? -1.0 : 1.0) * probe_size(x(d + i));
    if (!pb.field(t, x_, f1_)) return;
    diagonal_ = true;
    state_ = State::Active;
    predict(x_.tail(d));
    if (!confirm(x_.tail(d), f1_.head(d))) state_ = State::Off;
  }

  /// Equal masses, T = a |p|^2 / 2: the differences above give a_i within a
  /// few ulps of a common a (p_i + s - p_i is rounded) and b_i at round-off.
  /// Such a model is made exactly uniform (a_i = the most frequent value,
  /// b = 0), so that the sweeps may read the scalar a instead of two
  /// d-vectors; the probe that follows and every step's check verify it as
  /// they verify any model.
  void snap_uniform(const ConstVecRef& p) {
    uniform_ = false;
    const Eigen::Index d = diag_.size();
    if (d == 0) return;
    constexpr int kValues = 4;  // distinct candidates within the tolerance
    double value[kValues];
    long count[kValues] = {0, 0, 0, 0};
    int distinct = 0;
    const double eps = std::numeric_limits<double>::epsilon();
    const double a0 = diag_(0);
    for (Eigen::Index i = 0; i < d; ++i) {
      const double a = diag_(i);
      if (!(std::abs(a - a0) <= 8.0 * eps * std::abs(a0)) ||
          !(std::abs(b_(i)) <= 8.0 * eps * (std::abs(a * p(i)) + std::abs(f0_(i)))))
        return;
      int k = 0;
      while (k < distinct && value[k] != a) ++k;
      if (k == distinct) {
        if (distinct == kValues) return;
        value[distinct++] = a;
      }
      ++count[k];
    }
    int best = 0;
    for (int k = 1; k < distinct; ++k)
      if (count[k] > count[best]) best = k;
    uniform_ = true;
    uniform_value_ = value[best];
    diag_.setConstant(uniform_value_);
    b_.setZero();
    a_norm_ = std::abs(uniform_value_);
    b_norm_ = 0.0;
  }

  State state_ = State::Waiting;
  int steps_ = 0;
  long calls_at_start_ = 0;     ///< f's call count at the first prepare()
  bool uniform_ = false;        ///< diag_ = uniform_value_ everywhere, b_ = 0 (snap_uniform)
  double uniform_value_ = 0.0;
  Mat A_;      // dense A (d <= kDenseMax only)
  Vec diag_;   // its diagonal
  bool diagonal_ = false;
  Vec b_, v_, x_, f0_, f1_;
  double a_norm_ = 0.0;
  double b_norm_ = 0.0;  ///< |b|_inf, computed once when learned
  bool diagonal_only_ = false;
};

}  // namespace odepkg

#endif
