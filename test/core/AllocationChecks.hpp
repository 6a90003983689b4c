// AllocationChecks.hpp — the "must not allocate" checks of a test binary:
// operator new counted (CountingNew.hpp: sparse matrices, std::vector) and
// Eigen's dense allocations refused (EIGEN_RUNTIME_NO_MALLOC; a refused
// allocation fails eigen_assert, which EigenConfig.hpp turns into
// EigenAssertion).  The file that includes it must define
// EIGEN_RUNTIME_NO_MALLOC before Eigen is first included.
#ifndef ODEPKG_TEST_ALLOCATION_CHECKS_HPP
#define ODEPKG_TEST_ALLOCATION_CHECKS_HPP

#ifndef EIGEN_RUNTIME_NO_MALLOC
#error "AllocationChecks.hpp: define EIGEN_RUNTIME_NO_MALLOC before Eigen is included"
#endif

#include "CountingNew.hpp"
#include "EigenConfig.hpp"
#include "Stepper.hpp"

#include <utility>
#include <vector>

namespace odepkg::test {

/// In its scope both checks on (`armed`: the step) or off (a user
/// function); `eigen` false: the count only.  The previous state restored
/// after it.
class Checks {
 public:
  explicit Checks(bool armed, bool eigen = true)
      : paused_(g_count_paused.exchange(!armed)), eigen_(Eigen::internal::is_malloc_allowed()) {
    Eigen::internal::set_is_malloc_allowed(!(armed && eigen));
  }
  ~Checks() {
    g_count_paused = paused_;
    Eigen::internal::set_is_malloc_allowed(eigen_);
  }
  Checks(const Checks&) = delete;
  Checks& operator=(const Checks&) = delete;

 private:
  bool paused_, eigen_;
};

/// Both checks off in its scope (around a user function).
struct Disarmed {
  Checks off{false};
};

/// The steps that allocated among 1..n and their operator new calls.
struct StepAllocations {
  std::vector<int> steps;
  long news = 0;
  bool ok = true;  ///< every step succeeded
};

/// n steps from a (b the next point) by step(a, b), a StepStatus; steps
/// after the first `warmup` armed (`eigen` false: counted only).
template <class Step>
StepAllocations count_step_allocations(Point& a, Point& b, int n, int warmup, bool eigen, Step step) {
  StepAllocations out;
  for (int i = 1; i <= n; ++i) {
    const long before = operator_news();
    StepStatus st;
    {
      const Checks on(i > warmup, eigen);
      st = step(a, b);
    }
    if (st != StepStatus::Success) {
      out.ok = false;
      break;
    }
    const long news = operator_news() - before;
    if (i > warmup && news > 0) {
      out.steps.push_back(i);
      out.news += news;
    }
    std::swap(a, b);
  }
  return out;
}

}  // namespace odepkg::test

#endif
