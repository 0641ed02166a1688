// The node answers (docs/api.md "Clusters"): what runs on a node comes from the jobs placed there,
// and a cordoned node says so.
#include "api/cluster_wire.h"

#include <gtest/gtest.h>

#include <memory>

namespace gf {
namespace {

TEST(NodeAnswers, PodsComeFromThePlacedJobsAndACordonedNodeSaysSo) {
  auto c = std::make_shared<Cluster>();
  c->name = "training";
  Node n;
  n.instance_id = "i-1";
  n.group = "workers";
  n.instance_type = "ml.p5.48xlarge";
  n.status = NodeStatus::kRunning;
  n.cordoned = true;
  n.labels = {{"team", "a"}};
  c->nodes[n.instance_id] = n;
  auto job = std::make_shared<Job>();
  job->id = "job-1";
  job->name = "train";
  job->admitted = true;
  job->cluster = "training";
  job->pod_sets = {JobPodSet{"master", 1, Json::object(), "", false},
                   JobPodSet{"worker", 2, Json::object(), "", false}};
  job->pod_nodes = {"i-1", "i-2", "i-1"};
  FleetView v;
  v.clusters["training"] = c;
  v.jobs.emplace(job->id, job);

  const NodeActivity activity = NodeActivity::of(v, *c);
  const Json summary = node_summary(v, *c, c->nodes.at("i-1"), activity);
  EXPECT_EQ(summary["Cordoned"], true);
  EXPECT_EQ(summary["PodCount"], 2);
  EXPECT_FALSE(summary.contains("RemediationId"));
  const Json detail = node_detail(v, *c, c->nodes.at("i-1"), Time{});
  EXPECT_EQ(detail["Labels"], Json({{"team", "a"}}));
  EXPECT_EQ(detail["Workload"]["Pods"],
            Json::parse(R"([{"Name": "train-master-0", "Job": "train", "JobId": "job-1"},
                            {"Name": "train-worker-1", "Job": "train", "JobId": "job-1"}])"));
  job->admitted = false;  // a job that left its nodes runs nothing there
  EXPECT_EQ(node_summary(v, *c, c->nodes.at("i-1"), NodeActivity::of(v, *c))["PodCount"], 0);
}

}  // namespace
}  // namespace gf
