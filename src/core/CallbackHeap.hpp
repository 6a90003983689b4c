// CallbackHeap.hpp — keeps the temporaries of a host's callbacks on the heap
// between calls, instead of in pages the kernel maps and zero-fills anew on
// every call.
//
// Octave (as most hosts) allocates its arrays with malloc.  glibc serves a
// block above M_MMAP_THRESHOLD by mmap, and gives the top of the heap back to
// the kernel once more than M_TRIM_THRESHOLD is free there.  Both start at
// 128 KiB; glibc raises them (the trim threshold to twice the other) the first
// time a block that was mmap'ed, of at most 32 MiB, is freed (mallopt(3),
// "dynamic mmap threshold").  Until a session has freed such a block, a user
// function whose temporaries exceed the trim threshold (a long chain's sparse
// Jacobian) returns them to the kernel at every call and faults them in
// again, zero-filled, at the next: a page fault per 4 KiB, per call, which
// can cost more than the solver's own step.  Which state a session is in
// depends on what it freed before (an output above the 32 MiB cap raises
// nothing).
//
// raise_heap_thresholds does what glibc's own rule does after such a free: it
// allocates a block of the given size (mmap'ed while the threshold is below
// it) and frees it.  Nothing is set by mallopt, so glibc's dynamic adjustment
// stays on.  Consequences: the process keeps up to twice that size of free
// heap instead of returning it (as after any such free); a session already
// past that size is unchanged, and so is one whose heap can serve the block
// from a free chunk (then nothing is mmap'ed and nothing raised).  Elsewhere
// than glibc nothing is done.
#ifndef ODEPKG_CALLBACK_HEAP_HPP
#define ODEPKG_CALLBACK_HEAP_HPP

#include <cstddef>
#include <cstdlib>

namespace odepkg {

/// glibc's cap on the dynamic mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX on
/// 64-bit targets), less room for the block's header and page rounding.
constexpr std::size_t kHeapThresholdCap = (std::size_t{32} << 20) - (std::size_t{64} << 10);
/// glibc's initial mmap threshold: below it the rule cannot raise anything.
constexpr std::size_t kHeapThresholdStart = std::size_t{128} << 10;

/// The block size for callbacks whose arguments hold `state_numbers`
/// doubles: 16 states' worth (the temporaries of one call of a vectorized
/// user function: a few arrays of the state's size, a sparse Jacobian with
/// its index arrays), capped at glibc's limit; 0 when too small to matter.
inline std::size_t heap_threshold_for(std::size_t state_numbers) {
  const std::size_t bytes = state_numbers * sizeof(double) * 16;
  if (bytes <= kHeapThresholdStart) return 0;
  return bytes < kHeapThresholdCap ? bytes : kHeapThresholdCap;
}

/// Raises glibc's mmap threshold to `bytes` (and its trim threshold to
/// twice that) if they are lower, by its own rule: a block of that size
/// allocated and freed.  One page of it is touched (the kernel maps no
/// more); the store also keeps the compiler from removing the pair.
inline void raise_heap_thresholds(std::size_t bytes) {
#if defined(__GLIBC__)
  if (bytes == 0) return;
  if (bytes > kHeapThresholdCap) bytes = kHeapThresholdCap;
  void* block = std::malloc(bytes);
  if (block == nullptr) return;
  static_cast<volatile char*>(block)[0] = 0;
  std::free(block);
#else
  (void)bytes;
#endif
}

}  // namespace odepkg

#endif
