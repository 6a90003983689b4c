// SphereEdges.hpp — the reference of the tests of the constrained Newton at
// the edges: explicit RATTLE on the unit sphere, H = |p|^2/2 - kappa q_3.
// The position equation is a quadratic in s (q_1 = a - s q_0, a the
// unconstrained step); RATTLE is its root nearest s = 0 (Hairer, Lubich,
// Wanner, GNI VII.1.4), the momenta then projected onto the tangent.
#ifndef ODEPKG_TEST_SPHERE_EDGES_HPP
#define ODEPKG_TEST_SPHERE_EDGES_HPP

#include "Types.hpp"

#include <cmath>
#include <random>

namespace sphere_edges {

/// One step of the closed form from x = [q; p]; false where the quadratic
/// has no real root (no step exists near the unconstrained one).
inline bool closed_form_step(const odepkg::Vec& x, double h, double kappa, odepkg::Vec& out) {
  using odepkg::Vec;
  const Vec q = x.head(3);
  Vec F(3);
  F << 0.0, 0.0, kappa;
  const Vec a = q + h * (x.tail(3) + 0.5 * h * F);
  const double b = a.dot(q), c = a.squaredNorm() - 1.0, disc = b * b - q.squaredNorm() * c;
  if (disc < 0.0) return false;
  const double s = (b - std::sqrt(disc)) / q.squaredNorm();
  const Vec q1 = a - s * q;
  const Vec ps = (q1 - q) / h + 0.5 * h * F;
  out.resize(6);
  out.head(3) = q1;
  out.tail(3) = ps - ps.dot(q1) / q1.squaredNorm() * q1;
  return true;
}

/// The starts of the sweeps: trial 0 the step that the warm-started chord
/// once refused (x0 = e1, p0 = (0, 0.5, 0), h = 0.3), then random points
/// with random tangent momenta at h = 0.25 (steps of up to a radius).
inline odepkg::Vec start(int trial, std::mt19937& rng, double& h) {
  std::normal_distribution<double> normal;
  odepkg::Vec x(6);
  for (int i = 0; i < 6; ++i) x(i) = normal(rng);
  x.head(3).normalize();
  x.tail(3) -= x.tail(3).dot(x.head(3)) * x.head(3);
  h = trial == 0 ? 0.3 : 0.25;
  if (trial == 0) x << 1, 0, 0, 0, 0.5, 0;
  return x;
}

}  // namespace sphere_edges

#endif
