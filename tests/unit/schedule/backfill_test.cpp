// Reservation with backfill (docs/scheduling.md "Reservation and backfill"): a gang that cannot
// start reserves the nodes that free soonest; later jobs use reserved nodes only if they end
// before the reservation starts; the gang starts on them when the running jobs end.
#include <gtest/gtest.h>

#include "schedule/scheduler.h"
#include "unit/schedule/sched_fixtures.h"

namespace gf::sched {
namespace {

using testing::gpu_pod;
using testing::gpus;
using testing::node_capacity;

class BackfillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<Scheduler::NodeDesc> nodes;
    for (int i = 0; i < 7; ++i)
      nodes.push_back({"n" + std::to_string(i), "ml.p5.48xlarge", node_capacity(8), true});
    s.sync_cluster("a", nodes, {}, {});
  }

  // A gang of `pods` whole 8-GPU nodes, placement only (no quota), with a time limit or none.
  JobSpec gang(JobKey key, int32_t pods, std::optional<Duration> limit) {
    JobSpec spec;
    spec.key = key;
    spec.quota_managed = false;
    spec.creation_seq = key;
    spec.time_limit = limit;
    auto shape = std::make_shared<JobShape>();
    Alternative alt;
    alt.pods.push_back(PodSet{pods, gpu_pod(8), ""});
    alt.quota_request = gpus(8 * pods);
    shape->alternatives.push_back(alt);
    spec.shape = shape;
    return spec;
  }
  bool submit_and_pass(const JobSpec& spec, Time at) {
    EXPECT_TRUE(s.submit(spec).ok());
    s.schedule(at);
    EXPECT_TRUE(s.check_invariants().ok()) << s.check_invariants().message();
    return s.pods_placed(spec.key);
  }

  // Running: A (2 nodes, 1h) on n0-n1, C (2 nodes, 2h) on n2-n3, B (1 node, 3h) on n4; n5 and
  // n6 free. A 5-node gang fits once A and C have ended: it reserves n0-n3 and n5 from 2h.
  void running_fleet() {
    ASSERT_TRUE(submit_and_pass(gang(1, 2, hours(1)), t0));  // A
    ASSERT_TRUE(submit_and_pass(gang(2, 2, hours(2)), t0));  // C
    ASSERT_TRUE(submit_and_pass(gang(3, 1, hours(3)), t0));  // B
  }

  Scheduler s;
  Time t0 = Time{} + hours(1000);
};

TEST_F(BackfillTest, Reservation_StartsAtTheFewestEndsThatMakeRoom) {
  running_fleet();
  EXPECT_FALSE(submit_and_pass(gang(10, 5, hours(1)), t0));  // 2 nodes free
  const Reservation* r = s.reservation_of(10);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->start, t0 + hours(2));  // when C ends (A's end, at 1h, frees too few)
  EXPECT_EQ(r->nodes.size(), 5u);
  const WaitReason why = s.explain(10, t0);
  EXPECT_NE(why.message.find("5 nodes of cluster a are reserved for it"), std::string::npos)
      << why.message;
}

TEST_F(BackfillTest, Backfill_AJobThatWouldOverrunTheReservationIsNotStartedOnItsNodes) {
  running_fleet();
  EXPECT_FALSE(submit_and_pass(gang(10, 5, hours(1)), t0));
  const Reservation* r = s.reservation_of(10);
  ASSERT_NE(r, nullptr);
  // n6 is outside the reservation: a long job takes it.
  EXPECT_TRUE(submit_and_pass(gang(20, 1, hours(10)), t0));
  // n5 is reserved from 2h: a 10-hour job would overrun the reservation...
  EXPECT_FALSE(submit_and_pass(gang(21, 1, hours(10)), t0));
  EXPECT_NE(s.explain(21, t0).message.find("but only on nodes reserved for job 10"),
            std::string::npos)
      << s.explain(21, t0).message;
  // ...and so would a job with no time limit...
  EXPECT_FALSE(submit_and_pass(gang(22, 1, std::nullopt), t0));
  EXPECT_NE(s.explain(22, t0).message.find("has no time limit"), std::string::npos);
  // ...but a 90-minute job ends before it starts: backfilled.
  EXPECT_TRUE(submit_and_pass(gang(23, 1, minutes(90)), t0));
}

TEST_F(BackfillTest, Reservation_TheGangStartsWhenTheRunningJobsEnd) {
  running_fleet();
  EXPECT_FALSE(submit_and_pass(gang(10, 5, hours(1)), t0));
  EXPECT_TRUE(submit_and_pass(gang(23, 1, minutes(90)), t0));  // backfilled on a reserved node
  // At 1h30 the backfilled job and A are done (4 nodes free); at 2h C ends: the gang starts.
  ASSERT_TRUE(s.finish(1).ok());
  ASSERT_TRUE(s.finish(23).ok());
  s.schedule(t0 + minutes(90));
  EXPECT_FALSE(s.pods_placed(10));
  ASSERT_TRUE(s.finish(2).ok());
  s.schedule(t0 + hours(2));
  EXPECT_TRUE(s.pods_placed(10));
  EXPECT_EQ(s.reservation_of(10), nullptr);
  EXPECT_TRUE(s.check_invariants().ok());
}

TEST_F(BackfillTest, WithoutBackfill_SmallJobsTakeTheNodesTheGangWaitsFor) {
  SchedulerOptions o;
  o.backfill = false;
  s.set_options(o);
  running_fleet();
  EXPECT_FALSE(submit_and_pass(gang(10, 5, hours(1)), t0));
  EXPECT_EQ(s.reservation_of(10), nullptr);
  EXPECT_TRUE(submit_and_pass(gang(20, 1, hours(10)), t0));
  EXPECT_TRUE(submit_and_pass(gang(21, 1, hours(10)), t0));  // the gang now waits 10 hours
}

TEST_F(BackfillTest, RunningJobsWithoutTimeLimits_NoReservation) {
  ASSERT_TRUE(submit_and_pass(gang(1, 5, std::nullopt), t0));
  EXPECT_FALSE(submit_and_pass(gang(10, 3, hours(1)), t0));
  EXPECT_EQ(s.reservation_of(10), nullptr);  // nobody knows when a node frees
  EXPECT_TRUE(submit_and_pass(gang(20, 1, std::nullopt), t0));
}

TEST_F(BackfillTest, Reservation_DroppedWhenItsJobIsDeleted_BlockedJobsRunAgain) {
  running_fleet();
  EXPECT_FALSE(submit_and_pass(gang(10, 5, hours(1)), t0));
  EXPECT_TRUE(submit_and_pass(gang(20, 1, hours(10)), t0));
  EXPECT_FALSE(submit_and_pass(gang(21, 1, hours(10)), t0));
  ASSERT_TRUE(s.finish(10).ok());  // the waiting gang is deleted
  s.schedule(t0 + minutes(1));
  EXPECT_TRUE(s.pods_placed(21));
}

// A queue whose quota is the fleet's size: when the fleet is full a large gang waits on quota,
// not on nodes, and still reserves the nodes that free soonest (the quota comes back with them).
TEST_F(BackfillTest, QuotaBlockedGang_ReservesTooAndIsNotOvertakenByLongJobs) {
  quota::QuotaGraph g;
  quota::NodeSpec q;
  q.name = "q";
  q.kind = quota::NodeKind::kQueue;
  q.quotas.push_back({kGpu, 56, std::nullopt, std::nullopt});  // 7 nodes x 8 GPUs
  (void)*g.add_node(q);
  s.set_quota(std::move(g), [](JobKey) { return quota::kNoNode; });
  auto queued = [&](JobSpec spec) {
    spec.quota_managed = true;
    spec.queue = 0;
    return spec;
  };
  ASSERT_TRUE(submit_and_pass(queued(gang(1, 2, hours(1))), t0));
  ASSERT_TRUE(submit_and_pass(queued(gang(2, 2, hours(2))), t0));
  ASSERT_TRUE(submit_and_pass(queued(gang(3, 3, hours(3))), t0));  // the fleet is full
  EXPECT_FALSE(submit_and_pass(queued(gang(10, 4, hours(1))), t0));
  EXPECT_EQ(s.explain(10, t0).kind, WaitKind::kQuota);
  const Reservation* r = s.reservation_of(10);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->start, t0 + hours(2));  // A's and C's 4 nodes and 32 GPUs of quota
  EXPECT_NE(s.explain(10, t0).message.find("4 nodes of cluster a are reserved for it"),
            std::string::npos)
      << s.explain(10, t0).message;
  // A ends at 1h: a 10-hour job fits quota and nodes, but its nodes are reserved: it waits.
  ASSERT_TRUE(s.finish(1).ok());
  EXPECT_FALSE(submit_and_pass(queued(gang(20, 1, hours(10))), t0 + hours(1)));
  // C ends at 2h: the gang starts on its reservation.
  ASSERT_TRUE(s.finish(2).ok());
  s.schedule(t0 + hours(2));
  EXPECT_TRUE(s.pods_placed(10));
  EXPECT_TRUE(s.check_invariants().ok());
}

}  // namespace
}  // namespace gf::sched
