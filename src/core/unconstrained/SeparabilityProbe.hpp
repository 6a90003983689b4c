// SeparabilityProbe.hpp — verifies the claim behind "Explicit": a separable
// H = T(p) + V(q), i.e. with f(t, [q; p]) = [H_p; -H_q], the q-part H_p must
// not depend on q and the p-part -H_q must not depend on p (H_qp = 0).  The
// explicit Störmer–Verlet and symplectic Euler steps (Hairer, Lubich, Wanner,
// "Geometric Numerical Integration", Thm. VI.3.3 and (VI.3.4)) use H_p and
// H_q at points where the other variable has a different value; for a
// non-separable H they are not the methods at all (first order, energy
// drift) and nothing else would notice.
//
// The probe (two calls of f at a point where f is known): move p alone by
// delta, a random direction of size sqrt(eps) max(1, |p_i|), and compare the
// p-part of f; move q alone and compare the q-part.  A separable f computes
// -H_q without reading p (and H_p without q): the parts agree bitwise, or to
// the round-off of an expression in which p cancels.  A coupling shows as
// |H_qp delta| ~ sqrt(eps) |H_qp| |x|, found when it exceeds the round-off
// bound kRoundoff eps (|a| + |b|), i.e. when |H_qp| |x| / |H_q| is above
// about 1e-6: weaker couplings perturb the explicit scheme by less than that.
//
// The free check: two values of the p-part of f at the same q (Störmer–
// Verlet's force at q_n and its second evaluation at [q_n; p_{n+1/2}];
// symplectic Euler's at [q_n; p_{n+1}]) must agree the same way.  A
// mismatch is a coupling or a time-dependent force; the probe, at one t,
// tells which.
#ifndef ODEPKG_SEPARABILITY_PROBE_HPP
#define ODEPKG_SEPARABILITY_PROBE_HPP

#include "HamiltonianProblem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace odepkg {

class SeparabilityProbe {
 public:
  /// Multiple of eps (|a| + |b|) that two evaluations of a part of f may
  /// differ by without a dependence (round-off of a cancelling expression).
  static constexpr double kRoundoff = 64.0;

  /// What the probe found: on a coupling, which part of f moved, by how much
  /// against its round-off bound, for a move of which size.
  struct Finding {
    bool separable = true;
    bool force_moved = false;  ///< the p-part (-H_q) moved with p; else the q-part (H_p) with q
    double change = 0.0, bound = 0.0, step = 0.0, t = 0.0;
  };

  explicit SeparabilityProbe(int d) : d_(d), x_(2 * d), f_(2 * d) {}

  /// Two calls of f at (t, x), fx = f(t, x).  Non-finite values at the
  /// moved points prove nothing: reported separable.
  Finding probe(HamiltonianProblem& pb, double t, const ConstVecRef& x, const ConstVecRef& fx) {
    Finding r;
    r.t = t;
    const int d = d_;
    // p moved, q fixed: the p-part -H_q must stay
    double size = move(x, d, r.step);
    if (size > 0.0 && pb.field(t, x_, f_) && !agree(fx.tail(d), f_.tail(d), r.change, r.bound)) {
      r.separable = false;
      r.force_moved = true;
      return r;
    }
    // q moved, p fixed: the q-part H_p must stay
    size = move(x, 0, r.step);
    if (size > 0.0 && pb.field(t, x_, f_) && !agree(fx.head(d), f_.head(d), r.change, r.bound)) {
      r.separable = false;
      return r;
    }
    return r;
  }

  /// |a - b| within the round-off bound kRoundoff eps (|a| + |b|)?  The
  /// difference and the bound are returned for the message.
  static bool agree(const ConstVecRef& a, const ConstVecRef& b, double& change, double& bound) {
    change = (a - b).lpNorm<Eigen::Infinity>();
    bound = kRoundoff * std::numeric_limits<double>::epsilon() *
                (a.lpNorm<Eigen::Infinity>() + b.lpNorm<Eigen::Infinity>()) +
            std::numeric_limits<double>::min();
    return change <= bound;
  }
  static bool agree(const ConstVecRef& a, const ConstVecRef& b) {
    double change, bound;
    return agree(a, b, change, bound);
  }

  /// The claim failed: an odepkg:notSeparable error naming the option.
  [[noreturn]] static void refuse(const Finding& r) {
    char buf[600];
    std::snprintf(buf, sizeof buf,
                  "option \"Explicit\" \"yes\" claims a separable H = T(p) + V(q), but FCN is not "
                  "separable at t = %.15g: its %s changed by %g (round-off bound %g) when %s moved by "
                  "%g with %s fixed; the explicit scheme would be a different, inconsistent method. "
                  "Remove \"Explicit\" (the implicit scheme handles any H)",
                  r.t, r.force_moved ? "p-part (-dH/dq)" : "q-part (dH/dp)", r.change, r.bound,
                  r.force_moved ? "p" : "q", r.step, r.force_moved ? "q" : "p");
    throw InputError("notSeparable", buf);
  }

 private:
  /// x_ = x with the d entries from `first` moved in a pseudo-random
  /// direction (signs and sizes in [0.5, 1.5] sqrt(eps) max(1, |x_i|)),
  /// deterministic so that runs repeat; `step` = the largest move.
  double move(const ConstVecRef& x, int first, double& step) {
    x_ = x;
    step = 0.0;
    const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
    for (int i = 0; i < d_; ++i) {
      state_ ^= state_ << 13;  // xorshift64
      state_ ^= state_ >> 7;
      state_ ^= state_ << 17;
      const double u = static_cast<double>(state_ >> 11) * 0x1.0p-53;  // [0, 1)
      const double s = (u < 0.5 ? -1.0 : 1.0) * (0.5 + 2.0 * std::abs(u - 0.5));
      const double delta = s * root_eps * std::max(1.0, std::abs(x(first + i)));
      x_(first + i) += delta;
      step = std::max(step, std::abs(x_(first + i) - x(first + i)));
    }
    return step;
  }

  int d_;
  std::uint64_t state_ = 0x9E3779B97F4A7C15ULL;
  Vec x_, f_;
};

}  // namespace odepkg

#endif
