// Admission order: queueing strategies, cross-queue order, no over-admission within one pass,
// and a deterministic decision log (docs/scheduling.md).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quota/quota_engine.h"

namespace gf::quota {
namespace {

constexpr int64_t kCpuUnit = 1000;
const Time kT0 = from_micros(1'700'000'000'000'000);

NodeSpec node(std::string name, NodeKind kind, NodeId parent, int64_t nominal_cpus,
              QueueingStrategy queueing = QueueingStrategy::kBestEffortFifo) {
  NodeSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.parent = parent;
  if (kind == NodeKind::kQueue) s.quotas = {ResourceQuota{kCpu, nominal_cpus * kCpuUnit, {}, {}}};
  s.queueing = queueing;
  return s;
}
Workload job(WorkloadId id, NodeId q, int32_t priority, uint64_t seq, int64_t cpus) {
  Workload w;
  w.id = id;
  w.queue = q;
  w.priority = priority;
  w.creation_seq = seq;
  w.request.set(kCpu, cpus * kCpuUnit);
  return w;
}

QuotaEngine fifo_engine(QueueingStrategy strategy, NodeId* q, DecisionLog* log) {
  QuotaGraph g;
  *q = *g.add_node(node("q", NodeKind::kQueue, kNoNode, 4, strategy));
  QuotaEngine e(std::move(g), log);
  EXPECT_TRUE(e.add_workload(job(1, *q, 0, 1, 2)).ok());
  EXPECT_TRUE(e.admit(1, kT0).ok());
  EXPECT_TRUE(e.add_workload(job(2, *q, 0, 2, 3)).ok());  // older head, does not fit
  EXPECT_TRUE(e.add_workload(job(3, *q, 0, 3, 1)).ok());  // newer, fits
  return e;
}

// (f) StrictFIFO: an older head that does not fit blocks newer ones; BestEffortFIFO skips it.
TEST(QueueingStrategy, StrictFifoHeadBlocksNewerWorkloadsBestEffortSkipsIt) {
  NodeId q;
  DecisionLog strict_log;
  QuotaEngine strict = fifo_engine(QueueingStrategy::kStrictFifo, &q, &strict_log);
  EXPECT_EQ(strict.next_admissible(q), std::nullopt);
  EXPECT_TRUE(strict.admission_pass(kT0).empty());
  ASSERT_FALSE(strict_log.entries().empty());
  EXPECT_EQ(strict_log.entries().back().kind, DecisionKind::kBlocked);
  EXPECT_EQ(strict_log.entries().back().other, 2u);

  QuotaEngine best = fifo_engine(QueueingStrategy::kBestEffortFifo, &q, nullptr);
  EXPECT_EQ(best.next_admissible(q), 3u);
  EXPECT_EQ(best.admission_pass(kT0), (std::vector<WorkloadId>{3}));
}

TEST(QueueingStrategy, QueueOrderIsPriorityThenCreation) {
  QuotaGraph g;
  const NodeId q = *g.add_node(node("q", NodeKind::kQueue, kNoNode, 1));
  QuotaEngine e(std::move(g));
  ASSERT_TRUE(e.add_workload(job(1, q, 0, 1, 1)).ok());
  ASSERT_TRUE(e.add_workload(job(2, q, 5, 3, 1)).ok());
  ASSERT_TRUE(e.add_workload(job(3, q, 5, 2, 1)).ok());
  EXPECT_EQ(e.pending_order(q), (std::vector<WorkloadId>{3, 2, 1}));
  EXPECT_EQ(e.admission_pass(kT0), (std::vector<WorkloadId>{3}));
}

TEST(AdmissionPass, NoOverAdmissionWhenJobsFitAloneButNotTogether) {
  QuotaGraph g;
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, kNoNode, 0));
  const NodeId a = *g.add_node(node("a", NodeKind::kQueue, root, 2));
  const NodeId b = *g.add_node(node("b", NodeKind::kQueue, root, 2));
  QuotaEngine e(std::move(g));
  ASSERT_TRUE(e.add_workload(job(1, a, 0, 1, 3)).ok());
  ASSERT_TRUE(e.add_workload(job(2, b, 0, 2, 3)).ok());
  ASSERT_TRUE(e.add_workload(job(3, a, 0, 3, 3)).ok());
  EXPECT_TRUE(e.fits(1).fits);
  EXPECT_TRUE(e.fits(2).fits);
  EXPECT_EQ(e.admission_pass(kT0), (std::vector<WorkloadId>{1}));
  EXPECT_EQ(e.usage(root).get(kCpu), 3 * kCpuUnit);
  EXPECT_FALSE(e.fits(2).fits);
}

TEST(AdmissionPass, NonBorrowingBeforeBorrowingThenPriority) {
  QuotaGraph g;
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, kNoNode, 0));
  const NodeId a = *g.add_node(node("a", NodeKind::kQueue, root, 2));
  const NodeId b = *g.add_node(node("b", NodeKind::kQueue, root, 2));
  QuotaEngine e(std::move(g));
  ASSERT_TRUE(e.add_workload(job(1, a, 9, 1, 3)).ok());  // high priority but borrows
  ASSERT_TRUE(e.add_workload(job(2, b, 0, 2, 2)).ok());  // fits within b's nominal
  EXPECT_EQ(e.admission_pass(kT0), (std::vector<WorkloadId>{2}));
  const FitResult waiting = e.fits(1);
  EXPECT_EQ(waiting.limit, LimitKind::kCohortCapacity);
  EXPECT_EQ(waiting.shortfall, 1 * kCpuUnit);
}

// Runs a fixed mix of admissions, passes, preemption plans, evictions and releases.
uint64_t scripted_run_hash(int variant) {
  DecisionLog log;
  QuotaGraph g;
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, kNoNode, 0));
  NodeSpec a_spec = node("a", NodeKind::kQueue, root, 4);
  a_spec.preemption.within_queue = WithinQueuePolicy::kLowerPriority;
  a_spec.preemption.reclaim = ReclaimPolicy::kAny;
  const NodeId a = *g.add_node(a_spec);
  const NodeId b = *g.add_node(node("b", NodeKind::kQueue, root, 4));
  QuotaEngine e(std::move(g), &log);
  uint64_t seq = 0;
  for (WorkloadId id = 1; id <= 6; ++id) {
    EXPECT_TRUE(
        e.add_workload(job(id, id % 2 ? b : a, static_cast<int32_t>(id % 3), ++seq, 2)).ok());
  }
  e.admission_pass(kT0);
  EXPECT_TRUE(e.add_workload(job(7, a, 5, ++seq, 4 + variant)).ok());
  const PreemptionPlan plan = e.plan_preemption(7, kT0 + seconds(10));
  for (const Victim& v : plan.victims) EXPECT_TRUE(e.evict(v.id).ok());
  e.admission_pass(kT0 + seconds(20));
  EXPECT_TRUE(e.release(1).ok());
  e.admission_pass(kT0 + seconds(30));
  EXPECT_FALSE(log.entries().empty());
  return log.hash();
}

TEST(DecisionLog, SameOperationsGiveSameHash) {
  EXPECT_EQ(scripted_run_hash(0), scripted_run_hash(0));
  EXPECT_NE(scripted_run_hash(0), scripted_run_hash(1));
}

}  // namespace
}  // namespace gf::quota
