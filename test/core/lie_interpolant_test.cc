// lie_interpolant_test.cc — odeRATTLie's dense output (LieInterpolant.hpp):
// fitted O(h⁴) / O(h³) errors in q / v against smooth exact motions on every
// group, exactness for one-parameter subgroups (also past a half turn between
// the points, where a principal logarithm would turn the wrong way), points
// on G to round-off, backward intervals, and the time derivative.
#include "EigenConfig.hpp"

#include "lie/LieGroupFactory.hpp"
#include "lie/LieInterpolant.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace odepkg;
using namespace odepkg::lie;

namespace {

// A smooth motion q(t) = qa ∘ exp(ξ(t)~) with ξ(t) of mixed trigonometric and
// polynomial components; v(t) = T(ξ(t)) ξ'(t) is its body velocity.
struct SmoothMotion {
  const LieGroup& G;
  Vec qa;
  Vec xi(double t) const {
    Vec x(G.dim());
    for (int i = 0; i < G.dim(); ++i) x(i) = 0.7 * std::sin((i + 1) * t) + 0.2 * t * t * (i % 2 ? -1 : 1);
    return x;
  }
  Vec dxi(double t) const {
    Vec x(G.dim());
    for (int i = 0; i < G.dim(); ++i) x(i) = 0.7 * (i + 1) * std::cos((i + 1) * t) + 0.4 * t * (i % 2 ? -1 : 1);
    return x;
  }
  Vec state(double t) const {
    const int nq = G.coord_size(), n = G.dim();
    Vec y(nq + n);
    Vec q(nq);
    G.compose_exp(qa, xi(t), q);
    Mat T(n, n);
    G.tangent(xi(t), T);
    y << q, T * dxi(t);
    return y;
  }
};

Vec start_element(const LieGroup& G) {
  Vec e(G.coord_size()), q(G.coord_size());
  G.identity(e);
  Vec w(G.dim());
  for (int i = 0; i < G.dim(); ++i) w(i) = 0.3 - 0.1 * i;
  G.compose_exp(e, w, q);
  return q;
}

class LieDenseOutput : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { G = make_lie_group(GetParam(), 0); }
  std::unique_ptr<LieGroup> G;
};

// Interpolation errors at t0 + h/3 fall as h⁴ (q) and h³ (v): fitted over four
// halvings (not at the midpoint, where the derivative's leading error term
// vanishes by symmetry); forward and backward intervals.
TEST_P(LieDenseOutput, FittedOrderAgainstSmoothMotion) {
  for (const double sign : {1.0, -1.0}) {
  const SmoothMotion m{*G, start_element(*G)};
  const int nq = G->coord_size(), ns = nq + G->dim();
  LieInterpolant interp(*G);
  std::vector<double> eq, ev;
  const double t0 = 0.3;
  for (double hh = 0.1; hh > 0.01; hh /= 2) {
    const double h = sign * hh;
    ASSERT_TRUE(interp.set_interval(t0, m.state(t0), t0 + h, m.state(t0 + h)));
    Vec y(ns), none(0);
    interp.evaluate(t0 + h / 3, y, none);
    const Vec ex = m.state(t0 + h / 3);
    eq.push_back((y.head(nq) - ex.head(nq)).lpNorm<Eigen::Infinity>());
    ev.push_back((y.tail(G->dim()) - ex.tail(G->dim())).lpNorm<Eigen::Infinity>());
    EXPECT_LT(G->structure_defect(y.head(nq)), 1e-14);
  }
  for (std::size_t k = 0; k + 1 < eq.size(); ++k) {
    EXPECT_NEAR(std::log2(eq[k] / eq[k + 1]), 4.0, 0.25) << "q, h = " << sign << " 0.1 / 2^" << k;
    EXPECT_NEAR(std::log2(ev[k] / ev[k + 1]), 3.0, 0.25) << "v, h = " << sign << " 0.1 / 2^" << k;
  }
  }
}

// Exact at the end points, in q and v.
TEST_P(LieDenseOutput, ExactAtTheOutputPoints) {
  const SmoothMotion m{*G, start_element(*G)};
  const int ns = G->coord_size() + G->dim();
  LieInterpolant interp(*G);
  const Vec y0 = m.state(1.0), y1 = m.state(1.25);
  ASSERT_TRUE(interp.set_interval(1.0, y0, 1.25, y1));
  Vec y(ns), none(0);
  interp.evaluate(1.0, y, none);
  EXPECT_LT((y - y0).lpNorm<Eigen::Infinity>(), 1e-15);
  interp.evaluate(1.25, y, none);
  EXPECT_LT((y - y1).lpNorm<Eigen::Infinity>(), 2e-14);
}

// A one-parameter subgroup q0 ∘ exp(s W̃ / h) with constant v = W / h is
// reproduced to round-off, forward and backward, also when |W| = 4 > π: the
// increment follows the motion, not the principal logarithm.
TEST_P(LieDenseOutput, OneParameterSubgroupIsExactPastAHalfTurn) {
  const int nq = G->coord_size(), n = G->dim(), ns = nq + n;
  const Vec q0 = start_element(*G);
  for (double h : {0.5, -0.5}) {
    Vec W(n);
    for (int i = 0; i < n; ++i) W(i) = (i % 3 == 0 ? 2.8 : -1.6) + 0.1 * i;  // |W| about 4
    W *= 4.0 / W.head(std::min(n, 3)).norm();
    Vec y0(ns), y1(ns), q1(nq);
    G->compose_exp(q0, W, q1);
    y0 << q0, W / h;
    y1 << q1, W / h;
    LieInterpolant interp(*G);
    ASSERT_TRUE(interp.set_interval(2.0, y0, 2.0 + h, y1));
    EXPECT_LT((interp.increment() - W).lpNorm<Eigen::Infinity>(), 1e-12);
    for (double th : {0.1, 1.0 / 3, 0.75}) {
      Vec y(ns), yp(ns), ex(nq);
      interp.evaluate(2.0 + th * h, y, yp);
      const Vec w = th * W;
      G->compose_exp(q0, w, ex);
      EXPECT_LT((y.head(nq) - ex).lpNorm<Eigen::Infinity>(), 1e-13 * std::max(1.0, ex.lpNorm<Eigen::Infinity>()))
          << "h = " << h << ", theta = " << th;
      EXPECT_LT((y.tail(n) - W / h).lpNorm<Eigen::Infinity>(), 1e-12 * W.norm() / std::abs(h));
      EXPECT_LT(yp.tail(n).lpNorm<Eigen::Infinity>(), 1e-7 * W.norm() / (h * h));  // v̇ = 0
    }
  }
}

// yp = [d/dt coords(q); v̇] is the derivative of the interpolant: against
// central differences of evaluate() with a step far from both error regimes.
TEST_P(LieDenseOutput, DerivativeOfTheInterpolant) {
  const SmoothMotion m{*G, start_element(*G)};
  const int ns = G->coord_size() + G->dim();
  LieInterpolant interp(*G);
  ASSERT_TRUE(interp.set_interval(0.5, m.state(0.5), 0.6, m.state(0.6)));
  Vec y(ns), yp(ns), ya(ns), yb(ns), none(0);
  const double t = 0.537, d = 1e-4;
  interp.evaluate(t, y, yp);
  interp.evaluate(t + d, ya, none);
  interp.evaluate(t - d, yb, none);
  const Vec fd = (ya - yb) / (2 * d);
  EXPECT_LT((yp - fd).lpNorm<Eigen::Infinity>(), 1e-6 * std::max(1.0, fd.lpNorm<Eigen::Infinity>()));
}

// Coordinates of very different scales (a translation of 1e6 beside a
// quaternion): the increment is found and the end points are reproduced to
// round-off in each coordinate on its own scale.
TEST_P(LieDenseOutput, LargeTranslationsKeepRotationsExact) {
  const int nq = G->coord_size(), n = G->dim(), ns = nq + n;
  Vec e(nq), q0(nq), q1(nq), w(n);
  G->identity(e);
  for (int i = 0; i < n; ++i) w(i) = i < 3 ? 0.2 + 0.1 * i : 1e6 * (1 + i);  // translations 1e6
  G->compose_exp(e, w, q0);
  for (int i = 0; i < n; ++i) w(i) = i < 3 ? 0.05 - 0.02 * i : 3e5 * (i % 2 ? 1 : -1);
  G->compose_exp(q0, w, q1);
  Vec y0(ns), y1(ns);
  y0 << q0, w / 0.1;
  y1 << q1, w / 0.1;
  LieInterpolant interp(*G);
  ASSERT_TRUE(interp.set_interval(0.0, y0, 0.1, y1));
  Vec y(ns), none(0);
  interp.evaluate(0.1, y, none);
  for (int i = 0; i < nq; ++i)
    EXPECT_LT(std::abs(y(i) - q1(i)), 64 * std::numeric_limits<double>::epsilon() * std::max({1.0, std::abs(q0(i)), std::abs(q1(i))}))
        << "coordinate " << i;
  EXPECT_LT(G->structure_defect(y.head(nq)), 1e-14);
}

INSTANTIATE_TEST_SUITE_P(Lie, LieDenseOutput,
                         ::testing::Values("R3", "SO3", "S3", "SE3", "S3sdR3", "S3xR3", "SO3xR3"),
                         [](const auto& info) { return info.param; });

// A nutating body turning by phi between output points: interpolated to the
// Hermite error while the chart is good (phi = 3), refused near a full turn
// (phi = 6, 6.28: rcond(T(W)) < 0.2), where the chart degenerates.
TEST(LieDenseOutput, RefusesNearlyFullTurnsBetweenPoints) {
  auto G = make_lie_group("SO3", 0);
  LieInterpolant interp(*G);
  for (double phi : {3.0, 6.0, 6.28}) {
    // xi(t) = [0.01 sin t, 0.01 cos t - 0.01, phi t]: spin about e3 with nutation
    auto state = [&](double t) {
      Vec xi(3), dxi(3), q(9), e(9), y(12);
      G->identity(e);
      xi << 0.01 * std::sin(t), 0.01 * std::cos(t) - 0.01, phi * t;
      dxi << 0.01 * std::cos(t), -0.01 * std::sin(t), phi;
      G->compose_exp(e, xi, q);
      Mat T(3, 3);
      G->tangent(xi, T);
      y << q, T * dxi;
      return y;
    };
    const bool ok = interp.set_interval(0.0, state(0.0), 1.0, state(1.0));
    if (phi < 5) {
      ASSERT_TRUE(ok);
      Vec y(12), none(0);
      interp.evaluate(0.4, y, none);
      EXPECT_LT((y - state(0.4)).lpNorm<Eigen::Infinity>(), 1e-3);
    } else {
      EXPECT_FALSE(ok) << "phi = " << phi;
    }
  }
}

TEST(LieDenseOutput, RefusesNonFiniteOrEmptyIntervals) {
  auto G = make_lie_group("S3", 0);
  LieInterpolant interp(*G);
  Vec y0(7), y1(7);
  y0 << 1, 0, 0, 0, 0.1, 0.2, 0.3;
  y1 = y0;
  EXPECT_FALSE(interp.set_interval(1.0, y0, 1.0, y1));  // h = 0
  y1(5) = std::nan("");
  EXPECT_FALSE(interp.set_interval(1.0, y0, 2.0, y1));
}

}  // namespace
