// LieSpeedDensity.hpp — the default step density of the reversible step
// control (ReversibleStepDensity.hpp, Hairer and Söderlind 2005) on a Lie
// group: the speed of the solution measured in the Lie algebra,
//     rho(y)² = |v|² + |a|²,   a = M⁻¹(ad(v)ᵀ M v − f(t, q, v)),
// the trivialised velocity and the acceleration without the constraint
// forces (λ would need Φ's second derivatives).  Its control function
//     G = (d rho/dt) / rho = (v·a + a·ȧ) / rho²
// takes ȧ by a central difference along the group,
//     ȧ ≈ (a(q∘exp(δṽ), v + δa) − a(q∘exp(−δṽ), v − δa)) / 2δ,
// so f is called on the group only (the embedded coordinate field y ± δ y'
// of FieldSpeedDensity leaves it, and its q' is itself a forward difference
// whose round-off, ~1e-8 relative, the second difference would magnify).
// Under the reversal v -> -v (f even in v) both points swap: G is odd to
// the last bit, which time reversibility needs.  Three calls of f.
#ifndef ODEPKG_LIE_LIE_SPEED_DENSITY_HPP
#define ODEPKG_LIE_LIE_SPEED_DENSITY_HPP

#include "loop/ReversibleStepDensity.hpp"
#include "LieGroupProblem.hpp"

#include <algorithm>
#include <cmath>

namespace odepkg::lie {

class LieSpeedDensity final : public StepDensityRate {
 public:
  explicit LieSpeedDensity(LieGroupProblem& lp)
      : lp_(lp),
        nq_(lp.nq()),
        n_(lp.n()),
        y_(nq_ + n_),
        a_(n_),
        ap_(n_),
        am_(n_),
        w_(n_),
        f_(n_),
        r_(n_) {}

  bool operator()(double t, const ConstVecRef& x, double& G) override {
    const auto q = x.head(nq_);
    const auto v = x.tail(n_);
    if (!acceleration(t, x, a_)) return false;
    const double rho2 = v.squaredNorm() + a_.squaredNorm();
    rho_ = std::sqrt(rho2);
    if (!(rho2 > 0.0)) {
      G = 0.0;
      return std::isfinite(rho2);
    }
    // displacement delta |(v, a)| = eps^(1/3) max(1, |y|), as FieldSpeedDensity
    const double delta = FieldSpeedDensity::kCbrtEps * std::max(1.0, x.norm()) / std::sqrt(rho2);
    w_ = delta * v;
    lp_.group().compose_exp(q, w_, y_.head(nq_));
    y_.tail(n_) = v + delta * a_;
    if (!acceleration(t, y_, ap_)) return false;
    w_ = -delta * v;
    lp_.group().compose_exp(q, w_, y_.head(nq_));
    y_.tail(n_) = v - delta * a_;
    if (!acceleration(t, y_, am_)) return false;
    G = (v.dot(a_) + a_.dot(ap_ - am_) / (2.0 * delta)) / rho2;
    return std::isfinite(G);
  }

  /// |(v, a)|: mixed units (v and its rate), not a rate: eps then comes
  /// from the tolerance step at t0 (ReversibleIntegrator.hpp).
  double last_density() const override { return rho_; }

 private:
  // a = M⁻¹(ad(v)ᵀ M v − f(t, y)).
  bool acceleration(double t, const ConstVecRef& y, VecRef a) {
    if (!lp_.force(t, y, f_)) return false;
    lp_.inertial(y.tail(n_), r_);
    r_ -= f_;
    lp_.block_mass().solve(r_, a);
    return a.allFinite();
  }

  LieGroupProblem& lp_;
  int nq_, n_;
  Vec y_, a_, ap_, am_, w_, f_, r_;
  double rho_ = 0.0;
};

}  // namespace odepkg::lie

#endif
