#include "cli/progress.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

Json group(const std::string& name, int current, int target, const std::string& status) {
  return Json{{"InstanceGroupName", name},
              {"CurrentCount", current},
              {"TargetCount", target},
              {"MinCount", 0},
              {"Status", status}};
}

Json describe(const std::string& status, Json groups) {
  return Json{
      {"ClusterName", "c1"}, {"ClusterStatus", status}, {"InstanceGroups", std::move(groups)}};
}

Json creating_cluster() {
  return describe("Creating", Json::array({group("controller-group", 1, 1, "InService"),
                                           group("workers", 3, 16, "Creating")}));
}

TEST(ProgressBar, FillsInProportionRoundedDownAndFullOnlyAtTarget) {
  EXPECT_EQ(progress_bar(0, 4, 8), "[........]");
  EXPECT_EQ(progress_bar(1, 4, 8), "[##......]");
  EXPECT_EQ(progress_bar(15, 16, 10), "[#########.]");
  EXPECT_EQ(progress_bar(16, 16, 10), "[##########]");
  EXPECT_EQ(progress_bar(20, 16, 10), "[##########]");
  EXPECT_EQ(progress_bar(0, 0, 4), "[####]");
}

TEST(RenderClusterProgress, ShowsTheClusterLineThenOneAlignedLinePerGroup) {
  const auto lines = render_cluster_progress(creating_cluster(), 0);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "Cluster c1: Creating (4/17 instances)");
  const std::string full_bar = "[" + std::string(kMaxBarWidth, '#') + "]";
  EXPECT_EQ(lines[1], "  controller-group  " + full_bar + "   1/1   InService");
  const std::string bar = "[" + std::string(3 * kMaxBarWidth / 16, '#') +
                          std::string(kMaxBarWidth - 3 * kMaxBarWidth / 16, '.') + "]";
  EXPECT_EQ(lines[2], "  workers           " + bar + "   3/16  Creating");
}

TEST(RenderClusterProgress, TheBarShrinksToTheTerminalAndLongLinesAreCut) {
  Json d = creating_cluster();
  d["InstanceGroups"][1]["NextLaunchAttempt"] = "2026-01-01T00:01:00Z";
  d["InstanceGroups"][1]["LastLaunchFailure"] = "insufficient capacity for ml.p5.48xlarge";
  const auto wide = render_cluster_progress(d, 0);
  EXPECT_NE(wide[2].find("Creating   retrying: insufficient capacity for ml.p5.48xlarge"),
            std::string::npos);
  const auto narrow = render_cluster_progress(d, 60);
  for (const auto& line : narrow) EXPECT_LE(line.size(), 60u) << line;
  // 60 columns leave 20 cells for the bar (the rest of a group line is 40 wide here).
  EXPECT_NE(narrow[1].find("[" + std::string(20, '#') + "]"), std::string::npos) << narrow[1];
  EXPECT_EQ(narrow[1].size(), 60u);
  EXPECT_EQ(narrow[2].substr(narrow[2].size() - 3), "...");
  const auto tiny = render_cluster_progress(d, 45);
  EXPECT_NE(tiny[1].find("[" + std::string(kMinBarWidth, '#') + "]"), std::string::npos) << tiny[1];
}

TEST(RenderClusterProgress, AFailedClusterShowsItsFailureMessage) {
  Json d = describe("Failed", Json::array({group("controller-group", 0, 1, "Failed")}));
  d["FailureMessage"] = "no capacity for ml.m5.xlarge; choose another instance type";
  const auto lines = render_cluster_progress(d, 0);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "Cluster c1: Failed (0/1 instances)");
  EXPECT_NE(lines[1].find("0/1  Failed"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2], "FailureMessage: no capacity for ml.m5.xlarge; choose another instance type");
  EXPECT_EQ(wait_failure_reason(d), "no capacity for ml.m5.xlarge; choose another instance type");
}

TEST(RenderClusterProgress, ToleratesMissingFields) {
  const auto lines = render_cluster_progress(Json::object(), 80);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "Cluster :  (0/0 instances)");
}

TEST(ClusterWaitState, InServiceIsEnoughUnlessFullIsAsked) {
  Json d = describe("InService", Json::array({group("controller-group", 1, 1, "InService"),
                                              group("workers", 3, 16, "InService")}));
  EXPECT_EQ(cluster_wait_state(d, WaitGoal::kInService), WaitState::kDone);
  EXPECT_EQ(cluster_wait_state(d, WaitGoal::kFull), WaitState::kPending);
  d["InstanceGroups"][1]["CurrentCount"] = 16;
  EXPECT_EQ(cluster_wait_state(d, WaitGoal::kFull), WaitState::kDone);
  d["InstanceGroups"][1]["Status"] = "Updating";
  EXPECT_EQ(cluster_wait_state(d, WaitGoal::kFull), WaitState::kPending);
  EXPECT_EQ(cluster_wait_state(creating_cluster(), WaitGoal::kInService), WaitState::kPending);
}

TEST(ClusterWaitState, FailedAndDeletingClustersEndTheWait) {
  EXPECT_EQ(cluster_wait_state(describe("Failed", Json::array()), WaitGoal::kInService),
            WaitState::kFailed);
  const Json deleting = describe("Deleting", Json::array());
  EXPECT_EQ(cluster_wait_state(deleting, WaitGoal::kFull), WaitState::kFailed);
  EXPECT_EQ(wait_failure_reason(deleting), "cluster c1 is Deleting");
}

TEST(ProgressFrames, OffATerminalABlockIsWrittenOnlyWhenSomethingChanged) {
  ProgressFrames frames(false);
  EXPECT_EQ(frames.next({"a", "b"}), "a\nb\n");
  EXPECT_EQ(frames.next({"a", "b"}), "");
  EXPECT_EQ(frames.next({"a", "c"}), "\na\nc\n");
  EXPECT_EQ(frames.next({"a", "c"}), "");
}

TEST(ProgressFrames, OnATerminalEachFrameOverwritesTheLastInPlace) {
  ProgressFrames frames(true);
  EXPECT_EQ(frames.next({"a", "b"}), "\ra\x1b[K\n\rb\x1b[K\n\x1b[J");
  EXPECT_EQ(frames.next({"a", "b"}), "");
  EXPECT_EQ(frames.next({"c"}), "\x1b[2A\rc\x1b[K\n\x1b[J");
  EXPECT_EQ(frames.next({"c", "d", "e"}), "\x1b[1A\rc\x1b[K\n\rd\x1b[K\n\re\x1b[K\n\x1b[J");
}

TEST(ProgressFrames, TimingRedrawsATerminalButAddsNoBlockToALog) {
  ProgressFrames tty(true);
  EXPECT_EQ(tty.next({"a"}, "elapsed 1s"), "\ra\x1b[K\n\relapsed 1s\x1b[K\n\x1b[J");
  EXPECT_EQ(tty.next({"a"}, "elapsed 1s"), "");
  EXPECT_EQ(tty.next({"a"}, "elapsed 2s"), "\x1b[2A\ra\x1b[K\n\relapsed 2s\x1b[K\n\x1b[J");
  ProgressFrames log(false);
  EXPECT_EQ(log.next({"a"}, "elapsed 1s"), "a\nelapsed 1s\n");
  EXPECT_EQ(log.next({"a"}, "elapsed 2s"), "");
  EXPECT_EQ(log.next({"b"}, "elapsed 3s"), "\nb\nelapsed 3s\n");
}

TEST(WaitTiming, ElapsedAlwaysAndAnEtaFromTheRateSoFar) {
  EXPECT_EQ(format_wait_timing(seconds(5), 0, 16), "elapsed 5s, ETA unknown");
  // 4 instances in 2 minutes, 12 to go: 6 more minutes at that rate.
  EXPECT_EQ(format_wait_timing(minutes(2), 4, 12), "elapsed 2m, ETA ~6m");
  EXPECT_EQ(format_wait_timing(seconds(90), 3, 0), "elapsed 1m30s");
  const Json d = creating_cluster();
  EXPECT_EQ(running_instances(d), 4);
  EXPECT_EQ(missing_instances(d), 13);
}

// Issue regression: the first --wait frame showed the workers InService at 0 of 16 while the
// cluster was Creating; they wait for the controller, and the frame says so.
TEST(RenderClusterProgress, GroupsOfASlurmClusterSayTheyWaitForTheController) {
  Json controller = group("controller-group", 0, 1, "Creating");
  controller["SlurmConfig"] = {{"NodeType", "Controller"}};
  Json workers = group("worker-gpu-a", 0, 16, "InService");
  workers["SlurmConfig"] = {{"NodeType", "Compute"}};
  Json d = describe("Creating", Json::array({controller, workers}));
  d["Orchestrator"] = {{"Slurm", Json::object()}};
  auto lines = render_cluster_progress(d, 0);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].find("waiting"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("0/16  InService  waiting for the controller"), std::string::npos)
      << lines[2];
  d["InstanceGroups"][0]["CurrentCount"] = 1;
  lines = render_cluster_progress(d, 0);
  EXPECT_EQ(lines[2].find("waiting"), std::string::npos) << lines[2];
}

}  // namespace
}  // namespace gf
