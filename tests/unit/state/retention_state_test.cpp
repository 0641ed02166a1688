// Retention in the state (docs/operations.md "What is kept where"): retention.applied removes
// finished jobs and hands them to observers, drops whole chunks of old user events, and a state
// after retention snapshots and restores to the same hash.
#include <gtest/gtest.h>

#include "state/fleet_state.h"
#include "state/job_events.h"
#include "state/plane_events.h"

namespace gf {
namespace {

EventRecord rec(Seq seq, const Event& e, Time t) {
  return EventRecord{seq, e.type, e.payload_json().dump(), e.idempotency_key, t};
}

Job new_job(const std::string& id, uint64_t key) {
  Job j;
  j.id = id;
  j.key = key;
  j.name = "train-" + id;
  j.job_queue = "q";
  j.quota_share = "QS1";
  j.created_at = kSimEpoch;
  j.pod_sets.push_back(JobPodSet{"node", 1, Json::object(), "ml.g5.xlarge", true});
  return j;
}

class RetentionState : public ::testing::Test {
 protected:
  void apply(const Event& e, Time t) {
    ASSERT_TRUE(s.apply(rec(s.applied_seq() + 1, e, t)).ok()) << e.type;
  }
  void submit(const std::string& id, uint64_t key, Time t = kSimEpoch) {
    apply(job_events::to_event(job_events::Submitted{new_job(id, key)}), t);
  }
  void finish(const std::string& id, Time t) {
    apply(job_events::to_event(job_events::Finished{id, JobStatus::kSucceeded, "done"}), t);
  }
  Status retire(std::vector<std::string> ids, Time t, std::optional<Time> events_before = {}) {
    plane_events::RetentionApplied e{std::move(ids), events_before};
    return s.apply(rec(s.applied_seq() + 1, plane_events::to_event(e), t));
  }
  FleetState s;
};

TEST_F(RetentionState, FinishedJobsAreIndexedByWhenTheyStopped) {
  submit("a", 1);
  submit("b", 2);
  EXPECT_TRUE(s.finished_jobs().empty());
  finish("b", kSimEpoch + hours(2));
  finish("a", kSimEpoch + hours(3));
  ASSERT_EQ(s.finished_jobs().size(), 2u);
  EXPECT_EQ(*s.finished_jobs().begin(), std::make_pair(kSimEpoch + hours(2), uint64_t{2}));
}

TEST_F(RetentionState, RetiredJobLeavesTheStateAndIsHandedToObserversForOneEvent) {
  submit("a", 1);
  submit("b", 2);
  finish("a", kSimEpoch + hours(1));
  ASSERT_TRUE(retire({"a"}, kSimEpoch + days(8)).ok());
  EXPECT_EQ(s.view().job("a"), nullptr);
  EXPECT_NE(s.view().job("b"), nullptr) << "a job still running stays";
  EXPECT_TRUE(s.finished_jobs().empty());
  ASSERT_EQ(s.retired_jobs().size(), 1u);
  EXPECT_EQ(s.retired_jobs()[0]->id, "a");
  EXPECT_EQ(s.retired_jobs()[0]->status, JobStatus::kSucceeded);
  finish("b", kSimEpoch + days(8));
  EXPECT_TRUE(s.retired_jobs().empty()) << "only while the event that retired it is shown";
}

TEST_F(RetentionState, OnlyAFinishedJobIsRetired) {
  submit("a", 1);
  const Status st = retire({"a"}, kSimEpoch + days(8));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not finished"), std::string::npos) << st.message();
  EXPECT_FALSE(retire({"nope"}, kSimEpoch + days(8)).ok());
}

TEST_F(RetentionState, AWorkloadsNameIsFreedWhenItIsRetired) {
  Job w = new_job("w", 1);
  w.kind = "PyTorchJob";
  w.ns = "team-a";
  w.dispatch = Dispatch{};
  apply(job_events::to_event(job_events::Submitted{w}), kSimEpoch);
  ASSERT_NE(s.view().find_workload("PyTorchJob", "team-a", "train-w"), nullptr);
  finish("w", kSimEpoch + hours(1));
  ASSERT_TRUE(retire({"w"}, kSimEpoch + days(8)).ok());
  EXPECT_EQ(s.view().find_workload("PyTorchJob", "team-a", "train-w"), nullptr);
}

TEST_F(RetentionState, EventsBeforeDropsWholeChunksWhoseNewestIsOlder) {
  const size_t chunk = EventLog::kChunkSize;
  for (size_t i = 0; i < 2 * chunk + 10; ++i) {
    apply(record_event("Cluster", EventLevel::kInfo, "e" + std::to_string(i)),
          kSimEpoch + minutes(static_cast<int64_t>(i)));
  }
  const size_t before = s.view().events.size();
  // The first chunk's newest event is at minute chunk-1; a cutoff just past it drops that chunk,
  // and the second chunk (newest at 2*chunk-1) stays whole.
  ASSERT_TRUE(
      retire({}, kSimEpoch + days(1), kSimEpoch + minutes(static_cast<int64_t>(chunk))).ok());
  EXPECT_EQ(s.view().events.size(), before - chunk);
  EXPECT_EQ(s.view().events.at(0).description, "e" + std::to_string(chunk));
  // A cutoff at the newest event of a chunk keeps it (strictly older goes).
  ASSERT_TRUE(
      retire({}, kSimEpoch + days(1), kSimEpoch + minutes(static_cast<int64_t>(2 * chunk - 1)))
          .ok());
  EXPECT_EQ(s.view().events.size(), before - chunk);
}

TEST_F(RetentionState, AStateAfterRetentionRestoresFromItsSnapshotToTheSameHash) {
  submit("a", 1);
  submit("b", 2);
  finish("a", kSimEpoch + hours(1));
  ASSERT_TRUE(retire({"a"}, kSimEpoch + days(8)).ok());
  Result<FleetState> back = FleetState::from_json(s.to_json());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->hash(), s.hash());
  EXPECT_TRUE(back->finished_jobs().empty());
  finish("b", kSimEpoch + days(9));
  EXPECT_EQ(s.finished_jobs().size(), 1u);
}

TEST_F(RetentionState, ADeletedJobIsHandedToObserversAsRetired) {
  Job w = new_job("w", 1);
  w.kind = "PyTorchJob";
  w.ns = "team-a";
  w.dispatch = Dispatch{};
  apply(job_events::to_event(job_events::Submitted{w}), kSimEpoch);
  apply(job_events::to_event(job_events::Deleted{"w", "kubectl delete"}), kSimEpoch + hours(1));
  ASSERT_EQ(s.retired_jobs().size(), 1u);
  EXPECT_EQ(s.retired_jobs()[0]->id, "w");
}

}  // namespace
}  // namespace gf
