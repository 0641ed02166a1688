// The replicated journal: events, snapshots and idempotency keys in PostgreSQL 15, for several
// `gpufleet serve` replicas on one database (docs/replication.md).
//
// Layout (schema version 1; every table prefixed gf_, created on first open):
//   gf_events(seq PK, epoch, time_us, type, idem_key, payload)  gapless seq 1, 2, …; bytea text
//   UNIQUE index on sha256(idem_key) WHERE idem_key IS NOT NULL   one event per key, any length
//   gf_snapshots(seq PK, data)                                     latest two kept
//   gf_lease(id = 1, epoch, holder, url, expires_at)               the leader's lease (lease.h)
//   gf_replicas(id PK, url, role, epoch, applied_seq, seen_at)     what each replica last said
//   gf_history(row, seq, kind, id, name, tenant, state, created_us, ended_us, record)
//   gf_history_runs(row, job_id, job_queue, quota_share, cluster, start_us, end_us,
//                   micros_per_hour)                                 what left the hot state
//   gf_meta(key PK, value)                                         "schema_version" = 1
//
// Group commit: append() writes a whole batch in one transaction (binary COPY), so a loop batch
// costs one commit. Fencing: once set_epoch(E) is called, every append and snapshot first reads
// the lease row FOR SHARE and fails unless its epoch is still E. A lease taken over by another
// replica bumps the epoch under a row lock, so an old leader's transaction fails in the database
// whatever that leader believes (a paused process that wakes after its lease). Without an epoch
// the journal is a single writer's, like SQLite's (tests, tools).
//
// Threading: not thread-safe; one object is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "journal/journal.h"
#include "journal/postgres/pg.h"

namespace gf {

// The NOTIFY channel an append signals on commit, with the batch's last seq as payload.
inline constexpr std::string_view kEventsChannel = "gf_events";

class PostgresJournal final : public Journal {
 public:
  // Connects and creates the schema when absent (serialized by an advisory lock, so replicas
  // starting together do not race). Fails on a database written by a newer schema version.
  // With a `lease`, the server ends this connection's session when it sits inside a transaction
  // a lease long without a word, or runs one statement for several leases (a leader paused
  // mid-append): its lock on the lease row is then released and a follower can take over.
  static Result<std::unique_ptr<PostgresJournal>> open(const std::string& url,
                                                       Duration lease = Duration{});

  Result<AppendResult> append(std::span<const NewEvent> batch) override;
  Status replay(Seq after, const std::function<Status(const EventRecord&)>& fn) override;
  Result<Seq> last_seq() override;
  Result<std::optional<Seq>> find_key(const std::string& key) override;
  Status save_snapshot(const Snapshot& snapshot) override;
  Result<std::optional<Snapshot>> latest_snapshot() override;
  // Fails unless the lease is still at this journal's epoch (always OK unfenced).
  Status check_fence() override;
  // The history tables gf_history and gf_history_runs (postgres_history.cpp); a reader has a
  // connection of its own.
  bool keeps_history() const override { return true; }
  Result<std::unique_ptr<HistoryReader>> open_history_reader() override;

  // Fences every later append and snapshot by this lease epoch (0 = unfenced), and re-reads the
  // last seq: call it right after taking the lease, before the first append as leader.
  Status set_epoch(int64_t epoch);
  int64_t epoch() const { return epoch_; }

 private:
  explicit PostgresJournal(pg::Connection conn) : conn_(std::move(conn)) {}
  // BEGIN, and with an epoch, the fence: fails (and rolls back) unless the lease still has it.
  Status begin_fenced(std::string_view what);
  void rollback();
  Result<Seq> read_last_seq();
  // One transaction; with look_up_keys, keys already journaled are answered as duplicates,
  // without, a journaled key fails the COPY and sets *key_conflict.
  Result<AppendResult> append_once(std::span<const NewEvent> batch, bool look_up_keys,
                                   bool* key_conflict);
  Status commit_append(Seq next);
  // Files one history record (and its runs) inside the open append transaction.
  Status insert_history(Seq seq, const HistoryRecord& h);
  // The seqs of the keys of `batch` already journaled, keyed by key.
  Result<std::vector<std::pair<std::string, Seq>>> existing_keys(std::span<const NewEvent> batch);

  pg::Connection conn_;
  std::string url_;
  int64_t epoch_ = 0;
  // Invariant: MAX(seq) of gf_events whenever no append is in progress (single writer).
  Seq last_seq_ = 0;
};

// Creates the schema if absent (used by the journal and the lease, whichever opens first).
Status ensure_postgres_schema(pg::Connection& conn);

}  // namespace gf
