// ObservedJournal (docs/architecture.md "Journal"): over a SQLite journal it passes the whole
// journal contract and shows the observer exactly what is stored; on its own it numbers and
// deduplicates like a journal, shows the observer every record, and keeps none.
#include "journal/observed/observed_journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "journal/sqlite/sqlite_journal.h"
#include "support/temp_dir.h"
#include "unit/journal/journal_contract.h"

namespace gf::journal_contract {
namespace {

using ::testing::ElementsAre;

// An ObservedJournal that owns the SQLite journal it wraps (what the contract suite opens).
class OwningObservedJournal final : public Journal {
 public:
  OwningObservedJournal(std::unique_ptr<Journal> inner, std::vector<EventRecord>* seen)
      : inner_(std::move(inner)), observed_(inner_.get(), [seen](const EventRecord& r) {
          seen->push_back(r);
          return ok_status();
        }) {}
  Result<AppendResult> append(std::span<const NewEvent> batch) override {
    return observed_.append(batch);
  }
  Status replay(Seq after, const std::function<Status(const EventRecord&)>& fn) override {
    return observed_.replay(after, fn);
  }
  Result<Seq> last_seq() override { return observed_.last_seq(); }
  Result<std::optional<Seq>> find_key(const std::string& key) override {
    return observed_.find_key(key);
  }
  Status save_snapshot(const Snapshot& s) override { return observed_.save_snapshot(s); }
  Result<std::optional<Snapshot>> latest_snapshot() override { return observed_.latest_snapshot(); }

 private:
  std::unique_ptr<Journal> inner_;
  ObservedJournal observed_;
};

class ObservedSqliteStore final : public JournalStore {
 public:
  Result<std::unique_ptr<Journal>> open() override {
    if (!dir_.ok()) return internal_error("mkdtemp failed");
    auto journal = SqliteJournal::open(dir_.file("journal.db"));
    if (!journal.ok()) return journal.status();
    return std::unique_ptr<Journal>(
        std::make_unique<OwningObservedJournal>(std::move(journal).value(), &seen_));
  }
  Result<std::vector<Seq>> stored_snapshot_seqs() override {
    // The snapshots the wrapped journal stored, read from its file.
    sqlite3* db = nullptr;
    std::vector<Seq> seqs;
    if (sqlite3_open_v2(dir_.file("journal.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK) {
      sqlite3_close(db);
      return internal_error("cannot open the journal file");
    }
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT seq FROM snapshots ORDER BY seq", -1, &stmt, nullptr) ==
        SQLITE_OK) {
      while (sqlite3_step(stmt) == SQLITE_ROW) seqs.push_back(sqlite3_column_int64(stmt, 0));
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return seqs;
  }

 private:
  TempDir dir_;
  std::vector<EventRecord> seen_;
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(ObservedSqlite, JournalContractTest,
                         ::testing::Values(JournalContractParam{"ObservedSqlite",
                                                                make_store<ObservedSqliteStore>}),
                         param_name);

namespace {

std::vector<Seq> seqs_of(const std::vector<EventRecord>& records) {
  std::vector<Seq> seqs;
  for (const EventRecord& r : records) seqs.push_back(r.seq);
  return seqs;
}

TEST(ObservedJournal, OverAnInnerJournalTheObserverSeesExactlyWhatItStores) {
  TempDir dir;
  auto inner = SqliteJournal::open(dir.file("journal.db"));
  ASSERT_TRUE(inner.ok());
  std::vector<EventRecord> seen;
  ObservedJournal journal(inner->get(), [&](const EventRecord& r) {
    seen.push_back(r);
    return ok_status();
  });
  std::vector<NewEvent> batch = {make_event("a", "{}", "k1"), make_event("b", "{}", "k1"),
                                 make_event("c", "{}")};
  auto r = journal.append(batch);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->duplicate, ElementsAre(false, true, false));
  std::vector<EventRecord> stored;
  ASSERT_TRUE((*inner)
                  ->replay(0,
                           [&](const EventRecord& rec) {
                             stored.push_back(rec);
                             return ok_status();
                           })
                  .ok());
  ASSERT_EQ(seen.size(), stored.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].seq, stored[i].seq);
    EXPECT_EQ(seen[i].type, stored[i].type);
    EXPECT_EQ(seen[i].payload, stored[i].payload);
    EXPECT_EQ(seen[i].idempotency_key, stored[i].idempotency_key);
  }
}

TEST(ObservedJournal, WithoutAnInnerJournalItNumbersAndDeduplicatesLikeAJournal) {
  std::vector<EventRecord> seen;
  ObservedJournal journal(nullptr, [&](const EventRecord& r) {
    seen.push_back(r);
    return ok_status();
  });
  EXPECT_EQ(*journal.last_seq(), 0);
  std::vector<NewEvent> first = {make_event("a", "1", "k1"), make_event("b", "2", "k1"),
                                 make_event("c", "3")};
  auto r1 = journal.append(first);
  ASSERT_TRUE(r1.ok());
  EXPECT_THAT(r1->seqs, ElementsAre(1, 1, 2));  // the second k1 is the first's duplicate
  EXPECT_THAT(r1->duplicate, ElementsAre(false, true, false));
  std::vector<NewEvent> second = {make_event("d", "4", "k1"), make_event("e", "5", "k2")};
  auto r2 = journal.append(second);
  ASSERT_TRUE(r2.ok());
  EXPECT_THAT(r2->seqs, ElementsAre(1, 3));
  EXPECT_THAT(r2->duplicate, ElementsAre(true, false));
  EXPECT_EQ(*journal.last_seq(), 3);
  EXPECT_EQ(*journal.find_key("k2"), std::optional<Seq>(3));
  EXPECT_EQ(*journal.find_key("k3"), std::nullopt);
  EXPECT_THAT(seqs_of(seen), ElementsAre(1, 2, 3));
  EXPECT_EQ(seen[1].type, "c");
  EXPECT_EQ(seen[1].payload, "3");
}

TEST(ObservedJournal, WithoutAnInnerJournalNothingAppendedCanBeReplayed) {
  ObservedJournal journal(nullptr, [](const EventRecord&) { return ok_status(); });
  int calls = 0;
  auto count = [&](const EventRecord&) {
    ++calls;
    return ok_status();
  };
  EXPECT_TRUE(journal.replay(0, count).ok());  // empty: nothing to replay
  std::vector<NewEvent> batch = {make_event("a", "1"), make_event("b", "2")};
  ASSERT_TRUE(journal.append(batch).ok());
  Status s = journal.replay(0, count);
  EXPECT_EQ(s.code(), ErrorCode::kInternal);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("keeps no records"));
  EXPECT_TRUE(journal.replay(2, count).ok());  // nothing after the last seq
  EXPECT_EQ(calls, 0);
  ASSERT_TRUE(journal.save_snapshot({.seq = 2, .data = "state"}).ok());
  auto snap = journal.latest_snapshot();
  ASSERT_TRUE(snap.ok() && snap->has_value());
  EXPECT_EQ((*snap)->data, "state");
}

TEST(ObservedJournal, AnObserverErrorFailsTheAppend) {
  ObservedJournal journal(nullptr, [](const EventRecord& r) {
    return r.type == "bad" ? internal_error("cannot apply") : ok_status();
  });
  std::vector<NewEvent> batch = {make_event("good", "1"), make_event("bad", "2")};
  auto r = journal.append(batch);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("cannot apply"));
}

}  // namespace
}  // namespace gf::journal_contract
