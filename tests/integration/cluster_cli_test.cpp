// The cluster, node, events and billing commands of the real CLI against a real `serve` whose
// simulated cloud runs 600x faster than real time (a virtual minute is 0.1 s). Waiting is the
// CLI's own polling, always bounded by --timeout.
#include <gtest/gtest.h>

#include <regex>

#include <algorithm>
#include <fstream>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::GpufleetServer;
using testing::TempDir;

const std::string& kExamples = testing::kExamplesDir;
const std::string kCluster = "my-training-cluster";

// 10 of the 16 ml.p5.48xlarge workers exist at first; the rest appear 30 virtual minutes in.
constexpr const char* kScarceThenEnough =
    R"({"launchLatency":"1m","lifecycleDuration":"1m","capacity":{"ml.p5.48xlarge":10},)"
    R"("changes":[{"at":"30m","capacity":{"ml.p5.48xlarge":16}}]})";
constexpr const char* kScarceForever =
    R"({"launchLatency":"1m","lifecycleDuration":"1m","capacity":{"ml.p5.48xlarge":10}})";

class ClusterCli : public ::testing::Test {
 protected:
  void start(const char* cloud) {
    const std::string cloud_file = dir_.file("cloud.json");
    std::ofstream(cloud_file) << cloud;
    server_ = std::make_unique<GpufleetServer>(
        dir_.file("data"),
        std::vector<std::string>{"--sim-speed", "600", "--sim-cloud", cloud_file});
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
  }
  CommandResult cli(std::vector<std::string> args) const { return server_->cli(std::move(args)); }
  Json cli_json(std::vector<std::string> args) const {
    args.insert(args.begin(), {"-o", "json"});
    CommandResult r = cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    auto j = parse_json(r.out);
    EXPECT_TRUE(j.ok()) << r.out;
    return j.ok() ? *j : Json::object();
  }
  void create_training_cluster() {
    CommandResult r = cli({"cluster", "create", "-f", kExamples + "create_cluster.json", "--wait",
                           "--timeout", "2m"});
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("arn:gpufleet:local:000000000000:cluster/"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Cluster my-training-cluster: InService"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("worker-gpu-a"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cluster my-training-cluster is InService"), std::string::npos) << r.out;
  }
  // The id of a Running node of `group`.
  std::string running_node(const std::string& group) const {
    const Json nodes = cli_json({"node", "list", kCluster, "--group", group});
    for (const auto& n : nodes["ClusterNodeSummaries"]) {
      if (n["InstanceStatus"]["Status"] == "Running") return n["InstanceId"];
    }
    return "";
  }

  TempDir dir_;
  std::unique_ptr<GpufleetServer> server_;
};

size_t count_lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

TEST_F(ClusterCli, CreateWaitDescribeListNodesEventsAndBilling) {
  start(kScarceThenEnough);
  create_training_cluster();

  CommandResult describe = cli({"cluster", "describe", kCluster});
  ASSERT_EQ(describe.exit_code, 0) << describe.out;
  for (const char* want :
       {"Status:", "InService", "Mode:         Continuous", "Orchestrator: Slurm", "GROUP",
        "NODE-TYPE", "controller-group", "login-group", "worker-gpu-a"}) {
    EXPECT_NE(describe.out.find(want), std::string::npos) << want << "\n" << describe.out;
  }
  EXPECT_EQ(cli_json({"cluster", "describe", kCluster})["InstanceGroups"].size(), 3u);
  CommandResult list = cli({"cluster", "list"});
  EXPECT_NE(list.out.find(kCluster), std::string::npos) << list.out;

  CommandResult full = cli({"cluster", "wait", kCluster, "--full", "--timeout", "10m"});
  ASSERT_EQ(full.exit_code, 0) << full.out;
  EXPECT_NE(full.out.find("16/16"), std::string::npos) << full.out;
  EXPECT_EQ(cli_json({"node", "list", kCluster})["ClusterNodeSummaries"].size(), 18u);
  CommandResult nodes = cli({"node", "list", kCluster});
  EXPECT_EQ(count_lines(nodes.out), 19u) << nodes.out;
  EXPECT_NE(nodes.out.find("INSTANCE-ID"), std::string::npos) << nodes.out;

  // kubectl's word order answers the same as the fleet's own commands.
  EXPECT_EQ(cli({"describe", "cluster", kCluster}).out, cli({"cluster", "describe", kCluster}).out);
  EXPECT_EQ(cli({"get", "clusters"}).out, cli({"cluster", "list"}).out);
  EXPECT_EQ(cli({"get", "cluster", kCluster}).out, cli({"cluster", "describe", kCluster}).out);
  EXPECT_EQ(cli({"get", "nodes", kCluster}).out, nodes.out);
  const std::string worker = running_node("worker-gpu-a");
  ASSERT_FALSE(worker.empty());
  // The same node either way (its cost grows between the two calls: compare without it).
  auto node_json = [&](const std::vector<std::string>& args) {
    Json j = cli_json(args);
    j["NodeDetails"]["Billing"].erase("Cost");
    return j;
  };
  EXPECT_EQ(node_json({"describe", "node", kCluster, worker}),
            node_json({"node", "describe", kCluster, worker}));
  EXPECT_EQ(node_json({"get", "node", kCluster, worker}),
            node_json({"node", "describe", kCluster, worker}));
  CommandResult one = cli({"describe", "node", kCluster, worker});
  ASSERT_EQ(one.exit_code, 0) << one.out;
  EXPECT_NE(one.out.find("InstanceId:    " + worker), std::string::npos) << one.out;
  EXPECT_EQ(cli({"get", "policy", kCluster}).out, cli({"policy", "get", kCluster}).out);
  EXPECT_EQ(cli({"get", "alerts"}).out, cli({"alert", "list"}).out);
  EXPECT_EQ(cli({"get", "remediations"}).out, cli({"remediation", "list"}).out);
  EXPECT_EQ(cli({"get", "hosts"}).out, cli({"host", "list"}).out);
  // node label adds, changes and (KEY-) removes labels, as kubectl's does; describe shows them.
  ASSERT_EQ(cli({"node", "label", kCluster, worker, "team=a"}).exit_code, 0);
  ASSERT_EQ(cli({"node", "label", kCluster, worker, "zone=b", "team=c"}).exit_code, 0);
  EXPECT_NE(cli({"node", "describe", kCluster, worker}).out.find("Labels:        team=c,zone=b"),
            std::string::npos)
      << cli({"node", "describe", kCluster, worker}).out;
  ASSERT_EQ(cli({"node", "label", kCluster, worker, "team-"}).exit_code, 0);
  EXPECT_EQ(node_json({"node", "describe", kCluster, worker})["NodeDetails"]["Labels"],
            Json({{"zone", "b"}}));
  EXPECT_EQ(cli({"node", "label", kCluster, worker, "=x"}).exit_code, 2);
  // The old verbs stay as aliases: alert describe = alert get, remediation get = describe.
  CommandResult alias = cli({"alert", "describe", "no-such-alert"});
  EXPECT_NE(alias.exit_code, 0);
  EXPECT_EQ(alias.out.find("unknown command"), std::string::npos) << alias.out;
  EXPECT_EQ(alias.out, cli({"alert", "get", "no-such-alert"}).out);
  EXPECT_EQ(cli({"remediation", "get", "no-such"}).out,
            cli({"remediation", "describe", "no-such"}).out);
  EXPECT_EQ(count_lines(cli({"node", "list", kCluster, "--group", "login-group"}).out), 2u);

  Json events = cli_json({"events", kCluster, "--all"});
  int instance_events = 0;
  for (const auto& e : events["Events"]) instance_events += e["ResourceType"] == "Instance";
  EXPECT_GT(instance_events, 0) << events.dump(2);
  CommandResult table = cli({"events", kCluster, "--resource-type", "Instance", "--max", "3"});
  EXPECT_NE(table.out.find("INSTANCE"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("(more: --all)"), std::string::npos) << table.out;
  // Every type the TYPE column shows filters, in any case; the fleet-wide list names the cluster.
  CommandResult typed = cli({"events", kCluster, "--resource-type", "cluster", "--level", "Info"});
  ASSERT_EQ(typed.exit_code, 0) << typed.out;
  EXPECT_NE(typed.out.find("Cluster"), std::string::npos) << typed.out;
  EXPECT_EQ(cli({"events", kCluster, "--resource-type", "Alert"}).exit_code, 0);
  CommandResult fleet = cli({"events", "--resource-type", "Cluster"});
  ASSERT_EQ(fleet.exit_code, 0) << fleet.out;
  EXPECT_NE(fleet.out.find("CLUSTER"), std::string::npos) << fleet.out;
  EXPECT_NE(fleet.out.find(kCluster), std::string::npos) << fleet.out;
  CommandResult typo = cli({"events", "--resource-type", "Clusters"});
  EXPECT_NE(typo.exit_code, 0);
  EXPECT_NE(typo.out.find("ResourceType: expected one of Cluster,"), std::string::npos) << typo.out;

  CommandResult billing = cli({"billing", "--group-by", "group"});
  ASSERT_EQ(billing.exit_code, 0) << billing.out;
  EXPECT_NE(billing.out.find("TOTAL"), std::string::npos) << billing.out;
  // Instance time in hours with two decimals, summable by a person (it printed 3d5h26m59s).
  EXPECT_NE(billing.out.find("INSTANCE-HOURS"), std::string::npos) << billing.out;
  EXPECT_TRUE(std::regex_search(billing.out, std::regex(R"(TOTAL +[0-9]+\.[0-9]{2} +\$)")))
      << billing.out;
  EXPECT_NE(billing.out.find("worker-gpu-a"), std::string::npos) << billing.out;
  EXPECT_GT(cli_json({"billing", "--group-by", "group"})["TotalMicros"].get<int64_t>(), 0);
}

TEST_F(ClusterCli, NodeAddAndDeleteReportEachResult) {
  start(kScarceThenEnough);
  create_training_cluster();
  CommandResult add = cli({"node", "add", kCluster, "--group", "worker-gpu-a", "--count", "2"});
  EXPECT_EQ(add.exit_code, 0) << add.out;
  EXPECT_NE(add.out.find("worker-gpu-a: +2, TargetCount 18"), std::string::npos) << add.out;
  CommandResult no_group = cli({"node", "add", kCluster, "--group", "nope"});
  EXPECT_EQ(no_group.exit_code, 1) << no_group.out;
  EXPECT_NE(no_group.out.find("InstanceGroupNotFound"), std::string::npos) << no_group.out;

  const std::string id = running_node("worker-gpu-a");
  ASSERT_FALSE(id.empty());
  CommandResult node = cli({"node", "describe", kCluster, id});
  EXPECT_EQ(node.exit_code, 0) << node.out;
  EXPECT_NE(node.out.find("Running"), std::string::npos) << node.out;
  EXPECT_NE(node.out.find("PricePerHour:  $98.32"), std::string::npos) << node.out;
  CommandResult del = cli({"node", "delete", kCluster, id});
  EXPECT_EQ(del.exit_code, 0) << del.out;
  EXPECT_NE(del.out.find("deleting " + id), std::string::npos) << del.out;
  CommandResult unknown = cli({"node", "delete", kCluster, "i-doesnotexist"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.out;
  EXPECT_NE(unknown.out.find("i-doesnotexist: NodeIdNotFound"), std::string::npos) << unknown.out;
}

TEST_F(ClusterCli, ErrorsNameWhatIsWrongAndExitNonZero) {
  start(kScarceThenEnough);
  const std::string missing = dir_.file("no-such-cluster.json");
  CommandResult bad_file = cli({"cluster", "create", "-f", missing});
  EXPECT_NE(bad_file.exit_code, 0);
  EXPECT_NE(bad_file.out.find(missing), std::string::npos) << bad_file.out;
  CommandResult nope = cli({"cluster", "describe", "nope"});
  EXPECT_EQ(nope.exit_code, 1);
  EXPECT_NE(nope.out.find("cluster \"nope\" not found"), std::string::npos) << nope.out;
  CommandResult events = cli({"events", "nope"});
  EXPECT_EQ(events.exit_code, 1);
  EXPECT_NE(events.out.find("not found"), std::string::npos) << events.out;
  CommandResult timeout = cli({"cluster", "wait", "nope", "--timeout", "soon"});
  EXPECT_EQ(timeout.exit_code, 2);
  EXPECT_NE(timeout.out.find("--timeout"), std::string::npos) << timeout.out;
  CommandResult bad_timeout = cli({"cluster", "create", "-f", kExamples + "create_cluster.json",
                                   "--wait", "--timeout", "soon"});
  EXPECT_EQ(bad_timeout.exit_code, 2) << bad_timeout.out;
  EXPECT_TRUE(cli_json({"cluster", "list"})["ClusterSummaries"].empty()) << "nothing was sent";
  CommandResult group_by = cli({"billing", "--group-by", "tenant"});
  EXPECT_EQ(group_by.exit_code, 1);
  EXPECT_NE(group_by.out.find("groupBy"), std::string::npos) << group_by.out;
  // A typo in a key is refused, naming the closest known field (it created an all-or-nothing
  // cluster with only a warning); --field-validation Warn accepts it with the warning.
  std::ifstream example(kExamples + "create_cluster.json");
  std::string text((std::istreambuf_iterator<char>(example)), std::istreambuf_iterator<char>());
  const size_t at = text.find("\"NodeProvisioningMode\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 22, "\"NodeProvisioningMod\"");
  std::ofstream(dir_.file("typo.json")) << text;
  CommandResult typo = cli({"cluster", "create", "-f", dir_.file("typo.json")});
  EXPECT_EQ(typo.exit_code, 1) << typo.out;
  EXPECT_NE(typo.out.find("NodeProvisioningMod: unknown field; did you mean NodeProvisioningMode?"),
            std::string::npos)
      << typo.out;
  EXPECT_TRUE(cli_json({"cluster", "list"})["ClusterSummaries"].empty()) << "nothing was created";
  CommandResult bad_mode =
      cli({"cluster", "create", "-f", dir_.file("typo.json"), "--field-validation", "loose"});
  EXPECT_NE(bad_mode.out.find("fieldValidation: expected Strict, Warn or Ignore"),
            std::string::npos)
      << bad_mode.out;
  CommandResult warned =
      cli({"cluster", "create", "-f", dir_.file("typo.json"), "--field-validation", "Warn"});
  EXPECT_EQ(warned.exit_code, 0) << warned.out;
  EXPECT_NE(warned.out.find("warning: NodeProvisioningMod: unknown field, ignored; did you mean "
                            "NodeProvisioningMode?"),
            std::string::npos)
      << warned.out;
}

TEST_F(ClusterCli, MinCountClusterWaitsToInServiceAndJsonWaitPrintsTheLastAnswer) {
  start(kScarceThenEnough);
  Json last = cli_json({"cluster", "create", "-f", kExamples + "create_cluster_mincount.json",
                        "--wait", "--timeout", "2m"});
  EXPECT_EQ(last["ClusterName"], "my-mincount-cluster");
  EXPECT_EQ(last["ClusterStatus"], "InService");
  CommandResult again = cli({"cluster", "wait", "my-mincount-cluster", "--timeout", "1m"});
  EXPECT_EQ(again.exit_code, 0) << again.out;
}

TEST_F(ClusterCli, WaitingForCapacityThatNeverComesTimesOut) {
  start(kScarceForever);
  create_training_cluster();
  CommandResult r = cli({"cluster", "wait", kCluster, "--full", "--timeout", "1s"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("timed out after 1s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10/16"), std::string::npos) << r.out;
  // describe says which group retries, why, and when (it showed only the counts).
  CommandResult d = cli({"cluster", "describe", kCluster});
  ASSERT_EQ(d.exit_code, 0) << d.out;
  EXPECT_TRUE(std::regex_search(
      d.out, std::regex("worker-gpu-a: 10 of 16; last launch failed: .+; retrying, next attempt "
                        "at 20[0-9-]+T[0-9:]+Z")))
      << d.out;
}

}  // namespace
}  // namespace gf
