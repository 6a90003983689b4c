// LieTestProblems.hpp — rigid-body fixtures of the Lie-group tests: the hat
// map, rotation matrices of unit quaternions, and Hante's heavy top.
#ifndef ODEPKG_LIE_TEST_PROBLEMS_HPP
#define ODEPKG_LIE_TEST_PROBLEMS_HPP

#include "Types.hpp"

#include <Eigen/Geometry>

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

}  // namespace odepkg::test

#endif
