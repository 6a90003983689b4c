// LieTestProblems.hpp — rigid-body fixtures of the Lie-group tests: the hat
// map, rotation matrices of unit quaternions, and Hante's heavy top (about
// its support on S³, and constrained on S³ × R³).
#ifndef ODEPKG_LIE_TEST_PROBLEMS_HPP
#define ODEPKG_LIE_TEST_PROBLEMS_HPP

#include "Types.hpp"
#include "lie/LieGroupFactory.hpp"
#include "lie/LieGroupProblem.hpp"

#include <Eigen/Geometry>

#include <memory>
#include <utility>

namespace odepkg::test {

/// hat(a): hat(a) b = a × b.
inline Mat skew(const Eigen::Vector3d& a) {
  Mat s(3, 3);
  s << 0, -a(2), a(1), a(2), 0, -a(0), -a(1), a(0), 0;
  return s;
}

/// R(p) of a unit quaternion p = [p0; p1; p2; p3].
inline Mat quat_to_rot(const ConstVecRef& p) {
  const double a = p(0), b = p(1), c = p(2), d = p(3);
  Mat R(3, 3);
  R << a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c),
      2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b),
      2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d;
  return R;
}

// The heavy top of Hante's heavy_top (github.com/StHante/heavy_top): mass 15,
// inertia about the centre of
// mass diag(0.234375, 0.46875, 0.234375), centre of mass X = (0, 1, 0) in the
// body frame from the fixed support, gravity (0, 0, -9.81).
struct HeavyTop {
  double mass = 15.0;
  Eigen::Vector3d X{0, 1, 0}, gvec{0, 0, -9.81};
  Mat Jc = Eigen::Vector3d(0.234375, 0.46875, 0.234375).asDiagonal();
  Eigen::Vector3d omega0;
  explicit HeavyTop(bool fast) {
    omega0 = fast ? Eigen::Vector3d(0, 150, -4.61538) : Eigen::Vector3d(0, 1.5, -0.0461538);
  }
  /// Inertia about the support: Jc + m (|X|² I − X Xᵀ).
  Mat J() const { return Jc + mass * (X.squaredNorm() * Mat::Identity(3, 3) - X * X.transpose()); }
  /// f = −(body torque of gravity about the support) = −X × (Rᵀ m g).
  Eigen::Vector3d f_rot(const Mat& R) const {
    const Eigen::Vector3d Fb = R.transpose() * (mass * gvec);
    return -X.cross(Fb);
  }
  double energy_rot(const Mat& R, const ConstVecRef& w) const {
    return 0.5 * w.dot(J() * w) - mass * gvec.dot(R * X);
  }
};

// ---- the heavy top about its support on S³ × R³ with Φ = x − R(p) X ---------
// q = [p; x], v = [Ω; ẋ], M = blkdiag(Jc, m I), B = [R X̂, I].
inline std::unique_ptr<lie::LieGroupProblem> constrained_top(const HeavyTop& top) {
  Mat M = Mat::Zero(6, 6);
  M.topLeftCorner(3, 3) = top.Jc;
  M.bottomRightCorner(3, 3) = top.mass * Mat::Identity(3, 3);
  auto lp = std::make_unique<lie::LieGroupProblem>(lie::make_lie_group("S3xR3", 13), M,
                                              [top](double, const ConstVecRef&, VecRef f) {
                                                f.head(3).setZero();
                                                f.tail(3) = -top.mass * top.gvec;
                                              });
  lp->set_constraints(
      3, [top](const ConstVecRef& q, VecRef phi) { phi = q.tail(3) - quat_to_rot(q.head(4)) * top.X; },
      [top](const ConstVecRef& q, MatRef B) {
        B.leftCols(3) = quat_to_rot(q.head(4)) * skew(top.X);
        B.rightCols(3).setIdentity();
      });
  return lp;
}

inline Vec constrained_top_y0(const HeavyTop& top) {
  Vec y0(13);
  y0 << 1, 0, 0, 0, top.X, top.omega0, top.omega0.cross(top.X);
  return y0;
}

/// |Φ| and |B v| of a state of constrained_top.
inline std::pair<double, double> residuals(const HeavyTop& top, const Vec& y) {
  const Mat R = quat_to_rot(y.head(4));
  Mat B(3, 6);
  B.leftCols(3) = R * skew(top.X);
  B.rightCols(3).setIdentity();
  return {(y.segment(4, 3) - R * top.X).lpNorm<Eigen::Infinity>(), (B * y.tail(6)).lpNorm<Eigen::Infinity>()};
}

inline double constrained_top_energy(const HeavyTop& top, const Vec& y) {
  const Vec w = y.segment(7, 3), u = y.tail(3);
  return 0.5 * w.dot(top.Jc * w) + 0.5 * top.mass * u.squaredNorm() - top.mass * top.gvec.dot(y.segment(4, 3));
}

// Unconstrained heavy top about the fixed support on S³.
inline std::unique_ptr<lie::LieGroupProblem> rotating_top(const HeavyTop& top) {
  return std::make_unique<lie::LieGroupProblem>(lie::make_lie_group("S3", 7), top.J(),
                                           [top](double, const ConstVecRef& y, VecRef f) {
                                             f = top.f_rot(quat_to_rot(y.head(4)));
                                           });
}

}  // namespace odepkg::test

#endif
