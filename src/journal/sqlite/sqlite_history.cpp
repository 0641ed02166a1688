// The SQLite journal's history table (journal/history.h): filing a record in the append's
// transaction, and a reader on a connection of its own for the API's threads.
#include <charconv>
#include <mutex>

#include "core/hash.h"
#include "journal/sqlite/sqlite_journal.h"
#include "journal/sqlite/sqlite_util.h"

namespace gf {
namespace {

using namespace sqlite_util;

// The checksum of a history row as written: FNV-1a 64 of its seq, kind, id and stored record.
int64_t history_sum(int64_t seq, std::string_view kind, std::string_view id,
                    std::string_view stored) {
  uint64_t h = fnv1a_u64(static_cast<uint64_t>(seq));
  h = fnv1a(kind, h);
  h = fnv1a(std::string_view("\0", 1), h);
  h = fnv1a(id, h);
  h = fnv1a(std::string_view("\0", 1), h);
  return static_cast<int64_t>(fnv1a(stored, h));
}

class SqliteHistoryReader final : public HistoryReader {
 public:
  SqliteHistoryReader(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  ~SqliteHistoryReader() override { sqlite3_close_v2(db_); }
  SqliteHistoryReader(const SqliteHistoryReader&) = delete;
  SqliteHistoryReader& operator=(const SqliteHistoryReader&) = delete;

  Result<HistoryPage> query(const HistoryQuery& q) override {
    std::string sql =
        "SELECT row, seq, kind, id, name, tenant, state, created_us, ended_us, record, sum "
        "FROM history WHERE kind = ?1 AND row > ?2";
    int next = 3;
    auto add = [&](bool on, std::string_view clause) {
      if (on) sql += fmt::format(" AND {} ?{}", clause, next++);
    };
    add(q.id.has_value(), "id =");
    add(q.name.has_value(), "name =");
    add(q.tenant.has_value(), "tenant =");
    add(q.state.has_value(), "state =");
    add(q.since.has_value(), "ended_us >=");
    add(q.until.has_value(), "ended_us <");
    const size_t limit = std::clamp<size_t>(q.limit, 1, HistoryQuery::kMaxLimit);
    sql += fmt::format(" ORDER BY row LIMIT {}", limit + 1);

    std::lock_guard lock(mu_);
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
      return db_error(db_, path_, "prepare history query");
    std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> stmt(raw, &sqlite3_finalize);
    int i = 1;
    bind_text(raw, i++, q.kind);
    sqlite3_bind_int64(raw, i++, q.after_row);
    for (const auto* s : {&q.id, &q.name, &q.tenant, &q.state})
      if (s->has_value()) bind_text(raw, i++, **s);
    if (q.since) sqlite3_bind_int64(raw, i++, to_micros(*q.since));
    if (q.until) sqlite3_bind_int64(raw, i++, to_micros(*q.until));
    HistoryPage page;
    for (;;) {
      const int rc = sqlite3_step(raw);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db_error(db_, path_, "read history");
      if (page.records.size() == limit) {
        page.next_row = page.records.back().row;
        break;
      }
      GF_ASSIGN_OR_RETURN(HistoryRecord r, read_row(raw));
      page.records.push_back(std::move(r));
    }
    return page;
  }

  Result<std::vector<HistoryRun>> runs_between(Time from, Time to,
                                               const std::string& cluster) override {
    std::lock_guard lock(mu_);
    sqlite3_stmt* raw = nullptr;
    const char* sql =
        "SELECT job_id, job_queue, quota_share, cluster, start_us, end_us, micros_per_hour "
        "FROM history_runs WHERE end_us > ?1 AND start_us < ?2 AND (?3 = '' OR cluster = ?3) "
        "ORDER BY row";
    if (sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr) != SQLITE_OK)
      return db_error(db_, path_, "prepare history runs query");
    std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> stmt(raw, &sqlite3_finalize);
    sqlite3_bind_int64(raw, 1, to_micros(from));
    sqlite3_bind_int64(raw, 2, to_micros(to));
    bind_text(raw, 3, cluster);
    std::vector<HistoryRun> out;
    for (;;) {
      const int rc = sqlite3_step(raw);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db_error(db_, path_, "read history runs");
      HistoryRun& r = out.emplace_back();
      assign_column(raw, 0, r.job_id);
      assign_column(raw, 1, r.job_queue);
      assign_column(raw, 2, r.quota_share);
      assign_column(raw, 3, r.cluster);
      r.start = from_micros(sqlite3_column_int64(raw, 4));
      r.end = from_micros(sqlite3_column_int64(raw, 5));
      r.micros_per_hour = sqlite3_column_int64(raw, 6);
    }
    return out;
  }

  Result<int64_t> count() override {
    std::lock_guard lock(mu_);
    GF_ASSIGN_OR_RETURN(std::string n, query_text(db_, path_, "SELECT count(*) FROM history"));
    int64_t v = 0;
    std::from_chars(n.data(), n.data() + n.size(), v);
    return v;
  }

 private:
  Result<HistoryRecord> read_row(sqlite3_stmt* stmt) const {
    HistoryRecord r;
    r.row = sqlite3_column_int64(stmt, 0);
    r.seq = sqlite3_column_int64(stmt, 1);
    assign_column(stmt, 2, r.kind);
    assign_column(stmt, 3, r.id);
    assign_column(stmt, 4, r.name);
    assign_column(stmt, 5, r.tenant);
    assign_column(stmt, 6, r.state);
    r.created = from_micros(sqlite3_column_int64(stmt, 7));
    r.ended = from_micros(sqlite3_column_int64(stmt, 8));
    std::string stored;
    assign_column(stmt, 9, stored);
    if (sqlite3_column_int64(stmt, 10) != history_sum(r.seq, r.kind, r.id, stored)) {
      return internal_error(fmt::format(
          "journal '{}' is damaged: the history record of {} {} does not match the checksum "
          "written with it (docs/operations.md \"A damaged journal\")",
          path_, r.kind, r.id));
    }
    GF_ASSIGN_OR_RETURN(r.record, decompress_record(stored, r.kind + " " + r.id));
    return r;
  }

  std::string path_;
  sqlite3* db_;
  std::mutex mu_;
};

}  // namespace

Status SqliteJournal::insert_history(Seq seq, const HistoryRecord& h) {
  sqlite3_stmt* stmt = insert_history_.get();
  if (stmt == nullptr) return internal_error("sqlite journal '" + path_ + "' is read-only");
  const std::string stored = compress_record(h.record);
  StmtUse use(stmt);
  if (sqlite3_bind_int64(stmt, 1, seq) != SQLITE_OK || bind_text(stmt, 2, h.kind) != SQLITE_OK ||
      bind_text(stmt, 3, h.id) != SQLITE_OK || bind_text(stmt, 4, h.name) != SQLITE_OK ||
      bind_text(stmt, 5, h.tenant) != SQLITE_OK || bind_text(stmt, 6, h.state) != SQLITE_OK ||
      sqlite3_bind_int64(stmt, 7, to_micros(h.created)) != SQLITE_OK ||
      sqlite3_bind_int64(stmt, 8, to_micros(h.ended)) != SQLITE_OK ||
      bind_blob(stmt, 9, stored) != SQLITE_OK ||
      sqlite3_bind_int64(stmt, 10, history_sum(seq, h.kind, h.id, stored)) != SQLITE_OK) {
    return error(fmt::format("bind history record {} of event {}", h.id, seq));
  }
  if (sqlite3_step(stmt) != SQLITE_DONE)
    return error(fmt::format("file history record {} of event {}", h.id, seq));
  for (const HistoryRun& r : h.runs) {
    sqlite3_stmt* run = insert_history_run_.get();
    StmtUse run_use(run);
    if (bind_text(run, 1, r.job_id) != SQLITE_OK || bind_text(run, 2, r.job_queue) != SQLITE_OK ||
        bind_text(run, 3, r.quota_share) != SQLITE_OK ||
        bind_text(run, 4, r.cluster) != SQLITE_OK ||
        sqlite3_bind_int64(run, 5, to_micros(r.start)) != SQLITE_OK ||
        sqlite3_bind_int64(run, 6, to_micros(r.end)) != SQLITE_OK ||
        sqlite3_bind_int64(run, 7, r.micros_per_hour) != SQLITE_OK ||
        sqlite3_step(run) != SQLITE_DONE) {
      return error(fmt::format("file a run of history record {} of event {}", h.id, seq));
    }
  }
  return ok_status();
}

Result<std::unique_ptr<HistoryReader>> SqliteJournal::open_history_reader() {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status st = db_error(raw, path_, "open history reader");
    sqlite3_close_v2(raw);
    return st;
  }
  sqlite3_busy_timeout(raw, 5000);
  return std::unique_ptr<HistoryReader>(new SqliteHistoryReader(path_, raw));
}

Result<Seq> SqliteJournal::read_compacted_through() {
  GF_ASSIGN_OR_RETURN(
      std::string v,
      query_text(db_.get(), path_,
                 "SELECT COALESCE((SELECT value FROM meta WHERE key = 'compacted_through'), '0')"));
  Seq seq = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seq);
  if (ec != std::errc() || end != v.data() + v.size() || seq < 0)
    return damaged("meta compacted_through is '" + v + "', not a seq");
  return seq;
}

}  // namespace gf
