// Admission order on the path production runs (Scheduler::schedule): queueing strategies, the
// order within and across queues, no over-admission within one pass, and a deterministic decision
// log (docs/scheduling.md "One pass"). Placement never constrains these tests (QuotaPool).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "unit/schedule/quota_pool.h"

namespace gf::sched {
namespace {

using quota::NodeId;
using quota::NodeKind;
using quota::NodeSpec;
using quota::QueueingStrategy;
using quota::QuotaGraph;
using testing::QuotaPool;

constexpr int64_t kCpuUnit = 1000;
const Time kT0 = from_micros(1'700'000'000'000'000);

NodeSpec node(std::string name, NodeKind kind, NodeId parent, int64_t nominal_cpus,
              QueueingStrategy queueing = QueueingStrategy::kBestEffortFifo) {
  NodeSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.parent = parent;
  if (kind == NodeKind::kQueue) {
    s.quotas = {quota::ResourceQuota{kCpu, nominal_cpus * kCpuUnit, {}, {}}};
  }
  s.queueing = queueing;
  return s;
}
ResourceVector cpus(int64_t n) {
  ResourceVector v;
  v.set(kCpu, n * kCpuUnit);
  return v;
}

// One queue of 4 CPUs: job 1 (2 CPUs) runs; job 2 (3 CPUs, the older head) does not fit; job 3
// (1 CPU, newer) does.
std::unique_ptr<QuotaPool> fifo_pool(QueueingStrategy strategy, NodeId* q) {
  QuotaGraph g;
  *q = *g.add_node(node("q", NodeKind::kQueue, quota::kNoNode, 4, strategy));
  auto pool = std::make_unique<QuotaPool>(std::move(g));
  pool->submit(1, *q, 0, cpus(2));
  EXPECT_EQ(pool->pass(kT0), std::vector<JobKey>{1});
  pool->submit(2, *q, 0, cpus(3));
  pool->submit(3, *q, 0, cpus(1));
  return pool;
}

TEST(QueueingStrategy, StrictFifoHeadBlocksNewerJobsBestEffortSkipsIt) {
  NodeId q;
  std::unique_ptr<QuotaPool> strict = fifo_pool(QueueingStrategy::kStrictFifo, &q);
  EXPECT_TRUE(strict->pass(kT0 + seconds(1)).empty());
  EXPECT_EQ(strict->scheduler().explain(2, kT0).kind, WaitKind::kQuota);
  const WaitReason behind = strict->scheduler().explain(3, kT0);
  EXPECT_EQ(behind.kind, WaitKind::kStrictFifo) << behind.message;
  EXPECT_NE(behind.message.find("its head, job 2,"), std::string::npos) << behind.message;

  std::unique_ptr<QuotaPool> best = fifo_pool(QueueingStrategy::kBestEffortFifo, &q);
  EXPECT_EQ(best->pass(kT0 + seconds(1)), std::vector<JobKey>{3});
  EXPECT_EQ(best->scheduler().explain(2, kT0).kind, WaitKind::kQuota);
}

TEST(QueueingStrategy, QueueOrderIsPriorityThenCreation) {
  QuotaGraph g;
  const NodeId q = *g.add_node(node("q", NodeKind::kQueue, quota::kNoNode, 1));
  QuotaPool pool(std::move(g));
  pool.submit(1, q, 0, cpus(1), /*seq=*/1);
  pool.submit(2, q, 5, cpus(1), /*seq=*/3);
  pool.submit(3, q, 5, cpus(1), /*seq=*/2);
  // One CPU: each pass admits the head alone, so the passes read out the queue order.
  std::vector<JobKey> order;
  for (int i = 0; i < 3; ++i) {
    const std::vector<JobKey> admitted = pool.pass(kT0 + seconds(i));
    ASSERT_EQ(admitted.size(), 1u) << "pass " << i;
    order.push_back(admitted[0]);
    ASSERT_TRUE(pool.scheduler().finish(admitted[0]).ok());
  }
  EXPECT_EQ(order, (std::vector<JobKey>{3, 2, 1}));
}

TEST(AdmissionPass, NoOverAdmissionWhenJobsFitAloneButNotTogether) {
  QuotaGraph g;
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, quota::kNoNode, 0));
  const NodeId a = *g.add_node(node("a", NodeKind::kQueue, root, 2));
  const NodeId b = *g.add_node(node("b", NodeKind::kQueue, root, 2));
  QuotaPool pool(std::move(g));
  pool.submit(1, a, 0, cpus(3));
  pool.submit(2, b, 0, cpus(3));
  pool.submit(3, a, 0, cpus(3));
  EXPECT_TRUE(pool.engine().fits(1).fits);
  EXPECT_TRUE(pool.engine().fits(2).fits);
  EXPECT_EQ(pool.pass(kT0), std::vector<JobKey>{1});
  EXPECT_EQ(pool.engine().usage(root).get(kCpu), 3 * kCpuUnit);
  EXPECT_FALSE(pool.engine().fits(2).fits);
  EXPECT_EQ(pool.scheduler().explain(2, kT0).kind, WaitKind::kQuota);
}

TEST(AdmissionPass, NonBorrowingBeforeBorrowingThenPriority) {
  QuotaGraph g;
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, quota::kNoNode, 0));
  const NodeId a = *g.add_node(node("a", NodeKind::kQueue, root, 2));
  const NodeId b = *g.add_node(node("b", NodeKind::kQueue, root, 2));
  QuotaPool pool(std::move(g));
  pool.submit(1, a, 9, cpus(3));  // high priority but borrows
  pool.submit(2, b, 0, cpus(2));  // fits within b's nominal
  EXPECT_EQ(pool.pass(kT0), std::vector<JobKey>{2});
  const quota::FitResult waiting = pool.engine().fits(1);
  EXPECT_EQ(waiting.limit, quota::LimitKind::kCohortCapacity);
  EXPECT_EQ(waiting.shortfall, 1 * kCpuUnit);
  const WaitReason why = pool.scheduler().explain(1, kT0);
  EXPECT_EQ(why.kind, WaitKind::kQuota);
  EXPECT_EQ(why.shortfall, 1 * kCpuUnit);
}

// A fixed mix of submissions, passes with preemption, and a finished job.
uint64_t scripted_run_hash(int variant) {
  QuotaGraph g;
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, quota::kNoNode, 0));
  NodeSpec a_spec = node("a", NodeKind::kQueue, root, 4);
  a_spec.preemption.within_queue = quota::WithinQueuePolicy::kLowerPriority;
  a_spec.preemption.reclaim = quota::ReclaimPolicy::kAny;
  const NodeId a = *g.add_node(a_spec);
  const NodeId b = *g.add_node(node("b", NodeKind::kQueue, root, 4));
  QuotaPool pool(std::move(g));
  for (JobKey id = 1; id <= 6; ++id) {
    pool.submit(id, id % 2 ? b : a, static_cast<int32_t>(id % 3), cpus(2));
  }
  EXPECT_FALSE(pool.pass(kT0).empty());
  pool.submit(7, a, 5, cpus(4 + variant));
  pool.pass(kT0 + seconds(10));
  size_t preempted = 0;
  for (const Action& act : pool.last().actions) preempted += act.kind == ActionKind::kPreempt;
  // Variant 0: job 7 (4 CPUs) displaces a's lower-priority jobs; variant 1 (5 CPUs) is above a's
  // nominal and borrowing needs b's idle CPUs, which b's running jobs hold: no preemption.
  EXPECT_EQ(preempted > 0, variant == 0) << "variant " << variant;
  EXPECT_TRUE(pool.scheduler().finish(1).ok());
  pool.pass(kT0 + seconds(30));
  EXPECT_FALSE(pool.scheduler().log().entries().empty());
  const Status inv = pool.scheduler().check_invariants();
  EXPECT_TRUE(inv.ok()) << inv.to_string();
  return pool.scheduler().decision_hash();
}

TEST(DecisionLog, SameOperationsGiveSameHash) {
  EXPECT_EQ(scripted_run_hash(0), scripted_run_hash(0));
  EXPECT_NE(scripted_run_hash(0), scripted_run_hash(1));
}

}  // namespace
}  // namespace gf::sched
