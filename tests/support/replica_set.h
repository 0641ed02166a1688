// Several `gpufleet serve --store postgres://…` replicas on one real PostgreSQL (started for the
// test on loopback, stopped by pid), and a writer that sends a keyed write until it is
// acknowledged, following a follower's redirect and moving to another replica when one is gone.
// Used by the replication tests and the replication benchmark (docs/replication.md).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/json.h"
#include "support/gpufleet_server.h"
#include "support/postgres_server.h"
#include "support/temp_dir.h"

namespace gf::testing {

class ReplicaSet {
 public:
  // `lease`: the replicas' --lease; `extra`: more serve flags for every replica.
  ReplicaSet(int size, std::string lease = "1s", std::vector<std::string> extra = {},
             bool durable = false)
      : pg_(durable), lease_(std::move(lease)), extra_(std::move(extra)), replicas_(size) {
    if (!pg_.ok()) return;
    CommandResult r = pg_.psql("CREATE DATABASE gpufleet");
    if (r.exit_code != 0) return;
    url_ = pg_.url("gpufleet");
  }

  bool ok() const { return !url_.empty(); }
  std::string error() const { return pg_.ok() ? "CREATE DATABASE failed" : pg_.error(); }
  const std::string& store_url() const { return url_; }
  PostgresServer& postgres() { return pg_; }
  int size() const { return static_cast<int>(replicas_.size()); }

  // Starts replica i (id "r<i>"); returns false when it did not come up.
  bool start(int i) {
    std::vector<std::string> args = {"--store", url_,           "--lease",
                                     lease_,    "--replica-id", "r" + std::to_string(i)};
    args.insert(args.end(), extra_.begin(), extra_.end());
    replicas_[i] = std::make_unique<GpufleetServer>(dir_.file("r" + std::to_string(i)), args);
    return !replicas_[i]->url().empty();
  }
  // SIGKILL by default; waits for the process to end (not for a stopped one).
  void kill(int i, int sig = SIGKILL) {
    if (!replicas_[i]) return;
    replicas_[i]->process().signal(sig);
    if (sig == SIGKILL || sig == SIGTERM) {
      replicas_[i]->process().wait();
      replicas_[i].reset();
    }
  }
  bool up(int i) const { return replicas_[i] != nullptr; }
  GpufleetServer& replica(int i) { return *replicas_[i]; }
  std::string url(int i) const { return replicas_[i] ? replicas_[i]->url() : ""; }

  // GET path on replica i with a short timeout: the parsed body, or null.
  Json get(int i, const std::string& path, int timeout_ms = 1000) const {
    if (!replicas_[i]) return Json();
    httplib::Client c(replicas_[i]->url());
    c.set_connection_timeout(0, 300000);
    c.set_read_timeout(timeout_ms / 1000, (timeout_ms % 1000) * 1000);
    auto r = c.Get(path);
    return r && r->status == 200 ? Json::parse(r->body, nullptr, false) : Json();
  }
  // What replica i says of itself ("leader", "follower", or "" when it does not answer).
  std::string role(int i) const {
    const Json j = get(i, "/v1/replicas");
    return j.is_object() ? j["Self"].value("Role", "") : "";
  }
  // The replica that says it leads, other than `except`, polled until `timeout`; -1 if none.
  int wait_for_leader(std::chrono::milliseconds timeout, int except = -1) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    do {
      for (int i = 0; i < size(); ++i) {
        if (i != except && up(i) && role(i) == "leader") return i;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < deadline);
    return -1;
  }

  // Sends a write until it is acknowledged (2xx): to replica `first` and on to the others when
  // one is gone or has no leader yet; a 307 is followed once. Returns the final status (0 when
  // `deadline` passed first) and the body in `out`.
  int write(const std::string& method, const std::string& path, const std::string& body,
            const std::string& key, int first, std::chrono::steady_clock::time_point deadline,
            std::string* out = nullptr) const {
    int i = first;
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string base = url(i % size());
      i++;
      if (base.empty()) continue;
      std::string target_base = base, target = path;
      for (int hop = 0; hop < 2; ++hop) {
        httplib::Client c(target_base);
        c.set_connection_timeout(0, 300000);
        c.set_read_timeout(10, 0);
        httplib::Headers h{{"Idempotency-Key", key}};
        auto r = method == "POST" ? c.Post(target, h, body, "application/json")
                                  : c.Patch(target, h, body, "application/json");
        if (!r) break;
        if (r->status >= 200 && r->status < 300) {
          if (out) *out = r->body;
          return r->status;
        }
        if (r->status == 307 && r->has_header("Location")) {
          const std::string loc = r->get_header_value("Location");
          const size_t slash = loc.find('/', loc.find("://") + 3);
          target_base = loc.substr(0, slash);
          target = loc.substr(slash);
          continue;
        }
        if (r->status != 503) {  // a real refusal: the caller decides
          if (out) *out = r->body;
          return r->status;
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }

 private:
  PostgresServer pg_;
  TempDir dir_;
  std::string url_;
  std::string lease_;
  std::vector<std::string> extra_;
  std::vector<std::unique_ptr<GpufleetServer>> replicas_;
};

}  // namespace gf::testing
