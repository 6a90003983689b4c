// SmallLU.hpp — LU with partial pivoting of a small m x m matrix in
// caller-owned storage (column-major), for the per-member multiplier
// systems of an ensemble: one factorisation per member and step, no heap,
// no Eigen objects built per call (Golub, Van Loan, "Matrix Computations",
// Algorithm 3.4.1).  A pivot below tol * max |a_ij| marks the matrix
// numerically singular (the caller then takes a minimum-norm solution).
#ifndef ODEPKG_ENSEMBLE_SMALL_LU_HPP
#define ODEPKG_ENSEMBLE_SMALL_LU_HPP

#include <algorithm>
#include <cmath>

namespace odepkg::ensemble {

/// Factorises a (m x m, column-major) in place, row swaps in piv[0..m-1].
/// Returns false if a pivot is below tol * max |a_ij| (or not finite).
inline bool small_lu_factor(double* a, int m, int* piv, double tol = 1e-13) {
  double amax = 0.0;
  for (int i = 0; i < m * m; ++i) amax = std::max(amax, std::abs(a[i]));
  if (!(amax > 0.0) || !std::isfinite(amax)) return false;
  for (int c = 0; c < m; ++c) {
    int p = c;
    for (int r = c + 1; r < m; ++r)
      if (std::abs(a[r + c * m]) > std::abs(a[p + c * m])) p = r;
    piv[c] = p;
    if (!(std::abs(a[p + c * m]) > tol * amax)) return false;
    if (p != c)
      for (int k = 0; k < m; ++k) std::swap(a[c + k * m], a[p + k * m]);
    const double inv = 1.0 / a[c + c * m];
    for (int r = c + 1; r < m; ++r) {
      const double l = a[r + c * m] *= inv;
      for (int k = c + 1; k < m; ++k) a[r + k * m] -= l * a[c + k * m];
    }
  }
  return true;
}

/// Solves with the factors of small_lu_factor: x = A^{-1} b (x may be b).
inline void small_lu_solve(const double* a, int m, const int* piv, const double* b, double* x) {
  if (x != b)
    for (int i = 0; i < m; ++i) x[i] = b[i];
  for (int c = 0; c < m; ++c) std::swap(x[c], x[piv[c]]);  // P b (whole rows were swapped)
  for (int c = 0; c < m; ++c)
    for (int r = c + 1; r < m; ++r) x[r] -= a[r + c * m] * x[c];
  for (int c = m - 1; c >= 0; --c) {
    x[c] /= a[c + c * m];
    for (int r = 0; r < c; ++r) x[r] -= a[r + c * m] * x[c];
  }
}

}  // namespace odepkg::ensemble

#endif
