// ErrorNorm.hpp — the weighted error norm of Octave's ode45 (AbsRel_norm):
//   NormControl off: max_i |e_i| / max(AbsTol_i, RelTol * max(|x_i|, |x_old_i|))
//   NormControl on:  ||e||_2 / max(AbsTol, RelTol * max(||x||_2, ||x_old||_2))
#ifndef ODEPKG_ERROR_NORM_HPP
#define ODEPKG_ERROR_NORM_HPP

#include "Types.hpp"

#include <algorithm>
#include <cmath>

namespace odepkg {

struct ErrorNorm {
  double rel_tol = 1e-3;
  Vec abs_tol = Vec::Constant(1, 1e-6);  ///< size 1 (scalar) or the state size
  bool norm_control = false;

  double operator()(const ConstVecRef& err, const ConstVecRef& x, const ConstVecRef& x_old) const {
    if (norm_control) {
      const double sc = std::max(abs_tol(0), rel_tol * std::max(x.norm(), x_old.norm()));
      return err.norm() / sc;
    }
    double e = 0.0;
    for (Eigen::Index i = 0; i < err.size(); ++i) {
      const double atol = abs_tol.size() == 1 ? abs_tol(0) : abs_tol(i);
      const double sc = std::max(atol, rel_tol * std::max(std::abs(x(i)), std::abs(x_old(i))));
      e = std::max(e, std::abs(err(i)) / sc);
    }
    return e;
  }
};

}  // namespace odepkg

#endif
