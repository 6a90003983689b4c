// derivative_check_test.cc — DerivativeCheck (src/core/DerivativeCheck.hpp)
// and its uses: wrong user derivatives (a flipped sign, a missing factor 2)
// are caught with a bounded number of calls at 10^5 unknowns, correct ones
// pass, every built-in Lie group passes the group identities and a group
// with a wrong tangent or ad fails them, and the central-difference
// gradient is accurate to ~1e-10 with an error estimate that bounds it.
#include "DerivativeCheck.hpp"
#include "HamiltonianProblem.hpp"
#include "constrained/ConstraintSet.hpp"
#include "lie/LieGroupCheck.hpp"
#include "lie/LieGroupFactory.hpp"
#include "lie/LieGroupProblem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

using namespace odepkg;
using namespace odepkg::lie;

namespace {

/// The id of the InputError `fn` throws ("" if none), its message in `msg`.
template <class Fn>
std::string thrown_id(Fn&& fn, std::string* msg = nullptr) {
  try {
    fn();
  } catch (const InputError& e) {
    if (msg) *msg = e.what();
    return e.id;
  }
  return "";
}

/// A sphere-like constraint in R^d, g_1 = |q|^2 - 1, g_2 = sum sin(q_j) (m = 2),
/// with a gradient that may be wrong: `factor` scales it, `flip` negates row 2.
HamiltonianProblem constrained_problem(int d, double factor, bool flip) {
  HamiltonianProblem p(d, [d](double, const ConstVecRef& x, VecRef dx) {
    dx.head(d) = x.tail(d);
    dx.tail(d) = -x.head(d);
  });
  p.set_constraints(
      2,
      [](const ConstVecRef& q, VecRef g) {
        g(0) = q.squaredNorm() - 1;
        g(1) = q.array().sin().sum();
      },
      [factor, flip](const ConstVecRef& q, MatRef G) {
        G.row(0) = factor * 2 * q.transpose();
        G.row(1) = (flip ? -1.0 : 1.0) * q.array().cos().matrix().transpose();
      });
  return p;
}

Vec test_state(int d) {
  Vec x(2 * d);
  for (int i = 0; i < 2 * d; ++i) x(i) = std::sin(1.0 + i) / std::sqrt(d);
  return x;
}

}  // namespace

TEST(DerivativeCheck, CorrectGradientPassesWrongOnesFailAtTenToTheFiveUnknowns) {
  const int d = 100000;
  const Vec x = test_state(d);
  {
    HamiltonianProblem p = constrained_problem(d, 1.0, false);
    EXPECT_EQ(thrown_id([&] { p.check_derivatives(0.0, x); }), "");
    // 4 calls of g per direction, one G: O(1) whatever d
    EXPECT_EQ(p.stats().constraint_evals, 4 * DerivativeCheck::kDirections);
    EXPECT_EQ(p.stats().constraint_grad_evals, 1);
  }
  for (const auto& [factor, flip] : {std::pair{0.5, false}, std::pair{1.0, true}}) {
    HamiltonianProblem p = constrained_problem(d, factor, flip);
    std::string msg;
    EXPECT_EQ(thrown_id([&] { p.check_derivatives(0.0, x); }, &msg), "derivativeCheck");
    EXPECT_NE(msg.find("ConstraintGradFcn"), std::string::npos) << msg;
    EXPECT_NE(msg.find("accurate to"), std::string::npos) << msg;
    EXPECT_LE(p.stats().constraint_evals, 4 * DerivativeCheck::kDirections);
    EXPECT_EQ(p.stats().constraint_grad_evals, 1);
  }
}

TEST(DerivativeCheck, HamiltonianAndConstraintHessians) {
  const int d = 3;
  // H = |p|^2/2 + sum cos(q_j) q_{j+1}: f = [p; -dV/dq]
  auto dV = [](const ConstVecRef& q) {
    Vec g = Vec::Zero(3);
    for (int j = 0; j < 2; ++j) {
      g(j) += -std::sin(q(j)) * q(j + 1);
      g(j + 1) += std::cos(q(j));
    }
    return g;
  };
  auto hessV = [](const ConstVecRef& q) {
    Mat H = Mat::Zero(3, 3);
    for (int j = 0; j < 2; ++j) {
      H(j, j) += -std::cos(q(j)) * q(j + 1);
      H(j, j + 1) += -std::sin(q(j));
      H(j + 1, j) += -std::sin(q(j));
    }
    return H;
  };
  for (double sign : {1.0, -1.0}) {
    HamiltonianProblem p(d, [&](double, const ConstVecRef& x, VecRef dx) {
      dx.head(3) = x.tail(3);
      dx.tail(3) = -dV(x.head(3));
    });
    p.set_hessian([&, sign](double, const ConstVecRef& x, MatRef H) {
      H.setZero();
      H.topLeftCorner(3, 3) = sign * hessV(x.head(3));
      H.bottomRightCorner(3, 3).setIdentity();
    });
    const std::string id = thrown_id([&] { p.check_derivatives(0.0, test_state(d) * 3); });
    EXPECT_EQ(id, sign > 0 ? "" : "derivativeCheck");
  }
  // ConstraintHessFcn: g = |q|^2 - 1, Hessian 2 I (right) or I (wrong)
  for (double c : {2.0, 1.0}) {
    HamiltonianProblem p(d, [](double, const ConstVecRef& x, VecRef dx) { dx = x; });
    p.set_constraints(
        1, [](const ConstVecRef& q, VecRef g) { g(0) = q.squaredNorm() - 1; },
        [](const ConstVecRef& q, MatRef G) { G = 2 * q.transpose(); },
        [c](const ConstVecRef&, MatRef H) { H = c * Mat::Identity(3, 3); });
    std::string msg;
    EXPECT_EQ(thrown_id([&] { p.check_derivatives(0.0, test_state(d)); }, &msg), c == 2.0 ? "" : "derivativeCheck");
    if (c == 1.0) {
      EXPECT_NE(msg.find("ConstraintHessFcn"), std::string::npos) << msg;
    }
  }
}

TEST(DerivativeCheck, PhaseSpaceGradient) {
  const int d = 2;
  Stats stats;
  for (double factor : {1.0, 2.0}) {
    PhaseSpaceConstraints g(
        d, 1, stats, [](const ConstVecRef& y, VecRef out) { out(0) = y.squaredNorm() - 1; },
        [factor](const ConstVecRef& y, MatRef Dg) { Dg = 2 * factor * y.transpose(); });
    EXPECT_EQ(thrown_id([&] { g.check_derivatives(test_state(d)); }), factor == 1.0 ? "" : "derivativeCheck");
  }
}

TEST(DerivativeCheck, CentralDifferenceGradientIsAccurateAndItsErrorBounded) {
  // g = [|q|^2 - 1; sum sin(q_j) q_j^2] on R^4 at q of size ~1: forward
  // differences were off by ~1e-8; central ones by ~1e-10, within the estimate.
  const int d = 4;
  HamiltonianProblem p(d, [](double, const ConstVecRef& x, VecRef dx) { dx = x; });
  p.set_constraints(2, [](const ConstVecRef& q, VecRef g) {
    g(0) = q.squaredNorm() - 1;
    g(1) = (q.array().sin() * q.array().square()).sum();
  });
  Vec q(d);
  q << 0.3, -0.8, 1.7, 0.45;
  Mat G(2, d), Gexact(2, d);
  ASSERT_TRUE(p.constraint_grad(q, G));
  Gexact.row(0) = 2 * q.transpose();
  Gexact.row(1) = (q.array().cos() * q.array().square() + 2 * q.array() * q.array().sin()).matrix().transpose();
  const double err = (G - Gexact).cwiseAbs().maxCoeff();
  EXPECT_LT(err, 2e-10);
  EXPECT_GT(p.stats().max_grad_error, 0.0);
  EXPECT_LE(err, p.stats().max_grad_error);
  // the bound on |(G_fd - G) w| holds for any w
  Vec w(d);
  w << 1.0, -2.0, 0.5, 3.0;
  EXPECT_LE(((G - Gexact) * w).cwiseAbs().maxCoeff(), p.constraint_grad_error(w));
  EXPECT_LT(p.constraint_grad_error(w), 100 * 2e-10 * w.cwiseAbs().sum());
}

TEST(LieGroupCheck, BuiltInGroupsPass) {
  for (const char* name : {"R3", "SO3", "S3", "SE3", "S3sdR3", "S3xR3", "SO3xR3", "S3xR3^2"}) {
    auto G = make_lie_group(name, 0);
    Vec e(G->coord_size()), q(G->coord_size()), w(G->dim());
    G->identity(e);
    for (int i = 0; i < G->dim(); ++i) w(i) = 0.3 * std::cos(1.0 + 2 * i);
    G->compose_exp(e, w, q);
    EXPECT_EQ(thrown_id([&] { check_lie_group(*G, q); }), "") << name;
  }
}

namespace {

/// A built-in group with one operation made wrong.
class WrongGroup final : public LieGroup {
 public:
  enum class Slip { TangentSign, AdSign, TangentInverse };
  WrongGroup(std::unique_ptr<LieGroup> g, Slip s) : g_(std::move(g)), slip_(s) {}
  std::string name() const override { return "wrong " + g_->name(); }
  int coord_size() const override { return g_->coord_size(); }
  int dim() const override { return g_->dim(); }
  void identity(VecRef q) const override { g_->identity(q); }
  void compose_exp(const ConstVecRef& q, const ConstVecRef& w, VecRef out) const override {
    g_->compose_exp(q, w, out);
  }
  void log_between(const ConstVecRef& a, const ConstVecRef& b, VecRef w) const override { g_->log_between(a, b, w); }
  void ad(const ConstVecRef& v, MatRef A) const override {
    g_->ad(v, A);
    if (slip_ == Slip::AdSign) A = -A;
  }
  void tangent(const ConstVecRef& w, MatRef T) const override {
    if (slip_ == Slip::TangentSign) {
      g_->tangent(-w, T);  // the other convention: I + ad(w)/2 + ...
      return;
    }
    g_->tangent(w, T);
  }
  void tangent_inv_transpose(const ConstVecRef& w, MatRef Tit) const override {
    g_->tangent_inv_transpose(w, Tit);
    if (slip_ == Slip::TangentInverse) Tit.transposeInPlace();
  }
  double structure_defect(const ConstVecRef& q) const override { return g_->structure_defect(q); }

 private:
  std::unique_ptr<LieGroup> g_;
  Slip slip_;
};

}  // namespace

TEST(LieGroupCheck, WrongTangentAdOrInverseFails) {
  using Slip = WrongGroup::Slip;
  const std::pair<Slip, const char*> cases[] = {{Slip::TangentSign, "LieGroup.tangent"},
                                                {Slip::AdSign, "LieGroup.ad"},
                                                {Slip::TangentInverse, "LieGroup.tangent_inv_transpose"}};
  for (const auto& [slip, field] : cases) {
    WrongGroup G(make_lie_group("SO3", 0), slip);
    Vec q(9);
    G.identity(q);
    std::string msg;
    EXPECT_EQ(thrown_id([&] { check_lie_group(G, q); }, &msg), "derivativeCheck") << field;
    EXPECT_NE(msg.find(field), std::string::npos) << msg;
  }
}

TEST(LieGroupCheck, ConstraintGradientAlongTheGroup) {
  // Phi(q) = R(q)' e3 - e3 on SO(3) for a rotation R (column-major): B by
  // differences is right; a B with a wrong sign fails.
  for (double sign : {1.0, -1.0}) {
    auto group = make_lie_group("SO3", 0);
    LieGroupProblem lp(std::move(group), Mat::Identity(3, 3), [](double, const ConstVecRef&, VecRef f) { f.setZero(); });
    auto phi = [](const ConstVecRef& q, VecRef out) {  // third row of R (R' e3), minus e3, first 2
      out(0) = q(2);
      out(1) = q(5);
    };
    // d/ds R exp(s v~) = R v~: row 3 of R v~ = (R' e3) x v ... via differences for the reference
    LieGroupProblem ref(make_lie_group("SO3", 0), Mat::Identity(3, 3),
                        [](double, const ConstVecRef&, VecRef f) { f.setZero(); });
    ref.set_constraints(2, phi);
    lp.set_constraints(2, phi, [&ref, sign](const ConstVecRef& q, MatRef B) {
      ref.constraint_grad(q, B);
      B *= sign;
    });
    Vec e(9), q(9), w(3);
    lp.group().identity(e);
    w << 0.4, -0.3, 0.7;
    lp.group().compose_exp(e, w, q);
    EXPECT_EQ(thrown_id([&] { lp.check_derivatives(q); }), sign > 0 ? "" : "derivativeCheck");
  }
}
