// odeint_compare.cc — the core's explicit loop side by side with Boost.Odeint
// on the same C++ Kepler force (bench/odeint_compare.sh runs every case
// under callgrind twice, with N and N/10 steps, and prints the difference
// per step or per stage: instruction counts do not depend on the load).
//
//   odeint_compare CASE STEPS
//   CASE: sv        ours, explicit Störmer–Verlet, fixed steps, every step observed
//         sv_quiet  the same, observed only at the start and the end
//         kl8       ours, KahanLi8 over explicit Störmer–Verlet, fixed steps (17 stages)
//         vv_ours   ours, velocity Verlet, fixed steps, observed at the ends
//         vv        odeint velocity_verlet, do_step in a loop
//         rkn       odeint symplectic_rkn_sb3a_mclachlan (6 stages), do_step in a loop
// Odeint is only run here (the cases without ODEPKG_WITH_ODEINT print
// "unavailable"), never copied into the core.
#include "HamiltonianProblem.hpp"
#include "loop/Integrator.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/VelocityVerlet.hpp"
#include "composition/CompositionStepper.hpp"

#ifdef ODEPKG_WITH_ODEINT
#include <array>
#include <boost/numeric/odeint.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

using namespace odepkg;

namespace {

constexpr double kEccentricity = 0.6;
constexpr double kStep = 0.001;

/// The one force both libraries call: a = -q / |q|^3 in the plane.
inline void kepler_acceleration(const double* q, double* a) {
  const double r = std::sqrt(q[0] * q[0] + q[1] * q[1]);
  const double r3 = r * r * r;
  a[0] = -q[0] / r3;
  a[1] = -q[1] / r3;
}

/// Ours: f(t, [q; p]) = [p; a(q)] (through the storage, as odeint's
/// std::array; Eigen's x(i) checks its index on every access here,
/// EigenConfig.hpp).
void kepler_field(double, const ConstVecRef& x, VecRef dx) {
  const double* xs = x.data();
  double* f = dx.data();
  f[0] = xs[2];
  f[1] = xs[3];
  kepler_acceleration(xs, f + 2);
}

Vec initial_state() {
  Vec x0(4);
  x0 << 1 - kEccentricity, 0, 0, std::sqrt((1 + kEccentricity) / (1 - kEccentricity));
  return x0;
}

struct Last : Observer {
  Vec x = Vec::Zero(4);
  long n = 0;
  bool operator()(double, const Vec& xx) override {
    x = xx;
    ++n;
    return true;
  }
};

void report(const char* name, const Vec& x, long outputs) {
  std::printf("%s: x = (%.17g, %.17g, %.17g, %.17g), %ld outputs\n", name, x(0), x(1), x(2), x(3), outputs);
}

void run_ours(long steps, bool quiet, bool composed, bool velocity_verlet = false) {
  HamiltonianProblem problem(2, &kepler_field);
  std::unique_ptr<Stepper> stepper;
  if (velocity_verlet)
    stepper = std::make_unique<VelocityVerlet>(problem);
  else
    stepper = std::make_unique<StormerVerlet>(problem, true);
  if (composed)
    stepper = std::make_unique<CompositionStepper>(std::move(stepper),
                                                   *composition::find_composition("KahanLi8"));
  IntegratorOptions opts;
  opts.fixed_step = kStep;
  Vec span(quiet ? 3 : 2);
  if (quiet)
    span << 0.0, (steps / 2) * kStep, steps * kStep;
  else
    span << 0.0, steps * kStep;
  Last out;
  Integrator(*stepper, opts).run(span, initial_state(), out);
  report(stepper->name(), out.x, out.n);
}

#ifdef ODEPKG_WITH_ODEINT
using Pair = std::array<double, 2>;

void run_odeint_vv(long steps) {
  namespace oi = boost::numeric::odeint;
  oi::velocity_verlet<Pair> stepper;
  const Vec x0 = initial_state();
  std::pair<Pair, Pair> s{Pair{x0(0), x0(1)}, Pair{x0(2), x0(3)}};  // (q, v)
  auto system = [](const Pair& q, const Pair&, Pair& a, double) { kepler_acceleration(q.data(), a.data()); };
  double t = 0.0;
  for (long i = 0; i < steps; ++i) {
    stepper.do_step(system, s, t, kStep);
    t += kStep;
  }
  Vec x(4);
  x << s.first[0], s.first[1], s.second[0], s.second[1];
  report("odeint velocity_verlet", x, 0);
}

void run_odeint_rkn(long steps) {
  namespace oi = boost::numeric::odeint;
  oi::symplectic_rkn_sb3a_mclachlan<Pair> stepper;
  const Vec x0 = initial_state();
  Pair q{x0(0), x0(1)}, p{x0(2), x0(3)};
  // (dq/dt = p, dp/dt = a(q)), as two functions of the separable system
  auto coordinate = [](const Pair& pp, Pair& dq) { dq = pp; };
  auto momentum = [](const Pair& qq, Pair& dp) { kepler_acceleration(qq.data(), dp.data()); };
  double t = 0.0;
  for (long i = 0; i < steps; ++i) {
    stepper.do_step(std::make_pair(coordinate, momentum), std::make_pair(std::ref(q), std::ref(p)), t, kStep);
    t += kStep;
  }
  Vec x(4);
  x << q[0], q[1], p[0], p[1];
  report("odeint symplectic_rkn_sb3a_mclachlan", x, 0);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s sv|sv_quiet|kl8|vv_ours|vv|rkn STEPS\n", argv[0]);
    return 2;
  }
  const char* which = argv[1];
  const long steps = std::atol(argv[2]);
  if (!std::strcmp(which, "sv")) run_ours(steps, false, false);
  else if (!std::strcmp(which, "sv_quiet")) run_ours(steps, true, false);
  else if (!std::strcmp(which, "kl8")) run_ours(steps, false, true);
  else if (!std::strcmp(which, "vv_ours")) run_ours(steps, true, false, true);
#ifdef ODEPKG_WITH_ODEINT
  else if (!std::strcmp(which, "vv")) run_odeint_vv(steps);
  else if (!std::strcmp(which, "rkn")) run_odeint_rkn(steps);
#else
  else if (!std::strcmp(which, "vv") || !std::strcmp(which, "rkn")) std::printf("%s: unavailable (no Boost)\n", which);
#endif
  else {
    std::fprintf(stderr, "unknown case %s\n", which);
    return 2;
  }
  return 0;
}
