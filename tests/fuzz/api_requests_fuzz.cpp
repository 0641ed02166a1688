// The whole REST API in process (api/api.h): a fresh control plane per input, wired as `serve`
// wires it (runtime/runtime.h) over a virtual clock and a scratch SQLite journal, as the scenario
// tests do, receives up to kMaxRequests requests. The input is a list of HTTP-like messages,
// separated by a line "%%":
//   METHOD /path[?key=value&...]
//   header-name: value          (optional lines, then one empty line before a body)
//   body...
// A message whose first line is "WAIT <duration>" advances the virtual clock instead (at most
// kMaxWait), so controllers act between requests (launches, MinCount timeouts, remediation
// steps).
//
// Invariants checked:
//  - Api::handle never throws, and every answer is 2xx or 4xx: a 5xx (InternalFailure from an
//    escaping exception, or ServiceUnavailable from a failed journal write) is a finding;
//  - every JSON answer is a JSON document, and every 4xx is the docs/api.md error shape
//    {"__type": "<Code>", "message": "<non-empty>"}, or under the Kubernetes door's paths
//    (/api, /apis, /openapi, /version; docs/kubernetes.md) a Status with its reason and message;
//  - the scheduler's own invariants hold after the requests;
//  - what was journaled replays: a control plane restarted on the same journal recovers and
//    reaches the same state hash (a request the API accepts but the state cannot re-apply
//    would lose data on every restart).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/k8s/k8s.h"
#include "cloud/sim/sim_cloud.h"
#include "core/clock.h"
#include "fuzz_support.h"
#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "runtime/runtime.h"

namespace gf {
namespace {

constexpr size_t kMaxRequests = 8;
constexpr Duration kMaxWait = hours(6);

struct Message {
  bool wait = false;
  Duration wait_for{};
  HttpRequest request;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Query values arrive percent-decoded from the HTTP server; do the same here.
std::string decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<Message> parse_messages(std::string_view text) {
  std::vector<Message> out;
  while (!text.empty() && out.size() < kMaxRequests) {
    auto [chunk, rest] = fuzz::split_once(text, "\n%%\n");
    text = rest;
    auto [first, after_first] = fuzz::split_once(chunk, "\n");
    first = trim(first);
    Message m;
    auto [method, target] = fuzz::split_once(first, " ");
    if (method == "WAIT") {
      const Result<Duration> d = parse_duration(trim(target));
      if (!d.ok()) continue;
      m.wait = true;
      m.wait_for = std::min(*d, kMaxWait);
      out.push_back(std::move(m));
      continue;
    }
    m.request.method = std::string(method);
    auto [path, query] = fuzz::split_once(trim(target), "?");
    m.request.path = std::string(path);
    while (!query.empty()) {
      auto [pair, more] = fuzz::split_once(query, "&");
      query = more;
      auto [key, value] = fuzz::split_once(pair, "=");
      if (!key.empty()) m.request.query[decode(key)] = decode(value);
    }
    // Header lines until an empty line; without one, everything after the first line is body.
    std::string_view body = after_first;
    if (const size_t blank = after_first.find("\n\n"); blank != std::string_view::npos) {
      std::string_view headers = after_first.substr(0, blank);
      bool all_headers = true;
      for (std::string_view h = headers; !h.empty();) {
        auto [line, more] = fuzz::split_once(h, "\n");
        h = more;
        all_headers = all_headers && line.find(": ") != std::string_view::npos;
      }
      if (all_headers) {
        for (std::string_view h = headers; !h.empty();) {
          auto [line, more] = fuzz::split_once(h, "\n");
          h = more;
          auto [name, value] = fuzz::split_once(line, ": ");
          std::string lower(trim(name));
          for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
          m.request.headers[lower] = std::string(trim(value));
        }
        body = after_first.substr(blank + 2);
      }
    }
    m.request.body = std::string(body);
    out.push_back(std::move(m));
  }
  return out;
}

std::string describe(const HttpRequest& req, const HttpResponse& r) {
  return req.method + " " + req.path + " -> " + std::to_string(r.status) + " " + r.content_type +
         "\n--- request body ---\n" + req.body.substr(0, 2000) + "\n--- response ---\n" +
         r.body.substr(0, 4000);
}

void check_response(const HttpRequest& req, const HttpResponse& r) {
  FUZZ_CHECK((r.status >= 200 && r.status < 300) || (r.status >= 400 && r.status < 500),
             describe(req, r));
  // The server's own rule: "/api" or "/api/…", not "/apiX…" (a REST 404 there is right).
  const bool kube = k8s::is_k8s_path(req.path);
  if (r.stream && kube) {  // a Kubernetes watch: NDJSON events, one per line
    bool end = false;
    const std::string first = r.stream->next(end);
    for (size_t at = 0; at < first.size();) {
      const size_t nl = first.find('\n', at);
      FUZZ_CHECK(nl != std::string::npos, "a watch event without its newline: " + first);
      const Json event = Json::parse(first.substr(at, nl - at), nullptr, false);
      FUZZ_CHECK(event.is_object() && event.contains("type") && event.contains("object"),
                 "not a watch event: " + describe(req, r) + first);
      at = nl + 1;
    }
    return;
  }
  if (r.stream) {  // GET /v1/watch: its first piece says what it watches, as event: watching
    bool end = false;
    const std::string first = r.stream->next(end);
    FUZZ_CHECK(first.starts_with("retry: ") && first.find("event: watching") != std::string::npos,
               "a stream that does not open with event: watching: " + describe(req, r) + first);
    return;
  }
  if (r.content_type.find("json") == std::string::npos) {
    FUZZ_CHECK(!r.body.empty(), describe(req, r));
    return;
  }
  const Json body = Json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!body.is_discarded(), "not JSON: " + describe(req, r));
  if (r.status >= 400 && kube) {
    FUZZ_CHECK(body.is_object() && body.value("kind", "") == "Status" &&
                   body.value("status", "") == "Failure" && body.value("code", 0) == r.status &&
                   body.contains("reason") && body.contains("message") &&
                   body["message"].is_string() &&
                   !body["message"].get_ref<const std::string&>().empty(),
               "not a Kubernetes Status: " + describe(req, r));
    return;
  }
  if (r.status >= 400) {
    FUZZ_CHECK(body.is_object() && body.contains("__type") && body["__type"].is_string() &&
                   body.contains("message") && body["message"].is_string() &&
                   !body["message"].get_ref<const std::string&>().empty(),
               "not the error shape: " + describe(req, r));
  }
}

// The scratch directory of this process; each input's journal is created in it and removed.
// The path lives on the heap, never freed: the exit handler that removes the directory runs
// after static destructors would already have destroyed a static string.
const std::string& scratch_dir() {
  static const std::string* dir = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "gpufleet-api-fuzz-XXXXXX").string();
    FUZZ_CHECK(::mkdtemp(tmpl.data()) != nullptr, tmpl);
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return new std::string(std::move(tmpl));
  }();
  return *dir;
}

void remove_journal(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

RuntimeOptions runtime_options() {
  RuntimeOptions opts;
  opts.api.drive_loop_inline = true;
  // A small simulated cloud bounds the work one input can cause: a cluster may ask for
  // thousands of instances, but only this many of each type ever launch.
  SimCloudConfig cloud;
  for (const std::string& type : Catalog::builtin().names()) cloud.capacity[type] = 32;
  opts.cloud = sim_cloud(std::move(cloud));
  return opts;
}

std::unique_ptr<SqliteJournal> open_journal(const std::string& path) {
  Result<std::unique_ptr<SqliteJournal>> j = SqliteJournal::open(path, {.fsync = false});
  FUZZ_CHECK(j.ok(), j.status().to_string());
  return std::move(j).value();
}

void run(const std::vector<Message>& messages) {
  const std::string path = scratch_dir() + "/journal.db";
  remove_journal(path);
  uint64_t hash = 0;
  Time stopped_at{};
  {
    VirtualClock clock;
    std::unique_ptr<SqliteJournal> journal = open_journal(path);
    auto runtime = std::make_unique<Runtime>(runtime_options(), clock, *journal);
    const Status recovered = runtime->recover();
    FUZZ_CHECK(recovered.ok(), recovered.to_string());
    VirtualRunner runner(runtime->loop(), clock);
    for (const Message& m : messages) {
      if (m.wait) {
        runner.run_for(m.wait_for);
        continue;
      }
      const HttpResponse r = runtime->api().handle(m.request);
      check_response(m.request, r);
    }
    runner.settle();
    const Status sched =
        runtime->scheduling_cache().scheduler(runtime->loop().state()).check_invariants();
    FUZZ_CHECK(sched.ok(), sched.to_string());
    hash = runtime->loop().state().hash();
    stopped_at = clock.now();
    runtime->stop_drivers();
  }
  // A restart on the same journal: a fresh clock at the same instant (the old one may still
  // hold timers of the drivers that were just destroyed).
  VirtualClock clock(stopped_at);
  std::unique_ptr<SqliteJournal> journal = open_journal(path);
  auto runtime = std::make_unique<Runtime>(runtime_options(), clock, *journal);
  const Status recovered = runtime->recover();
  FUZZ_CHECK(recovered.ok(), "journal does not replay: " + recovered.to_string());
  FUZZ_CHECK(runtime->loop().state().hash() == hash, "replayed state differs from the live one");
  runtime->stop_drivers();
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const std::vector<gf::Message> messages = gf::parse_messages(gf::fuzz::as_text(data, size));
  if (messages.empty()) return 0;
  gf::run(messages);
  return 0;
}
