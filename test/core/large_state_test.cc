// large_state_test.cc — explicit methods are O(n) in memory and time per
// step (issue 13, defect 3): a harmonic chain of d = 200,000 particles with
// explicit Störmer–Verlet, symplectic Euler and velocity Verlet.  A dense
// d x d buffer would need 320 GB; every heap byte of construction and run is
// counted here by a global operator new.  Also: the diagonal velocity model
// (AffineVelocity.hpp, d > kDenseMax) keeps one call of f per step, and a
// kinetic energy whose A = T_pp is not diagonal is detected and stepped the
// two-call way, equal to a plain Störmer–Verlet loop.
#include "unconstrained/AffineVelocity.hpp"
#include "unconstrained/StormerVerlet.hpp"
#include "unconstrained/SymplecticEuler.hpp"
#include "unconstrained/VelocityVerlet.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>

// ---- heap accounting: current and peak bytes of every operator new --------
namespace {
std::atomic<long long> g_current{0}, g_peak{0};
constexpr std::size_t kHeader = alignof(std::max_align_t);
}  // namespace

void* operator new(std::size_t n) {
  void* raw = std::malloc(n + kHeader);
  if (!raw) throw std::bad_alloc();
  *static_cast<std::size_t*>(raw) = n;
  const long long now = g_current += static_cast<long long>(n);
  long long peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(raw) + kHeader;
}
void operator delete(void* p) noexcept {
  if (!p) return;
  void* raw = static_cast<char*>(p) - kHeader;
  g_current -= static_cast<long long>(*static_cast<std::size_t*>(raw));
  std::free(raw);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { operator delete(p); }

using namespace odepkg;

namespace {

/// Harmonic chain, one end fixed: V = sum_i (q_i - q_{i-1})^2 / 2 (q_{-1} = 0),
/// masses m_i = 1 + (i mod 3).  Hamiltonian form f = [p/m; -V_q] (SV, SE) or
/// velocity form [v; -V_q/m] (VV, state [q; v]).
void chain_force(const ConstVecRef& q, VecRef F) {
  const Eigen::Index d = q.size();
  for (Eigen::Index i = 0; i < d; ++i) {
    const double left = q(i) - (i > 0 ? q(i - 1) : 0.0);
    const double right = i + 1 < d ? q(i + 1) - q(i) : 0.0;
    F(i) = right - left;
  }
}
double mass(Eigen::Index i) { return 1.0 + static_cast<double>(i % 3); }

double chain_energy(const Vec& x, bool velocity_form) {
  const Eigen::Index d = x.size() / 2;
  double e = 0.0;
  for (Eigen::Index i = 0; i < d; ++i) {
    const double dq = x(i) - (i > 0 ? x(i - 1) : 0.0);
    const double v = velocity_form ? x(d + i) : x(d + i) / mass(i);
    e += 0.5 * dq * dq + 0.5 * mass(i) * v * v;
  }
  return e;
}

Vec chain_start(int d) {
  Vec x(2 * d);
  for (int i = 0; i < d; ++i) {
    x(i) = 0.1 * std::sin(0.001 * i);
    x(d + i) = 0.05 * std::cos(0.002 * i);
  }
  return x;
}

/// The step's result b becomes the next start a, by swapping the buffers
/// (no copy, no allocation: the states are large).
void advance(Point& a, Point& b) {
  std::swap(a.t, b.t);
  a.x.swap(b.x);
  a.force.swap(b.force);
  std::swap(a.has_force, b.has_force);
}

/// Runs N steps of size h from (0, x0); returns the largest |E - E0| / E0.
double run(Stepper& s, Point& a, Point& b, const Vec& x0, double h, int N, bool vform) {
  a.set(0.0, x0);
  const double e0 = chain_energy(x0, vform);
  double worst = 0.0;
  for (int k = 0; k < N; ++k) {
    EXPECT_EQ(s.step(a, h, b), StepStatus::Success);
    advance(a, b);
    worst = std::max(worst, std::abs(chain_energy(a.x, vform) - e0) / e0);
  }
  return worst;
}

enum class Method { SV, SE, VV };

TEST(LargeState, ExplicitMethodsAreLinearInMemoryAndCalls) {
  const int d = 200000, N = 100;
  const double h = 0.05;
  const Vec x0 = chain_start(d);
  for (Method m : {Method::SV, Method::SE, Method::VV}) {
    const bool vform = m == Method::VV;
    const long long before = g_current.load();
    g_peak = before;
    {
      HamiltonianProblem P(d, [vform](double, const ConstVecRef& x, VecRef dx) {
        const Eigen::Index n = x.size() / 2;
        chain_force(x.head(n), dx.tail(n));
        for (Eigen::Index i = 0; i < n; ++i) {
          dx(i) = vform ? x(n + i) : x(n + i) / mass(i);
          if (vform) dx(n + i) /= mass(i);
        }
      });
      std::unique_ptr<Stepper> s;
      if (m == Method::SV) s = std::make_unique<StormerVerlet>(P, true);
      if (m == Method::SE) s = std::make_unique<SymplecticEuler>(P, true);
      if (m == Method::VV) s = std::make_unique<VelocityVerlet>(P);
      Point a(2 * d), b(2 * d);
      const double drift = run(*s, a, b, x0, h, N, vform);
      // Energy error O(h^p) without drift (HLW IX.8): 5e-3 bounds both orders here.
      EXPECT_LT(drift, m == Method::SE ? 5e-2 : 5e-3) << s->name();
      EXPECT_TRUE(a.x.allFinite());
      // One call per step once the diagonal model is learned (after 8 steps,
      // 3 probes); velocity Verlet needs one call per step by construction.
      EXPECT_LE(P.stats().field_evals, N + 9 + 3 + 1) << s->name();
    }
    const double doubles = static_cast<double>(g_peak.load() - before) / sizeof(double);
    // O(n): a few dozen vectors of the state's size, n = 2d.
    EXPECT_LT(doubles, 40.0 * 2 * d) << "peak heap of method " << static_cast<int>(m);
  }
}

/// Equal masses: the diagonal model's differences ((p + s) - p) / s are
/// rounded, a few ulps off 1/m, yet the model is exactly T_p = p / m with
/// b = 0 (snap_uniform); a model that differs from uniform by more than
/// round-off (one mass changed, or b = 1e-12) is kept as it is.
TEST(LargeState, EqualMassesGiveAnExactlyUniformModel) {
  const int d = 2 * AffineVelocity::kDenseMax + 2;
  Vec x(2 * d);
  for (int i = 0; i < d; ++i) {
    x(i) = 0.5 * i;
    x(d + i) = 0.1 + 0.37 * i;  // p_i + 1 - p_i is not 1 for many i
  }
  int rounded = 0;
  for (int i = 0; i < d; ++i) rounded += ((x(d + i) + std::max(1.0, x(d + i))) - x(d + i)) != std::max(1.0, x(d + i));
  ASSERT_GT(rounded, 0);  // the snap has something to do
  struct Case {
    double inv_mass, changed, offset;
    bool uniform;
  };
  for (const Case& k : {Case{1.0, 1.0, 0.0, true}, Case{0.25, 0.25, 0.0, true}, Case{1.0 / 3.0, 1.0 / 3.0, 0.0, true},
                        Case{1.0, 0.5, 0.0, false}, Case{1.0, 1.0, 1e-12, false}}) {
    HamiltonianProblem P(d, [&](double, const ConstVecRef& y, VecRef dy) {
      for (int i = 0; i < d; ++i) dy(i) = (i == 7 ? k.changed : k.inv_mass) * y(d + i) + k.offset;
      chain_force(y.head(d), dy.tail(d));
    });
    AffineVelocity model(d, true);
    bool active = false;
    for (int s = 0; s < 9; ++s) active = model.prepare(P, 0.0, x);
    ASSERT_TRUE(active) << k.inv_mass << " " << k.changed << " " << k.offset;
    EXPECT_EQ(model.is_uniform(), k.uniform) << k.inv_mass << " " << k.changed << " " << k.offset;
    if (k.uniform) {
      EXPECT_EQ(model.uniform_value(), k.inv_mass);
      EXPECT_TRUE((model.diagonal().array() == k.inv_mass).all());
      EXPECT_TRUE((model.offset().array() == 0.0).all());
    }
  }
}

/// T = p' A p / 2 with A tridiagonal (not diagonal), d > kDenseMax: the
/// diagonal model's second probe refuses it; the steps equal a plain
/// two-call Störmer–Verlet loop.
TEST(LargeState, NonDiagonalKineticEnergyFallsBackToTwoCalls) {
  const int d = 3 * AffineVelocity::kDenseMax, N = 60;
  const double h = 0.02;
  auto velocity = [](const ConstVecRef& p, VecRef v) {
    const Eigen::Index n = p.size();
    for (Eigen::Index i = 0; i < n; ++i)
      v(i) = 2.0 * p(i) + 0.5 * ((i > 0 ? p(i - 1) : 0.0) + (i + 1 < n ? p(i + 1) : 0.0));
  };
  HamiltonianProblem P(d, [&](double, const ConstVecRef& x, VecRef dx) {
    velocity(x.tail(d), dx.head(d));
    chain_force(x.head(d), dx.tail(d));
  });
  StormerVerlet s(P, true);
  Point a(2 * d), b(2 * d);
  const Vec x0 = chain_start(d);
  a.set(0.0, x0);
  Vec q = x0.head(d), p = x0.tail(d), F(d), v(d);
  for (int k = 0; k < N; ++k) {
    ASSERT_EQ(s.step(a, h, b), StepStatus::Success);
    advance(a, b);
    chain_force(q, F);  // plain Störmer–Verlet (HLW (VI.3.4)) for separable H
    p += 0.5 * h * F;
    velocity(p, v);
    q += h * v;
    chain_force(q, F);
    p += 0.5 * h * F;
  }
  Vec ref(2 * d);
  ref << q, p;
  EXPECT_LT((a.x - ref).lpNorm<Eigen::Infinity>(), 1e-13 * ref.lpNorm<Eigen::Infinity>());
  // Two calls per step (plus the first force and the 3 probes).
  EXPECT_GE(P.stats().field_evals, 2 * N);
  EXPECT_LE(P.stats().field_evals, 2 * N + 1 + 3);
}

}  // namespace
