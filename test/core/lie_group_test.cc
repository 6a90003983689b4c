// lie_group_test.cc — the Lie-group layer of odeRATTLie (src/core/lie): for
// every built-in group and for products, the identities that fix the
// conventions of LieGroup.hpp (compose_exp, log_between, ad, T, T^{-T},
// ∂[T^{-T}x]/∂w), the small-|w| series, the exactness of the group structure
// over 10⁶ steps, the factory, and that the hot calls do not allocate.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included (EigenConfig.hpp)

#include "lie/LieGroupFactory.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace odepkg;
using namespace odepkg::lie;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
using MatL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;

/// w = r·u, u uniform on the unit sphere of Rⁿ, r uniform in [0, radius]:
/// every sub-vector (the rotation part of a factor) has norm ≤ radius.
Vec random_w(int n, std::mt19937_64& rng, double radius) {
  std::normal_distribution<double> N(0.0, 1.0);
  std::uniform_real_distribution<double> U(0.0, radius);
  Vec w(n);
  for (int i = 0; i < n; ++i) w(i) = N(rng);
  return (U(rng) / w.norm()) * w;
}

Vec exp_at_identity(const LieGroup& G, const Vec& w) {
  Vec e(G.coord_size()), q(G.coord_size());
  G.identity(e);
  G.compose_exp(e, w, q);
  return q;
}

/// A generic element: exp(w₁)∘exp(w₂), |wᵢ| ≤ 2.5.
Vec random_element(const LieGroup& G, std::mt19937_64& rng) {
  Vec q1 = exp_at_identity(G, random_w(G.dim(), rng, 2.5)), q(G.coord_size());
  G.compose_exp(q1, random_w(G.dim(), rng, 2.5), q);
  return q;
}

/// Σ_k (−ad w)^k/(k+1)! in long double, the definition of T(w) in the header.
MatL tangent_series(const LieGroup& G, const Vec& w) {
  const int n = G.dim();
  Mat A(n, n);
  G.ad(w, A);
  const MatL mA = -A.cast<long double>();
  MatL term = MatL::Identity(n, n), S = term;
  for (int k = 1; k < 200; ++k) {
    term = term * mA / static_cast<long double>(k + 1);
    S += term;
    if (term.norm() < 1e-22L * S.norm()) break;
  }
  return S;
}

double rel_diff(const Mat& A, const Mat& B) { return (A - B).norm() / std::max(1.0, B.norm()); }

/// Five-point derivative d/dh f(h) at 0: error O(h⁴ f⁽⁵⁾) + O(ε|f|/h).
template <class F>
Vec five_point(F f, double h) {
  return (-f(2 * h) + 8.0 * f(h) - 8.0 * f(-h) + f(-2 * h)) / (12.0 * h);
}

// ---------------------------------------------------------------------------
// Identities for every group spec.

class GroupIdentities : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { G = make_lie_group(GetParam(), 0); }
  std::unique_ptr<LieGroup> G;
  std::mt19937_64 rng{20240603};
  static constexpr int kTrials = 40;
};

TEST_P(GroupIdentities, ComposeExpWithZeroIsTheIdentityMap) {
  const Vec zero = Vec::Zero(G->dim());
  for (int t = 0; t < kTrials; ++t) {
    const Vec q = random_element(*G, rng);
    Vec out(G->coord_size());
    G->compose_exp(q, zero, out);
    EXPECT_EQ((out - q).lpNorm<Eigen::Infinity>(), 0.0);
  }
}

TEST_P(GroupIdentities, LogBetweenInvertsComposeExp) {
  const int n = G->dim();
  double worst = 0;
  for (int t = 0; t < kTrials; ++t) {
    const Vec q0 = random_element(*G, rng), w = random_w(n, rng, 2.5);
    Vec q1(G->coord_size()), w1(n), q2(G->coord_size());
    G->compose_exp(q0, w, q1);
    G->log_between(q0, q1, w1);
    worst = std::max(worst, (w1 - w).norm() / std::max(1.0, w.norm()));
    G->compose_exp(q0, w1, q2);
    EXPECT_LT((q2 - q1).norm(), 1e-14 * std::max(1.0, q1.norm()));
  }
  // The log is conditioned like T^{-1} (‖T^{-1}‖ ≤ 1.6 for |Ω| ≤ 2.5): a few
  // ulps with the rounding of q1 (measured ≤ 2.7ε).
  EXPECT_LT(worst, 16 * kEps);
}

TEST_P(GroupIdentities, OneParameterSubgroup) {
  const int n = G->dim();
  for (int t = 0; t < kTrials; ++t) {
    const Vec q = random_element(*G, rng), a = random_w(n, rng, 1.2);
    const double s = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    const Vec b = s * a;
    Vec qa(G->coord_size()), qab(G->coord_size()), qs(G->coord_size());
    G->compose_exp(q, a, qa);
    G->compose_exp(qa, b, qab);
    G->compose_exp(q, a + b, qs);
    EXPECT_LT((qab - qs).norm(), 1e-14 * std::max(1.0, qs.norm()));
  }
}

TEST_P(GroupIdentities, TangentFixesW) {
  const int n = G->dim();
  Mat T(n, n);
  for (int t = 0; t < kTrials; ++t) {
    const Vec w = random_w(n, rng, 2.5);
    G->tangent(w, T);
    EXPECT_LT((T * w - w).norm(), 4 * kEps * std::max(1.0, w.norm()) * T.norm());
  }
}

// d/dε exp(w̃ + εδw̃) = exp(w̃)∘(T(w)δw)~:  T(w)δw = d/dε log_between(exp w, exp(w + εδw)).
TEST_P(GroupIdentities, TangentMatchesItsDefinitionByDifferences) {
  const int n = G->dim();
  Mat T(n, n);
  for (int t = 0; t < kTrials; ++t) {
    const Vec w = random_w(n, rng, 2.5), dw = random_w(n, rng, 1.0).normalized();
    const Vec qw = exp_at_identity(*G, w);
    auto f = [&](double e) {
      Vec d(n);
      G->log_between(qw, exp_at_identity(*G, w + e * dw), d);
      return d;
    };
    G->tangent(w, T);
    // h = 1e-3: truncation h⁴ ≈ 1e-12, round-off ε/h ≈ 2e-13 (measured ≤ 5e-13).
    EXPECT_LT((five_point(f, 1e-3) - T * dw).norm(), 1e-11) << "w = " << w.transpose();
  }
}

TEST_P(GroupIdentities, TangentMatchesTheSeriesOfAd) {
  const int n = G->dim();
  Mat T(n, n), Tit(n, n);
  for (int t = 0; t < kTrials; ++t) {
    const Vec w = random_w(n, rng, 2.5);
    const MatL S = tangent_series(*G, w);
    G->tangent(w, T);
    G->tangent_inv_transpose(w, Tit);
    EXPECT_LT(rel_diff(T, S.cast<double>()), 4 * kEps) << "w = " << w.transpose();
    const Mat Sit = S.inverse().transpose().cast<double>();
    EXPECT_LT(rel_diff(Tit, Sit), 4 * kEps) << "w = " << w.transpose();
  }
}

TEST_P(GroupIdentities, InverseTransposeTimesTransposeIsIdentity) {
  const int n = G->dim();
  Mat T(n, n), Tit(n, n);
  for (int t = 0; t < kTrials; ++t) {
    const Vec w = random_w(n, rng, 2.5);
    G->tangent(w, T);
    G->tangent_inv_transpose(w, Tit);
    EXPECT_LT((Tit * T.transpose() - Mat::Identity(n, n)).norm(), 4 * kEps * T.norm() * Tit.norm());
  }
}

TEST_P(GroupIdentities, DTangentInvTransposeMatchesDifferences) {
  const int n = G->dim();
  Mat D(n, n), Tit(n, n), Dfd(n, n);
  for (int t = 0; t < kTrials; ++t) {
    const Vec w = random_w(n, rng, 2.5), x = random_w(n, rng, 2.0);
    G->d_tangent_inv_transpose(w, x, D);
    for (int j = 0; j < n; ++j) {
      auto f = [&](double e) {
        Vec we = w;
        we(j) += e;
        G->tangent_inv_transpose(we, Tit);
        return Vec(Tit * x);
      };
      Dfd.col(j) = five_point(f, 1e-3);
    }
    // Five-point differences, h = 1e-3: ≈ 1e-12 (measured ≤ 6e-13).
    EXPECT_LT((D - Dfd).norm(), 1e-11 * std::max(1.0, x.norm())) << "w = " << w.transpose();
  }
}

// |w| = 1e-9, 1e-5, 1e-3 (and in between): no 0/0 and no cancellation — T and
// T^{-T} agree with the long-double series to a few ulps, the log recovers
// the exponent from the identity to a few ulps relative to |w|.
TEST_P(GroupIdentities, SmallWIsAccurate) {
  const int n = G->dim();
  Mat T(n, n), Tit(n, n), D(n, n);
  for (double r : {1e-9, 1e-7, 1e-5, 1e-4, 1e-3, 1e-2}) {
    for (int t = 0; t < 10; ++t) {
      const Vec w = r * random_w(n, rng, 1.0).normalized();
      const MatL S = tangent_series(*G, w);
      G->tangent(w, T);
      G->tangent_inv_transpose(w, Tit);
      const Mat Sd = S.cast<double>(), Sit = S.inverse().transpose().cast<double>();
      EXPECT_LE((T - Sd).lpNorm<Eigen::Infinity>(), 2 * kEps) << "|w| = " << r;
      EXPECT_LE((Tit - Sit).lpNorm<Eigen::Infinity>(), 2 * kEps) << "|w| = " << r;
      Vec w1(n);
      Vec e(G->coord_size());
      G->identity(e);
      G->log_between(e, exp_at_identity(*G, w), w1);
      EXPECT_LE((w1 - w).norm(), 8 * kEps * r) << "|w| = " << r;
      G->d_tangent_inv_transpose(w, w, D);
      EXPECT_TRUE(D.allFinite());
    }
  }
}

// "The group structure held exactly": 10⁶ steps q ← q∘exp(w) with random
// small w and no renormalisation.  Each step must round the stored
// coordinates (independent errors of ≤ ½ulp), so the defect performs a random
// walk of size σ√N: measured σ ≈ 0.55ε per step for ‖RᵀR − I‖_F (9 rounded
// entries; 1.1e-13 … 1.6e-13 after 10⁶ steps over 8 seeds, growing like √N
// from 10⁴ to 4·10⁶ steps) and ≈ 0.25ε for | |p| − 1 |.  The bound 2ε√N
// (4.4e-13) is ≥ 3.6σ√N; a systematic drift of even 0.01ε per step would
// reach Nε/100 = 2.2e-12 and fail it.
TEST_P(GroupIdentities, StructureHeldOverAMillionSteps) {
  const std::string spec = GetParam();
  if (spec == "R3" || spec == "S3xR3" || spec == "SO3xR3")
    GTEST_SKIP() << "no structure (R3) or covered by its factors and the other products";
  const int n = G->dim();
  Vec q = exp_at_identity(*G, random_w(n, rng, 2.5)), q1(G->coord_size()), w(n);
  std::uniform_real_distribution<double> U(-0.05, 0.05);
  constexpr int kSteps = 1000000;
  double worst = 0;
  for (int k = 0; k < kSteps; ++k) {
    for (int i = 0; i < n; ++i) w(i) = U(rng);
    G->compose_exp(q, w, q1);
    q.swap(q1);
    if (k % 1000 == 0) worst = std::max(worst, G->structure_defect(q));
  }
  worst = std::max(worst, G->structure_defect(q));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", worst);
  RecordProperty("defect", buf);
  EXPECT_LE(worst, 2 * kEps * std::sqrt(double(kSteps)));
  EXPECT_TRUE(q.allFinite());
}

// compose_exp, log_between, ad, T, T^{-T} and (for the built-in groups) the
// derivative make no heap allocation (EIGEN_RUNTIME_NO_MALLOC turns one into
// an EigenAssertion).
TEST_P(GroupIdentities, HotCallsDoNotAllocate) {
  const int n = G->dim(), nq = G->coord_size();
  const Vec q = random_element(*G, rng), w = random_w(n, rng, 2.0), x = random_w(n, rng, 1.0);
  Vec out(nq), w1(n);
  Mat A(n, n), T(n, n), Tit(n, n), D(n, n);
  Eigen::internal::set_is_malloc_allowed(false);
  EXPECT_NO_THROW({
    G->compose_exp(q, w, out);
    G->log_between(q, out, w1);
    G->ad(w, A);
    G->tangent(w, T);
    G->tangent_inv_transpose(w, Tit);
    G->d_tangent_inv_transpose(w, x, D);
    (void)G->structure_defect(q);
  });
  EXPECT_THROW(Vec(100), EigenAssertion);  // the guard is armed
  Eigen::internal::set_is_malloc_allowed(true);
}

INSTANTIATE_TEST_SUITE_P(Lie, GroupIdentities,
                         ::testing::Values("R3", "SO3", "S3", "SE3", "S3sdR3", "S3xR3", "SO3xR3", "SE3xR2",
                                           "S3sdR3xSO3xR1"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------
// The scalar coefficient functions against 50-digit references (mpmath), at
// small φ, at the top of each series length (φ → 0.5, 1.5) and on both sides
// of the series/closed-form switch φ = 3.

TEST(SO3Coefficients, MatchHighPrecisionReferences) {
  struct Row {
    double phi;
    double v[8];  // sinφ/φ, α, β, α'/φ, β'/φ, γ, γ'/φ, (γ'/φ)'/φ
  };
  const Row rows[] = {
      {1e-09, {1.00000000000000000e+00, 5.00000000000000000e-01, 1.66666666666666657e-01, -8.33333333333333287e-02,
               -1.66666666666666664e-02, 8.33333333333333287e-02, 2.77777777777777788e-03, 2.64550264550264568e-04}},
      {1e-05, {9.99999999983333332e-01, 4.99999999995833333e-01, 1.66666666665833324e-01, -8.33333333327777731e-02,
               -1.66666666665873028e-02, 8.33333333334722176e-02, 2.77777777779100515e-03, 2.64550264552248658e-04}},
      {0.001, {9.99999833333341637e-01, 4.99999958333334715e-01, 1.66666658333333523e-01, -8.33333277777779241e-02,
               -1.66666658730158894e-02, 8.33333347222222492e-02, 2.77777791005291491e-03, 2.64550284391535393e-04}},
      {0.4999, {9.58867329367938614e-01, 4.89673849727975508e-01, 1.64596514550204853e-01, -8.19542587773899323e-02,
                -1.64693627768926210e-02, 8.36824948104920308e-02, 2.81114573378659369e-03, 2.69571844314328926e-04}},
      {1.4999, {6.65036274349239620e-01, 4.13016422215106316e-01, 1.48892618643300972e-01, -7.15635726387239685e-02,
                -1.49626321576966891e-02, 8.66352628969464800e-02, 3.10250895733244847e-03, 3.14784884303701202e-04}},
      {0.5, {9.58851077208406011e-01, 4.89669752438509132e-01, 1.64595691166375985e-01, -8.19537106744490790e-02,
             -1.64692842424754328e-02, 8.36826353540598977e-02, 2.81115921108181536e-03, 2.69573879134462279e-04}},
      {1.9999, {4.54692253094044652e-01, 3.54049380233869226e-01, 1.36340570442681663e-01, -6.33579624812766751e-02,
                -1.37444571849012955e-02, 8.94761663463797402e-02, 3.39839883722849309e-03, 3.63120522354171995e-04}},
      {2.0001, {4.54605173539127549e-01, 3.54024037763398358e-01, 1.36335072767103688e-01, -6.33543898995413413e-02,
                -1.37439207080475717e-02, 8.94775257349649245e-02, 3.39854409029896045e-03, 3.63144830347061323e-04}},
      {2.9999, {4.70745713536326049e-02, 2.21123450167618529e-01, 1.05887662242759611e-01, -4.39109639023151435e-02,
                -1.07273303168419036e-02, 9.92906086374585051e-02, 4.53917857170626094e-03, 5.70413215368528541e-04}},
      {3.0001, {4.70054358537288497e-02, 2.21097104797490618e-01, 1.05881226039092807e-01, -4.39069365711378112e-02,
                -1.07266819114860083e-02, 9.92933322472799307e-02, 4.53952083969651112e-03, 5.70480087213742033e-04}},
  };
  const char* names[8] = {"sinc", "alpha", "beta", "alpha'/phi", "beta'/phi", "gamma", "delta", "eps"};
  for (const Row& r : rows) {
    const so3::Coeffs c = so3::rotation_coeffs(r.phi);
    const so3::InvCoeffs g = so3::inverse_coeffs(r.phi);
    const double got[8] = {c.s, c.alpha, c.beta, c.alpha_d, c.beta_d, g.gamma, g.delta, g.eps};
    for (int i = 0; i < 8; ++i) {
      // The closed form of ε = δ'/φ cancels above the switch φ = 3 (≈ 10 ulps
      // there, measured 9.4; it enters only the SE(3) Newton derivative);
      // everything else is within a few ulps.
      const double tol = (i == 7 && r.phi > 3) ? 16 * kEps : 4 * kEps;
      EXPECT_LE(std::abs(got[i] - r.v[i]), tol * std::abs(r.v[i])) << names[i] << " at phi = " << r.phi;
    }
  }
}

// ---------------------------------------------------------------------------
// so(3): ad(v) = skew(v), and the inertial term of J Ω̇ = ad(Ω)ᵀJΩ is JΩ × Ω.

TEST(SO3, AdIsSkewAndGivesTheEulerInertialTerm) {
  SO3Group G;
  std::mt19937_64 rng(7);
  Mat A(3, 3);
  for (int t = 0; t < 20; ++t) {
    const Vec v = random_w(3, rng, 3.0), u = random_w(3, rng, 3.0);
    G.ad(v, A);
    EXPECT_EQ((A - so3::skew(v)).norm(), 0.0);
    const Eigen::Vector3d v3 = v, u3 = u;
    EXPECT_LT((A * u - Vec(v3.cross(u3))).norm(), 4 * kEps * v.norm() * u.norm());
    Eigen::Matrix3d J;
    J << 2.0, 0.3, -0.1, 0.3, 1.5, 0.2, -0.1, 0.2, 0.7;
    const Eigen::Vector3d JO = J * v3;
    EXPECT_LT((A.transpose() * JO - JO.cross(v3)).norm(), 8 * kEps * JO.norm() * v.norm());
  }
}

// S³ and SO(3), S³⋉R³ and SE(3) are the same algebra: the coverings commute
// with compose_exp.  rotation_matrix(p) is the homomorphism.
TEST(Coverings, QuaternionGroupsMapToTheMatrixGroups) {
  S3Group S3;
  SO3Group SO3;
  S3sdR3Group SD;
  SE3Group SE3;
  std::mt19937_64 rng(11);
  for (int t = 0; t < 20; ++t) {
    const Vec p = random_element(S3, rng), w = random_w(3, rng, 2.5);
    Vec p1(4), R1(9);
    S3.compose_exp(p, w, p1);
    const Eigen::Matrix3d R = rotation_matrix(p);
    SO3.compose_exp(Eigen::Map<const Vec>(R.data(), 9), w, R1);
    EXPECT_LT((Vec(Eigen::Map<const Vec>(rotation_matrix(p1).data(), 9)) - R1).norm(), 1e-14);

    const Vec y = random_element(SD, rng), v = random_w(6, rng, 2.5);
    Vec y1(7), g(12), g1(12);
    SD.compose_exp(y, v, y1);
    const Eigen::Matrix3d Ry = rotation_matrix(y.head<4>());
    g.head<9>() = Eigen::Map<const Vec>(Ry.data(), 9);
    g.tail<3>() = y.tail<3>();
    SE3.compose_exp(g, v, g1);
    const Eigen::Matrix3d Ry1 = rotation_matrix(y1.head<4>());
    EXPECT_LT((Vec(Eigen::Map<const Vec>(Ry1.data(), 9)) - g1.head<9>()).norm(), 1e-14);
    EXPECT_LT((y1.tail<3>() - g1.tail<3>()).norm(), 1e-14 * std::max(1.0, g1.tail<3>().norm()));
  }
}

// S³ is not SO(3): log_between is the exact inverse on S³ (|w| up to 2π), so
// compose_exp(p0, log_between(p0, p1)) is p1 itself even when p0·p1 < 0.
TEST(S3, LogBetweenIsExactOnTheSphere) {
  S3Group S3;
  Vec p0(4), p1(4), w(3), p2(4);
  S3.identity(p0);
  S3.compose_exp(p0, Vec::Constant(3, 5.0 / std::sqrt(3.0)), p1);  // |w| = 5 > π
  ASSERT_LT(p1(0), 0.0);
  S3.log_between(p0, p1, w);
  EXPECT_NEAR(w.norm(), 5.0, 1e-14);
  S3.compose_exp(p0, w, p2);
  EXPECT_LT((p2 - p1).norm(), 1e-15);
}

// SE(3)'s exp is (exp Ω̂, T_SO3(Ω)ᵀU) = (exp Ω̂, V U): the 4x4 matrix exponential.
TEST(SE3, ExpIsTheHomogeneousMatrixExponential) {
  SE3Group G;
  std::mt19937_64 rng(3);
  for (int t = 0; t < 20; ++t) {
    const Vec v = random_w(6, rng, 3.0);
    Eigen::Matrix4d X = Eigen::Matrix4d::Zero();
    X.topLeftCorner<3, 3>() = so3::skew(v.head<3>());
    X.topRightCorner<3, 1>() = v.tail<3>();
    Eigen::Matrix<long double, 4, 4> E = Eigen::Matrix<long double, 4, 4>::Identity(), term = E;
    for (int k = 1; k < 60; ++k) {
      term = term * X.cast<long double>() / static_cast<long double>(k);
      E += term;
    }
    const Vec q = exp_at_identity(G, v);
    const Eigen::Matrix4d Ed = E.cast<double>();
    const Eigen::Matrix3d R = Ed.topLeftCorner<3, 3>();
    EXPECT_LT((q.head<9>() - Vec(Eigen::Map<const Vec>(R.data(), 9))).norm(), 1e-14);
    EXPECT_LT((q.tail<3>() - Vec(Ed.topRightCorner<3, 1>())).norm(), 1e-14 * std::max(1.0, v.norm()));
  }
}

// The product acts factor by factor.
TEST(Product, ActsFactorByFactor) {
  const auto P = make_lie_group("S3xR3xSE3", 0);
  const auto S3 = make_lie_group("S3", 0), R3 = make_lie_group("R3", 0), SE3 = make_lie_group("SE3", 0);
  ASSERT_EQ(P->coord_size(), 4 + 3 + 12);
  ASSERT_EQ(P->dim(), 3 + 3 + 6);
  std::mt19937_64 rng(5);
  const Vec q = random_element(*P, rng), w = random_w(12, rng, 2.0);
  Vec out(19), o1(4), o2(3), o3(12);
  P->compose_exp(q, w, out);
  S3->compose_exp(q.segment(0, 4), w.segment(0, 3), o1);
  R3->compose_exp(q.segment(4, 3), w.segment(3, 3), o2);
  SE3->compose_exp(q.segment(7, 12), w.segment(6, 6), o3);
  EXPECT_EQ((out.segment(0, 4) - o1).norm(), 0.0);
  EXPECT_EQ((out.segment(4, 3) - o2).norm(), 0.0);
  EXPECT_EQ((out.segment(7, 12) - o3).norm(), 0.0);
  Mat T(12, 12), T3(6, 6);
  P->tangent(w, T);
  SE3->tangent(w.segment(6, 6), T3);
  EXPECT_EQ((T.block(6, 6, 6, 6) - T3).norm(), 0.0);
  EXPECT_EQ(T.block(0, 6, 6, 6).norm(), 0.0);
  EXPECT_EQ(T.block(6, 0, 6, 6).norm(), 0.0);
}

// The default ∂[T^{-T}x]/∂w of LieGroup (central differences) agrees with the
// analytic one of SO(3) to its O(h²) + O(ε/h) ≈ 1e-10.
class SO3WithDefaultDerivative final : public LieGroup {
 public:
  std::string name() const override { return g.name(); }
  int coord_size() const override { return g.coord_size(); }
  int dim() const override { return g.dim(); }
  void identity(VecRef q) const override { g.identity(q); }
  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef o) const override { g.compose_exp(q, w, o); }
  void log_between(const ConstVecRef& a, const ConstVecRef& b, VecRef w) const override { g.log_between(a, b, w); }
  void ad(const ConstVecRef& v, MatRef A) const override { g.ad(v, A); }
  void tangent(const ConstVecRef& w, MatRef T) const override { g.tangent(w, T); }
  void tangent_inv_transpose(const ConstVecRef& w, MatRef T) const override { g.tangent_inv_transpose(w, T); }
  double structure_defect(const ConstVecRef& q) const override { return g.structure_defect(q); }
  SO3Group g;
};

TEST(DefaultDerivative, CentralDifferencesMatchTheAnalyticSO3) {
  SO3WithDefaultDerivative G;
  std::mt19937_64 rng(9);
  Mat D(3, 3), Da(3, 3);
  for (int t = 0; t < 20; ++t) {
    const Vec w = random_w(3, rng, 2.5), x = random_w(3, rng, 2.0);
    G.d_tangent_inv_transpose(w, x, D);
    G.g.d_tangent_inv_transpose(w, x, Da);
    EXPECT_LT((D - Da).norm(), 1e-9 * std::max(1.0, x.norm()));
  }
}

// ---------------------------------------------------------------------------
// Factory.

TEST(Factory, ValidSpecs) {
  struct Case {
    const char* spec;
    int state, nq, n;
    const char* name;
  };
  const Case cases[] = {
      {"R3", 0, 3, 3, "R3"},          {"R1", 0, 1, 1, "R1"},
      {"R12", 0, 12, 12, "R12"},      {"Rn", 10, 5, 5, "R5"},
      {"SO3", 0, 9, 3, "SO3"},        {"S3", 0, 4, 3, "S3"},
      {"SE3", 0, 12, 6, "SE3"},       {"S3sdR3", 0, 7, 6, "S3sdR3"},
      {"S3xR3", 0, 7, 6, "S3xR3"},    {"S3xR3^2", 0, 10, 9, "S3xR3xR3"},
      {"SE3^2xR2", 0, 26, 14, "SE3xSE3xR2"}, {"SO3xS3sdR3xR1", 0, 17, 10, "SO3xS3sdR3xR1"},
      {"S3^1", 0, 4, 3, "S3"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<LieGroup> G;
    ASSERT_NO_THROW(G = make_lie_group(c.spec, c.state)) << c.spec;
    EXPECT_EQ(G->coord_size(), c.nq) << c.spec;
    EXPECT_EQ(G->dim(), c.n) << c.spec;
    EXPECT_EQ(G->name(), c.name) << c.spec;
  }
  EXPECT_EQ(dynamic_cast<ProductGroup*>(make_lie_group("S3", 0).get()), nullptr);
  EXPECT_EQ(dynamic_cast<ProductGroup*>(make_lie_group("S3^1", 0).get()), nullptr);
  EXPECT_NE(dynamic_cast<ProductGroup*>(make_lie_group("S3xR3", 0).get()), nullptr);
}

TEST(Factory, InvalidSpecsThrowInvalidOption) {
  struct Case {
    const char* spec;
    int state;
    const char* bad;  // the part the message must name
  };
  const Case cases[] = {
      {"", 0, "\"\""},          {"so3", 0, "\"so3\""},      {"R0", 0, "\"R0\""},
      {"R", 0, "\"R\""},        {"R03", 0, "\"R03\""},      {"R-3", 0, "\"R-3\""},
      {"S3x", 0, "\"\""},       {"xS3", 0, "\"\""},         {"S3xxR3", 0, "\"\""},
      {"S3^0", 0, "\"S3^0\""},  {"S3^", 0, "\"S3^\""},      {"S3^-1", 0, "\"S3^-1\""},
      {"R3^2^2", 0, "\"R3^2^2\""}, {"RnxS3", 0, "\"Rn\""},  {"SE(3)", 0, "\"SE(3)\""},
      {" S3", 0, "\" S3\""},    {"S3 x R3", 0, "\"S3 \""},  {"SO3xSE2", 0, "\"SE2\""},
      {"Rn", 7, "state size"},  {"Rn", 0, "state size"},
  };
  for (const Case& c : cases) {
    try {
      (void)make_lie_group(c.spec, c.state);
      ADD_FAILURE() << "no error for \"" << c.spec << "\"";
    } catch (const InputError& e) {
      EXPECT_EQ(e.id, "invalidOption") << c.spec;
      const std::string msg = e.what();
      EXPECT_NE(msg.find(c.bad), std::string::npos) << c.spec << ": " << msg;
      if (std::string(c.bad) != "state size") {
        EXPECT_NE(msg.find("in \"" + std::string(c.spec) + "\""), std::string::npos) << msg;
        EXPECT_NE(msg.find("S3sdR3"), std::string::npos) << msg;
      }
    }
  }
}

}  // namespace
