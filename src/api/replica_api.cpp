// Replication at the API (docs/replication.md): a follower redirects writes to the leader and
// holds a read that asks for ?minSeq= until it has applied that seq; GET /v1/replicas lists the
// replicas of the journal.
#include <fmt/format.h>

#include <charconv>

#include "api/api.h"

namespace gf {
namespace {

// How long a follower holds a read for ?minSeq= before answering 503.
constexpr Duration kMinSeqWait = seconds(5);
// How far past the journal end a follower knows of it still waits (a notification in flight).
constexpr Seq kMinSeqSlack = 10000;

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// The request's path and query as sent (the query re-encoded).
std::string target_of(const HttpRequest& request) {
  std::string t = request.path;
  char sep = '?';
  for (const auto& [k, v] : request.query) {
    t += sep + percent_encode(k) + "=" + percent_encode(v);
    sep = '&';
  }
  return t;
}

}  // namespace

bool Api::leads() const { return !replica_state_ || replica_state_().role == "leader"; }

bool Api::wait_for_min_seq(Seq wanted) const {
  // Only a follower waits: a leader (or the single SQLite server) has published every committed
  // event before answering, and a manual-mode loop (simulate) is driven by the caller's thread.
  if (!replica_state_ || options_.drive_loop_inline) return false;
  const ReplicaState state = replica_state_();
  if (state.role == "leader") return false;
  // A seq far beyond anything the journal is known to hold is not worth a worker's 5 seconds.
  if (wanted > state.known_seq + kMinSeqSlack) return false;
  return loop_.wait_for_seq(wanted, kMinSeqWait);
}

ReplicaState Api::replica_state() const {
  if (!replica_state_) {
    ReplicaState s;
    s.known_seq = loop_.view()->applied_seq;
    return s;
  }
  return replica_state_();
}

std::optional<HttpResponse> Api::min_seq_gate(HttpRequest& request, bool mutating) {
  auto min_seq = request.query.find("minSeq");
  if (min_seq == request.query.end()) return std::nullopt;
  const std::string text = min_seq->second;
  request.query.erase(min_seq);  // routes do not know it
  Seq wanted = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), wanted);
  if (ec != std::errc() || end != text.data() + text.size() || wanted < 0) {
    HttpResponse r = error_response(validation_error(
        fmt::format("minSeq: expected a journal sequence number (0 or more), got \"{}\"",
                    printable(text, 40))));
    r.route = "unmatched";
    return r;
  }
  if (!mutating && loop_.published_seq() < wanted && leads()) {
    // A leader (or the single server) published every committed event before answering
    // anyone, so no answer ever carried this seq and waiting cannot reach it.
    HttpResponse r = error_response(validation_error(fmt::format(
        "minSeq: seq {} is past the end of the journal (seq {}); pass the X-Gpufleet-Seq "
        "header of an answer you got",
        wanted, loop_.published_seq())));
    r.route = "unmatched";
    return r;
  }
  if (!mutating && loop_.published_seq() < wanted && !wait_for_min_seq(wanted)) {
    HttpResponse r = error_response(unavailable_error(fmt::format(
        "minSeq: this replica has applied up to seq {} and has not reached {} yet; retry, or "
        "read from the leader",
        loop_.view()->applied_seq, wanted)));
    r.route = "unmatched";
    r.headers["Retry-After"] = "1";
    return r;
  }
  return std::nullopt;
}

namespace {

// A follower's answer to a write: paused while the database cannot be reached, retry while no
// leader is elected, else a redirect to the leader.
HttpResponse follower_write(const ReplicaState& state, const std::string& target) {
  HttpResponse r;
  if (!state.store_error.empty() || state.leader_url.empty()) {
    r = error_response(unavailable_error(
        !state.store_error.empty()
            ? "writes are paused: the journal's database cannot be reached (" + state.store_error +
                  "); reads go on, and writes resume by themselves once it answers again "
                  "(docs/operations.md); nothing of this request was recorded"
            : "this replica is a follower and no leader is elected right now (a failover takes "
              "the lease length); retry shortly"));
    r.route = "unmatched";
    r.headers["Retry-After"] = "1";
    return r;
  }
  // 307 keeps the method and body: the client sends the same request to the leader.
  r = error_response(Status(
      ErrorCode::kUnavailable,
      fmt::format("this replica is a follower; writes go to the leader at {}", state.leader_url)));
  r.status = 307;
  r.route = "unmatched";
  r.headers["Location"] = state.leader_url + target;
  r.headers["X-Gpufleet-Leader"] = state.leader_url;
  return r;
}

}  // namespace

std::optional<HttpResponse> Api::replica_gate(HttpRequest& request, bool mutating) {
  if (auto answer = min_seq_gate(request, mutating)) return answer;
  if (!mutating || !replica_state_) return std::nullopt;
  const ReplicaState state = replica_state_();
  if (state.role == "leader") return std::nullopt;
  return follower_write(state, target_of(request));
}

void register_replica_routes(Api& api) {
  api.router().add("GET", "/v1/replicas", [&api](const HttpRequest&) {
    const ReplicaState me = api.replica_state();
    Json self = {{"Id", me.id.empty() ? "standalone" : me.id},
                 {"Role", me.role},
                 {"Store", me.store},
                 {"Epoch", me.epoch},
                 {"LeaderUrl", me.leader_url},
                 {"AppliedSeq", api.loop().view()->applied_seq},
                 {"KnownSeq", me.known_seq},
                 {"LagSeconds", me.lag_seconds}};
    Json out = {{"Self", self}, {"Replicas", Json::array()}};
    if (api.replica_list()) {
      auto list = api.replica_list()();
      if (!list.ok()) return error_response(list.status());
      out["Replicas"] = std::move(list).value();
    } else {
      out["Replicas"].push_back(self);
    }
    return json_response(200, out);
  });
}

}  // namespace gf
