// Conversions.h — octave_value <-> Eigen, with the input checks every entry
// point shares.
#ifndef ODEPKG_BINDING_CONVERSIONS_H
#define ODEPKG_BINDING_CONVERSIONS_H

#include "Stats.hpp"
#include "Types.hpp"

#include <octave/oct.h>

#include <cmath>

namespace odepkg::binding {

/// A real, finite vector (row or column) of even length 2d.
inline Vec state_vector(const octave_value& v, const char* who, const char* name) {
  if (!v.isnumeric() || !v.isreal() || v.isempty() || (v.rows() != 1 && v.columns() != 1))
    error_with_id("odepkg:invalidInput", "%s: %s must be a real vector [q; p]", who, name);
  const NDArray a = v.array_value();
  if (a.numel() % 2 != 0)
    error_with_id("odepkg:invalidInput", "%s: %s must have even length (q and p of equal size), got %ld",
                  who, name, static_cast<long>(a.numel()));
  Vec x(a.numel());
  for (octave_idx_type i = 0; i < a.numel(); ++i) {
    if (!std::isfinite(a(i)))
      error_with_id("odepkg:invalidInput", "%s: %s must be finite (element %ld is %g)", who, name,
                    static_cast<long>(i + 1), a(i));
    x(i) = a(i);
  }
  return x;
}

/// The output times TIMES: a real, finite vector of at least two times.
inline Vec read_times(const octave_value& v, const char* who) {
  if (!v.isnumeric() || !v.isreal() || v.numel() < 2)
    error_with_id("odepkg:invalidInput", "%s: TIMES must be a real vector of at least two times", who);
  const NDArray a = v.array_value();
  Vec times(a.numel());
  for (octave_idx_type i = 0; i < a.numel(); ++i) {
    if (!std::isfinite(a(i))) error_with_id("odepkg:invalidInput", "%s: TIMES must be finite", who);
    times(i) = a(i);
  }
  return times;
}

inline double real_scalar(const octave_value& v, const char* who, const char* name) {
  if (!v.isnumeric() || !v.isreal() || v.numel() != 1 || !std::isfinite(v.double_value()))
    error_with_id("odepkg:invalidInput", "%s: %s must be a finite real scalar", who, name);
  return v.double_value();
}

inline ColumnVector to_column(const Vec& x) {
  ColumnVector c(x.size());
  std::copy(x.data(), x.data() + x.size(), c.fortran_vec());
  return c;
}

inline octave_scalar_map stats_struct(const Stats& s) {
  octave_scalar_map m;
  m.assign("nsteps", static_cast<double>(s.steps));
  m.assign("nfailed", static_cast<double>(s.rejected));
  m.assign("nfevals", static_cast<double>(s.field_evals));
  m.assign("nhessevals", static_cast<double>(s.hessian_evals));
  m.assign("nconstrevals", static_cast<double>(s.constraint_evals));
  m.assign("nconstrgradevals", static_cast<double>(s.constraint_grad_evals));
  m.assign("nconstrhessevals", static_cast<double>(s.constraint_hess_evals));
  m.assign("nflowevals", static_cast<double>(s.flow_evals));
  m.assign("nnonholevals", static_cast<double>(s.nonholonomic_evals));
  m.assign("nnewtonsolves", static_cast<double>(s.newton_solves));
  m.assign("nnewtoniter", static_cast<double>(s.newton_iterations));
  m.assign("maxnewtoniter", static_cast<double>(s.newton_max_iterations));
  m.assign("nprojectioniter", static_cast<double>(s.projection_iterations));
  m.assign("nfailedsolves", static_cast<double>(s.failed_solves));
  m.assign("njacobians", static_cast<double>(s.jacobian_evals));
  m.assign("nfdjacobians", static_cast<double>(s.fd_jacobians));
  m.assign("nfdfcnjacobians", static_cast<double>(s.fd_field_jacobians));
  m.assign("ndecomps", static_cast<double>(s.lu_factorizations));
  m.assign("nrankdeficient", static_cast<double>(s.rank_deficient));
  m.assign("nnewtonretries", static_cast<double>(s.newton_retries));
  m.assign("ndistantroots", static_cast<double>(s.distant_roots));
  m.assign("maxconstrresidual", s.max_constraint_residual);
  m.assign("maxhiddenresidual", s.max_hidden_residual);
  m.assign("maxnonholresidual", s.max_nonholonomic_residual);
  m.assign("maxgraderror", s.max_grad_error);
  return m;
}

}  // namespace odepkg::binding

#endif
