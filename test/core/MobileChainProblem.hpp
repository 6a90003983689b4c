// MobileChainProblem.hpp — the planar hanging chain of ChainProblem.hpp
// with a non-separable H, a height-dependent mobility,
//   H = sum_k ( c(y_k) |p_k|^2 / 2 + y_k ),   c(y) = 1 + eps sin y,
// whose Hessian (7 entries per mass: H_{y y} = c''(y) |p_k|^2 / 2,
// H_{y p_k} = c'(y) p_k, H_pp = c I) can be given sparse: the test problem
// of the general RATTLE/SHAKE on sparse matrices.
#ifndef ODEPKG_TEST_MOBILE_CHAIN_PROBLEM_HPP
#define ODEPKG_TEST_MOBILE_CHAIN_PROBLEM_HPP

#include "ChainProblem.hpp"
#include "HamiltonianProblem.hpp"

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

namespace odepkg::test {

/// No guard around the user functions.
struct NoGuard {};

struct MobileChain {
  Chain chain;
  double eps = 0.1;

  int d() const { return chain.d(); }
  void field(const ConstVecRef& x, VecRef dx) const {
    const int d = this->d();
    for (int i = 0; i < d; i += 2) {
      const double y = x(i + 1), px = x(d + i), py = x(d + i + 1), c = 1.0 + eps * std::sin(y);
      dx(i) = c * px;
      dx(i + 1) = c * py;
      dx(d + i) = 0.0;
      dx(d + i + 1) = -(0.5 * eps * std::cos(y) * (px * px + py * py) + 1.0);
    }
  }
  double energy(const Vec& x) const {
    const int d = this->d();
    double e = 0.0;
    for (int i = 0; i < d; i += 2) {
      const double y = x(i + 1), c = 1.0 + eps * std::sin(y);
      e += 0.5 * c * (x(d + i) * x(d + i) + x(d + i + 1) * x(d + i + 1)) + y;
    }
    return e;
  }
  template <class Put>
  void hessian_entries(const ConstVecRef& x, Put put) const {
    const int d = this->d();
    for (int i = 0; i < d; i += 2) {
      const double y = x(i + 1), px = x(d + i), py = x(d + i + 1), c = 1.0 + eps * std::sin(y);
      const double c1 = eps * std::cos(y), c2 = -eps * std::sin(y);
      put(i + 1, i + 1, 0.5 * c2 * (px * px + py * py));
      put(i + 1, d + i, c1 * px);
      put(i + 1, d + i + 1, c1 * py);
      put(d + i, i + 1, c1 * px);
      put(d + i + 1, i + 1, c1 * py);
      put(d + i, d + i, c);
      put(d + i + 1, d + i + 1, c);
    }
  }

  /// sparse: G and the Hessian sparse; `hessian`: the Hessian given (else
  /// differences of f).  A `Guard` is constructed around every call of a
  /// user function (a test's allocation checks paused there).
  template <class Guard = NoGuard>
  std::unique_ptr<HamiltonianProblem> make(bool sparse, bool hessian = true) const {
    const MobileChain self = *this;
    auto P = std::make_unique<HamiltonianProblem>(d(), [self](double, const ConstVecRef& x, VecRef dx) {
      [[maybe_unused]] const Guard guard;
      self.field(x, dx);
    });
    const Chain c = chain;
    P->set_constraints(
        c.m(),
        [c](const ConstVecRef& q, VecRef out) {
          [[maybe_unused]] const Guard guard;
          c.g(q, out);
        },
        sparse ? HamiltonianProblem::ConstraintGrad() : [c](const ConstVecRef& q, MatRef G) { c.G_dense(q, G); });
    if (sparse)
      P->set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& G) {
        [[maybe_unused]] const Guard guard;
        c.G_sparse(q, G);
      });
    if (hessian && !sparse)
      P->set_hessian([self](double, const ConstVecRef& x, MatRef H) {
        H.setZero();
        self.hessian_entries(x, [&](int i, int j, double v) { H(i, j) = v; });
      });
    if (hessian && sparse)
      P->set_sparse_hessian([self](double, const ConstVecRef& x, SpMat& H) {
        [[maybe_unused]] const Guard guard;
        std::vector<Eigen::Triplet<double>> t;
        self.hessian_entries(x, [&](int i, int j, double v) { t.emplace_back(i, j, v); });
        H.resize(2 * self.d(), 2 * self.d());
        H.setFromTriplets(t.begin(), t.end());
      });
    return P;
  }

  /// (|g|_inf, |G H_p|_inf) at x.
  std::pair<double, double> residuals(const Vec& x) const {
    const int d = this->d();
    Vec f(2 * d);
    field(x, f);
    Vec gv(chain.m());
    chain.g(x.head(d), gv);
    SpMat G;
    chain.G_sparse(x.head(d), G);
    const Vec hid = G * f.head(d);
    return {gv.lpNorm<Eigen::Infinity>(), hid.lpNorm<Eigen::Infinity>()};
  }
};

}  // namespace odepkg::test

#endif
