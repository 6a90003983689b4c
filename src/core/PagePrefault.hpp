// PagePrefault.hpp — fresh memory faulted in ahead of its first write, by
// the block, with one madvise(MADV_POPULATE_WRITE) (Linux >= 5.14) instead
// of one page fault per 4 KiB page.
//
// Why: a run's output is written once, column by column, into memory that
// the kernel maps on first touch, one trap per 4 KiB page (a state of
// 2*10^4 numbers: 78 per step); the trap costs more than zeroing its page,
// and one call per block maps the same pages without them.  Elsewhere
// (another OS, an older kernel) the call fails or does nothing, and the
// writes fault as before: only the cost changes, never a value.
#ifndef ODEPKG_PAGE_PREFAULT_HPP
#define ODEPKG_PAGE_PREFAULT_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace odepkg {

/// Keeps [base, base + ready()) populated ahead of sequential writes into
/// [base, base + size): before writing up to byte `end`, call
/// ensure(end).
class PagePrefault {
 public:
  /// Bytes populated per call, at least.
  static constexpr std::size_t kBlock = std::size_t(8) << 20;

  PagePrefault() = default;
  PagePrefault(void* base, std::size_t size, std::size_t written = 0) { reset(base, size, written); }

  /// `written`: the bytes at the start already written (so mapped).
  void reset(void* base, std::size_t size, std::size_t written = 0) {
    base_ = static_cast<char*>(base);
    size_ = size;
    // from the first page boundary at or after `written`: madvise wants
    // page-aligned addresses (the partial page before it is faulted by the
    // write, as before)
    const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(base_) + written;
    const std::uintptr_t page = page_size();
    ready_ = written + static_cast<std::size_t>(((b + page - 1) / page) * page - b);
  }

  /// Populates ahead so that [base, base + end) is mapped (as far as the
  /// system allows).
  void ensure(std::size_t end) {
    end = std::min(end, size_);
    if (!enabled_ || end <= ready_ || !base_) return;
    end = std::min(size_, std::max(end, ready_ + kBlock));
    const std::size_t page = page_size();
    std::size_t len = end - ready_;
    if (end < size_) len = (len / page) * page;  // whole pages but at the end
    if (len == 0) return;
    if (!populate(base_ + ready_, len)) enabled_ = false;  // unsupported here: plain faults
    ready_ += len;
  }

  std::size_t ready() const { return ready_; }
  bool enabled() const { return enabled_; }

 private:
  static std::size_t page_size() {
#if defined(__linux__)
    static const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : 4096;
#else
    return 4096;
#endif
  }

  static bool populate(char* p, std::size_t len) {
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
    constexpr int MADV_POPULATE_WRITE = 23;  // linux/mman.h, 5.14
#endif
    // (the last, partial page of `len` is rounded up by the kernel; it is
    // in the same mapping as the allocation's last byte, and populating
    // mapped memory changes no value)
    return madvise(p, len, MADV_POPULATE_WRITE) == 0;
#else
    (void)p;
    (void)len;
    return false;
#endif
  }

  char* base_ = nullptr;
  std::size_t size_ = 0, ready_ = 0;
  bool enabled_ = true;
};

}  // namespace odepkg

#endif
