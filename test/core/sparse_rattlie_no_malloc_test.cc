// sparse_rattlie_no_malloc_test.cc — "Must not allocate" (Stepper.hpp) for
// the sparse RATTLie: after the warm-up steps (the patterns analysed), a
// step of SparseRattLie on a chain of rods makes no heap allocation outside
// the user's functions.  Two checks, as the sparse matrices and std::vector
// allocate through operator new and Eigen's dense objects through
// std::malloc: a global operator new that counts while armed, and
// EIGEN_RUNTIME_NO_MALLOC (a dense allocation fails eigen_assert, which
// EigenConfig.hpp turns into EigenAssertion).  The user's functions (the
// test chain's B is built from triplets) run disarmed.  Also FixedPatternLU
// against a dense LU, with the fill it analysed.
#define EIGEN_RUNTIME_NO_MALLOC  // before Eigen is first included (EigenConfig.hpp)
#include "EigenConfig.hpp"

#include "AllocationChecks.hpp"
#include "FixedPatternLU.hpp"
#include "LieChainProblem.hpp"
#include "lie/LieInitialData.hpp"
#include "lie/SparseRattLie.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace odepkg;
using namespace odepkg::lie;
using test::RodChain;
using test::Checks;

namespace {

/// The chain's problem on (S3xR3)^N, sparse B and block M, every user
/// function disarmed; `damping` makes f depend on the translations' velocity.
std::unique_ptr<LieGroupProblem> chain_problem(const RodChain& c, double damping) {
  auto f = [c, damping](double, const ConstVecRef& y, VecRef out) {
    const Checks off(false);
    c.force(out);
    for (int k = 0; k < c.N; ++k) out.segment(6 * k + 3, 3) += damping * y.segment(c.nq() + 6 * k + 3, 3);
  };
  auto lp = std::make_unique<LieGroupProblem>(make_lie_group("(S3xR3)^" + std::to_string(c.N), 0), c.block_mass(), f);
  lp->set_constraints(
      c.m(),
      [c](const ConstVecRef& q, VecRef out) {
        const Checks off(false);
        c.phi(q, out);
      },
      [c](const ConstVecRef& q, MatRef B) {
        const Checks off(false);
        c.grad_dense(q, B);
      });
  lp->set_sparse_constraint_grad([c](const ConstVecRef& q, SpMat& B) {
    const Checks off(false);
    c.grad_sparse(q, B);
  });
  return lp;
}

struct StepAllocations {
  std::vector<int> steps;  ///< the (1-based) steps that allocated
  long news = 0;           ///< operator new calls in them
  bool finite = true;      ///< the last state
};

/// `n` steps from y0, sizes h, h, h/2, ... (as under step doubling), each
/// after the first `warmup` armed.
StepAllocations allocating_steps(SparseRattLie& s, const Vec& y0, double h, int n, int warmup) {
  Point a(static_cast<int>(y0.size())), b(static_cast<int>(y0.size()));
  a.set(0.0, y0);
  // operator new calls in one armed step, -1 for a dense allocation
  auto armed_step = [&](double hi, StepStatus& st) -> long {
    const long before = test::operator_news();
    const Checks on(true);
    try {
      st = s.step(a, hi, b);
    } catch (const EigenAssertion&) {
      return -1;
    }
    return test::operator_news() - before;
  };
  StepAllocations out;
  for (int i = 1; i <= n; ++i) {
    const double hi = i % 3 == 0 ? h / 2 : h;
    StepStatus st = StepStatus::Success;
    const long news = i > warmup ? armed_step(hi, st) : (st = s.step(a, hi, b), 0L);
    if (news != 0) {
      out.steps.push_back(i);
      out.news += std::max(news, 0L);
    }
    if (news < 0) st = s.step(a, hi, b);  // unguarded, to go on from a valid state
    if (st != StepStatus::Success) {
      ADD_FAILURE() << "step " << i << " failed";
      break;
    }
    std::swap(a, b);
  }
  out.finite = a.x.allFinite();
  return out;
}

std::string list(const std::vector<int>& v) {
  std::string r;
  for (int i : v) r += (r.empty() ? "" : ", ") + std::to_string(i);
  return r;
}

}  // namespace

// The checks work: an allocation armed is seen by both.
TEST(SparseRattLieNoMalloc, GuardsDetectAllocation) {
  const long before = test::operator_news();
  {
    const Checks on(true);
    std::vector<int>* v = new std::vector<int>(8);
    delete v;
    EXPECT_THROW(
        {
          Vec w(16);
          w.setZero();
        },
        EigenAssertion);
  }
  EXPECT_GE(test::operator_news() - before, 2);
}

// Steps 6..150 on a swinging chain of 30 rods allocate nothing: the Schur
// complement's LU (one analysis, many factorizations), K's LDLᵀ, the caches
// of B, the velocity system; with and without a velocity-dependent force.
TEST(SparseRattLieNoMalloc, StepsAfterWarmUp) {
  const RodChain c(30);
  for (double damping : {0.0, 0.5}) {
    auto lp = chain_problem(c, damping);
    Vec y0 = c.y0();
    ASSERT_TRUE(project_initial_data(*lp, y0, 1e-14).converged);
    SparseRattLie s(*lp, NewtonOptions());
    const StepAllocations r = allocating_steps(s, y0, 5e-3, 150, 5);
    EXPECT_TRUE(r.finite);
    EXPECT_TRUE(r.steps.empty()) << "damping " << damping << ": " << r.news << " operator new calls in steps "
                                 << list(r.steps);
    EXPECT_EQ(s.velocity_dependent(), damping != 0.0);
    EXPECT_GT(s.schur_factorizations(), 100);  // the LU path ran
    EXPECT_LE(s.schur_analyses(), 2);  // one per pattern of B: its union grows once, in the warm-up
    std::printf("damping %g: %ld LU of S, %ld analyses, %ld inner sweeps\n", damping, s.schur_factorizations(),
                s.schur_analyses(), s.inner_sweeps());
  }
}

// FixedPatternLU solves a nonsymmetric sparse system (a perturbed 2-D
// Laplacian, scrambled) as a dense LU does, refactorizes new values on the
// same pattern without allocating, and a zero pivot makes it fail.
TEST(FixedPatternLU, MatchesADenseSolve) {
  const int k = 12, m = k * k;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  std::vector<int> scramble(m);
  for (int i = 0; i < m; ++i) scramble[i] = i;
  std::shuffle(scramble.begin(), scramble.end(), rng);
  auto matrix = [&]() {
    std::vector<Eigen::Triplet<double>> t;
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) {
        const int r = scramble[i * k + j];
        t.emplace_back(r, r, 4.0 + u(rng));
        if (i > 0) t.emplace_back(r, scramble[(i - 1) * k + j], -1.0 + u(rng));
        if (i + 1 < k) t.emplace_back(r, scramble[(i + 1) * k + j], -1.0 + u(rng));
        if (j > 0) t.emplace_back(r, scramble[i * k + j - 1], -1.0 + u(rng));
        if (j + 1 < k) t.emplace_back(r, scramble[i * k + j + 1], -1.0 + u(rng));
      }
    SpMat A(m, m);
    A.setFromTriplets(t.begin(), t.end());
    return A;
  };
  FixedPatternLU lu;
  SpMat A = matrix();
  lu.analyse(A);
  // nested-dissection-like fill of a k x k grid: far below the dense m²
  std::printf("grid %d x %d: %d entries of A, %d of the factors\n", k, k, static_cast<int>(A.nonZeros()),
              lu.nonzeros());
  EXPECT_LT(lu.nonzeros(), m * m / 4);
  Vec b = Vec::LinSpaced(m, -1.0, 2.0), x(m);
  for (int round = 0; round < 3; ++round) {
    if (round > 0) A = matrix();  // new values, the same pattern
    const Mat D(A);
    const Vec expected = D.partialPivLu().solve(b);
    {
      const Checks on(true);
      lu.zero();
      for (int j = 0; j < m; ++j)
        for (SpMat::InnerIterator it(A, j); it; ++it) lu.values()[lu.position(it.row(), j)] += it.value();
      ASSERT_TRUE(lu.factorize());
      lu.solve(b, x);
    }
    EXPECT_LT((x - expected).lpNorm<Eigen::Infinity>(), 1e-13 * expected.lpNorm<Eigen::Infinity>());
  }
  // a zero pivot: the first unknown decoupled and given a zero diagonal
  lu.zero();
  for (int j = 0; j < m; ++j)
    for (SpMat::InnerIterator it(A, j); it; ++it)
      if (it.row() != scramble[0] && j != scramble[0]) lu.values()[lu.position(it.row(), j)] += it.value();
  EXPECT_FALSE(lu.factorize());
  EXPECT_FALSE(lu.valid());
}
