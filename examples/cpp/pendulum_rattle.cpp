// pendulum_rattle.cpp — the odepkg C++ core from plain C++: the Cartesian
// pendulum H = |p|^2/2 + q_2 on the constraint g(q) = |q|^2 - 1 = 0,
// integrated with RATTLE (Hairer, Lubich, Wanner, GNI, Sect. VII.1.4) with
// C++ callbacks, fixed steps.  It checks its own result (exit status 1 on
// failure): the constraint and its hidden part G(q) H_p at round-off at every
// step, the energy error bounded and of order 2 (h against h/2), and prints
// the microseconds per step (median of 5 runs).
//
// Build against an installed core:
//   cmake -S examples/cpp -B build/example -DCMAKE_PREFIX_PATH=<prefix>
//   cmake --build build/example && build/example/pendulum_rattle [steps]
#include <odepkg/core/constrained/Rattle.hpp>
#include <odepkg/core/loop/Integrator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace odepkg;

namespace {

// f(t, [q; p]) = [dH/dp; -dH/dq] (the odepkg convention), H = |p|^2/2 + q_2
void field(double, const ConstVecRef& x, VecRef dx) {
  dx.head(2) = x.tail(2);
  dx(2) = 0.0;
  dx(3) = -1.0;
}
void constraint(const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1.0; }
void gradient(const ConstVecRef& q, MatRef G) { G.row(0) = 2.0 * q.transpose(); }

double energy(const Vec& x) { return 0.5 * x.tail(2).squaredNorm() + x(1); }

/// Watches every step: largest |g|, |G H_p| and |H - H0|; keeps the last state.
struct Monitor : Observer {
  double h0 = 0.0, max_g = 0.0, max_hidden = 0.0, max_dH = 0.0;
  bool first = true;
  Vec last;
  bool operator()(double, const Vec& x) override {
    if (first) h0 = energy(x), first = false;
    max_g = std::max(max_g, std::abs(x.head(2).squaredNorm() - 1.0));
    max_hidden = std::max(max_hidden, std::abs(2.0 * x.head(2).dot(x.tail(2))));
    max_dH = std::max(max_dH, std::abs(energy(x) - h0));
    last = x;
    return true;
  }
};

Monitor run(double h, long steps, const Vec& x0, double* seconds = nullptr) {
  HamiltonianProblem problem(2, &field);
  problem.set_constraints(1, &constraint, &gradient);
  Rattle rattle(problem, /*separable=*/true);  // H = T(p) + V(q): explicit path
  IntegratorOptions options;
  options.fixed_step = h;
  Vec span(2);
  span << 0.0, h * steps;
  Monitor monitor;
  const auto start = std::chrono::steady_clock::now();
  const IntegrationResult result = Integrator(rattle, options).run(span, x0, monitor);
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - start;
  if (seconds) *seconds = dt.count();
  if (result.outcome != IntegrationResult::Outcome::Completed) {
    std::fprintf(stderr, "integration failed at t = %g: %s\n", result.t, result.message.c_str());
    std::exit(1);
  }
  return monitor;
}

}  // namespace

int main(int argc, char** argv) {
  const long steps = argc > 1 ? std::atol(argv[1]) : 20000;
  const double h = 0.01;
  Vec x0(4);
  x0 << 1.0, 0.0, 0.0, 0.0;  // released horizontally at rest

  std::vector<double> secs(5);
  Monitor m;
  for (double& s : secs) m = run(h, steps, x0, &s);
  std::sort(secs.begin(), secs.end());
  const Monitor half = run(h / 2, 2 * steps, x0);

  std::printf("pendulum, RATTLE, h = %g, %ld steps: q = (%.12f, %.12f)\n", h, steps, m.last(0), m.last(1));
  std::printf("max |g| = %.2e, max |G H_p| = %.2e, max |H - H0| = %.3e (h/2: %.3e, ratio %.2f)\n",
              m.max_g, m.max_hidden, m.max_dH, half.max_dH, m.max_dH / half.max_dH);
  std::printf("%.3f us per step (median of 5 runs)\n", 1e6 * secs[2] / steps);

  bool ok = true;
  auto check = [&ok](bool c, const char* what) {
    if (!c) std::fprintf(stderr, "FAILED: %s\n", what), ok = false;
  };
  check(m.max_g <= 1e-14 && half.max_g <= 1e-14, "|g| at round-off on every step");
  check(m.max_hidden <= 1e-13 && half.max_hidden <= 1e-13, "|G H_p| at round-off on every step");
  const double ratio = m.max_dH / half.max_dH;
  check(ratio > 3.5 && ratio < 4.5, "energy error of order 2 (ratio 4 for h/2)");
  check(m.max_dH < h * h, "energy error bounded by h^2 over the whole run");
  return ok ? 0 : 1;
}
