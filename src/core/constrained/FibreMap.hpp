// FibreMap.hpp — the fibres [z] = { exp(sum_i s_i X_{g_i})(z) : s in R^m } of
// a coisotropic constraint manifold M = {g = 0} (McLachlan et al. 2014, Cor. 3.7), along
// which geometric SHAKE and RATTLE slide.  X_g = J grad g, J = [0 I; -I 0]:
// q' = dg/dp, p' = -dg/dq.
//
// HolonomicFibre: g(q) only, the flow is the affine (q, p - G(q)^T s)
// (McLachlan et al. 2014, Sect. 5.1.1).  UserFlowFibre: the user's closed form
// (ConstraintFlowFcn).  IntegratedFibre (its own header): the flow integrated
// numerically to round-off.
#ifndef ODEPKG_CONSTRAINED_FIBRE_MAP_HPP
#define ODEPKG_CONSTRAINED_FIBRE_MAP_HPP

#include "SameBits.hpp"
#include "Stats.hpp"
#include "Types.hpp"
#include "constrained/ConstraintSet.hpp"

#include <functional>

namespace odepkg {

class FibreMap {
 public:
  virtual ~FibreMap() = default;
  /// out = exp(sum_i s_i X_{g_i})(z).  out must not alias z.  Returns false
  /// on non-finite values (or a flow that could not be integrated).
  virtual bool flow(const ConstVecRef& z, const ConstVecRef& s, VecRef out) = 0;
};

/// exp(s X_g)(q, p) = (q, p - G(q)^T s) for g = g(q): X_g = (0, -G^T s) is
/// constant along its own flow.
class HolonomicFibre final : public FibreMap {
 public:
  explicit HolonomicFibre(ConstraintSet& g) : g_(g), q_(g.dim()) {}
  bool flow(const ConstVecRef& z, const ConstVecRef& s, VecRef out) override {
    const int d = g_.dim();
    // G(q) of the last call is reused while q is the same (a Newton
    // iteration slides along one fibre, q fixed).  A cache of its own:
    // HolonomicConstraints keeps one q too, and the step alternates q_0 and
    // q_1 between the two (without this one, 4 calls of G per step, not 3)
    if (!have_ || !same_bits(q_, z.head(d))) {
      Dg_.resize(g_.count(), 2 * d);  // on first use (no allocation after)
      if (!g_.grad(z, Dg_)) return false;
      q_ = z.head(d);
      have_ = true;
    }
    out = z;
    out.tail(d).noalias() -= Dg_.leftCols(d).transpose() * s;
    return out.allFinite();
  }

 private:
  ConstraintSet& g_;
  Mat Dg_;
  Vec q_;
  bool have_ = false;
};

/// The user's exp(sum_i s_i X_{g_i})(z), counted in Stats::flow_evals.
class UserFlowFibre final : public FibreMap {
 public:
  using Flow = std::function<void(const ConstVecRef& z, const ConstVecRef& s, VecRef out)>;
  UserFlowFibre(int d, Flow flow, Stats& stats) : d_(d), flow_(std::move(flow)), stats_(stats) {}
  bool flow(const ConstVecRef& z, const ConstVecRef& s, VecRef out) override {
    ++stats_.flow_evals;
    flow_(z, s, out);
    return out.allFinite();
  }

 private:
  int d_;
  Flow flow_;
  Stats& stats_;
};

}  // namespace odepkg

#endif
