// MemberThreads.hpp — a loop over an ensemble's members split across a
// fixed set of threads that live as long as the run: the compiled kernels
// of a native model need no interpreter, so the members' evaluations of one
// stage may run on the machine's cores.
//
// The members [0, K) are cut into `threads` contiguous ranges of nearly
// equal size; the calling thread runs the first, each worker one of the
// others, and for_members returns when all are done.  Each member's result
// is computed by the same code from the same inputs whatever the range it
// falls in, so results do not depend on the number of threads.  The body
// must not throw and must not touch the host (Octave's interpreter, its
// interrupt poll): only the calling thread may.  No allocation per call: a
// plain function pointer and a context, not a std::function.
#ifndef ODEPKG_ENSEMBLE_MEMBER_THREADS_HPP
#define ODEPKG_ENSEMBLE_MEMBER_THREADS_HPP

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace odepkg::ensemble {

class MemberThreads {
 public:
  /// threads >= 1 (1: everything on the calling thread, no worker).
  explicit MemberThreads(int threads) : threads_(std::max(1, threads)) {
    workers_.reserve(threads_ - 1);
    for (int w = 1; w < threads_; ++w) workers_.emplace_back([this, w]() { work(w); });
  }
  ~MemberThreads() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  MemberThreads(const MemberThreads&) = delete;
  MemberThreads& operator=(const MemberThreads&) = delete;

  int threads() const { return threads_; }

  /// A default for K members: the machine's cores, at most one thread per
  /// `min_members` members (a thread's wake-up costs microseconds).
  static int default_threads(long K, long min_members = 64) {
    const long cores = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<int>(std::max(1L, std::min(cores, K / std::max(1L, min_members))));
  }

  /// body(begin, end) over [0, K) in `threads()` ranges; returns when all
  /// are done.
  template <class Body>
  void for_members(int K, Body& body) {
    if (threads_ == 1 || K < threads_) {
      body(0, K);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &call<Body>;
      context_ = &body;
      K_ = K;
      pending_.store(threads_ - 1, std::memory_order_relaxed);
      ++generation_;
    }
    wake_.notify_all();
    const Range r = range(0, K);
    body(r.begin, r.end);
    // the other ranges: wait (a short spin first: a stage takes microseconds)
    for (int spin = 0; spin < 20000 && pending_.load(std::memory_order_acquire) > 0; ++spin)
      std::this_thread::yield();
    if (pending_.load(std::memory_order_acquire) > 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this]() { return pending_.load(std::memory_order_acquire) == 0; });
    }
  }

 private:
  struct Range {
    int begin, end;
  };
  /// The w-th of threads_ contiguous ranges of [0, K).
  Range range(int w, int K) const {
    const long k = K;
    return {static_cast<int>(k * w / threads_), static_cast<int>(k * (w + 1) / threads_)};
  }
  template <class Body>
  static void call(void* context, int begin, int end) {
    (*static_cast<Body*>(context))(begin, end);
  }

  void work(int w) {
    unsigned long seen = 0;
    for (;;) {
      void (*task)(void*, int, int);
      void* context;
      int K;
      // a short spin first (the next stage follows within microseconds),
      // then sleep until woken
      for (int spin = 0; spin < 20000 && generation_.load(std::memory_order_acquire) == seen; ++spin)
        std::this_thread::yield();
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&]() { return generation_.load(std::memory_order_relaxed) != seen; });
        seen = generation_.load(std::memory_order_relaxed);
        if (stop_) return;
        task = task_;
        context = context_;
        K = K_;
      }
      const Range r = range(w, K);
      task(context, r.begin, r.end);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);  // the waiter checks under the lock: no lost wake-up
        done_.notify_one();
      }
    }
  }

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<unsigned long> generation_{0};
  bool stop_ = false;
  void (*task_)(void*, int, int) = nullptr;
  void* context_ = nullptr;
  int K_ = 0;
  std::atomic<int> pending_{0};
};

}  // namespace odepkg::ensemble

#endif
