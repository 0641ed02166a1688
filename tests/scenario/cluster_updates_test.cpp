// Concurrent scaling operations (docs/provisioning.md) and legacy all-or-nothing mode
// (docs/provisioning.md).
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

const char kSeed[] = "my-training-cluster";

Json group_spec(const std::string& name, int64_t count) {
  Json body = Json::parse(shared_example("create_cluster.json"));
  for (auto& g : body["InstanceGroups"]) {
    if (g["InstanceGroupName"] == name) {
      g["InstanceCount"] = count;
      return g;
    }
  }
  return Json();
}

TEST(ConcurrentUpdates, UpdatesOfDifferentGroupsOneSecondApartBothTakeEffect) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(hours(1));
  Json gpu_b = group_spec("worker-gpu-a", 4);
  gpu_b["InstanceGroupName"] = "worker-gpu-b";
  ASSERT_EQ(f.call("PUT", "/v1/clusters/my-training-cluster",
                   Json{{"InstanceGroups", {group_spec("worker-gpu-a", 20)}}}.dump())
                .status,
            200);
  f.run_for(seconds(1));
  ASSERT_EQ(
      f.call("PUT", "/v1/clusters/my-training-cluster", Json{{"InstanceGroups", {gpu_b}}}.dump())
          .status,
      200);
  f.run_for(hours(1));
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["CurrentCount"], 20);
  EXPECT_EQ(f.group(kSeed, "worker-gpu-b")["CurrentCount"], 4);
}

TEST(ConcurrentUpdates, TwoUpdatesOfOneGroupTheSecondTargetWinsWithoutWaiting) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(hours(1));
  ASSERT_EQ(f.call("PUT", "/v1/clusters/my-training-cluster",
                   Json{{"InstanceGroups", {group_spec("worker-gpu-a", 30)}}}.dump())
                .status,
            200);
  f.run_for(seconds(1));  // the first update's launches are in flight
  EXPECT_EQ(f.cluster(kSeed)->live_count("worker-gpu-a"), 30);
  HttpResponse second = f.call("PUT", "/v1/clusters/my-training-cluster",
                               Json{{"InstanceGroups", {group_spec("worker-gpu-a", 8)}}}.dump());
  ASSERT_EQ(second.status, 200) << second.body;
  f.run_for(hours(1));
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["TargetCount"], 8);
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["CurrentCount"], 8);
  EXPECT_EQ(f.cluster(kSeed)->live_count("worker-gpu-a"), 8);
}

TEST(LegacyMode, CreateWithShortCapacityFailsAndTerminatesEverythingLaunched) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.p5.48xlarge", 10}};
  Fleet f(cloud);
  Json body = Json::parse(shared_example("create_cluster.json"));
  body.erase("NodeProvisioningMode");
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(hours(1));
  Json d = f.describe(kSeed);
  EXPECT_EQ(d["ClusterStatus"], "Failed");
  EXPECT_NE(d["FailureMessage"].get<std::string>().find("all-or-nothing"), std::string::npos);
  EXPECT_NE(d["FailureMessage"].get<std::string>().find("ml.p5.48xlarge"), std::string::npos);
  EXPECT_TRUE(f.cluster(kSeed)->nodes.empty()) << "everything launched is rolled back";
  EXPECT_FALSE(d.contains("NodeProvisioningMode"));
}

TEST(LegacyMode, CreateWithEnoughCapacityGoesInServiceWhenEveryGroupIsFull) {
  Fleet f;
  Json body = Json::parse(shared_example("create_cluster.json"));
  body.erase("NodeProvisioningMode");
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(hours(1));
  EXPECT_EQ(f.describe(kSeed)["ClusterStatus"], "InService");
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["Status"], "InService");
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["CurrentCount"], 16);
}

TEST(LegacyMode, UpdateThatCannotBeMetRollsBackToThePreviousState) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.p5.48xlarge", 20}};
  Fleet f(cloud);
  Json body = Json::parse(shared_example("create_cluster.json"));
  body.erase("NodeProvisioningMode");
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(hours(1));
  ASSERT_EQ(f.describe(kSeed)["ClusterStatus"], "InService");

  HttpResponse up = f.call("PUT", "/v1/clusters/my-training-cluster",
                           Json{{"InstanceGroups", {group_spec("worker-gpu-a", 24)}}}.dump());
  ASSERT_EQ(up.status, 200) << up.body;
  EXPECT_EQ(f.describe(kSeed)["ClusterStatus"], "Updating");
  // Only one update at a time without continuous provisioning.
  HttpResponse again = f.call("PUT", "/v1/clusters/my-training-cluster",
                              Json{{"InstanceGroups", {group_spec("worker-gpu-a", 18)}}}.dump());
  EXPECT_EQ(again.status, 409);
  f.run_for(hours(1));
  EXPECT_FALSE(f.events_containing("update rolling back").empty());
  Json d = f.describe(kSeed);
  EXPECT_EQ(d["ClusterStatus"], "InService");
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["TargetCount"], 16);
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["CurrentCount"], 16);
  EXPECT_EQ(f.cluster(kSeed)->live_count("worker-gpu-a"), 16);
}

TEST(LegacyMode, BatchAddNeedsContinuousMode) {
  Fleet f;
  Json body = Json::parse(shared_example("create_cluster.json"));
  body.erase("NodeProvisioningMode");
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  HttpResponse add =
      f.call("POST", "/v1/clusters/my-training-cluster/nodes/batch-add",
             R"({"NodesToAdd":[{"InstanceGroupName":"worker-gpu-a","IncrementTargetCountBy":1}]})");
  EXPECT_EQ(add.status, 400);
  EXPECT_NE(Json::parse(add.body)["message"].get<std::string>().find("Continuous"),
            std::string::npos);
}

TEST(ScaleDown, BatchDeleteRemovesChosenNodesAndLowersTheTarget) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(hours(1));
  std::vector<std::string> workers;
  std::string controller;
  for (const auto& [id, n] : f.cluster(kSeed)->nodes) {
    if (n.group == "worker-gpu-a" && workers.size() < 2) workers.push_back(id);
    if (n.group == "controller-group") controller = id;
  }
  Json req = {{"NodeIds", {workers[0], workers[1], controller, "i-00000000000000000"}}};
  HttpResponse r =
      f.call("POST", "/v1/clusters/my-training-cluster/nodes/batch-delete", req.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  Json b = Json::parse(r.body);
  EXPECT_EQ(b["Successful"].size(), 2u);
  ASSERT_EQ(b["Failed"].size(), 2u);
  EXPECT_EQ(b["Failed"][0]["Code"], "InvalidNodeStatus");  // the Slurm controller stays
  EXPECT_EQ(b["Failed"][1]["Code"], "NodeIdNotFound");
  f.run_for(minutes(10));
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["TargetCount"], 14);
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["CurrentCount"], 14);
  EXPECT_FALSE(f.cluster(kSeed)->nodes.count(workers[0]));

  HttpResponse add =
      f.call("POST", "/v1/clusters/my-training-cluster/nodes/batch-add",
             R"({"NodesToAdd":[{"InstanceGroupName":"worker-gpu-a","IncrementTargetCountBy":3},
                                               {"InstanceGroupName":"nope","IncrementTargetCountBy":1}]})");
  ASSERT_EQ(add.status, 200) << add.body;
  Json ab = Json::parse(add.body);
  EXPECT_EQ(ab["Successful"][0]["TargetCount"], 17);
  EXPECT_EQ(ab["Failed"][0]["ErrorCode"], "InstanceGroupNotFound");
  f.run_for(hours(1));
  EXPECT_EQ(f.group(kSeed, "worker-gpu-a")["CurrentCount"], 17);
}

}  // namespace
}  // namespace gf
