#include "journal/sqlite/sqlite_journal.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <utility>

#include "core/hash.h"
#include "journal/sqlite/sqlite_util.h"

namespace gf {
namespace {

using namespace sqlite_util;

constexpr int kSchemaVersion = 3;

// Everything a fresh database needs; run inside one transaction so a crash during creation leaves
// either no schema or all of it. `sum`: the checksum of the row as written (event_sum), NULL in a
// row written before version 2.
constexpr const char* kCreateSchemaSql = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events(
  seq INTEGER PRIMARY KEY,
  time_us INTEGER NOT NULL,
  type TEXT NOT NULL,
  idem_key TEXT,
  payload BLOB NOT NULL,
  sum INTEGER);
CREATE UNIQUE INDEX events_idem_key ON events(idem_key) WHERE idem_key IS NOT NULL;
CREATE TABLE snapshots(seq INTEGER PRIMARY KEY, data BLOB NOT NULL, sum INTEGER);
INSERT INTO meta(key, value) VALUES('schema_version', '2');
)sql";

// Version 2 → 3: the history table (journal/history.h; `record` is deflated JSON, `sum` the
// checksum of the row as written) and where compaction got to (meta 'compacted_through').
constexpr const char* kUpgradeFrom2Sql = R"sql(
CREATE TABLE history(
  row INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  tenant TEXT NOT NULL,
  state TEXT NOT NULL,
  created_us INTEGER NOT NULL,
  ended_us INTEGER NOT NULL,
  record BLOB NOT NULL,
  sum INTEGER NOT NULL);
CREATE INDEX history_id ON history(kind, id);
CREATE INDEX history_name ON history(kind, name);
CREATE INDEX history_tenant ON history(kind, tenant, ended_us);
CREATE INDEX history_ended ON history(kind, ended_us);
CREATE TABLE history_runs(
  row INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL,
  job_queue TEXT NOT NULL,
  quota_share TEXT NOT NULL,
  cluster TEXT NOT NULL,
  start_us INTEGER NOT NULL,
  end_us INTEGER NOT NULL,
  micros_per_hour INTEGER NOT NULL);
CREATE INDEX history_runs_end ON history_runs(end_us);
UPDATE meta SET value = '3' WHERE key = 'schema_version';
)sql";

// Version 1 → 2: the checksum columns; the rows already written keep none.
constexpr const char* kUpgradeFrom1Sql = R"sql(
ALTER TABLE events ADD COLUMN sum INTEGER;
ALTER TABLE snapshots ADD COLUMN sum INTEGER;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql";

// A key that is already journaled makes the insert a no-op (sqlite3_changes() == 0) instead of an
// error; the caller then looks up the original seq. A seq collision is still an error.
constexpr const char* kInsertEventSql =
    "INSERT INTO events(seq, time_us, type, idem_key, payload, sum) VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
    "ON CONFLICT(idem_key) WHERE idem_key IS NOT NULL DO NOTHING";

// The checksum of an event row: FNV-1a 64 of its seq, time, type, key and payload. Any change of
// one byte changes it; it guards against the disk, not against someone who rewrites the file.
int64_t event_sum(Seq seq, int64_t time_us, std::string_view type, std::string_view key,
                  std::string_view payload) {
  uint64_t h = fnv1a_u64(static_cast<uint64_t>(seq));
  h = fnv1a_u64(static_cast<uint64_t>(time_us), h);
  h = fnv1a(type, h);
  h = fnv1a(std::string_view("\0", 1), h);
  h = fnv1a(key, h);
  h = fnv1a(std::string_view("\0", 1), h);
  return static_cast<int64_t>(fnv1a(payload, h));
}

int64_t snapshot_sum(Seq seq, std::string_view data) {
  return static_cast<int64_t>(fnv1a(data, fnv1a_u64(static_cast<uint64_t>(seq))));
}

// A schema_version value as a number; 0 when it is not one.
int schema_number(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() ? v : 0;
}

// Creates the schema on a fresh database, or checks the version of an existing one. Holds the
// write lock throughout so two processes opening a new file at once cannot both create it.
Status ensure_schema(sqlite3* db, const std::string& path, bool read_only) {
  if (read_only) {
    GF_ASSIGN_OR_RETURN(
        std::string version,
        query_text(db, path, "SELECT value FROM meta WHERE key = 'schema_version'"));
    if (const int v = schema_number(version); v >= 1 && v <= kSchemaVersion) return ok_status();
    return internal_error(fmt::format(
        "sqlite journal '{}': schema version '{}' is not supported by this build", path, version));
  }
  GF_RETURN_IF_ERROR(exec(db, path, "BEGIN IMMEDIATE", "begin schema check"));
  Status status = [&]() -> Status {
    GF_ASSIGN_OR_RETURN(std::string has_meta,
                        query_text(db, path,
                                   "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                   "AND name = 'meta'"));
    if (has_meta == "0") {
      GF_RETURN_IF_ERROR(exec(db, path, kCreateSchemaSql, "create schema"));
      return exec(db, path, kUpgradeFrom2Sql, "create schema 3");
    }
    GF_ASSIGN_OR_RETURN(
        std::string version,
        query_text(db, path, "SELECT value FROM meta WHERE key = 'schema_version'"));
    const int v = schema_number(version);
    if (v == 1) GF_RETURN_IF_ERROR(exec(db, path, kUpgradeFrom1Sql, "upgrade schema 1 to 2"));
    if (v == 1 || v == 2) return exec(db, path, kUpgradeFrom2Sql, "upgrade schema 2 to 3");
    if (v != kSchemaVersion) {
      return internal_error(
          fmt::format("sqlite journal '{}': schema version '{}' is not supported by this build (it "
                      "reads version {}); use a matching gpufleet",
                      path, version, kSchemaVersion));
    }
    return ok_status();
  }();
  if (!status.ok()) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  return exec(db, path, "COMMIT", "commit schema");
}

}  // namespace

void SqliteJournal::DbCloser::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

void SqliteJournal::StmtFinalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

SqliteJournal::SqliteJournal(std::string path, DbPtr db)
    : path_(std::move(path)), db_(std::move(db)) {}

SqliteJournal::~SqliteJournal() = default;

Result<std::unique_ptr<SqliteJournal>> SqliteJournal::open(const std::string& path,
                                                           SqliteJournalOptions opts) {
  // SQLite's own message for this case is only "unable to open database file".
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    return internal_error("sqlite journal '" + path + "': directory '" + parent.string() +
                          "' does not exist; create it or choose another journal path");
  }

  if (opts.read_only && !std::filesystem::exists(path, ec)) {
    return not_found_error("sqlite journal '" + path + "' does not exist");
  }
  sqlite3* raw = nullptr;
  const int flags = opts.read_only
                        ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
                        : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  DbPtr db(raw);  // Owns the handle even when open failed.
  if (rc != SQLITE_OK) return db_error(db.get(), path, "open");
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), opts.busy_timeout_ms);

  if (!opts.read_only) {
    GF_ASSIGN_OR_RETURN(std::string mode, query_text(db.get(), path, "PRAGMA journal_mode=WAL"));
    if (mode != "wal") {
      return internal_error("sqlite journal '" + path +
                            "': WAL mode is required but SQLite chose '" + mode +
                            "' (in-memory and temporary databases cannot be journals)");
    }
    GF_RETURN_IF_ERROR(exec(db.get(), path,
                            opts.fsync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                            "set synchronous"));
  }
  GF_RETURN_IF_ERROR(ensure_schema(db.get(), path, opts.read_only));

  std::unique_ptr<SqliteJournal> journal(new SqliteJournal(path, std::move(db)));
  journal->read_only_ = opts.read_only;
  GF_RETURN_IF_ERROR(journal->prepare_statements());
  GF_ASSIGN_OR_RETURN(journal->last_seq_, journal->read_last_seq());
  GF_ASSIGN_OR_RETURN(journal->compacted_through_, journal->read_compacted_through());
  journal->archive_dir_ = opts.archive_dir;
  if (opts.verify_on_open) {
    // Replay checks what it reads; what lies below the latest snapshot it never reads, so that
    // part is checked here (back to where compaction got: below it lie only the audit records
    // kept for their own retention), with SQLite's own check of the file's structure.
    GF_ASSIGN_OR_RETURN(std::optional<Snapshot> snapshot, journal->latest_snapshot());
    GF_RETURN_IF_ERROR(journal->verify(snapshot ? snapshot->seq : 0, nullptr,
                                       journal->compacted_through_, /*whole_file=*/false));
  }
  return journal;
}

Result<SqliteJournal::StmtPtr> SqliteJournal::prepare(std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  StmtPtr stmt(raw);
  if (rc != SQLITE_OK) return error("prepare \"" + std::string(sql) + "\"");
  return stmt;
}

Status SqliteJournal::prepare_statements() {
  GF_ASSIGN_OR_RETURN(begin_, prepare("BEGIN IMMEDIATE"));
  GF_ASSIGN_OR_RETURN(commit_, prepare("COMMIT"));
  GF_ASSIGN_OR_RETURN(rollback_, prepare("ROLLBACK"));
  GF_ASSIGN_OR_RETURN(insert_event_, prepare(kInsertEventSql));
  GF_ASSIGN_OR_RETURN(find_key_, prepare("SELECT seq FROM events WHERE idem_key = ?1"));
  GF_ASSIGN_OR_RETURN(replay_,
                      prepare("SELECT seq, time_us, type, idem_key, payload, sum FROM events "
                              "WHERE seq > ?1 ORDER BY seq"));
  GF_ASSIGN_OR_RETURN(verify_,
                      prepare("SELECT seq, time_us, type, idem_key, payload, sum FROM events "
                              "WHERE seq > ?2 AND seq <= ?1 ORDER BY seq"));
  if (!read_only_) {
    GF_ASSIGN_OR_RETURN(insert_history_,
                        prepare("INSERT INTO history(seq, kind, id, name, tenant, state, "
                                "created_us, ended_us, record, sum) "
                                "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
    GF_ASSIGN_OR_RETURN(insert_history_run_,
                        prepare("INSERT INTO history_runs(job_id, job_queue, quota_share, "
                                "cluster, start_us, end_us, micros_per_hour) "
                                "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  }
  GF_ASSIGN_OR_RETURN(
      insert_snapshot_,
      prepare("INSERT OR REPLACE INTO snapshots(seq, data, sum) VALUES(?1, ?2, ?3)"));
  // Deletes everything below the second-highest seq; a no-op while fewer than two exist.
  GF_ASSIGN_OR_RETURN(prune_snapshots_,
                      prepare("DELETE FROM snapshots WHERE seq < "
                              "(SELECT seq FROM snapshots ORDER BY seq DESC LIMIT 1 OFFSET 1)"));
  GF_ASSIGN_OR_RETURN(latest_snapshot_,
                      prepare("SELECT seq, data, sum FROM snapshots ORDER BY seq DESC LIMIT 1"));
  return ok_status();
}

Status SqliteJournal::error(std::string_view what) const {
  return db_error(db_.get(), path_, what);
}

Status SqliteJournal::run(sqlite3_stmt* stmt, std::string_view what) {
  StmtUse use(stmt);
  const int rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return error(what);
  return ok_status();
}

Result<Seq> SqliteJournal::read_last_seq() {
  GF_ASSIGN_OR_RETURN(std::string max,
                      query_text(db_.get(), path_, "SELECT COALESCE(MAX(seq), 0) FROM events"));
  Seq seq = 0;
  const auto [end, ec] = std::from_chars(max.data(), max.data() + max.size(), seq);
  if (ec != std::errc() || end != max.data() + max.size()) {
    return internal_error("sqlite journal '" + path_ + "': bad MAX(seq) '" + max + "'");
  }
  return seq;
}

void SqliteJournal::abort_transaction() {
  if (sqlite3_get_autocommit(db_.get()) == 0) {
    // A failed ROLLBACK leaves nothing better to do; SQLite rolls back when the connection closes.
    (void)run(rollback_.get(), "rollback");
  }
  if (Result<Seq> on_disk = read_last_seq(); on_disk.ok()) last_seq_ = *on_disk;
}

Result<std::optional<Seq>> SqliteJournal::lookup_key(std::string_view key) {
  sqlite3_stmt* stmt = find_key_.get();
  StmtUse use(stmt);
  if (bind_text(stmt, 1, key) != SQLITE_OK) return error("bind idempotency key");
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) return std::optional<Seq>(sqlite3_column_int64(stmt, 0));
  if (rc == SQLITE_DONE) return std::optional<Seq>();
  return error("find idempotency key");
}

Result<Seq> SqliteJournal::insert_batch(std::span<const NewEvent> batch, AppendResult& result) {
  sqlite3_stmt* stmt = insert_event_.get();
  Seq next = last_seq_ + 1;
  for (const NewEvent& event : batch) {
    const bool keyed = !event.idempotency_key.empty();
    {
      StmtUse use(stmt);
      if (sqlite3_bind_int64(stmt, 1, next) != SQLITE_OK ||
          sqlite3_bind_int64(stmt, 2, to_micros(event.time)) != SQLITE_OK ||
          bind_text(stmt, 3, event.type) != SQLITE_OK ||
          (keyed ? bind_text(stmt, 4, event.idempotency_key) : sqlite3_bind_null(stmt, 4)) !=
              SQLITE_OK ||
          bind_blob(stmt, 5, event.payload) != SQLITE_OK ||
          sqlite3_bind_int64(stmt, 6,
                             event_sum(next, to_micros(event.time), event.type,
                                       event.idempotency_key, event.payload)) != SQLITE_OK) {
        return error(fmt::format("bind event {}", next));
      }
      if (sqlite3_step(stmt) != SQLITE_DONE) return error(fmt::format("insert event {}", next));
    }
    if (keyed && sqlite3_changes64(db_.get()) == 0) {
      // The key is already journaled, earlier or earlier in this batch (same transaction).
      GF_ASSIGN_OR_RETURN(std::optional<Seq> original, lookup_key(event.idempotency_key));
      if (!original) {
        return internal_error("sqlite journal '" + path_ + "': idempotency key '" +
                              event.idempotency_key + "' conflicted but cannot be found");
      }
      result.seqs.push_back(*original);
      result.duplicate.push_back(true);
      continue;
    }
    for (const HistoryRecord& h : event.history) GF_RETURN_IF_ERROR(insert_history(next, h));
    result.seqs.push_back(next);
    result.duplicate.push_back(false);
    ++next;
  }
  return next;
}

Result<AppendResult> SqliteJournal::append(std::span<const NewEvent> batch) {
  if (replaying_) return internal_error("sqlite journal: append called from inside replay");
  AppendResult result;
  if (batch.empty()) return result;
  result.seqs.reserve(batch.size());
  result.duplicate.reserve(batch.size());

  if (Status s = run(begin_.get(), "begin append"); !s.ok()) {
    abort_transaction();
    return s;
  }
  Result<Seq> next = insert_batch(batch, result);
  if (!next.ok()) {
    abort_transaction();
    return next.status();
  }
  if (Status s = run(commit_.get(), "commit append"); !s.ok()) {
    abort_transaction();
    return s;
  }
  last_seq_ = *next - 1;
  return result;
}

Status SqliteJournal::replay(Seq after, const std::function<Status(const EventRecord&)>& fn) {
  if (replaying_) return internal_error("sqlite journal: replay called from inside replay");
  replaying_ = true;
  struct Done {
    bool& flag;
    ~Done() { flag = false; }
  } done{replaying_};

  sqlite3_stmt* stmt = replay_.get();
  StmtUse use(stmt);
  if (sqlite3_bind_int64(stmt, 1, after) != SQLITE_OK) return error("bind replay start");
  EventRecord record;  // Reused so each row's strings reuse the previous row's capacity.
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) return ok_status();
    if (rc != SQLITE_ROW) return error(fmt::format("replay after {}", after));
    GF_RETURN_IF_ERROR(read_event_row(stmt, record));
    GF_RETURN_IF_ERROR(fn(record));
  }
}

Status SqliteJournal::read_event_row(sqlite3_stmt* stmt, EventRecord& record) const {
  record.seq = sqlite3_column_int64(stmt, 0);
  const int64_t time_us = sqlite3_column_int64(stmt, 1);
  record.time = from_micros(time_us);
  assign_column(stmt, 2, record.type);
  assign_column(stmt, 3, record.idempotency_key);
  assign_column(stmt, 4, record.payload);
  if (sqlite3_column_type(stmt, 5) == SQLITE_NULL) return ok_status();  // written before sums
  if (sqlite3_column_int64(stmt, 5) !=
      event_sum(record.seq, time_us, record.type, record.idempotency_key, record.payload)) {
    return damaged(fmt::format("event {} does not match the checksum written with it", record.seq));
  }
  return ok_status();
}

Status SqliteJournal::damaged(const std::string& what) const {
  return Status(ErrorCode::kInternal,
                fmt::format("journal '{}' is damaged: {}; it cannot be trusted from there on "
                            "(docs/operations.md \"A damaged journal\")",
                            path_, what));
}

Status SqliteJournal::verify(Seq upto, const std::function<Status(const EventRecord&)>& each,
                             Seq from, bool whole_file) {
  // Not whole (the check at open): the tables a restart reads. The history tables, which grow
  // with the fleet's past, are checked row by row as they are read (and whole by `journal
  // verify`), so opening costs what is live, not what ever was.
  for (const char* table : whole_file ? std::vector<const char*>{""}
                                      : std::vector<const char*>{"events", "snapshots", "meta"}) {
    const std::string sql = *table == '\0' ? std::string("PRAGMA integrity_check")
                                           : fmt::format("PRAGMA integrity_check({})", table);
    GF_ASSIGN_OR_RETURN(std::string check, query_text(db_.get(), path_, sql));
    if (check != "ok") return damaged("SQLite's integrity check says: " + check);
  }
  sqlite3_stmt* stmt = verify_.get();
  StmtUse use(stmt);
  if (sqlite3_bind_int64(stmt, 1, upto) != SQLITE_OK ||
      sqlite3_bind_int64(stmt, 2, from) != SQLITE_OK)
    return error("bind verify range");
  EventRecord record;
  Seq expected = from + 1;
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      return damaged(fmt::format("reading the events after seq {}: {}", expected - 1,
                                 sqlite3_errmsg(db_.get())));
    }
    GF_RETURN_IF_ERROR(read_event_row(stmt, record));
    // Compaction leaves gaps at or below where it got (the audit records it keeps longer).
    if (record.seq != expected && record.seq - 1 > compacted_through_)
      return damaged(fmt::format("events {} to {} are missing", expected, record.seq - 1));
    expected = record.seq + 1;
    if (each) GF_RETURN_IF_ERROR(each(record));
  }
  expected = std::max(expected, std::min(compacted_through_, upto) + 1);
  if (expected - 1 < std::min(upto, last_seq_))
    return damaged(fmt::format("events after seq {} are missing", expected - 1));
  return ok_status();
}

Result<Seq> SqliteJournal::last_seq() { return last_seq_; }

Result<std::optional<Seq>> SqliteJournal::find_key(const std::string& key) {
  if (key.empty()) return std::optional<Seq>();  // Events without a key are never indexed.
  return lookup_key(key);
}

Status SqliteJournal::save_snapshot(const Snapshot& snapshot) {
  if (replaying_) return internal_error("sqlite journal: save_snapshot called from inside replay");
  if (snapshot.seq < 0) {
    return validation_error(fmt::format("snapshot seq {} is negative", snapshot.seq));
  }
  if (Status s = run(begin_.get(), "begin snapshot"); !s.ok()) {
    abort_transaction();
    return s;
  }
  Status status = [&]() -> Status {
    sqlite3_stmt* stmt = insert_snapshot_.get();
    StmtUse use(stmt);
    if (sqlite3_bind_int64(stmt, 1, snapshot.seq) != SQLITE_OK ||
        bind_blob(stmt, 2, snapshot.data) != SQLITE_OK ||
        sqlite3_bind_int64(stmt, 3, snapshot_sum(snapshot.seq, snapshot.data)) != SQLITE_OK) {
      return error("bind snapshot");
    }
    if (sqlite3_step(stmt) != SQLITE_DONE) return error("insert snapshot");
    return ok_status();
  }();
  if (status.ok()) status = run(prune_snapshots_.get(), "prune snapshots");
  if (status.ok()) status = run(commit_.get(), "commit snapshot");
  if (!status.ok()) abort_transaction();
  return status;
}

Result<std::optional<Snapshot>> SqliteJournal::latest_snapshot() {
  sqlite3_stmt* stmt = latest_snapshot_.get();
  StmtUse use(stmt);
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return std::optional<Snapshot>();
  if (rc != SQLITE_ROW) return error("read latest snapshot");
  Snapshot snapshot;
  snapshot.seq = sqlite3_column_int64(stmt, 0);
  snapshot.data = column_string(stmt, 1);
  if (sqlite3_column_type(stmt, 2) != SQLITE_NULL &&
      sqlite3_column_int64(stmt, 2) != snapshot_sum(snapshot.seq, snapshot.data)) {
    return damaged(fmt::format("the snapshot at seq {} does not match the checksum written with it",
                               snapshot.seq));
  }
  return std::optional<Snapshot>(std::move(snapshot));
}

Result<std::string> SqliteJournal::pragma(std::string_view name) {
  if (name.empty()) return validation_error("pragma name is empty");
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') {
      return validation_error("pragma name '" + std::string(name) + "' is not an identifier");
    }
  }
  return query_text(db_.get(), path_, "PRAGMA " + std::string(name));
}

}  // namespace gf
