// AffineRattleSweeps.hpp — the O(d + nnz) vector work of a sparse RATTLE
// step with a diagonal quadratic kinetic energy, T_p(p) = w .* p + b
// (SparseSeparableRattle::step_affine), as single passes over the columns
// of a compressed G (m x d): column j of G touches coordinate j of every
// d-vector, so a product G^T x, the updates of q and p that use it and their
// norms are one loop instead of five (at d = 2*10^4 each vector pass costs
// about as much as a product with G).  The formulas are those of the step:
//   p_{1/2} = p_0 + h/2 F_0 - G_0^T L,   q_1 = q_0 + h T_p(p_{1/2}),
//   p_1 = p_{1/2} + h/2 F_1 - G_1^T M,   G_1 T_p(p_1) = 0
// (Hairer, Lubich, Wanner, "Geometric Numerical Integration", VII.1.4).
// Pointers are raw: the oct-files keep Eigen's bounds checks (EigenConfig).
#ifndef ODEPKG_CONSTRAINED_AFFINE_RATTLE_SWEEPS_HPP
#define ODEPKG_CONSTRAINED_AFFINE_RATTLE_SWEEPS_HPP

#include "Types.hpp"

#include <algorithm>
#include <cmath>

namespace odepkg::sweeps {

/// The diagonal velocity model: T_p(p) = w .* p + b.
struct Velocity {
  const double* w;
  const double* b;
};

/// The start of the position Newton: with c = h/2 and u = G0^T L,
///   ph = p0 + c F0 - u,  q1 = q0 + h T_p(ph)   (p_{1/2}, q_1 at the guess L).
/// (The sweeps keep no running maxima: a max over a loop is a chain of
/// dependent instructions; the norms the step needs are taken after, by
/// Eigen's vectorized reductions.)
inline void start_positions(const SpMat& G0, const double* L, Velocity v, double h, const double* q0,
                            const double* p0, const double* F0, double* q1, double* ph) {
  const int* outer = G0.outerIndexPtr();
  const int* inner = G0.innerIndexPtr();
  const double* g = G0.valuePtr();
  const double c = 0.5 * h;
  for (int j = 0; j < G0.outerSize(); ++j) {
    double uj = 0.0;
    for (int k = outer[j]; k < outer[j + 1]; ++k) uj += g[k] * L[inner[k]];
    const double pj = (p0[j] + c * F0[j]) - uj;
    ph[j] = pj;
    q1[j] = q0[j] + h * (v.w[j] * pj + v.b[j]);
  }
}

/// A Newton correction of the position multipliers, L += delta: with
/// dp = G0^T delta, ph -= dp and q1 -= h w .* dp (T_p affine: q1 stays
/// q0 + h T_p(ph)); two vectors updated in place, none kept beside them.
/// Returns |dp|_inf (the size of the correction).
inline double correct_positions(const SpMat& G0, const double* delta, Velocity v, double h, double* q1,
                                double* ph) {
  const int* outer = G0.outerIndexPtr();
  const int* inner = G0.innerIndexPtr();
  const double* g = G0.valuePtr();
  double a0 = 0.0, a1 = 0.0;  // two chains of max: even and odd columns
  const int n = G0.outerSize();
  for (int j = 0; j < n; ++j) {
    double dp = 0.0;
    for (int k = outer[j]; k < outer[j + 1]; ++k) dp += g[k] * delta[inner[k]];
    ph[j] -= dp;
    q1[j] -= h * (v.w[j] * dp);
    if (j & 1)
      a1 = std::max(a1, std::abs(dp));
    else
      a0 = std::max(a0, std::abs(dp));
  }
  return std::max(a0, a1);  // (a NaN is not seen here: the caller checks q1, ph)
}

/// The half kick at q_1 and the velocity it gives: with c = h/2,
///   pstar = ph + c F1,  v = T_p(pstar),  force = F1 (the next step's F_0).
/// (G_1 v, the velocity system's right-hand side, follows over G_1's rows:
/// SparseRowView.)
inline void half_kick(Eigen::Index d, Velocity v, double h, const double* ph, const double* F1, double* pstar,
                      double* force, double* vel) {
  const double c = 0.5 * h;
  for (Eigen::Index j = 0; j < d; ++j) {
    const double f = F1[j];
    const double ps = ph[j] + c * f;
    pstar[j] = ps;
    force[j] = f;
    vel[j] = v.w[j] * ps + v.b[j];
  }
}

/// The velocity multipliers applied:
///   p1 = pstar - G1^T M,  vel = T_p(p1)
/// (G_1 vel, the hidden constraint, follows over G_1's rows), with q1
/// copied to q_out alongside (the step's output state; pass null to skip).
/// p1 may be pstar itself (each entry is read before it is written).
inline void apply_velocity_multipliers(const SpMat& G1, const double* M, Velocity v, const double* pstar,
                                       double* p1, double* vel, const double* q1, double* q_out) {
  const int* outer = G1.outerIndexPtr();
  const int* inner = G1.innerIndexPtr();
  const double* g = G1.valuePtr();
  for (int j = 0; j < G1.outerSize(); ++j) {
    double s = 0.0;
    for (int k = outer[j]; k < outer[j + 1]; ++k) s += g[k] * M[inner[k]];
    const double pj = pstar[j] - s;
    p1[j] = pj;
    vel[j] = v.w[j] * pj + v.b[j];
    if (q_out) q_out[j] = q1[j];
  }
}

}  // namespace odepkg::sweeps

#endif
