#include "core/memory.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace gf {
namespace {

// Resident set size in bytes, from /proc/self/statm (pages).
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t total = 0;
  size_t resident = 0;
  statm >> total >> resident;
  return resident * 4096;
}

TEST(Allocator, NamesTheAllocatorThatServesMalloc) {
  const std::string name = allocator_name();
  EXPECT_TRUE(name == "jemalloc" || name == "glibc") << name;
}

// The rule behind snapshots and recovery (docs/performance.md "The allocator"): what a burst of
// small allocations held goes back to the OS once it is freed and release_free_memory() runs,
// rather than staying resident until the allocator's own decay.
TEST(Allocator, ReleaseFreeMemoryReturnsABurstOfSmallAllocationsToTheOs) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator keeps freed blocks in quarantine";
#endif
  const size_t before = resident_bytes();
  {
    std::vector<std::unique_ptr<std::string>> burst;
    burst.reserve(400'000);
    for (size_t i = 0; i < 400'000; ++i)
      burst.push_back(std::make_unique<std::string>(200, static_cast<char>('a' + i % 26)));
    ASSERT_GT(resident_bytes(), before + 64u * 1024 * 1024);
  }
  release_free_memory();
  EXPECT_LT(resident_bytes(), before + 32u * 1024 * 1024);
}

}  // namespace
}  // namespace gf
