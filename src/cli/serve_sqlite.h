// `gpufleet serve` on SQLite: the control plane's current generation — a journal handle and a
// Runtime over it — and its replacement when the journal fails. A failed append (a full disk, an
// I/O error) stops the generation's loop from taking writes (503 naming the cause) while its last
// published view keeps answering reads; every retry (with backoff) opens the journal again,
// rebuilds a fresh generation from it and records its start, and once that append succeeds the
// fresh generation takes over: nothing acknowledged is lost (it is in the journal), nothing
// refused appears (it never was). See docs/operations.md "A full disk".
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "journal/journal.h"
#include "runtime/runtime.h"

namespace gf {

class SqliteServer {
 public:
  // The journal is declared first so it outlives the runtime that uses it.
  struct Generation {
    std::unique_ptr<Journal> journal;
    std::unique_ptr<Runtime> runtime;
  };
  // Opens the journal, rebuilds a runtime from it, starts its loop and records the start: a
  // generation that takes writes, or why not.
  using Open = std::function<Result<std::shared_ptr<Generation>>()>;

  SqliteServer(Open open, Duration retry_base, Duration retry_max)
      : open_(std::move(open)), retry_base_(retry_base), retry_max_(retry_max) {}
  ~SqliteServer() { stop("shutdown"); }

  // The first generation; its error ends serve.
  Status start();
  // The HTTP server's handler: the current generation's Api.
  HttpResponse handle(HttpRequest request);
  // Called about once a second: while the current generation's loop has stopped taking writes,
  // tries a fresh one when its backoff (retry_base, doubling up to retry_max) has passed.
  void supervise(int64_t now_nanos);
  // Stops the current generation's loop (recording why) and its drivers.
  void stop(const std::string& reason);

  std::shared_ptr<Generation> current() const;
  // How many generations replaced a failed one (for the log and tests).
  int replacements() const { return replacements_; }

 private:
  Open open_;
  Duration retry_base_, retry_max_;
  mutable std::mutex mu_;
  std::shared_ptr<Generation> current_;
  Duration backoff_{};
  int64_t next_try_nanos_ = 0;
  int replacements_ = 0;
  bool stopped_ = false;
};

}  // namespace gf
