// One replica of a control plane on PostgreSQL (docs/replication.md): who leads, by the lease.
//
// A replica starts as a follower: it tails the journal (LISTEN/NOTIFY wakes it, a catch-up read
// applies what was committed) and tries to take the lease every renew interval. The replica that
// takes it fences its journal by the new epoch, applies everything its predecessor committed, and
// starts the loop and drivers: controllers are level-triggered, so what the state shows undone
// is re-issued, and idempotency keys keep what was done from being done twice. The leader renews
// every renew interval; when a renewal finds the lease taken, or an append is refused by the
// fence, it steps down: its runtime (memory possibly ahead of the journal) is thrown away and a
// follower is rebuilt from the journal.
//
// The manager runs on a thread of its own and is the only caller of the lease; the host (serve)
// owns the journal and runtime.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/api.h"
#include "core/clock.h"
#include "core/json.h"
#include "journal/postgres/postgres_lease.h"

namespace gf {

struct ReplicaOptions {
  std::string id;   // unique among the replicas (default: host:port of the API)
  std::string url;  // this replica's API URL, where followers send writers when it leads
  Duration lease = seconds(5);
  Duration renew_every = Duration{};  // default lease / 3
};

// What the manager drives: the serving replica's journal and runtime.
class ReplicaHost {
 public:
  virtual ~ReplicaHost() = default;
  // Follower: applies what was journaled after the applied seq; returns the applied seq.
  virtual Result<Seq> catch_up() = 0;
  // The seq of the state this replica serves.
  virtual Seq applied_seq() const = 0;
  // Becomes the leader at `epoch`: fence the journal, catch up, start the loop and drivers.
  virtual Status lead(int64_t epoch) = 0;
  // The leading loop stopped (an append refused by the fence, or the database lost).
  virtual bool failed() const = 0;
  // Stops leading and rebuilds a follower from the journal.
  virtual Status step_down(const std::string& why) = 0;
};

class ReplicaManager {
 public:
  ReplicaManager(ReplicaOptions options, std::unique_ptr<PostgresLease> lease, ReplicaHost& host,
                 const Clock& clock);
  ~ReplicaManager();
  ReplicaManager(const ReplicaManager&) = delete;
  ReplicaManager& operator=(const ReplicaManager&) = delete;

  // Runs the first round on the caller's thread (so serve prints its role), then the rest on a
  // thread of its own.
  void start();
  // Stops the thread (the lease is kept until resign() or its expiry).
  void stop();
  // Gives the lease up at once if this replica leads, so a follower takes over without waiting
  // (after stop(), once the leader's loop has recorded its stop).
  void resign();

  // Thread-safe; cheap (no database round trip): answered from what the thread last saw.
  ReplicaState state() const;
  // The replicas' rows as last read (JSON array).
  Result<Json> replicas() const;
  // True once this replica has given up for good (stop()).
  bool stopped() const { return stop_.load(); }

 private:
  void run();
  void round();
  void follow_round();
  void lead_round();
  void promote(int64_t epoch);
  // What ReplicaState::store_error says ("" once the database answers again).
  void set_store_error(const std::string& error);
  void demote(const std::string& why);
  void report();
  void wait(Duration d);

  const ReplicaOptions options_;
  std::unique_ptr<PostgresLease> lease_;
  ReplicaHost& host_;
  const Clock& clock_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;  // wakes wait() on stop()

  // The thread's own bookkeeping.
  Time last_renewed_{};
  Time next_report_{};
  Time behind_since_{};  // when the follower first saw the journal ahead of it; {} = caught up

  mutable std::mutex mu_;
  ReplicaState state_;
  Json replicas_ = Json::array();
};

}  // namespace gf
