// RattleGradientCache.hpp — RATTLE's small cache of constraint gradients
// G(q), keyed by q: G(q_1) of one step is G(q_0) of the next, and step
// doubling restarts from the same point, so most G(q_0) cost no callback.
#ifndef ODEPKG_CONSTRAINED_RATTLE_GRADIENT_CACHE_HPP
#define ODEPKG_CONSTRAINED_RATTLE_GRADIENT_CACHE_HPP

#include "SameBits.hpp"
#include "HamiltonianProblem.hpp"
#include "Types.hpp"

namespace odepkg {

class RattleGradientCache {
 public:
  static constexpr int kSize = 3;

  /// Nothing is allocated for a sparse G (the sparse path keeps its own).
  RattleGradientCache(HamiltonianProblem& problem, int d, int m) : problem_(problem) {
    if (problem.has_sparse_constraint_grad()) return;
    for (int i = 0; i < kSize; ++i) {
      q_[i].resize(d);
      G_[i].resize(m, d);
    }
  }

  /// G(q) from the cache (keyed by q, compared exactly), else evaluated and
  /// stored.
  bool grad_at(const ConstVecRef& q, MatRef G) {
    for (int i = 0; i < kSize; ++i)
      if (ok_[i] && same_bits(q_[i], q)) {
        G = G_[i];
        return true;
      }
    if (!problem_.constraint_grad(q, G)) return false;
    store(q, G);
    return true;
  }

  /// Remember G = G(q), replacing the oldest entry.
  void store(const ConstVecRef& q, const Eigen::Ref<const Mat>& G) {
    q_[next_] = q;
    G_[next_] = G;
    ok_[next_] = true;
    next_ = (next_ + 1) % kSize;
  }

 private:
  HamiltonianProblem& problem_;
  Vec q_[kSize];
  Mat G_[kSize];
  bool ok_[kSize] = {false, false, false};
  int next_ = 0;
};

}  // namespace odepkg

#endif
