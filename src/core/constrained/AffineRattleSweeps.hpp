// AffineRattleSweeps.hpp — the O(d + nnz) vector work of a sparse RATTLE
// step with a diagonal quadratic kinetic energy, T_p(p) = w .* p + b
// (SparseSeparableRattle::step_affine), as single passes over the columns
// of a compressed G (m x d): column j of G touches coordinate j of every
// d-vector, so a product G^T x, the updates of q and p that use it, their
// norms and their finiteness are one loop instead of five or more (each
// vector pass costs about as much as a product with G, whose columns hold
// a few entries each).  The formulas are those of the step:
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

/// The diagonal velocity model: T_p(p) = w .* p + b.  The sweeps take it
/// as a template parameter V: tp(j, p) = T_p(p)_j, scale(j, x) = w_j x, and
/// kStored: the velocity T_p is written to a d-vector for the products with
/// G that follow (else they scale p by the scalar w on the fly).
struct Velocity {
  static constexpr bool kStored = true;
  const double* w;
  const double* b;
  double tp(Eigen::Index j, double p) const { return w[j] * p + b[j]; }
  double scale(Eigen::Index j, double x) const { return w[j] * x; }
};

/// Equal masses, T_p(p) = w p (AffineVelocity::is_uniform): no d-vector
/// read for the model, none written for the velocity.  The same operations
/// as Velocity with w_j = w, b_j = 0 (w p + 0 = w p), so the same results
/// (up to the sign of a zero velocity).
struct UniformVelocity {
  static constexpr bool kStored = false;
  double w;
  double tp(Eigen::Index, double p) const { return w * p; }
  double scale(Eigen::Index, double x) const { return w * x; }
};

/// The norms a sweep takes on its way (running maxima in registers: one
/// maxsd per entry, far below the loop's own latency; `zero` sums x * 0 over
/// values written, so it is 0 when they are all finite and NaN otherwise:
/// Finite.hpp; the position sweeps sum over q_1 only, the apply pass over
/// p_1 only, see finite_through_q and apply_velocity_multipliers).
struct SweepNorms {
  double q_in = 0.0;   ///< |q0|_inf (start_positions)
  double p_in = 0.0;   ///< |p0|_inf (start_positions)
  double p_out = 0.0;  ///< |p| written: ph (start_positions), p1 (apply_velocity_multipliers)
  double q_out = 0.0;  ///< |q1|_inf written (correct_positions)
  double dp = 0.0;     ///< |G^T delta|_inf (correct_positions)
  double terms = 0.0;  ///< max_j (|G|^T |M|)_j, the size of the terms of G^T M (apply_velocity_multipliers)
  double zero = 0.0;   ///< 0 iff the values checked are finite (see above)
};

/// max(a, |x|) (a NaN x is dropped: the sweeps' `zero` reports it).
inline double max_abs(double a, double x) { return std::max(a, std::abs(x)); }

/// (G^T x)_j = sum over column j's entries k in [k0, k1) of g_k x_{inner_k}.
/// A column of two entries (a chain's: each coordinate in two links) is
/// summed without the loop and its branches (correct_positions on a chain:
/// 15% faster at 10^4 links, 8% at 10^5); the sum is the loop's, one
/// product added at a time (so FMA contraction, where a compiler does it,
/// treats both alike), 0 + a + b = a + b up to the sign of a zero.
inline double column_dot(const int* inner, const double* g, const double* x, int k0, int k1) {
  if (k1 - k0 == 2) {
    double s = g[k0] * x[inner[k0]];
    s += g[k0 + 1] * x[inner[k0 + 1]];
    return s;
  }
  double s = 0.0;
  for (int k = k0; k < k1; ++k) s += g[k] * x[inner[k]];
  return s;
}

/// (|G|^T |x|)_j: column_dot's sum of the entries' magnitudes (the size of
/// the terms it adds, for a bound on its rounding).
inline double column_abs_dot(const int* inner, const double* g, const double* x, int k0, int k1) {
  if (k1 - k0 == 2) return std::abs(g[k0] * x[inner[k0]]) + std::abs(g[k0 + 1] * x[inner[k0 + 1]]);
  double s = 0.0;
  for (int k = k0; k < k1; ++k) s += std::abs(g[k] * x[inner[k]]);
  return s;
}

/// finite_through_q: the position sweeps check q_1 alone for finiteness.
/// The start writes p_j and q_j = a + h (w_j p_j + b_j) (a, h, w_j, b_j
/// finite; h may be 0): a p_j that is Inf or NaN makes the product with
/// w_j Inf or NaN (0 * Inf is NaN), and so the sum with b_j, the product
/// with h and q_j.  A correction writes p_j = x - dp and q_j = a - h (w_j
/// dp): a non-finite dp shows in q_j the same way, but p_j may also
/// overflow from finite x and dp, which q_j does not see: the caller
/// bounds |x| + |dp| below the largest double (ph_bound in the step), so
/// that cannot happen.  One check per column instead of two (the sweeps are
/// bound by their instruction count: at 10^5 links the checks of p cost
/// 0.15 of the 1.65 ms of the three position sweeps).
///
/// The start of the position Newton: with c = h/2 and u = G0^T L,
///   ph = p0 + c F0 - u,  q1 = q0 + h T_p(ph)   (p_{1/2}, q_1 at the guess L),
/// with |q0|, |p0| (the round-off weight's) and |ph| taken on the way: the
/// step reads no vector twice for its norms.
template <class V>
SweepNorms start_positions(const SpMat& G0, const double* L, const V& v, double h, const double* q0,
                                  const double* p0, const double* F0, double* q1, double* ph) {
  const int* outer = G0.outerIndexPtr();
  const int* inner = G0.innerIndexPtr();
  const double* g = G0.valuePtr();
  const double c = 0.5 * h;
  double qa = 0.0, pa = 0.0, ha = 0.0, zero = 0.0;
  int k0 = outer[0];
  for (int j = 0; j < G0.outerSize(); ++j) {
    const int k1 = outer[j + 1];
    const double uj = column_dot(inner, g, L, k0, k1);
    k0 = k1;
    const double pj = (p0[j] + c * F0[j]) - uj;
    const double qj = q0[j] + h * v.tp(j, pj);
    ph[j] = pj;
    q1[j] = qj;
    qa = max_abs(qa, q0[j]);
    pa = max_abs(pa, p0[j]);
    ha = max_abs(ha, pj);
    zero += qj * 0.0;  // (pj is finite if qj is: finite_through_q)
  }
  SweepNorms n;
  n.q_in = qa;
  n.p_in = pa;
  n.p_out = ha;
  n.zero = zero;
  return n;
}

/// A Newton correction of the position multipliers, L += delta: with
/// dp = G0^T delta, ph -= dp and q1 -= h w .* dp (T_p affine: q1 stays
/// q0 + h T_p(ph)); two vectors updated in place, none kept beside them.
/// Returns |dp|_inf (the size of the correction), |q1|_inf and whether q1
/// and ph are finite (every entry is rewritten: the last correction's
/// figures are those of the Newton's result).
template <class V>
SweepNorms correct_positions(const SpMat& G0, const double* delta, const V& v, double h, double* q1,
                                    double* ph) {
  const int* outer = G0.outerIndexPtr();
  const int* inner = G0.innerIndexPtr();
  const double* g = G0.valuePtr();
  double da = 0.0, qa = 0.0, zero = 0.0;
  const int n = G0.outerSize();
  int k0 = outer[0];
  for (int j = 0; j < n; ++j) {
    const int k1 = outer[j + 1];
    const double dp = column_dot(inner, g, delta, k0, k1);
    k0 = k1;
    const double pj = ph[j] - dp;
    const double qj = q1[j] - h * v.scale(j, dp);
    ph[j] = pj;
    q1[j] = qj;
    da = max_abs(da, dp);  // (a NaN dp shows in zero)
    qa = max_abs(qa, qj);
    zero += qj * 0.0;  // (pj is finite if qj is: finite_through_q)
  }
  SweepNorms r;
  r.dp = da;
  r.q_out = qa;
  r.zero = zero;
  return r;
}

/// AffineVelocity's check of T_p at p_{1/2} against the true H_p of f's
/// call there, in the half kick's pass (AffineVelocity::judge reads
/// them): `zero` sums H_p * 0 and F_1 * 0 (both checked finite here: the
/// step calls f unchecked), the maxima of |p_{1/2}|, |H_p| and the miss.
struct VelocityCheck {
  double zero = 0.0, p_max = 0.0, hp_max = 0.0, miss = 0.0;
};

/// The half kick at q_1 and the velocity it gives: with c = h/2 and
/// f(t_1, [q_1; p_{1/2}]) = [hp; F1],
///   pstar = ph + c F1,  v = T_p(pstar),  force = F1 (the next step's F_0),
/// and the check of the model at ph: hp = T_p(ph)?  (G_1 v, the velocity
/// system's right-hand side, follows over G_1's rows: SparseRowView.)
/// v is written only for a model with kStored (else vel may be null).
template <class V>
VelocityCheck confirm_and_kick(Eigen::Index d, const V& v, double h, const double* ph, const double* hp,
                                      const double* F1, double* pstar, double* force, double* vel) {
  const double c = 0.5 * h;
  VelocityCheck k;
  double zero = 0.0, pm = 0.0, hm = 0.0, miss = 0.0;
  for (Eigen::Index j = 0; j < d; ++j) {
    const double f = F1[j], p = ph[j], t = hp[j];
    zero += t * 0.0 + f * 0.0;
    pm = std::max(pm, std::abs(p));
    hm = std::max(hm, std::abs(t));
    miss = std::max(miss, std::abs(t - v.tp(j, p)));
    const double ps = p + c * f;
    pstar[j] = ps;
    force[j] = f;
    if constexpr (V::kStored) vel[j] = v.tp(j, ps);
  }
  k.zero = zero;
  k.p_max = pm;
  k.hp_max = hm;
  k.miss = miss;
  return k;
}

/// The velocity multipliers applied:
///   p1 = pstar - G1^T M,  vel = T_p(p1)
/// (G_1 vel, the hidden constraint, follows over G_1's rows), with q1
/// copied to q_out alongside (the step's output state; pass null to skip).
/// p1 may be pstar itself (each entry is read before it is written); vel
/// is written only for a model with kStored (else it may be null).
/// `hid` (m values, zero on entry; or null): G1 T_p(p1) added up column by
/// column, each row's products in the order of its columns, so the sums
/// of SparseRowView::multiply (0 + a = a, up to the sign of a zero) in the
/// same pass (at 10^5 links 0.1 ms less than a pass over the rows).
/// Returns |p1|_inf, whether p1 is finite (q1 is: the caller checked it), and max_j (|G1|^T
/// |M|)_j: p1 is formed from terms of that size, whose rounding bounds how
/// closely p1 can meet G1 T_p(p1) = 0.
template <class V>
SweepNorms apply_velocity_multipliers(const SpMat& G1, const double* M, const V& v, const double* pstar,
                                             double* p1, double* vel, const double* q1, double* q_out,
                                             double* hid = nullptr) {
  const int* outer = G1.outerIndexPtr();
  const int* inner = G1.innerIndexPtr();
  const double* g = G1.valuePtr();
  double pa = 0.0, ta = 0.0, zero = 0.0;
  int k0 = outer[0];
  for (int j = 0; j < G1.outerSize(); ++j) {
    const int k1 = outer[j + 1];
    const double s = column_dot(inner, g, M, k0, k1);
    ta = std::max(ta, column_abs_dot(inner, g, M, k0, k1));  // (a NaN M shows in zero through p1)
    const int k0_col = k0;
    k0 = k1;
    const double pj = pstar[j] - s;
    p1[j] = pj;
    if constexpr (V::kStored) vel[j] = v.tp(j, pj);
    if (hid) {  // G1 T_p(p1), column j's share added to its rows
      const double x = V::kStored ? vel[j] : v.scale(j, pj);
      for (int k = k0_col; k < k1; ++k) hid[inner[k]] += g[k] * x;
    }
    pa = max_abs(pa, pj);
    if (q_out) q_out[j] = q1[j];  // (checked finite by the position Newton's last correction)
    zero += pj * 0.0;
  }
  SweepNorms r;
  r.p_out = pa;
  r.terms = ta;
  r.zero = zero;
  return r;
}

}  // namespace odepkg::sweeps

#endif
