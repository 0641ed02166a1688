// `?watch=true` on a list URL (docs/kubernetes.md "Watch"): newline-delimited JSON events
// ({"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": …}) over a chunked answer, from the
// same publish feed as GET /v1/watch. The stream holds no thread: each time the loop publishes a
// view it lists the kind again through the door (as the caller, so it sees what the caller may)
// and sends what changed since the last list — a watch sees every object's newest state, with
// changes that happened within one published view coalesced, as a watch cache may.
#include <fmt/format.h>

#include <map>

#include "api/k8s/objects.h"
#include "api/k8s/status.h"
#include "api/k8s/table.h"
#include "api/k8s/watch.h"
#include "core/time.h"

namespace gf::k8s {
namespace {

std::string key_of(const Json& o) {
  const Json m = o.value("metadata", Json::object());
  return m.value("namespace", "") + "/" + m.value("name", "");
}

// An object without its resourceVersion: what tells a change apart from a new read.
Json comparable(Json o) {
  if (o.contains("metadata") && o["metadata"].is_object()) o["metadata"].erase("resourceVersion");
  return o;
}

class KubeWatch final : public ResponseStream {
 public:
  KubeWatch(Api& api, HttpRequest req, Target target, WatchOptions options)
      : api_(api), req_(std::move(req)), t_(std::move(target)), o_(std::move(options)) {}
  ~KubeWatch() override {
    if (wait_id_ != 0) api_.loop().feed()->cancel(wait_id_);
  }

  std::string next(bool& end) override {
    wait_id_ = 0;
    if (api_.loop().feed()->closed()) return end = true, "";
    const auto view = api_.loop().view();
    if (!view) return end = true, "";
    const Seq applied = view->applied_seq;
    seen_ = applied;
    if (o_.deadline && api_.clock().now() >= *o_.deadline) return end = true, "";
    if (!started_) {
      started_ = true;
      if (o_.since > 0 && o_.since < view->events.dropped_through()) {
        end = true;
        return error_event(410, "Expired",
                           fmt::format("too old resource version: {} ({})", o_.since,
                                       view->events.dropped_through()));
      }
    } else if (applied == listed_) {
      return "";
    }
    listed_ = applied;
    Fetched f = list_objects(api_, req_, t_);
    if (f.error) {
      end = true;
      return error_event(f.error->status, f.error->error_type, f.error->body);
    }
    auto kept = select(req_, *t_.kind, std::move(f.items));
    if (!kept.ok()) return end = true, error_event(400, "BadRequest", kept.status().message());
    return diff(*kept, f.resource_version, applied);
  }

  void when_ready(std::function<void()> wake) override {
    wait_id_ = api_.loop().feed()->wait_after(seen_, std::move(wake));
  }

  // NDJSON has no comments: a blank line keeps proxies and clients from timing the stream out
  // (client-go's decoder and the Python client skip it).
  std::string heartbeat() const override { return "\n"; }
  bool expired() const override { return o_.deadline && api_.clock().now() >= *o_.deadline; }

 private:
  std::string diff(std::vector<Json>& items, const std::string& rv, Seq applied) {
    std::string out;
    std::map<std::string, Json> now;
    const bool first = !primed_;
    for (Json& o : items) {
      const std::string key = key_of(o);
      auto before = known_.find(key);
      const char* type = nullptr;
      if (first) {
        // From rv 0 (or none) every object is new to the client; from the rv of its list, only
        // what changed since: the objects are sent again when the journal moved on since that rv.
        if (o_.since == 0)
          type = "ADDED";
        else if (applied > o_.since)
          type = "MODIFIED";
      } else if (before == known_.end()) {
        type = "ADDED";
      } else if (before->second != comparable(o)) {
        type = "MODIFIED";
      }
      if (type != nullptr) out += event(type, o);
      now.emplace(key, comparable(std::move(o)));
    }
    if (!first) {
      for (auto& [key, old] : known_) {
        if (now.contains(key)) continue;
        Json gone = old;
        gone["metadata"]["resourceVersion"] = rv;
        out += event("DELETED", gone);
      }
    }
    primed_ = true;
    known_ = std::move(now);
    const Time t = api_.clock().now();
    if (out.empty() && o_.bookmarks && (!last_bookmark_ || t - *last_bookmark_ >= seconds(60))) {
      last_bookmark_ = t;
      out = Json{{"type", "BOOKMARK"},
                 {"object",
                  {{"kind", t_.kind->kind},
                   {"apiVersion", t_.kind->group_version()},
                   {"metadata", {{"resourceVersion", rv}}}}}}
                .dump() +
            "\n";
    }
    return out;
  }

  std::string event(const char* type, const Json& o) const {
    Json object = o;
    if (o_.table)
      object = table(*t_.kind, {o}, api_.clock().now(), o["metadata"].value("resourceVersion", ""),
                     "", o_.include_object);
    return Json{{"type", type}, {"object", std::move(object)}}.dump() + "\n";
  }

  static std::string error_event(int code, const std::string& reason, const std::string& message) {
    HttpResponse r = status_response(code, reason.empty() ? "InternalError" : reason, message);
    auto body = parse_json(r.body);
    return Json{{"type", "ERROR"}, {"object", body.ok() ? *body : Json()}}.dump() + "\n";
  }

  Api& api_;
  HttpRequest req_;
  Target t_;
  WatchOptions o_;
  bool started_ = false;
  bool primed_ = false;
  Seq seen_ = 0;
  Seq listed_ = 0;
  uint64_t wait_id_ = 0;
  std::map<std::string, Json> known_;
  std::optional<Time> last_bookmark_;
};

}  // namespace

Result<WatchOptions> watch_options(const HttpRequest& req, Time now) {
  WatchOptions o;
  const std::string rv = req.query_or("resourceVersion", "");
  if (!rv.empty()) {
    if (rv.find_first_not_of("0123456789") != std::string::npos || rv.size() > 18)
      return validation_error(
          "resourceVersion: expected a resourceVersion this server gave, got \"" +
          printable(rv, 40) + "\"");
    o.since = std::stoll(rv);
  }
  if (const std::string b = req.query_or("allowWatchBookmarks", ""); !b.empty()) {
    if (!parse_go_bool(b, o.bookmarks))
      return validation_error("allowWatchBookmarks: expected a boolean");
  }
  const std::string timeout = req.query_or("timeoutSeconds", "");
  if (!timeout.empty()) {
    if (timeout.find_first_not_of("0123456789") != std::string::npos || timeout.size() > 9)
      return validation_error("timeoutSeconds: expected a whole number of seconds");
    o.deadline = now + seconds(std::stoll(timeout));
  }
  return o;
}

std::shared_ptr<ResponseStream> make_kube_watch(Api& api, const HttpRequest& req, Target t,
                                                WatchOptions options) {
  HttpRequest copy;
  copy.method = "GET";
  copy.path = req.path;
  copy.query = req.query;
  copy.headers = req.headers;
  copy.caller = req.caller;
  copy.roles = req.roles;
  copy.peer = req.peer;
  copy.request_id = req.request_id;
  return std::make_shared<KubeWatch>(api, std::move(copy), std::move(t), std::move(options));
}

}  // namespace gf::k8s
