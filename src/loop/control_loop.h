// The single writer. Each batch: take queued requests → validate and decide → apply their events
// → run controllers (their events join the batch) → append the whole batch to the journal in one
// transaction → answer the requests → publish a read view → hand intents to drivers.
//
// Events are applied to the state before the append so that every request in a batch validates
// against the effects of the ones before it; a failed append therefore leaves memory ahead of
// disk, and the loop stops (fails every waiting request with Unavailable) rather than serve a
// state the journal does not have. A restart rebuilds from the journal.
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/metrics.h"
#include "journal/journal.h"
#include "loop/controller.h"
#include "loop/publish_feed.h"
#include "state/fleet_state.h"

namespace gf {

struct LoopOptions {
  size_t max_batch_requests = 1024;
  // Snapshots: at the soonest every this many events, and once the journal grew by the last
  // snapshot's size (maybe_snapshot); 0 = never.
  int64_t snapshot_every_events = 10000;
  int max_controller_rounds = 8;  // controllers re-run while they produce events
  // Compaction after each snapshot (docs/operations.md "What is kept where"): events the older
  // of the two kept snapshots holds that are older than this leave the live journal (at least
  // 24 h, the idempotency keys' window); none = never compact.
  std::optional<Duration> journal_retention;
  Duration audit_retention = std::chrono::hours(24 * 90);  // audit records' own retention
};

class ControlLoop {
 public:
  ControlLoop(LoopOptions options, Clock& clock, Journal& journal, Metrics& metrics);
  ~ControlLoop();
  ControlLoop(const ControlLoop&) = delete;
  ControlLoop& operator=(const ControlLoop&) = delete;

  // Rebuilds state from the latest snapshot plus the journal after it. Call once, first. A
  // journal other processes write while this one reads (a follower replica's) may grow during
  // the replay: `shared` accepts that (catch_up() applies the rest).
  Status recover(bool shared = false);

  // Registration happens before start()/drain(); the loop does not own them.
  void add_controller(Controller* controller);
  void add_driver(const std::string& name, Driver* driver);
  // Sees every applied event (replay included) and adds to each published view.
  void add_observer(EventObserver* observer);

  // Thread-safe. The future is fulfilled once the request's events are durable (or rejected).
  std::future<Outcome> submit(Request request);
  // Thread-safe. Queues the request when the loop's clock reaches `at`.
  void submit_at(Time at, Request request);

  // Manual mode (tests, simulation): runs batches on the caller's thread until no request is
  // queued and nothing is due at the clock's current time. Returns the number of batches.
  size_t drain();
  // The earliest time something is due (a queued timer or a controller's wake-up).
  std::optional<Time> next_wake() const;

  // Thread mode (serve): runs batches on a thread of its own, waiting for requests or the next
  // wake-up. stop() finishes queued requests, records controlplane.stopped, snapshots, joins.
  void start();
  void stop(const std::string& reason);

  // Follower mode (a replica that does not lead, docs/replication.md): publish eagerly after
  // every catch_up, with no loop thread and no controllers. Call once after recover().
  void follow();
  // Follower mode: applies what the leader journaled after the applied seq, in order, and
  // publishes. Returns the number of events applied. Only from the thread that follows, never
  // once start() was called.
  Result<int64_t> catch_up();

  // The state as of the last batch; safe from any thread.
  std::shared_ptr<const FleetView> view() const;
  // Each view published in thread and follower mode, for waiters without a thread (watch
  // streams); closed when the loop is destroyed. Manual mode publishes lazily and never here.
  std::shared_ptr<PublishFeed> feed() const { return feed_; }
  // The seq of what view() would answer now, without building a view (manual mode builds views
  // lazily). Safe from any thread.
  Seq published_seq() const;
  // Waits until the published view has applied `seq` (read-your-writes on a follower); false
  // when `timeout` passes first. Safe from any thread.
  bool wait_for_seq(Seq seq, Duration timeout) const;
  // Benchmarks: record the controllers' time (nanoseconds) of every batch into `out`.
  void record_controller_timings(std::vector<int64_t>* out) { batch_timings_ = out; }
  // The writer's state: only from the loop thread, or in manual mode.
  const FleetState& state() const { return state_; }
  bool failed() const;
  // Why the loop stopped taking writes ("" while it takes them): the journal failure it met.
  std::string failure() const;

 private:
  struct Pending {
    Request request;
    std::promise<Outcome> promise;
  };
  struct Ack {
    std::promise<Outcome> promise;
    Outcome outcome;
  };

  bool run_batch(Time now, std::vector<Pending> requests, const std::vector<Event>& extra);
  // Applies one decided event to the working state and adds it to the batch. Returns false
  // when the event was skipped as an idempotent repeat.
  bool stage(const Event& event, const std::string& key, Time now, std::vector<NewEvent>& batch);
  // Decides one request (idempotency, handler) and stages its events; never throws.
  void run_request(const Request& req, Time now, Outcome& outcome, std::vector<NewEvent>& batch,
                   std::vector<Intent>& intents);
  void stage_audit(const Request& req, const Outcome& outcome, Time now,
                   std::vector<NewEvent>& batch);
  void run_controllers(Time now, std::vector<NewEvent>& batch, std::vector<Intent>& intents);
  bool commit(const std::vector<NewEvent>& batch, const std::vector<Intent>& intents,
              std::vector<Ack>& acks);
  void fail(const std::string& why, std::vector<Ack>& acks);
  void publish();
  void maybe_snapshot(bool force);
  bool snapshot_due(Seq seq) const;
  // Saves a serialized snapshot of the state at `seq`, then compacts (on the loop thread).
  void save_snapshot(Seq seq, std::string data, int64_t started_nanos);
  // Saves the snapshot serialized off the loop once it is ready; `wait`: even if it is not yet.
  void finish_pending_snapshot(bool wait);
  void compact(Seq through);
  std::vector<Pending> take_pending(Time now);
  bool work_due(Time now) const;
  void thread_main();

  const LoopOptions options_;
  Clock& clock_;
  Journal& journal_;
  Metrics& metrics_;
  // How long each snapshot held the loop: the state's image and the save, not the serialization
  // a threaded loop leaves to another thread.
  Histogram& snapshot_loop_latency_;
  std::vector<Controller*> controllers_;
  std::map<Controller*, std::optional<Time>> wake_;
  std::map<std::string, Driver*> drivers_;
  std::vector<EventObserver*> observers_;
  // Applies one event to the state and shows it to the observers.
  Status apply(const EventRecord& record, const Json& payload);
  // The same for a job.submitted event given by its job (Event::job).
  Status apply_submitted(const EventRecord& record, Job job);
  std::shared_ptr<const FleetView> make_view() const;

  FleetState state_;
  bool controllers_dirty_ = true;  // run controllers on the first batch after recovery
  Seq last_snapshot_seq_ = 0;
  int64_t last_snapshot_bytes_ = 0;   // the size of the last snapshot saved or loaded
  int64_t bytes_since_snapshot_ = 0;  // payload bytes appended since
  // A threaded loop's snapshot being serialized by another thread (std::async) from the state's
  // image at `seq`; the loop saves it when it is ready (finish_pending_snapshot).
  struct PendingSnapshot {
    Seq seq = 0;
    int64_t started_nanos = 0;
    std::future<std::string> data;
  };
  std::optional<PendingSnapshot> pending_snapshot_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  TimerQueue timers_;
  bool timers_changed_ = false;  // guarded by mu_: submit_at added a timer since the loop looked
  bool stopping_ = false;
  bool failed_ = false;
  std::string failure_;  // guarded by mu_
  std::thread thread_;
  std::string stop_reason_;

  mutable std::mutex view_mu_;
  // Thread mode publishes after every batch (a reader sees its own acknowledged write). Manual
  // mode publishes lazily on the next view() call, from the same thread: a simulation that reads
  // rarely does not copy changed clusters after every batch.
  mutable std::shared_ptr<const FleetView> view_;
  mutable std::condition_variable view_cv_;  // notified on every publish
  const std::shared_ptr<PublishFeed> feed_ = std::make_shared<PublishFeed>();
  mutable bool view_stale_ = false;
  bool threaded_ = false;
  std::vector<int64_t>* batch_timings_ = nullptr;
};

}  // namespace gf
