// native_vs_odeint.cc — the reference loops of bench/native_vs_odeint.sh:
// Boost.Odeint's velocity_verlet on Kepler (e = 0.5 from the pericentre,
// h = 1e-3, as bench/native_vs_odeint.m runs odeSV with a native model),
// timed around the loop only (no process start, no set-up) in CPU time of
// the thread (CLOCK_THREAD_CPUTIME_ID): on a shared machine the time the
// scheduler gives to others is not counted, as on the Octave side (cputime).
//
//   native_vs_odeint inline STEPS
//       the force a = -q / |q|^3 written here, inlined by the compiler into
//       odeint's stepper (odeint's best case)
//   native_vs_odeint kernel STEPS MODEL.so
//       the same stepper calling the model's own compiled odepkg_f
//       (f = [H_p; -H_q], odepkg_model's C ABI 1) through dlopen, as the
//       package's loop does: the kernel's cost without the package's loop
//
// Prints "ns_per_step <value>" and the end state (so that nothing is
// optimised away, and to compare with the package's run).
// Odeint is only run here, never copied into the core.
#include <array>
#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <time.h>
#include <utility>

namespace {

using Pair = std::array<double, 2>;
using State = std::pair<Pair, Pair>;  // (q, v)
constexpr double kStep = 1e-3;

State initial_state() {
  const double e = 0.5;
  return State{Pair{1 - e, 0.0}, Pair{0.0, std::sqrt((1 + e) / (1 - e))}};
}

double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return 1e9 * ts.tv_sec + ts.tv_nsec;
}

using FieldFn = void (*)(double, const double*, const double*, double*);

template <class System>
double run(System system, long steps, State& s) {
  boost::numeric::odeint::velocity_verlet<Pair> stepper;
  double t = 0.0;
  const double start = cpu_ns();
  for (long i = 0; i < steps; ++i) {
    stepper.do_step(system, s, t, kStep);
    t += kStep;
  }
  return (cpu_ns() - start) / steps;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (!std::strcmp(argv[1], "kernel") && argc < 4)) {
    std::fprintf(stderr, "usage: %s inline STEPS | kernel STEPS MODEL.so\n", argv[0]);
    return 2;
  }
  const long steps = std::atol(argv[2]);
  State s = initial_state();
  double ns = 0;
  if (!std::strcmp(argv[1], "inline")) {
    auto system = [](const Pair& q, const Pair&, Pair& a, double) {
      const double r = std::sqrt(q[0] * q[0] + q[1] * q[1]);
      const double r3 = r * r * r;
      a[0] = -q[0] / r3;
      a[1] = -q[1] / r3;
    };
    ns = run(system, steps, s);
  } else if (!std::strcmp(argv[1], "kernel")) {
    void* so = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
    if (!so) {
      std::fprintf(stderr, "cannot load %s: %s\n", argv[3], dlerror());
      return 1;
    }
    auto f = reinterpret_cast<FieldFn>(dlsym(so, "odepkg_f"));
    if (!f) {
      std::fprintf(stderr, "%s has no odepkg_f\n", argv[3]);
      return 1;
    }
    // f(t, [q; p]) = [p; a(q)]: odeint's (q, v) -> a through the kernel's
    // full field, as the package calls it (it computes H_p too).
    auto system = [f](const Pair& q, const Pair& v, Pair& a, double t) {
      const double x[4] = {q[0], q[1], v[0], v[1]};
      double out[4];
      f(t, x, nullptr, out);
      a[0] = out[2];
      a[1] = out[3];
    };
    ns = run(system, steps, s);
  } else {
    std::fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
  }
  std::printf("ns_per_step %.4f\n", ns);
  std::printf("end %.17g %.17g %.17g %.17g\n", s.first[0], s.first[1], s.second[0], s.second[1]);
  return 0;
}
