// docs/architecture.md, docs/style.md: nothing under src/ reads the system clock, sleeps or draws
// unseeded randomness, except the clock itself (src/core/clock.*), the generator's seeding
// (src/core/random.*) and the loop (src/loop/), which owns waiting for the next batch.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace gf {
namespace {

namespace fs = std::filesystem;

bool allowed(const fs::path& rel) {
  const std::string s = rel.generic_string();
  return s.rfind("core/clock.", 0) == 0 || s.rfind("core/random.", 0) == 0 ||
         s.rfind("loop/", 0) == 0;
}

// The one pattern both tests use: the check and its self-check cannot drift apart.
const std::regex& forbidden() {
  static const std::regex re(
      R"(system_clock::now|steady_clock::now|high_resolution_clock|sleep_for|sleep_until|)"
      R"(\busleep\s*\(|\bnanosleep\s*\(|(^|[^_a-zA-Z])sleep\s*\(|\btime\s*\(\s*(NULL|nullptr|0)\s*\)|)"
      R"(gettimeofday|clock_gettime|random_device|(^|[^_a-zA-Z.:>])s?rand\s*\(\s*\))");
  return re;
}

TEST(Determinism, NoFileOutsideClockAndLoopReadsTheClockSleepsOrUsesUnseededRandomness) {
  const fs::path src = fs::path(GPUFLEET_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::exists(src));
  std::vector<std::string> offences;
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".h") continue;
    ++files;
    const fs::path rel = fs::relative(entry.path(), src);
    if (allowed(rel)) continue;
    std::ifstream in(entry.path());
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (std::regex_search(line, forbidden())) {
        offences.push_back(rel.generic_string() + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  EXPECT_GT(files, 10u);
  std::ostringstream msg;
  for (const auto& o : offences) msg << "  " << o << "\n";
  EXPECT_TRUE(offences.empty()) << "use Clock / Random instead:\n" << msg.str();
}

TEST(Determinism, TheCheckCatchesWhatItLooksFor) {
  // The pattern the check enforces must match every construct it forbids (a check that matches
  // nothing passes vacuously) and leave the sanctioned ones alone.
  for (const char* line :
       {"auto t = std::chrono::system_clock::now();", "auto t = std::chrono::steady_clock::now();",
        "std::chrono::high_resolution_clock c;", "std::this_thread::sleep_for(1s);",
        "std::this_thread::sleep_until(t);", "usleep(10);", "nanosleep(&ts, nullptr);", "sleep(1);",
        "time_t t = time(NULL);", "time(nullptr);", "time(0);", "gettimeofday(&tv, nullptr);",
        "clock_gettime(CLOCK_REALTIME, &ts);", "std::random_device rd;", "int r = rand();",
        "srand();"}) {
    EXPECT_TRUE(std::regex_search(line, forbidden())) << line;
  }
  for (const char* line :
       {"int r = rng.uniform(3);", "Time now = clock_.now();", "x.time(clock_);", "runtime(0);",
        "brand();", "operand( )", "// the loop owns waiting", "clock->sleep_hint"}) {
    EXPECT_FALSE(std::regex_search(line, forbidden())) << line;
  }
}

}  // namespace
}  // namespace gf
