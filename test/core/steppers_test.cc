// steppers_test.cc — symplectic Euler (SymplecticEuler.hpp), Störmer–Verlet
// (StormerVerlet.hpp), both explicit and implicit, and velocity Verlet
// (VelocityVerlet.hpp).  References: Hairer, Lubich & Wanner, Geometric
// Numerical Integration (HLW), Thm VI.3.3 (symplectic Euler, order 1,
// symplectic), (VI.3.4) (Störmer–Verlet, order 2, symmetric, symplectic) and
// Thm IX.8.1 (energy of a symplectic method: error O(h^p), no drift).
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "TestProblems.hpp"
#include "unconstrained/VelocityVerlet.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

using namespace odepkg;

namespace {

// ---- methods -------------------------------------------------------------------

enum class Method { SEexp, SEimp, SVexp, SVimp, VV };
struct MethodInfo {
  Method m;
  const char* name;
  int order;     // HLW: 1 for symplectic Euler, 2 for Störmer–Verlet
  bool general;  // valid for non-separable H
};
const MethodInfo kMethods[] = {{Method::SEexp, "SE explicit", 1, false},
                               {Method::SEimp, "SE implicit", 1, true},
                               {Method::SVexp, "SV explicit", 2, false},
                               {Method::SVimp, "SV implicit", 2, true},
                               {Method::VV, "velocity Verlet", 2, false}};

/// Full Newton to 1e-14: the implicit step map is then its exact solution up
/// to rounding (needed for finite differences of the map and reversibility).
NewtonOptions tight() {
  NewtonOptions o;
  o.tol = 1e-14;
  o.reuse_factorization = false;
  return o;
}

std::unique_ptr<Stepper> make(Method m, HamiltonianProblem& P, NewtonOptions o = tight()) {
  switch (m) {
    case Method::SEexp: return std::make_unique<SymplecticEuler>(P, true, o);
    case Method::SEimp: return std::make_unique<SymplecticEuler>(P, false, o);
    case Method::SVexp: return std::make_unique<StormerVerlet>(P, true, o);
    case Method::SVimp: return std::make_unique<StormerVerlet>(P, false, o);
    case Method::VV: return std::make_unique<VelocityVerlet>(P);
  }
  return nullptr;
}

/// N steps of size h from (0, x0); `each(x)` after every step.
template <class Each>
Vec run(Stepper& s, const Vec& x0, double h, int N, Each&& each) {
  Point a(x0.size()), b(x0.size());
  a.set(0.0, x0);
  for (int i = 0; i < N; ++i) {
    const StepStatus st = s.step(a, h, b);
    EXPECT_EQ(st, StepStatus::Success) << s.name() << " step " << i;
    if (st != StepStatus::Success) break;
    std::swap(a, b);
    each(a.x);
  }
  return a.x;
}
Vec run(Stepper& s, const Vec& x0, double h, int N) {
  return run(s, x0, h, N, [](const Vec&) {});
}

/// One step of size h from (0, x) with a fresh start (no cached force, no
/// Newton history): a deterministic function of x.
Vec step_map(Stepper& s, const Vec& x, double h) {
  Point a(x.size()), b(x.size());
  a.set(0.0, x);
  s.reset();
  EXPECT_EQ(s.step(a, h, b), StepStatus::Success);
  return b.x;
}

// ---- problems ------------------------------------------------------------------

/// Harmonic oscillator H = (p^2 + q^2)/2 (also x'' = -x for velocity Verlet):
/// q(t) = q0 cos t + p0 sin t, p(t) = p0 cos t - q0 sin t.
void oscillator(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -x(0);
}
Vec oscillator_exact(const Vec& x0, double t) {
  Vec x(2);
  x << x0(0) * std::cos(t) + x0(1) * std::sin(t), x0(1) * std::cos(t) - x0(0) * std::sin(t);
  return x;
}

/// Non-separable H = (1 + q^2)(1 + p^2)/2, d = 1.
void ns1(double, const ConstVecRef& x, VecRef dx) {
  const double q = x(0), p = x(1);
  dx(0) = p * (1 + q * q);
  dx(1) = -q * (1 + p * p);
}
double ns1_energy(const Vec& x) { return 0.5 * (1 + x(0) * x(0)) * (1 + x(1) * x(1)); }

using test::nonsep;
using test::nonsep_hess;
using test::nonsep_x0;

/// Classical RK4 with N steps: an independent reference solution.
template <class F>
Vec rk4(F&& f, Vec x, double T, int N) {
  const double h = T / N;
  Vec k1(x.size()), k2(x.size()), k3(x.size()), k4(x.size());
  for (int i = 0; i < N; ++i) {
    const double t = i * h;
    f(t, x, k1);
    f(t + h / 2, Vec(x + h / 2 * k1), k2);
    f(t + h / 2, Vec(x + h / 2 * k2), k3);
    f(t + h, Vec(x + h * k3), k4);
    x += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  return x;
}

Mat omega(int d) {
  Mat Om = Mat::Zero(2 * d, 2 * d);
  Om.topRightCorner(d, d).setIdentity();
  Om.bottomLeftCorner(d, d) = -Mat::Identity(d, d);
  return Om;
}

/// max |J^T Omega J - Omega| for J = Jacobian of `map` at x by the five-point
/// central difference (error O(delta^4) + rounding O(eps/delta), ~1e-13 here).
template <class Map>
double symplecticity_defect(Map&& map, const Vec& x, double delta = 1e-3) {
  const int n = x.size();
  Mat J(n, n);
  for (int j = 0; j < n; ++j) {
    auto at = [&](double s) {
      Vec y = x;
      y(j) += s * delta;
      return map(y);
    };
    J.col(j) = (8 * (at(1) - at(-1)) - (at(2) - at(-2))) / (12 * delta);
  }
  const Mat Om = omega(n / 2);
  EXPECT_GT((J - Mat::Identity(n, n)).norm(), 0.05);  // a non-trivial map
  return (J.transpose() * Om * J - Om).cwiseAbs().maxCoeff();
}

}  // namespace

// ---- order ---------------------------------------------------------------------

// Global error at the end of [0, T] with N, 2N, 4N steps: the fitted slope of
// log(err) vs log(h) is the classical order (1 for SE, 2 for SV/VV).  Kepler
// (e = 0.5, one period 2 pi, exact solution by Kepler's equation) and the
// harmonic oscillator (closed form, T = 10).
//
// Both end times avoid a superconvergence of SE: for separable H,
// SE_h = K_{-h/2} o SV_h o K_{h/2} (K = half kick, see VariantsAgree below), so
// SE's O(h) error is (D phi_T - I) applied to K's displacement
// (h/2)(0, -V'(q0)).  Over a full period of the oscillator D phi_T = I; for
// Kepler D phi_T - I is a shear driven by the energy change grad H . (0, -V'),
// which vanishes at the perihelion (p . q = 0).  Hence the Kepler period
// starts at t0 = 1 and the oscillator ends at T = 10, not 2 pi.
TEST(Steppers, GlobalOrderKeplerAndOscillator) {
  test::Kepler k;
  k.e = 0.5;
  const double t0 = 1.0, T = 2 * M_PI, To = 10.0;
  Vec xo(2);
  xo << 1.0, 0.5;
  for (const MethodInfo& mi : kMethods) {
    const int N0 = mi.order == 1 ? 2000 : 200;
    std::vector<double> hs, ek, ho, eo;
    for (int N : {N0, 2 * N0, 4 * N0}) {
      HamiltonianProblem pk = k.make(), po(1, &oscillator);
      auto sk = make(mi.m, pk), so = make(mi.m, po);
      hs.push_back(T / N);
      ek.push_back((run(*sk, k.exact(t0), T / N, N) - k.exact(t0 + T)).norm());
      ho.push_back(To / N);
      eo.push_back((run(*so, xo, To / N, N) - oscillator_exact(xo, To)).norm());
    }
    const double sk = test::fitted_order(hs, ek), so = test::fitted_order(ho, eo);
    std::printf("[order] %-16s Kepler slope %.3f (err %.2e..%.2e), oscillator slope %.3f (%.2e..%.2e)\n",
                mi.name, sk, ek.front(), ek.back(), so, eo.front(), eo.back());
    EXPECT_NEAR(sk, mi.order, 0.15) << mi.name;
    EXPECT_NEAR(so, mi.order, 0.15) << mi.name;
  }
}

// The implicit variants keep their order on a non-separable H (reference:
// RK4 with 2e4 steps, error < 1e-12), with the default simplified Newton and
// finite-difference Jacobians.
TEST(Steppers, ImplicitOrderNonseparable) {
  Vec x0(2);
  x0 << 0.5, 0.3;
  const double T = 2.0;
  const Vec ref = rk4(&ns1, x0, T, 20000);
  for (const MethodInfo& mi : kMethods) {
    if (!mi.general) continue;
    const int N0 = mi.order == 1 ? 400 : 50;
    std::vector<double> hs, es;
    for (int N : {N0, 2 * N0, 4 * N0}) {
      HamiltonianProblem P(1, &ns1);
      auto s = make(mi.m, P, NewtonOptions());  // default simplified Newton
      hs.push_back(T / N);
      es.push_back((run(*s, x0, T / N, N) - ref).norm());
    }
    const double slope = test::fitted_order(hs, es);
    std::printf("[order] %-16s non-separable slope %.3f (err %.2e..%.2e)\n", mi.name, slope,
                es.front(), es.back());
    EXPECT_NEAR(slope, mi.order, 0.15) << mi.name;
  }
}

// ---- energy --------------------------------------------------------------------

namespace {
struct EnergyRecord {
  double first = 0.0, last = 0.0;  // max |H - H0| over the first / last tenth
};
template <class Energy>
EnergyRecord energy_record(Stepper& s, const Vec& x0, double h, int N, Energy&& H) {
  EnergyRecord r;
  const double H0 = H(x0);
  int i = 0;
  run(s, x0, h, N, [&](const Vec& x) {
    const double e = std::abs(H(x) - H0);
    if (i < N / 10) r.first = std::max(r.first, e);
    if (i >= N - N / 10) r.last = std::max(r.last, e);
    ++i;
  });
  return r;
}

/// Explicit midpoint rule (RK2), not symplectic: a control for the drift test.
class Midpoint final : public Stepper {
 public:
  explicit Midpoint(HamiltonianProblem& P) : Stepper(P), k_(P.state_size()) {}
  const char* name() const override { return "midpoint"; }
  int order() const override { return 2; }
  StepStatus step(Point& from, double h, Point& to) override {
    problem_.field(from.t, from.x, k_);
    to.x = from.x + 0.5 * h * k_;
    problem_.field(from.t + 0.5 * h, to.x, k_);
    to.x = from.x + h * k_;
    to.t = from.t + h;
    to.has_force = false;
    return StepStatus::Success;
  }

 private:
  Vec k_;
};
}  // namespace

// Kepler (e = 0.5), 1e5 steps (about 300 periods): the energy error of a
// symplectic method stays bounded, max |H - H0| over the last tenth is not
// larger (within 10%) than over the first (HLW IX.8), and it is O(h^p): halving h divides
// it by ~2^p.  Control: the non-symplectic midpoint rule drifts under the
// same measure.
TEST(Steppers, KeplerEnergyBoundedWithoutDrift) {
  test::Kepler k;
  k.e = 0.5;
  const int N = 100000;
  const double h = 0.02;
  for (const MethodInfo& mi : kMethods) {
    if (mi.general) continue;  // the explicit ones; implicit below
    HamiltonianProblem P1 = k.make(), P2 = k.make();
    auto s1 = make(mi.m, P1), s2 = make(mi.m, P2);
    const EnergyRecord r1 = energy_record(*s1, k.initial(), h, N, &test::Kepler::energy);
    const EnergyRecord r2 = energy_record(*s2, k.initial(), h / 2, N, &test::Kepler::energy);
    std::printf("[energy] %-16s h=%g: max|dH| first 10%% %.3e last 10%% %.3e; h/2: %.3e %.3e "
                "(ratio %.2f)\n",
                mi.name, h, r1.first, r1.last, r2.first, r2.last, r1.last / r2.last);
    EXPECT_LT(r1.last, 1.1 * r1.first) << mi.name;
    EXPECT_LT(r2.last, 1.1 * r2.first) << mi.name;
    const double ratio = r1.last / r2.last, expect = std::ldexp(1.0, mi.order);
    EXPECT_GT(ratio, 0.75 * expect) << mi.name;
    EXPECT_LT(ratio, 1.25 * expect) << mi.name;
  }
  HamiltonianProblem P = k.make();
  Midpoint mp(P);
  const EnergyRecord r = energy_record(mp, k.initial(), h, N, &test::Kepler::energy);
  std::printf("[energy] midpoint (control): first %.3e last %.3e\n", r.first, r.last);
  EXPECT_GT(r.last, 5 * r.first);  // the measure does detect a drift
}

// The implicit variants on the non-separable H = (1+q^2)(1+p^2)/2: energy
// bounded without drift over 2e4 steps (t = 1000, h = 0.05), O(h^p) in h.
TEST(Steppers, ImplicitNonseparableEnergyWithoutDrift) {
  Vec x0(2);
  x0 << 0.5, 0.3;
  const int N = 20000;
  const double h = 0.05;
  for (const MethodInfo& mi : kMethods) {
    if (!mi.general) continue;
    HamiltonianProblem P1(1, &ns1), P2(1, &ns1);
    auto s1 = make(mi.m, P1, NewtonOptions()), s2 = make(mi.m, P2, NewtonOptions());
    const EnergyRecord r1 = energy_record(*s1, x0, h, N, &ns1_energy);
    const EnergyRecord r2 = energy_record(*s2, x0, h / 2, N, &ns1_energy);
    std::printf("[energy] %-16s non-separable h=%g: first %.3e last %.3e; h/2: %.3e %.3e; "
                "%.2f Newton it/solve\n",
                mi.name, h, r1.first, r1.last, r2.first, r2.last,
                double(P1.stats().newton_iterations) / P1.stats().newton_solves);
    EXPECT_LT(r1.last, 1.1 * r1.first) << mi.name;
    EXPECT_LT(r2.last, 1.1 * r2.first) << mi.name;
    const double ratio = r1.last / r2.last, expect = std::ldexp(1.0, mi.order);
    EXPECT_GT(ratio, 0.75 * expect) << mi.name;
    EXPECT_LT(ratio, 1.25 * expect) << mi.name;
  }
}

// ---- variants agree --------------------------------------------------------------

// On a separable H the implicit formulas reduce to the explicit ones (the
// Newton systems are solved exactly in one step), and velocity Verlet is
// Störmer–Verlet written in (x, v) (HLW I.1.4): the same numbers up to rounding.
// Also, with the half kick K_c(q, p) = (q, p + c f_p(q)), SV = K_{h/2} D_h K_{h/2}
// and SE = D_h K_h (D = drift), so SE^N = K_{-h/2} o SV^N o K_{h/2}.
TEST(Steppers, VariantsAgreeOnSeparableH) {
  test::Kepler k;
  k.e = 0.5;
  const int N = 300;
  const double h = 0.02;
  auto final_state = [&](Method m) {
    HamiltonianProblem P = k.make();
    auto s = make(m, P);
    return run(*s, k.initial(), h, N);
  };
  const Vec se = final_state(Method::SEexp), sei = final_state(Method::SEimp);
  const Vec sv = final_state(Method::SVexp), svi = final_state(Method::SVimp);
  const Vec vv = final_state(Method::VV);
  std::printf("[agree] SE exp-imp %.2e, SV exp-imp %.2e, SV-VV %.2e, SE-SV %.2e\n",
              (se - sei).norm(), (sv - svi).norm(), (sv - vv).norm(), (se - sv).norm());
  EXPECT_LT((se - sei).norm(), 1e-12);
  EXPECT_LT((sv - svi).norm(), 1e-12);
  EXPECT_LT((sv - vv).norm(), 1e-12);
  EXPECT_GT((se - sv).norm(), 1e-4);  // different methods do differ

  auto kick = [](Vec x, double c) {
    Vec f(4);
    test::Kepler::field(0.0, x, f);
    x.tail(2) += c * f.tail(2);
    return x;
  };
  HamiltonianProblem P = k.make();
  auto s = make(Method::SVexp, P);
  const Vec conj = kick(run(*s, kick(k.initial(), h / 2), h, N), -h / 2);
  std::printf("[agree] SE vs K_{-h/2} SV^N K_{h/2}: %.2e\n", (se - conj).norm());
  EXPECT_LT((se - conj).norm(), 1e-12);
}

// ---- geometric properties ------------------------------------------------------

// The one-step map x0 -> x1 is symplectic: J^T Omega J = Omega (HLW VI.2.2),
// J by five-point central differences.
// Explicit variants and velocity Verlet on Kepler, implicit ones on the
// non-separable d = 2 problem.  Control: explicit Euler is not symplectic.
TEST(Steppers, OneStepMapIsSymplectic) {
  test::Kepler k;
  k.e = 0.5;
  const Vec xk = k.exact(1.0);  // a point with r < 1: the map is far from linear
  const double h = 0.1;
  for (const MethodInfo& mi : kMethods) {
    const bool gen = mi.general;
    HamiltonianProblem P = gen ? HamiltonianProblem(2, &nonsep) : k.make();
    auto s = make(mi.m, P);
    const double dev =
        symplecticity_defect([&](const Vec& x) { return step_map(*s, x, h); }, gen ? nonsep_x0() : xk);
    std::printf("[symplectic] %-16s on %s: defect %.2e\n", mi.name, gen ? "non-separable" : "Kepler",
                dev);
    EXPECT_LT(dev, 1e-10) << mi.name;
  }
  HamiltonianProblem P = k.make();
  auto euler = [&](const Vec& x) {
    Vec f(4);
    P.field(0.0, x, f);
    return Vec(x + h * f);
  };
  EXPECT_GT(symplecticity_defect(euler, xk), 1e-3);  // control: the check can fail
}

// Störmer–Verlet is symmetric (HLW V.1): a step of h followed by a step of -h
// returns to the start up to rounding.  Symplectic Euler is not (its adjoint
// is the other SE variant): it comes back only to O(h^2).
TEST(Steppers, StormerVerletIsTimeReversible) {
  test::Kepler k;
  k.e = 0.5;
  const double h = 0.1;
  for (const MethodInfo& mi : kMethods) {
    const bool gen = mi.general;
    HamiltonianProblem P = gen ? HamiltonianProblem(2, &nonsep) : k.make();
    auto s = make(mi.m, P);
    const Vec x0 = gen ? nonsep_x0() : k.exact(1.0);
    Point a(4), b(4), c(4);
    a.set(0.0, x0);
    ASSERT_EQ(s->step(a, h, b), StepStatus::Success);
    ASSERT_EQ(s->step(b, -h, c), StepStatus::Success);
    const double back = (c.x - x0).norm();
    std::printf("[reversible] %-16s |x(h, -h) - x0| = %.2e (t back %.1e)\n", mi.name, back, c.t);
    if (mi.order == 2) {
      EXPECT_LT(back, 1e-13) << mi.name;
      EXPECT_EQ(c.t, 0.0);
    } else {
      EXPECT_GT(back, 1e-4) << mi.name;
    }
  }
}

// Newton with the analytic Hessian (set_hessian) and with finite-difference
// Jacobians solves the same equations: the same steps to ~1e-10; the Hessian
// path calls f only for residuals, hence fewer times.  Counters: the Hessian
// path uses no FD Jacobian and the FD path no Hessian.
TEST(Steppers, AnalyticHessianMatchesFiniteDifferences) {
  for (Method m : {Method::SEimp, Method::SVimp}) {
    HamiltonianProblem ph(2, &nonsep), pf(2, &nonsep);
    ph.set_hessian(&nonsep_hess);
    NewtonOptions o;  // default simplified Newton, as used in practice ...
    o.tol = 1e-13;    // ... converged far enough for a 1e-10 comparison
    auto sh = make(m, ph, o), sf = make(m, pf, o);
    const Vec xh = run(*sh, nonsep_x0(), 0.05, 40), xf = run(*sf, nonsep_x0(), 0.05, 40);
    const Stats &a = ph.stats(), &f = pf.stats();
    std::printf("[hessian] %s: |diff| %.2e; f-calls %ld (+%ld Hessians) vs FD %ld (%ld FD Jacobians)\n",
                sh->name(), (xh - xf).norm(), a.field_evals, a.hessian_evals, f.field_evals,
                f.fd_jacobians);
    EXPECT_LT((xh - xf).norm(), 1e-10);
    EXPECT_LT(a.field_evals, f.field_evals);
    EXPECT_GT(a.hessian_evals, 0);
    EXPECT_EQ(a.fd_jacobians, 0);
    EXPECT_EQ(f.hessian_evals, 0);
    EXPECT_GT(f.fd_jacobians, 0);
  }
}

// ---- cost ------------------------------------------------------------------------

namespace {
/// Separable H = sqrt(1 + p^2) + q^2/2: kinetic energy not quadratic.
void relativistic(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1) / std::sqrt(1 + x(1) * x(1));
  dx(1) = -x(0);
}
}  // namespace

// Calls of f per step of the explicit methods, as documented in the headers:
//   velocity Verlet: 1 per step plus the initial force (a_{n+1} reused);
//   explicit SE and SV: 2 per step plus the initial force (FSAL), or 1 in the
//   long run when T(p) is quadratic (AffineVelocity: H_p(p) = A p + b learned
//   with d + 1 calls after max(8, d/2) steps and checked by the force call).
// No Newton solve, no Jacobian, no LU.
TEST(Steppers, ExplicitFieldCallCounts) {
  test::Kepler k;
  k.e = 0.5;
  Vec xr(2);
  xr << 1.0, 0.5;
  for (Method m : {Method::SEexp, Method::SVexp, Method::VV}) {
    for (bool quadratic : {true, false}) {
      if (m == Method::VV && !quadratic) continue;  // VV needs f = [v; a]
      HamiltonianProblem P = quadratic ? k.make() : HamiltonianProblem(1, &relativistic);
      auto s = make(m, P);
      const Vec x0 = quadratic ? k.initial() : xr;
      const long two = m == Method::VV ? 1 : 2;                   // before any learning
      const long steady = quadratic ? 1 : 2;  // per step in the long run
      Point a(x0.size()), b(x0.size());
      a.set(0.0, x0);
      const Stats& st = P.stats();
      long calls3 = 0, calls50 = 0;
      for (int i = 1; i <= 150; ++i) {
        ASSERT_EQ(s->step(a, 0.01, b), StepStatus::Success);
        std::swap(a, b);
        if (i == 3) calls3 = st.field_evals;
        if (i == 50) calls50 = st.field_evals;
      }
      const double per_step = double(st.field_evals - calls50) / 100;
      std::printf("[calls] %-16s %s T: %ld calls for 3 steps, %.2f per step from step 50 on\n",
                  s->name(), quadratic ? "quadratic" : "general", calls3, per_step);
      EXPECT_EQ(calls3, 3 * two + 1) << s->name();
      EXPECT_EQ(per_step, steady) << s->name();
      EXPECT_EQ(st.newton_solves, 0);
      EXPECT_EQ(st.lu_factorizations, 0);
      EXPECT_EQ(st.jacobian_evals, 0);
    }
  }
}

// Implicit SE: 1 Newton solve per step, SV: 2.  Each solve evaluates the
// residual once at the guess and once per iteration (NewtonSolver::solve);
// with the analytic Hessian no other call of f is made, with finite
// differences each Jacobian block costs d + 1 calls (HamiltonianProblem).
// ImplicitStage/NewtonSolver keep the Jacobian across steps of equal h.
TEST(Steppers, ImplicitCallCounts) {
  const int N = 50;
  for (Method m : {Method::SEimp, Method::SVimp}) {
    for (bool hess : {true, false}) {
      HamiltonianProblem P(2, &nonsep);
      if (hess) P.set_hessian(&nonsep_hess);
      auto s = make(m, P, NewtonOptions());
      run(*s, nonsep_x0(), 0.01, N);
      const Stats& st = P.stats();
      const long solves = (m == Method::SVimp ? 2 : 1) * N;
      std::printf("[calls] %s %s: %.2f f-calls/step, %.2f Newton it/solve, %ld Jacobians, %ld LU\n",
                  s->name(), hess ? "Hessian" : "FD", double(st.field_evals) / N,
                  double(st.newton_iterations) / solves, st.jacobian_evals, st.lu_factorizations);
      EXPECT_EQ(st.newton_solves, solves);
      const long jac_calls = hess ? 0 : (P.dim() + 1) * st.fd_jacobians;
      EXPECT_EQ(st.field_evals, st.newton_solves + st.newton_iterations + jac_calls);
      if (hess) {
        EXPECT_EQ(st.hessian_evals, st.jacobian_evals);
        EXPECT_EQ(st.fd_jacobians, 0);
      } else {
        EXPECT_EQ(st.fd_jacobians, st.jacobian_evals);
        EXPECT_EQ(st.hessian_evals, 0);
      }
      EXPECT_LE(st.jacobian_evals, 4);  // reused, not one per solve
      EXPECT_EQ(st.lu_factorizations, st.jacobian_evals);
    }
  }
}

// A non-finite trial step (an adaptive attempt into a singularity) says
// nothing about the learned velocity model of AffineVelocity.hpp: the failed
// step reports NonFinite and the later steps still take one call each.
TEST(Steppers, NonFiniteTrialKeepsVelocityModel) {
  bool poisoned = false;
  HamiltonianProblem P(1, [&](double, const ConstVecRef& x, VecRef dx) {
    dx(0) = x(1);                                    // T = p^2/2
    dx(1) = poisoned && x(0) > 0.5 ? std::nan("") : -x(0);
  });
  for (bool sv : {true, false}) {
    std::unique_ptr<Stepper> s;
    if (sv) s = std::make_unique<StormerVerlet>(P, true);
    else s = std::make_unique<SymplecticEuler>(P, true);
    Vec x0(2);
    x0 << 0.0, 1.0;
    Point a(2), b(2);
    a.set(0.0, x0);
    for (int i = 0; i < 20; ++i) {  // learns the model on step 9
      ASSERT_EQ(s->step(a, 0.01, b), StepStatus::Success);
      std::swap(a, b);
    }
    poisoned = true;  // a long trial step lands where f is NaN
    EXPECT_EQ(s->step(a, 1.0, b), StepStatus::NonFinite) << s->name();
    poisoned = false;
    const long before = P.stats().field_evals;
    for (int i = 0; i < 10; ++i) {
      ASSERT_EQ(s->step(a, 0.01, b), StepStatus::Success);
      std::swap(a, b);
    }
    EXPECT_EQ(P.stats().field_evals - before, 10) << s->name() << ": one call per step";
  }
}
