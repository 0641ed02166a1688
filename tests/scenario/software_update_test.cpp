// docs/provisioning.md "Software updates" over time (HyperPod's UpdateClusterSoftware): the
// cluster is SystemUpdating while its nodes are updated a batch at a time, never more than the
// batch size at once, with the wait between batches; nodes launched meanwhile come up on the new
// software; the update survives a restart; what the request refuses changes nothing.
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;

const char kCluster[] = "sw";

void create(Fleet& f, int64_t count) {
  Json body = {
      {"ClusterName", kCluster},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "g"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", count}},
        {{"InstanceGroupName", "h"}, {"InstanceType", "ml.m5.xlarge"}, {"InstanceCount", 1}}}}};
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(hours(1));
  ASSERT_EQ(f.describe(kCluster)["ClusterStatus"], "InService");
}

HttpResponse update(Fleet& f, const Json& body) {
  return f.call("POST", std::string("/v1/clusters/") + kCluster + "/software-update", body.dump());
}

Json rolling(const std::string& type, int64_t value, int64_t wait_seconds) {
  return Json{{"InstanceGroups", {{{"InstanceGroupName", "g"}}}},
              {"DeploymentConfig",
               {{"RollingUpdatePolicy", {{"MaximumBatchSize", {{"Type", type}, {"Value", value}}}}},
                {"WaitIntervalInSeconds", wait_seconds}}},
              {"ImageId", "ami-2"}};
}

// (updating now, updated) among the nodes of group g.
std::pair<int, int> progress(Fleet& f) {
  int updating = 0, updated = 0;
  for (const auto& [id, n] : f.cluster(kCluster)->nodes) {
    if (n.group != "g") continue;
    updating += n.status == NodeStatus::kSystemUpdating;
    updated += n.image == "ami-2" && n.status == NodeStatus::kRunning;
  }
  return {updating, updated};
}

TEST(SoftwareUpdate, BatchesNeverExceedTheirSizeAndWaitTheIntervalBetween) {
  Fleet f;  // a node's update takes 10 minutes (the simulated cloud's default)
  create(f, 8);
  ASSERT_EQ(update(f, rolling("CAPACITY_PERCENTAGE", 25, 300)).status, 200);
  Json d = f.describe(kCluster);
  EXPECT_EQ(d["ClusterStatus"], "SystemUpdating");
  EXPECT_EQ(f.group(kCluster, "g")["Status"], "SystemUpdating");
  EXPECT_EQ(f.group(kCluster, "h")["Status"], "InService") << "not named: not updated";
  EXPECT_EQ(d["SoftwareUpdate"]["MaximumBatchSize"]["Value"], 25);

  // 25 % of 8 is 2 at a time; 4 batches of 10 minutes with 5 minutes between: done by 55 minutes.
  int max_updating = 0;
  std::vector<Duration> batch_starts;
  int last_updating = 0;
  const Time start = f.now();
  while (f.now() < start + hours(2) && f.describe(kCluster)["ClusterStatus"] != "InService") {
    const auto [updating, updated] = progress(f);
    max_updating = std::max(max_updating, updating);
    if (updating > 0 && last_updating == 0) batch_starts.push_back(f.now() - start);
    last_updating = updating;
    f.run_for(minutes(1));
  }
  EXPECT_EQ(max_updating, 2);
  ASSERT_EQ(batch_starts.size(), 4u);
  for (size_t i = 1; i < batch_starts.size(); ++i) {
    EXPECT_GE(batch_starts[i] - batch_starts[i - 1], minutes(15)) << i;  // update + wait
  }
  EXPECT_LE(f.now() - start, minutes(60));
  d = f.describe(kCluster);
  EXPECT_EQ(d["ClusterStatus"], "InService");
  EXPECT_FALSE(d.contains("SoftwareUpdate"));
  EXPECT_EQ(d["ImageId"], "ami-2");
  EXPECT_EQ(f.group(kCluster, "g")["Status"], "InService");
  EXPECT_EQ(progress(f), std::make_pair(0, 8));
  for (const auto& [id, n] : f.cluster(kCluster)->nodes) {
    if (n.group == "h") {
      EXPECT_TRUE(n.image.empty()) << "group h was not named";
    }
  }
  EXPECT_EQ(f.events_containing("software update to ami-2 finished (8 instances updated)").size(),
            1u);
  EXPECT_EQ(f.events_containing("is SystemUpdating (batch 4)").size(), 2u);
}

TEST(SoftwareUpdate, NodesLaunchedDuringTheUpdateComeUpOnTheNewSoftware) {
  Fleet f;
  create(f, 2);
  ASSERT_EQ(update(f, rolling("INSTANCE_COUNT", 1, 0)).status, 200);
  Json add = {{"NodesToAdd", {{{"InstanceGroupName", "g"}, {"IncrementTargetCountBy", 2}}}}};
  ASSERT_EQ(f.call("POST", std::string("/v1/clusters/") + kCluster + "/nodes/batch-add", add.dump())
                .status,
            200);
  f.run_for(hours(1));
  EXPECT_EQ(f.describe(kCluster)["ClusterStatus"], "InService");
  EXPECT_EQ(progress(f), std::make_pair(0, 4));
  // Only the two nodes that ran the old software were updated; the new ones launched on ami-2.
  EXPECT_EQ(f.events_containing("is SystemUpdating (batch").size(), 2u);
  EXPECT_EQ(f.events_containing("(4 instances updated)").size(), 1u);
}

TEST(SoftwareUpdate, AnUpdateInProgressCarriesOnAfterARestart) {
  Fleet f;
  create(f, 4);
  ASSERT_EQ(update(f, rolling("INSTANCE_COUNT", 2, 60)).status, 200);
  f.run_for(minutes(3));
  ASSERT_EQ(progress(f).first, 2);
  // A snapshot taken now holds the update and reads back to the same state.
  const FleetState& state = f.runtime().loop().state();
  auto restored = FleetState::from_json(state.to_json());
  ASSERT_TRUE(restored.ok()) << restored.status().to_string();
  EXPECT_EQ(restored->hash(), state.hash());
  EXPECT_EQ(restored->view().find_cluster(kCluster)->software_update,
            f.cluster(kCluster)->software_update);
  f.restart();  // the journal replays; the update intents are issued again
  EXPECT_EQ(f.describe(kCluster)["ClusterStatus"], "SystemUpdating");
  f.run_for(hours(1));
  EXPECT_EQ(f.describe(kCluster)["ClusterStatus"], "InService");
  EXPECT_EQ(progress(f), std::make_pair(0, 4));
}

TEST(SoftwareUpdate, RefusalsNameTheFieldOrTheStateAndChangeNothing) {
  Fleet f;
  create(f, 2);
  const std::string hash = f.json("GET", "/v1/debug/state-hash")["ModelHash"];
  struct Case {
    Json body;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {rolling("NUM_INSTANCES", 1, 0), 400,
       "DeploymentConfig.RollingUpdatePolicy.MaximumBatchSize.Type: expected INSTANCE_COUNT or "
       "CAPACITY_PERCENTAGE"},
      {rolling("CAPACITY_PERCENTAGE", 101, 0), 400,
       "DeploymentConfig.RollingUpdatePolicy.MaximumBatchSize.Value: must be between 1 and 100"},
      {rolling("INSTANCE_COUNT", 1, 7200), 400,
       "DeploymentConfig.WaitIntervalInSeconds: must be between 0 and 3600"},
      {Json{{"InstanceGroups", {{{"InstanceGroupName", "nope"}}}}}, 400,
       "InstanceGroups[0].InstanceGroupName: no instance group \"nope\""},
      {Json{{"ImageID", "ami-2"}}, 400, "ImageID: unknown field; did you mean ImageId?"},
      {Json{{"InstanceGroups", Json::array()}}, 400, "InstanceGroups: names no group"},
  };
  for (const Case& c : cases) {
    HttpResponse r = update(f, c.body);
    EXPECT_EQ(r.status, c.status) << c.body.dump() << "\n" << r.body;
    const std::string message = Json::parse(r.body).value("message", "");
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
  }
  EXPECT_EQ(f.json("GET", "/v1/debug/state-hash")["ModelHash"], hash);
  EXPECT_EQ(f.call("POST", "/v1/clusters/nope/software-update", "{}").status, 404);
  ASSERT_EQ(update(f, Json::object()).status, 200);  // every group, one node at a time
  HttpResponse again = update(f, Json::object());
  EXPECT_EQ(again.status, 409);
  EXPECT_NE(again.body.find("cluster sw is SystemUpdating"), std::string::npos) << again.body;
}

}  // namespace
}  // namespace gf
