// The embedded journal: one SQLite database file in WAL mode (docs/architecture.md).
//
// Layout (schema version 3; a version 1 or 2 file is upgraded when opened for writing):
//   events(seq INTEGER PRIMARY KEY, time_us, type, idem_key, payload BLOB, sum)  1, 2, … gapless
//                                      above meta 'compacted_through' (compaction's gaps below)
//   UNIQUE index on idem_key WHERE idem_key IS NOT NULL                          one event per key
//   snapshots(seq INTEGER PRIMARY KEY, data BLOB, sum)                           latest two kept
//   history(row, seq, kind, id, name, tenant, state, created_us, ended_us, record BLOB, sum)
//                                      what left the hot state (journal/history.h), by id, name,
//                                      tenant and end time
//   history_runs(row, job_id, job_queue, quota_share, cluster, start_us, end_us,
//                micros_per_hour)      their runs, by end time (billing by share)
//   meta(key TEXT PRIMARY KEY, value TEXT)             "schema_version", "compacted_through"
// `sum` is each row's checksum as written (NULL in rows written by version 1): every read checks
// it, and opening checks the events below the latest snapshot (back to where compaction got),
// which replay never reads (docs/operations.md "A damaged journal").
//
// Threading: NOT thread-safe. One SqliteJournal object is used by one thread at a time (the
// control loop is the single writer), and one process writes a database file at a time: the next
// sequence number is kept in memory after open(), so a second writer on the same file makes
// appends fail with a constraint error (nothing is corrupted). Callers that share an object across
// threads must serialize every call themselves.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "journal/journal.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gf {

struct SqliteJournalOptions {
  // true: PRAGMA synchronous=FULL, every append is fsync'ed before it returns (survives power
  // loss). false: synchronous=NORMAL, survives a process crash but the last appends may be lost
  // on power loss or an OS crash.
  bool fsync = true;
  // How long a statement waits for a lock held by another connection before failing with
  // SQLITE_BUSY (a reader such as the sqlite3 shell can hold one briefly).
  int busy_timeout_ms = 5000;
  // Open checks the file's structure (PRAGMA integrity_check) and the checksums of the events below
  // the latest snapshot: damage is refused at open, naming where, not found when that history is
  // next read.
  bool verify_on_open = true;
  // Opens an existing file without writing anything to it (gpufleet journal verify).
  bool read_only = false;
  // Where compaction writes the events it removes, as compressed segments (an auditor's copy,
  // read back by `gpufleet journal export`); empty: it deletes them.
  std::string archive_dir = "";
};

// The events compaction archived under `dir` (SqliteJournalOptions::archive_dir), segment by
// segment in the order of their first seq, each seq once (a segment written again after a crash
// repeats some; audit records archived after their own retention come in later segments than
// their neighbours): what `gpufleet journal export` prints before the live journal. Stops at the
// first error `fn` returns; a segment that is not gzip'd JSON lines is an error naming it.
Status read_archive(const std::string& dir, const std::function<Status(const EventRecord&)>& fn);

class SqliteJournal final : public Journal {
 public:
  // Opens the database at `path`, creating the file and schema when absent. The directory must
  // exist. Fails on a database written by a newer schema version.
  static Result<std::unique_ptr<SqliteJournal>> open(const std::string& path,
                                                     SqliteJournalOptions opts = {});

  ~SqliteJournal() override;
  SqliteJournal(const SqliteJournal&) = delete;
  SqliteJournal& operator=(const SqliteJournal&) = delete;

  Result<AppendResult> append(std::span<const NewEvent> batch) override;
  // fn must not call append, replay or save_snapshot on this journal (a re-entrant call fails);
  // last_seq, find_key and latest_snapshot are allowed.
  Status replay(Seq after, const std::function<Status(const EventRecord&)>& fn) override;
  Result<Seq> last_seq() override;
  Result<std::optional<Seq>> find_key(const std::string& key) override;
  // Replaces a snapshot with the same seq; keeps only the two highest seqs afterwards.
  Status save_snapshot(const Snapshot& snapshot) override;
  Result<std::optional<Snapshot>> latest_snapshot() override;

  // Checks the file's structure (PRAGMA integrity_check), then every event up to `upto` in order:
  // its checksum, and that no seq is missing. `each` (may be empty) sees every event checked.
  // The error names the first damage found.
  // Events at or below `from` are not read; gaps at or below compacted_through() are compaction's.
  // `whole_file`: SQLite's check of every table; else of the tables a restart reads (events,
  // snapshots, meta), as opening does.
  Status verify(Seq upto, const std::function<Status(const EventRecord&)>& each, Seq from = 0,
                bool whole_file = true);

  bool keeps_history() const override { return !read_only_; }
  Result<std::unique_ptr<HistoryReader>> open_history_reader() override;
  // Deletes (or archives, then deletes) what the rule allows, a bounded number of events per
  // transaction so an append waits at most one of them (sqlite_compaction.cpp).
  Result<CompactionResult> compact(const CompactionRule& rule) override;
  Result<Seq> compacted_through() override { return compacted_through_; }

  // Reads one connection setting, e.g. "journal_mode" -> "wal", "synchronous" -> "2" (FULL).
  // For diagnostics and tests; `name` must be a plain identifier.
  Result<std::string> pragma(std::string_view name);

  const std::string& path() const { return path_; }

 private:
  struct DbCloser {
    void operator()(sqlite3* db) const;
  };
  struct StmtFinalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };
  using DbPtr = std::unique_ptr<sqlite3, DbCloser>;
  using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

  SqliteJournal(std::string path, DbPtr db);

  Status prepare_statements();
  Result<StmtPtr> prepare(std::string_view sql);
  // Runs a statement that returns no rows (BEGIN, COMMIT, …) and resets it.
  Status run(sqlite3_stmt* stmt, std::string_view what);
  // Inserts the batch inside an open transaction; fills `result`. Returns the next free seq.
  Result<Seq> insert_batch(std::span<const NewEvent> batch, AppendResult& result);
  Result<std::optional<Seq>> lookup_key(std::string_view key);
  Status insert_history(Seq seq, const HistoryRecord& h);
  Result<Seq> read_compacted_through();
  // One step of compact(): at most `limit` events in one transaction; the number removed.
  Result<int64_t> compact_step(const CompactionRule& rule, int64_t limit);
  // Writes `rows` (seq order) to a compressed segment file under archive_dir_, durably.
  Status archive(const std::vector<EventRecord>& rows);
  Result<Seq> read_last_seq();
  // Rolls back the open transaction, if any, and re-reads last_seq_ from disk.
  void abort_transaction();
  Status error(std::string_view what) const;
  // "journal '<path>' is damaged: <what>; …" (docs/operations.md).
  Status damaged(const std::string& what) const;
  // One row of (seq, time_us, type, idem_key, payload, sum) into `record`, its checksum checked.
  Status read_event_row(sqlite3_stmt* stmt, EventRecord& record) const;

  std::string path_;
  // Declared before the statements so it is destroyed after them: a connection can be closed only
  // once every statement is finalized.
  DbPtr db_;
  StmtPtr begin_;
  StmtPtr commit_;
  StmtPtr rollback_;
  StmtPtr insert_event_;
  StmtPtr find_key_;
  StmtPtr replay_;
  StmtPtr verify_;
  StmtPtr insert_snapshot_;
  StmtPtr prune_snapshots_;
  StmtPtr latest_snapshot_;
  StmtPtr insert_history_;
  StmtPtr insert_history_run_;
  bool read_only_ = false;
  Seq compacted_through_ = 0;
  std::string archive_dir_;
  // Invariant: equals MAX(seq) of the events table whenever no append is in progress.
  Seq last_seq_ = 0;
  // True while replay's statement is being stepped; guards against re-entrant calls from fn.
  bool replaying_ = false;
};

}  // namespace gf
