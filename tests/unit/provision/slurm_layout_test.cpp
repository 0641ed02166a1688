// docs/slurm.md: the layout of a real Slurm cluster — its default partition, and the group
// names its step sockets can carry.
#include "provision/slurm_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gf {
namespace {

using ::testing::HasSubstr;

GroupSpec compute(std::string name, std::vector<std::string> partitions) {
  GroupSpec g;
  g.name = std::move(name);
  g.instance_type = "ml.p5.48xlarge";
  g.target = 2;
  g.node_type = NodeType::kCompute;
  g.partitions = std::move(partitions);
  g.has_slurm_config = true;
  return g;
}

InstanceGroup group(GroupSpec spec) {
  InstanceGroup g;
  g.spec = std::move(spec);
  return g;
}

TEST(RealSlurmLayout, TheFirstPartitionOfTheFirstComputeGroupIsTheDefault) {
  Cluster c;
  GroupSpec ctl;
  ctl.name = "controller";
  ctl.node_type = NodeType::kController;
  c.groups.push_back(group(ctl));
  c.groups.push_back(group(compute("worker-b", {"zeta", "alpha"})));
  c.groups.push_back(group(compute("worker-c", {"beta"})));
  const SlurmLayout layout = slurm_real_layout(c, Catalog::builtin());
  ASSERT_EQ(layout.partitions.size(), 3u);
  for (const SlurmPartitionLine& p : layout.partitions)
    EXPECT_EQ(p.is_default, p.name == "zeta") << p.name;
}

TEST(RealSlurmLayout, SlurmConfigDefaultPartitionNamesAnotherDefault) {
  Cluster c;
  c.groups.push_back(group(compute("worker-b", {"zeta", "alpha"})));
  GroupSpec other = compute("worker-c", {"beta", "gamma"});
  other.default_partition = "gamma";
  c.groups.push_back(group(other));
  const SlurmLayout layout = slurm_real_layout(c, Catalog::builtin());
  for (const SlurmPartitionLine& p : layout.partitions)
    EXPECT_EQ(p.is_default, p.name == "gamma") << p.name;
}

TEST(RealSlurmGroups, AComputeGroupNameTooLongForItsStepSocketsIsRefusedNamingTheField) {
  std::vector<GroupSpec> groups{compute("worker-gpu-a", {"p"}),
                                compute(std::string(kRealSlurmGroupNameMax + 1, 'w'), {"p"})};
  const Status st = check_real_slurm_groups(groups);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("InstanceGroups[1].InstanceGroupName"));
  EXPECT_THAT(st.message(), HasSubstr("socket"));
  groups.pop_back();
  groups.push_back(compute(std::string(kRealSlurmGroupNameMax, 'w'), {"p"}));
  EXPECT_TRUE(check_real_slurm_groups(groups).ok());
}

TEST(RealSlurmGroups, TheLongestAcceptedGroupsNodeNamesFitTheSocketLimit) {
  Node n;
  n.group = std::string(kRealSlurmGroupNameMax, 'w');
  n.slurm_slot = 99999;
  EXPECT_LE(slurm_node_name(n).size(), kSlurmSocketNameMax);
}

}  // namespace
}  // namespace gf
