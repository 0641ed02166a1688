// `gpufleet agent` (docs/agent.md, detector part) against a real `serve`: the real binary reads
// fixture sources once (--once) and the server's alerts show what it reported — Xid and hung-task
// lines with the raw line as evidence, the read-only mount, the InfiniBand port that is down —
// while the fixture's garbage and user-space lines created nothing. Waits are blocking HTTP reads
// (no sleeping).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <map>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"
#include "unit/agent/fixture_lines.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::GpufleetServer;
using testing::TempDir;

const std::string& kFixtures = testing::kAgentFixtures;
const std::string& kXid79 = testing::kFixtureXid79;
const std::string& kXid48 = testing::kFixtureXid48;
const std::string& kHungTask = testing::kFixtureHungTask;

using testing::parse_out;

class AgentCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string cloud_file = dir_.file("cloud.json");
    std::ofstream(cloud_file) << R"({"launchLatency":"1m","lifecycleDuration":"1m"})";
    server_ = std::make_unique<GpufleetServer>(
        dir_.file("data"),
        std::vector<std::string>{"--sim-speed", "600", "--sim-cloud", cloud_file});
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
    std::ofstream(dir_.file("cluster.json"))
        << R"({"ClusterName":"ac","NodeProvisioningMode":"Continuous","InstanceGroups":[)"
        << R"({"InstanceGroupName":"workers","InstanceType":"ml.p5.48xlarge","InstanceCount":1}]})";
    CommandResult r = server_->cli({"cluster", "create", "-f", dir_.file("cluster.json")});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = server_->cli({"cluster", "wait", "ac", "--full", "--timeout", "2m"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = server_->cli({"-o", "json", "node", "list", "ac"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const Json nodes = parse_out(r);
    ASSERT_EQ(nodes["ClusterNodeSummaries"].size(), 1u) << r.out;
    node_ = nodes["ClusterNodeSummaries"][0]["InstanceId"].get<std::string>();
  }

  Json alerts() const {
    httplib::Client c(server_->url());
    auto r = c.Get("/v1/alerts?node=" + node_);
    return r ? Json::parse(r->body, nullptr, false).value("Alerts", Json::array()) : Json::array();
  }

  TempDir dir_;
  std::unique_ptr<GpufleetServer> server_;
  std::string node_;
};

TEST_F(AgentCli, Agent_ReportsRecognisedSignalsFromRealSources_GarbageCreatesNothing) {
  const CommandResult r = testing::run_command({GPUFLEET_BINARY,
                                                "agent",
                                                "--server",
                                                server_->url(),
                                                "--cluster",
                                                "ac",
                                                "--node-id",
                                                node_,
                                                "--kernel-log",
                                                kFixtures + "/kern.log",
                                                "--from-start",
                                                "--proc-mounts",
                                                kFixtures + "/mounts_ro.txt",
                                                "--infiniband-dir",
                                                kFixtures + "/ib",
                                                "--nvml",
                                                "none",
                                                "--disk",
                                                "/tmp",
                                                "--once"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("refused"), std::string::npos) << r.out;

  // The agent's POSTs are answered synchronously, so the alerts exist now.
  std::map<std::string, std::vector<Json>> by_detector;
  for (const Json& a : alerts()) by_detector[a.value("Detector", "")].push_back(a);

  ASSERT_EQ(by_detector["xid"].size(), 2u) << alerts().dump(2);
  std::map<std::string, std::string> xid_evidence;
  for (const Json& a : by_detector["xid"])
    xid_evidence[a.value("Fault", "")] = a["Evidence"][0].value("Text", "");
  EXPECT_EQ(xid_evidence["xid:79"], kXid79);  // the raw line, byte for byte, reported once
  EXPECT_EQ(xid_evidence["xid:48"], kXid48);

  ASSERT_EQ(by_detector["npd-kernel-deadlock"].size(), 1u) << alerts().dump(2);
  EXPECT_EQ(by_detector["npd-kernel-deadlock"][0]["Evidence"][0].value("Text", ""), kHungTask);

  ASSERT_EQ(by_detector["npd-readonly-fs"].size(), 1u) << alerts().dump(2);
  EXPECT_EQ(by_detector["npd-readonly-fs"][0].value("Subject", ""), "/scratch");
  EXPECT_NE(by_detector["npd-readonly-fs"][0]["Evidence"][0]
                .value("Text", "")
                .find("/dev/nvme1n1 /scratch xfs ro"),
            std::string::npos)
      << by_detector["npd-readonly-fs"][0].dump(2);

  ASSERT_EQ(by_detector["ib-link"].size(), 1u) << alerts().dump(2);
  EXPECT_EQ(by_detector["ib-link"][0].value("Fault", ""), "ib-link:port-down");
  EXPECT_EQ(by_detector["ib-link"][0].value("Subject", ""), "port 1");

  // Nothing else: the garbage line, the user-space "NVRM: Xid" line, "79abc" and ordinary kernel
  // lines stayed on the node (disk pressure depends on this machine's /tmp and is not counted).
  by_detector.erase("disk-pressure");
  size_t total = 0;
  for (const auto& [d, list] : by_detector) total += list.size();
  EXPECT_EQ(total, 5u) << alerts().dump(2);
}

TEST_F(AgentCli, Agent_ServerUnreachable_OnceExitsOneAndSaysSo) {
  const CommandResult r = testing::run_command({GPUFLEET_BINARY,
                                                "--server",
                                                "http://127.0.0.1:1",
                                                "agent",
                                                "--cluster",
                                                "ac",
                                                "--node-id",
                                                node_,
                                                "--kernel-log",
                                                kFixtures + "/kern.log",
                                                "--from-start",
                                                "--proc-mounts",
                                                "-",
                                                "--infiniband-dir",
                                                "-",
                                                "--nvml",
                                                "/nonexistent/libnvidia-ml.so.1",
                                                "--disk",
                                                "-",
                                                "--once"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("cannot reach gpufleet"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVML not available: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 unsent"), std::string::npos) << r.out;
  EXPECT_TRUE(alerts().empty()) << alerts().dump(2);
}

TEST_F(AgentCli, Agent_UnknownNodeIsRefusedByTheServer_TheAgentSaysWhy) {
  const CommandResult r = testing::run_command({GPUFLEET_BINARY,
                                                "agent",
                                                "--server",
                                                server_->url(),
                                                "--cluster",
                                                "ac",
                                                "--node-id",
                                                "i-doesnotexist",
                                                "--kernel-log",
                                                kFixtures + "/kern.log",
                                                "--from-start",
                                                "--proc-mounts",
                                                "-",
                                                "--infiniband-dir",
                                                "-",
                                                "--nvml",
                                                "none",
                                                "--disk",
                                                "-",
                                                "--once"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("3 refused"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gf
