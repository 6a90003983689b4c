// sparse_rattle_no_malloc_test.cc — "Must not allocate" (Stepper.hpp) for
// the separable RATTLE and SHAKE with a sparse G (SparseSeparableRattle):
// after the warm-up steps (the velocity model learned, the patterns
// analysed), a step on the hanging chain makes no heap allocation outside
// the user's functions, counted by a global operator new (CountingNew.hpp:
// sparse matrices and std::vector) and EIGEN_RUNTIME_NO_MALLOC (Eigen's
// dense objects; a dense allocation fails eigen_assert, which EigenConfig.hpp
// turns into EigenAssertion).  The chain's functions run disarmed (its G is
// built from triplets).
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included (EigenConfig.hpp)
#include "EigenConfig.hpp"

#include "ChainProblem.hpp"
#include "AllocationChecks.hpp"
#include "constrained/Rattle.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

using namespace odepkg;
using odepkg::test::Chain;
using odepkg::test::Csc64;
using odepkg::test::Checks;
using odepkg::test::StepAllocations;

namespace {

/// The chain with every user function disarmed; `view`: G given as a view
/// of 64-bit arrays (as the binding gives Octave's), read armed.
std::unique_ptr<HamiltonianProblem> chain_problem(const Chain& c, bool view) {
  auto P = std::make_unique<HamiltonianProblem>(c.d(), [](double t, const ConstVecRef& x, VecRef dx) {
    const Checks off(false);
    Chain::field(t, x, dx);
  });
  P->set_constraints(
      c.m(),
      [c](const ConstVecRef& q, VecRef out) {
        const Checks off(false);
        c.g(q, out);
      },
      HamiltonianProblem::ConstraintGrad());
  if (view)
    P->set_sparse_constraint_grad_view([c](const ConstVecRef& q, HamiltonianProblem::GradSink& sink) {
      std::optional<Csc64> u;
      {
        const Checks off(false);
        SpMat G;
        c.G_sparse(q, G);
        G.makeCompressed();
        u.emplace(G);
      }
      sink(u->view());
    });
  else
    P->set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& G) {
      const Checks off(false);
      c.G_sparse(q, G);
    });
  return P;
}

/// Steps 1..n of h from x0 (the first `warmup` unarmed).
StepAllocations count(bool shake, int N, int n, int warmup, bool eigen = true, bool view = false) {
  Chain c;
  c.N = N;
  c.prune = true;  // as Octave's sparse(): exact zeros dropped, the pattern grows as met
  auto P = chain_problem(c, view);
  const Vec x0 = c.zigzag(0.3, 0.8);
  P->seed_sparse_pattern(x0.head(c.d()));
  Rattle r(*P, true, shake);
  Point a(P->state_size()), b(P->state_size());
  a.set(0.0, x0);
  return test::count_step_allocations(a, b, n, warmup, eigen,
                                     [&](Point& from, Point& to) { return r.step(from, 0.01, to); });
}

TEST(SparseRattleNoMalloc, StepsAfterTheWarmUpDoNotAllocate) {
  for (bool view : {false, true})
    for (bool shake : {false, true}) {
      const StepAllocations s = count(shake, 200, 120, 20, true, view);
      const char* what = shake ? (view ? "SHAKE, G viewed" : "SHAKE") : (view ? "RATTLE, G viewed" : "RATTLE");
      EXPECT_TRUE(s.ok) << what;
      EXPECT_TRUE(s.steps.empty()) << what << ": " << s.news << " operator new calls in " << s.steps.size()
                                   << " steps, the first at step " << (s.steps.empty() ? 0 : s.steps.front());
    }
}

// The counter sees the step's own allocations: the first steps (buffers
// sized, patterns analysed) are counted (Eigen's check off: it would throw).
TEST(SparseRattleNoMalloc, TheCounterSeesTheFirstSteps) {
  const StepAllocations s = count(false, 50, 3, 0, false);
  EXPECT_TRUE(s.ok);
  EXPECT_FALSE(s.steps.empty());
}

}  // namespace
