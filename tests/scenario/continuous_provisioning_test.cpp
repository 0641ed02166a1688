// docs/provisioning.md over time: the seed's create_cluster.json with scarce capacity, controller
// first, InService rules, retries with growing intervals, controller failures.
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

SimCloudConfig seed_cloud() {
  SimCloudConfig c;
  c.capacity = {{"ml.m5.xlarge", 10}, {"ml.p5.48xlarge", 10}};
  c.changes.push_back({hours(2), {{"ml.p5.48xlarge", 16}}});
  return c;
}

std::optional<Time> first_event_time(Fleet& f, const std::string& text,
                                     const std::string& group = "") {
  for (const auto& e : f.events()) {
    if (e.description.find(text) != std::string::npos &&
        (group.empty() || e.instance_group == group)) {
      return e.time;
    }
  }
  return std::nullopt;
}

TEST(ContinuousProvisioning,
     SeedClusterWithTenOfSixteenP5ControllerFirstThenFillsWhenCapacityAppears) {
  Fleet f(seed_cloud());
  HttpResponse created = f.call("POST", "/v1/clusters", shared_example("create_cluster.json"));
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(Json::parse(created.body)["ClusterArn"].get<std::string>().rfind(
                "arn:gpufleet:local:000000000000:cluster/", 0),
            0u);

  // Only the controller launches at first.
  const Cluster* c = f.cluster("my-training-cluster");
  ASSERT_EQ(c->nodes.size(), 1u);
  EXPECT_EQ(c->nodes.begin()->second.group, "controller-group");
  EXPECT_EQ(f.describe("my-training-cluster")["ClusterStatus"], "Creating");

  f.run_for(hours(1));
  // No login or worker launch before a controller is Running.
  auto controller_running = first_event_time(f, "has succeeded", "controller-group");
  auto first_login = first_event_time(
      f, "Instance creation in Cluster my-training-cluster and InstanceGroup login-group started");
  auto first_worker = first_event_time(
      f, "Instance creation in Cluster my-training-cluster and InstanceGroup worker-gpu-a started");
  ASSERT_TRUE(controller_running && first_login && first_worker);
  EXPECT_GE(*first_login, *controller_running);
  EXPECT_GE(*first_worker, *controller_running);
  // InService exactly when controller and login are Running.
  auto login_running = first_event_time(f, "has succeeded", "login-group");
  auto in_service = first_event_time(f, "Cluster my-training-cluster is InService");
  ASSERT_TRUE(login_running && in_service);
  EXPECT_EQ(*in_service, std::max(*controller_running, *login_running));

  Json worker = f.group("my-training-cluster", "worker-gpu-a");
  EXPECT_EQ(worker["CurrentCount"], 10);
  EXPECT_EQ(worker["TargetCount"], 16);
  EXPECT_EQ(f.describe("my-training-cluster")["ClusterStatus"], "InService");

  // The other 6 are retried with growing intervals, each attempt recorded.
  std::vector<Time> retries;
  for (const auto& e : f.events()) {
    if (e.instance_group == "worker-gpu-a" &&
        e.description.find("insufficient capacity for ml.p5.48xlarge; retry") !=
            std::string::npos) {
      retries.push_back(e.time);
    }
  }
  ASSERT_GE(retries.size(), 4u);
  std::vector<Duration> gaps;
  for (size_t i = 1; i < retries.size(); ++i) gaps.push_back(retries[i] - retries[i - 1]);
  for (size_t i = 2; i < gaps.size(); ++i) {
    if (gaps[i] >= minutes(5)) break;  // the cap (10m, jittered) is reached
    EXPECT_GT(gaps[i], gaps[i - 2]) << "retry intervals must grow";
  }
  EXPECT_FALSE(
      f.events_containing(
           "Instance creation in Cluster my-training-cluster and InstanceGroup worker-gpu-a failed")
          .empty());

  // Capacity appears at 2h: the 6 join, nothing is rolled back.
  f.run_for(hours(2));
  EXPECT_EQ(f.group("my-training-cluster", "worker-gpu-a")["CurrentCount"], 16);
  EXPECT_TRUE(f.events_containing("rollback").empty());
  EXPECT_EQ(f.describe("my-training-cluster")["ClusterStatus"], "InService");
}

TEST(ContinuousProvisioning, ControllerWithoutCapacityFailsTheClusterAndSaysWhatToDo) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.m5.xlarge", 0}};
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(hours(1));
  Json d = f.describe("my-training-cluster");
  EXPECT_EQ(d["ClusterStatus"], "Failed");
  const std::string msg = d["FailureMessage"];
  EXPECT_NE(
      msg.find(
          "no capacity for the controller group controller-group's instance type ml.m5.xlarge"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Choose another instance type"), std::string::npos) << msg;
  EXPECT_NE(msg.find("another availability zone"), std::string::npos) << msg;
  EXPECT_TRUE(f.cluster("my-training-cluster")->nodes.empty());
}

TEST(ContinuousProvisioning, ControllerLifecycleScriptFailureFailsTheClusterNamingTheScript) {
  SimCloudConfig cloud;
  cloud.faults.push_back({"controller-group", 1, LaunchOutcome::kLifecycleScriptFailure});
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(hours(1));
  Json d = f.describe("my-training-cluster");
  EXPECT_EQ(d["ClusterStatus"], "Failed");
  const std::string msg = d["FailureMessage"];
  EXPECT_NE(
      msg.find("lifecycle script on_create.sh (s3://amzn-s3-demo-bucket/lifecycle-scripts/src/)"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Fix the lifecycle script"), std::string::npos) << msg;
  // Nothing keeps billing after the failure; the script's run time was billed.
  f.run_for(hours(1));
  EXPECT_TRUE(f.cluster("my-training-cluster")->nodes.empty());
  Json bill = f.json("GET", "/v1/billing");
  EXPECT_GT(bill["TotalMicros"].get<int64_t>(), 0);
}

TEST(ContinuousProvisioning, UnhealthyControllerIsReplacedAndWorkersAlreadyLaunchedStay) {
  SimCloudConfig cloud;
  // The first controller comes up healthy enough to start workers? No: attempt 1 is unhealthy.
  cloud.faults.push_back({"controller-group", 1, LaunchOutcome::kUnhealthyInstance});
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(minutes(11));
  EXPECT_EQ(f.describe("my-training-cluster")["ClusterStatus"], "Creating");
  EXPECT_FALSE(f.events_containing("is unhealthy").empty());
  f.run_for(hours(1));
  Json d = f.describe("my-training-cluster");
  EXPECT_EQ(d["ClusterStatus"], "InService");
  EXPECT_EQ(f.group("my-training-cluster", "controller-group")["CurrentCount"], 1);
  EXPECT_EQ(f.group("my-training-cluster", "worker-gpu-a")["CurrentCount"], 16);
}

TEST(ContinuousProvisioning, UnhealthyControllerIsReplacedWhileWorkersLaunchedMeanwhileStay) {
  // Two controller instances: the first comes up and opens the gate, the second is unhealthy
  // and replaced; workers and login nodes launched meanwhile stay.
  Json body = Json::parse(shared_example("create_cluster.json"));
  body["InstanceGroups"][0]["InstanceCount"] = 2;
  SimCloudConfig cloud;
  cloud.faults.push_back({"controller-group", 2, LaunchOutcome::kUnhealthyInstance});
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(minutes(10));  // both controllers' lifecycles end at 10m
  EXPECT_EQ(f.events_containing("is unhealthy").size(), 1u);
  EXPECT_GT(f.cluster("my-training-cluster")->live_count("worker-gpu-a"), 0);
  f.run_for(hours(1));
  EXPECT_EQ(f.describe("my-training-cluster")["ClusterStatus"], "InService");
  EXPECT_EQ(f.group("my-training-cluster", "controller-group")["CurrentCount"], 2);
  EXPECT_EQ(f.group("my-training-cluster", "worker-gpu-a")["CurrentCount"], 16);
  EXPECT_EQ(f.events_containing(" terminated").size(), 1u);  // only the unhealthy one
}

}  // namespace
}  // namespace gf
