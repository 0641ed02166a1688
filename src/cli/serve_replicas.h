// `gpufleet serve --store postgres://…`: one replica of a replicated control plane
// (docs/replication.md). The ReplicatedServer owns the replica's current generation — a journal
// connection and a Runtime over it — and swaps it for a fresh follower when the replica steps
// down; the HTTP server calls through it, so a handler in flight keeps its generation alive.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "journal/postgres/postgres_journal.h"
#include "replica/replica_manager.h"
#include "runtime/runtime.h"

namespace gf {

struct ReplicatedServeConfig {
  std::string store_url;        // postgres:// URL
  Duration lease = seconds(5);  // a leader's connection stuck in a transaction this long ends
  // Makes a runtime over a journal (same options every generation).
  std::function<std::unique_ptr<Runtime>(Journal&)> make_runtime;
  // Called once a replica leads, after it caught up: start the loop and record the start.
  std::function<Status(Runtime&, int64_t epoch)> start_leading;
};

class ReplicatedServer final : public ReplicaHost {
 public:
  // Opens the store and rebuilds a follower from its journal (snapshot + replay).
  static Result<std::unique_ptr<ReplicatedServer>> open(ReplicatedServeConfig config);
  ~ReplicatedServer() override;

  // The HTTP server's handler: the current generation's Api.
  HttpResponse handle(HttpRequest request);
  // Starts the replica's manager (lease and tailing) once the API listens at `options.url`.
  Status start(ReplicaOptions options);
  // Stops the manager (a leader resigns), then the loop (a leader records its stop).
  void stop(const std::string& reason);
  bool leading() const;
  Seq applied_seq() const override;

  // ReplicaHost
  Result<Seq> catch_up() override;
  Status lead(int64_t epoch) override;
  bool failed() const override;
  Status step_down(const std::string& why) override;

 private:
  // The journal is declared first so it outlives the runtime that uses it.
  struct Generation {
    std::unique_ptr<PostgresJournal> journal;
    std::unique_ptr<Runtime> runtime;
    std::atomic<bool> leading{false};
    // Its loop was started once: it can never follow or lead again (its memory may be ahead of
    // the journal), only be replaced by a fresh follower.
    std::atomic<bool> started{false};
  };

  explicit ReplicatedServer(ReplicatedServeConfig config) : config_(std::move(config)) {}
  Result<std::shared_ptr<Generation>> follower();
  // Replaces a generation whose loop was started by a fresh follower (step-down, or a retry of
  // one that could not rebuild).
  Status replace_started();
  std::shared_ptr<Generation> current() const;

  ReplicatedServeConfig config_;
  mutable std::mutex mu_;
  std::shared_ptr<Generation> current_;
  std::unique_ptr<ReplicaManager> manager_;
};

}  // namespace gf
