// The leader's lease in PostgreSQL (docs/replication.md): one row, gf_lease(id = 1), with a
// monotonically increasing epoch. Times are the database's own clock (clock_timestamp()), so
// replicas' clocks never need to agree.
//
//   take:   UPDATE … SET epoch = epoch + 1, holder, url, expires_at = now + lease
//           WHERE expires_at < now                 (free or expired: at most one replica wins)
//   renew:  UPDATE … SET expires_at = now + lease WHERE epoch = mine AND holder = me
//   resign: UPDATE … SET expires_at = '-infinity' WHERE epoch = mine   (graceful stop: no wait)
//
// Taking the lease waits for appends in flight (they hold the row FOR SHARE, see
// postgres_journal.h) and bumps the epoch, which fences every later append of the old leader.
//
// The same object also keeps the replica's row in gf_replicas and listens for the journal's
// notifications. Not thread-safe: one thread (the replica's manager) uses it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "journal/journal.h"
#include "journal/postgres/pg.h"

namespace gf {

struct LeaseInfo {
  int64_t epoch = 0;
  std::string holder;      // replica id ("" before the first leader)
  std::string url;         // the leader's API URL, where followers send writers
  double remaining_s = 0;  // seconds until it expires (negative: expired)
};

struct ReplicaRow {
  std::string id;
  std::string url;
  std::string role;  // "leader" | "follower"
  int64_t epoch = 0;
  Seq applied_seq = 0;
  double seen_ago_s = 0;  // seconds since the replica last wrote its row
};

class PostgresLease {
 public:
  // Connects, creates the schema when absent, and LISTENs for the journal's notifications.
  static Result<std::unique_ptr<PostgresLease>> open(const std::string& url, std::string holder);

  // Takes the lease if it is free or expired: the new epoch, or nullopt when another holds it.
  Result<std::optional<int64_t>> try_take(Duration lease, const std::string& my_url);
  // Extends the lease held at `epoch`: false when it was lost (another replica took it).
  Result<bool> renew(int64_t epoch, Duration lease);
  // Gives the lease up at once (graceful stop), so a follower need not wait for it to expire.
  Status resign(int64_t epoch);
  Result<LeaseInfo> read();

  // Writes this replica's row; reads every replica's row.
  Status report(const ReplicaRow& me);
  Result<std::vector<ReplicaRow>> replicas();

  // Waits up to `timeout` for journal notifications: the highest seq notified, or 0.
  Result<Seq> wait_for_events(Duration timeout);

  const std::string& holder() const { return holder_; }

 private:
  PostgresLease(pg::Connection conn, std::string holder)
      : conn_(std::move(conn)), holder_(std::move(holder)) {}
  Result<Seq> drain_notifications();

  pg::Connection conn_;
  std::string holder_;
};

}  // namespace gf
