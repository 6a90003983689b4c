// CallbackHeap: raising glibc's heap thresholds keeps a callback's
// temporaries in the heap between calls.  An executable of its own (in no
// test group): it needs a process whose thresholds are still glibc's
// initial ones.
#include "CallbackHeap.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

/// The minor page faults of one "callback": six temporaries of 96 KiB (each
/// below glibc's initial mmap threshold: from the top of the heap), written
/// and freed.  600 KiB freed at the top exceed the initial trim threshold.
long faults_of_one_call() {
  constexpr std::size_t kBlock = std::size_t{96} << 10;
  constexpr int kBlocks = 6;
  void* blocks[kBlocks];
  const long before = minor_faults();
  for (auto& b : blocks) {
    b = std::malloc(kBlock);
    if (b) std::memset(b, 1, kBlock);
  }
  for (auto& b : blocks) std::free(b);
  return minor_faults() - before;
}

}  // namespace

TEST(CallbackHeap, ThresholdForAStateIsSixteenStatesCapped) {
  EXPECT_EQ(odepkg::heap_threshold_for(4), 0u);        // 512 bytes: nothing to raise
  EXPECT_EQ(odepkg::heap_threshold_for(1024), 0u);     // 128 KiB: the initial threshold
  EXPECT_EQ(odepkg::heap_threshold_for(20000), 20000u * 8 * 16);
  EXPECT_EQ(odepkg::heap_threshold_for(std::size_t{1} << 30), odepkg::kHeapThresholdCap);
}

TEST(CallbackHeap, RaisedThresholdsStopTheFaultsOfRepeatedCalls) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc's dynamic mmap threshold only";
#else
  faults_of_one_call();  // the heap grown once
  // initial thresholds: the temporaries go back to the kernel at every call
  // and are faulted in again (96 KiB blocks: 24 pages each, 144 in all)
  const long cold = faults_of_one_call();
  EXPECT_GE(cold, 60) << "glibc did not trim the heap's top: the test's premise (initial thresholds) is not met";
  odepkg::raise_heap_thresholds(std::size_t{8} << 20);
  faults_of_one_call();
  const long warm = faults_of_one_call();
  EXPECT_LE(warm, 8) << "the freed temporaries were still returned to the kernel";
#endif
}
