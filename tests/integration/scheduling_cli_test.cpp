// Quota shares and jobs through the real CLI against a real `serve` (issue 4): apply the
// published quota-share bundle, submit service jobs, and read why they wait and who preempted
// them with `describe job`. A submission is answered after its batch, in which the scheduler has
// already run, so no polling is needed once the cluster's nodes are up.
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

class SchedulingCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string cloud_file = dir_.file("cloud.json");
    std::ofstream(cloud_file) << R"({"launchLatency":"1m","lifecycleDuration":"1m"})";
    server_ = std::make_unique<GpufleetServer>(
        dir_.file("data"),
        std::vector<std::string>{"--sim-speed", "600", "--sim-cloud", cloud_file});
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
    std::ofstream(dir_.file("g5.json"))
        << R"({"ClusterName":"training","NodeProvisioningMode":"Continuous","InstanceGroups":[)"
        << R"({"InstanceGroupName":"g5","InstanceType":"ml.g5.xlarge","InstanceCount":3}]})";
    CommandResult r = cli({"cluster", "create", "-f", dir_.file("g5.json")});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = cli({"cluster", "wait", "training", "--full", "--timeout", "2m"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  CommandResult cli(std::vector<std::string> args) const { return server_->cli(std::move(args)); }
  // The example job under another name and priority.
  std::string job_file(const std::string& name, const std::string& share, int priority) {
    std::ifstream in(kExamples + "service-job.json");
    Json j = Json::parse(in);
    j["jobName"] = name;
    j["quotaShareName"] = share;
    j["schedulingPriority"] = priority;
    const std::string path = dir_.file(name + ".json");
    std::ofstream(path) << j.dump();
    return path;
  }
  std::string status_of(const std::string& job) const {
    CommandResult r = cli({"-o", "json", "describe", "job", job});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    auto j = parse_json(r.out);
    return j.ok() ? j->value("status", "") : "";
  }

  TempDir dir_;
  std::unique_ptr<GpufleetServer> server_;
};

TEST_F(SchedulingCli, QuotaShareExample_ApplySubmitDescribe) {
  CommandResult r = cli({"apply", "-f", kExamples + "quota-shares.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("quotashare/QS3 created"), std::string::npos) << r.out;
  r = cli({"get", "job-queues"});
  EXPECT_NE(r.out.find("VALID"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("JobQueue Healthy"), std::string::npos) << r.out;

  ASSERT_EQ(cli({"job", "submit", "-f", job_file("p3", "QS1", 3)}).exit_code, 0);
  ASSERT_EQ(cli({"job", "submit", "-f", job_file("p2", "QS1", 2)}).exit_code, 0);
  ASSERT_EQ(cli({"job", "submit", "-f", job_file("p1", "QS1", 1)}).exit_code, 0);
  EXPECT_EQ(status_of("p3"), "RUNNING");
  EXPECT_EQ(status_of("p2"), "RUNNING");
  EXPECT_EQ(status_of("p1"), "RUNNABLE");
  r = cli({"describe", "job", "p1"});
  EXPECT_NE(r.out.find("cohort capacity"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ml.g5.xlarge"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Short by:   1"), std::string::npos) << r.out;

  ASSERT_EQ(cli({"job", "submit", "-f", job_file("q2", "QS2", 0)}).exit_code, 0);
  EXPECT_EQ(status_of("q2"), "RUNNING");
  r = cli({"describe", "job", "p2"});
  EXPECT_NE(r.out.find("Reclaim"), std::string::npos) << r.out;
  // The preemptor by name (with its id), not by id alone.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(q2 \([0-9a-f-]{36}\))"))) << r.out;
  // A running job's pods by name, each with its node.
  r = cli({"describe", "job", "q2"});
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nq2-node-0 +i-[0-9a-f]+\n)"))) << r.out;
  // The node it runs on shows the pod (it said "Pods: 0" with an empty workload).
  r = cli({"-o", "json", "describe", "job", "q2"});
  auto q2 = parse_json(r.out);
  ASSERT_TRUE(q2.ok()) << r.out;
  const std::string node = (*q2)["placement"]["pods"][0]["node"];
  const std::string cluster = (*q2)["placement"]["cluster"];
  r = cli({"node", "describe", cluster, node});
  EXPECT_NE(r.out.find("Pods:          1"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nq2-node-0 +q2\n)"))) << r.out;
  r = cli({"node", "list", cluster});
  EXPECT_TRUE(std::regex_search(r.out, std::regex(node + R"( +\S+ +\S+ +Running +1 +- )")))
      << r.out;

  r = cli({"job", "priority", "p1", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(status_of("p1"), "RUNNING");
  r = cli({"describe", "job", "p3"});
  EXPECT_NE(r.out.find("InQueue"), std::string::npos) << r.out;
  r = cli({"get", "jobs"});
  EXPECT_NE(r.out.find("RUNNABLE"), std::string::npos) << r.out;

  // Bad input is refused with the field named, and nothing is created.
  r = cli({"job", "submit", "-f", job_file("bad", "QS9", 1)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("quotaShareName"), std::string::npos) << r.out;
  EXPECT_EQ(cli({"describe", "job", "bad"}).exit_code, 1);
}

TEST_F(SchedulingCli, ElasticQuotaTree_QueueObjectsListed) {
  CommandResult r = cli({"apply", "-f", kExamples + "elasticquotatree.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("elasticquotatree/elasticquotatree created"), std::string::npos) << r.out;
  r = cli({"get", "queue", "-n", "kube-queue"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("root-child-2-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kube-queue"), std::string::npos) << r.out;
  // Applying the same file again is an update, not a second tree.
  r = cli({"apply", "-f", kExamples + "elasticquotatree.yaml"});
  EXPECT_NE(r.out.find("configured"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gf
