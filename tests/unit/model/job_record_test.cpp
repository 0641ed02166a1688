// The job record's canonical JSON (snapshots) and its waiting reason (docs/scheduling.md "Why a
// job waits").
#include <gtest/gtest.h>

#include "model/job.h"

namespace gf {
namespace {

JobWait quota_wait() {
  JobWait w;
  w.kind = "Quota";
  w.reason = "QuotaExceeded";
  w.message = "waiting for quota: QS1 borrowing limit on ml.g5.xlarge: requested 1, available 0";
  w.node = "QS1";
  w.limit = "borrowing limit";
  w.resource = "ml.g5.xlarge";
  w.requested = 1;
  w.shortfall = 1;
  w.since = from_micros(1'767'225'600'000'000);
  return w;
}

TEST(JobRecord, WaitingReasonRoundTripsThroughTheSnapshotForm) {
  Job j;
  j.id = "j1";
  j.key = 1;
  j.name = "train";
  j.waiting = quota_wait();
  auto back = Job::from_json(j.to_json());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, j);
}

TEST(JobRecord, RecordWithoutWaitingKeepsItsOldSerialization) {
  Job j;
  j.id = "j1";
  EXPECT_FALSE(j.to_json().contains("waiting")) << "absent, so old snapshots hash the same";
  auto back = Job::from_json(j.to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->waiting.has_value());
}

TEST(JobRecord, MalformedWaitingIsAnErrorNotADefault) {
  Json w = quota_wait().to_json();
  w.erase("shortfall");
  EXPECT_FALSE(JobWait::from_json(w).ok());
  w = quota_wait().to_json();
  w["requested"] = "one";
  EXPECT_FALSE(JobWait::from_json(w).ok());
}

TEST(JobRecord, SameReasonIgnoresSinceButNotTheNumbers) {
  JobWait a = quota_wait();
  JobWait b = a;
  b.since = a.since + minutes(5);
  EXPECT_TRUE(a.same_as(b));
  b.available = 1;
  EXPECT_FALSE(a.same_as(b));
}

// A straggler (docs/scenarios.md "Failures"): a run slowed 1.25 times from 2h into its 10 h of
// work finishes (10 - 2) * 0.25 = 2 h late; a closed slow stretch costs its share of wall time;
// both survive the snapshot form.
TEST(JobRunPace, ASlowStretchMovesTheCompletionByItsLostTimeAndRoundTrips) {
  const Time t0 = from_micros(1'767'225'600'000'000);
  Job j;
  j.id = "j1";
  j.key = 1;
  j.name = "train";
  j.status = JobStatus::kRunning;
  j.duration = hours(10);
  j.started_at = t0;
  JobRun run;
  run.start = t0;
  j.runs.push_back(run);
  EXPECT_EQ(j.completion_time(), t0 + hours(10));
  j.runs[0].slow_since = t0 + hours(2);
  j.runs[0].slow_factor = 1.25;
  EXPECT_EQ(j.completion_time(), t0 + hours(12));
  EXPECT_EQ(j.runs[0].slow_loss(t0 + hours(6)), hours(4) / 5);  // 4 h at 0.8 of the pace
  auto back = Job::from_json(j.to_json());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, j);
  // Back to speed at 6h: 48 min lost, the rest at full pace.
  j.runs[0].slowed = j.runs[0].slow_loss(t0 + hours(6));
  j.runs[0].slow_since.reset();
  j.runs[0].slow_factor = 1;
  EXPECT_EQ(j.completion_time(), t0 + hours(10) + minutes(48));
}

}  // namespace
}  // namespace gf
