// loop_overhead.cc — instructions spent by the integration loop per step,
// compiled against one version of src/core (bench/loop_overhead.sh builds it
// against this tree and against a baseline commit and runs both under
// callgrind, which counts instructions: repeatable on a loaded machine).
// Kepler, Störmer–Verlet explicit, C++ field (cheap, so the loop's own work
// shows): fixed steps with every step output, and adaptive steps.
#include "HamiltonianProblem.hpp"
#if __has_include("loop/Integrator.hpp")
#include "loop/Integrator.hpp"
#include "unconstrained/StormerVerlet.hpp"
#else  // a baseline commit from before the core's folders (loop_overhead.sh BASE)
#include "Integrator.hpp"
#include "StormerVerlet.hpp"
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace odepkg;

namespace {
void kepler(double, const ConstVecRef& x, VecRef dx) {
  const double r = x.head(2).norm();
  dx.head(2) = x.tail(2);
  dx.tail(2) = -x.head(2) / (r * r * r);
}

/// Keeps the last point only (the observer every solver output goes through).
struct Last : Observer {
  Vec x;
  long n = 0;
  bool operator()(double, const Vec& xx) override {
    x = xx;
    ++n;
    return true;
  }
};
}  // namespace

int main(int argc, char** argv) {
  const long steps = argc > 1 ? std::atol(argv[1]) : 200000;
  const double e = 0.6;
  Vec x0(4);
  x0 << 1 - e, 0, 0, std::sqrt((1 + e) / (1 - e));
  Vec span(2);

  HamiltonianProblem P(2, &kepler);
  StormerVerlet sv(P, true);
  IntegratorOptions fixed;
  fixed.fixed_step = 0.001;
  span << 0.0, steps * 0.001;
  Last out;
  Integrator(sv, fixed).run(span, x0, out);

  HamiltonianProblem Q(2, &kepler);
  StormerVerlet sa(Q, true);
  IntegratorOptions adaptive;
  adaptive.norm.rel_tol = 1e-8;
  adaptive.norm.abs_tol = Vec::Constant(1, 1e-10);
  span << 0.0, steps * 0.0002;
  Last out2;
  Integrator(sa, adaptive).run(span, x0, out2);

  std::printf("fixed: %ld outputs, adaptive: %ld outputs (%ld steps, %ld rejected), x = %.6f %.6f\n",
              out.n, out2.n, static_cast<long>(Q.stats().steps),
              static_cast<long>(Q.stats().rejected), out2.x(0), out2.x(1));
  return 0;
}
