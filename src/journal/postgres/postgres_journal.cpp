#include "journal/postgres/postgres_journal.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <unordered_map>

namespace gf {
namespace {

constexpr int kSchemaVersion = 1;
// Any constant: the advisory lock that serializes schema creation between replicas.
constexpr int64_t kSchemaLockId = 7470001;
// Keys looked up per query (each is one parameter).
constexpr size_t kKeysPerLookup = 1000;
// Events read per replay query.
constexpr int kReplayChunk = 2000;

constexpr const char* kCreateSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS gf_meta(key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS gf_events(
  seq bigint PRIMARY KEY,
  epoch bigint NOT NULL,
  time_us bigint NOT NULL,
  type bytea NOT NULL,
  idem_key bytea,
  payload bytea NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS gf_events_idem_key ON gf_events(sha256(idem_key))
  WHERE idem_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS gf_snapshots(seq bigint PRIMARY KEY, data bytea NOT NULL);
CREATE TABLE IF NOT EXISTS gf_lease(
  id int PRIMARY KEY CHECK (id = 1),
  epoch bigint NOT NULL,
  holder text NOT NULL,
  url text NOT NULL,
  expires_at timestamptz NOT NULL);
INSERT INTO gf_lease VALUES (1, 0, '', '', '-infinity') ON CONFLICT DO NOTHING;
CREATE TABLE IF NOT EXISTS gf_replicas(
  id text PRIMARY KEY,
  url text NOT NULL,
  role text NOT NULL,
  epoch bigint NOT NULL,
  applied_seq bigint NOT NULL,
  seen_at timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS gf_history(
  row bigserial PRIMARY KEY,
  seq bigint NOT NULL,
  kind text NOT NULL,
  id text NOT NULL,
  name text NOT NULL,
  tenant text NOT NULL,
  state text NOT NULL,
  created_us bigint NOT NULL,
  ended_us bigint NOT NULL,
  record bytea NOT NULL);
CREATE INDEX IF NOT EXISTS gf_history_id ON gf_history(kind, id);
CREATE INDEX IF NOT EXISTS gf_history_name ON gf_history(kind, name);
CREATE INDEX IF NOT EXISTS gf_history_tenant ON gf_history(kind, tenant, ended_us);
CREATE INDEX IF NOT EXISTS gf_history_ended ON gf_history(kind, ended_us);
CREATE TABLE IF NOT EXISTS gf_history_runs(
  row bigserial PRIMARY KEY,
  job_id text NOT NULL,
  job_queue text NOT NULL,
  quota_share text NOT NULL,
  cluster text NOT NULL,
  start_us bigint NOT NULL,
  end_us bigint NOT NULL,
  micros_per_hour bigint NOT NULL);
CREATE INDEX IF NOT EXISTS gf_history_runs_end ON gf_history_runs(end_us);
INSERT INTO gf_meta VALUES ('schema_version', '1') ON CONFLICT DO NOTHING;
)sql";

using HistoryToFile = std::vector<std::pair<Seq, const std::vector<HistoryRecord>*>>;

// The batch's new events as rows of gf_events' binary COPY, from seq `last` + 1 on. An event whose
// idempotency key `keys` already holds (in the journal, or earlier in this batch) is not written:
// it answers with that event's seq. The jobs an event retires go to `filed` with its seq. Returns
// the last seq written (`last` when every event was a repeat).
Seq encode_rows(std::span<const NewEvent> batch, Seq last, int64_t epoch,
                std::unordered_map<std::string, Seq>& keys, AppendResult& result,
                pg::CopyWriter& copy, HistoryToFile& filed) {
  result.seqs.reserve(batch.size());
  result.duplicate.reserve(batch.size());
  Seq next = last;
  for (const NewEvent& e : batch) {
    if (!e.idempotency_key.empty()) {
      auto [it, inserted] = keys.emplace(e.idempotency_key, next + 1);
      if (!inserted) {
        result.seqs.push_back(it->second);
        result.duplicate.push_back(true);
        continue;
      }
    }
    ++next;
    copy.begin_row(6);
    copy.add_int8(next);
    copy.add_int8(epoch);
    copy.add_int8(to_micros(e.time));
    copy.add_bytes(e.type);
    if (e.idempotency_key.empty())
      copy.add_null();
    else
      copy.add_bytes(e.idempotency_key);
    copy.add_bytes(e.payload);
    if (!e.history.empty()) filed.emplace_back(next, &e.history);
    result.seqs.push_back(next);
    result.duplicate.push_back(false);
  }
  return next;
}

}  // namespace

Status ensure_postgres_schema(pg::Connection& conn) {
  Status st = [&]() -> Status {
    GF_RETURN_IF_ERROR(
        conn.exec(fmt::format("BEGIN; SELECT pg_advisory_xact_lock({})", kSchemaLockId),
                  "schema lock")
            .status());
    GF_RETURN_IF_ERROR(conn.exec(kCreateSchemaSql, "creating the schema").status());
    GF_ASSIGN_OR_RETURN(
        auto version,
        conn.exec("SELECT value FROM gf_meta WHERE key = 'schema_version'", "schema version"));
    const int v =
        pg::rows(version.get()) == 1 ? std::atoi(pg::get_text(version.get(), 0, 0).c_str()) : 0;
    if (v > kSchemaVersion) {
      return internal_error(fmt::format(
          "the database was written by a newer gpufleet (schema version {}, this build knows {})",
          v, kSchemaVersion));
    }
    return conn.exec("COMMIT", "creating the schema").status();
  }();
  if (!st.ok()) (void)conn.exec("ROLLBACK", "rollback");
  return st;
}

Result<std::unique_ptr<PostgresJournal>> PostgresJournal::open(const std::string& url,
                                                               Duration lease) {
  GF_ASSIGN_OR_RETURN(pg::Connection conn, pg::Connection::open(url));
  if (lease > Duration{}) {
    // A leader paused inside a transaction holds the lease row: the server ends its session
    // after a lease of silence, or after a few leases of one statement (a COPY it was sending).
    const int64_t ms = std::max<int64_t>(1, lease.count() / 1000);
    GF_RETURN_IF_ERROR(conn.set_session(
        fmt::format("SET idle_in_transaction_session_timeout = {}; SET statement_timeout = {}", ms,
                    std::max<int64_t>(5000, 4 * ms))));
  }
  GF_RETURN_IF_ERROR(ensure_postgres_schema(conn));
  std::unique_ptr<PostgresJournal> j(new PostgresJournal(std::move(conn)));
  j->url_ = url;
  GF_ASSIGN_OR_RETURN(j->last_seq_, j->read_last_seq());
  return j;
}

Result<Seq> PostgresJournal::read_last_seq() {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(auto r, conn_.exec_params("SELECT COALESCE(MAX(seq), 0)::int8 FROM gf_events",
                                                {}, "reading the last seq"));
  return pg::get_int8(r.get(), 0, 0);
}

Status PostgresJournal::set_epoch(int64_t epoch) {
  epoch_ = epoch;
  GF_ASSIGN_OR_RETURN(last_seq_, read_last_seq());
  return ok_status();
}

void PostgresJournal::rollback() { (void)conn_.exec("ROLLBACK", "rollback"); }

Status PostgresJournal::begin_fenced(std::string_view what) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  if (epoch_ == 0) return conn_.exec("BEGIN", what).status();
  auto r = conn_.exec("BEGIN; SELECT epoch FROM gf_lease WHERE id = 1 FOR SHARE", what);
  if (!r.ok()) {
    rollback();
    return r.status();
  }
  const int64_t current =
      pg::rows(r->get()) == 1 ? std::atoll(pg::get_text(r->get(), 0, 0).c_str()) : -1;
  if (current != epoch_) {
    rollback();
    return unavailable_error(fmt::format(
        "fenced: this replica led at lease epoch {} but the lease is now at epoch {}; another "
        "replica leads and nothing of this batch was written",
        epoch_, current));
  }
  return ok_status();
}

Result<std::vector<std::pair<std::string, Seq>>> PostgresJournal::existing_keys(
    std::span<const NewEvent> batch) {
  std::vector<std::pair<std::string, Seq>> found;
  std::vector<pg::Param> params;
  auto flush = [&]() -> Status {
    if (params.empty()) return ok_status();
    std::string sql = "SELECT idem_key, seq FROM gf_events WHERE sha256(idem_key) IN (";
    for (size_t i = 0; i < params.size(); ++i) {
      sql += fmt::format("{}sha256(${}::bytea)", i ? "," : "", i + 1);
    }
    sql += ") AND idem_key IS NOT NULL";
    GF_ASSIGN_OR_RETURN(auto r, conn_.exec_params(sql, params, "looking up idempotency keys"));
    for (int i = 0; i < pg::rows(r.get()); ++i) {
      found.emplace_back(pg::get_bytes(r.get(), i, 0), pg::get_int8(r.get(), i, 1));
    }
    params.clear();
    return ok_status();
  };
  for (const NewEvent& e : batch) {
    if (e.idempotency_key.empty()) continue;
    params.push_back(pg::bytes(e.idempotency_key));
    if (params.size() == kKeysPerLookup) GF_RETURN_IF_ERROR(flush());
  }
  GF_RETURN_IF_ERROR(flush());
  return found;
}

Result<AppendResult> PostgresJournal::append(std::span<const NewEvent> batch) {
  if (batch.empty()) return AppendResult{};
  // Optimistic first: the loop already skips keys it knows, so a key is rarely journaled yet.
  // The unique index says when one is; then the batch is written again with the keys looked up.
  bool key_conflict = false;
  auto first = append_once(batch, /*look_up_keys=*/false, &key_conflict);
  if (first.ok() || !key_conflict) return first;
  return append_once(batch, /*look_up_keys=*/true, &key_conflict);
}

Result<AppendResult> PostgresJournal::append_once(std::span<const NewEvent> batch,
                                                  bool look_up_keys, bool* key_conflict) {
  AppendResult result;
  GF_RETURN_IF_ERROR(begin_fenced("append"));
  auto failed = [this](Status st) {
    rollback();
    // The commit may or may not have happened (a lost connection): re-read before the next.
    if (auto last = read_last_seq(); last.ok()) last_seq_ = *last;
    return st;
  };
  std::unordered_map<std::string, Seq> keys;
  if (look_up_keys) {
    auto existing = existing_keys(batch);
    if (!existing.ok()) return failed(existing.status());
    keys.insert(existing->begin(), existing->end());
  }
  pg::CopyWriter copy;
  HistoryToFile filed;
  const Seq next = encode_rows(batch, last_seq_, epoch_, keys, result, copy, filed);
  if (next == last_seq_) {
    rollback();
    return result;
  }
  Status st = conn_.copy_in(
      "COPY gf_events(seq, epoch, time_us, type, idem_key, payload) FROM STDIN (FORMAT binary)",
      copy.finish(), "append");
  if (!st.ok()) {
    *key_conflict = conn_.last_sqlstate() == "23505";  // unique_violation
    return failed(st);
  }
  for (const auto& [seq, records] : filed) {
    for (const HistoryRecord& h : *records) {
      if (Status filed_st = insert_history(seq, h); !filed_st.ok()) return failed(filed_st);
    }
  }
  if (Status st = commit_append(next); !st.ok()) return failed(st);
  last_seq_ = next;
  return result;
}

// COMMIT of an append whose last seq is `next`, with the notification followers wait for. A
// session lost around the COMMIT may have committed: the server is asked, so a committed batch is
// not reported as "nothing recorded" (its writers would send it again).
Status PostgresJournal::commit_append(Seq next) {
  // The notification is delivered to followers only if the transaction commits.
  auto committed = conn_.exec(
      fmt::format("SELECT pg_notify('{}', '{}'); COMMIT", kEventsChannel, next), "append commit");
  if (!committed.ok()) {
    if (!conn_.connected() && conn_.ensure_connected().ok()) {
      auto there = conn_.exec_params(
          "SELECT count(*)::int8 FROM gf_events WHERE seq = $1::int8 AND epoch = $2::int8",
          {pg::int8(next), pg::int8(epoch_)}, "checking an uncertain commit");
      if (there.ok() && pg::get_int8(there->get(), 0, 0) == 1) return ok_status();
    }
    return committed.status();
  }
  // COMMIT of an aborted transaction answers ROLLBACK, not an error.
  if (std::string_view(PQcmdStatus(committed->get())) != "COMMIT") {
    return internal_error("PostgreSQL append: the transaction was rolled back");
  }
  return ok_status();
}

Status PostgresJournal::replay(Seq after, const std::function<Status(const EventRecord&)>& fn) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  Seq from = after;
  while (true) {
    GF_ASSIGN_OR_RETURN(
        auto r, conn_.exec_params(fmt::format("SELECT seq, time_us, type, idem_key, payload FROM "
                                              "gf_events WHERE seq > $1::int8 ORDER BY seq "
                                              "LIMIT {}",
                                              kReplayChunk),
                                  {pg::int8(from)}, "replay"));
    const int n = pg::rows(r.get());
    for (int i = 0; i < n; ++i) {
      EventRecord rec;
      rec.seq = pg::get_int8(r.get(), i, 0);
      rec.time = from_micros(pg::get_int8(r.get(), i, 1));
      rec.type = pg::get_bytes(r.get(), i, 2);
      if (!pg::is_null(r.get(), i, 3)) rec.idempotency_key = pg::get_bytes(r.get(), i, 3);
      rec.payload = pg::get_bytes(r.get(), i, 4);
      from = rec.seq;
      GF_RETURN_IF_ERROR(fn(rec));
    }
    if (n < kReplayChunk) return ok_status();
  }
}

Result<Seq> PostgresJournal::last_seq() { return read_last_seq(); }

Status PostgresJournal::check_fence() {
  if (epoch_ == 0) return ok_status();
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(auto r, conn_.exec("SELECT epoch FROM gf_lease WHERE id = 1", "fence check"));
  const int64_t current =
      pg::rows(r.get()) == 1 ? std::atoll(pg::get_text(r.get(), 0, 0).c_str()) : -1;
  if (current != epoch_) {
    return unavailable_error(
        fmt::format("fenced: this replica led at lease epoch {} but the lease is now at epoch {}",
                    epoch_, current));
  }
  return ok_status();
}

Result<std::optional<Seq>> PostgresJournal::find_key(const std::string& key) {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(auto r, conn_.exec_params("SELECT seq FROM gf_events WHERE sha256(idem_key) "
                                                "= sha256($1::bytea) AND idem_key = $1::bytea",
                                                {pg::bytes(key)}, "find key"));
  if (pg::rows(r.get()) == 0) return std::optional<Seq>();
  return std::optional<Seq>(pg::get_int8(r.get(), 0, 0));
}

Status PostgresJournal::save_snapshot(const Snapshot& snapshot) {
  GF_RETURN_IF_ERROR(begin_fenced("snapshot"));
  Status st = [&]() -> Status {
    GF_RETURN_IF_ERROR(conn_
                           .exec_params("INSERT INTO gf_snapshots(seq, data) VALUES ($1::int8, "
                                        "$2::bytea) ON CONFLICT (seq) DO UPDATE SET data = "
                                        "EXCLUDED.data",
                                        {pg::int8(snapshot.seq), pg::bytes(snapshot.data)},
                                        "snapshot")
                           .status());
    GF_RETURN_IF_ERROR(conn_
                           .exec("DELETE FROM gf_snapshots WHERE seq NOT IN (SELECT seq FROM "
                                 "gf_snapshots ORDER BY seq DESC LIMIT 2); COMMIT",
                                 "snapshot prune")
                           .status());
    return ok_status();
  }();
  if (!st.ok()) rollback();
  return st;
}

Result<std::optional<Snapshot>> PostgresJournal::latest_snapshot() {
  GF_RETURN_IF_ERROR(conn_.ensure_connected());
  GF_ASSIGN_OR_RETURN(auto r, conn_.exec_params("SELECT seq, data FROM gf_snapshots ORDER BY seq "
                                                "DESC LIMIT 1",
                                                {}, "latest snapshot"));
  if (pg::rows(r.get()) == 0) return std::optional<Snapshot>();
  return std::optional<Snapshot>(
      Snapshot{pg::get_int8(r.get(), 0, 0), pg::get_bytes(r.get(), 0, 1)});
}

}  // namespace gf
