// PostgresJournal: the contract suite against a real PostgreSQL 15 (started by the test on
// loopback, one fresh database per test, appends fenced by a lease as in serve), plus what only
// the replicated store has: fencing by lease epoch, the lease's rules, notifications.
#include "journal/postgres/postgres_journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "journal/postgres/postgres_lease.h"
#include "support/postgres_server.h"
#include "unit/journal/journal_contract.h"

namespace gf::journal_contract {
namespace {

using ::testing::HasSubstr;

// One server per test process (gtest runs each case in a process of its own under ctest).
testing::PostgresServer& server() {
  static testing::PostgresServer s;
  return s;
}

// A fresh database on the test's server; its URL.
std::string fresh_database() {
  static std::atomic<int> n{0};
  const std::string name = "gf_test_" + std::to_string(::getpid()) + "_" + std::to_string(++n);
  testing::CommandResult r = server().psql("CREATE DATABASE " + name);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return server().url(name);
}

class PostgresStore final : public JournalStore {
 public:
  PostgresStore() : url_(server().ok() ? fresh_database() : "") {}

  // Each journal opened takes the lease (as a new leader would) and is fenced by its epoch.
  Result<std::unique_ptr<Journal>> open() override {
    if (url_.empty()) return unavailable_error("no PostgreSQL: " + server().error());
    GF_ASSIGN_OR_RETURN(auto lease, PostgresLease::open(url_, "contract"));
    GF_RETURN_IF_ERROR(lease->resign(last_epoch_));
    GF_ASSIGN_OR_RETURN(auto epoch, lease->try_take(seconds(60), "http://contract"));
    if (!epoch) return internal_error("the lease was not free");
    last_epoch_ = *epoch;
    GF_ASSIGN_OR_RETURN(auto journal, PostgresJournal::open(url_));
    GF_RETURN_IF_ERROR(journal->set_epoch(*epoch));
    return std::unique_ptr<Journal>(std::move(journal));
  }

  Result<std::vector<Seq>> stored_snapshot_seqs() override {
    GF_ASSIGN_OR_RETURN(pg::Connection c, pg::Connection::open(url_));
    GF_ASSIGN_OR_RETURN(auto r, c.exec("SELECT seq FROM gf_snapshots ORDER BY seq", "snapshots"));
    std::vector<Seq> out;
    for (int i = 0; i < pg::rows(r.get()); ++i)
      out.push_back(std::stoll(pg::get_text(r.get(), i, 0)));
    return out;
  }

 private:
  std::string url_;
  int64_t last_epoch_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Postgres, JournalContractTest,
                         ::testing::Values(JournalContractParam{"Postgres",
                                                                make_store<PostgresStore>}),
                         param_name);

class PostgresJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server().ok()) << server().error();
    url_ = fresh_database();
  }

  std::unique_ptr<PostgresLease> lease(const std::string& holder) {
    auto l = PostgresLease::open(url_, holder);
    EXPECT_TRUE(l.ok()) << l.status().to_string();
    return l.ok() ? std::move(l).value() : nullptr;
  }
  std::unique_ptr<PostgresJournal> journal(int64_t epoch) {
    auto j = PostgresJournal::open(url_);
    EXPECT_TRUE(j.ok()) << j.status().to_string();
    if (!j.ok()) return nullptr;
    EXPECT_TRUE((*j)->set_epoch(epoch).ok());
    return std::move(j).value();
  }
  // What a paused leader experiences: its lease runs out while it cannot renew.
  void expire_lease() {
    auto r = server().psql("UPDATE gf_lease SET expires_at = '-infinity'", db());
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  std::string query(const std::string& sql) {
    auto r = server().psql(sql, db());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }
  std::string db() const { return url_.substr(url_.rfind('/') + 1); }

  std::string url_;
};

std::vector<NewEvent> one(const std::string& type, const std::string& key = "") {
  return {make_event(type, "{}", key)};
}

TEST_F(PostgresJournalTest, FencingRefusesTheAppendOfALeaderWhoseLeaseWasTakenOver) {
  auto a = lease("replica-a");
  auto b = lease("replica-b");
  auto epoch_a = a->try_take(seconds(30), "http://a");
  ASSERT_TRUE(epoch_a.ok() && epoch_a->has_value());
  auto ja = journal(**epoch_a);
  ASSERT_TRUE(ja->append(one("by.a")).ok());

  expire_lease();  // a is paused past its lease…
  auto epoch_b = b->try_take(seconds(30), "http://b");
  ASSERT_TRUE(epoch_b.ok() && epoch_b->has_value());
  EXPECT_EQ(**epoch_b, **epoch_a + 1);
  auto jb = journal(**epoch_b);
  ASSERT_TRUE(jb->append(one("by.b")).ok());

  // …and wakes: the database refuses its batch, whatever it believes.
  auto late = ja->append(one("late.by.a"));
  ASSERT_FALSE(late.ok());
  EXPECT_THAT(late.status().message(), HasSubstr("fenced"));
  EXPECT_FALSE(ja->save_snapshot({2, "stale"}).ok());
  EXPECT_EQ(query("SELECT string_agg(convert_from(type, 'UTF8') || '@' || epoch, ',' ORDER BY "
                  "seq) FROM gf_events"),
            "by.a@1,by.b@2");
  EXPECT_EQ(query("SELECT count(*) FROM gf_snapshots"), "0");
}

TEST_F(PostgresJournalTest, LeaseIsTakenOnlyWhenFreeOrExpiredAndEpochsOnlyGrow) {
  auto a = lease("replica-a");
  auto b = lease("replica-b");
  auto first = a->try_take(seconds(30), "http://a");
  ASSERT_TRUE(first.ok() && first->has_value());
  auto refused = b->try_take(seconds(30), "http://b");
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->has_value()) << "a live lease is not taken";
  auto info = b->read();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->holder, "replica-a");
  EXPECT_EQ(info->url, "http://a");
  EXPECT_GT(info->remaining_s, 20);

  ASSERT_TRUE(a->resign(**first).ok());  // a graceful stop hands over at once
  auto second = b->try_take(seconds(30), "http://b");
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_GT(**second, **first);
  auto renewed = a->renew(**first, seconds(30));
  ASSERT_TRUE(renewed.ok());
  EXPECT_FALSE(*renewed) << "the old holder cannot renew a lease it lost";
  auto kept = b->renew(**second, seconds(30));
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(*kept);
}

TEST_F(PostgresJournalTest, TakingTheLeaseWaitsForAnAppendInFlight) {
  auto a = lease("replica-a");
  auto epoch = a->try_take(seconds(30), "http://a");
  ASSERT_TRUE(epoch.ok() && epoch->has_value());
  expire_lease();
  // An append in flight holds the lease row FOR SHARE until it commits (begin_fenced); a
  // takeover's UPDATE needs the row, so it is ordered after the append, never in its middle.
  auto in_flight = pg::Connection::open(url_);
  ASSERT_TRUE(in_flight.ok());
  ASSERT_TRUE(
      in_flight->exec("BEGIN; SELECT epoch FROM gf_lease WHERE id = 1 FOR SHARE", "t").ok());
  auto taker = pg::Connection::open(url_);
  ASSERT_TRUE(taker.ok());
  ASSERT_TRUE(taker->exec("SET lock_timeout = '300ms'", "t").ok());
  const std::string take =
      "UPDATE gf_lease SET epoch = epoch + 1 WHERE id = 1 AND expires_at < clock_timestamp()";
  auto blocked = taker->exec(take, "take");
  ASSERT_FALSE(blocked.ok());
  EXPECT_THAT(blocked.status().message(), HasSubstr("lock timeout"));
  ASSERT_TRUE(in_flight->exec("COMMIT", "t").ok());
  EXPECT_TRUE(taker->exec(take, "take").ok());
  EXPECT_EQ(query("SELECT epoch FROM gf_lease"), std::to_string(**epoch + 1));
}

TEST_F(PostgresJournalTest, FollowersAreNotifiedOfCommittedBatchesOnly) {
  auto leader = lease("replica-a");
  auto follower = lease("replica-b");
  auto epoch = leader->try_take(seconds(30), "http://a");
  ASSERT_TRUE(epoch.ok() && epoch->has_value());
  auto j = journal(**epoch);
  const std::vector<NewEvent> two = {make_event("x", "{}"), make_event("y", "{}")};
  ASSERT_TRUE(j->append(two).ok());
  auto seen = follower->wait_for_events(seconds(10));
  ASSERT_TRUE(seen.ok()) << seen.status().to_string();
  EXPECT_EQ(*seen, 2);

  expire_lease();
  ASSERT_TRUE(follower->try_take(seconds(30), "http://b").ok());
  ASSERT_FALSE(j->append(one("fenced")).ok());
  auto none = follower->wait_for_events(milliseconds(200));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0) << "a refused batch notifies nobody";
}

TEST_F(PostgresJournalTest, ReplicaRowsAreKeptPerReplica) {
  auto a = lease("replica-a");
  ASSERT_TRUE(a->report({"replica-a", "http://a", "leader", 3, 42, 0}).ok());
  ASSERT_TRUE(a->report({"replica-b", "http://b", "follower", 3, 40, 0}).ok());
  ASSERT_TRUE(a->report({"replica-a", "http://a", "leader", 3, 43, 0}).ok());
  auto rows = a->replicas();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].id, "replica-a");
  EXPECT_EQ((*rows)[0].applied_seq, 43);
  EXPECT_EQ((*rows)[1].role, "follower");
}

// History (docs/operations.md "What is kept where"): filed in the append's transaction, found by
// every filter and page, runs by window, from a reader on a connection of its own.
TEST_F(PostgresJournalTest, HistoryIsFiledWithItsEventAndReadFromAnotherConnection) {
  auto j = journal(0);
  ASSERT_NE(j, nullptr);
  std::vector<NewEvent> batch = one("retention.applied");
  for (int i = 0; i < 3; ++i) {
    HistoryRecord h;
    h.id = "job-" + std::to_string(i);
    h.name = "train";
    h.tenant = i == 2 ? "QS2" : "QS1";
    h.state = "SUCCEEDED";
    h.created = kSimEpoch;
    h.ended = kSimEpoch + hours(i + 1);
    h.record = "{\"id\":\"" + h.id + "\"}";
    h.runs.push_back(HistoryRun{h.id, "q", h.tenant, "c1", kSimEpoch, h.ended, 1'000'000});
    batch[0].history.push_back(h);
  }
  ASSERT_TRUE(j->append(batch).ok());
  auto reader = j->open_history_reader();
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  EXPECT_EQ(*(*reader)->count(), 3);
  HistoryQuery q;
  q.tenant = "QS1";
  q.limit = 1;
  HistoryPage first = *(*reader)->query(q);
  ASSERT_EQ(first.records.size(), 1u);
  EXPECT_EQ(first.records[0].id, "job-0");
  EXPECT_EQ(first.records[0].record, "{\"id\":\"job-0\"}");
  EXPECT_EQ(first.records[0].seq, 1);
  ASSERT_TRUE(first.next_row.has_value());
  q.after_row = *first.next_row;
  HistoryPage second = *(*reader)->query(q);
  ASSERT_EQ(second.records.size(), 1u);
  EXPECT_EQ(second.records[0].id, "job-1");
  EXPECT_FALSE(second.next_row.has_value());
  auto runs = (*reader)->runs_between(kSimEpoch + minutes(90), kSimEpoch + hours(4), "");
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u) << "the runs of job-1 and job-2 reach past 1h30m";
}

TEST(PgUrl, RedactUrlHidesThePasswordOnly) {
  EXPECT_EQ(pg::redact_url("postgresql://gf:s3cret@db:5432/fleet"),
            "postgresql://gf:***@db:5432/fleet");
  EXPECT_EQ(pg::redact_url("postgresql://gf@db/fleet"), "postgresql://gf@db/fleet");
  EXPECT_EQ(pg::redact_url("host=db dbname=fleet"), "host=db dbname=fleet");
}

TEST(PgConnect, AnUnreachableDatabaseIsUnavailableAndNamesTheRedactedUrl) {
  auto j = PostgresJournal::open("postgresql://gf:topsecret@127.0.0.1:1/none?connect_timeout=2");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), ErrorCode::kUnavailable);
  EXPECT_THAT(j.status().message(), HasSubstr("gf:***@127.0.0.1:1"));
  EXPECT_THAT(j.status().message(), ::testing::Not(HasSubstr("topsecret")));
}

}  // namespace
}  // namespace gf::journal_contract
