#include "cli/serve_sqlite.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gf {

Status SqliteServer::start() {
  GF_ASSIGN_OR_RETURN(auto g, open_());
  std::lock_guard lock(mu_);
  current_ = std::move(g);
  return ok_status();
}

std::shared_ptr<SqliteServer::Generation> SqliteServer::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

HttpResponse SqliteServer::handle(HttpRequest request) {
  std::shared_ptr<Generation> g = current();
  return g->runtime->api().handle(std::move(request));
}

void SqliteServer::supervise(int64_t now_nanos) {
  std::shared_ptr<Generation> failed = current();
  if (!failed || !failed->runtime->loop().failed()) {
    backoff_ = Duration{};
    return;
  }
  if (stopped_ || now_nanos < next_try_nanos_) return;
  backoff_ = backoff_ == Duration{} ? retry_base_ : std::min(backoff_ * 2, retry_max_);
  next_try_nanos_ = now_nanos + backoff_.count() * 1000;
  // The failed generation stops acting (its memory may be ahead of the journal: the refused
  // batch) but keeps answering reads from its last published view until a fresh one takes over.
  failed->runtime->stop_drivers();
  auto fresh = open_();
  if (!fresh.ok()) {
    spdlog::warn("journal: still not writable ({}); writes stay paused, next try in {}",
                 fresh.status().message(), format_duration(backoff_));
    return;
  }
  {
    std::lock_guard lock(mu_);
    current_ = std::move(*fresh);
    ++replacements_;
    backoff_ = Duration{};
  }
  spdlog::info("journal: writable again; writes resume (state rebuilt from the journal)");
}

void SqliteServer::stop(const std::string& reason) {
  std::shared_ptr<Generation> g;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    g = current_;
  }
  if (!g) return;
  g->runtime->loop().stop(reason);
  g->runtime->stop_drivers();
}

}  // namespace gf
