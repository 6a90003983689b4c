#include "TestProblems.hpp"
#include "StormerVerlet.hpp"
#include <gtest/gtest.h>
using namespace odepkg;
TEST(Smoke, KeplerOnePeriod) {
  test::Kepler k; auto P = k.make(); StormerVerlet sv(P, true);
  IntegratorOptions o; o.fixed_step = 1e-3; Integrator I(sv, o); test::Recorder r;
  Vec ts(2); ts << 0, 2 * M_PI; I.run(ts, k.initial(), r);
  EXPECT_LT((r.x.back() - k.exact(2 * M_PI)).norm(), 1e-3);
}
