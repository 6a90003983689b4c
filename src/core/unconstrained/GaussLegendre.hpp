// GaussLegendre.hpp — Gauss–Legendre quadrature on [-1, 1] and the Legendre
// tables of the spectral variational integrator (odeSPVI; Hall & Leok 2015).
//
// Legendre polynomials l_i = P_i by the three-term recurrence (Abramowitz &
// Stegun 22.7.10, 22.8.5)
//   (k+1) P_{k+1}(x) = (2k+1) x P_k(x) - k P_{k-1}(x),   P_0 = 1, P_1 = x,
//   P'_{k+1}(x)      = x P'_k(x) + (k+1) P_k(x),
// stable on [-1, 1] and exact at x = ±1 (P_k(±1) = (±1)^k).
//
// Nodes: Golub & Welsch (Math. Comp. 23, 1969): the eigenvalues of the
// symmetric Jacobi matrix of the recurrence, off-diagonal
//   beta_k = k / sqrt(4 k^2 - 1),  k = 1, ..., n-1,
// then polished by Newton's method on P_n (x <- x - P_n(x)/P'_n(x)) to
// round-off, and symmetrized (z_{n-1-j} = -z_j).  Weights from the refined
// nodes, w_j = 2 / ((1 - z_j^2) P'_n(z_j)^2)  (A&S 25.4.29), which is more
// accurate than 2 v_{0j}^2 from the eigenvectors.  The rule is exact for
// polynomials of degree <= 2n - 1.
#ifndef ODEPKG_GAUSS_LEGENDRE_HPP
#define ODEPKG_GAUSS_LEGENDRE_HPP

#include "Types.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace odepkg {

/// val[k] = P_k(x), and der[k] = P'_k(x) unless der is null, for k < n.
/// Writes into caller storage: no allocation.
inline void legendre(double x, int n, double* val, double* der = nullptr) {
  if (n <= 0) return;
  val[0] = 1.0;
  if (der) der[0] = 0.0;
  if (n == 1) return;
  val[1] = x;
  if (der) der[1] = 1.0;
  for (int k = 1; k + 1 < n; ++k) {
    val[k + 1] = ((2 * k + 1) * x * val[k] - k * val[k - 1]) / (k + 1);
    if (der) der[k + 1] = x * der[k] + (k + 1) * val[k];
  }
}

/// P_n(x) and P'_n(x) alone (for the Newton refinement of the nodes).
inline void legendre_n(int n, double x, double& pn, double& dpn) {
  double p0 = 1.0, p1 = x, d0 = 0.0, d1 = 1.0;
  if (n == 0) {
    pn = 1.0;
    dpn = 0.0;
    return;
  }
  for (int k = 1; k < n; ++k) {
    const double p2 = ((2 * k + 1) * x * p1 - k * p0) / (k + 1);
    const double d2 = x * d1 + (k + 1) * p1;
    p0 = p1;
    p1 = p2;
    d0 = d1;
    d1 = d2;
  }
  (void)d0;
  pn = p1;
  dpn = d1;
}

/// Gauss–Legendre nodes z (ascending) and weights w of the n-point rule.
inline void gauss_legendre(int n, Vec& z, Vec& w) {
  if (n < 1) throw InputError("invalidInput", "the number of Gauss nodes must be at least 1");
  z.resize(n);
  w.resize(n);
  if (n == 1) {
    z(0) = 0.0;
    w(0) = 2.0;
    return;
  }
  Mat J = Mat::Zero(n, n);  // Jacobi matrix of the monic Legendre recurrence
  for (int k = 1; k < n; ++k) {
    const double b = k / std::sqrt(4.0 * k * k - 1.0);
    J(k, k - 1) = b;
    J(k - 1, k) = b;
  }
  Eigen::SelfAdjointEigenSolver<Mat> eig(J, Eigen::EigenvaluesOnly);
  z = eig.eigenvalues();  // ascending
  for (int j = 0; j < n; ++j) {
    double x = z(j);
    for (int it = 0; it < 10; ++it) {  // Newton on P_n: quadratic, 1-3 steps
      double pn, dpn;
      legendre_n(n, x, pn, dpn);
      const double dx = pn / dpn;
      x -= dx;
      if (std::abs(dx) <= 1e-16 * std::max(1.0, std::abs(x))) break;
    }
    z(j) = x;
  }
  for (int j = 0; j < n / 2; ++j) {  // exact symmetry about 0
    const double s = 0.5 * (z(n - 1 - j) - z(j));
    z(j) = -s;
    z(n - 1 - j) = s;
  }
  if (n % 2 == 1) z(n / 2) = 0.0;
  for (int j = 0; j < n; ++j) {
    double pn, dpn;
    legendre_n(n, z(j), pn, dpn);
    w(j) = 2.0 / ((1.0 - z(j) * z(j)) * dpn * dpn);
  }
  for (int j = 0; j < n / 2; ++j) {
    const double a = 0.5 * (w(j) + w(n - 1 - j));
    w(j) = a;
    w(n - 1 - j) = a;
  }
}

/// The tables of the 2013 odepkg spectral_var_int's svi_system for q_dofs Legendre modes and p_dofs
/// Gauss nodes, built once:
///   z_j, w_j            nodes and weights (j < p_dofs)
///   L(j, i) = l_i(z_j), D(j, i) = l_i'(z_j)      (p_dofs x q_dofs)
///   C(0, i) = l_i(-1),  C(1, i) = l_i(1)         (2 x q_dofs)
struct SpectralTables {
  int q_dofs = 0, p_dofs = 0;
  Vec z, w;
  Mat L, D, C;

  SpectralTables() = default;
  SpectralTables(int q, int p) : q_dofs(q), p_dofs(p) {
    if (q < 1 || p < 1) throw InputError("invalidInput", "spectral tables need q_dofs >= 1 and p_dofs >= 1");
    gauss_legendre(p, z, w);
    L.resize(p, q);
    D.resize(p, q);
    C.resize(2, q);
    Vec val(q), der(q);
    for (int j = 0; j < p; ++j) {
      legendre(z(j), q, val.data(), der.data());
      L.row(j) = val.transpose();
      D.row(j) = der.transpose();
    }
    legendre(-1.0, q, val.data());
    C.row(0) = val.transpose();
    legendre(1.0, q, val.data());
    C.row(1) = val.transpose();
  }
};

/// User-supplied tables (the 2013 options Nodes, Weights, Legendre, Derivatives,
/// Extremes); null = not given.  Nodes/Weights may be rows or columns, the
/// nodes in ascending order; Legendre/Derivatives are p_dofs x q_dofs with
/// rows per node; Extremes is 2 x q_dofs, row 1 at z = -1, row 2 at z = +1.
struct UserSpectralTables {
  const Mat* nodes = nullptr;
  const Mat* weights = nullptr;
  const Mat* legendre = nullptr;
  const Mat* derivatives = nullptr;
  const Mat* extremes = nullptr;
};

namespace detail {
inline double table_deviation(const char* name, const Mat* user, const Mat& ref, bool vector) {
  if (!user) return 0.0;
  const bool same = vector ? (user->size() == ref.size() && (user->rows() == 1 || user->cols() == 1))
                           : (user->rows() == ref.rows() && user->cols() == ref.cols());
  if (!same)
    throw InputError("invalidOption", std::string("option \"") + name + "\" has size " +
                                         std::to_string(user->rows()) + "x" + std::to_string(user->cols()) +
                                         ", expected " + std::to_string(ref.rows()) + "x" +
                                         std::to_string(ref.cols()));
  double dev = 0.0;
  for (Eigen::Index k = 0; k < ref.size(); ++k) {
    const double u = user->data()[k], r = ref.data()[k];  // vectors: same linear order
    if (!std::isfinite(u)) return std::numeric_limits<double>::infinity();
    dev = std::max(dev, std::abs(u - r));
  }
  return dev;
}
}  // namespace detail

/// Largest absolute deviation of the given user tables from the computed ones
/// (0 if none given).  Throws InputError on a size mismatch.
inline double max_table_deviation(const SpectralTables& t, const UserSpectralTables& u) {
  const Mat zc = t.z, wc = t.w;  // as p x 1 matrices
  double dev = 0.0;
  dev = std::max(dev, detail::table_deviation("Nodes", u.nodes, zc, true));
  dev = std::max(dev, detail::table_deviation("Weights", u.weights, wc, true));
  dev = std::max(dev, detail::table_deviation("Legendre", u.legendre, t.L, false));
  dev = std::max(dev, detail::table_deviation("Derivatives", u.derivatives, t.D, false));
  dev = std::max(dev, detail::table_deviation("Extremes", u.extremes, t.C, false));
  return dev;
}

}  // namespace odepkg

#endif
