// The repo's examples/ keeps verbatim copies of the inputs users bring (../shared/examples/), so
// tests run from a clone without shared/ beside it. When shared/ is there, they must be equal.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gf {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Examples, RepoCopiesOfTheUsersExamplesAreVerbatim) {
  const fs::path shared = fs::path(GPUFLEET_SHARED_DIR) / "examples";
  const fs::path repo = GPUFLEET_EXAMPLES_DIR;
  ASSERT_TRUE(fs::exists(repo / "create_cluster.json"));
  if (!fs::exists(shared)) GTEST_SKIP() << "no ../shared/examples beside this checkout";
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(shared)) {
    const fs::path copy = repo / entry.path().filename();
    ASSERT_TRUE(fs::exists(copy)) << copy << " is missing: copy " << entry.path()
                                  << " into examples/";
    EXPECT_EQ(slurp(copy), slurp(entry.path())) << copy << " differs from " << entry.path();
    ++compared;
  }
  EXPECT_GE(compared, 8);
}

}  // namespace
}  // namespace gf
