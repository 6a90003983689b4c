// EnsembleComposition.hpp — a composition Φ_{γ_s h} ∘ … ∘ Φ_{γ_1 h} of a
// symmetric ensemble method of order 2 (Hairer, Lubich, Wanner, "Geometric
// Numerical Integration", V.3; the tables of composition/CompositionTables.hpp):
// order p, symmetric, the same per-member outcome as the base (a member
// that fails in any stage fails the step).
#ifndef ODEPKG_ENSEMBLE_COMPOSITION_HPP
#define ODEPKG_ENSEMBLE_COMPOSITION_HPP

#include "composition/CompositionTables.hpp"
#include "ensemble/EnsembleMethod.hpp"

#include <vector>

namespace odepkg::ensemble {

class EnsembleComposition final : public EnsembleMethod {
 public:
  EnsembleComposition(EnsembleMethod& base, const composition::CompositionTable& table)
      : EnsembleMethod(base.problem()),
        base_(base),
        table_(table),
        X_{Mat(2 * pb_.dim(), pb_.members()), Mat(2 * pb_.dim(), pb_.members())},
        F_{Mat(pb_.dim(), pb_.members()), Mat(pb_.dim(), pb_.members())},
        A_{Mat(base.aux_size(), pb_.members()), Mat(base.aux_size(), pb_.members())},
        stage_status_(pb_.members()) {
    if (!base.symmetric() || base.order() != 2)
      throw InputError("invalidOption", "option \"Composition\" needs a symmetric method of order 2");
  }

  const char* name() const override { return base_.name(); }
  int order() const override { return table_.order; }
  bool symmetric() const override { return true; }
  int aux_size() const override { return base_.aux_size(); }
  void start(double t0, const ConstMatRef& X0, const ConstMatRef& F0, MatRef force, MatRef aux) override {
    base_.start(t0, X0, F0, force, aux);
  }

  void step(double t, double h, const int* ids, int k, const ConstMatRef& X0, const ConstMatRef& force0,
            const ConstMatRef& aux0, MatRef X1, MatRef force1, MatRef aux1, StepStatus* status) override {
    for (int j = 0; j < k; ++j) status[j] = StepStatus::Success;
    double ts = t;
    const int s = table_.stages;
    for (int i = 0; i < s; ++i) {
      const double hs = table_.weights[i] * h;
      const bool last = i == s - 1;
      const int in = i % 2, out = (i + 1) % 2;
      // stage i reads the last stage's buffers (the inputs for the first) and
      // writes the caller's outputs on the last
      const ConstMatRef Xi = i == 0 ? X0 : ConstMatRef(X_[in].leftCols(k));
      const ConstMatRef Fi = i == 0 ? force0 : ConstMatRef(F_[in].leftCols(k));
      const ConstMatRef Ai = i == 0 ? aux0 : ConstMatRef(A_[in].leftCols(k));
      if (last) {
        base_.step(ts, hs, ids, k, Xi, Fi, Ai, X1, force1, aux1, stage_status_.data());
      } else {
        auto Xo = X_[out].leftCols(k);
        auto Fo = F_[out].leftCols(k);
        auto Ao = A_[out].leftCols(k);
        base_.step(ts, hs, ids, k, Xi, Fi, Ai, Xo, Fo, Ao, stage_status_.data());
      }
      for (int j = 0; j < k; ++j)
        if (status[j] == StepStatus::Success) status[j] = stage_status_[j];
      ts += hs;
    }
  }

 private:
  EnsembleMethod& base_;
  const composition::CompositionTable& table_;
  Mat X_[2], F_[2], A_[2];
  std::vector<StepStatus> stage_status_;
};

}  // namespace odepkg::ensemble

#endif
