// ChainProblem.hpp — the planar hanging chain of the sparse-gradient tests:
// N unit point masses x_1..x_N in the plane joined by unit links, the first
// link pinned at the origin x_0 = 0:
//   H = |p|^2/2 + sum_k y_k,   g_k(q) = |x_k - x_{k-1}|^2 - 1  (k = 1..N),
// q = [x_1; y_1; x_2; y_2; ...] (d = 2N).  Row k of G = dg/dq has 4 entries
// (2 for k = 1), so G G^T is tridiagonal.  Options: `duplicate` lists link 1
// twice (m = N + 1, rank N: a redundant, consistent set); `ring` adds the
// closing link |x_N|^2 - R^2 (a closed polygon pinned at the origin).
#ifndef ODEPKG_TEST_CHAIN_PROBLEM_HPP
#define ODEPKG_TEST_CHAIN_PROBLEM_HPP

#include "HamiltonianProblem.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace odepkg::test {

struct Chain {
  int N = 10;
  bool duplicate = false;
  bool ring = false;
  double ring_R2 = 1.0;  ///< squared length of the closing link
  /// Prune exact zeros from the sparse G, as Octave's sparse() does: the
  /// pattern then changes along the motion.
  bool prune = false;

  int d() const { return 2 * N; }
  int m() const { return N + (duplicate ? 1 : 0) + (ring ? 1 : 0); }

  static void field(double, const ConstVecRef& x, VecRef dx) {
    const Eigen::Index d = x.size() / 2;
    dx.head(d) = x.tail(d);
    for (Eigen::Index i = 0; i < d; i += 2) {
      dx(d + i) = 0.0;
      dx(d + i + 1) = -1.0;
    }
  }
  double energy(const Vec& x) const {
    double e = 0.5 * x.tail(d()).squaredNorm();
    for (int k = 0; k < N; ++k) e += x(2 * k + 1);
    return e;
  }

  void g(const ConstVecRef& q, VecRef out) const {
    for (int k = 0; k < N; ++k) {
      const double ax = q(2 * k) - (k ? q(2 * k - 2) : 0.0), ay = q(2 * k + 1) - (k ? q(2 * k - 1) : 0.0);
      out(k) = ax * ax + ay * ay - 1.0;
    }
    int r = N;
    if (duplicate) out(r++) = out(0);
    if (ring) out(r) = q(2 * N - 2) * q(2 * N - 2) + q(2 * N - 1) * q(2 * N - 1) - ring_R2;
  }

  /// The entries of G as triplets (row, col, value).
  template <class Put>
  void entries(const ConstVecRef& q, Put put) const {
    auto link = [&](int row, int k) {
      const double ax = q(2 * k) - (k ? q(2 * k - 2) : 0.0), ay = q(2 * k + 1) - (k ? q(2 * k - 1) : 0.0);
      put(row, 2 * k, 2 * ax);
      put(row, 2 * k + 1, 2 * ay);
      if (k) {
        put(row, 2 * k - 2, -2 * ax);
        put(row, 2 * k - 1, -2 * ay);
      }
    };
    for (int k = 0; k < N; ++k) link(k, k);
    int r = N;
    if (duplicate) link(r++, 0);
    if (ring) {
      put(r, 2 * N - 2, 2 * q(2 * N - 2));
      put(r, 2 * N - 1, 2 * q(2 * N - 1));
    }
  }
  void G_dense(const ConstVecRef& q, MatRef G) const {
    G.setZero();
    entries(q, [&](int i, int j, double v) { G(i, j) = v; });
  }
  void G_sparse(const ConstVecRef& q, SpMat& G) const {
    std::vector<Eigen::Triplet<double>> t;
    t.reserve(4 * m());
    entries(q, [&](int i, int j, double v) { t.emplace_back(i, j, v); });
    G.resize(m(), d());
    G.setFromTriplets(t.begin(), t.end());
    if (prune) G.prune(0.0);
  }

  /// Straight chain at angle `a` below the horizontal (a = 0: horizontal),
  /// at rest (on the manifold: g = 0, G p = 0).
  Vec straight(double a) const {
    Vec x = Vec::Zero(2 * d());
    for (int k = 0; k < N; ++k) {
      x(2 * k) = (k + 1) * std::cos(a);
      x(2 * k + 1) = -(k + 1) * std::sin(a);
    }
    return x;
  }
  /// A zigzag at rest: link k at angle a (k even) or b (k odd) below the
  /// horizontal; a generic, full-rank configuration.
  Vec zigzag(double a, double b) const {
    Vec x = Vec::Zero(2 * d());
    double px = 0, py = 0;
    for (int k = 0; k < N; ++k) {
      const double c = k % 2 ? b : a;
      px += std::cos(c);
      py -= std::sin(c);
      x(2 * k) = px;
      x(2 * k + 1) = py;
    }
    return x;
  }

  std::unique_ptr<HamiltonianProblem> make(bool sparse) const {
    auto P = std::make_unique<HamiltonianProblem>(d(), &Chain::field);
    const Chain c = *this;
    P->set_constraints(
        m(), [c](const ConstVecRef& q, VecRef out) { c.g(q, out); },
        sparse ? HamiltonianProblem::ConstraintGrad() : [c](const ConstVecRef& q, MatRef G) { c.G_dense(q, G); });
    if (sparse) P->set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& G) { c.G_sparse(q, G); });
    return P;
  }

  /// (|g(q)|_inf, |G(q) H_p|_inf) of x, by sparse products.
  std::pair<double, double> residuals(const Vec& x) const {
    Vec gv(m());
    g(x.head(d()), gv);
    SpMat G;
    G_sparse(x.head(d()), G);
    const Vec hid = G * x.tail(d());
    return {gv.lpNorm<Eigen::Infinity>(), hid.lpNorm<Eigen::Infinity>()};
  }
};

/// A sparse matrix as Octave holds it (compressed columns, 64-bit
/// indices), for a ConstraintGradFcn given as a view
/// (HamiltonianProblem::set_sparse_constraint_grad_view).
struct Csc64 {
  explicit Csc64(const SpMat& a)  // a compressed
      : rows(a.rows()), cols(a.cols()), outer(a.outerIndexPtr(), a.outerIndexPtr() + a.cols() + 1),
        inner(a.innerIndexPtr(), a.innerIndexPtr() + a.nonZeros()), values(a.valuePtr(), a.valuePtr() + a.nonZeros()) {}
  CscView<std::int64_t> view() const {
    return {rows, cols, static_cast<Eigen::Index>(inner.size()), outer.data(), inner.data(), values.data()};
  }
  Eigen::Index rows, cols;
  std::vector<std::int64_t> outer, inner;
  std::vector<double> values;
};

}  // namespace odepkg::test

#endif
