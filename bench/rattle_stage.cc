// rattle_stage.cc — the time of one stage of the order-8 composed explicit
// RATTLE (KahanLi8 over SeparableRattle, 17 stages per step) on the
// pendulum as a constrained particle, H = |p|^2/2 + q_2, g = |q|^2 - 1,
// with the kernels of a model built by odepkg_model (a shared object,
// loaded as __odepkg_integrate__ loads it: NativeKernels.h), without Octave:
// the core's own cost per stage.  Prints the best of RUNS runs of N steps
// of h = 10/N from theta0 = 1.2, omega0 = 0.3, the end state (to compare
// builds bit for bit) and the calls.  Usage (bench/rattle_stage.sh):
//   rattle_stage MODEL.so [N [RUNS]]
#include "EigenConfig.hpp"
#include "binding/NativeKernels.h"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"
#include "constrained/Rattle.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

using namespace odepkg;
using odepkg::binding::NativeKernels;

static double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rattle_stage MODEL.so [N [RUNS]]\n");
    return 2;
  }
  const int N = argc > 2 ? std::atoi(argv[2]) : 60;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 500;
  NativeKernels k(argv[1], 2, 1, {});
  double best = 1e300;
  Vec xend(4);
  Stats stats;
  for (int r = 0; r < runs; ++r) {
    // the problem as OctaveProblem::set_native makes it
    HamiltonianProblem P(2, [&k](double t, const ConstVecRef& x, VecRef dx) { k.field(t, x, dx); });
    P.set_hessian([&k](double t, const ConstVecRef& x, MatRef H) { k.hessian(t, x, H); });
    P.set_constraints(
        1, [&k](const ConstVecRef& q, VecRef g) { k.constraint(q, g); },
        [&k](const ConstVecRef& q, MatRef G) { k.constraint_grad(q, G); },
        [&k](const ConstVecRef& q, MatRef H) { k.constraint_hess(q, H); });
    NewtonOptions newton;
    newton.tol = 1e-14;  // base_newton_options of a composition
    CompositionStepper st(std::make_unique<Rattle>(P, true, false, newton),
                          *composition::recommended_composition(8));
    const double th0 = 1.2, w0 = 0.3, h = 10.0 / N;
    Vec x0(4);
    x0 << std::sin(th0), -std::cos(th0), w0 * std::cos(th0), w0 * std::sin(th0);
    Point a(4), b(4);
    a.set(0.0, x0);
    Point *from = &a, *to = &b;
    const double t0 = cpu_seconds();
    for (int i = 0; i < N; ++i) {
      const StepStatus s = st.step(*from, h, *to);
      if (s != StepStatus::Success) {
        std::printf("step %d failed: %s\n", i, describe(s));
        return 1;
      }
      std::swap(from, to);
    }
    best = std::min(best, cpu_seconds() - t0);
    xend = from->x;
    stats = P.stats();
  }
  std::printf("%d steps, best of %d: %.2f us per step, %.1f ns per stage of 17\n", N, runs, 1e6 * best / N,
              1e9 * best / (17.0 * N));
  std::printf("end state %.17g %.17g %.17g %.17g\n", xend(0), xend(1), xend(2), xend(3));
  std::printf("calls: f %ld, g %ld, G %ld; Newton iterations %ld\n", stats.field_evals, stats.constraint_evals,
              stats.constraint_grad_evals, stats.newton_iterations);
  return 0;
}
