// The SlurmControl contract (src/orchestrator/slurm/slurm_control.h) against a real slurmctld
// with three real slurmd, started by the test on loopback (tests/support/slurm_daemons.h). Each
// implementation of the interface runs the same suite; SlurmCli is the one today. Waits poll the
// real controller, bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include "orchestrator/slurm/slurm_control.h"
#include "support/eventually.h"
#include "support/slurm_daemons.h"

namespace gf {
namespace {

using slurm::BatchJob;
using slurm::JobState;
using slurm::NodeState;
using slurm::SlurmControl;

using testing::eventually;

using Factory = std::function<std::unique_ptr<SlurmControl>(const std::string& conf)>;

class SlurmContract : public ::testing::TestWithParam<Factory> {
 protected:
  void SetUp() override {
    const std::string err = daemons_.start();
    ASSERT_EQ(err, "") << err;
    control_ = GetParam()(daemons_.conf());
  }
  void TearDown() override { daemons_.stop(); }

  NodeState node(const std::string& name) {
    auto all = control_->nodes();
    EXPECT_TRUE(all.ok()) << all.status().to_string();
    if (all.ok()) {
      for (const NodeState& n : *all) {
        if (n.name == name) return n;
      }
    }
    return {};
  }
  std::optional<JobState> job(int64_t id) {
    auto all = control_->jobs();
    EXPECT_TRUE(all.ok()) << all.status().to_string();
    if (all.ok()) {
      for (const JobState& j : *all) {
        if (j.id == id) return j;
      }
    }
    return std::nullopt;
  }

  testing::SlurmDaemons daemons_{3, "gpu-training"};
  std::unique_ptr<SlurmControl> control_;
};

TEST_P(SlurmContract, NodesAreListedOncePerNodeWithTheirStateAndPartitions) {
  auto nodes = control_->nodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().to_string();
  ASSERT_EQ(nodes->size(), 3u);
  for (const NodeState& n : *nodes) {
    EXPECT_EQ(n.state, "IDLE") << n.name;
    EXPECT_FALSE(n.drained()) << n.name;
    EXPECT_EQ(n.partitions, std::vector<std::string>{"gpu-training"}) << n.name;
    EXPECT_EQ(n.cpus, 1);
  }
}

// Cordon = DRAIN with our reason; rejoin = RESUME (docs/slurm.md).
TEST_P(SlurmContract, DrainWithAReasonThenResume) {
  ASSERT_TRUE(control_->drain("node2", "gpufleet:rem-000001 xid:79").ok());
  NodeState n = node("node2");
  EXPECT_TRUE(n.drained());
  EXPECT_EQ(n.reason, "gpufleet:rem-000001 xid:79");
  EXPECT_EQ(n.reason_set_by, "root");
  EXPECT_NE(daemons_.tool({"sinfo", "-R", "-h", "-o", "%E"}).find("gpufleet:rem-000001 xid:79"),
            std::string::npos);
  ASSERT_TRUE(control_->resume("node2").ok());
  n = node("node2");
  EXPECT_FALSE(n.drained());
  EXPECT_EQ(n.state, "IDLE");
}

TEST_P(SlurmContract, BadNamesAndReasonsAreRefusedBeforeAnyCommandRuns) {
  Status s = control_->drain("node2; rm -rf /", "x");
  EXPECT_EQ(s.code(), ErrorCode::kValidation) << s.to_string();
  EXPECT_NE(s.message().find("node"), std::string::npos);
  s = control_->drain("node2", "say \"hi\"");
  EXPECT_EQ(s.code(), ErrorCode::kValidation) << s.to_string();
  s = control_->drain("node2", "");
  EXPECT_EQ(s.code(), ErrorCode::kValidation);
  EXPECT_FALSE(node("node2").drained());
  BatchJob b;
  b.script = "true";
  b.env = {{"LD_PRELOAD", "/tmp/x.so"}};
  s = control_->submit(b).status();
  EXPECT_EQ(s.code(), ErrorCode::kValidation);
  EXPECT_NE(s.message().find("LD_PRELOAD"), std::string::npos) << s.message();
  b.env = {{"A B", "1"}};
  EXPECT_EQ(control_->submit(b).status().code(), ErrorCode::kValidation);
  EXPECT_EQ(control_->cancel(-1).code(), ErrorCode::kValidation);
  // A node the controller does not know: its error, named.
  s = control_->drain("node9", "gpufleet:x");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable);
  EXPECT_NE(s.message().find("node9"), std::string::npos) << s.message();
}

// A gang is one allocation of N nodes at once (SPEC §4.5).
TEST_P(SlurmContract, ThreeNodeBatchJobIsOneAllocationOnThreeNodesUntilCancelled) {
  BatchJob b;
  b.name = "gang";
  b.nodes = 3;
  b.partition = "gpu-training";
  b.script = "srun hostname\nsleep 300\n";
  b.work_dir = daemons_.dir();
  b.output = daemons_.dir() + "/gang.out";
  b.env = {{"GPUFLEET_JOB", "j-1"}};
  auto id = control_->submit(b);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  std::optional<JobState> j;
  ASSERT_TRUE(eventually([&] {
    j = job(*id);
    return j && j->state == "RUNNING";
  })) << (j ? j->state + " " + j->reason : "gone");
  EXPECT_EQ(j->name, "gang");
  EXPECT_EQ(j->partition, "gpu-training");
  EXPECT_EQ(j->node_count, 3);
  std::vector<std::string> nodes = j->nodes;
  std::sort(nodes.begin(), nodes.end());
  EXPECT_EQ(nodes, (std::vector<std::string>{"node1", "node2", "node3"}));
  EXPECT_TRUE(node("node1").allocated());
  // squeue shows the one job on the three nodes.
  EXPECT_NE(
      daemons_.tool({"squeue", "-h", "-o", "%i %D %N"}).find(std::to_string(*id) + " 3 node[1-3]"),
      std::string::npos);

  ASSERT_TRUE(control_->cancel(*id).ok());
  ASSERT_TRUE(eventually([&] {
    j = job(*id);
    return !j || j->finished();
  }));
  if (j) {
    EXPECT_EQ(j->state, "CANCELLED");
  }
}

TEST_P(SlurmContract, ANamedNodelistRunsExactlyThereAndABadOneIsRefusedFirst) {
  BatchJob b;
  b.name = "pinned";
  b.nodes = 2;
  b.partition = "gpu-training";
  b.nodelist = "node[2-3]";
  b.script = "sleep 300\n";
  b.work_dir = daemons_.dir();
  b.output = "/dev/null";
  auto id = control_->submit(b);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  std::optional<JobState> j;
  ASSERT_TRUE(eventually([&] {
    j = job(*id);
    return j && j->state == "RUNNING";
  })) << (j ? j->state + " " + j->reason : "gone");
  std::vector<std::string> nodes = j->nodes;
  std::sort(nodes.begin(), nodes.end());
  EXPECT_EQ(nodes, (std::vector<std::string>{"node2", "node3"}));
  ASSERT_TRUE(control_->cancel(*id).ok());

  b.nodelist = "node1,--uid=0";
  auto bad = control_->submit(b);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nodelist"), std::string::npos) << bad.status().message();
}

TEST_P(SlurmContract, ARetiredNodeIsHiddenUntilItsSlurmdRegistersAgain) {
  daemons_.kill_node("node3");
  ASSERT_TRUE(control_->retire("node3", "gpufleet: the instance left the cluster").ok());
  auto listed = [&] {
    auto all = control_->nodes();
    if (!all.ok()) return true;
    for (const NodeState& n : *all) {
      if (n.name == "node3") return true;
    }
    return false;
  };
  EXPECT_TRUE(eventually([&] { return !listed(); })) << "node3 still listed";
  ASSERT_EQ(daemons_.start_node("node3"), "");
  EXPECT_TRUE(eventually([&] { return listed() && node("node3").state == "IDLE"; }))
      << node("node3").state;
}

TEST_P(SlurmContract, ACompletedJobIsMirroredWithItsExitCode) {
  BatchJob b;
  b.name = "short";
  b.script = "echo \"$GPUFLEET_JOB\"; exit 3\n";
  b.work_dir = daemons_.dir();
  b.output = daemons_.dir() + "/short.out";
  b.env = {{"GPUFLEET_JOB", "j-2"}};
  auto id = control_->submit(b);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  std::optional<JobState> j;
  ASSERT_TRUE(eventually([&] {
    j = job(*id);
    return j && j->finished();
  })) << (j ? j->state : "gone");
  EXPECT_EQ(j->state, "FAILED");
  EXPECT_EQ(j->exit_code, 3);
  std::ifstream out(daemons_.dir() + "/short.out");
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "j-2") << "the job gets the environment it was given";
}

// Wait-for-idle reads allocations from the controller, also of jobs users submitted themselves.
TEST_P(SlurmContract, DrainingANodeUnderARunningJobLeavesItRunningAndGivesItNoNewWork) {
  const std::string submitted =
      daemons_.tool({"sbatch", "--parsable", "-N", "1", "-w", "node3", "--wrap", "sleep 300"});
  const int64_t id = std::stoll(submitted);
  ASSERT_TRUE(eventually([&] { return node("node3").allocated(); }));
  ASSERT_TRUE(control_->drain("node3", "gpufleet:rem-000002 xid:48").ok());
  NodeState n = node("node3");
  EXPECT_TRUE(n.drained());
  EXPECT_TRUE(n.allocated()) << "draining, not drained: its job runs on";
  ASSERT_EQ(job(id)->state, "RUNNING");
  ASSERT_TRUE(control_->requeue(id).ok());
  // Requeued, it leaves the node; asked for node3 only (-w), it waits: the drained node takes no
  // new work.
  std::optional<JobState> j;
  ASSERT_TRUE(eventually([&] {
    j = job(id);
    return j && j->state == "PENDING" && !node("node3").allocated();
  })) << (j ? j->state : "gone");
  EXPECT_GE(j->restarts, 1);
  ASSERT_TRUE(control_->cancel(id).ok());
}

TEST_P(SlurmContract, ReconfigureRereadsSlurmConf) {
  EXPECT_TRUE(control_->reconfigure().ok());
  auto nodes = control_->nodes();
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Cli, SlurmContract, ::testing::Values(Factory([](const std::string& conf) {
                           return std::make_unique<slurm::SlurmCli>(conf);
                         })));

}  // namespace
}  // namespace gf
