// LieChainProblem.hpp — a chain of N rigid rods on (S³ × R³)^N joined by
// spherical joints, the first pinned at the origin: body k has the unit
// quaternion p_k and the centre of mass x_k, v_k = [Ω_k; ẋ_k] (body angular
// velocity, translational velocity), M_k = blkdiag(Jc, m I), gravity.
// Rod k runs from its top x_k + R_k a to its bottom x_k − R_k a, a = (0, ℓ/2, 0):
//   Φ_0 = x_1 + R_1 a,                                 (pin)
//   Φ_k = (x_k − R_k a) − (x_{k+1} + R_{k+1} a),       k = 1..N−1 (joints),
// m = 3N constraints, and with d/dt (R a) = R Ω̂ a = −R â Ω the rows of
// B = dΦ along left translations: [−R_1 â, I] for the pin, [R_k â, I] and
// [R_{k+1} â, −I] for joint k.  B is given dense or sparse (8 nonzeros a
// row: â has two per row).
#ifndef ODEPKG_LIE_CHAIN_PROBLEM_HPP
#define ODEPKG_LIE_CHAIN_PROBLEM_HPP

#include "LieTestProblems.hpp"
#include "lie/BlockMass.hpp"
#include "lie/LieGroupFactory.hpp"
#include "lie/LieGroupProblem.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace odepkg::test {

struct RodChain {
  int N;
  double mass = 1.0, half = 0.5;  // rod of length 1
  Eigen::Vector3d Jc{1.0 / 12, 1e-2, 1.0 / 12}, gvec{0, 0, -9.81};
  explicit RodChain(int n) : N(n) {}

  int nq() const { return 7 * N; }
  int n() const { return 6 * N; }
  int m() const { return 3 * N; }
  Eigen::Vector3d a() const { return {0, half, 0}; }

  /// The factor-wise M: S3 block Jc (3 x 3), then R3 as three scalars m.
  lie::BlockMass block_mass() const {
    std::vector<int> sizes;
    std::vector<double> v;
    for (int k = 0; k < N; ++k) {
      sizes.push_back(3);
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) v.push_back(i == j ? Jc(i) : 0.0);
      for (int i = 0; i < 3; ++i) {
        sizes.push_back(1);
        v.push_back(mass);
      }
    }
    return lie::BlockMass(sizes, v);
  }
  Mat dense_mass() const { return block_mass().dense(); }

  void force(VecRef f) const {
    for (int k = 0; k < N; ++k) {
      f.segment(6 * k, 3).setZero();
      f.segment(6 * k + 3, 3) = -mass * gvec;
    }
  }
  Mat R(const ConstVecRef& q, int k) const { return quat_to_rot(q.segment(7 * k, 4)); }
  Eigen::Vector3d x(const ConstVecRef& q, int k) const { return q.segment(7 * k + 4, 3); }

  void phi(const ConstVecRef& q, VecRef out) const {
    out.head(3) = x(q, 0) + R(q, 0) * a();
    for (int k = 0; k + 1 < N; ++k)
      out.segment(3 * (k + 1), 3) = (x(q, k) - R(q, k) * a()) - (x(q, k + 1) + R(q, k + 1) * a());
  }
  /// B as triplets (row, column, value), exact zeros of R â kept out.
  void triplets(const ConstVecRef& q, std::vector<Eigen::Triplet<double>>& t) const {
    t.clear();
    const Mat A = skew(a());
    auto put = [&](int row, int body, const Mat& rot, double sign) {
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j)
          if (rot(i, j) != 0.0) t.emplace_back(row + i, 6 * body + j, rot(i, j));
        t.emplace_back(row + i, 6 * body + 3 + i, sign);
      }
    };
    put(0, 0, Mat(-R(q, 0) * A), 1.0);
    for (int k = 0; k + 1 < N; ++k) {
      put(3 * (k + 1), k, Mat(R(q, k) * A), 1.0);
      put(3 * (k + 1), k + 1, Mat(R(q, k + 1) * A), -1.0);
    }
  }
  void grad_sparse(const ConstVecRef& q, SpMat& B) const {
    std::vector<Eigen::Triplet<double>> t;
    triplets(q, t);
    B.resize(m(), n());
    B.setFromTriplets(t.begin(), t.end());
  }
  void grad_dense(const ConstVecRef& q, MatRef B) const {
    SpMat S;
    grad_sparse(q, S);
    B = Mat(S);
  }

  double energy(const Vec& y) const {
    double E = 0;
    for (int k = 0; k < N; ++k) {
      const Eigen::Vector3d w = y.segment(nq() + 6 * k, 3), u = y.segment(nq() + 6 * k + 3, 3);
      E += 0.5 * w.dot(Jc.cwiseProduct(w)) + 0.5 * mass * u.squaredNorm() - mass * gvec.dot(x(y.head(nq()), k));
    }
    return E;
  }

  /// Horizontal along −y from the origin with a twist and swing (it falls
  /// and whips; v0 not yet consistent: project_initial_data), or hanging
  /// down along −z (the rods turned by π/2 about x) turning rigidly about
  /// the x axis through the pin at `swing` rad/s (consistent).
  Vec y0(bool hanging = false, double swing = 0.1) const {
    Vec y(nq() + n());
    const double s = std::sqrt(0.5);
    for (int k = 0; k < N; ++k) {
      if (hanging) {
        y.segment(7 * k, 4) << s, s, 0, 0;
        y.segment(7 * k + 4, 3) << 0, 0, -(2 * k + 1) * half;
      } else {
        y.segment(7 * k, 4) << 1, 0, 0, 0;
        y.segment(7 * k + 4, 3) << 0, -(2 * k + 1) * half, 0;
      }
      if (hanging) {  // a rigid rotation about the x axis through the pin
        y.segment(nq() + 6 * k, 3) << swing, 0.0, 0.0;  // body x = world x
        y.segment(nq() + 6 * k + 3, 3) = Eigen::Vector3d(swing, 0, 0).cross(Eigen::Vector3d(y.segment(7 * k + 4, 3)));
      } else {  // Ω: twist and swing
        y.segment(nq() + 6 * k, 3) << 0.3, 0.0, 0.5;
        y.segment(nq() + 6 * k + 3, 3) << 0.1, 0.0, 0.0;
      }
    }
    return y;
  }

  /// The problem on (S3xR3)^N with M by blocks and B sparse, or with a
  /// dense M and B.
  std::unique_ptr<lie::LieGroupProblem> problem(bool sparse) const {
    const std::string spec = "(S3xR3)^" + std::to_string(N);
    auto f = [c = *this](double, const ConstVecRef&, VecRef out) { c.force(out); };
    std::unique_ptr<lie::LieGroupProblem> lp =
        sparse ? std::make_unique<lie::LieGroupProblem>(lie::make_lie_group(spec, nq() + n()), block_mass(), f)
               : std::make_unique<lie::LieGroupProblem>(lie::make_lie_group(spec, nq() + n()), dense_mass(), f);
    const RodChain c = *this;
    lp->set_constraints(
        m(), [c](const ConstVecRef& q, VecRef out) { c.phi(q, out); },
        [c](const ConstVecRef& q, MatRef B) { c.grad_dense(q, B); });
    if (sparse) lp->set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& B) { c.grad_sparse(q, B); });
    return lp;
  }
};

}  // namespace odepkg::test

#endif
