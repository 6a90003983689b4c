// PagePrefault: sequential writes into fresh memory find the block ahead
// already mapped, and populating changes no value already written.
#include "PagePrefault.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <unistd.h>

#include <cstring>
#include <vector>

namespace {

/// Fresh anonymous memory, unmapped at the end of the scope.
struct Fresh {
  explicit Fresh(std::size_t n) : size(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
    // base pages even where transparent huge pages are "always" (the
    // counts below are of base pages)
    if (base) madvise(base, n, MADV_NOHUGEPAGE);
  }
  ~Fresh() {
    if (base) munmap(base, size);
  }
  char* base;
  std::size_t size;
};

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

/// Pages of [p, p + n) (p page-aligned) that are mapped (mincore).
std::size_t resident_pages(char* p, std::size_t n) {
  const std::size_t page = kPage, pages = (n + page - 1) / page;
  std::vector<unsigned char> v(pages);
  if (mincore(p, n, v.data()) != 0) return std::size_t(-1);
  std::size_t r = 0;
  for (unsigned char c : v) r += c & 1;
  return r;
}

}  // namespace

// The populate is itself counted as faults by getrusage (the kernel faults
// the pages in), so what is checked is where the pages are mapped: the
// block ahead after ensure(), before any write; nothing beyond it.
TEST(PagePrefault, EnsureMapsTheBlockAheadAndNothingBeyond) {
  constexpr std::size_t kColumn = 320000;  // a state of 4*10^4 doubles
  Fresh m(std::size_t(64) << 20);
  ASSERT_NE(m.base, nullptr);
  ASSERT_EQ(resident_pages(m.base, m.size), 0u);
  odepkg::PagePrefault pf(m.base, m.size);
  pf.ensure(kColumn);
  if (!pf.enabled()) GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported here (Linux < 5.14): plain faults";
  EXPECT_EQ(pf.ready(), odepkg::PagePrefault::kBlock);
  EXPECT_EQ(resident_pages(m.base, pf.ready()), pf.ready() / kPage);
  EXPECT_EQ(resident_pages(m.base + pf.ready(), m.size - pf.ready()), 0u);
  // writes within the block populate nothing more; the next block comes
  // when a write passes its end
  std::size_t k = 0;
  for (; (k + 1) * kColumn <= odepkg::PagePrefault::kBlock; ++k) {
    pf.ensure((k + 1) * kColumn);
    std::memset(m.base + k * kColumn, 1, kColumn);
  }
  EXPECT_EQ(pf.ready(), odepkg::PagePrefault::kBlock);
  pf.ensure((k + 1) * kColumn);
  EXPECT_EQ(pf.ready(), 2 * odepkg::PagePrefault::kBlock);
  EXPECT_EQ(resident_pages(m.base, m.size), pf.ready() / kPage);
  // the end of the memory is populated to its end, not past it
  pf.ensure(m.size);
  EXPECT_EQ(pf.ready(), m.size);
  EXPECT_EQ(resident_pages(m.base, m.size), m.size / kPage);
}

TEST(PagePrefault, WrittenPrefixAndUnalignedBaseKeepTheirValues) {
  Fresh m(std::size_t(12) << 20);
  ASSERT_NE(m.base, nullptr);
  // a base inside a page and a prefix already written, ending mid-page
  char* base = m.base + 100;
  const std::size_t size = m.size - 100, written = 3 * 4096 + 7;
  for (std::size_t i = 0; i < written; ++i) base[i] = char(i % 251);
  odepkg::PagePrefault pf(base, size, written);
  EXPECT_GE(pf.ready(), written);
  pf.ensure(size);
  {  // whether the system supports it at all, on page-aligned fresh memory
    Fresh probe(kPage);
    odepkg::PagePrefault p(probe.base, probe.size);
    p.ensure(probe.size);
    if (!p.enabled()) GTEST_SKIP() << "MADV_POPULATE_WRITE unsupported here (Linux < 5.14): plain faults";
  }
  EXPECT_TRUE(pf.enabled());
  EXPECT_EQ(pf.ready(), size);
  // every page mapped before any write (madvise took page-aligned ranges:
  // a misaligned call fails, and the object disables itself)
  EXPECT_EQ(resident_pages(m.base, m.size), m.size / kPage);
  for (std::size_t i = 0; i < written; ++i) ASSERT_EQ(base[i], char(i % 251)) << i;
  for (std::size_t i = written; i < size; i += 4093) ASSERT_EQ(base[i], 0) << i;  // fresh memory reads zero
  std::memset(base + written, 7, size - written);
  EXPECT_EQ(base[size - 1], 7);
  EXPECT_EQ(m.base[99], 0);
}

TEST(PagePrefault, NoMemoryIsANoOp) {
  odepkg::PagePrefault pf;
  pf.ensure(1 << 20);
  EXPECT_EQ(pf.ready(), 0u);
  odepkg::PagePrefault empty(nullptr, 0);
  empty.ensure(0);
  EXPECT_EQ(empty.ready(), 0u);
}
