// TimeScaleDensity.hpp — the default step density of the reversible step
// control (ReversibleStepDensity.hpp, Hairer and Söderlind 2005) for a state
// y = [q; p]: the inverse of a local time scale,
//     rho(y) = sqrt( (|q'| / |p|) (|p'| / |q|) ),   (q', p') = f(y),
// the geometric mean of the two rates |q'|/|q| and |p'|/|p| (a time scale
// T with T^2 = (|q|/|q'|) (|p|/|p'|)).  Each ratio divides a group of the
// state by its own rate, so rho is a rate (1/time) whatever the units of q,
// p and t: rescaling them rescales rho by the time unit only, and the steps
// h = eps / rho are the same steps in any units with a dimensionless eps
// (the fraction of the local time scale one step takes).  Kepler with
// H = |p|^2/2 - mu/|q|: rho = sqrt(mu) |q|^(-3/2), the density Hairer and
// Söderlind use, at every point of every orbit; harmonic oscillator
// H = |p|^2/2 + w^2 |q|^2/2: rho = w (constant steps); a pendulum of length
// L in Cartesian coordinates: sqrt(g/L).  The ratio |p'|/|q| assumes the
// origin of q is the centre of the force (it is a stiffness about 0).
// Under the reversal p -> -p of a reversible f, |q'|, |p'|, |q|, |p| are
// even, so rho is even, as time reversibility needs.
//
// Control function G = d log rho / dt along the solution,
//     G = (q'.q''/|q'|^2 + p'.p''/|p'|^2 - q.q'/|q|^2 - p.p'/|p|^2) / 2,
// with (q'', p'') = f'(y) f(y) by a central difference along f with the
// displacement delta = eps^(1/3) / rho (a fraction of the local time scale:
// truncation ~ 1e-10, round-off ~ 1e-11 relative, in any units): three calls
// of f, and G exactly odd under the reversal (y +- delta f swap).  A term
// whose denominator is 0 (q = 0, p = 0, q' = 0, p' = 0: a start from rest)
// is dropped, and the density there is the limit along the flow:
// |q'|/|p| -> |q''|/|p'| where p = 0, |p'|/|q| -> |p''|/|q'| where q = 0.
#ifndef ODEPKG_TIME_SCALE_DENSITY_HPP
#define ODEPKG_TIME_SCALE_DENSITY_HPP

#include "loop/ReversibleStepDensity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

class TimeScaleDensity final : public StepDensityRate {
 public:
  explicit TimeScaleDensity(HamiltonianProblem& problem)
      : problem_(problem),
        d_(problem.dim()),
        f_(problem.state_size()),
        fp_(problem.state_size()),
        fm_(problem.state_size()),
        y_(problem.state_size()),
        dd_(problem.state_size()) {
    if (problem.state_size() != 2 * d_)
      throw InputError("invalidInput", "the time-scale density needs a state [q; p] of 2d numbers");
  }

  bool operator()(double t, const ConstVecRef& x, double& G) override {
    rho_ = std::numeric_limits<double>::quiet_NaN();
    if (!problem_.field(t, x, f_)) return false;
    const double nf = f_.norm();
    if (!(nf > 0.0)) {  // an equilibrium: no time scale
      G = 0.0;
      rho_ = 0.0;
      return std::isfinite(nf);
    }
    const auto q = x.head(d_), p = x.tail(d_);
    const auto qd = f_.head(d_), pd = f_.tail(d_);
    const double nq = q.norm(), np = p.norm(), nqd = qd.norm(), npd = pd.norm();
    const double guess = rate(nqd, np, npd, nq);  // rho without the limits (NaN where 0/0)
    const double delta = (std::isfinite(guess) && guess > 0.0)
                             ? FieldSpeedDensity::kCbrtEps / guess
                             : FieldSpeedDensity::kCbrtEps * std::max(1.0, x.norm()) / nf;
    y_ = x + delta * f_;
    if (!problem_.field(t, y_, fp_)) return false;
    y_ = x - delta * f_;
    if (!problem_.field(t, y_, fm_)) return false;
    dd_ = (fp_ - fm_) / (2.0 * delta);  // (q'', p'')
    const auto qdd = dd_.head(d_), pdd = dd_.tail(d_);
    G = 0.5 * (term(qd, qdd, nqd) + term(pd, pdd, npd) - term(q, qd, nq) - term(p, pd, np));
    // the density itself, with the limits along the flow where p = 0 or q = 0
    const double a = np > 0.0 ? nqd / np : qdd.norm() / npd;
    const double b = nq > 0.0 ? npd / nq : pdd.norm() / nqd;
    rho_ = std::sqrt(a * b);
    return std::isfinite(G);
  }

  double last_density() const override { return rho_; }
  bool density_is_rate() const override { return true; }

 private:
  static double rate(double nqd, double np, double npd, double nq) { return std::sqrt(nqd / np * (npd / nq)); }

  // u.v / |u|^2, 0 where u = 0
  template <class U, class V>
  static double term(const U& u, const V& v, double nu) {
    return nu > 0.0 ? u.dot(v) / (nu * nu) : 0.0;
  }

  HamiltonianProblem& problem_;
  int d_;
  Vec f_, fp_, fm_, y_, dd_;
  double rho_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace odepkg

#endif
