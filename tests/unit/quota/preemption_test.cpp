// Preemption planner: the Kueue preemption table (pkg/scheduler/preemption/preemption_test.go,
// classic mode), borrowWithinCohort, min_run_time, and the AWS quota-share example
// (docs/quota-frontends.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quota/quota_engine.h"

namespace gf::quota {
namespace {

constexpr int64_t kCpuUnit = 1000;  // millicores per CPU
const Time kT0 = from_micros(1'700'000'000'000'000);

ResourceQuota quota(ResourceId r, int64_t nominal, std::optional<int64_t> borrow = std::nullopt,
                    std::optional<int64_t> lend = std::nullopt) {
  return ResourceQuota{r, nominal, borrow, lend};
}
ResourceQuota cpu(int64_t nominal, std::optional<int64_t> borrow = std::nullopt) {
  return quota(kCpu, nominal * kCpuUnit,
               borrow ? std::optional<int64_t>(*borrow * kCpuUnit) : std::nullopt);
}
PreemptionPolicy pol(WithinQueuePolicy within, ReclaimPolicy reclaim = ReclaimPolicy::kNever) {
  PreemptionPolicy p;
  p.within_queue = within;
  p.reclaim = reclaim;
  return p;
}
NodeSpec queue(std::string name, NodeId parent, std::vector<ResourceQuota> quotas,
               PreemptionPolicy policy = {}) {
  NodeSpec s;
  s.name = std::move(name);
  s.parent = parent;
  s.quotas = std::move(quotas);
  s.preemption = policy;
  return s;
}
NodeSpec cohort(std::string name) {
  NodeSpec s;
  s.name = std::move(name);
  s.kind = NodeKind::kCohort;
  return s;
}

// An engine plus helpers that admit workloads one second apart, so later = more recently started.
class Env {
 public:
  explicit Env(QuotaGraph g) : engine_(std::move(g), &log_) {}
  QuotaEngine& engine() { return engine_; }
  const DecisionLog& log() const { return log_; }
  void pend(WorkloadId id, NodeId q, int32_t priority, ResourceId r, int64_t amount) {
    Workload w;
    w.id = id;
    w.queue = q;
    w.priority = priority;
    w.creation_seq = ++seq_;
    w.request.set(r, amount);
    ASSERT_TRUE(engine_.add_workload(w).ok());
  }
  void run(WorkloadId id, NodeId q, int32_t priority, ResourceId r, int64_t amount) {
    pend(id, q, priority, r, amount);
    const Status st = engine_.admit(id, kT0 + seconds(static_cast<int64_t>(seq_)));
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  void run_cpu(WorkloadId id, NodeId q, int32_t p, int64_t cpus) {
    run(id, q, p, kCpu, cpus * kCpuUnit);
  }
  void pend_cpu(WorkloadId id, NodeId q, int32_t p, int64_t cpus) {
    pend(id, q, p, kCpu, cpus * kCpuUnit);
  }
  PreemptionPlan plan(WorkloadId id) { return engine_.plan_preemption(id, kT0 + seconds(3600)); }

 private:
  DecisionLog log_;
  QuotaEngine engine_;
  uint64_t seq_ = 0;
};

std::vector<WorkloadId> victim_ids(const PreemptionPlan& plan) {
  std::vector<WorkloadId> ids;
  for (const Victim& v : plan.victims) ids.push_back(v.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

enum : WorkloadId { kLow = 1, kMid, kHigh, kIn, kIn2 };

QuotaGraph standalone_graph(NodeId* q) {
  QuotaGraph g;
  *q = *g.add_node(queue("standalone", kNoNode, {cpu(6)},
                         pol(WithinQueuePolicy::kLowerPriority, ReclaimPolicy::kNever)));
  return g;
}

// (a) Kueue "preempt lowest priority" and "preempt multiple".
TEST(KueuePreemptionTable, WithinQueueLowerPriorityEvictsLowestFirstAndOnlyWhatIsNeeded) {
  NodeId sa;
  Env env(standalone_graph(&sa));
  env.run_cpu(kLow, sa, -1, 2);
  env.run_cpu(kMid, sa, 0, 2);
  env.run_cpu(kHigh, sa, 1, 2);
  env.pend_cpu(kIn, sa, 1, 2);
  PreemptionPlan plan = env.plan(kIn);
  ASSERT_EQ(plan.outcome, PlanOutcome::kPreempt);
  EXPECT_EQ(victim_ids(plan), (std::vector<WorkloadId>{kLow}));
  EXPECT_EQ(plan.victims[0].reason, PreemptionReason::kInQueue);

  env.pend_cpu(kIn2, sa, 1, 3);
  plan = env.plan(kIn2);
  ASSERT_EQ(plan.outcome, PlanOutcome::kPreempt);
  EXPECT_EQ(victim_ids(plan), (std::vector<WorkloadId>{kLow, kMid}));
}

// (b) Kueue "minimal set excludes low priority".
TEST(KueuePreemptionTable, MinimalSetDropsVictimsThatAreNotNeeded) {
  NodeId sa;
  Env env(standalone_graph(&sa));
  env.run_cpu(kLow, sa, -1, 1);
  env.run_cpu(kMid, sa, 0, 2);
  env.run_cpu(kHigh, sa, 1, 3);
  env.pend_cpu(kIn, sa, 1, 2);
  const PreemptionPlan plan = env.plan(kIn);
  ASSERT_EQ(plan.outcome, PlanOutcome::kPreempt);
  EXPECT_EQ(victim_ids(plan), (std::vector<WorkloadId>{kMid}));
}

// The engine keeps each queue's admitted workloads in victim order: a priority change of an
// admitted workload moves it, so the plan reads the new order.
TEST(KueuePreemptionTable, VictimOrderFollowsAPriorityChangeOfAnAdmittedWorkload) {
  NodeId sa;
  Env env(standalone_graph(&sa));
  env.run_cpu(kLow, sa, -1, 2);
  env.run_cpu(kMid, sa, 0, 2);
  env.run_cpu(kHigh, sa, 1, 2);
  ASSERT_TRUE(env.engine().set_priority(kLow, 2).ok());  // now the most valuable
  env.pend_cpu(kIn, sa, 1, 2);
  PreemptionPlan plan = env.plan(kIn);
  ASSERT_EQ(plan.outcome, PlanOutcome::kPreempt);
  EXPECT_EQ(victim_ids(plan), (std::vector<WorkloadId>{kMid}));
  // Releasing and evicting find it at its new place.
  ASSERT_TRUE(env.engine().evict(kLow).ok());
  ASSERT_TRUE(env.engine().release(kMid).ok());
  plan = env.plan(kIn);
  EXPECT_EQ(plan.outcome, PlanOutcome::kFitsNow);
}

// (c) Kueue "not enough low priority workloads".
TEST(KueuePreemptionTable, NoPartialPreemptionWhenNoSetMakesItFit) {
  NodeId sa;
  Env env(standalone_graph(&sa));
  env.run_cpu(kLow, sa, -1, 3);
  env.run_cpu(kMid, sa, 0, 3);
  env.pend_cpu(kIn, sa, 0, 4);
  const PreemptionPlan plan = env.plan(kIn);
  EXPECT_EQ(plan.outcome, PlanOutcome::kImpossible);
  EXPECT_TRUE(plan.victims.empty());
  EXPECT_FALSE(plan.why.empty());
  EXPECT_EQ(env.log().entries().back().kind, DecisionKind::kNoPreemption);
}

struct CohortIds {
  NodeId root, c1, c2;
};
QuotaGraph c1_c2_cohort(CohortIds* ids) {
  QuotaGraph g;
  ids->root = *g.add_node(cohort("cohort"));
  ids->c1 =
      *g.add_node(queue("c1", ids->root, {cpu(6, 6)},
                        pol(WithinQueuePolicy::kLowerPriority, ReclaimPolicy::kLowerPriority)));
  ids->c2 = *g.add_node(
      queue("c2", ids->root, {cpu(6, 6)}, pol(WithinQueuePolicy::kNever, ReclaimPolicy::kAny)));
  return g;
}

// (d) Kueue "reclaim quota from borrower": the borrower's workload goes, not our own.
TEST(KueuePreemptionTable, ReclaimTakesFromOtherQueueBorrowingBeforeOwnQueue) {
  CohortIds ids;
  Env env(c1_c2_cohort(&ids));
  enum : WorkloadId { kC1Low = 1, kC2Mid, kC2High, kIncoming };
  env.run_cpu(kC1Low, ids.c1, -1, 3);
  env.run_cpu(kC2Mid, ids.c2, 0, 3);
  env.run_cpu(kC2High, ids.c2, 1, 6);
  env.pend_cpu(kIncoming, ids.c1, 1, 3);
  const PreemptionPlan plan = env.plan(kIncoming);
  ASSERT_EQ(plan.outcome, PlanOutcome::kPreempt);
  EXPECT_EQ(victim_ids(plan), (std::vector<WorkloadId>{kC2Mid}));
  EXPECT_EQ(plan.victims[0].reason, PreemptionReason::kReclaim);
}

// (e) Kueue "no workloads borrowing": c2 runs within its nominal, so nothing of it is reclaimed.
// (Kueue's table forces preemption mode; here 4 CPU still fit by borrowing, so the planner
// answers kFitsNow. 5 CPU would need c1 to borrow, which forbids reclaim: impossible.)
TEST(KueuePreemptionTable, QueueWithinNominalIsNeverAReclaimVictim) {
  CohortIds ids;
  Env env(c1_c2_cohort(&ids));
  enum : WorkloadId { kC1High = 1, kC2Low, kIncoming, kIncoming5 };
  env.run_cpu(kC1High, ids.c1, 1, 4);
  env.run_cpu(kC2Low, ids.c2, -1, 4);
  env.pend_cpu(kIncoming, ids.c1, 1, 4);
  PreemptionPlan plan = env.plan(kIncoming);
  EXPECT_NE(plan.outcome, PlanOutcome::kPreempt);
  EXPECT_TRUE(plan.victims.empty());

  env.pend_cpu(kIncoming5, ids.c1, 1, 5);
  plan = env.plan(kIncoming5);
  EXPECT_EQ(plan.outcome, PlanOutcome::kImpossible);
  EXPECT_TRUE(plan.victims.empty());
}

TEST(KueuePreemptionTable, BorrowWithinCohortHonoursPriorityThreshold) {
  for (const int32_t threshold : {0, -2}) {
    QuotaGraph g;
    const NodeId root = *g.add_node(cohort("cohort"));
    PreemptionPolicy p{WithinQueuePolicy::kNever, ReclaimPolicy::kLowerPriority,
                       BorrowWithinCohortPolicy::kLowerPriority, threshold};
    const NodeId a = *g.add_node(queue("a", root, {cpu(2)}, p));
    const NodeId b = *g.add_node(queue("b", root, {cpu(2)}));
    Env env(std::move(g));
    env.run_cpu(1, a, 0, 1);
    env.run_cpu(2, b, -1, 3);  // b borrows 1
    env.pend_cpu(3, a, 1, 2);  // a would borrow 1 after admission
    const PreemptionPlan plan = env.plan(3);
    if (threshold == 0) {
      ASSERT_EQ(plan.outcome, PlanOutcome::kPreempt);
      EXPECT_EQ(victim_ids(plan), (std::vector<WorkloadId>{2}));
      EXPECT_EQ(plan.victims[0].reason, PreemptionReason::kBorrowWithinCohort);
    } else {
      EXPECT_EQ(plan.outcome, PlanOutcome::kImpossible) << "victim priority above threshold";
    }
  }
}

TEST(KueuePreemptionTable, LowerOrNewerEqualPriorityPreemptsNewerEqualOnly) {
  QuotaGraph g;
  const NodeId q = *g.add_node(
      queue("q", kNoNode, {cpu(2)}, pol(WithinQueuePolicy::kLowerOrNewerEqualPriority)));
  Env env(std::move(g));
  env.pend_cpu(1, q, 0, 1);  // older pending preemptor (seq 1)
  env.run_cpu(2, q, 0, 2);   // newer, equal priority (seq 2)
  env.pend_cpu(3, q, 0, 1);  // newer than 2
  EXPECT_EQ(victim_ids(env.plan(1)), (std::vector<WorkloadId>{2}));
  EXPECT_EQ(env.plan(3).outcome, PlanOutcome::kImpossible);
}

// The AWS Batch quota-share example (docs/quota-frontends.md), expressed as one cohort with three
// queues. The whole story through the scheduler is
// tests/unit/schedule/quota_share_example_test.cpp.
class AwsQuotaShareExample : public ::testing::Test {
 protected:
  void SetUp() override {
    g5_ = *registry_.intern("ml.g5.xlarge");
    QuotaGraph g;
    root_ = *g.add_node(cohort("gpu-queue"));
    qs1_ = *g.add_node(queue("QS1", root_, {quota(g5_, 1, 2)},
                             pol(WithinQueuePolicy::kLowerPriority, ReclaimPolicy::kAny)));
    qs2_ = *g.add_node(queue("QS2", root_, {quota(g5_, 1, 0)},
                             pol(WithinQueuePolicy::kNever, ReclaimPolicy::kAny)));
    qs3_ = *g.add_node(queue("QS3", root_, {quota(g5_, 1, 0, 0)},
                             pol(WithinQueuePolicy::kNever, ReclaimPolicy::kAny)));
    env_.emplace(std::move(g));
  }
  ResourceRegistry registry_;
  ResourceId g5_ = 0;
  NodeId root_ = 0, qs1_ = 0, qs2_ = 0, qs3_ = 0;
  std::optional<Env> env_;
};

TEST_F(AwsQuotaShareExample, MinRunTimeProtectsRecentlyStartedReclaimVictims) {
  Env& env = *env_;
  QuotaEngine& e = env.engine();
  env.run(1, qs1_, 3, g5_, 1);
  env.run(2, qs1_, 2, g5_, 1);  // borrows QS2's idle instance
  env.pend(3, qs2_, 1, g5_, 1);
  const PreemptionPlan early = e.plan_preemption(3, kT0 + seconds(30), minutes(10));
  EXPECT_EQ(early.outcome, PlanOutcome::kImpossible);
  EXPECT_EQ(e.plan_preemption(3, kT0 + minutes(11), minutes(10)).outcome, PlanOutcome::kPreempt);
}

}  // namespace
}  // namespace gf::quota
