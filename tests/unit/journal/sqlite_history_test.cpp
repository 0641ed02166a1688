// The SQLite journal's history table and compaction (docs/operations.md "What is kept where"):
// a record is filed in the append's transaction and found by id, name, tenant, state and time, in
// pages; compaction removes only what a kept snapshot holds and the retention allows, keeps young
// audit records, leaves replay and verification whole, and archives what it removes when asked.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>

#include <filesystem>

#include "core/json.h"
#include "journal/sqlite/sqlite_journal.h"
#include "unit/journal/journal_contract.h"

namespace gf::journal_contract {
namespace {

HistoryRecord job_record(const std::string& id, const std::string& tenant, const std::string& state,
                         Time ended) {
  HistoryRecord h;
  h.id = id;
  h.name = "name-" + id;
  h.tenant = tenant;
  h.state = state;
  h.created = kSimEpoch;
  h.ended = ended;
  h.record = Json{{"id", id}, {"pad", std::string(2000, 'x')}}.dump();
  h.runs.push_back(HistoryRun{id, "q", tenant, "c1", kSimEpoch + hours(1), ended, 3'600'000'000});
  return h;
}

class SqliteHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    auto j =
        SqliteJournal::open(dir_.file("journal.db"), {.fsync = false, .archive_dir = archive()});
    ASSERT_TRUE(j.ok()) << j.status().to_string();
    journal_ = std::move(j).value();
  }
  std::string archive() const { return dir_.file("archive"); }
  void append(std::string type, Time t, std::vector<HistoryRecord> history = {}) {
    NewEvent e = make_event(std::move(type), "{}", "", t);
    e.history = std::move(history);
    std::vector<NewEvent> batch{std::move(e)};
    ASSERT_TRUE(journal_->append(batch).ok());
  }
  std::vector<std::string> ids(const HistoryPage& p) {
    std::vector<std::string> out;
    for (const HistoryRecord& r : p.records) out.push_back(r.id);
    return out;
  }
  TempDir dir_;
  std::unique_ptr<SqliteJournal> journal_;
};

TEST_F(SqliteHistory, RecordsAreFiledWithTheirEventAndFoundByEveryFilter) {
  append("retention.applied", kSimEpoch + days(8),
         {job_record("a", "QS1", "SUCCEEDED", kSimEpoch + days(1)),
          job_record("b", "QS2", "FAILED", kSimEpoch + days(2))});
  append("job.deleted", kSimEpoch + days(9),
         {job_record("c", "QS1", "DELETED", kSimEpoch + days(9))});
  auto reader = journal_->open_history_reader();
  ASSERT_TRUE(reader.ok());
  HistoryReader& h = **reader;
  EXPECT_EQ(*h.count(), 3);
  HistoryQuery q;
  EXPECT_EQ(ids(*h.query(q)), (std::vector<std::string>{"a", "b", "c"}));
  q.tenant = "QS1";
  EXPECT_EQ(ids(*h.query(q)), (std::vector<std::string>{"a", "c"}));
  q = {};
  q.state = "FAILED";
  EXPECT_EQ(ids(*h.query(q)), std::vector<std::string>{"b"});
  q = {};
  q.since = kSimEpoch + days(2);
  q.until = kSimEpoch + days(9);
  EXPECT_EQ(ids(*h.query(q)), std::vector<std::string>{"b"});
  q = {};
  q.name = "name-c";
  HistoryPage c = *h.query(q);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].seq, 2) << "filed by the event that removed it";
  EXPECT_EQ(Json::parse(c.records[0].record)["pad"].get<std::string>().size(), 2000u)
      << "the record reads back whole";
}

TEST_F(SqliteHistory, PagesFollowTheNextRow) {
  std::vector<HistoryRecord> many;
  for (int i = 0; i < 5; ++i)
    many.push_back(job_record("j" + std::to_string(i), "t", "SUCCEEDED", kSimEpoch + days(1)));
  append("retention.applied", kSimEpoch + days(8), many);
  auto reader = journal_->open_history_reader();
  HistoryQuery q;
  q.limit = 2;
  std::vector<std::string> all;
  for (int pages = 0; pages < 10; ++pages) {
    HistoryPage p = *(*reader)->query(q);
    for (auto& id : ids(p)) all.push_back(id);
    if (!p.next_row) break;
    q.after_row = *p.next_row;
  }
  EXPECT_EQ(all, (std::vector<std::string>{"j0", "j1", "j2", "j3", "j4"}));
}

TEST_F(SqliteHistory, RunsBetweenAWindowAreTheOnesOverlappingIt) {
  append("retention.applied", kSimEpoch + days(8),
         {job_record("a", "QS1", "SUCCEEDED", kSimEpoch + days(1)),
          job_record("b", "QS2", "SUCCEEDED", kSimEpoch + days(3))});
  auto reader = journal_->open_history_reader();
  auto runs = (*reader)->runs_between(kSimEpoch + days(2), kSimEpoch + days(4), "");
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].job_id, "b");
  EXPECT_EQ((*runs)[0].micros_per_hour, 3'600'000'000);
  EXPECT_EQ((*(*reader)->runs_between(kSimEpoch, kSimEpoch + days(4), "c2")).size(), 0u);
}

TEST_F(SqliteHistory, ADamagedRecordIsRefusedNamingIt) {
  append("retention.applied", kSimEpoch + days(8),
         {job_record("a", "QS1", "SUCCEEDED", kSimEpoch + days(1))});
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(dir_.file("journal.db").c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "UPDATE history SET state = state, sum = sum + 1", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  auto page = (*journal_->open_history_reader())->query(HistoryQuery{});
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("history record of job a"), std::string::npos)
      << page.status().message();
}

// 30 events a day for 20 days, audit records among them; snapshots at day 10 and 15.
class SqliteCompaction : public SqliteHistory {
 protected:
  void SetUp() override {
    SqliteHistory::SetUp();
    for (int d = 0; d < 20; ++d) {
      for (int i = 0; i < 30; ++i) {
        append(i % 10 == 0 ? "audit.recorded" : "node.state_changed",
               kSimEpoch + days(d) + minutes(i));
      }
    }
    ASSERT_TRUE(journal_->save_snapshot(Snapshot{300, "{}"}).ok());  // end of day 9
    ASSERT_TRUE(journal_->save_snapshot(Snapshot{450, "{}"}).ok());  // end of day 14
  }
  std::vector<EventRecord> all() {
    std::vector<EventRecord> out;
    EXPECT_TRUE(journal_
                    ->replay(0,
                             [&](const EventRecord& r) {
                               out.push_back(r);
                               return ok_status();
                             })
                    .ok());
    return out;
  }
};

TEST_F(SqliteCompaction, RemovesOnlyWhatTheOlderSnapshotHoldsAndTheRetentionAllows) {
  // Now: day 20. Events older than 7 days (before day 13) through the older snapshot (seq 300).
  const Time now = kSimEpoch + days(20);
  auto done = journal_->compact(CompactionRule{300, now - days(7), now - days(90)});
  ASSERT_TRUE(done.ok()) << done.status().to_string();
  EXPECT_EQ(done->compacted_through, 300);
  EXPECT_EQ(done->removed, 270) << "300 events, less the 30 audit records (90 d retention)";
  const std::vector<EventRecord> left = all();
  EXPECT_EQ(left.size(), 600u - 270u);
  for (const EventRecord& r : left) {
    if (r.seq <= 300) {
      EXPECT_EQ(r.type, "audit.recorded") << r.seq;
    }
  }
  EXPECT_TRUE(journal_->verify(450, nullptr).ok()) << "compaction's gaps are not damage";
  std::vector<Seq> after;
  ASSERT_TRUE(journal_
                  ->replay(450,
                           [&](const EventRecord& r) {
                             after.push_back(r.seq);
                             return ok_status();
                           })
                  .ok());
  EXPECT_EQ(after.size(), 150u) << "replay after the latest snapshot is whole";
  journal_.reset();
  auto reopened = SqliteJournal::open(dir_.file("journal.db"), {.fsync = false});
  ASSERT_TRUE(reopened.ok()) << "opening checks from where compaction got: "
                             << reopened.status().to_string();
  EXPECT_EQ(*(*reopened)->compacted_through(), 300);
}

TEST_F(SqliteCompaction, StopsWhereTheRetentionWindowStarts) {
  const Time now = kSimEpoch + days(12);  // keep events from day 5 on
  auto done = journal_->compact(CompactionRule{450, now - days(7), now - days(90)});
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->compacted_through, 150) << "days 0-4";
}

TEST_F(SqliteCompaction, AuditRecordsGoAfterTheirOwnRetention) {
  const Time now = kSimEpoch + days(20);
  ASSERT_TRUE(journal_->compact(CompactionRule{300, now - days(7), now - days(90)}).ok());
  auto done = journal_->compact(CompactionRule{300, now - days(7), kSimEpoch + days(5)});
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->removed, 15) << "the audit records of days 0-4";
}

TEST_F(SqliteCompaction, ArchivedSegmentsHoldEveryRemovedEvent) {
  const Time now = kSimEpoch + days(20);
  ASSERT_TRUE(journal_->compact(CompactionRule{300, now - days(7), now - days(90)}).ok());
  size_t lines = 0;
  for (const auto& f : std::filesystem::directory_iterator(archive())) {
    gzFile gz = gzopen(f.path().c_str(), "rb");
    ASSERT_NE(gz, nullptr);
    char buf[4096];
    while (gzgets(gz, buf, sizeof buf) != nullptr) {
      Json line = Json::parse(buf);
      EXPECT_EQ(line["type"], "node.state_changed");
      ++lines;
    }
    gzclose(gz);
  }
  EXPECT_EQ(lines, 270u);
}

}  // namespace
}  // namespace gf::journal_contract
