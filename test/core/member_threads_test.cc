// MemberThreads: every member visited exactly once per call, for any
// number of threads and members, and a member's result independent of the
// number of threads (bit for bit).
#include "ensemble/MemberThreads.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using odepkg::ensemble::MemberThreads;

namespace {

// A member's "stage": a few hundred floating-point operations whose result
// depends on the member only (a logistic-map orbit from a member-given seed).
double member_work(int j, int round) {
  double x = 0.1 + 0.8 * std::fmod(0.6180339887 * (j + 1), 1.0);
  for (int i = 0; i < 200 + round; ++i) x = 3.9 * x * (1.0 - x);
  return x;
}

std::vector<double> run(int threads, int K, int rounds, std::vector<int>* visits) {
  MemberThreads pool(threads);
  std::vector<double> out(K, 0.0);
  if (visits) visits->assign(K, 0);
  for (int round = 0; round < rounds; ++round) {
    auto body = [&](int begin, int end) {
      for (int j = begin; j < end; ++j) {
        out[j] += member_work(j, round);
        if (visits) ++(*visits)[j];
      }
    };
    pool.for_members(K, body);
  }
  return out;
}

}  // namespace

TEST(MemberThreads, EveryMemberOncePerCall) {
  for (int threads : {1, 2, 3, 5})
    for (int K : {1, 2, 3, 7, 64, 1001}) {
      std::vector<int> visits;
      run(threads, K, 17, &visits);
      for (int j = 0; j < K; ++j) EXPECT_EQ(visits[j], 17) << "threads " << threads << " K " << K << " member " << j;
    }
}

TEST(MemberThreads, ResultsIndependentOfThreadCount) {
  const int K = 999, rounds = 50;
  const std::vector<double> one = run(1, K, rounds, nullptr);
  for (int threads : {2, 3, 4}) {
    const std::vector<double> many = run(threads, K, rounds, nullptr);
    for (int j = 0; j < K; ++j) ASSERT_EQ(one[j], many[j]) << "threads " << threads << " member " << j;
  }
}

TEST(MemberThreads, DefaultIsAtLeastOneAndAtMostOnePerMinMembers) {
  EXPECT_EQ(MemberThreads::default_threads(1), 1);
  EXPECT_EQ(MemberThreads::default_threads(63), 1);
  EXPECT_LE(MemberThreads::default_threads(128), 2);
  EXPECT_GE(MemberThreads::default_threads(100000), 1);
}
