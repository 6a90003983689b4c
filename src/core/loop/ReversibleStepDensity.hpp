// ReversibleStepDensity.hpp — explicit, time-reversible step size control for
// symmetric one-step methods (Hairer and Söderlind, "Explicit, time reversible,
// adaptive step size control", SIAM J. Sci. Comput. 26 (2005); Hairer,
// Lubich, Wanner, "Geometric Numerical Integration", 2nd ed., Sect. VIII.3).
//
// Steps h = eps / rho follow a step density rho carried along with the
// state.  For a density rho(y) the exact solution satisfies, in the time
// variable tau with dt/dtau = 1/rho,
//     d rho / d tau = G(y),   G(y) = (d rho/dt) / rho = d log rho(y(t)) / dt,
// which needs only G, not rho itself (any multiple c rho solves the same
// equation).  The start rho_0 is the density of the state, rho(y_0), when
// the rate knows it (last_density(); ReversibleIntegrator.hpp says how eps
// is chosen), so that a run started anywhere on a trajectory, or reversed,
// takes the steps of one run through that point (to the O(eps^2) by which
// the integrated rho_n differs from rho(y_n)); a rate that knows only G
// starts from rho_0 = 1 and the scale lives in eps.  One step of the
// symmetric method Phi from (y_n, rho_n) is
//     rho_{n+1/2} = rho_n + (eps/2) G(y_n)
//     y_{n+1}     = Phi_{h_n}(y_n),   h_n = eps / rho_{n+1/2}
//     rho_{n+1}   = rho_{n+1/2} + (eps/2) G(y_{n+1}),
// the leapfrog form rho_{n+1/2} = rho_{n-1/2} + eps G(y_n) of the paper
// written as a one-step map.  Its inverse is the same map with -eps
// (Phi_{-h} = Phi_h^{-1} for a symmetric Phi): the map is symmetric, hence
// time reversible, and of order 2 in eps; G at y_{n+1} serves the next step.
// Nothing here knows which symmetric method Phi is: any Stepper whose
// symmetric() is true can be wrapped (Störmer–Verlet, velocity Verlet,
// RATTLE, geometric RATTLE over midpoint or Störmer–Verlet, and symmetric
// compositions of them, whose error at a fixed time is then O(eps^p): the
// density fixes only where the steps fall).
//
// |h_n| is capped at MaxStep: h = min(eps/rho_{n+1/2}, MaxStep) is still a
// function of rho_{n+1/2} alone, which keeps the map symmetric.  Where eps
// and rho_0 come from: ReversibleIntegrator.hpp.
#ifndef ODEPKG_REVERSIBLE_STEP_DENSITY_HPP
#define ODEPKG_REVERSIBLE_STEP_DENSITY_HPP

#include "HamiltonianProblem.hpp"
#include "Types.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace odepkg {

/// The control function G(t, y) = (d rho / dt) / rho of a step density
/// rho(y), evaluated along the solution.  For time reversibility, rho must be
/// even and G odd under the reversal p -> -p.  Must not allocate.
class StepDensityRate {
 public:
  virtual ~StepDensityRate() = default;
  /// False: a callback failed or returned a non-finite value.
  virtual bool operator()(double t, const ConstVecRef& x, double& G) = 0;
  /// rho(y) at the point of the last call, if this rate knows the density
  /// itself; NaN: it knows only G (the density's scale is unknown).
  virtual double last_density() const { return std::numeric_limits<double>::quiet_NaN(); }
  /// True: last_density() is a rate (1/time: steps h = eps/rho with a
  /// dimensionless eps, the fraction of the local time scale per step).
  virtual bool density_is_rate() const { return false; }
};

/// The problem-independent default: the step density is the speed of the
/// solution in phase space, rho(y) = |f(y)|_2 (steps inversely proportional
/// to it; Hairer and Söderlind's arc-length-like choice), so
///     G(y) = f(y)' (f'(y) f(y)) / |f(y)|^2,
/// with the directional derivative f'(y) f(y) by a central difference:
/// three calls of f.  The central difference keeps G exactly odd under the
/// reversal (q, p) -> (q, -p) of a reversible f, which a one-sided one
/// would not.  For f vanishing at y (an equilibrium) G = 0.
/// Kepler's problem: near the pericentre rho ~ |F(q)| = r^{-2} (steps ~ r^2),
/// far from it the momenta dominate; a harmonic oscillator gets constant steps.
class FieldSpeedDensity final : public StepDensityRate {
 public:
  explicit FieldSpeedDensity(HamiltonianProblem& problem)
      : problem_(problem),
        f_(problem.state_size()),
        fp_(problem.state_size()),
        fm_(problem.state_size()),
        y_(problem.state_size()) {}

  bool operator()(double t, const ConstVecRef& x, double& G) override {
    if (!problem_.field(t, x, f_)) return false;
    const double nf2 = f_.squaredNorm();
    speed_ = std::sqrt(nf2);
    if (!(nf2 > 0.0)) {
      G = 0.0;
      return std::isfinite(nf2);
    }
    // displacement delta |f| = eps^(1/3) max(1, |y|): the balance of the
    // central difference's truncation and round-off errors
    const double delta = kCbrtEps * std::max(1.0, x.norm()) / std::sqrt(nf2);
    y_ = x + delta * f_;
    if (!problem_.field(t, y_, fp_)) return false;
    y_ = x - delta * f_;
    if (!problem_.field(t, y_, fm_)) return false;
    G = f_.dot(fp_ - fm_) / (2.0 * delta * nf2);
    return std::isfinite(G);
  }

  /// |f(y)|: in the units of y per unit time, not a rate.
  double last_density() const override { return speed_; }

  static constexpr double kCbrtEps = 6.0554544523933395e-06;  ///< eps^(1/3), eps = 2^-52

 private:
  HamiltonianProblem& problem_;
  Vec f_, fp_, fm_, y_;
  double speed_ = std::numeric_limits<double>::quiet_NaN();
};

/// How a run's density starts; 0: chosen as ReversibleIntegrator.hpp says.
struct DensityStart {
  double eps = 0.0;        ///< |eps| (StepDensityEps)
  double first_eps = 0.0;  ///< |eps| of the first step only (StepDensityEps = [first, eps])
  double rho0 = 0.0;       ///< rho_0 (InitialStepDensity)
};

/// The step density rho and the steps it gives: the (y, rho) half of the
/// Hairer–Söderlind map (the stepper does the y half).
class ReversibleStepDensity {
 public:
  /// `eps` carries the direction of time (eps < 0: backwards);
  /// `max_step` caps |h|.
  ReversibleStepDensity(StepDensityRate& rate, double eps,
                        double max_step = std::numeric_limits<double>::infinity())
      : rate_(rate), eps_(eps), step_eps_(eps), max_step_(max_step) {}

  /// rho_0 (default 1) at (t0, y0), and G(y0).  False: G failed.
  bool start(double t0, const ConstVecRef& x0, double rho0 = 1.0) {
    rho_ = rho0;
    step_eps_ = eps_;
    return rate_(t0, x0, G_);
  }

  /// After start(): rho_0, eps, and the eps of the first step only
  /// (`first_eps`, signed as eps; 0: eps), e.g. the last step's of a run
  /// being reversed (shortened_eps), so that the reversal retraces it.
  void restart(double rho0, double eps, double first_eps = 0.0) {
    rho_ = rho0;
    eps_ = eps;
    step_eps_ = first_eps != 0.0 ? first_eps : eps;
  }

  /// rho_{n+1/2} = rho_n + (e/2) G(y_n) and the step h_n = e / rho_{n+1/2}
  /// it gives (signed as eps), e = eps (or the first step's).  False:
  /// rho_{n+1/2} <= 0 (or not finite): the density varies too fast for eps
  /// (the step would be infinite or of the wrong sign).
  bool half_step(double& h) {
    rho_half_ = rho_ + 0.5 * step_eps_ * G_;
    if (!(rho_half_ > 0.0) || !std::isfinite(rho_half_)) return false;
    h = std::copysign(std::min(std::abs(step_eps_) / rho_half_, max_step_), step_eps_);
    return true;
  }

  /// rho_{n+1} = rho_{n+1/2} + (e/2) G(y_{n+1}), after the stepper took
  /// y_n to y_{n+1} with the step of half_step().  False: G failed.
  bool finish(double t1, const ConstVecRef& x1) {
    if (!rate_(t1, x1, G_)) return false;
    rho_ = rho_half_ + 0.5 * step_eps_ * G_;
    step_eps_ = eps_;
    return true;
  }

  /// The e of the map step from (y_n, rho_n) whose step is `h` (a
  /// shortened last step, h = e / (rho_n + e G_n / 2)):
  /// e = h rho_n / (1 - h G_n / 2).  With it, (y_n, rho_n) -> (Phi_h(y_n),
  /// rho_n + e (G_n + G(Phi_h(y_n))) / 2) is one step of the symmetric map,
  /// which a reversed run starting with that e undoes.
  double shortened_eps(double h) const { return h * rho_ / (1.0 - 0.5 * h * G_); }

  double rho() const { return rho_; }
  double rho_half() const { return rho_half_; }
  double G() const { return G_; }
  double eps() const { return eps_; }
  /// The eps of the next step (eps but for the first of a restart).
  double step_eps() const { return step_eps_; }

  /// Restart from a saved (rho, G) (the inverse-map tests).
  void set(double rho, double G) {
    rho_ = rho;
    G_ = G;
  }

 private:
  StepDensityRate& rate_;
  double eps_;
  double step_eps_;  ///< the eps of the next step (eps_ but for a first step)
  double max_step_;
  double rho_ = 1.0, rho_half_ = 1.0, G_ = 0.0;
};

}  // namespace odepkg

#endif
