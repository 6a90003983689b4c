// NodeOutput.h — odeSPVI's optional output at the Gauss nodes inside each
// step (the 2013 odepkg spectral_var_int returned them), off by default.  Wraps
// the output observer: before each step's end point it emits the nodal
// states [q(z_j); p_j] of that step at t_k + h (1 + z_j)/2.
#ifndef ODEPKG_BINDING_NODE_OUTPUT_H
#define ODEPKG_BINDING_NODE_OUTPUT_H

#include "loop/Integrator.hpp"
#include "unconstrained/SpectralVariational.hpp"

namespace odepkg::binding {

class SpectralNodeOutput final : public Observer {
 public:
  SpectralNodeOutput(const SpectralVariational& spvi, Observer& inner, int d)
      : spvi_(spvi), inner_(inner), xn_(2 * d) {}

  bool operator()(double t, const Vec& x) override {
    if (have_prev_) {
      spvi_.node_times(tn_);
      spvi_.node_values(qn_, pn_);
      // Only nodes strictly inside the step just output (a guard: the last
      // step solved is the accepted one, whose end is t).
      const double lo = std::min(t_prev_, t), hi = std::max(t_prev_, t);
      // z_j ascend, so the node times follow the direction of the step.
      for (Eigen::Index j = 0; j < tn_.size(); ++j) {
        if (!(tn_(j) > lo && tn_(j) < hi)) continue;
        xn_ << qn_.col(j), pn_.col(j);
        if (!inner_(tn_(j), xn_)) return false;
      }
    }
    have_prev_ = true;
    t_prev_ = t;
    return inner_(t, x);
  }

 private:
  const SpectralVariational& spvi_;
  Observer& inner_;
  Vec tn_, xn_;
  Mat qn_, pn_;
  bool have_prev_ = false;
  double t_prev_ = 0.0;
};

}  // namespace odepkg::binding

#endif
