// The scheduler joins quota admission with all-or-nothing gang placement (issue 4 acceptance
// 4, 5, 6 and the rules of docs/scheduling.md that need real nodes). Tests build quota graphs
// directly; the front ends have their own tests.
#include "schedule/scheduler.h"
#include "unit/schedule/sched_fixtures.h"

#include <gtest/gtest.h>

#include "core/random.h"

namespace gf::sched {
namespace {

using quota::NodeId;
using quota::NodeKind;
using quota::NodeSpec;
using quota::QuotaGraph;

using testing::gpu_pod;
using testing::gpus;
using testing::node_capacity;

NodeSpec cohort(std::string name) {
  NodeSpec s;
  s.name = std::move(name);
  s.kind = NodeKind::kCohort;
  return s;
}

NodeSpec queue(std::string name, NodeId parent, int64_t nominal_gpus,
               std::optional<int64_t> borrowing = std::nullopt,
               std::optional<int64_t> lending = std::nullopt) {
  NodeSpec s;
  s.name = std::move(name);
  s.kind = NodeKind::kQueue;
  s.parent = parent;
  s.quotas.push_back({kGpu, nominal_gpus, borrowing, lending});
  return s;
}

class SchedulerTest : public ::testing::Test {
 protected:
  // Adds (or replaces) a cluster of `count` nodes with `gpus_per_node` GPUs each.
  std::vector<Action> cluster(const std::string& name, int count, int64_t gpus_per_node,
                              const std::string& type = "ml.p5.48xlarge", int skip = -1) {
    std::vector<Scheduler::NodeDesc> nodes;
    for (int i = 0; i < count; ++i) {
      if (i == skip) continue;
      nodes.push_back({name + "-n" + std::to_string(i), type, node_capacity(gpus_per_node), true});
    }
    return s.sync_cluster(name, nodes, {}, {});
  }

  JobSpec gang(JobKey key, NodeId q, int32_t priority, std::vector<int64_t> pod_gpus,
               bool managed = true) {
    JobSpec spec;
    spec.key = key;
    spec.queue = q;
    spec.quota_managed = managed;
    spec.priority = priority;
    spec.creation_seq = key;
    auto shape = std::make_shared<JobShape>();
    Alternative alt;
    int64_t total = 0;
    for (int64_t g : pod_gpus) {
      alt.pods.push_back(PodSet{1, gpu_pod(g), ""});
      total += g;
    }
    alt.quota_request = gpus(total);
    shape->alternatives.push_back(alt);
    spec.shape = shape;
    return spec;
  }

  void set_graph(QuotaGraph g) {
    s.set_quota(std::move(g), [](JobKey) { return quota::kNoNode; });
  }

  size_t count(const PassResult& r, ActionKind kind) const {
    size_t n = 0;
    for (const Action& a : r.actions) n += a.kind == kind ? 1 : 0;
    return n;
  }

  Scheduler s;
  Time t0 = Time{} + hours(1000);
};

TEST_F(SchedulerTest, Fragmentation_GangGoesToTheClusterWithWholeFreeNodes) {
  // Cluster "frag" has 8 free GPUs spread over 4 nodes; "whole" has 2 free 8-GPU nodes.
  cluster("frag", 4, 2, "ml.g5.12xlarge");
  cluster("whole", 2, 8);
  EXPECT_TRUE(s.submit(gang(1, quota::kNoNode, 0, {8, 8}, /*managed=*/false)).ok());
  const PassResult r = s.schedule(t0);
  ASSERT_EQ(count(r, ActionKind::kAdmit), 1u);
  EXPECT_EQ(s.placement().cluster_name(r.actions[0].placement.cluster), "whole");
  // Each pod has a node of its own on that cluster.
  EXPECT_NE(r.actions[0].placement.pods[0].node, r.actions[0].placement.pods[1].node);
  // Summed free capacity would refuse "frag" too (8 < 16), and per-node placement never fits.
  const ClusterIdx frag = *s.placement().find_cluster("frag");
  EXPECT_EQ(s.placement().free_gpus(frag), 8);
  EXPECT_FALSE(s.placement().find_in(frag, s.spec(1)->shape->alternatives[0].pods).has_value());
  EXPECT_TRUE(s.check_invariants().ok());
}

TEST_F(SchedulerTest, Fragmentation_SummedFreeCapacityWouldMisleadButPlacementDoesNot) {
  // 16 free GPUs over 8 nodes: a cluster-wide sum says a 2 x 8 gang fits; per node it does not.
  cluster("frag", 8, 2, "ml.g5.12xlarge");
  EXPECT_TRUE(s.submit(gang(1, quota::kNoNode, 0, {8, 8}, false)).ok());
  const PassResult r = s.schedule(t0);
  EXPECT_EQ(count(r, ActionKind::kAdmit), 0u);
  const WaitReason why = s.explain(1, t0);
  EXPECT_EQ(why.kind, WaitKind::kInfeasible) << why.message;  // no 8-GPU node exists at all
}

TEST_F(SchedulerTest, TightestFit_PrefersTheClusterLeftWithFewestFreeGpus) {
  cluster("big", 4, 8);
  cluster("small", 2, 8);
  EXPECT_TRUE(s.submit(gang(1, quota::kNoNode, 0, {8, 8}, false)).ok());
  const PassResult r = s.schedule(t0);
  ASSERT_EQ(count(r, ActionKind::kAdmit), 1u);
  EXPECT_EQ(s.placement().cluster_name(r.actions[0].placement.cluster), "small");
}

TEST_F(SchedulerTest, TightestFit_PacksSmallPodsOntoPartlyUsedNodes) {
  cluster("c", 2, 8);
  EXPECT_TRUE(s.submit(gang(1, quota::kNoNode, 0, {4}, false)).ok());
  EXPECT_TRUE(s.submit(gang(2, quota::kNoNode, 0, {4}, false)).ok());
  s.schedule(t0);
  // Both 4-GPU pods share one node, leaving a whole 8-GPU node free.
  EXPECT_EQ(s.placement_of(1)->pods[0].node, s.placement_of(2)->pods[0].node);
}

TEST_F(SchedulerTest, Gang_WaitsWholeWhenOnlyPartFits_AndExplainsWhichClusterIsShort) {
  QuotaGraph g;
  const NodeId q = *g.add_node(queue("q", quota::kNoNode, 64));
  set_graph(std::move(g));
  cluster("a", 2, 8);
  cluster("b", 2, 8);
  EXPECT_TRUE(s.submit(gang(1, q, 0, {8}, true)).ok());
  EXPECT_TRUE(s.submit(gang(2, q, 0, {8}, true)).ok());
  EXPECT_TRUE(s.submit(gang(3, q, 0, {8}, true)).ok());
  s.schedule(t0);
  EXPECT_TRUE(s.submit(gang(4, q, 0, {8, 8}, true))
                  .ok());  // 1 free node left in the fleet: needs two on one cluster
  const PassResult r = s.schedule(t0);
  EXPECT_EQ(count(r, ActionKind::kAdmit), 0u);
  EXPECT_EQ(s.placement_of(4), nullptr);
  const WaitReason why = s.explain(4, t0);
  EXPECT_EQ(why.kind, WaitKind::kPlacement);
  EXPECT_EQ(why.available, 1);
  EXPECT_EQ(why.shortfall, 1);
  EXPECT_NE(why.message.find("1 of 2 pods"), std::string::npos) << why.message;
}

TEST_F(SchedulerTest, Infeasible_ParkedWithReason_AndRetriedOnlyWhenTheFleetGrows) {
  cluster("a", 2, 8);
  EXPECT_TRUE(s.submit(gang(1, quota::kNoNode, 0, {8, 8, 8}, false)).ok());
  s.schedule(t0);
  EXPECT_EQ(s.explain(1, t0).kind, WaitKind::kInfeasible);
  // Heading for 3 nodes: feasible again, waits for placement until the node is up.
  std::map<std::string, int64_t, std::less<>> targets{{"ml.p5.48xlarge", 3}};
  std::vector<Scheduler::NodeDesc> nodes;
  for (int i = 0; i < 2; ++i)
    nodes.push_back({"a-n" + std::to_string(i), "ml.p5.48xlarge", node_capacity(8), true});
  s.sync_cluster("a", nodes, targets, {});
  s.schedule(t0);
  EXPECT_EQ(s.explain(1, t0).kind, WaitKind::kPlacement);
  nodes.push_back({"a-n2", "ml.p5.48xlarge", node_capacity(8), true});
  s.sync_cluster("a", nodes, targets, {});
  const PassResult r = s.schedule(t0);
  EXPECT_EQ(count(r, ActionKind::kAdmit), 1u);
}

TEST_F(SchedulerTest, Interrupt_NodeLossUnbindsTheWholeGangKeepsQuotaAndPlacesItAgain) {
  QuotaGraph g;
  const NodeId q = *g.add_node(queue("q", quota::kNoNode, 16));
  set_graph(std::move(g));
  cluster("a", 2, 8);
  cluster("b", 3, 8);
  EXPECT_TRUE(s.submit(gang(1, q, 0, {8, 8}, true)).ok());
  s.schedule(t0);
  ASSERT_EQ(s.placement().cluster_name(s.placement_of(1)->cluster), "a");
  // Node a-n1 is lost: the gang comes down whole, quota stays charged.
  const std::vector<Action> lost = cluster("a", 2, 8, "ml.p5.48xlarge", /*skip=*/1);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].kind, ActionKind::kInterrupt);
  EXPECT_EQ(s.placement_of(1), nullptr);
  EXPECT_TRUE(s.admitted(1));
  EXPECT_EQ(s.engine().usage(q).get(kGpu), 16);
  EXPECT_EQ(s.explain(1, t0).kind, WaitKind::kUnplaced);
  EXPECT_TRUE(s.check_invariants().ok());
  const PassResult r = s.schedule(t0);
  ASSERT_EQ(count(r, ActionKind::kAdmit), 1u);
  EXPECT_TRUE(r.actions[0].replaced);
  EXPECT_EQ(s.placement().cluster_name(s.placement_of(1)->cluster), "b");
}

TEST_F(SchedulerTest, Preemption_InQueueVictimFreesTheNodeForTheGang) {
  QuotaGraph g;
  NodeSpec spec = queue("q", quota::kNoNode, 8);
  spec.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  const NodeId q = *g.add_node(spec);
  set_graph(std::move(g));
  cluster("a", 1, 8);
  EXPECT_TRUE(s.submit(gang(1, q, 0, {8})).ok());
  s.schedule(t0);
  EXPECT_TRUE(s.submit(gang(2, q, 5, {8})).ok());
  const PassResult r = s.schedule(t0 + minutes(1));
  ASSERT_EQ(r.actions.size(), 2u);
  EXPECT_EQ(r.actions[0].kind, ActionKind::kPreempt);
  EXPECT_EQ(r.actions[0].job, 1u);
  EXPECT_EQ(r.actions[0].other, 2u);
  EXPECT_EQ(r.actions[0].reason, quota::PreemptionReason::kInQueue);
  EXPECT_EQ(r.actions[1].kind, ActionKind::kAdmit);
  EXPECT_EQ(r.actions[1].job, 2u);
  // The victim waits out its backoff, then waits for quota.
  EXPECT_EQ(s.explain(1, t0 + minutes(1)).kind, WaitKind::kBackoff);
  EXPECT_EQ(r.next_wake, t0 + minutes(1) + seconds(10));
  s.schedule(t0 + minutes(2));
  EXPECT_EQ(s.explain(1, t0 + minutes(2)).kind, WaitKind::kQuota);
  EXPECT_TRUE(s.check_invariants().ok());
}

TEST_F(SchedulerTest, Preemption_RetriesExhaustedTerminatesTheVictim) {
  QuotaGraph g;
  NodeSpec spec = queue("q", quota::kNoNode, 8);
  spec.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  const NodeId q = *g.add_node(spec);
  set_graph(std::move(g));
  cluster("a", 1, 8);
  JobSpec low = gang(1, q, 0, {8});
  low.max_preemptions = 0;
  EXPECT_TRUE(s.submit(low).ok());
  s.schedule(t0);
  EXPECT_TRUE(s.submit(gang(2, q, 5, {8})).ok());
  const PassResult r = s.schedule(t0);
  ASSERT_EQ(r.actions[0].kind, ActionKind::kPreempt);
  EXPECT_TRUE(r.actions[0].terminated);
  EXPECT_FALSE(s.contains(1));
}

TEST_F(SchedulerTest, Backoff_DoublesPerPreemptionUpToTheCap) {
  SchedulerOptions o;
  o.requeue_base = seconds(10);
  o.requeue_max = seconds(30);
  s.set_options(o);
  QuotaGraph g;
  NodeSpec spec = queue("q", quota::kNoNode, 8);
  spec.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  const NodeId q = *g.add_node(spec);
  set_graph(std::move(g));
  cluster("a", 1, 8);
  EXPECT_TRUE(s.submit(gang(1, q, 0, {8})).ok());
  Time now = t0;
  std::vector<Duration> backoffs;
  for (int i = 0; i < 3; ++i) {
    s.schedule(now);
    ASSERT_TRUE(s.admitted(1));
    EXPECT_TRUE(s.submit(gang(10 + i, q, 5, {8})).ok());
    const PassResult r = s.schedule(now);
    ASSERT_EQ(r.actions[0].kind, ActionKind::kPreempt);
    backoffs.push_back(r.actions[0].until - now);
    ASSERT_TRUE(s.finish(10 + i).ok());
    now = r.actions[0].until;
  }
  EXPECT_EQ(backoffs, (std::vector<Duration>{seconds(10), seconds(20), seconds(30)}));
}

TEST_F(SchedulerTest, MinRunTime_ProtectsFromReclaim_AndTheReclaimingQueueHoldsItsNominal) {
  SchedulerOptions o;
  o.min_run_time = minutes(10);
  s.set_options(o);
  QuotaGraph g;
  const NodeId root = *g.add_node(cohort("root"));
  NodeSpec q1 = queue("q1", root, 8);
  q1.preemption.reclaim = quota::ReclaimPolicy::kAny;
  NodeSpec q2 = queue("q2", root, 8);
  q2.preemption.reclaim = quota::ReclaimPolicy::kAny;
  const NodeId n1 = *g.add_node(q1);
  const NodeId n2 = *g.add_node(q2);
  set_graph(std::move(g));
  cluster("a", 3, 8);
  EXPECT_TRUE(s.submit(gang(1, n2, 0, {8, 4})).ok());  // q2 borrows 4 of q1's nominal
  s.schedule(t0);
  ASSERT_TRUE(s.admitted(1));
  EXPECT_TRUE(s.submit(gang(2, n1, 0, {8}))
                  .ok());  // q1 wants its nominal back; job 1 is protected for 10 min
  PassResult r = s.schedule(t0 + minutes(1));
  EXPECT_EQ(r.actions.size(), 0u);
  EXPECT_TRUE(s.submit(gang(3, n2, 0, {4})).ok());  // would borrow the 4 q1 is reclaiming
  r = s.schedule(t0 + minutes(2));
  EXPECT_EQ(r.actions.size(), 0u);
  EXPECT_EQ(s.explain(3, t0 + minutes(2)).kind, WaitKind::kHeldForReclaim)
      << s.explain(3, t0).message;
  // After the protection, the reclaim happens.
  r = s.schedule(t0 + minutes(11));
  ASSERT_GE(r.actions.size(), 2u);
  EXPECT_EQ(r.actions[0].kind, ActionKind::kPreempt);
  EXPECT_EQ(r.actions[0].job, 1u);
  EXPECT_EQ(r.actions[0].reason, quota::PreemptionReason::kReclaim);
  EXPECT_TRUE(s.admitted(2));
}

TEST_F(SchedulerTest, NoMutualPreemption_AReclaimedJobCannotReclaimBack) {
  QuotaGraph g;
  const NodeId root = *g.add_node(cohort("root"));
  NodeSpec q1 = queue("q1", root, 8);
  q1.preemption.reclaim = quota::ReclaimPolicy::kAny;
  NodeSpec q2 = queue("q2", root, 8);
  q2.preemption.reclaim = quota::ReclaimPolicy::kAny;
  const NodeId n1 = *g.add_node(q1);
  const NodeId n2 = *g.add_node(q2);
  set_graph(std::move(g));
  cluster("a", 2, 8);
  EXPECT_TRUE(s.submit(gang(1, n2, 9, {8, 8})).ok());  // borrows all of q1's nominal
  s.schedule(t0);
  EXPECT_TRUE(s.submit(gang(2, n1, 0, {8})).ok());
  PassResult r = s.schedule(t0);
  ASSERT_EQ(r.actions[0].kind, ActionKind::kPreempt);
  // Job 1 comes back after its backoff with higher priority: it would have to borrow, so it
  // cannot reclaim from q1, which runs inside its nominal. It waits; nothing flips back.
  for (int i = 1; i <= 20; ++i) {
    r = s.schedule(t0 + minutes(i * 15));
    for (const Action& a : r.actions) EXPECT_NE(a.kind, ActionKind::kPreempt);
  }
  EXPECT_TRUE(s.admitted(2));
  EXPECT_FALSE(s.admitted(1));
}

TEST_F(SchedulerTest, FairShare_BorrowerWithTheSmallestWeightedShareGoesFirst) {
  for (bool fair : {false, true}) {
    Scheduler fresh;
    QuotaGraph g;
    const NodeId root = *g.add_node(cohort("root"));
    (void)*g.add_node(queue("lender", root, 16));
    const NodeId a = *g.add_node(queue("a", root, 0));
    const NodeId b = *g.add_node(queue("b", root, 0));
    std::vector<bool> fair_roots(g.size(), false);
    fair_roots[root] = fair;
    fresh.set_quota(
        std::move(g), [](JobKey) { return quota::kNoNode; }, {}, fair_roots);
    std::vector<Scheduler::NodeDesc> nodes;
    for (int i = 0; i < 2; ++i)
      nodes.push_back({"n" + std::to_string(i), "t", node_capacity(8), true});
    fresh.sync_cluster("c", nodes, {}, {});
    JobSpec first = gang(1, a, 0, {8});
    EXPECT_TRUE(fresh.submit(first).ok());
    fresh.schedule(t0);  // a borrows 8
    EXPECT_TRUE(fresh.submit(gang(2, a, 0, {8})).ok());
    EXPECT_TRUE(fresh.submit(gang(3, b, 0, {8})).ok());  // newer, same priority
    fresh.schedule(t0);
    // FIFO gives the last 8 GPUs to a's older job; FAIR_SHARE to b, which borrows nothing yet.
    EXPECT_EQ(fresh.admitted(2), !fair) << "fair=" << fair;
    EXPECT_EQ(fresh.admitted(3), fair) << "fair=" << fair;
  }
}

TEST_F(SchedulerTest, Ceiling_TheEnvironmentCapacityBoundsTheCohort) {
  QuotaGraph g;
  const NodeId root = *g.add_node(cohort("root"));
  const NodeId q = *g.add_node(queue("q", root, 32));
  std::map<NodeId, ResourceVector> ceilings{{root, gpus(16)}};
  s.set_quota(
      std::move(g), [](JobKey) { return quota::kNoNode; }, ceilings);
  cluster("a", 4, 8);
  for (JobKey k = 1; k <= 3; ++k) EXPECT_TRUE(s.submit(gang(k, q, 0, {8})).ok());
  s.schedule(t0);
  EXPECT_TRUE(s.admitted(1));
  EXPECT_TRUE(s.admitted(2));
  EXPECT_FALSE(s.admitted(3));
  EXPECT_EQ(s.explain(3, t0).kind, WaitKind::kCeiling);
}

TEST_F(SchedulerTest, LoweredLimit_JobsAboveTheNewLimitBecomeReclaimVictims) {
  auto build = [](int64_t q1_nominal) {
    QuotaGraph g;
    const NodeId root = *g.add_node(cohort("root"));
    NodeSpec q1 = queue("q1", root, q1_nominal, /*borrowing=*/0);  // LEND
    q1.preemption.reclaim = quota::ReclaimPolicy::kAny;
    NodeSpec q2 = queue("q2", root, 8, 0);
    q2.preemption.reclaim = quota::ReclaimPolicy::kAny;
    (void)*g.add_node(q1);
    (void)*g.add_node(q2);
    return g;
  };
  s.set_quota(build(16), [](JobKey) { return quota::kNoNode; });
  cluster("a", 3, 8);
  EXPECT_TRUE(s.submit(gang(1, 1, 0, {8})).ok());
  EXPECT_TRUE(s.submit(gang(2, 1, 0, {8})).ok());
  s.schedule(t0);
  ASSERT_TRUE(s.admitted(1) && s.admitted(2));
  // q1's limit drops to 8: both jobs keep running, but one is now above the limit.
  s.set_quota(build(8), [&](JobKey k) { return s.spec(k)->queue; });
  EXPECT_TRUE(s.admitted(1) && s.admitted(2));
  s.schedule(t0);
  EXPECT_TRUE(s.admitted(1) && s.admitted(2));  // nobody needs it yet
  EXPECT_TRUE(
      s.submit(gang(3, 2, 0, {8, 8})).ok());  // q2 needs its nominal 8 plus... only 8 exist for it
  EXPECT_TRUE(s.submit(gang(4, 2, 0, {8})).ok());
  const PassResult r = s.schedule(t0 + minutes(1));
  ASSERT_FALSE(r.actions.empty());
  EXPECT_EQ(r.actions[0].kind, ActionKind::kPreempt);
  EXPECT_EQ(r.actions[0].reason, quota::PreemptionReason::kReclaim);
  EXPECT_TRUE(s.admitted(4));
  EXPECT_TRUE(s.check_invariants().ok());
}

TEST_F(SchedulerTest, StrictFifo_AHeadThatCannotBePlacedBlocksTheQueue) {
  for (bool strict : {false, true}) {
    Scheduler fresh;
    QuotaGraph g;
    NodeSpec spec = queue("q", quota::kNoNode, 64);
    spec.queueing =
        strict ? quota::QueueingStrategy::kStrictFifo : quota::QueueingStrategy::kBestEffortFifo;
    const NodeId q = *g.add_node(spec);
    fresh.set_quota(std::move(g), [](JobKey) { return quota::kNoNode; });
    std::map<std::string, int64_t, std::less<>> targets{{"t", 3}};
    std::vector<Scheduler::NodeDesc> nodes;
    for (int i = 0; i < 2; ++i)
      nodes.push_back({"n" + std::to_string(i), "t", node_capacity(8), true});
    fresh.sync_cluster("c", nodes, targets, {});
    EXPECT_TRUE(fresh.submit(gang(1, q, 0, {8, 8, 8})).ok());  // feasible at target size, not now
    EXPECT_TRUE(fresh.submit(gang(2, q, 0, {8})).ok());
    fresh.schedule(t0);
    EXPECT_EQ(fresh.admitted(2), !strict);
    if (strict) {
      EXPECT_EQ(fresh.explain(2, t0).kind, WaitKind::kStrictFifo);
    }
  }
}

TEST_F(SchedulerTest, PriorityChange_ReevaluatesAndPreemptsInQueue) {
  QuotaGraph g;
  NodeSpec spec = queue("q", quota::kNoNode, 8);
  spec.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  const NodeId q = *g.add_node(spec);
  set_graph(std::move(g));
  cluster("a", 1, 8);
  EXPECT_TRUE(s.submit(gang(1, q, 3, {8})).ok());
  EXPECT_TRUE(s.submit(gang(2, q, 1, {8})).ok());
  s.schedule(t0);
  ASSERT_TRUE(s.admitted(1));
  s.schedule(t0);
  ASSERT_FALSE(s.admitted(2));
  ASSERT_TRUE(s.set_priority(2, 4).ok());
  const PassResult r = s.schedule(t0);
  ASSERT_EQ(r.actions.size(), 2u);
  EXPECT_EQ(r.actions[0].job, 1u);
  EXPECT_TRUE(s.admitted(2));
}

// A randomized run over submissions, completions, priority changes and node loss; returns the
// decision-log hash. Checks the gang invariant (all pods placed on one cluster, or none) and the
// capacity bookkeeping after every step. With `partial`, a node that is lost or comes back is
// synced alone (Scheduler::sync_nodes) instead of with its whole cluster.
uint64_t random_run(uint64_t seed, int steps, int* admissions, bool partial = false) {
  Scheduler s;
  QuotaGraph g;
  const NodeId root = *g.add_node(cohort("root"));
  NodeSpec q1 = queue("q1", root, 24);
  q1.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  q1.preemption.reclaim = quota::ReclaimPolicy::kAny;
  NodeSpec q2 = queue("q2", root, 24);
  q2.preemption.reclaim = quota::ReclaimPolicy::kLowerPriority;
  const NodeId n1 = *g.add_node(q1);
  const NodeId n2 = *g.add_node(q2);
  s.set_quota(std::move(g), [](JobKey) { return quota::kNoNode; });
  Random rng(seed);
  std::map<std::string, std::vector<bool>> up{{"a", std::vector<bool>(3, true)},
                                              {"b", std::vector<bool>(3, true)}};
  auto sync = [&](const std::string& c) {
    std::vector<Scheduler::NodeDesc> nodes;
    for (size_t i = 0; i < up[c].size(); ++i) {
      if (up[c][i]) nodes.push_back({c + std::to_string(i), "t", node_capacity(8), true});
    }
    return s.sync_cluster(c, nodes, {}, {});
  };
  sync("a");
  sync("b");
  Time now = Time{} + hours(1);
  JobKey next = 1;
  std::vector<JobKey> live;
  *admissions = 0;
  for (int step = 0; step < steps; ++step) {
    const uint64_t op = rng.uniform(10);
    if (op <= 3) {  // submit a gang: 1 master + 2 workers
      JobSpec spec;
      spec.key = next++;
      spec.queue = rng.uniform(2) == 0 ? n1 : n2;
      spec.priority = static_cast<int32_t>(rng.uniform(4));
      spec.creation_seq = spec.key;
      auto shape = std::make_shared<JobShape>();
      Alternative alt;
      const int64_t worker = static_cast<int64_t>(rng.uniform_range(1, 8));
      alt.pods.push_back(PodSet{1, gpu_pod(1), ""});
      alt.pods.push_back(PodSet{2, gpu_pod(worker), ""});
      alt.quota_request = gpus(1 + 2 * worker);
      shape->alternatives.push_back(alt);
      spec.shape = shape;
      EXPECT_TRUE(s.submit(spec).ok());
      live.push_back(spec.key);
    } else if (op <= 5 && !live.empty()) {  // a job finishes (running or not)
      const size_t i = rng.uniform(live.size());
      if (s.contains(live[i])) {
        EXPECT_TRUE(s.finish(live[i]).ok());
      }
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op == 6 && !live.empty()) {
      const JobKey k = live[rng.uniform(live.size())];
      if (s.contains(k)) {
        EXPECT_TRUE(s.set_priority(k, static_cast<int32_t>(rng.uniform(4))).ok());
      }
    } else if (op == 7 || op == 8) {  // a node is lost or comes back
      const std::string c = rng.uniform(2) == 0 ? "a" : "b";
      const size_t i = rng.uniform(3);
      up[c][i] = !up[c][i];
      if (partial) {
        const std::string id = c + std::to_string(i);
        if (up[c][i]) {
          s.sync_nodes(c, {{id, "t", node_capacity(8), true}}, {}, {}, {});
        } else {
          s.sync_nodes(c, {}, {id, "unknown-id"}, {}, {});
        }
      } else {
        sync(c);
      }
    } else {
      now = now + seconds(static_cast<int64_t>(rng.uniform_range(1, 120)));
    }
    const PassResult r = s.schedule(now);
    for (const Action& a : r.actions) *admissions += a.kind == ActionKind::kAdmit ? 1 : 0;
    const Status inv = s.check_invariants();
    EXPECT_TRUE(inv.ok()) << "step " << step << ": " << inv.message();
    if (!inv.ok()) break;
  }
  return s.decision_hash();
}

TEST(SchedulerProperty, GangAtomicity_NoSubsetOfPodsIsEverPlaced) {
  int admissions = 0;
  random_run(20261130, 5000, &admissions);
  EXPECT_GT(admissions, 200);  // the run did schedule a lot
}

TEST(SchedulerProperty, Determinism_SameInputsGiveTheSameDecisionLog) {
  int a1 = 0, a2 = 0, a3 = 0;
  const uint64_t h1 = random_run(7, 2000, &a1);
  const uint64_t h2 = random_run(7, 2000, &a2);
  const uint64_t h3 = random_run(8, 2000, &a3);
  EXPECT_EQ(h1, h2);
  EXPECT_EQ(a1, a2);
  EXPECT_NE(h1, h3);
}

// A mirror that syncs only the nodes that changed (docs/performance.md "Fleet-scale simulation")
// decides exactly as one that syncs the whole cluster each time.
TEST(SchedulerProperty, PartialNodeSync_DecidesExactlyAsAWholeClusterSync) {
  for (uint64_t seed : {7, 11, 20261204}) {
    int whole = 0, partial = 0;
    const uint64_t h1 = random_run(seed, 2000, &whole);
    const uint64_t h2 = random_run(seed, 2000, &partial, /*partial=*/true);
    EXPECT_EQ(h1, h2) << "seed " << seed;
    EXPECT_EQ(whole, partial) << "seed " << seed;
    EXPECT_GT(whole, 50) << "seed " << seed;
  }
}

TEST_F(SchedulerTest, Replay_ApplyingRecordedActionsRebuildsTheSameScheduler) {
  QuotaGraph g1;
  NodeSpec spec = queue("q", quota::kNoNode, 16);
  spec.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  const NodeId q = *g1.add_node(spec);
  QuotaGraph g2 = g1;
  set_graph(std::move(g1));
  cluster("a", 2, 8);
  EXPECT_TRUE(s.submit(gang(1, q, 0, {8, 8})).ok());
  std::vector<Action> recorded;
  for (const Action& a : s.schedule(t0).actions) recorded.push_back(a);
  EXPECT_TRUE(s.submit(gang(2, q, 5, {8})).ok());
  for (const Action& a : s.schedule(t0).actions) recorded.push_back(a);

  Scheduler r;
  r.set_quota(std::move(g2), [](JobKey) { return quota::kNoNode; });
  std::vector<Scheduler::NodeDesc> nodes;
  for (int i = 0; i < 2; ++i)
    nodes.push_back({"a-n" + std::to_string(i), "ml.p5.48xlarge", node_capacity(8), true});
  r.sync_cluster("a", nodes, {}, {});
  EXPECT_TRUE(r.submit(gang(1, q, 0, {8, 8})).ok());
  EXPECT_TRUE(r.submit(gang(2, q, 5, {8})).ok());
  for (const Action& a : recorded) ASSERT_TRUE(r.apply(a, t0).ok());
  EXPECT_EQ(r.admitted(1), s.admitted(1));
  EXPECT_EQ(r.admitted(2), s.admitted(2));
  ASSERT_NE(r.placement_of(2), nullptr);
  EXPECT_EQ(*r.placement_of(2), *s.placement_of(2));
  EXPECT_TRUE(r.check_invariants().ok());
  // Applying the same actions again changes nothing.
  for (const Action& a : recorded) ASSERT_TRUE(r.apply(a, t0).ok());
  EXPECT_TRUE(r.check_invariants().ok());
  EXPECT_TRUE(r.schedule(t0).actions.empty());
}

}  // namespace
}  // namespace gf::sched
