#include "loop/control_loop.h"

#include <gtest/gtest.h>

#include <sqlite3.h>

#include <thread>

#include "journal/observed/observed_journal.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "state/job_events.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::TempDir;

Request note_request(std::string text, std::string key = "") {
  Request r;
  r.name = "Note";
  r.idempotency_key = std::move(key);
  r.handle = [text](const FleetState& s, Time) -> Result<Decision> {
    Decision d;
    d.events.push_back(record_event("Test", EventLevel::kInfo, text));
    d.response = Json{{"SeenSeq", s.applied_seq()}};
    return d;
  };
  return r;
}

Request rejected_request() {
  Request r;
  r.name = "Bad";
  r.handle = [](const FleetState&, Time) -> Result<Decision> {
    return validation_error("InstanceCount: must be >= 0, got -1");
  };
  return r;
}

// Records "tick" every 5 minutes of (virtual) time.
class TickController : public Controller {
 public:
  std::string_view name() const override { return "tick"; }
  ControllerDecision decide(const FleetState&, Time now) override {
    ControllerDecision d;
    if (!next_) next_ = now + minutes(5);
    if (now >= *next_) {
      d.events.push_back(record_event("Test", EventLevel::kInfo, "tick"));
      *next_ += minutes(5);
    }
    d.wake_at = next_;
    return d;
  }

 private:
  std::optional<Time> next_;
};

// Asks the "fake" driver to do work once, when the state shows a "please" event.
class AskController : public Controller {
 public:
  std::string_view name() const override { return "ask"; }
  ControllerDecision decide(const FleetState& s, Time) override {
    ControllerDecision d;
    const auto& log = s.view().events;
    if (!asked_ && log.size() > 0 && log.at(log.size() - 1).description == "please") {
      asked_ = true;
      d.intents.push_back(Intent{"fake", "work", Json{{"n", 1}}});
    }
    return d;
  }

 private:
  bool asked_ = false;
};

// Completes work 2 virtual minutes later by reporting back through the loop.
class FakeDriver : public Driver {
 public:
  FakeDriver(ControlLoop& loop, VirtualClock& clock) : loop_(loop), clock_(clock) {}
  void execute(const Intent& intent) override {
    executed_at = clock_.now();
    seen_kind = intent.kind;
    clock_.schedule_in(minutes(2), [this] { loop_.submit(note_request("done")); });
  }
  std::optional<Time> executed_at;
  std::string seen_kind;

 private:
  ControlLoop& loop_;
  VirtualClock& clock_;
};

class FailingJournal : public Journal {
 public:
  explicit FailingJournal(Journal& inner) : inner_(inner) {}
  Result<AppendResult> append(std::span<const NewEvent> batch) override {
    if (fail) return internal_error("disk I/O error");
    return inner_.append(batch);
  }
  Status replay(Seq after, const std::function<Status(const EventRecord&)>& fn) override {
    return inner_.replay(after, fn);
  }
  Result<Seq> last_seq() override { return inner_.last_seq(); }
  Result<std::optional<Seq>> find_key(const std::string& key) override {
    return inner_.find_key(key);
  }
  Status save_snapshot(const Snapshot& s) override { return inner_.save_snapshot(s); }
  Result<std::optional<Snapshot>> latest_snapshot() override { return inner_.latest_snapshot(); }
  bool fail = false;

 private:
  Journal& inner_;
};

class ControlLoopTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }
  void open(LoopOptions opts = {}) {
    loop_.reset();
    journal_.reset();
    auto j = SqliteJournal::open(dir_.file("journal.db"));
    ASSERT_TRUE(j.ok()) << j.status().to_string();
    journal_ = std::move(j).value();
    loop_ = std::make_unique<ControlLoop>(opts, clock_, *journal_, metrics_);
    ASSERT_TRUE(loop_->recover().ok());
  }

  TempDir dir_;
  VirtualClock clock_;
  Metrics metrics_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<ControlLoop> loop_;
};

TEST_F(ControlLoopTest, RequestIsAcknowledgedOnlyAfterItsEventsAreJournaled) {
  auto f = loop_->submit(note_request("hello"));
  EXPECT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  loop_->drain();
  Outcome o = f.get();
  ASSERT_TRUE(o.status.ok()) << o.status.to_string();
  EXPECT_EQ(o.seq, 1);
  EXPECT_EQ(*journal_->last_seq(), 1);
  EXPECT_EQ(loop_->view()->applied_seq, 1);
  EXPECT_EQ(loop_->view()->events.at(0).description, "hello");
}

TEST_F(ControlLoopTest, RejectedRequestChangesNothing) {
  const uint64_t before = loop_->state().hash();
  auto f = loop_->submit(rejected_request());
  loop_->drain();
  Outcome o = f.get();
  EXPECT_EQ(o.status.code(), ErrorCode::kValidation);
  EXPECT_EQ(o.status.message(), "InstanceCount: must be >= 0, got -1");
  EXPECT_EQ(*journal_->last_seq(), 0);
  EXPECT_EQ(loop_->state().hash(), before);
}

// ?dryRun=All / --dry-run=server: the request is validated and answered, and nothing changes.
TEST_F(ControlLoopTest, ADryRunIsValidatedAndAnsweredButChangesNothing) {
  const uint64_t before = loop_->state().hash();
  Request ok = note_request("would be recorded", "dry-key");
  ok.dry_run = true;
  Request bad = rejected_request();
  bad.dry_run = true;
  auto a = loop_->submit(std::move(ok));
  auto b = loop_->submit(std::move(bad));
  loop_->drain();
  Outcome oa = a.get(), ob = b.get();
  ASSERT_TRUE(oa.status.ok()) << oa.status.to_string();
  EXPECT_EQ(oa.response["SeenSeq"], 0);
  EXPECT_EQ(ob.status.code(), ErrorCode::kValidation);
  EXPECT_EQ(*journal_->last_seq(), 0);
  EXPECT_EQ(loop_->state().hash(), before);
  EXPECT_FALSE(journal_->find_key("dry-key")->has_value());  // the key stays free
}

TEST_F(ControlLoopTest, OneBatchIsOneJournalTransactionAndRequestsSeeEarlierOnes) {
  auto a = loop_->submit(note_request("a"));
  auto b = loop_->submit(note_request("b"));
  auto c = loop_->submit(rejected_request());
  auto d = loop_->submit(note_request("d"));
  EXPECT_EQ(loop_->drain(), 1u);
  EXPECT_EQ(a.get().response["SeenSeq"], 0);
  EXPECT_EQ(b.get().response["SeenSeq"], 1);
  EXPECT_FALSE(c.get().status.ok());
  EXPECT_EQ(d.get().response["SeenSeq"], 2);
  EXPECT_EQ(metrics_.append_latency.count(), 1u);
  EXPECT_EQ(metrics_.events_appended.value(), 3u);
  EXPECT_EQ(*journal_->last_seq(), 3);
}

TEST_F(ControlLoopTest, IdempotencyKeyRepeatReturnsTheOriginalSeqAndWritesNothing) {
  auto first = loop_->submit(note_request("x", "req-1"));
  auto same_batch = loop_->submit(note_request("x", "req-1"));
  loop_->drain();
  auto later = loop_->submit(note_request("x", "req-1"));
  loop_->drain();
  Outcome o1 = first.get(), o2 = same_batch.get(), o3 = later.get();
  EXPECT_FALSE(o1.duplicate);
  EXPECT_TRUE(o2.duplicate);
  EXPECT_TRUE(o3.duplicate);
  EXPECT_EQ(o2.seq, o1.seq);
  EXPECT_EQ(o3.seq, o1.seq);
  EXPECT_EQ(*journal_->last_seq(), 1);
  EXPECT_EQ(journal_->find_key("req-1")->value_or(0), o1.seq);
}

TEST_F(ControlLoopTest, ControllerWakesAtItsVirtualTimes) {
  TickController tick;
  loop_->add_controller(&tick);
  VirtualRunner runner(*loop_, clock_);
  runner.run_for(hours(3));
  const auto view = loop_->view();
  ASSERT_EQ(view->events.size(), 36u);  // every 5 minutes for 3 hours
  for (size_t i = 0; i < view->events.size(); ++i) {
    EXPECT_EQ(view->events.at(i).time, kSimEpoch + minutes(5) * static_cast<int64_t>(i + 1));
  }
  EXPECT_EQ(clock_.now(), kSimEpoch + hours(3));
}

TEST_F(ControlLoopTest, IntentsReachDriversAfterCommitAndResultsComeBackAsRequests) {
  AskController ask;
  FakeDriver driver(*loop_, clock_);
  loop_->add_controller(&ask);
  loop_->add_driver("fake", &driver);
  VirtualRunner runner(*loop_, clock_);
  runner.run_for(minutes(1));
  loop_->submit(note_request("please"));
  runner.run_for(minutes(10));
  ASSERT_TRUE(driver.executed_at.has_value());
  EXPECT_EQ(*driver.executed_at, kSimEpoch + minutes(1));
  EXPECT_EQ(driver.seen_kind, "work");
  const auto view = loop_->view();
  ASSERT_EQ(view->events.size(), 2u);
  EXPECT_EQ(view->events.at(1).description, "done");
  EXPECT_EQ(view->events.at(1).time, kSimEpoch + minutes(3));
}

TEST_F(ControlLoopTest, RestartRebuildsAnIdenticalStateFromSnapshotAndReplay) {
  LoopOptions opts;
  opts.snapshot_every_events = 25;
  open(opts);
  for (int i = 0; i < 110; ++i) {
    loop_->submit(note_request("n" + std::to_string(i), i % 3 == 0 ? "k" + std::to_string(i) : ""));
    if (i % 7 == 0) loop_->drain();
  }
  loop_->drain();
  for (int i = 0; i < 3; ++i) {  // fewer than snapshot_every: these must come from replay
    loop_->submit(note_request("tail"));
    loop_->drain();
  }
  const uint64_t hash = loop_->state().hash();
  const Seq seq = loop_->state().applied_seq();
  auto snap = journal_->latest_snapshot();
  ASSERT_TRUE(snap.ok() && snap->has_value());
  EXPECT_GT((*snap)->seq, 0);
  EXPECT_LT((*snap)->seq, seq);  // recovery needs snapshot + replay

  open(opts);
  EXPECT_EQ(loop_->state().applied_seq(), seq);
  EXPECT_EQ(loop_->state().hash(), hash);

  // Same result from the journal alone (no snapshot), the slow path.
  FleetState replayed;
  ASSERT_TRUE(journal_->replay(0, [&](const EventRecord& r) { return replayed.apply(r); }).ok());
  EXPECT_EQ(replayed.hash(), hash);
}

TEST_F(ControlLoopTest, JournalFailureStopsTheLoopAndFailsWaitingRequests) {
  FailingJournal failing(*journal_);
  ControlLoop loop({}, clock_, failing, metrics_);
  ASSERT_TRUE(loop.recover().ok());
  failing.fail = true;
  auto f = loop.submit(note_request("lost"));
  loop.drain();
  Outcome o = f.get();
  EXPECT_EQ(o.status.code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(loop.failed());
  auto after = loop.submit(note_request("refused"));
  EXPECT_EQ(after.get().status.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(*journal_->last_seq(), 0);
}

TEST_F(ControlLoopTest, ThreadModeServesConcurrentWritersAndRecordsAGracefulStop) {
  RealClock real;
  ControlLoop loop({}, real, *journal_, metrics_);
  ASSERT_TRUE(loop.recover().ok());
  loop.start();
  std::vector<std::thread> writers;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        if (loop.submit(note_request("w" + std::to_string(t))).get().status.ok()) ++ok;
      }
    });
  }
  for (auto& w : writers) w.join();
  loop.stop("test");
  EXPECT_EQ(ok.load(), 200);
  EXPECT_EQ(*journal_->last_seq(), 201);
  const auto view = loop.view();
  EXPECT_EQ(view->events.at(view->events.size() - 1).description, "gpufleet stopped: test");
  auto snap = journal_->latest_snapshot();
  ASSERT_TRUE(snap.ok() && snap->has_value());
  EXPECT_EQ((*snap)->seq, 201);  // a clean stop leaves a snapshot at the end
  EXPECT_EQ(loop.submit(note_request("late")).get().status.code(), ErrorCode::kUnavailable);
}

// The snapshots kept in a journal file, oldest first, read on a connection of the test's own.
std::vector<Snapshot> kept_snapshots(const std::string& path) {
  std::vector<Snapshot> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return out;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT seq, data FROM snapshots ORDER BY seq", -1, &st, nullptr);
  while (st != nullptr && sqlite3_step(st) == SQLITE_ROW) {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(st, 1));
    out.push_back(Snapshot{sqlite3_column_int64(st, 0),
                           std::string(data, static_cast<size_t>(sqlite3_column_bytes(st, 1)))});
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// A threaded loop serializes its snapshots on another thread while it applies later events: each
// one must still be the state exactly at its seq (as replaying the journal to that seq builds it).
TEST_F(ControlLoopTest, SnapshotSerializedOffTheLoopIsTheStateAtItsSeq) {
  RealClock real;
  LoopOptions opts;
  opts.snapshot_every_events = 10;
  ControlLoop loop(opts, real, *journal_, metrics_);
  ASSERT_TRUE(loop.recover().ok());
  loop.start();
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < 150; ++i) {
        const std::string n = std::to_string(t) + "-" + std::to_string(i);
        EXPECT_TRUE(loop.submit(note_request("w" + n, "key-" + n)).get().status.ok());
      }
    });
  }
  for (auto& w : writers) w.join();
  loop.stop("test");
  EXPECT_GE(metrics_.snapshots.value(), 2);
  const std::vector<Snapshot> kept = kept_snapshots(dir_.file("journal.db"));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].seq, *journal_->last_seq());  // the stop's own, taken on the loop
  const Snapshot& off_loop = kept[0];
  ASSERT_LT(off_loop.seq, kept[1].seq);
  auto parsed = parse_json(off_loop.data);
  ASSERT_TRUE(parsed.ok());
  auto from_snapshot = FleetState::from_json(*parsed);
  ASSERT_TRUE(from_snapshot.ok()) << from_snapshot.status().to_string();
  FleetState replayed;
  ASSERT_TRUE(journal_
                  ->replay(0,
                           [&](const EventRecord& r) -> Status {
                             if (r.seq > off_loop.seq) return ok_status();
                             return replayed.apply(r);
                           })
                  .ok());
  EXPECT_EQ(replayed.applied_seq(), off_loop.seq);
  EXPECT_EQ(from_snapshot->hash(), replayed.hash());
}

// A job with every kind of field a submitted job can have.
Job submitted_job(int n) {
  Job j;
  j.id = "job-" + std::to_string(n);
  j.key = static_cast<uint64_t>(n);
  j.name = "train-" + std::to_string(n);
  j.kind = "PyTorchJob";
  j.ns = "team-a";
  j.priority = n % 3;
  j.pod_sets.push_back(JobPodSet{"master", 1, Json{{"nvidia.com/gpu", 8}}, "", false});
  j.pod_sets.push_back(JobPodSet{"worker", 3, Json{{"nvidia.com/gpu", 8}}, "", false});
  j.duration = hours(2);
  j.checkpoint_interval = hours(1);
  j.restart_overhead = minutes(5);
  j.request = Json{{"kind", "PyTorchJob"}, {"metadata", {{"name", j.name}}}};
  Dispatch d;
  d.policy = "training";
  d.queued = true;
  d.restart_policy["master"] = "OnFailure";
  d.backoff_limit = 3;
  j.dispatch = d;
  j.status = JobStatus::kRunnable;
  j.status_reason = "waiting to be dispatched";
  return j;
}

Request submit_request(int n) {
  Request r;
  r.name = "Submit";
  r.handle = [n](const FleetState&, Time) -> Result<Decision> {
    Decision d;
    d.events.push_back(job_events::to_event(job_events::Submitted{submitted_job(n)}));
    return d;
  };
  return r;
}

// Rule: a job.submitted event travels as its job (Event::job); applied from it, where no journal
// reads its text, the state is the one applying its payload gives, and replay of that payload
// gives too.
TEST_F(ControlLoopTest, SubmittedJobAppliedWithoutItsPayloadTextGivesTheStateItsPayloadGives) {
  std::vector<EventRecord> seen;
  ObservedJournal textless(
      nullptr,
      [&](const EventRecord& r) {
        seen.push_back(r);
        return ok_status();
      },
      [](std::string_view type) { return !type.starts_with("job."); });
  ASSERT_FALSE(textless.needs_payload(event_type::kJobSubmitted));
  ASSERT_TRUE(journal_->needs_payload(event_type::kJobSubmitted));
  ControlLoop typed({}, clock_, textless, metrics_);
  ASSERT_TRUE(typed.recover().ok());
  for (int n = 1; n <= 3; ++n) {
    loop_->submit(submit_request(n));
    loop_->submit(note_request("after " + std::to_string(n)));
    loop_->drain();
    typed.submit(submit_request(n));
    typed.submit(note_request("after " + std::to_string(n)));
    typed.drain();
  }
  ASSERT_NE(loop_->state().view().job("job-2"), nullptr);
  EXPECT_EQ(*typed.state().view().job("job-2"), *loop_->state().view().job("job-2"));
  EXPECT_EQ(typed.state().hash(), loop_->state().hash());
  // A snapshot's text written job by job is the state's JSON as one tree prints it.
  EXPECT_EQ(loop_->state().image().to_text(), safe_dump(loop_->state().to_json()));

  // No text for the job events; the others keep theirs.
  ASSERT_EQ(seen.size(), static_cast<size_t>(loop_->state().applied_seq()));
  for (const EventRecord& r : seen) {
    EXPECT_EQ(r.payload.empty(), r.type == event_type::kJobSubmitted) << r.type;
  }
  // The journal that keeps text replays to the same state.
  FleetState replayed;
  ASSERT_TRUE(journal_->replay(0, [&](const EventRecord& r) { return replayed.apply(r); }).ok());
  EXPECT_EQ(replayed.hash(), typed.state().hash());
}

}  // namespace
}  // namespace gf
