// CountingNew.hpp — heap accounting for a test binary: a global operator new
// that counts its calls (operator_news()) unless paused (HeapCountPause in
// scope, e.g. around a user function whose allocations are not the code
// under test's).  Include it in one file of the executable only: it
// replaces the global operator new and delete.
#ifndef ODEPKG_TEST_COUNTING_NEW_HPP
#define ODEPKG_TEST_COUNTING_NEW_HPP

#include <atomic>
#include <cstdlib>
#include <new>

namespace odepkg::test {
inline std::atomic<long> g_operator_news{0};
inline std::atomic<bool> g_count_paused{false};
/// operator new calls so far (outside pauses).
inline long operator_news() { return g_operator_news.load(); }
/// No counting in its scope.
struct HeapCountPause {
  bool was = g_count_paused.exchange(true);
  ~HeapCountPause() { g_count_paused = was; }
};
}  // namespace odepkg::test

void* operator new(std::size_t n) {
  if (!odepkg::test::g_count_paused) ++odepkg::test::g_operator_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::get_temporary_buffer, e.g. under
// std::stable_partition, allocates with them and frees with the plain
// delete above: with the library's own nothrow new that pair mismatched,
// which valgrind reports).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (!odepkg::test::g_count_paused) ++odepkg::test::g_operator_news;
  return std::malloc(n ? n : 1);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

#endif
