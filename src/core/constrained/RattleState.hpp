// RattleState.hpp — what the classical separable RATTLE (SeparableRattle)
// keeps across steps, owned by Rattle: the problem and its sizes, the options,
// the cache of G(q), the bookkeeping of rank-deficient multiplier systems and
// the continuity of the last accepted step (its q_1 and h).
#ifndef ODEPKG_CONSTRAINED_RATTLE_STATE_HPP
#define ODEPKG_CONSTRAINED_RATTLE_STATE_HPP

#include "ConstraintProjection.hpp"
#include "HamiltonianProblem.hpp"
#include "NewtonSolver.hpp"
#include "Stats.hpp"
#include "Stepper.hpp"
#include "Types.hpp"
#include "constrained/RattleGradientCache.hpp"

#include <algorithm>
#include <limits>

namespace odepkg {

struct RattleState {
  /// Pivots below this fraction of the largest one count as zero.
  static constexpr double rank_tolerance = 1e-10;

  RattleState(HamiltonianProblem& pb, bool shake_, NewtonOptions newton)
      : problem(pb),
        d(pb.dim()),
        m(checked_constraints(pb)),
        shake(shake_),
        opts(newton),
        grads(pb, d, m) {
    // NaN: equal to no q_0, so the first step continues nothing (valgrind
    // saw the comparison read uninitialised memory)
    last_q1.setConstant(d, std::numeric_limits<double>::quiet_NaN());
  }

  HamiltonianProblem& problem;
  const int d, m;
  const bool shake;
  const NewtonOptions opts;
  RattleGradientCache grads;

  // continuity: the last accepted step's q_1 and h (a step from last_q1
  // continues it; the guesses extrapolate along such chains)
  Vec last_q1;
  double h_prev = 0.0;

  // rank deficiency
  bool rank_seen = false;
  double rank_t = std::numeric_limits<double>::quiet_NaN();
  double cond_max = 1.0;

  void note_rank(const MinNormSolver& s, double t) {
    cond_max = std::max(cond_max, s.condition_estimate());
    if (!s.rank_deficient()) return;
    ++problem.stats().rank_deficient;
    if (!rank_seen) {
      rank_seen = true;
      rank_t = t;
    }
  }
  void finish(long it) {
    Stats& st = problem.stats();
    st.newton_max_iterations = std::max(st.newton_max_iterations, it);
  }

  /// Fill from.force = f_p(t, x) if absent, using `work` (size 2d), as
  /// Stepper::ensure_force does.
  bool ensure_force(Point& from, VecRef work) {
    if (from.has_force) return true;
    if (!problem.field(from.t, from.x, work)) return false;
    from.force = work.tail(problem.dim());
    from.has_force = true;
    return true;
  }

 private:
  static int checked_constraints(const HamiltonianProblem& pb) {
    if (pb.constraints() < 1)
      throw InputError("invalidInput", "RATTLE and SHAKE need constraints (ConstraintFcn)");
    return pb.constraints();
  }
};

}  // namespace odepkg

#endif
