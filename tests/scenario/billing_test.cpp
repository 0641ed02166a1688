// docs/provisioning.md instance-level metering: billing runs from lifecycle start to ShuttingDown,
// failed launches are free, a failed lifecycle script bills its run time, sums match.
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

int64_t price(const std::string& type) {
  return Catalog::builtin().find(type)->price_micros_per_hour;
}
int64_t cost(int64_t price_per_hour, Duration d) {
  return static_cast<int64_t>(static_cast<__int128>(d.count()) * price_per_hour / 3'600'000'000LL);
}

TEST(Billing, EachNodeIsBilledFromLifecycleStartUntilShuttingDown) {
  Fleet f;  // launch 4m, lifecycle 6m, terminate 1m (defaults)
  Json body = {
      {"ClusterName", "bill"},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "g"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 2}}}}};
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(hours(2));
  // Two nodes launched at t=0, up (billing starts) at 4m: 1h56m each so far.
  Json b = Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "instance"}}).body);
  ASSERT_EQ(b["Items"].size(), 2u);
  for (const auto& item : b["Items"]) {
    EXPECT_EQ(item["BilledSeconds"], (hours(2) - minutes(4)).count() / 1'000'000);
    EXPECT_EQ(item["CostMicros"], cost(price("ml.g5.xlarge"), hours(2) - minutes(4)));
    EXPECT_EQ(item["PricePerHour"], format_money(price("ml.g5.xlarge")));
  }
  // A window given as a duration counts back from the server's clock (2h now): the last hour.
  Json last_hour =
      Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "cluster"}, {"from", "1h"}}).body);
  EXPECT_EQ(last_hour["From"], format_iso8601(f.now() - hours(1)));
  EXPECT_EQ(last_hour["TotalMicros"], 2 * cost(price("ml.g5.xlarge"), hours(1)));
  // Scale to 0 at 2h: billing ends at ShuttingDown (2h), not at termination (2h01m).
  body["InstanceGroups"][0]["InstanceCount"] = 0;
  ASSERT_EQ(
      f.call("PUT", "/v1/clusters/bill", Json{{"InstanceGroups", body["InstanceGroups"]}}.dump())
          .status,
      200);
  f.run_for(hours(3));
  Json after = Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "cluster"}}).body);
  ASSERT_EQ(after["Items"].size(), 1u);
  EXPECT_EQ(after["Items"][0]["CostMicros"],
            2 * cost(price("ml.g5.xlarge"), hours(2) - minutes(4)));
  EXPECT_EQ(after["TotalMicros"], after["Items"][0]["CostMicros"]);
}

TEST(Billing, FailedLaunchesAreNeverBilledAndLifecycleFailuresBillTheScriptRunTime) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.g5.xlarge", 1}};
  cloud.faults.push_back({"g", 1, LaunchOutcome::kLifecycleScriptFailure});
  Fleet f(cloud);
  Json body = {
      {"ClusterName", "bill"},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "g"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 3}}}}};
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_until(kSimEpoch + minutes(12));
  // Attempt 1 got the single instance and failed its 6-minute script; attempts 2 and 3 found no
  // capacity. Only the script's run time is billed.
  Json b = Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "instance"}}).body);
  ASSERT_GE(b["Items"].size(), 1u);
  int64_t script_cost = cost(price("ml.g5.xlarge"), minutes(6));
  bool found = false;
  for (const auto& item : b["Items"]) {
    if (item["BilledSeconds"] == 360) {
      found = true;
      EXPECT_EQ(item["CostMicros"], script_cost);
    }
  }
  EXPECT_TRUE(found) << b.dump(2);
  EXPECT_FALSE(f.events_containing("sufficient capacity").empty());
  for (const auto& item : b["Items"]) EXPECT_LE(item["BilledSeconds"].get<int64_t>(), 360 + 120);
}

TEST(Billing, GroupAndClusterSumsEqualTheSumOfNodesAndSurviveDeletion) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(hours(3));
  auto sum = [](const Json& b) {
    int64_t s = 0;
    for (const auto& i : b["Items"]) s += i["CostMicros"].get<int64_t>();
    return s;
  };
  Json by_instance = Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "instance"}}).body);
  Json by_group = Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "group"}}).body);
  Json by_cluster = Json::parse(f.call("GET", "/v1/billing", "", {{"groupBy", "cluster"}}).body);
  EXPECT_EQ(by_instance["Items"].size(), 18u);
  EXPECT_EQ(by_group["Items"].size(), 3u);
  EXPECT_EQ(by_cluster["Items"].size(), 1u);
  // Per-node rounding happens once per record, so group and cluster totals equal the node sum.
  EXPECT_EQ(sum(by_instance), sum(by_group));
  EXPECT_EQ(sum(by_group), sum(by_cluster));
  EXPECT_EQ(by_cluster["TotalMicros"], sum(by_cluster));
  EXPECT_EQ(by_cluster["Items"][0]["ClusterArn"], f.describe("my-training-cluster")["ClusterArn"]);

  ASSERT_EQ(f.call("DELETE", "/v1/clusters/my-training-cluster").status, 200);
  f.run_for(hours(1));
  EXPECT_EQ(f.call("GET", "/v1/clusters/my-training-cluster").status, 404);
  Json retired =
      Json::parse(f.call("GET", "/v1/billing", "", {{"cluster", "my-training-cluster"}}).body);
  ASSERT_EQ(retired["Items"].size(), 1u);
  // Deleted at the same instant the sums were taken: billing stopped at ShuttingDown, so the
  // retired total is exactly what was billed up to then.
  EXPECT_EQ(retired["TotalMicros"].get<int64_t>(), sum(by_cluster));
}

TEST(Billing, WindowAndBadParameters) {
  Fleet f;
  Json body = {
      {"ClusterName", "bill"},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "g"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}}}};
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(hours(5));
  Json window = Json::parse(f.call("GET", "/v1/billing", "",
                                   {{"from", format_iso8601(kSimEpoch + hours(1))},
                                    {"to", format_iso8601(kSimEpoch + hours(2))}})
                                .body);
  EXPECT_EQ(window["TotalMicros"], cost(price("ml.g5.xlarge"), hours(1)));
  EXPECT_EQ(f.call("GET", "/v1/billing", "", {{"groupBy", "team"}}).status, 400);
  EXPECT_EQ(f.call("GET", "/v1/billing", "", {{"from", "yesterday"}}).status, 400);
  EXPECT_EQ(f.call("GET", "/v1/billing", "", {{"cluster", "nope"}}).status, 404);
}

}  // namespace
}  // namespace gf
