// The retention controller's rules (docs/operations.md "What is kept where"): a finished job leaves
// the hot state once its retention passed and not before, a backlog goes a bounded number per
// event, old user events go by whole chunks, and the controller wakes when the next is due.
#include "retention/retention_controller.h"

#include <gtest/gtest.h>

#include "state/job_events.h"
#include "state/plane_events.h"

namespace gf {
namespace {

class Retention : public ::testing::Test {
 protected:
  void apply(const Event& e, Time t) {
    EventRecord r{s.applied_seq() + 1, e.type, e.payload_json().dump(), "", t};
    ASSERT_TRUE(s.apply(r).ok()) << e.type;
  }
  void finished_job(const std::string& id, uint64_t key, Time stopped) {
    Job j;
    j.id = id;
    j.key = key;
    j.name = id;
    j.created_at = kSimEpoch;
    apply(job_events::to_event(job_events::Submitted{j}), kSimEpoch);
    apply(job_events::to_event(job_events::Finished{id, JobStatus::kFailed, "x"}), stopped);
  }
  plane_events::RetentionApplied decided(const ControllerDecision& d) {
    EXPECT_EQ(d.events.size(), 1u);
    auto e = plane_events::decode<plane_events::RetentionApplied>(d.events.at(0).payload);
    EXPECT_TRUE(e.ok());
    return *e;
  }
  FleetState s;
};

TEST_F(Retention, AFinishedJobIsRetiredWhenItsRetentionPassedAndNotBefore) {
  finished_job("a", 1, kSimEpoch + hours(1));
  RetentionController c(RetentionOptions{});  // 7 d
  const Time due = kSimEpoch + hours(1) + days(7);
  ControllerDecision early = c.decide(s, due - Duration(1));
  EXPECT_TRUE(early.events.empty());
  ASSERT_TRUE(early.wake_at.has_value());
  EXPECT_EQ(*early.wake_at, due);
  EXPECT_EQ(decided(c.decide(s, due)).jobs, std::vector<std::string>{"a"});
}

TEST_F(Retention, ABacklogIsRetiredAtMostMaxJobsPerEventOldestFirst) {
  for (uint64_t k = 1; k <= 5; ++k)
    finished_job("j" + std::to_string(k), k, kSimEpoch + minutes(static_cast<int64_t>(10 - k)));
  RetentionOptions o;
  o.max_jobs_per_event = 2;
  RetentionController c(o);
  const Time now = kSimEpoch + days(30);
  ControllerDecision d = c.decide(s, now);
  EXPECT_EQ(decided(d).jobs, (std::vector<std::string>{"j5", "j4"}));
  EXPECT_EQ(d.wake_at, now) << "the rest in the next batch";
}

TEST_F(Retention, ShorterRetentionRetiresSooner) {
  finished_job("a", 1, kSimEpoch);
  RetentionOptions o;
  o.job_retention = hours(1);
  RetentionController c(o);
  EXPECT_TRUE(c.decide(s, kSimEpoch + minutes(59)).events.empty());
  EXPECT_EQ(decided(c.decide(s, kSimEpoch + hours(1))).jobs, std::vector<std::string>{"a"});
}

TEST_F(Retention, OldUserEventsGoOnceAWholeChunkIsOlderThanTheirRetention) {
  for (size_t i = 0; i < EventLog::kChunkSize + 1; ++i)
    apply(record_event("Cluster", EventLevel::kInfo, "e"),
          kSimEpoch + seconds(static_cast<int64_t>(i)));
  RetentionController c(RetentionOptions{});
  const Time newest_of_first = kSimEpoch + seconds(static_cast<int64_t>(EventLog::kChunkSize - 1));
  ControllerDecision early = c.decide(s, newest_of_first + days(7));
  EXPECT_TRUE(early.events.empty()) << "not strictly older yet";
  EXPECT_EQ(early.wake_at, newest_of_first + days(7) + Duration(1));
  const Time now = newest_of_first + days(7) + Duration(1);
  plane_events::RetentionApplied e = decided(c.decide(s, now));
  EXPECT_TRUE(e.jobs.empty());
  EXPECT_EQ(e.events_before, now - days(7));
}

TEST_F(Retention, NothingDueDecidesNothingAndSleeps) {
  RetentionController c(RetentionOptions{});
  ControllerDecision d = c.decide(s, kSimEpoch);
  EXPECT_TRUE(d.events.empty());
  EXPECT_FALSE(d.wake_at.has_value());
}

}  // namespace
}  // namespace gf
