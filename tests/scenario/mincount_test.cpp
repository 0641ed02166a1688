// docs/provisioning.md MinCount over time: Creating until met, "minimum capacity reached", the 3 h
// timeout and rollback (new groups to (0,0), existing groups to their last InService counts), the
// timer restarting on every MinCount update, and what a Creating/Updating group refuses.
#include <gtest/gtest.h>

#include "state/cluster_events.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

const char kCluster[] = "my-mincount-cluster";

Json update_body(const std::string& group, int64_t count, std::optional<int64_t> min) {
  Json body = Json::parse(shared_example("create_cluster_mincount.json"));
  for (auto& g : body["InstanceGroups"]) {
    if (g["InstanceGroupName"] == group) {
      g["InstanceCount"] = count;
      if (min)
        g["MinInstanceCount"] = *min;
      else
        g.erase("MinInstanceCount");
      return Json{{"InstanceGroups", Json::array({g})}};
    }
  }
  return Json();
}

// Room for the controller, the login node and one worker: worker-group-1's MinCount 2 is never met.
SimCloudConfig short_cloud() {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.c5.xlarge", 3}};
  return cloud;
}

Json unreachable_min_body() {
  Json body = Json::parse(shared_example("create_cluster_mincount.json"));
  body["InstanceGroups"][2]["MinInstanceCount"] = 2;
  return body;
}

TEST(MinCount, NewGroupIsCreatingUntilMinCountRunsThenInServiceThenReachesTarget) {
  SimCloudConfig cloud;
  // One c5.xlarge for each of controller and login, none for workers until 1h, then one, then more.
  cloud.capacity = {{"ml.c5.xlarge", 2}};
  cloud.changes.push_back({hours(1), {{"ml.c5.xlarge", 3}}});
  cloud.changes.push_back({hours(2), {{"ml.c5.xlarge", 4}}});
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster_mincount.json")).status,
            200);
  // Controller and login groups default to MinCount 1; the worker group has Min 1, Target 2.
  EXPECT_EQ(f.group(kCluster, "controller-machine")["MinCount"], 1);
  EXPECT_EQ(f.group(kCluster, "my-login-group")["MinCount"], 1);
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["MinCount"], 1);
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["TargetCount"], 2);

  f.run_for(minutes(50));
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["Status"], "Creating");
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["CurrentCount"], 0);
  EXPECT_EQ(f.describe(kCluster)["ClusterStatus"], "InService");

  f.run_for(minutes(40));  // 1h30: one worker has come up
  Json wg = f.group(kCluster, "worker-group-1");
  EXPECT_EQ(wg["Status"], "InService");
  EXPECT_EQ(wg["CurrentCount"], 1);
  auto reached = f.events_containing("minimum capacity reached: InstanceGroup worker-group-1");
  ASSERT_EQ(reached.size(), 1u);
  EXPECT_EQ(reached[0].resource_type, "InstanceGroup");

  f.run_for(hours(1));  // capacity for the second worker at 2h
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["CurrentCount"], 2);
  EXPECT_TRUE(f.events_containing("rollback").empty());
}

TEST(MinCount, UnreachableMinCountRollsANewGroupBackToZeroAfterThreeHours) {
  Fleet f(short_cloud());
  ASSERT_EQ(f.call("POST", "/v1/clusters", unreachable_min_body().dump()).status, 200);
  f.run_for(hours(2) + minutes(59));
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["Status"], "Creating");
  EXPECT_TRUE(f.events_containing("rollback initiated").empty());
  f.run_for(minutes(2));
  auto rb = f.events_containing("rollback initiated: InstanceGroup worker-group-1");
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].time, kSimEpoch + hours(3));
  Json wg = f.group(kCluster, "worker-group-1");
  EXPECT_EQ(wg["Status"], "InService");  // right after rollback initiation
  EXPECT_EQ(wg["MinCount"], 0);
  EXPECT_EQ(wg["TargetCount"], 0);
  f.run_for(minutes(5));
  EXPECT_EQ(f.cluster(kCluster)->live_count("worker-group-1"), 0);
}

TEST(MinCount, RaisedMinCountRollsBackToLastInServiceCountsTerminatingUnhealthyThenNewest) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.c5.xlarge", 6}};  // controller + login + up to 4 workers
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster_mincount.json")).status,
            200);
  f.run_for(hours(1));
  ASSERT_EQ(f.group(kCluster, "worker-group-1")["CurrentCount"], 2);
  ASSERT_EQ(f.group(kCluster, "worker-group-1")["Status"], "InService");

  // Raise to Min 6 / Target 6: only 4 can ever run.
  HttpResponse up = f.call("PUT", std::string("/v1/clusters/") + kCluster,
                           update_body("worker-group-1", 6, 6).dump());
  ASSERT_EQ(up.status, 200) << up.body;
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["Status"], "Updating");
  f.run_for(hours(1));
  ASSERT_EQ(f.group(kCluster, "worker-group-1")["CurrentCount"], 4);
  std::vector<std::pair<int64_t, std::string>> by_order;
  for (const auto& [id, n] : f.cluster(kCluster)->nodes) {
    if (n.group == "worker-group-1" && n.is_live()) by_order.emplace_back(n.launch_order, id);
  }
  std::sort(by_order.begin(), by_order.end());
  ASSERT_EQ(by_order.size(), 4u);
  const std::string newest = by_order.back().second;
  const std::string oldest = by_order.front().second;
  const std::string second = by_order[1].second;
  // The second-oldest worker turns unhealthy (as a detector would report it) but keeps running.
  Request sick;
  sick.handle = [&](const FleetState&, Time) -> Result<Decision> {
    Decision d;
    d.events.push_back(
        event_codec::to_event(cluster_events::NodeHealth{kCluster, second, false, "xid 79"}));
    return d;
  };
  f.runtime().loop().submit(std::move(sick));
  f.run_for(seconds(1));

  f.run_for(hours(2) + minutes(1));  // 3 h after the update
  auto rb = f.events_containing("rollback initiated: InstanceGroup worker-group-1");
  ASSERT_EQ(rb.size(), 1u);
  Json wg = f.group(kCluster, "worker-group-1");
  EXPECT_EQ(wg["Status"], "InService");
  EXPECT_EQ(wg["TargetCount"], 2);  // the last InService counts
  EXPECT_EQ(wg["MinCount"], 1);
  f.run_for(minutes(5));
  const Cluster* c = f.cluster(kCluster);
  EXPECT_EQ(c->live_count("worker-group-1"), 2);
  EXPECT_FALSE(c->nodes.count(second)) << "the unhealthy node goes first";
  EXPECT_FALSE(c->nodes.count(newest)) << "then the most recently launched";
  EXPECT_TRUE(c->nodes.count(oldest));
}

TEST(MinCount, UpdatingMinCountAtTwoHoursRestartsTheThreeHourTimer) {
  Fleet f(short_cloud());
  ASSERT_EQ(f.call("POST", "/v1/clusters", unreachable_min_body().dump()).status, 200);
  f.run_for(hours(2));
  ASSERT_EQ(f.call("PUT", std::string("/v1/clusters/") + kCluster,
                   update_body("worker-group-1", 3, 3).dump())
                .status,
            200);
  f.run_for(hours(2) + minutes(30));  // 4h30: past the original 3h deadline
  EXPECT_TRUE(f.events_containing("rollback initiated").empty());
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["Status"], "Creating");
  f.run_for(hours(1));  // 5h30
  auto rb = f.events_containing("rollback initiated: InstanceGroup worker-group-1");
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].time, kSimEpoch + hours(5));
}

TEST(MinCount, CreatingGroupRefusesBatchAddAndDeleteButTakesCountChangesAndDeletion) {
  Fleet f(short_cloud());
  ASSERT_EQ(f.call("POST", "/v1/clusters", unreachable_min_body().dump()).status, 200);
  f.run_for(minutes(40));
  ASSERT_EQ(f.group(kCluster, "worker-group-1")["Status"], "Creating");
  const std::string base = std::string("/v1/clusters/") + kCluster;

  HttpResponse add = f.call(
      "POST", base + "/nodes/batch-add",
      R"({"NodesToAdd":[{"InstanceGroupName":"worker-group-1","IncrementTargetCountBy":1}]})");
  EXPECT_EQ(add.status, 409);
  Json ab = Json::parse(add.body);
  EXPECT_EQ(ab["__type"], "ConflictException");
  EXPECT_NE(ab["message"].get<std::string>().find("worker-group-1"), std::string::npos);
  EXPECT_NE(ab["message"].get<std::string>().find("Creating"), std::string::npos);

  std::string worker_id;
  for (const auto& [id, n] : f.cluster(kCluster)->nodes) {
    if (n.group == "worker-group-1") worker_id = id;
  }
  ASSERT_FALSE(worker_id.empty());
  HttpResponse del =
      f.call("POST", base + "/nodes/batch-delete", Json{{"NodeIds", {worker_id}}}.dump());
  EXPECT_EQ(del.status, 409);
  EXPECT_EQ(Json::parse(del.body)["__type"], "ConflictException");

  // Counts can still be corrected: Min 1 is met at once and the group turns InService.
  HttpResponse fix = f.call("PUT", base, update_body("worker-group-1", 2, 1).dump());
  EXPECT_EQ(fix.status, 200) << fix.body;
  f.run_for(minutes(1));
  EXPECT_EQ(f.group(kCluster, "worker-group-1")["Status"], "InService");
}

TEST(MinCount, DeletingACreatingGroupOrTheClusterIsAlwaysAllowed) {
  Fleet f(short_cloud());
  ASSERT_EQ(f.call("POST", "/v1/clusters", unreachable_min_body().dump()).status, 200);
  f.run_for(minutes(40));
  const std::string base = std::string("/v1/clusters/") + kCluster;
  HttpResponse del_group = f.call("PUT", base, R"({"InstanceGroupsToDelete":["worker-group-1"]})");
  EXPECT_EQ(del_group.status, 200) << del_group.body;
  f.run_for(minutes(5));
  EXPECT_TRUE(f.group(kCluster, "worker-group-1").is_null());
  HttpResponse del = f.call("DELETE", base);
  EXPECT_EQ(del.status, 200);
  EXPECT_EQ(f.describe(kCluster)["ClusterStatus"], "Deleting");
  f.run_for(minutes(5));
  EXPECT_EQ(f.call("GET", base).status, 404);
}

}  // namespace
}  // namespace gf
