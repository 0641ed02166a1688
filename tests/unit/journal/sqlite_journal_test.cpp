// SqliteJournal: the contract suite on a fresh temp directory per test, plus what only SQLite has
// (WAL, synchronous levels, schema versioning, rollback of a failed batch).
#include "journal/sqlite/sqlite_journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "unit/journal/journal_contract.h"

namespace gf::journal_contract {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A second, raw connection to a journal file, to look behind the Journal interface.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      ADD_FAILURE() << "raw open " << path << ": " << sqlite3_errmsg(db_);
    }
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  // Runs SQL; returns the first column of every row as text ("" for NULL).
  std::vector<std::string> query(const std::string& sql) {
    std::vector<std::string> rows;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return rows;
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      rows.emplace_back(text == nullptr ? "" : reinterpret_cast<const char*>(text));
    }
    if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    return rows;
  }

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (err != nullptr ? err : "?");
    }
    sqlite3_free(err);
  }

 private:
  sqlite3* db_ = nullptr;
};

class SqliteStore final : public JournalStore {
 public:
  Result<std::unique_ptr<Journal>> open() override {
    if (!dir_.ok()) return internal_error("mkdtemp failed");
    auto journal = SqliteJournal::open(db_path());
    if (!journal.ok()) return journal.status();
    return std::unique_ptr<Journal>(std::move(journal).value());
  }

  Result<std::vector<Seq>> stored_snapshot_seqs() override {
    RawDb raw(db_path());
    std::vector<Seq> seqs;
    for (const std::string& s : raw.query("SELECT seq FROM snapshots ORDER BY seq")) {
      seqs.push_back(std::stoll(s));
    }
    return seqs;
  }

  std::string db_path() const { return dir_.file("journal.db"); }

 private:
  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Sqlite, JournalContractTest,
                         ::testing::Values(JournalContractParam{"Sqlite", make_store<SqliteStore>}),
                         param_name);

class SqliteJournalTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }

  std::unique_ptr<SqliteJournal> open(SqliteJournalOptions opts = {}) {
    auto journal = SqliteJournal::open(path(), opts);
    EXPECT_TRUE(journal.ok()) << journal.status().to_string();
    return journal.ok() ? std::move(journal).value() : nullptr;
  }

  std::string path() const { return dir_.file("journal.db"); }

  static std::vector<Seq> replayed_seqs(Journal& journal) {
    std::vector<Seq> seqs;
    EXPECT_TRUE(journal
                    .replay(0,
                            [&](const EventRecord& r) {
                              seqs.push_back(r.seq);
                              return ok_status();
                            })
                    .ok());
    return seqs;
  }

  TempDir dir_;
};

TEST_F(SqliteJournalTest, WalModeIsOnAndPersistsInTheFile) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  auto mode = journal->pragma("journal_mode");
  ASSERT_TRUE(mode.ok()) << mode.status().to_string();
  EXPECT_EQ(*mode, "wal");
  RawDb raw(path());
  EXPECT_THAT(raw.query("PRAGMA journal_mode"), ElementsAre("wal"));
}

TEST_F(SqliteJournalTest, FsyncOptionSelectsSynchronousFullOrNormal) {
  {
    auto journal = open();
    ASSERT_NE(journal, nullptr);
    auto sync = journal->pragma("synchronous");
    ASSERT_TRUE(sync.ok());
    EXPECT_EQ(*sync, "2");  // FULL
  }
  auto journal = open({.fsync = false});
  ASSERT_NE(journal, nullptr);
  auto sync = journal->pragma("synchronous");
  ASSERT_TRUE(sync.ok());
  EXPECT_EQ(*sync, "1");  // NORMAL
}

TEST_F(SqliteJournalTest, PragmaRejectsAnythingButAnIdentifier) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->pragma("journal_mode; DROP TABLE events").status().code(),
            ErrorCode::kValidation);
  EXPECT_EQ(journal->pragma("").status().code(), ErrorCode::kValidation);
}

TEST_F(SqliteJournalTest, OpeningAPathInAMissingDirectoryGivesAClearError) {
  const std::string missing = dir_.file("no/such/dir");
  auto journal = SqliteJournal::open(missing + "/journal.db");
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.status().code(), ErrorCode::kInternal);
  EXPECT_THAT(journal.status().message(), HasSubstr("'" + missing + "' does not exist"));
}

TEST_F(SqliteJournalTest, OpeningAFileThatIsNotADatabaseFails) {
  std::ofstream(path()) << std::string(4096, 'x');
  auto journal = SqliteJournal::open(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_THAT(journal.status().message(), HasSubstr("not a database"));
  EXPECT_THAT(journal.status().message(), HasSubstr(path()));
}

TEST_F(SqliteJournalTest, InMemoryDatabaseIsRejectedBecauseWalIsRequired) {
  auto journal = SqliteJournal::open(":memory:");
  ASSERT_FALSE(journal.ok());
  EXPECT_THAT(journal.status().message(), HasSubstr("WAL mode is required"));
}

TEST_F(SqliteJournalTest, SchemaHasVersionTwoAndAPartialUniqueKeyIndex) {
  ASSERT_NE(open(), nullptr);
  RawDb raw(path());
  EXPECT_THAT(raw.query("SELECT value FROM meta WHERE key = 'schema_version'"), ElementsAre("3"));
  EXPECT_THAT(raw.query("SELECT sql FROM sqlite_master WHERE name = 'events_idem_key'"),
              ElementsAre(HasSubstr("UNIQUE INDEX events_idem_key ON events(idem_key) "
                                    "WHERE idem_key IS NOT NULL")));
}

TEST_F(SqliteJournalTest, EventsWithoutAKeyStoreNullNotAnEmptyString) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  std::vector<NewEvent> batch = {make_event("a", "1"), make_event("b", "2", "k")};
  ASSERT_TRUE(journal->append(batch).ok());
  RawDb raw(path());
  EXPECT_THAT(raw.query("SELECT quote(idem_key) FROM events ORDER BY seq"),
              ElementsAre("NULL", "'k'"));
}

TEST_F(SqliteJournalTest, NewerSchemaVersionIsRejected) {
  ASSERT_NE(open(), nullptr);
  RawDb(path()).exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  auto journal = SqliteJournal::open(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_THAT(journal.status().message(), HasSubstr("schema version '99' is not supported"));
}

TEST_F(SqliteJournalTest, FailedBatchRollsBackEntirelyAndSeqsStayGapless) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  std::vector<NewEvent> first = {make_event("ok", "1"), make_event("ok", "2")};
  ASSERT_TRUE(journal->append(first).ok());

  // Another connection installs a trigger that fails the third event of the next batch, after
  // two events of that batch (one of them keyed) were already inserted in its transaction.
  RawDb raw(path());
  raw.exec(
      "CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.type = 'poison' "
      "BEGIN SELECT RAISE(ABORT, 'poisoned event'); END");
  std::vector<NewEvent> bad = {make_event("ok", "3", "key-3"), make_event("ok", "4"),
                               make_event("poison", "5"), make_event("ok", "6")};
  auto failed = journal->append(bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), ErrorCode::kInternal);
  EXPECT_THAT(failed.status().message(), HasSubstr("poisoned event"));

  EXPECT_EQ(*journal->last_seq(), 2);
  EXPECT_THAT(replayed_seqs(*journal), ElementsAre(1, 2));
  EXPECT_EQ(*journal->find_key("key-3"), std::nullopt);

  raw.exec("DROP TRIGGER poison");
  auto retried = journal->append(bad);
  ASSERT_TRUE(retried.ok()) << retried.status().to_string();
  EXPECT_THAT(retried->seqs, ElementsAre(3, 4, 5, 6));
  EXPECT_THAT(replayed_seqs(*journal), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST_F(SqliteJournalTest, AppendFailsCleanlyWhileAnotherConnectionHoldsTheWriteLock) {
  auto journal = open({.busy_timeout_ms = 0});
  ASSERT_NE(journal, nullptr);
  std::vector<NewEvent> batch = {make_event("a", "1")};
  ASSERT_TRUE(journal->append(batch).ok());

  RawDb raw(path());
  raw.exec("BEGIN IMMEDIATE");
  auto busy = journal->append(batch);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), ErrorCode::kInternal);
  EXPECT_THAT(busy.status().message(), HasSubstr("locked"));
  EXPECT_FALSE(journal->save_snapshot({1, "s"}).ok());
  EXPECT_EQ(*journal->last_seq(), 1);
  raw.exec("COMMIT");

  auto after = journal->append(batch);
  ASSERT_TRUE(after.ok()) << after.status().to_string();
  EXPECT_THAT(after->seqs, ElementsAre(2));
  EXPECT_TRUE(journal->save_snapshot({2, "s"}).ok());
}

TEST_F(SqliteJournalTest, ASecondWriterOnTheSameFileGetsAnErrorInsteadOfReusingASeq) {
  auto first = open();
  auto second = open();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  std::vector<NewEvent> a = {make_event("a", "from first")};
  std::vector<NewEvent> b = {make_event("b", "from second")};
  ASSERT_TRUE(first->append(a).ok());

  auto clash = second->append(b);  // Its in-memory next seq (1) is taken.
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.status().message(), HasSubstr("UNIQUE constraint failed: events.seq"));
  EXPECT_EQ(*second->last_seq(), 1);  // Re-read from disk after the failed append.
  auto retried = second->append(b);
  ASSERT_TRUE(retried.ok()) << retried.status().to_string();
  EXPECT_THAT(retried->seqs, ElementsAre(2));
  EXPECT_THAT(replayed_seqs(*first), ElementsAre(1, 2));
}

TEST_F(SqliteJournalTest, ReentrantWritesFromInsideReplayFailWithoutBreakingReplay) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  std::vector<NewEvent> batch = {make_event("a", "1", "k1"), make_event("b", "2")};
  ASSERT_TRUE(journal->append(batch).ok());

  int calls = 0;
  Status status = journal->replay(0, [&](const EventRecord&) {
    ++calls;
    EXPECT_FALSE(journal->append(batch).ok());
    EXPECT_FALSE(journal->replay(0, [](const EventRecord&) { return ok_status(); }).ok());
    EXPECT_FALSE(journal->save_snapshot({1, "s"}).ok());
    // Reads are allowed.
    EXPECT_EQ(*journal->find_key("k1"), 1);
    EXPECT_EQ(*journal->last_seq(), 2);
    EXPECT_TRUE(journal->latest_snapshot().ok());
    return ok_status();
  });
  EXPECT_TRUE(status.ok()) << status.to_string();
  EXPECT_EQ(calls, 2);
  EXPECT_THAT(replayed_seqs(*journal), ElementsAre(1, 2));
}

TEST_F(SqliteJournalTest, SavingASnapshotWithANegativeSeqIsAValidationError) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->save_snapshot({-1, "s"}).code(), ErrorCode::kValidation);
}

// ---- integrity (docs/operations.md "A damaged journal") ---------------------------------------

TEST_F(SqliteJournalTest, Integrity_EveryEventAndSnapshotIsWrittenWithItsChecksum) {
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  std::vector<NewEvent> batch = {make_event("a", "{}"), make_event("b", "{}", "k")};
  ASSERT_TRUE(journal->append(batch).ok());
  ASSERT_TRUE(journal->save_snapshot({2, "state"}).ok());
  RawDb raw(path());
  EXPECT_THAT(raw.query("SELECT count(*) FROM events WHERE sum IS NOT NULL"), ElementsAre("2"));
  EXPECT_THAT(raw.query("SELECT count(*) FROM snapshots WHERE sum IS NOT NULL"), ElementsAre("1"));
}

TEST_F(SqliteJournalTest, Integrity_AChangedPayloadIsRefusedByReplayNamingItsSeq) {
  {
    auto journal = open();
    ASSERT_NE(journal, nullptr);
    std::vector<NewEvent> batch = {make_event("a", R"({"x":1})"), make_event("b", R"({"x":2})")};
    ASSERT_TRUE(journal->append(batch).ok());
  }
  RawDb(path()).exec(R"(UPDATE events SET payload = '{"x":3}' WHERE seq = 2)");
  auto journal = open();  // nothing below a snapshot: open checks only the structure
  ASSERT_NE(journal, nullptr);
  Status st = journal->replay(0, [](const EventRecord&) { return ok_status(); });
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("is damaged: event 2 does not match the checksum"));
}

TEST_F(SqliteJournalTest, Integrity_DamageBelowTheLatestSnapshotIsRefusedAtOpen) {
  {
    auto journal = open();
    ASSERT_NE(journal, nullptr);
    for (int i = 0; i < 10; ++i) {
      std::vector<NewEvent> batch = {make_event("e", R"({"i":)" + std::to_string(i) + "}")};
      ASSERT_TRUE(journal->append(batch).ok());
    }
    ASSERT_TRUE(journal->save_snapshot({8, "state at 8"}).ok());
  }
  RawDb(path()).exec("UPDATE events SET type = 'f' WHERE seq = 3");
  auto journal = SqliteJournal::open(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_THAT(journal.status().message(), HasSubstr("event 3 does not match the checksum"));
  EXPECT_THAT(journal.status().message(), HasSubstr("A damaged journal"));
}

TEST_F(SqliteJournalTest, Integrity_AMissingEventBelowTheSnapshotIsRefusedAtOpen) {
  {
    auto journal = open();
    ASSERT_NE(journal, nullptr);
    for (int i = 0; i < 5; ++i) {
      std::vector<NewEvent> batch = {make_event("e", "{}")};
      ASSERT_TRUE(journal->append(batch).ok());
    }
    ASSERT_TRUE(journal->save_snapshot({5, "s"}).ok());
  }
  RawDb(path()).exec("DELETE FROM events WHERE seq = 2");
  auto journal = SqliteJournal::open(path());
  ASSERT_FALSE(journal.ok());
  EXPECT_THAT(journal.status().message(), HasSubstr("events 2 to 2 are missing"));
}

TEST_F(SqliteJournalTest, Integrity_AChangedSnapshotIsRefused) {
  {
    auto journal = open();
    ASSERT_NE(journal, nullptr);
    ASSERT_TRUE(journal->save_snapshot({0, "state"}).ok());
  }
  RawDb(path()).exec("UPDATE snapshots SET data = 'other'");
  SqliteJournalOptions opts;
  opts.verify_on_open = false;
  auto journal = open(opts);
  ASSERT_NE(journal, nullptr);
  auto snapshot = journal->latest_snapshot();
  ASSERT_FALSE(snapshot.ok());
  EXPECT_THAT(snapshot.status().message(), HasSubstr("the snapshot at seq 0 does not match"));
}

TEST_F(SqliteJournalTest, Integrity_AVersionOneFileIsUpgradedAndItsOldRowsStayReadable) {
  {
    RawDb raw(path());
    raw.exec(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE events(seq INTEGER PRIMARY KEY, time_us INTEGER NOT NULL, type TEXT NOT "
        "NULL, idem_key TEXT, payload BLOB NOT NULL);"
        "CREATE UNIQUE INDEX events_idem_key ON events(idem_key) WHERE idem_key IS NOT NULL;"
        "CREATE TABLE snapshots(seq INTEGER PRIMARY KEY, data BLOB NOT NULL);"
        "INSERT INTO meta VALUES('schema_version', '1');"
        "INSERT INTO events VALUES(1, 0, 'old', NULL, '{}');");
  }
  auto journal = open();
  ASSERT_NE(journal, nullptr);
  std::vector<NewEvent> batch = {make_event("new", "{}")};
  ASSERT_TRUE(journal->append(batch).ok());
  EXPECT_EQ(replayed_seqs(*journal), (std::vector<Seq>{1, 2}));
  RawDb raw(path());
  EXPECT_THAT(raw.query("SELECT value FROM meta WHERE key = 'schema_version'"), ElementsAre("3"));
  EXPECT_THAT(raw.query("SELECT quote(sum) IS 'NULL' FROM events ORDER BY seq"),
              ElementsAre("1", "0"));
}

TEST_F(SqliteJournalTest, Integrity_ReadOnlyOpenWritesNothingAndVerifyWalksEveryEvent) {
  {
    auto journal = open();
    ASSERT_NE(journal, nullptr);
    std::vector<NewEvent> batch = {make_event("a", "{}"), make_event("b", "{}")};
    ASSERT_TRUE(journal->append(batch).ok());
  }
  SqliteJournalOptions opts;
  opts.read_only = true;
  auto journal = open(opts);
  ASSERT_NE(journal, nullptr);
  int seen = 0;
  EXPECT_TRUE(journal
                  ->verify(100,
                           [&](const EventRecord&) {
                             ++seen;
                             return ok_status();
                           })
                  .ok());
  EXPECT_EQ(seen, 2);
  std::vector<NewEvent> more = {make_event("c", "{}")};
  EXPECT_FALSE(journal->append(more).ok());
  EXPECT_FALSE(SqliteJournal::open(dir_.file("absent.db"), opts).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_.file("absent.db")));
}

}  // namespace
}  // namespace gf::journal_contract
