// LieGroupCheck.hpp — a user-defined group checked, once before the first
// step, against the identities RATTLie relies on (conventions of
// LieGroup.hpp; Hairer, Lubich, Wanner, "Geometric Numerical Integration",
// §III.4 and §IV.8; Arnold, Cardona, Brüls, "A Lie algebra approach to Lie
// group time integration of constrained systems"):
//
//   tangent   d/ds q∘exp(W + sV) = d/ds q∘exp(W)∘exp(s T(W) V)   at s = 0,
//   ad        d/ds T(s u) x = −½ ad(u) x                        at s = 0
//             (T(w) = I − ½ ad(w) + O(w²)),
//   tangent_inv_transpose        T(W)^{-T}ᵀ T(W) = I,
//   d_tangent_inv_transpose      d/ds T(W + s v)^{-T} x = D(W, x) v.
//
// Each by DerivativeCheck (central differences with Richardson, 4 calls per
// direction); a failure is an InputError "derivativeCheck" naming the field.
#ifndef ODEPKG_LIE_LIE_GROUP_CHECK_HPP
#define ODEPKG_LIE_LIE_GROUP_CHECK_HPP

#include "../DerivativeCheck.hpp"
#include "LieGroup.hpp"

#include <string>

namespace odepkg::lie {

struct LieGroupCheckScope {
  bool tangent_inv_transpose = true;    ///< the group's own T^{-T} (else T is inverted)
  bool d_tangent_inv_transpose = true;  ///< the group's own derivative (else differences)
};

/// Size of the Lie-algebra element W the identities are checked at: large
/// enough that T(W) differs from I at first order (a wrong sign of ad shows
/// as an O(|W|) discrepancy), inside the principal branch of rotations.
constexpr double kCheckAlgebraSize = 0.5;

/// Checks `group` at the element q (coordinates); throws InputError.
inline void check_lie_group(const LieGroup& group, const ConstVecRef& q, LieGroupCheckScope scope = {}) {
  const int n = group.dim(), nq = group.coord_size();
  const std::string where = "at q0 (the initial element)";
  DerivativeCheck check;
  Vec W(n), V(n), w(n), u(n), x(n), q1(nq), Tx(n), claimed(n), c2(nq);
  Mat T(n, n), A(n, n), Tit(n, n), D(n, n);
  auto finite = [&](const auto& m, const char* name) {
    if (!m.allFinite())
      throw InputError("nonFiniteFcn", std::string("LieGroup.") + name + " returned a non-finite value " + where);
  };
  for (int k = 0; k < DerivativeCheck::kDirections; ++k) {
    check.random_direction(W);
    W *= kCheckAlgebraSize;
    check.random_direction(V);
    const double h = DerivativeCheck::step(kCheckAlgebraSize);
    group.tangent(W, T);
    finite(T, "tangent");
    group.compose_exp(q, W, q1);
    finite(q1, "compose_exp");
    // c2(s) = q∘exp(W)∘exp(s T(W) V): its quotient, with its own error
    const Vec TV = T * V;
    auto c2curve = [&](double s, VecRef out) {
      w = s * TV;
      group.compose_exp(q1, w, out);
      return out.allFinite();
    };
    double err2 = 0.0;
    if (!DerivativeCheck::quotient(c2curve, h, c2, err2))
      throw InputError("nonFiniteFcn", "LieGroup.compose_exp returned a non-finite value " + where);
    auto c1curve = [&](double s, VecRef out) {
      w = W + s * V;
      group.compose_exp(q, w, out);
      return out.allFinite();
    };
    DerivativeCheck::require(DerivativeCheck::compare(c1curve, h, c2, c2.lpNorm<Eigen::Infinity>(), err2),
                             "LieGroup.tangent",
                             "the derivative of compose_exp (d/ds q o exp(W + s V) = d/ds q o exp(W) o "
                             "exp(s T(W) V), T(W) = I - ad(W)/2 + ...)",
                             where);
    // ad: d/ds T(s u) x = -ad(u) x / 2
    check.random_direction(u);
    check.random_direction(x);
    group.ad(u, A);
    finite(A, "ad");
    claimed.noalias() = -0.5 * (A * x);
    auto tcurve = [&](double s, VecRef out) {
      w = s * u;
      group.tangent(w, T);
      out.noalias() = T * x;
      return out.allFinite();
    };
    DerivativeCheck::require(DerivativeCheck::compare(tcurve, DerivativeCheck::step(0.0), claimed, A.norm()),
                             "LieGroup.ad", "the first-order term of LieGroup.tangent (T(w) = I - ad(w)/2 + ...)",
                             where);
    if (scope.tangent_inv_transpose) {
      group.tangent(W, T);
      group.tangent_inv_transpose(W, Tit);
      finite(Tit, "tangent_inv_transpose");
      DerivativeCheck::Result r;
      const double scale = std::max(1.0, Tit.norm() * T.norm());
      r.discrepancy = (Tit.transpose() * T - Mat::Identity(n, n)).lpNorm<Eigen::Infinity>() / scale;
      r.accuracy = DerivativeCheck::floor_accuracy();
      DerivativeCheck::require(r, "LieGroup.tangent_inv_transpose", "the inverse transpose of LieGroup.tangent",
                               where);
    }
    if (scope.d_tangent_inv_transpose) {
      check.random_direction(u);
      group.d_tangent_inv_transpose(W, x, D);
      finite(D, "d_tangent_inv_transpose");
      claimed.noalias() = D * u;
      auto dcurve = [&](double s, VecRef out) {
        w = W + s * u;
        group.tangent_inv_transpose(w, Tit);
        out.noalias() = Tit * x;
        return out.allFinite();
      };
      DerivativeCheck::require(DerivativeCheck::compare(dcurve, h, claimed, D.norm()),
                               "LieGroup.d_tangent_inv_transpose", "differences of tangent_inv_transpose (w, x)",
                               where);
    }
  }
}

}  // namespace odepkg::lie

#endif
