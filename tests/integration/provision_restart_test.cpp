// docs/architecture.md / issue acceptance 10: `kill -9` of `serve` while workers are being retried;
// a restart on the same data directory has the same clusters, nodes, events and billing, and the
// retries go on until the capacity arrives.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::Process;
using testing::TempDir;

struct Serve {
  Serve(const TempDir& dir, const std::string& cloud_file)
      : server(dir.file("data"),
               {"--sim-speed", "600", "--sim-cloud", cloud_file, "--snapshot-every", "50"}),
        proc(&server.process()),
        up(!server.url().empty()) {}
  Json get(const std::string& path) const { return server.get(path); }
  template <typename Pred>
  Json poll(const std::string& path, Pred pred) const {
    return server.poll(path, pred);
  }
  testing::GpufleetServer server;
  Process* proc;
  bool up;
};

Json worker_group(const Json& describe) {
  for (const auto& g : describe.value("InstanceGroups", Json::array())) {
    if (g["InstanceGroupName"] == "worker-gpu-a") return g;
  }
  return Json::object();
}

TEST(ProvisionRestart, Kill9WhileRetryingKeepsClustersNodesEventsBillingAndRetriesContinue) {
  TempDir dir;
  const std::string cloud = dir.file("cloud.json");
  std::ofstream(cloud) << R"({"launchLatency":"1m","lifecycleDuration":"1m","failureLatency":"10s",
    "capacity":{"ml.p5.48xlarge":10},"changes":[{"at":"15m","capacity":{"ml.p5.48xlarge":16}}]})";
  std::ifstream example(std::string(GPUFLEET_EXAMPLES_DIR) + "/create_cluster.json");
  std::string body((std::istreambuf_iterator<char>(example)), std::istreambuf_iterator<char>());

  Json before_events, before_nodes, before_billing;
  {
    Serve s(dir, cloud);
    ASSERT_TRUE(s.up);
    httplib::Client c(s.server.url());
    auto created = c.Post("/v1/clusters", body, "application/json");
    ASSERT_TRUE(created && created->status == 200) << (created ? created->body : "no answer");
    // 10 workers Running and the other 6 in their retry loop.
    s.poll("/v1/clusters/my-training-cluster", [](const Json& d) {
      Json g = worker_group(d);
      return g.value("CurrentCount", 0) == 10 && g.contains("NextLaunchAttempt");
    });
    before_events = s.get("/v1/clusters/my-training-cluster/events?MaxResults=100");
    before_nodes = s.get("/v1/clusters/my-training-cluster/nodes");
    // Billing up to a fixed second (To has second precision), so the restarted server can be
    // asked about exactly the same window.
    const std::string to = s.get("/v1/billing?groupBy=instance")["To"].get<std::string>();
    before_billing = s.get("/v1/billing?groupBy=instance&to=" + to);
    s.proc->signal(SIGKILL);
    ASSERT_EQ(s.proc->wait(), 128 + SIGKILL);
  }

  Serve s(dir, cloud);
  ASSERT_TRUE(s.up);
  Json d = s.get("/v1/clusters/my-training-cluster");
  EXPECT_EQ(d["ClusterStatus"], "InService");
  EXPECT_GE(worker_group(d)["CurrentCount"].get<int>(), 10);

  // Every node that was there is still there (Running ones still Running).
  Json nodes_after = s.get("/v1/clusters/my-training-cluster/nodes");
  std::map<std::string, std::string> after;
  for (const auto& n : nodes_after["ClusterNodeSummaries"])
    after[n["InstanceId"]] = n["InstanceStatus"]["Status"];
  for (const auto& n : before_nodes["ClusterNodeSummaries"]) {
    if (n["InstanceStatus"]["Status"] != "Running") continue;
    ASSERT_TRUE(after.count(n["InstanceId"])) << n.dump();
    EXPECT_EQ(after[n["InstanceId"]], "Running");
  }
  // Every event read before the kill is still there, same id, same text.
  std::set<std::string> ids_after;
  std::string token;
  do {
    Json page = s.get("/v1/clusters/my-training-cluster/events?MaxResults=100" +
                      (token.empty() ? "" : "&NextToken=" + token));
    for (const auto& e : page["Events"])
      ids_after.insert(e["EventId"].get<std::string>() + "|" + e["Description"].get<std::string>());
    token = page.value("NextToken", "");
  } while (!token.empty());
  for (const auto& e : before_events["Events"]) {
    EXPECT_TRUE(ids_after.count(e["EventId"].get<std::string>() + "|" +
                                e["Description"].get<std::string>()))
        << e.dump();
  }
  // Billing never goes backwards for an instance. Over the same window, that is: a sped-up clock
  // resumes from the journal's last event after a kill -9, which can be earlier than the moment
  // the first server answered (docs/decisions.md), so compare up to that answer's `To`.
  Json billing_after =
      s.get("/v1/billing?groupBy=instance&to=" + before_billing["To"].get<std::string>());
  std::map<std::string, int64_t> cost_after;
  for (const auto& i : billing_after["Items"]) cost_after[i["InstanceId"]] = i["CostMicros"];
  for (const auto& i : before_billing["Items"]) {
    EXPECT_GE(cost_after[i["InstanceId"]], i["CostMicros"].get<int64_t>()) << i.dump();
  }
  // The retries continue and the last 6 join once capacity arrives.
  Json full = s.poll("/v1/clusters/my-training-cluster",
                     [](const Json& x) { return worker_group(x).value("CurrentCount", 0) == 16; });
  EXPECT_EQ(worker_group(full)["CurrentCount"], 16);
  s.proc->signal(SIGTERM);
  EXPECT_EQ(s.proc->wait(), 0);
}

// Issue regression: a restart reset the simulated cloud's capacity timeline to its start, so the
// capacity that had appeared before the restart was gone after it ("16 of 10 in use"). The
// timeline counts from the first start on the data dir: workers asked for after the restart
// launch at once on the capacity that is there, with no failed launch.
TEST(ProvisionRestart, CapacityThatAppearedBeforeARestartIsStillThereAfterIt) {
  TempDir dir;
  const std::string cloud = dir.file("cloud.json");
  std::ofstream(cloud) << R"({"launchLatency":"1m","lifecycleDuration":"1m","failureLatency":"10s",
    "capacity":{"ml.p5.48xlarge":10},"changes":[{"at":"20m","capacity":{"ml.p5.48xlarge":20}}]})";
  std::ifstream example(std::string(GPUFLEET_EXAMPLES_DIR) + "/create_cluster.json");
  std::string body((std::istreambuf_iterator<char>(example)), std::istreambuf_iterator<char>());
  {
    Serve s(dir, cloud);
    ASSERT_TRUE(s.up);
    httplib::Client c(s.server.url());
    auto created = c.Post("/v1/clusters", body, "application/json");
    ASSERT_TRUE(created && created->status == 200) << (created ? created->body : "no answer");
    s.poll("/v1/clusters/my-training-cluster",
           [](const Json& d) { return worker_group(d).value("CurrentCount", 0) == 16; });
    s.proc->signal(SIGTERM);
    ASSERT_EQ(s.proc->wait(), 0);
  }
  Serve s(dir, cloud);
  ASSERT_TRUE(s.up);
  const std::string restarted_at = s.get("/v1/billing")["To"].get<std::string>();
  httplib::Client c(s.server.url());
  auto added = c.Post("/v1/clusters/my-training-cluster/nodes/batch-add",
                      R"({"NodesToAdd":[{"InstanceGroupName":"worker-gpu-a",
                          "IncrementTargetCountBy":2}]})",
                      "application/json");
  ASSERT_TRUE(added && added->status == 200) << (added ? added->body : "no answer");
  s.poll("/v1/clusters/my-training-cluster",
         [](const Json& d) { return worker_group(d).value("CurrentCount", 0) == 18; });
  Json events = s.get("/v1/clusters/my-training-cluster/events?MaxResults=100&EventTimeAfter=" +
                      restarted_at);
  for (const auto& e : events["Events"]) {
    EXPECT_NE(e["EventLevel"], "Error") << "a launch failed after the restart: " << e.dump();
  }
  s.proc->signal(SIGTERM);
  EXPECT_EQ(s.proc->wait(), 0);
}

}  // namespace
}  // namespace gf
