// Rules that keep one request from hurting the writer: a handler that throws answers 500 and
// changes nothing, a request abandoned by its caller never runs, an idempotency key reused with
// another request is a conflict, and every audited request journals its record with its outcome.
#include <gtest/gtest.h>

#include "journal/sqlite/sqlite_journal.h"
#include "loop/control_loop.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

Request note(std::string text, std::string key = "", std::string fingerprint = "") {
  Request r;
  r.name = "Note";
  r.idempotency_key = std::move(key);
  r.fingerprint = std::move(fingerprint);
  r.handle = [text](const FleetState&, Time) -> Result<Decision> {
    Decision d;
    d.events.push_back(record_event("Test", EventLevel::kInfo, text));
    return d;
  };
  return r;
}

class RequestSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal_ = std::move(SqliteJournal::open(dir_.file("journal.db"), {.fsync = false})).value();
    loop_ = std::make_unique<ControlLoop>(LoopOptions{}, clock_, *journal_, metrics_);
    ASSERT_TRUE(loop_->recover().ok());
  }
  Outcome run(Request r) {
    auto f = loop_->submit(std::move(r));
    loop_->drain();
    return f.get();
  }

  testing::TempDir dir_;
  VirtualClock clock_;
  Metrics metrics_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<ControlLoop> loop_;
};

TEST_F(RequestSafetyTest, HandlerThatThrowsAnswersInternalFailureChangesNothingAndTheLoopGoesOn) {
  Request bad;
  bad.name = "Throws";
  bad.handle = [](const FleetState&, Time) -> Result<Decision> {
    return Json("x").get<int>() > 0 ? Result<Decision>(Decision{})
                                    : Result<Decision>(Decision{});  // type_error
  };
  const uint64_t before = loop_->state().hash();
  Outcome o = run(std::move(bad));
  EXPECT_EQ(o.status.code(), ErrorCode::kInternal);
  EXPECT_NE(o.status.message().find("nothing was changed"), std::string::npos);
  EXPECT_EQ(loop_->state().hash(), before);
  EXPECT_FALSE(loop_->failed());
  EXPECT_TRUE(run(note("after")).status.ok());
  EXPECT_EQ(loop_->state().applied_seq(), 1);
}

TEST_F(RequestSafetyTest, RequestAbandonedBeforeTheLoopTookItNeverRuns) {
  Request r = note("late");
  r.ticket = std::make_shared<std::atomic<TicketState>>(TicketState::kQueued);
  auto ticket = r.ticket;
  auto f = loop_->submit(std::move(r));
  TicketState expected = TicketState::kQueued;
  ASSERT_TRUE(ticket->compare_exchange_strong(expected, TicketState::kAbandoned));
  loop_->drain();
  EXPECT_EQ(f.get().status.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(loop_->state().applied_seq(), 0);
  EXPECT_EQ(*journal_->last_seq(), 0);
}

TEST_F(RequestSafetyTest, RequestTakenByTheLoopCannotBeAbandoned) {
  Request r = note("taken");
  r.ticket = std::make_shared<std::atomic<TicketState>>(TicketState::kQueued);
  auto ticket = r.ticket;
  auto f = loop_->submit(std::move(r));
  loop_->drain();
  EXPECT_TRUE(f.get().status.ok());
  TicketState expected = TicketState::kQueued;
  EXPECT_FALSE(ticket->compare_exchange_strong(expected, TicketState::kAbandoned));
  EXPECT_EQ(expected, TicketState::kTaken);
}

TEST_F(RequestSafetyTest, IdempotencyKeyReusedWithAnotherFingerprintIsAConflict) {
  Outcome first = run(note("one", "POST /v1/x k1", "aaaa"));
  ASSERT_TRUE(first.status.ok());
  Outcome repeat = run(note("one", "POST /v1/x k1", "aaaa"));
  EXPECT_TRUE(repeat.status.ok());
  EXPECT_TRUE(repeat.duplicate);
  EXPECT_EQ(repeat.seq, first.seq);
  Outcome other = run(note("two", "POST /v1/x k1", "bbbb"));
  EXPECT_EQ(other.status.code(), ErrorCode::kConflict);
  EXPECT_NE(other.status.message().find("reused with a different request"), std::string::npos);
  EXPECT_EQ(loop_->state().applied_seq(), 1);
  // Another key is independent, and a key journaled without a fingerprint matches any call.
  EXPECT_TRUE(run(note("three", "POST /v1/x k2", "bbbb")).status.ok());
  ASSERT_TRUE(run(note("legacy", "POST /v1/x old")).status.ok());
  EXPECT_TRUE(run(note("legacy", "POST /v1/x old", "cccc")).duplicate);
}

TEST_F(RequestSafetyTest, AuditedRequestJournalsItsRecordWithTheOutcomeEvenWhenRefused) {
  AuditRecord a;
  a.identity = "alice";
  a.roles = {"operator"};
  a.method = "POST";
  a.path = "/v1/clusters";
  a.resource = "clusters";
  a.request_id = "req-1";
  Request ok = note("fine");
  ok.audit = a.payload();
  ok.success_code = 201;
  ASSERT_TRUE(run(std::move(ok)).status.ok());
  Request bad;
  bad.name = "Bad";
  bad.audit = a.payload();
  bad.handle = [](const FleetState&, Time) -> Result<Decision> {
    return validation_error("X: wrong");
  };
  EXPECT_FALSE(run(std::move(bad)).status.ok());
  const auto& log = loop_->state().view().audit;
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log.at(0).code, 201);
  EXPECT_EQ(log.at(0).error, "");
  EXPECT_EQ(log.at(1).code, 400);
  EXPECT_EQ(log.at(1).error, "ValidationException");
  EXPECT_EQ(log.at(1).identity, "alice");
  // Refused: only the audit record was journaled; the fleet model is unchanged by it.
  const uint64_t model = loop_->state().model_hash();
  Request again;
  again.name = "Bad";
  again.audit = a.payload();
  again.handle = [](const FleetState&, Time) -> Result<Decision> {
    return validation_error("X: wrong");
  };
  (void)run(std::move(again));
  EXPECT_EQ(loop_->state().model_hash(), model);
  // The audit log survives a snapshot round trip.
  auto restored = FleetState::from_json(loop_->state().to_json());
  ASSERT_TRUE(restored.ok()) << restored.status().to_string();
  EXPECT_EQ(restored->hash(), loop_->state().hash());
  EXPECT_EQ(restored->view().audit.size(), 3u);
}

}  // namespace
}  // namespace gf
