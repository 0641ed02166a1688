// Fleet dispatch of gangs to one member cluster: estimate mode (docs/dispatch.md, a fleet that
// picks a cluster by summed free capacity and lets the pods wait there), sticky re-placement after
// an interruption (docs/dispatch.md), failover to another cluster (docs/dispatch.md), and their
// replay and restore.
#include <gtest/gtest.h>

#include "core/random.h"
#include "schedule/scheduler.h"
#include "unit/schedule/sched_fixtures.h"

namespace gf::sched {
namespace {

using quota::NodeId;
using quota::NodeSpec;
using quota::QuotaGraph;

using testing::gpu_pod;
using testing::gpus;
using testing::node_capacity;

QuotaGraph one_queue(int64_t nominal_gpus, bool preempt_lower = false) {
  QuotaGraph g;
  NodeSpec s;
  s.name = "q";
  s.kind = quota::NodeKind::kQueue;
  s.quotas.push_back({kGpu, nominal_gpus, std::nullopt, std::nullopt});
  if (preempt_lower) s.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  (void)*g.add_node(s);
  return g;
}

constexpr NodeId kQueue = 0;

// Everything a caller records and feeds to a replica, in order: node syncs, submissions,
// completions, the actions of each pass, and failovers.
struct Step {
  enum Kind : uint8_t { kSync, kSubmit, kFinish, kAction, kFailover } kind = kSync;
  Time at{};
  std::string cluster{};                     // kSync
  std::vector<Scheduler::NodeDesc> nodes{};  // kSync
  JobSpec spec{};                            // kSubmit
  JobKey job = 0;                            // kFinish, kFailover
  Action action{};                           // kAction
};

class BindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s.set_quota(one_queue(64), [](JobKey) { return quota::kNoNode; });
  }

  void estimate_mode() {
    SchedulerOptions o;
    o.reservation = false;
    s.set_options(o);
  }

  // The nodes of cluster `name`: `count` 8-GPU nodes named name-nI, except those in `down`.
  std::vector<Action> cluster(const std::string& name, int count, std::vector<int> down = {}) {
    Step sync{.kind = Step::kSync, .at = t0, .cluster = name};
    for (int i = 0; i < count; ++i) {
      if (std::find(down.begin(), down.end(), i) != down.end()) continue;
      sync.nodes.push_back(
          {name + "-n" + std::to_string(i), "ml.p5.48xlarge", node_capacity(8), true});
    }
    std::vector<Action> out = s.sync_cluster(name, sync.nodes, {}, {});
    last_nodes = sync.nodes;
    steps.push_back(std::move(sync));
    for (const Action& a : out) steps.push_back({.kind = Step::kAction, .at = t0, .action = a});
    return out;
  }

  JobSpec gang(JobKey key, std::vector<int64_t> pod_gpus, std::vector<std::string> allowed = {},
               bool sticky = false, int32_t priority = 0) {
    JobSpec spec;
    spec.key = key;
    spec.queue = kQueue;
    spec.priority = priority;
    spec.creation_seq = key;
    spec.sticky = sticky;
    for (const std::string& c : allowed) spec.allowed_clusters.push_back(s.cluster_index(c));
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

  // The PyTorchJob of the issue: a 1-GPU master and two 4-GPU workers (9 GPUs).
  JobSpec pytorch_job(JobKey key, bool sticky = false) { return gang(key, {1, 4, 4}, {}, sticky); }

  void submit(const JobSpec& spec) {
    ASSERT_TRUE(s.submit(spec).ok());
    steps.push_back({.kind = Step::kSubmit, .at = t0, .spec = spec});
  }
  void finish(JobKey key) {
    ASSERT_TRUE(s.finish(key).ok());
    steps.push_back({.kind = Step::kFinish, .at = t0, .job = key});
  }
  void failover(JobKey key, Time now) {
    ASSERT_TRUE(s.failover(key, now).ok());
    steps.push_back({.kind = Step::kFailover, .at = now, .job = key});
  }
  PassResult pass(Time now) {
    PassResult r = s.schedule(now);
    for (const Action& a : r.actions)
      steps.push_back({.kind = Step::kAction, .at = now, .action = a});
    EXPECT_TRUE(s.check_invariants().ok()) << s.check_invariants().message();
    return r;
  }

  // Cluster "a": three 8-GPU nodes, each holding a 5-GPU filler (3 free per node, 9 in all);
  // cluster "b": two empty 8-GPU nodes.
  void fragmented_fleet(int b_nodes = 2) {
    cluster("a", 3);
    cluster("b", b_nodes);
    for (JobKey k = 1; k <= 3; ++k) submit(gang(k, {5}, {"a"}));
    pass(t0);
    for (JobKey k = 1; k <= 3; ++k) ASSERT_TRUE(s.pods_placed(k));
  }

  std::string name(std::optional<ClusterIdx> c) const {
    return c ? s.placement().cluster_name(*c) : std::string("(none)");
  }
  std::string placed_on(JobKey key) const {
    const Placement* p = s.placement_of(key);
    return p == nullptr ? std::string("(none)") : s.placement().cluster_name(p->cluster);
  }

  Scheduler s;
  Time t0 = Time{} + hours(1000);
  std::vector<Step> steps;
  std::vector<Scheduler::NodeDesc> last_nodes;  // of the latest cluster() call
};

size_t count(const PassResult& r, ActionKind kind) {
  size_t n = 0;
  for (const Action& a : r.actions) n += a.kind == kind ? 1 : 0;
  return n;
}

TEST_F(BindingTest, EstimateMode_PicksTheFragmentedClusterBySummedFreeCapacity_PodsStayPending) {
  estimate_mode();
  fragmented_fleet();
  const ClusterIdx a = *s.placement().find_cluster("a");
  EXPECT_EQ(s.placement().free_gpus(a), 9);
  submit(pytorch_job(10));
  const PassResult r = pass(t0);
  ASSERT_EQ(r.actions.size(), 1u);
  const Action& act = r.actions[0];
  EXPECT_EQ(act.kind, ActionKind::kAdmit);
  EXPECT_FALSE(act.replaced);
  EXPECT_EQ(act.placement.cluster, a);  // 9 free summed, 0 left: tighter than b's 16
  EXPECT_TRUE(act.placement.pods.empty());
  EXPECT_NE(act.message.find("dispatched to cluster a"), std::string::npos) << act.message;
  // Admitted (quota charged) and bound, but nothing reserved on a's nodes.
  EXPECT_TRUE(s.admitted(10));
  EXPECT_FALSE(s.pods_placed(10));
  EXPECT_EQ(s.placement_of(10), nullptr);
  EXPECT_EQ(s.bound_cluster(10), a);
  EXPECT_EQ(s.engine().usage(kQueue).get(kGpu), 15 + 9);
  EXPECT_EQ(s.placement().free_gpus(a), 9);
  const WaitReason why = s.explain(10, t0);
  EXPECT_EQ(why.kind, WaitKind::kPodsPending);
  EXPECT_EQ(wait_kind_name(why.kind), "PodsPending");
  EXPECT_NE(why.message.find("dispatched to cluster a"), std::string::npos) << why.message;
  EXPECT_NE(why.message.find("summed free capacity"), std::string::npos) << why.message;
  EXPECT_EQ(why.requested, 3);
  EXPECT_EQ(why.shortfall, 3 - why.available);
  EXPECT_GT(why.shortfall, 0);
  // Nothing changes until room appears: no repeated actions; replaying the dispatch is a no-op.
  EXPECT_TRUE(pass(t0 + minutes(1)).actions.empty());
  ASSERT_TRUE(s.apply(act, t0).ok());
  EXPECT_EQ(s.bound_cluster(10), a);
  EXPECT_FALSE(s.pods_placed(10));
  EXPECT_TRUE(s.check_invariants().ok());

  // Reservation mode, same fleet: placed on b at once.
  s = Scheduler();
  steps.clear();
  s.set_quota(one_queue(64), [](JobKey) { return quota::kNoNode; });
  fragmented_fleet();
  submit(pytorch_job(10));
  const PassResult rr = pass(t0);
  ASSERT_EQ(count(rr, ActionKind::kAdmit), 1u);
  EXPECT_EQ(s.placement().cluster_name(rr.actions[0].placement.cluster), "b");
  EXPECT_EQ(rr.actions[0].placement.pods.size(), 3u);
  EXPECT_TRUE(s.pods_placed(10));
  EXPECT_EQ(name(s.bound_cluster(10)), "b");
  EXPECT_EQ(s.explain(10, t0).kind, WaitKind::kNotWaiting);
}

TEST_F(BindingTest, EstimateMode_PendingPodsStartWhenTheClusterFreesRoom) {
  estimate_mode();
  fragmented_fleet();
  submit(pytorch_job(10));
  pass(t0);
  ASSERT_EQ(name(s.bound_cluster(10)), "a");
  ASSERT_FALSE(s.pods_placed(10));
  finish(1);  // a-n0 is empty again: both workers fit there, the master beside a filler
  const PassResult r = pass(t0 + minutes(1));
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_EQ(r.actions[0].kind, ActionKind::kAdmit);
  EXPECT_TRUE(r.actions[0].replaced);
  EXPECT_EQ(r.actions[0].placement.pods.size(), 3u);
  EXPECT_EQ(placed_on(10), "a");
  EXPECT_TRUE(s.pods_placed(10));
  EXPECT_EQ(s.explain(10, t0).kind, WaitKind::kNotWaiting);
  EXPECT_EQ(s.engine().find(10)->start_time, t0);  // admitted once, at dispatch
}

TEST_F(BindingTest, EstimateMode_CountsOnlyNodesOfAPodSetsInstanceType) {
  PlacementIndex idx;
  const ClusterIdx a = idx.cluster("a");
  const ClusterIdx b = idx.cluster("b");
  idx.upsert_node(a, "a-p5", "p5", node_capacity(8), true);
  idx.upsert_node(a, "a-g5", "g5", node_capacity(8), true);
  idx.upsert_node(b, "b-p5", "p5", node_capacity(20), true);
  const std::vector<PodSet> any{PodSet{1, gpu_pod(12), ""}};
  const std::vector<PodSet> p5{PodSet{1, gpu_pod(12), "p5"}};
  EXPECT_EQ(idx.estimate(any), a);  // 4 GPUs left in a (over two types), 8 in b
  EXPECT_EQ(idx.estimate(p5), b);   // a has only 8 p5 GPUs
  // Unschedulable nodes do not count; `allowed` limits the choice.
  idx.set_schedulable(*idx.find_node(b, "b-p5"), false);
  EXPECT_EQ(idx.estimate(p5), std::nullopt);
  const std::vector<ClusterIdx> only_b{b};
  EXPECT_EQ(idx.estimate(any, &only_b), std::nullopt);
}

TEST_F(BindingTest, EstimateMode_PreemptionPathAlsoDispatchesBySummedCapacity) {
  s.set_quota(one_queue(9, /*preempt_lower=*/true), [](JobKey) { return quota::kNoNode; });
  estimate_mode();
  cluster("a", 3);
  cluster("b", 2);
  for (JobKey k = 1; k <= 3; ++k) {
    JobSpec filler = gang(k, {5}, {"a"});
    filler.quota_managed = false;
    filler.queue = quota::kNoNode;
    submit(filler);
  }
  submit(gang(10, {1, 4, 4}));
  pass(t0);
  ASSERT_TRUE(s.admitted(10));
  submit(gang(11, {1, 4, 4}, {}, false, /*priority=*/5));
  const PassResult r = pass(t0 + minutes(1));
  ASSERT_EQ(r.actions.size(), 2u);
  EXPECT_EQ(r.actions[0].kind, ActionKind::kPreempt);
  EXPECT_EQ(r.actions[0].job, 10u);
  EXPECT_EQ(r.actions[1].kind, ActionKind::kAdmit);
  EXPECT_EQ(r.actions[1].job, 11u);
  EXPECT_EQ(s.placement().cluster_name(r.actions[1].placement.cluster), "a");
  EXPECT_TRUE(r.actions[1].placement.pods.empty());
  EXPECT_EQ(s.bound_cluster(10), std::nullopt);  // the victim's binding went with its admission
  EXPECT_EQ(s.explain(11, t0).kind, WaitKind::kPodsPending);
}

TEST_F(BindingTest, Failover_MovesTheJobToAnotherCluster_KeepingQuotaAndAdmission) {
  estimate_mode();
  fragmented_fleet();
  submit(pytorch_job(10));
  pass(t0);
  ASSERT_EQ(name(s.bound_cluster(10)), "a");
  const int64_t usage = s.engine().usage(kQueue).get(kGpu);
  const ClusterIdx a = *s.placement().find_cluster("a");

  failover(10, t0 + minutes(5));
  EXPECT_TRUE(s.admitted(10));
  EXPECT_EQ(s.bound_cluster(10), std::nullopt);
  EXPECT_EQ(s.engine().usage(kQueue).get(kGpu), usage);
  EXPECT_EQ(s.engine().find(10)->start_time, t0);
  EXPECT_TRUE(s.check_invariants().ok());
  const WaitReason why = s.explain(10, t0);
  EXPECT_EQ(why.kind, WaitKind::kUnplaced);
  EXPECT_NE(why.message.find("failed over from a"), std::string::npos) << why.message;
  // Estimate alone would still pick a (the tightest sum); the exclusion keeps it off.
  EXPECT_EQ(s.placement().estimate(s.spec(10)->shape->alternatives[0].pods), a);

  const PassResult r = pass(t0 + minutes(5));
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_EQ(r.actions[0].kind, ActionKind::kAdmit);
  EXPECT_TRUE(r.actions[0].replaced);
  EXPECT_EQ(r.actions[0].alternative, 0);
  EXPECT_EQ(s.placement().cluster_name(r.actions[0].placement.cluster), "b");
  EXPECT_EQ(r.actions[0].placement.pods.size(), 3u);
  EXPECT_EQ(placed_on(10), "b");
  EXPECT_EQ(name(s.bound_cluster(10)), "b");
  EXPECT_EQ(s.engine().usage(kQueue).get(kGpu), usage);
  EXPECT_EQ(s.engine().find(10)->start_time, t0);
}

TEST_F(BindingTest, Failover_OfAPlacedGangReleasesItsNodes_AndItWaitsWhileNoOtherClusterHasRoom) {
  fragmented_fleet();  // reservation mode
  submit(pytorch_job(10));
  pass(t0);
  ASSERT_EQ(placed_on(10), "b");
  const ClusterIdx b = *s.placement().find_cluster("b");
  ASSERT_EQ(s.placement().free_gpus(b), 7);
  failover(10, t0);
  EXPECT_EQ(s.placement().free_gpus(b), 16);  // pods unbound
  EXPECT_FALSE(s.pods_placed(10));
  EXPECT_TRUE(pass(t0).actions.empty());  // a has 9 GPUs but no room for a 4-GPU worker; b excluded
  EXPECT_EQ(s.explain(10, t0).kind, WaitKind::kUnplaced);
  finish(2);  // a-n1 empties
  const PassResult r = pass(t0 + minutes(1));
  ASSERT_EQ(count(r, ActionKind::kAdmit), 1u);
  EXPECT_EQ(placed_on(10), "a");
  // Its pods run again, so b is no longer excluded: a second failover may go back there.
  failover(10, t0 + minutes(2));
  pass(t0 + minutes(2));
  EXPECT_EQ(placed_on(10), "b");
}

TEST_F(BindingTest, Failover_WhenExclusionLeavesNoClusterTheJobWaitsUnplaced) {
  cluster("a", 2);
  cluster("b", 2);
  submit(gang(10, {8}, {"a"}));
  pass(t0);
  ASSERT_EQ(placed_on(10), "a");
  failover(10, t0);
  EXPECT_TRUE(pass(t0).actions.empty());  // b has room but is not allowed
  const WaitReason why = s.explain(10, t0);
  EXPECT_EQ(why.kind, WaitKind::kUnplaced);
  EXPECT_NE(why.message.find("every cluster it may use is excluded"), std::string::npos)
      << why.message;
  EXPECT_TRUE(s.admitted(10));
}

TEST_F(BindingTest, Failover_Errors_UnknownJobPendingJobOrNoBinding) {
  cluster("a", 1);
  EXPECT_EQ(s.failover(99, t0).code(), ErrorCode::kNotFound);
  submit(gang(10, {8, 8}));  // cannot fit: pending
  pass(t0);
  EXPECT_EQ(s.failover(10, t0).code(), ErrorCode::kConflict);
  submit(gang(11, {4}));
  pass(t0);
  ASSERT_TRUE(s.pods_placed(11));
  ASSERT_TRUE(s.failover(11, t0).ok());
  EXPECT_EQ(s.failover(11, t0).code(), ErrorCode::kConflict);  // already off its cluster
}

TEST_F(BindingTest, Sticky_InterruptedGangIsPlacedAgainOnlyInItsCluster) {
  cluster("a", 2);
  cluster("b", 2);
  submit(gang(10, {8, 8}, {}, /*sticky=*/true));
  pass(t0);
  ASSERT_EQ(placed_on(10), "a");  // equal fit: the name decides
  const std::vector<Action> lost = cluster("a", 2, /*down=*/{1});
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].kind, ActionKind::kInterrupt);
  EXPECT_EQ(name(s.bound_cluster(10)), "a");
  EXPECT_FALSE(s.pods_placed(10));
  EXPECT_TRUE(pass(t0).actions.empty());  // b has room, a does not: it waits for a
  const WaitReason why = s.explain(10, t0);
  EXPECT_EQ(why.kind, WaitKind::kPodsPending);
  EXPECT_NE(why.message.find("waiting for room in its cluster a"), std::string::npos)
      << why.message;
  EXPECT_EQ(why.available, 1);
  cluster("a", 2);  // the node is back
  const PassResult r = pass(t0 + minutes(1));
  ASSERT_EQ(r.actions.size(), 1u);
  EXPECT_TRUE(r.actions[0].replaced);
  EXPECT_EQ(placed_on(10), "a");
  // Failover lifts the binding: the sticky job then goes to b and is bound there.
  failover(10, t0 + minutes(2));
  pass(t0 + minutes(2));
  EXPECT_EQ(placed_on(10), "b");
  EXPECT_EQ(name(s.bound_cluster(10)), "b");
}

TEST_F(BindingTest, NotSticky_InterruptedGangLosesItsBinding) {
  cluster("a", 2);
  cluster("b", 2);
  submit(gang(10, {8, 8}));
  pass(t0);
  ASSERT_EQ(name(s.bound_cluster(10)), "a");
  cluster("a", 2, {1});
  EXPECT_EQ(s.bound_cluster(10), std::nullopt);
  pass(t0);
  EXPECT_EQ(placed_on(10), "b");
}

// Feeds the recorded steps to `r` the way journal replay does: the same node syncs and
// submissions, the recorded actions through apply(), and failovers through failover().
void replay(Scheduler& r, const std::vector<Step>& steps) {
  for (const Step& step : steps) {
    switch (step.kind) {
      case Step::kSync:
        r.sync_cluster(step.cluster, step.nodes, {}, {});
        break;
      case Step::kSubmit:
        ASSERT_TRUE(r.submit(step.spec).ok());
        break;
      case Step::kFinish:
        ASSERT_TRUE(r.finish(step.job).ok());
        break;
      case Step::kAction: {
        const Status st = r.apply(step.action, step.at);
        ASSERT_TRUE(st.ok()) << st.message();
        break;
      }
      case Step::kFailover:
        ASSERT_TRUE(r.failover(step.job, step.at).ok());
        break;
    }
    ASSERT_TRUE(r.check_invariants().ok()) << r.check_invariants().message();
  }
}

void expect_same(const Scheduler& x, const Scheduler& y, const std::vector<JobKey>& jobs,
                 Time now) {
  for (JobKey k : jobs) {
    SCOPED_TRACE("job " + std::to_string(k));
    EXPECT_EQ(x.admitted(k), y.admitted(k));
    EXPECT_EQ(x.pods_placed(k), y.pods_placed(k));
    EXPECT_EQ(x.bound_cluster(k), y.bound_cluster(k));
    ASSERT_EQ(x.placement_of(k) == nullptr, y.placement_of(k) == nullptr);
    if (x.placement_of(k) != nullptr) {
      EXPECT_EQ(*x.placement_of(k), *y.placement_of(k));
    }
    if (!x.admitted(k)) continue;  // replay restores admissions; pending jobs wait for a pass
    EXPECT_EQ(x.explain(k, now).kind, y.explain(k, now).kind);
    EXPECT_EQ(x.explain(k, now).message, y.explain(k, now).message);  // names exclusions too
  }
}

void expect_same_pass(Scheduler& x, Scheduler& y, Time now) {
  const PassResult px = x.schedule(now);
  const PassResult py = y.schedule(now);
  ASSERT_EQ(px.actions.size(), py.actions.size());
  for (size_t i = 0; i < px.actions.size(); ++i) {
    EXPECT_EQ(px.actions[i].kind, py.actions[i].kind);
    EXPECT_EQ(px.actions[i].job, py.actions[i].job);
    EXPECT_EQ(px.actions[i].replaced, py.actions[i].replaced);
    EXPECT_EQ(px.actions[i].placement, py.actions[i].placement);
  }
}

TEST_F(BindingTest, Replay_DispatchFailoverAndInterruptsRebuildTheSameBindings) {
  estimate_mode();
  fragmented_fleet(/*b_nodes=*/3);
  submit(pytorch_job(10));             // dispatched to a, pods pending
  submit(gang(11, {8}, {"b"}, true));  // sticky, placed on b-n0
  pass(t0);
  ASSERT_EQ(name(s.bound_cluster(10)), "a");
  ASSERT_EQ(placed_on(11), "b");
  failover(10, t0 + minutes(1));
  pass(t0 + minutes(1));  // 10 goes to b-n1/b-n2
  ASSERT_EQ(placed_on(10), "b");
  t0 = t0 + minutes(2);
  cluster("b", 3, {2});  // 10 interrupted: not sticky, free again; estimate sends it back to a
  pass(t0);
  ASSERT_EQ(name(s.bound_cluster(10)), "a");
  ASSERT_FALSE(s.pods_placed(10));
  cluster("b", 3, {0, 2});  // 11 interrupted: sticky, placed again on b-n1
  pass(t0);
  ASSERT_EQ(placed_on(11), "b");
  failover(11, t0);  // excluded b, the only cluster it may use: it waits
  pass(t0);
  ASSERT_FALSE(s.pods_placed(11));
  finish(1);  // room on a for 10
  pass(t0 + minutes(1));
  ASSERT_EQ(placed_on(10), "a");
  const std::vector<JobKey> jobs{2, 3, 10, 11};

  Scheduler r;
  r.set_options(s.options());
  r.set_quota(one_queue(64), [](JobKey) { return quota::kNoNode; });
  replay(r, steps);
  expect_same(s, r, jobs, t0);
  // Both continue alike: with b whole again, a new gang goes where the original sends it.
  cluster("b", 3);
  r.sync_cluster("b", last_nodes, {}, {});
  const JobSpec next = pytorch_job(12);
  submit(next);
  ASSERT_TRUE(r.submit(next).ok());
  expect_same_pass(s, r, t0 + minutes(5));
  EXPECT_EQ(placed_on(12), "b");
  EXPECT_FALSE(s.pods_placed(11));  // b is excluded for it until it runs again
  expect_same(s, r, {2, 3, 10, 11, 12}, t0);
}

TEST_F(BindingTest, Restore_SnapshotOfBindingsAndExclusionsGivesTheSameScheduler) {
  estimate_mode();
  fragmented_fleet(/*b_nodes=*/1);
  submit(pytorch_job(10));             // dispatched to a, pods pending
  submit(gang(11, {8}, {"b"}, true));  // sticky on b
  submit(gang(12, {1}, {}, false));    // placed on a, then failed over
  pass(t0);
  ASSERT_EQ(placed_on(12), "a");
  failover(12, t0);
  cluster("b", 1, {0});                   // 11 interrupted: bound to b, b has no node
  failover(10, t0);                       // 10 excluded from a
  EXPECT_TRUE(pass(t0).actions.empty());  // only b is left for 10 and 12, and b has no node
  ASSERT_EQ(name(s.bound_cluster(11)), "b");
  ASSERT_EQ(name(s.bound_cluster(10)), "(none)");
  const std::vector<JobKey> jobs{1, 2, 3, 10, 11, 12};

  // A snapshot holds, per job: admitted, alternative, admission time, placement (pods or a
  // dispatch without pods), and for jobs without pods the binding and exclusions.
  Scheduler r;
  r.set_options(s.options());
  r.set_quota(one_queue(64), [](JobKey) { return quota::kNoNode; });
  for (const Step& step : steps) {
    if (step.kind == Step::kSync) r.sync_cluster(step.cluster, step.nodes, {}, {});
  }
  const std::map<JobKey, std::vector<ClusterIdx>> excluded{
      {10, {*s.placement().find_cluster("a")}}, {12, {*s.placement().find_cluster("a")}}};
  for (const Step& step : steps) {
    if (step.kind != Step::kSubmit) continue;
    const JobKey k = step.spec.key;
    ASSERT_TRUE(r.submit(step.spec).ok());
    if (!s.admitted(k)) continue;
    const Time admitted_at = s.engine().find(k)->start_time;
    if (const Placement* p = s.placement_of(k)) {
      ASSERT_TRUE(r.restore(k, 0, p, admitted_at).ok());
      continue;
    }
    ASSERT_TRUE(r.restore(k, 0, nullptr, admitted_at).ok());
    auto ex = excluded.find(k);
    ASSERT_TRUE(r.restore_binding(k, s.bound_cluster(k),
                                  ex == excluded.end() ? std::vector<ClusterIdx>{} : ex->second)
                    .ok());
  }
  ASSERT_TRUE(r.check_invariants().ok()) << r.check_invariants().message();
  expect_same(s, r, jobs, t0);
  // b's node returns: the sticky 11 takes it in both; 10 (9 GPUs) and 12 wait for room.
  cluster("b", 1);
  r.sync_cluster("b", last_nodes, {}, {});
  expect_same_pass(s, r, t0 + minutes(1));
  EXPECT_EQ(placed_on(11), "b");
  expect_same(s, r, jobs, t0);

  // A dispatch restores from a placement without pods.
  Scheduler d;
  d.set_quota(one_queue(64), [](JobKey) { return quota::kNoNode; });
  d.sync_cluster("a", {}, {}, {});
  const JobSpec spec = pytorch_job(20);
  ASSERT_TRUE(d.submit(spec).ok());
  Placement dispatched;
  dispatched.cluster = *d.placement().find_cluster("a");
  ASSERT_TRUE(d.restore(20, 0, &dispatched, t0).ok());
  EXPECT_EQ(d.bound_cluster(20), dispatched.cluster);
  EXPECT_FALSE(d.pods_placed(20));
  EXPECT_EQ(d.explain(20, t0).kind, WaitKind::kPodsPending);
  EXPECT_TRUE(d.check_invariants().ok());
  // Neither refuses what a snapshot cannot hold.
  ASSERT_TRUE(d.submit(pytorch_job(22)).ok());
  Placement nowhere;
  EXPECT_EQ(d.restore(22, 0, &nowhere, t0).code(), ErrorCode::kValidation);
  EXPECT_EQ(d.restore_binding(21, std::nullopt, {}).code(), ErrorCode::kNotFound);
  EXPECT_EQ(d.restore_binding(20, 7, {}).code(), ErrorCode::kValidation);
  EXPECT_EQ(d.restore_binding(20, dispatched.cluster, {dispatched.cluster}).code(),
            ErrorCode::kValidation);
}

// Randomized runs in both modes over submissions (some sticky, some restricted to one cluster),
// completions, failovers and node loss: the invariants hold after every step, and replaying the
// recorded steps on a fresh scheduler rebuilds the same placements, bindings and exclusions.
TEST_F(BindingTest, Property_RandomRunsKeepInvariantsAndReplayToTheSameBindings) {
  for (bool reservation : {true, false}) {
    for (uint64_t seed : {11u, 12u, 13u}) {
      SCOPED_TRACE("reservation=" + std::to_string(reservation) + " seed=" + std::to_string(seed));
      s = Scheduler();
      steps.clear();
      s.set_quota(one_queue(96, /*preempt_lower=*/true), [](JobKey) { return quota::kNoNode; });
      SchedulerOptions o;
      o.reservation = reservation;
      s.set_options(o);
      Random rng(seed);
      const std::vector<std::string> names{"a", "b", "c"};
      std::map<std::string, std::vector<int>> down;
      for (const std::string& c : names) cluster(c, 3);
      JobKey next = 1;
      std::vector<JobKey> live;
      int dispatched = 0, failovers = 0, placed_again = 0;
      for (int step = 0; step < 1500 && !HasFatalFailure(); ++step) {
        const uint64_t op = rng.uniform(10);
        if (op <= 3) {
          const int64_t worker = rng.uniform_range(2, 6);
          std::vector<std::string> allowed;
          if (rng.uniform(4) == 0) allowed.push_back(names[rng.uniform(3)]);
          JobSpec spec = gang(next++, {1, worker, worker}, allowed, rng.uniform(2) == 0,
                              static_cast<int32_t>(rng.uniform(3)));
          submit(spec);
          live.push_back(spec.key);
        } else if (op <= 5 && !live.empty()) {
          const size_t i = rng.uniform(live.size());
          if (s.contains(live[i])) finish(live[i]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        } else if (op == 6) {
          std::vector<JobKey> bound;
          for (JobKey k : live) {
            if (s.bound_cluster(k)) bound.push_back(k);
          }
          if (!bound.empty()) {
            failover(bound[rng.uniform(bound.size())], t0);
            ++failovers;
          }
        } else if (op <= 8) {
          const std::string& c = names[rng.uniform(3)];
          const int n = static_cast<int>(rng.uniform(3));
          auto& d = down[c];
          if (auto it = std::find(d.begin(), d.end(), n); it != d.end()) {
            d.erase(it);
          } else {
            d.push_back(n);
          }
          cluster(c, 3, d);
        } else {
          t0 = t0 + seconds(static_cast<int64_t>(rng.uniform_range(1, 120)));
        }
        for (const Action& a : pass(t0).actions) {
          if (a.kind != ActionKind::kAdmit) continue;
          dispatched += a.placement.pods.empty() ? 1 : 0;
          placed_again += a.replaced && !a.placement.pods.empty() ? 1 : 0;
        }
      }
      EXPECT_GT(failovers, 20);
      EXPECT_GT(placed_again, 20);
      if (reservation) {
        EXPECT_EQ(dispatched, 0);
      } else {
        EXPECT_GT(dispatched, 5);
      }

      Scheduler r;
      r.set_options(s.options());
      r.set_quota(one_queue(96, true), [](JobKey) { return quota::kNoNode; });
      replay(r, steps);
      expect_same(s, r, live, t0);
      expect_same_pass(s, r, t0 + hours(1));
      expect_same(s, r, live, t0 + hours(1));
    }
  }
}

}  // namespace
}  // namespace gf::sched
