// The real `gpufleet simulate` binary: a shipped scenario runs and writes its outputs; a broken
// scenario exits non-zero naming the field path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::run_command;
using testing::TempDir;

TEST(SimulateCli, SeedScenarioExitsZeroWritesTheOutputsAndSummarizes) {
  TempDir dir;
  const std::string out = dir.file("out");
  CommandResult r = run_command(
      {GPUFLEET_BINARY, "simulate",
       std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/seed-scarce-capacity.yaml", "--out",
       out, "--snapshot-every", "1h"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f :
       {"calls.jsonl", "events.jsonl", "snapshots.jsonl", "state.json", "metrics.json"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
    EXPECT_NE(r.out.find(out + "/" + f), std::string::npos) << "summary names " << f << ":\n"
                                                            << r.out;
  }
  EXPECT_NE(r.out.find("my-training-cluster"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("InService"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("total cost"), std::string::npos) << r.out;
  std::ifstream in(out + "/state.json");
  std::stringstream ss;
  ss << in.rdbuf();
  auto state = parse_json(ss.str());
  ASSERT_TRUE(state.ok());
  EXPECT_EQ((*state)["clusters"][0]["ClusterStatus"], "InService");
}

// The summary prints what each scenario is about: queueing delay and utilization for jobs,
// remediation results for faults (they were only in metrics.json).
TEST(SimulateCli, SummaryPrintsTheKpisTheScenarioExercises) {
  TempDir dir;
  CommandResult jobs =
      run_command({GPUFLEET_BINARY, "simulate",
                   std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/fragmented-fleet.yaml",
                   "--out", dir.file("frag")});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.out;
  EXPECT_TRUE(
      std::regex_search(jobs.out, std::regex(R"(jobs [0-9]+: queueing delay p50 \S+, p95 )")))
      << jobs.out;
  EXPECT_TRUE(std::regex_search(jobs.out, std::regex(R"(GPU utilization [0-9.]+% \()")))
      << jobs.out;
  EXPECT_EQ(jobs.out.find("alerts "), std::string::npos) << "no faults in this scenario";
  CommandResult faults =
      run_command({GPUFLEET_BINARY, "simulate",
                   std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/node-faults.yaml",
                   "--until", "14h", "--out", dir.file("faults")});
  ASSERT_EQ(faults.exit_code, 0) << faults.out;
  EXPECT_TRUE(std::regex_search(
      faults.out, std::regex(R"(alerts [0-9]+ \([0-9]+ fired\); remediations [0-9]+ proposed, )"
                             R"([0-9]+ auto-approved, [0-9]+ succeeded)")))
      << faults.out;
}

TEST(SimulateCli, BadScenarioExitsNonZeroNamingTheFieldPath) {
  TempDir dir;
  const std::string file = dir.file("bad.yaml");
  std::ofstream(file)
      << "steps:\n  - { at: 0s, call: GET /v1/clusters }\n  - { at: 5x, call: GET /v1/clusters }\n";
  CommandResult r = run_command({GPUFLEET_BINARY, "simulate", file, "--out", dir.file("out")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("steps[1].at: invalid duration \"5x\""), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out/events.jsonl")));

  CommandResult flag = run_command({GPUFLEET_BINARY, "simulate", file, "--until", "soon"});
  EXPECT_NE(flag.exit_code, 0);
  EXPECT_NE(flag.out.find("--until"), std::string::npos) << flag.out;
}

}  // namespace
}  // namespace gf
