// compensated_summation.cc — the energy error of long fixed-step runs with
// and without compensated summation of the state updates (option
// CompensatedSummation; CompensatedSum.hpp; Hairer, McLachlan, Razakarivony,
// "Achieving Brouwer's law with implicit Runge-Kutta methods", BIT 48, 2008):
// an order-8 composition (KahanLi8 over explicit Störmer–Verlet) whose
// truncation error is far below round-off, so that the round-off random
// walk of the plain sums is what limits the energy error.  Prints max |dH|
// in each tenth of the run, the final difference of the two runs, and the
// times.  Built and run by bench/compensated_summation.sh.
#include "HamiltonianProblem.hpp"
#include "loop/Integrator.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "composition/CompositionStepper.hpp"
#include "composition/CompositionTables.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

using namespace odepkg;

namespace {

void oscillator(double, const ConstVecRef& x, VecRef dx) {
  dx(0) = x(1);
  dx(1) = -x(0);
}

void kepler(double, const ConstVecRef& x, VecRef dx) {
  const double r = x.head(2).norm();
  dx.head(2) = x.tail(2);
  dx.tail(2) = -x.head(2) / (r * r * r);
}

/// max |H - H0| in each tenth of the run.
struct Tenths : Observer {
  std::function<double(const Vec&)> H;
  double h0 = 0.0;
  long n = 0, total = 1;
  double max[10] = {0};
  Vec last;
  bool operator()(double, const Vec& x) override {
    const int k = static_cast<int>(std::min(9L, 10 * n / total));
    max[k] = std::max(max[k], std::abs(H(x) - h0));
    last = x;
    ++n;
    return true;
  }
};

struct Case {
  const char* name;
  int d;
  void (*f)(double, const ConstVecRef&, VecRef);
  std::function<double(const Vec&)> H;
  Vec x0;
  double h;
};

void run(const Case& c, long N, const char* table) {
  Vec ends[2];
  double secs[2];
  for (int comp = 0; comp < 2; ++comp) {
    HamiltonianProblem P(c.d, c.f);
    CompositionStepper st(std::make_unique<StormerVerlet>(P, true), *composition::find_composition(table));
    st.set_compensated_summation(comp == 1);
    IntegratorOptions o;
    o.fixed_step = c.h;
    Integrator integ(st, o);
    Vec times(2);
    times << 0.0, c.h * static_cast<double>(N);
    Tenths w;
    w.H = c.H;
    w.h0 = c.H(c.x0);
    w.total = N + 1;
    const auto t0 = std::chrono::steady_clock::now();
    integ.run(times, c.x0, w);
    secs[comp] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ends[comp] = w.last;
    std::printf("%-10s %s h = %g, %ld steps, %-11s max |dH| by tenths:", c.name, table, c.h, N,
                comp ? "compensated" : "plain");
    for (double m : w.max) std::printf(" %.1e", m);
    std::printf("  (%.1f s)\n", secs[comp]);
  }
  std::printf("%-10s |x_plain - x_compensated| at the end: %.2e\n\n", c.name, (ends[0] - ends[1]).norm());
}

}  // namespace

int main(int argc, char** argv) {
  const long N = argc > 1 ? std::atol(argv[1]) : 10000000L;
  Vec xo(2);
  xo << 1.0, 0.0;
  const double e = 0.6;
  Vec xk(4);
  xk << 1 - e, 0, 0, std::sqrt((1 + e) / (1 - e));
  const Case cases[] = {
      {"oscillator", 1, &oscillator, [](const Vec& x) { return 0.5 * x.squaredNorm(); }, xo, 0.05},
      {"Kepler0.6", 2, &kepler,
       [](const Vec& x) { return 0.5 * x.tail(2).squaredNorm() - 1.0 / x.head(2).norm(); }, xk, 0.01},
  };
  for (const Case& c : cases) run(c, N, "KahanLi8");
  return 0;
}
