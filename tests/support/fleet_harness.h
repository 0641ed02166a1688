// An in-process control plane on a virtual clock, driven through the real API handlers: what a
// scenario test does at "3 hours later" takes microseconds.
#pragma once

#include <fstream>
#include <sstream>

#include "cloud/sim/sim_cloud.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "runtime/runtime.h"
#include "support/temp_dir.h"

namespace gf::testing {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The users' example inputs, verbatim copies of ../shared/examples/ kept in the repo's
// examples/ (tests/unit/model/examples_test.cpp checks they stay identical).
inline std::string shared_example(const std::string& name) {
  return read_file(std::string(GPUFLEET_EXAMPLES_DIR) + "/" + name);
}

class Fleet {
 public:
  explicit Fleet(SimCloudConfig cloud = {}, RuntimeOptions opts = {}) : opts_(std::move(opts)) {
    opts_.cloud = sim_cloud(std::move(cloud));
    opts_.api.drive_loop_inline = true;
    open();
  }

  // Reopens the journal and rebuilds everything, as a restarted `serve` would.
  void restart() {
    runtime_.reset();
    journal_.reset();
    open();
  }

  // The same as a person named `caller` (X-Gpufleet-User).
  HttpResponse call_as(const std::string& caller, const std::string& method,
                       const std::string& path, const std::string& body = "") {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.body = body;
    req.headers["x-gpufleet-user"] = caller;
    return runtime_->api().handle(req);
  }
  HttpResponse call(const std::string& method, const std::string& path,
                    const std::string& body = "", std::map<std::string, std::string> query = {},
                    std::map<std::string, std::string> headers = {}) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.body = body;
    req.query = std::move(query);
    req.headers = std::move(headers);
    return runtime_->api().handle(req);
  }
  Json json(const std::string& method, const std::string& path, const std::string& body = "") {
    HttpResponse r = call(method, path, body);
    return Json::parse(r.body);
  }
  Json describe(const std::string& cluster) { return json("GET", "/v1/clusters/" + cluster); }
  Json group(const std::string& cluster, const std::string& g) {
    const Json d = describe(cluster);
    for (const auto& x : d["InstanceGroups"]) {
      if (x["InstanceGroupName"] == g) return x;
    }
    return Json();
  }
  // Every user event, oldest first.
  std::vector<UserEvent> events() {
    std::vector<UserEvent> out;
    const auto& log = runtime_->loop().state().view().events;
    for (size_t i = 0; i < log.size(); ++i) out.push_back(log.at(i));
    return out;
  }
  std::vector<UserEvent> events_containing(const std::string& text) {
    std::vector<UserEvent> out;
    for (auto& e : events()) {
      if (e.description.find(text) != std::string::npos) out.push_back(e);
    }
    return out;
  }
  const Cluster* cluster(const std::string& name) {
    return runtime_->loop().state().view().find_cluster(name);
  }

  void run_for(Duration d) { runner_->run_for(d); }
  void run_until(Time t) { runner_->run_until(t); }
  Time now() const { return clock_.now(); }
  Duration elapsed() const { return clock_.now() - kSimEpoch; }
  Runtime& runtime() { return *runtime_; }
  SqliteJournal& journal() { return *journal_; }

 private:
  void open() {
    journal_ = std::move(SqliteJournal::open(dir_.file("journal.db"), {.fsync = false})).value();
    runtime_ = std::make_unique<Runtime>(opts_, clock_, *journal_);
    Status st = runtime_->recover();
    if (!st.ok()) throw std::runtime_error(st.to_string());
    runner_ = std::make_unique<VirtualRunner>(runtime_->loop(), clock_);
  }

  RuntimeOptions opts_;
  TempDir dir_;
  VirtualClock clock_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<VirtualRunner> runner_;
};

}  // namespace gf::testing
