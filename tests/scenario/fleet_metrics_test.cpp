// /metrics carries the fleet, not only the loop's internals: instances by status, cost and burn
// rate, alerts, remediations and queue depth, computed from the published view at each scrape.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;

std::string metrics(Fleet& f) { return f.call("GET", "/metrics").body; }

TEST(FleetMetrics, InstancesByStatusCostAndBurnRatePerCluster) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.g5.xlarge", 2}};
  Fleet f(cloud);
  Json body = {
      {"ClusterName", "m"},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "g"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 2}}}}};
  ASSERT_EQ(f.call("POST", "/v1/clusters", body.dump()).status, 200);
  f.run_for(hours(1) + minutes(4));  // up at 4m: one billed hour each
  const std::string m = metrics(f);
  EXPECT_NE(m.find("# TYPE gpufleet_instances gauge"), std::string::npos) << m;
  EXPECT_NE(
      m.find(R"(gpufleet_instances{cluster="m",group="g",status="Running",cordoned="false"} 2)"),
      std::string::npos)
      << m;
  EXPECT_NE(m.find(R"(gpufleet_instance_group_target{cluster="m",group="g"} 2)"), std::string::npos)
      << m;
  const double price = Catalog::builtin().find("ml.g5.xlarge")->price_micros_per_hour / 1e6;
  EXPECT_NE(m.find(fmt::format(R"(gpufleet_cost_burn_rate_dollars_per_hour{{cluster="m"}} {})",
                               2 * price)),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(fmt::format(R"(gpufleet_cost_dollars{{cluster="m"}} {})", 2 * price)),
            std::string::npos)
      << m;
  // Scaled to zero: the instances leave the exposition, the cost stays, the burn rate is 0.
  body["InstanceGroups"][0]["InstanceCount"] = 0;
  ASSERT_EQ(f.call("PUT", "/v1/clusters/m", Json{{"InstanceGroups", body["InstanceGroups"]}}.dump())
                .status,
            200);
  f.run_for(hours(1));
  const std::string after = metrics(f);
  EXPECT_EQ(after.find(R"(gpufleet_instances{cluster="m")"), std::string::npos) << after;
  EXPECT_NE(after.find(R"(gpufleet_cost_burn_rate_dollars_per_hour{cluster="m"} 0)"),
            std::string::npos)
      << after;
}

TEST(FleetMetrics, QueueDepthPerQuotaNode) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/apply", testing::shared_example("elasticquotatree.yaml")).status,
            200);
  f.run_for(seconds(1));
  const std::string m = metrics(f);
  EXPECT_NE(m.find(R"(gpufleet_queue_pending_jobs{quota_node=)"), std::string::npos) << m;
  EXPECT_NE(m.find(R"(gpufleet_queue_admitted_jobs{quota_node=)"), std::string::npos) << m;
}

}  // namespace
}  // namespace gf
