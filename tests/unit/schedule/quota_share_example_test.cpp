// The AWS Batch quota-share example (docs/quota-frontends.md) told through the scheduler, the path
// production runs: one cohort with three shares; QS1 borrows QS2's idle instance, QS2 reclaims it,
// and raising a waiting QS1 job's priority displaces QS1's own running job (in-share).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "unit/schedule/quota_pool.h"

namespace gf::sched {
namespace {

using quota::NodeId;
using quota::PreemptionReason;
using quota::ReclaimPolicy;
using quota::WithinQueuePolicy;
using testing::QuotaPool;

const Time kT0 = from_micros(1'700'000'000'000'000);

quota::NodeSpec share(std::string name, NodeId parent, quota::ResourceQuota q,
                      WithinQueuePolicy within) {
  quota::NodeSpec s;
  s.name = std::move(name);
  s.parent = parent;
  s.quotas = {q};
  s.preemption.within_queue = within;
  s.preemption.reclaim = ReclaimPolicy::kAny;
  return s;
}

class QuotaShareExample : public ::testing::Test {
 protected:
  void SetUp() override {
    g5_ = *registry_.intern("ml.g5.xlarge");
    quota::QuotaGraph g;
    quota::NodeSpec cohort;
    cohort.name = "gpu-queue";
    cohort.kind = quota::NodeKind::kCohort;
    root_ = *g.add_node(cohort);
    // LEND_AND_BORROW with room to borrow 2, LEND, RESERVE (lends nothing).
    qs1_ = *g.add_node(
        share("QS1", root_, {g5_, 1, 2, std::nullopt}, WithinQueuePolicy::kLowerPriority));
    qs2_ = *g.add_node(share("QS2", root_, {g5_, 1, 0, std::nullopt}, WithinQueuePolicy::kNever));
    qs3_ = *g.add_node(share("QS3", root_, {g5_, 1, 0, 0}, WithinQueuePolicy::kNever));
    pool_.emplace(std::move(g));
  }
  ResourceVector one() const {
    ResourceVector v;
    v.set(g5_, 1);
    return v;
  }
  // The kPreempt actions of the last pass as (victim, preemptor, reason).
  std::vector<std::tuple<JobKey, JobKey, PreemptionReason>> preemptions() const {
    std::vector<std::tuple<JobKey, JobKey, PreemptionReason>> out;
    for (const Action& a : pool_->last().actions) {
      if (a.kind == ActionKind::kPreempt) out.emplace_back(a.job, a.other, a.reason);
    }
    return out;
  }
  ResourceRegistry registry_;
  ResourceId g5_ = 0;
  NodeId root_ = 0, qs1_ = 0, qs2_ = 0, qs3_ = 0;
  std::optional<QuotaPool> pool_;
};

TEST_F(QuotaShareExample, BorrowThenReclaimThenInSharePreemption) {
  enum : JobKey { kP3 = 1, kP2, kP1, kQs2Job };
  QuotaPool& pool = *pool_;
  pool.submit(kP3, qs1_, 3, one());
  pool.submit(kP2, qs1_, 2, one());
  pool.submit(kP1, qs1_, 1, one());
  EXPECT_EQ(pool.pass(kT0), (std::vector<JobKey>{kP3, kP2}));
  EXPECT_EQ(pool.engine().usage(qs1_).get(g5_), 2) << "p2 borrows QS2's idle instance";
  EXPECT_EQ(pool.engine().usage(qs3_).get(g5_), 0);
  const quota::FitResult waiting = pool.engine().fits(kP1);
  EXPECT_FALSE(waiting.fits) << "QS3 (RESERVE) never lends";
  EXPECT_EQ(waiting.node, root_);
  EXPECT_EQ(waiting.limit, quota::LimitKind::kCohortCapacity);
  EXPECT_EQ(waiting.shortfall, 1);
  EXPECT_TRUE(preemptions().empty()) << "p1 is QS1's lowest priority and would borrow";

  // Step 2: a QS2 job reclaims the instance QS1 borrows, in the same pass that admits it.
  pool.submit(kQs2Job, qs2_, 1, one());
  EXPECT_EQ(pool.pass(kT0 + seconds(60)), (std::vector<JobKey>{kQs2Job}));
  EXPECT_EQ(preemptions(), (std::vector<std::tuple<JobKey, JobKey, PreemptionReason>>{
                               {kP2, kQs2Job, PreemptionReason::kReclaim}}));
  EXPECT_EQ(pool.scheduler().explain(kP2, kT0 + seconds(60)).kind, WaitKind::kBackoff);

  // Step 3: raising the waiting p1 job to 4 displaces QS1's running p3 job (in-share). The pass
  // runs while p2 is still in its requeue backoff.
  ASSERT_TRUE(pool.scheduler().set_priority(kP1, 4).ok());
  EXPECT_EQ(pool.pass(kT0 + seconds(61)), (std::vector<JobKey>{kP1}));
  EXPECT_EQ(preemptions(), (std::vector<std::tuple<JobKey, JobKey, PreemptionReason>>{
                               {kP3, kP1, PreemptionReason::kInQueue}}));
  EXPECT_TRUE(pool.scheduler().admitted(kP1));
  EXPECT_TRUE(pool.scheduler().admitted(kQs2Job));
  EXPECT_FALSE(pool.scheduler().admitted(kP3));
  const Status inv = pool.scheduler().check_invariants();
  EXPECT_TRUE(inv.ok()) << inv.to_string();
}

}  // namespace
}  // namespace gf::sched
