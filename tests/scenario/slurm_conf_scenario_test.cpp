// docs/provisioning.md over time: as nodes of the seed cluster join and leave, the merged
// slurm.conf keeps every byte of the user's file outside the managed blocks, and the blocks list
// the cluster's Running nodes and its partitions.
#include <gtest/gtest.h>

#include "provision/slurm_layout.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

const char kUserConf[] =
    "# slurm.conf for my-training-cluster (hand-edited)\n"
    "ClusterName=my-training-cluster\n"
    "SlurmctldHost=controller-group-1\n"
    "GresTypes=gpu\n"
    "SelectType=select/cons_tres\n"
    "\n"
    "# our debug partition, edited by hand\n"
    "NodeName=login-box CPUs=4 State=UNKNOWN\n"
    "PartitionName=debug Nodes=login-box Default=YES MaxTime=30:00 State=UP\n"
    "Include /etc/slurm/site.conf\n";

// The file with the managed blocks cut out.
std::string outside_blocks(const std::string& text) {
  std::string out;
  bool inside = false;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    std::string line = text.substr(i, j == std::string::npos ? std::string::npos : j - i + 1);
    if (line.rfind("# BEGIN gpufleet managed", 0) == 0) inside = true;
    if (!inside) out += line;
    if (line.rfind("# END gpufleet managed", 0) == 0) inside = false;
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

int count_lines(const std::string& text, const std::string& prefix) {
  int n = 0;
  size_t pos = 0;
  while ((pos = text.find("\n" + prefix, pos)) != std::string::npos) {
    ++n;
    ++pos;
  }
  return n;
}

TEST(SlurmConfMerge, UserFileIsPreservedByteForByteWhileNodesJoinAndLeave) {
  SimCloudConfig cloud;
  cloud.capacity = {{"ml.p5.48xlarge", 10}};
  cloud.changes.push_back({hours(2), {{"ml.p5.48xlarge", 16}}});
  Fleet f(cloud);
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster.json")).status, 200);
  std::string conf = kUserConf;
  auto merge_now = [&] {
    SlurmMergeResult r =
        merge_slurm_conf(conf, slurm_layout(*f.cluster("my-training-cluster"), Catalog::builtin()));
    EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
    conf = r.text;
    EXPECT_EQ(outside_blocks(conf), kUserConf);
  };
  merge_now();
  f.run_for(hours(1));
  merge_now();
  EXPECT_EQ(count_lines(conf, "NodeName=worker-gpu-a-"), 10);
  EXPECT_NE(conf.find("PartitionName=gpu-training Nodes=worker-gpu-a-["), std::string::npos)
      << conf;
  EXPECT_NE(conf.find("NodeName=login-group-1 "), std::string::npos) << conf;
  EXPECT_NE(conf.find("Gres=gpu:8"), std::string::npos);

  f.run_for(hours(2));
  merge_now();
  EXPECT_EQ(count_lines(conf, "NodeName=worker-gpu-a-"), 16);

  // Nodes leave: scale the workers down to 3.
  Json body = Json::parse(shared_example("create_cluster.json"));
  Json g = body["InstanceGroups"][2];
  g["InstanceCount"] = 3;
  ASSERT_EQ(f.call("PUT", "/v1/clusters/my-training-cluster", Json{{"InstanceGroups", {g}}}.dump())
                .status,
            200);
  f.run_for(minutes(5));
  merge_now();
  EXPECT_EQ(count_lines(conf, "NodeName=worker-gpu-a-"), 3);
  // The hand-edited partition and node outside the blocks are untouched.
  EXPECT_NE(conf.find("\nPartitionName=debug Nodes=login-box Default=YES MaxTime=30:00 State=UP\n"),
            std::string::npos);
  // The API does the same merge.
  HttpResponse api = f.call("POST", "/v1/clusters/my-training-cluster/slurm-conf/merge", conf);
  ASSERT_EQ(api.status, 200);
  EXPECT_EQ(Json::parse(api.body)["SlurmConf"], conf);
  // Merging again changes nothing.
  std::string again =
      merge_slurm_conf(conf, slurm_layout(*f.cluster("my-training-cluster"), Catalog::builtin()))
          .text;
  EXPECT_EQ(again, conf);
}

}  // namespace
}  // namespace gf
