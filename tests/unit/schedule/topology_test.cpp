// Topology-aware gangs (docs/scheduling.md "Topology"): required and preferred levels, the hub
// choosing member cluster and domain in one decision, waits explained by topology, infeasible
// shapes parked, and preemption only when the gang then fits its domain.
#include <gtest/gtest.h>

#include <set>

#include "schedule/scheduler.h"
#include "unit/schedule/sched_fixtures.h"

namespace gf::sched {
namespace {

using quota::NodeId;
using quota::NodeKind;
using quota::NodeSpec;
using quota::QuotaGraph;
using testing::gpu_pod;
using testing::gpus;
using testing::node_capacity;

constexpr uint8_t kLayer2 = 2;
constexpr uint8_t kLayer3 = 3;

class TopologyTest : public ::testing::Test {
 protected:
  // Cluster `name`: `count` 8-GPU nodes `<name>-n<i>` in blocks of `per_block` nodes (layer 3),
  // `blocks_per_spine` blocks to a spine (layer 2), one layer-1 node for the cluster. Nodes in
  // `busy` take no pods.
  void cluster(const std::string& name, int count, int per_block, int blocks_per_spine = 1,
               const std::set<int>& busy = {}) {
    std::vector<Scheduler::NodeDesc> nodes;
    for (int i = 0; i < count; ++i) {
      Scheduler::NodeDesc d{name + "-n" + std::to_string(i), "ml.p5.48xlarge", node_capacity(8),
                            !busy.contains(i)};
      const int block = i / per_block;
      d.topology = {"nn-" + name, "nn-" + name + "-s" + std::to_string(block / blocks_per_spine),
                    "nn-" + name + "-b" + std::to_string(block), ""};
      nodes.push_back(std::move(d));
    }
    s.sync_cluster(name, nodes, {}, {});
  }

  // A gang of `pods` pods of `gpus_each` GPUs; `level` 0 = no topology request.
  JobSpec gang(JobKey key, int32_t pods, int64_t gpus_each, uint8_t level = 0, bool required = true,
               NodeId q = quota::kNoNode, int32_t priority = 0) {
    JobSpec spec;
    spec.key = key;
    spec.queue = q;
    spec.quota_managed = q != quota::kNoNode;
    spec.priority = priority;
    spec.creation_seq = key;
    auto shape = std::make_shared<JobShape>();
    Alternative alt;
    PodSet ps{pods, gpu_pod(gpus_each), ""};
    ps.topology = level;
    ps.topology_required = required;
    alt.pods.push_back(ps);
    alt.quota_request = gpus(pods * gpus_each);
    shape->alternatives.push_back(alt);
    spec.shape = shape;
    return spec;
  }

  // Submits and runs one pass; true when the job was admitted in it.
  bool run(const JobSpec& spec, Time at) {
    EXPECT_TRUE(s.submit(spec).ok());
    s.schedule(at);
    EXPECT_TRUE(s.check_invariants().ok()) << s.check_invariants().message();
    return s.pods_placed(spec.key);
  }

  // The distinct label values at `level` of the nodes job `key` is placed on.
  std::set<std::string> domains_of(JobKey key, uint8_t level) const {
    std::set<std::string> out;
    const Placement* p = s.placement_of(key);
    if (p == nullptr) return out;
    for (const PodBinding& b : p->pods) out.insert(s.placement().topology_value(b.node, level));
    return out;
  }
  std::string cluster_of(JobKey key) const {
    const Placement* p = s.placement_of(key);
    return p == nullptr ? "(none)" : s.placement().cluster_name(p->cluster);
  }

  Scheduler s;
  Time t0 = Time{} + hours(1000);
};

TEST_F(TopologyTest, Required_PacksTheGangIntoOneBlock) {
  cluster("a", 8, 4);                   // blocks b0 (n0..n3) and b1 (n4..n7)
  ASSERT_TRUE(run(gang(1, 1, 8), t0));  // a filler: best fit puts it on n0, in b0
  ASSERT_TRUE(run(gang(2, 4, 8, kLayer3), t0));
  EXPECT_EQ(domains_of(2, kLayer3), std::set<std::string>{"nn-a-b1"});
}

TEST_F(TopologyTest, Required_TheHubPicksTheClusterWhoseBlockFits_NotTheTightestCluster) {
  cluster("a", 8, 2);   // 64 free GPUs, but no block of more than 2 nodes
  cluster("b", 16, 8);  // 128 free GPUs in two blocks of 8 nodes
  // Without topology the tightest cluster wins: a (32 GPUs left against 96).
  ASSERT_TRUE(run(gang(1, 4, 8), t0));
  EXPECT_EQ(cluster_of(1), "a");
  ASSERT_TRUE(s.finish(1).ok());
  // With a required block of 4 nodes only b has one.
  ASSERT_TRUE(run(gang(2, 4, 8, kLayer3), t0));
  EXPECT_EQ(cluster_of(2), "b");
  EXPECT_EQ(domains_of(2, kLayer3).size(), 1u);
}

TEST_F(TopologyTest, Required_TheTightestBlockAcrossEveryClusterWins) {
  cluster("a", 8, 8);
  cluster("b", 8, 8);
  cluster("c", 16, 16);
  // 5 free nodes left in a's block, 4 in b's, 16 in c's.
  for (JobKey k = 1; k <= 3; ++k) ASSERT_TRUE(run(gang(k, 1, 8), t0));  // best fit: a's nodes
  for (JobKey k = 4; k <= 7; ++k) {
    JobSpec j = gang(k, 1, 8);
    j.allowed_clusters = {s.cluster_index("b")};
    ASSERT_TRUE(run(j, t0));
  }
  ASSERT_TRUE(run(gang(10, 4, 8, kLayer3), t0));
  EXPECT_EQ(cluster_of(10), "b");  // 4 free nodes: exactly the gang
  ASSERT_TRUE(run(gang(11, 5, 8, kLayer3), t0));
  EXPECT_EQ(cluster_of(11), "a");  // 5 free nodes, against c's 16
}

TEST_F(TopologyTest, Required_WaitIsExplainedByTheLargestDomain) {
  // Free: a-b0 2 nodes, a-b1 1, b-b0 2, b-b1 1 — 6 nodes, but no block holds 3.
  cluster("a", 8, 4, 1, {0, 1, 4, 5, 6});
  cluster("b", 8, 4, 1, {0, 1, 4, 5, 6});
  EXPECT_FALSE(run(gang(5, 3, 8, kLayer3), t0));
  const WaitReason why = s.explain(5, t0);
  EXPECT_EQ(why.kind, WaitKind::kPlacement);
  EXPECT_NE(why.message.find("no topology.k8s.aws/network-node-layer-3 domain"), std::string::npos)
      << why.message;
  EXPECT_NE(why.message.find("largest holds 2 of its 3 pods"), std::string::npos) << why.message;
  // The same gang without topology spreads over two blocks at once.
  EXPECT_TRUE(run(gang(6, 3, 8), t0));
}

TEST_F(TopologyTest, Required_AGangNoBlockCouldEverHoldIsParked) {
  cluster("a", 8, 4);
  EXPECT_FALSE(run(gang(1, 5, 8, kLayer3), t0));
  const WaitReason why = s.explain(1, t0);
  EXPECT_EQ(why.kind, WaitKind::kInfeasible) << why.message;
}

TEST_F(TopologyTest, Preferred_OneBlockWhenItFits_ElseOneSpine) {
  // Blocks b0..b3, spines s0 = {b0, b1}, s1 = {b2, b3}; two free nodes in each block.
  cluster("a", 16, 4, 2, {0, 1, 4, 5, 8, 9, 12, 13});
  ASSERT_TRUE(run(gang(1, 2, 8, kLayer3, /*required=*/false), t0));
  EXPECT_EQ(s.placement_of(1)->topology_rank, 0);  // one block held it
  ASSERT_TRUE(s.finish(1).ok());
  ASSERT_TRUE(run(gang(10, 4, 8, kLayer3, /*required=*/false), t0));
  EXPECT_EQ(domains_of(10, kLayer3).size(), 2u);  // two blocks...
  EXPECT_EQ(domains_of(10, kLayer2).size(), 1u);  // ...of one spine
  EXPECT_EQ(s.placement_of(10)->topology_rank, 1);
  // Four free nodes left, two per block of spine s1: a 3-node gang that requires a block waits.
  EXPECT_FALSE(run(gang(11, 3, 8, kLayer3), t0));
  ASSERT_TRUE(s.finish(11).ok());
  ASSERT_TRUE(run(gang(12, 3, 8, kLayer3, false), t0));
  EXPECT_EQ(domains_of(12, kLayer3).size(), 2u);
}

TEST_F(TopologyTest, Preferred_SpreadsOverTheFewestDomainsWhenNoneHoldsIt) {
  // Four blocks of 2 nodes labelled at layer 3 only (no spine or layer-1 to climb to).
  std::vector<Scheduler::NodeDesc> nodes;
  for (int i = 0; i < 8; ++i) {
    nodes.push_back({"a-n" + std::to_string(i),
                     "ml.p5.48xlarge",
                     node_capacity(8),
                     i != 0,
                     false,
                     {"", "", "nn-a-b" + std::to_string(i / 2), ""}});
  }
  s.sync_cluster("a", nodes, {}, {});  // b0 has one free node, b1..b3 two each
  ASSERT_TRUE(run(gang(2, 5, 8, kLayer3, false), t0));
  // Largest blocks first: b1, b2 (2 nodes each), then one node of b3.
  EXPECT_EQ(domains_of(2, kLayer3), (std::set<std::string>{"nn-a-b1", "nn-a-b2", "nn-a-b3"}));
  EXPECT_GE(s.placement_of(2)->topology_rank, kSpread);
}

TEST_F(TopologyTest, Preferred_OnNodesWithoutTopologyLabelsPlacesAsWithout) {
  std::vector<Scheduler::NodeDesc> nodes;
  for (int i = 0; i < 4; ++i)
    nodes.push_back({"p-n" + std::to_string(i), "ml.p5.48xlarge", node_capacity(8), true});
  s.sync_cluster("p", nodes, {}, {});
  EXPECT_TRUE(run(gang(1, 3, 8, kLayer3, false), t0));
  EXPECT_FALSE(run(gang(2, 1, 8, kLayer3, true), t0));  // required: no layer-3 domain at all
}

TEST_F(TopologyTest, RequiredHost_PutsEveryPodOnOneNode) {
  cluster("a", 2, 2);
  ASSERT_TRUE(run(gang(1, 1, 2), t0));  // n0 keeps 6 free GPUs
  JobSpec j = gang(2, 4, 2, kHostLevel);
  ASSERT_TRUE(run(j, t0));
  const Placement* p = s.placement_of(2);
  ASSERT_NE(p, nullptr);
  std::set<NodeIdx> nodes;
  for (const PodBinding& b : p->pods) nodes.insert(b.node);
  EXPECT_EQ(nodes.size(), 1u);
  EXPECT_EQ(s.placement().instance_id(*nodes.begin()), "a-n1");  // n0 has only 6 left
}

TEST_F(TopologyTest, WholeJobGroup_MasterAndWorkersShareOneBlock) {
  cluster("a", 8, 4);
  ASSERT_TRUE(run(gang(1, 1, 8), t0));  // b0 keeps 3 nodes
  JobSpec spec = gang(2, 3, 8);
  auto shape = std::make_shared<JobShape>(*spec.shape);
  PodSet master{1, gpu_pod(8), ""};
  for (PodSet* ps : {&master, &shape->alternatives[0].pods[0]}) {
    ps->topology = kLayer3;
    ps->topology_required = true;
    ps->topology_group = 1;
  }
  shape->alternatives[0].pods.insert(shape->alternatives[0].pods.begin(), master);
  shape->alternatives[0].quota_request = gpus(32);
  spec.shape = shape;
  ASSERT_TRUE(run(spec, t0));  // 4 pods: only b1 holds them all
  EXPECT_EQ(domains_of(2, kLayer3), std::set<std::string>{"nn-a-b1"});
}

TEST_F(TopologyTest, Relabel_MovesANodeBetweenDomains) {
  cluster("a", 4, 2);
  std::vector<Scheduler::NodeDesc> moved{{"a-n2",
                                          "ml.p5.48xlarge",
                                          node_capacity(8),
                                          true,
                                          false,
                                          {"nn-a", "nn-a-s0", "nn-a-b0", ""}}};
  s.sync_nodes("a", moved, {}, {}, {});
  ASSERT_TRUE(run(gang(1, 3, 8, kLayer3), t0));  // b0 now holds n0, n1, n2
  EXPECT_EQ(domains_of(1, kLayer3), std::set<std::string>{"nn-a-b0"});
}

// A queue of 32 GPUs whose lower-priority jobs may be preempted.
QuotaGraph preempting_queue() {
  QuotaGraph g;
  NodeSpec q;
  q.name = "q";
  q.kind = NodeKind::kQueue;
  q.quotas.push_back({kGpu, 32, std::nullopt, std::nullopt});
  q.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  (void)*g.add_node(q);
  return g;
}

TEST_F(TopologyTest, Preemption_OnlyWhenTheGangThenFitsItsDomain) {
  s.set_quota(preempting_queue(), [](JobKey) { return quota::kNoNode; });
  cluster("a", 4, 2);  // b0 = n0, n1; b1 = n2, n3
  const NodeId q = 0;
  // One job per node, one at a time: n0 (priority 0), n1 (1), n2 (0), n3 (1).
  for (JobKey k = 1; k <= 4; ++k) ASSERT_TRUE(run(gang(k, 1, 8, 0, true, q, (k + 1) % 2), t0));
  // A priority-5 gang of 2 nodes in one block: quota's victims are the two priority-0 jobs, on n0
  // and n2 — different blocks — so evicting them would not let it run: nobody is preempted.
  EXPECT_FALSE(run(gang(5, 2, 8, kLayer3, true, q, 5), t0 + minutes(1)));
  for (JobKey k = 1; k <= 4; ++k) EXPECT_TRUE(s.pods_placed(k)) << k;
  // The same gang without topology preempts them and runs across the two blocks.
  ASSERT_TRUE(s.finish(5).ok());
  EXPECT_TRUE(run(gang(6, 2, 8, 0, true, q, 5), t0 + minutes(2)));
  EXPECT_FALSE(s.pods_placed(1));
  EXPECT_FALSE(s.pods_placed(3));
}

TEST_F(TopologyTest, Preemption_VictimsInOneBlockLetTheGangRunThere) {
  s.set_quota(preempting_queue(), [](JobKey) { return quota::kNoNode; });
  cluster("a", 4, 2);
  const NodeId q = 0;
  // n0 (0), n1 (0), n2 (1), n3 (1): the priority-0 jobs share block b0.
  for (JobKey k = 1; k <= 4; ++k) ASSERT_TRUE(run(gang(k, 1, 8, 0, true, q, k > 2 ? 1 : 0), t0));
  EXPECT_TRUE(run(gang(5, 2, 8, kLayer3, true, q, 5), t0 + minutes(1)));
  EXPECT_EQ(domains_of(5, kLayer3), std::set<std::string>{"nn-a-b0"});
  EXPECT_TRUE(s.pods_placed(3));
  EXPECT_TRUE(s.pods_placed(4));
}

}  // namespace
}  // namespace gf::sched
