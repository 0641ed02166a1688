// docs/slurm.md over time, on a virtual clock: what the server tells a real Slurm cluster's
// controller node (the layout it writes into slurm.conf) as workers join, and how a remediation
// on a real Slurm node waits for slurmctld's word (the node's agent reports) before it acts.
#include <gtest/gtest.h>

#include "remediation_support.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

int declared_running(const Json& layout) {
  int n = 0;
  for (const Json& node : layout["Nodes"]) n += node.value("State", "") != "FUTURE";
  return n;
}

TEST(RealSlurmLayout, DeclaresWorkersAheadSoTheyJoinWithoutNewNodeNames) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.p5.48xlarge", 10}};
  cloud.changes.push_back({hours(2), {{"ml.p5.48xlarge", 16}}});
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  f.run_for(hours(1));
  const Json first = f.json("GET", "/v1/clusters/my-training-cluster/slurm/layout");
  // 32 names for the 16 workers (room for replacements); controller and login run no slurmd.
  ASSERT_EQ(first["Nodes"].size(), 32u) << first.dump();
  EXPECT_EQ(declared_running(first), 10);
  ASSERT_EQ(first["Partitions"].size(), 1u);
  EXPECT_EQ(first["Partitions"][0]["Name"], "gpu-training");
  EXPECT_EQ(first["Partitions"][0]["Nodes"].size(), 32u);
  // Ports are offsets the controller adds to its base, distinct per node.
  std::set<int> ports;
  for (const Json& n : first["Nodes"]) ports.insert(n.value("Port", 0));
  EXPECT_EQ(ports.size(), 32u);

  f.run_for(hours(2));
  const Json later = f.json("GET", "/v1/clusters/my-training-cluster/slurm/layout");
  EXPECT_EQ(declared_running(later), 16);
  std::set<std::string> names_first, names_later;
  for (const Json& n : first["Nodes"]) names_first.insert(n.value("Name", ""));
  for (const Json& n : later["Nodes"]) names_later.insert(n.value("Name", ""));
  EXPECT_TRUE(
      std::includes(names_first.begin(), names_first.end(), names_later.begin(), names_later.end()))
      << "the joining workers had names slurmctld already knew (no restart)";
}

TEST(RealSlurmLayout, NativeClusterHasNoLayoutAndAnUnknownOneIsNotFound) {
  Fleet f;
  testing::heal_cluster(f, "native", {{"workers", 1}});
  HttpResponse r = f.call("GET", "/v1/clusters/native/slurm/layout");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("not a Slurm cluster"), std::string::npos) << r.body;
  EXPECT_EQ(f.call("GET", "/v1/clusters/nope/slurm/layout").status, 404);
}

// A worker of the seed cluster on a cloud of real instances (its pods end by their exits).
struct RealSlurmFleet {
  Fleet f{SimCloudConfig{}, [] {
            RuntimeOptions o;
            o.real_instances = true;
            return o;
          }()};
  std::string node;
  RealSlurmFleet() {
    EXPECT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
    f.run_for(hours(1));
    node = testing::group_nodes(f, "my-training-cluster", "worker-gpu-a")[0];
    testing::put_policy(f, "my-training-cluster",
                        testing::classic_policy(Json{{"AlertPersistence", "1s"}}));
  }
  HttpResponse report(const Json& body) {
    return f.call("POST", "/v1/clusters/my-training-cluster/nodes/" + node + "/slurm", body.dump());
  }
  Json rem() { return testing::remediations(f, node)[0]; }
};

TEST(RealSlurmRemediation, WaitForIdleWaitsForOurDrainThenForTheLastAllocationToEnd) {
  RealSlurmFleet s;
  ASSERT_EQ(testing::send_signal(s.f, "my-training-cluster", s.node, testing::kXid79).status, 200);
  s.f.run_for(minutes(1));
  ASSERT_EQ(s.rem()["Status"], "WaitingForIdle") << s.rem().dump();
  EXPECT_NE(s.rem()["Reason"].get<std::string>().find("report its Slurm state"), std::string::npos)
      << s.rem().dump();
  // The pods answer tells the agent which drain to set.
  const Json pods = s.f.json("GET", "/v1/clusters/my-training-cluster/nodes/" + s.node + "/pods");
  const std::string reason = pods.value("SlurmDrain", "");
  EXPECT_EQ(reason, "gpufleet:" + s.rem()["RemediationId"].get<std::string>() + " xid:79");

  // Slurm has not shown the drain yet: a job may still start, so the node is not idle.
  ASSERT_EQ(s.report({{"State", "MIXED"}, {"Jobs", {"7"}}}).status, 200);
  s.f.run_for(minutes(1));
  EXPECT_EQ(s.rem()["Status"], "WaitingForIdle");
  // Drained, a user's job still on it: wait (within the policy's MaxWait, 2 h), saying why.
  ASSERT_EQ(s.report({{"State", "MIXED+DRAIN"}, {"Reason", reason}, {"Jobs", {"7"}}}).status, 200);
  s.f.run_for(hours(1));
  EXPECT_EQ(s.rem()["Status"], "WaitingForIdle");
  EXPECT_NE(s.rem()["Reason"].get<std::string>().find("1 Slurm allocation(s) still on the node"),
            std::string::npos)
      << s.rem().dump();
  // The job ends: the remediation goes on to the reboot and back.
  ASSERT_EQ(s.report({{"State", "IDLE+DRAIN"}, {"Reason", reason}, {"Jobs", Json::array()}}).status,
            200);
  s.f.run_for(minutes(30));
  EXPECT_EQ(s.rem()["Status"], "Succeeded") << s.rem().dump();
  // Uncordoned: the agent is told to drain no more (it resumes the node in Slurm).
  EXPECT_FALSE(s.f.json("GET", "/v1/clusters/my-training-cluster/nodes/" + s.node + "/pods")
                   .contains("SlurmDrain"));
}

TEST(RealSlurmRemediation, ReportIsRecordedOnlyWhenItChanges) {
  RealSlurmFleet s;
  const Json body = {{"State", "IDLE"}, {"Jobs", Json::array()}};
  HttpResponse first = s.report(body);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(Json::parse(first.body)["Recorded"], true);
  EXPECT_EQ(Json::parse(s.report(body).body)["Recorded"], false);
  ASSERT_TRUE(s.f.cluster("my-training-cluster")->nodes.at(s.node).slurm.has_value());
}

TEST(RealSlurmRemediation, HostileReportsAreRefusedNamingTheFieldAndChangeNothing) {
  RealSlurmFleet s;
  const std::vector<std::pair<Json, std::string>> bad = {
      {Json{{"Reason", "x"}}, "State"},
      {Json{{"State", "idle; rm -rf /"}}, "State"},
      {Json{{"State", std::string(500, 'A')}}, "State"},
      {Json{{"State", "IDLE"}, {"Reason", std::string(1000, 'r')}}, "Reason"},
      {Json{{"State", "IDLE"}, {"Jobs", {"12", "x y"}}}, "Jobs[1]"},
      {Json{{"State", "IDLE"}, {"Jobs", Json::array({1})}}, "Jobs"},
      {Json{{"State", "IDLE"}, {"Extra", 1}}, "Extra"},
  };
  for (const auto& [body, field] : bad) {
    HttpResponse r = s.report(body);
    EXPECT_EQ(r.status, 400) << body.dump() << " -> " << r.body;
    EXPECT_NE(r.body.find(field), std::string::npos) << body.dump() << " -> " << r.body;
  }
  EXPECT_FALSE(s.f.cluster("my-training-cluster")->nodes.at(s.node).slurm.has_value());
  EXPECT_EQ(
      s.f.call("POST", "/v1/clusters/my-training-cluster/nodes/i-nope/slurm", R"({"State":"IDLE"})")
          .status,
      404);
}

}  // namespace
}  // namespace gf
