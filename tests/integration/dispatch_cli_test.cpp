// The seed's fleet walkthrough (seed 002, issue 5 acceptance 1) with the real CLI in place of
// kubectl and `kubectl amc`, against a real `serve` with two member clusters: the shared
// examples applied verbatim, the queue objects listed, the job Created then Running, the binding
// event with its Result, the member-cluster views, and bad manifests refused by name. An apply is
// answered after its batch, in which the scheduler has already run, so nothing polls.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::GpufleetServer;
using testing::TempDir;

const std::string& kExamples = testing::kExamplesDir;

// Lines of a table printed by the CLI, split on runs of spaces.
std::vector<std::vector<std::string>> rows(const std::string& out) {
  std::vector<std::vector<std::string>> table;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream words(line);
    std::string w;
    while (words >> w) cells.push_back(w);
    if (!cells.empty()) table.push_back(cells);
  }
  return table;
}

class DispatchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string cloud_file = dir_.file("cloud.json");
    std::ofstream(cloud_file) << R"({"launchLatency":"1m","lifecycleDuration":"1m"})";
    server_ = std::make_unique<GpufleetServer>(
        dir_.file("data"),
        std::vector<std::string>{"--sim-speed", "600", "--sim-cloud", cloud_file});
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
    for (const std::string name : {"member-one", "member-two"}) {
      std::ofstream(dir_.file(name + ".json"))
          << R"({"ClusterName":")" << name
          << R"(","NodeProvisioningMode":"Continuous","InstanceGroups":[)"
          << R"({"InstanceGroupName":"workers","InstanceType":"ml.m5.xlarge","InstanceCount":2}]})";
      CommandResult r = cli({"cluster", "create", "-f", dir_.file(name + ".json")});
      ASSERT_EQ(r.exit_code, 0) << r.out;
    }
    for (const std::string name : {"member-one", "member-two"}) {
      CommandResult r = cli({"cluster", "wait", name, "--full", "--timeout", "2m"});
      ASSERT_EQ(r.exit_code, 0) << r.out;
    }
  }
  CommandResult cli(std::vector<std::string> args) const { return server_->cli(std::move(args)); }

  TempDir dir_;
  std::unique_ptr<GpufleetServer> server_;
};

TEST_F(DispatchCli, SeedWalkthrough_QueueGangBindingAndMemberViews) {
  // Step 1: the ElasticQuotaTree, and the queues Kube Queue made for it.
  CommandResult r = cli({"apply", "-f", kExamples + "elasticquotatree.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("elasticquotatree/elasticquotatree created"), std::string::npos) << r.out;
  r = cli({"get", "queue", "-n", "kube-queue"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto queues = rows(r.out);
  ASSERT_EQ(queues.size(), 3u) << r.out;  // header + two queues
  EXPECT_TRUE(std::regex_match(queues[1][0], std::regex("root-[a-z0-9]{5}"))) << r.out;
  EXPECT_TRUE(std::regex_match(queues[2][0], std::regex("root-child-2-[a-z0-9]{5}"))) << r.out;
  // One queue by name, as kubectl gets one object (a regression: this answered "unknown object
  // kind").
  const std::string child = queues[2][0];
  r = cli({"get", "queue", child, "-n", "kube-queue"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_EQ(rows(r.out).size(), 2u) << r.out;
  EXPECT_EQ(rows(r.out)[1][0], child) << r.out;
  r = cli({"get", "queue", child, "-n", "kube-queue", "-o", "yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("quotaNode: child-2"), std::string::npos) << r.out;
  r = cli({"get", "queue", "no-such-queue", "-n", "kube-queue"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("Queue no-such-queue not found in namespace kube-queue"), std::string::npos)
      << r.out;
  r = cli({"describe", "queue", child});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("name: " + child), std::string::npos) << r.out;

  r = cli({"describe", "elasticquotatree", "elasticquotatree"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("kube-queue/max-jobs: 1"), std::string::npos) << r.out;

  // Step 2: the queueing gang policy, then the job.
  r = cli({"apply", "-f", kExamples + "propagationpolicy-gang-queue.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("propagationpolicy/example-policy created"), std::string::npos) << r.out;
  r = cli({"apply", "-f", kExamples + "pytorchjob.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("pytorchjob/pytorch-test created"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;

  // Step 3: the job's state on the fleet.
  r = cli({"get", "pytorchjob"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto t = rows(r.out);
  ASSERT_EQ(t.size(), 2u) << r.out;
  EXPECT_EQ(t[0], (std::vector<std::string>{"NAME", "STATE", "AGE"}));
  EXPECT_EQ(t[1][0], "pytorch-test");
  EXPECT_EQ(t[1][1], "Running");

  // Which member cluster: ScheduleBindingSucceed with the gang's replica counts; Created came
  // first.
  r = cli({"describe", "pytorchjob", "pytorch-test"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex(
          R"(Normal\s+ScheduleBindingSucceed\s+\S+\s+default-scheduler\s+Binding has been )"
          R"(scheduled successfully\. Result: \{(member-one|member-two):0,\[\{master 1\} \{worker 2\}\]\})")))
      << r.out;
  const std::string member = m[1];
  EXPECT_LT(r.out.find("Created"), r.out.find("ScheduleBindingSucceed")) << r.out;
  EXPECT_LT(r.out.find("ScheduleBindingSucceed"), r.out.find("Normal   Running")) << r.out;

  r = cli({"get", "pytorchjob", "-M"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  t = rows(r.out);
  ASSERT_EQ(t.size(), 2u) << r.out;
  EXPECT_EQ(t[0], (std::vector<std::string>{"NAME", "CLUSTER", "STATE", "AGE", "ADOPTION"}));
  EXPECT_EQ(t[1][0], "pytorch-test");
  EXPECT_EQ(t[1][1], member);
  EXPECT_EQ(t[1][2], "Running");
  EXPECT_EQ(t[1][4], "Y");

  r = cli({"get", "pod", "-M"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  t = rows(r.out);
  ASSERT_EQ(t.size(), 4u) << r.out;
  EXPECT_EQ(t[0],
            (std::vector<std::string>{"NAME", "CLUSTER", "READY", "STATUS", "RESTARTS", "AGE"}));
  const std::vector<std::string> pods{"pytorch-test-master-0", "pytorch-test-worker-0",
                                      "pytorch-test-worker-1"};
  for (size_t i = 0; i < pods.size(); ++i) {
    EXPECT_EQ(t[i + 1][0], pods[i]);
    EXPECT_EQ(t[i + 1][1], member);  // all three on the same cluster
    EXPECT_EQ(t[i + 1][2], "1/1");
    EXPECT_EQ(t[i + 1][3], "Running");
    EXPECT_EQ(t[i + 1][4], "0");
  }

  // The member cluster's copy, as `kubectl amc get pytorchjob NAME -m ID -oyaml` shows it.
  r = cli({"get", "pytorchjob", "pytorch-test", "-m", member, "-oyaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("kind: PyTorchJob"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpufleet.io/member-cluster: " + member), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("state: Running"), std::string::npos) << r.out;

  r = cli({"describe", "propagationpolicy", "example-policy"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("- pytorch-test"), std::string::npos) << r.out;  // status.selected

  r = cli({"delete", "pytorchjob", "pytorch-test"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(cli({"get", "pod", "-M"}).out, "No resources found.\n");
}

TEST_F(DispatchCli, BadManifestsAreRefusedNamingTheField) {
  // No policy selects the job yet: it is held, and says so.
  CommandResult r = cli({"apply", "-f", kExamples + "pytorchjob.yaml"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("no PropagationPolicy in namespace default selects PyTorchJob "
                       "default/pytorch-test yet: it is held (not queued) until one does"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(cli({"delete", "pytorchjob", "pytorch-test"}).exit_code, 0);
  ASSERT_EQ(cli({"apply", "-f", kExamples + "propagationpolicy-gang.yaml"}).exit_code, 0);
  std::ifstream in(kExamples + "pytorchjob.yaml");
  std::string job((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  job.replace(job.find("replicas: 1"), 11, "replicas: 2");
  std::ofstream(dir_.file("two-masters.yaml")) << job;
  r = cli({"apply", "-f", dir_.file("two-masters.yaml")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("spec.pytorchReplicaSpecs.Master.replicas: must be 1, got 2"),
            std::string::npos)
      << r.out;
  r = cli({"get", "pytorchjob"});
  EXPECT_EQ(r.out, "No resources found.\n");  // nothing created
}

}  // namespace
}  // namespace gf
