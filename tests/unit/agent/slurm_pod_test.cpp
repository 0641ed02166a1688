// docs/slurm.md "Gangs as allocations": what a pod spec's "Slurm" object may say. It comes from
// the server, but the agent passes it to sbatch: every name is checked before any command runs.
#include "agent/slurm_pod.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gf::agent {
namespace {

using ::testing::HasSubstr;

Json pod_with(Json slurm) { return Json{{"Name", "p"}, {"Slurm", std::move(slurm)}}; }

Json good() {
  return Json{{"Allocation", "gf-abc-1"},    {"Nodes", "worker-[1-3]"}, {"NodeCount", 3},
              {"Partition", "gpu-training"}, {"NodeName", "worker-2"},  {"PodsOnNode", 1},
              {"Submitter", false}};
}

TEST(SlurmPodSpec, APodWithoutSlurmRunsAsProcesses) {
  auto s = SlurmPodSpec::from_pod(Json{{"Name", "p"}});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->has_value());
}

TEST(SlurmPodSpec, ReadsTheAllocationItsNodesAndWhetherThisNodeSubmits) {
  Json j = good();
  j["Submitter"] = true;
  auto s = SlurmPodSpec::from_pod(pod_with(j));
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->has_value());
  EXPECT_EQ((*s)->allocation, "gf-abc-1");
  EXPECT_EQ((*s)->node_count, 3);
  EXPECT_TRUE((*s)->submitter);
}

TEST(SlurmPodSpec, NamesThatCouldSmuggleArgumentsAreRefusedNamingTheField) {
  const std::vector<std::pair<std::string, Json>> bad = {
      {"Allocation", "gf x --wrap=rm"},
      {"Nodes", "worker-1,-w/etc"},
      {"Partition", "gpu;reboot"},
      {"NodeName", ""},
      {"NodeCount", 0},
      {"PodsOnNode", 5000},
  };
  for (const auto& [field, value] : bad) {
    Json j = good();
    j[field] = value;
    auto s = SlurmPodSpec::from_pod(pod_with(j));
    ASSERT_FALSE(s.ok()) << field;
    EXPECT_THAT(s.status().message(), HasSubstr(field)) << field;
  }
}

}  // namespace
}  // namespace gf::agent
