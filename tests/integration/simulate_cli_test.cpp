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
  EXPECT_TRUE(std::regex_search(
      jobs.out,
      std::regex(
          R"(jobs [0-9]+ \([0-9]+ started, [0-9]+ never started\): queueing delay p50 \S+, p95 )")))
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

// A trace scenario with the failure model: the goodput and fault lines, the HTML report, and
// a comparison of variants on one seed as a side-by-side table (docs/scenarios.md).
TEST(SimulateCli, TraceScenarioReportsGoodputWritesTheReportAndComparesVariants) {
  TempDir dir;
  const std::string scenario =
      std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/itp-fleet.yaml";
  CommandResult r = run_command({GPUFLEET_BINARY, "simulate", scenario, "--out", dir.file("one"),
                                 "--report", dir.file("report.html")});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(goodput [0-9.]+% \([0-9.]+ GPU-h of work kept)")))
      << r.out;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(faults [0-9]+ \([0-9.]+ per 1,000 node-days\))")))
      << r.out;
  EXPECT_NE(r.out.find("report: " + dir.file("report.html")), std::string::npos) << r.out;
  std::ifstream in(dir.file("report.html"));
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  std::ifstream m(dir.file("one/metrics.json"));
  std::stringstream ms;
  ms << m.rdbuf();
  auto metrics = parse_json(ms.str());
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ((*metrics)["traces"]["submitted"], 225);
  EXPECT_TRUE((*metrics)["fleet"].contains("goodput"));

  CommandResult cmp =
      run_command({GPUFLEET_BINARY, "simulate", scenario, "--out", dir.file("cmp"), "--until", "3d",
                   "--compare", "failures.operator=none", "config.reservation=false"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.out;
  EXPECT_NE(cmp.out.find("3 variants on seed 42"), std::string::npos) << cmp.out;
  EXPECT_TRUE(std::regex_search(
      cmp.out,
      std::regex(
          R"(KPI +itp-fleet +failures.operator=none +config.reservation=false +CHANGE 1 +CHANGE 2)")))
      << cmp.out;
  EXPECT_TRUE(
      std::regex_search(cmp.out, std::regex(R"(goodput \(work kept / GPU-h paid\) +[0-9.]+%)")))
      << cmp.out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("cmp/variant-3/metrics.json")));
}

TEST(SimulateCli, BadTraceAndBadSetExitTwoNamingWhatIsWrong) {
  TempDir dir;
  std::ofstream(dir.file("t.csv")) << "job_id,submission_time,duration,num_gpu\nx,10,oops,1\n";
  std::ofstream(dir.file("s.yaml")) << "traces: [t.csv]\n";
  CommandResult trace =
      run_command({GPUFLEET_BINARY, "simulate", dir.file("s.yaml"), "--out", dir.file("out")});
  EXPECT_EQ(trace.exit_code, 2) << trace.out;
  EXPECT_NE(trace.out.find("traces[0]: t.csv: line 2: duration: expected an integer, got \"oops\""),
            std::string::npos)
      << trace.out;
  CommandResult set =
      run_command({GPUFLEET_BINARY, "simulate",
                   std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/itp-fleet.yaml", "--set",
                   "steps[9].at=1", "--out", dir.file("out")});
  EXPECT_EQ(set.exit_code, 2) << set.out;
  EXPECT_NE(set.out.find("--set steps[9].at: there is no item 9 there"), std::string::npos)
      << set.out;
  CommandResult failures =
      run_command({GPUFLEET_BINARY, "simulate",
                   std::string(GPUFLEET_SOURCE_DIR) + "/examples/scenarios/itp-fleet.yaml", "--set",
                   "failures.mix={gpu: 1, cosmic-rays: 2}", "--out", dir.file("out")});
  EXPECT_EQ(failures.exit_code, 2) << failures.out;
  EXPECT_NE(failures.out.find("failures.mix.cosmic-rays: unknown cause"), std::string::npos)
      << failures.out;
}

}  // namespace
}  // namespace gf
