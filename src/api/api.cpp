#include "api/api.h"
#include "api/sigv4.h"
#include "core/clock.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <unordered_map>

namespace gf {

namespace {

// The API call a handler is running for, so that Api::write can attach its audit record and
// fingerprint its idempotency key without every handler passing them along. Set by
// Api::handle for the duration of one dispatch, on the thread that runs it.
struct CallScope {
  const HttpRequest* request = nullptr;
  bool mutating = false;
  bool audited_route = true;    // heartbeats are not audited (docs/security.md)
  bool audit_attached = false;  // a loop write carries the record
  // An AWS door's call (Api::door_call): its operation, whether it writes, and how many REST
  // writes it made, each audited as itself (Api::dispatch_inner).
  bool door = false;
  bool door_writes = false;
  std::string door_operation;
  int inner_writes = 0;
  // The REST request the call became last: what is authorized, written and audited in its place.
  std::optional<HttpRequest> inner;
};
thread_local CallScope* t_scope = nullptr;

class ScopeGuard {
 public:
  explicit ScopeGuard(CallScope* s) : previous_(t_scope) { t_scope = s; }
  ~ScopeGuard() { t_scope = previous_; }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  CallScope* previous_;
};

bool is_mutating(const std::string& method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

// What a refused request sent may be ill-formed UTF-8 or huge: the record keeps a bounded,
// printable form.
std::string audit_text(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes && find_invalid_utf8(s) == std::string_view::npos) return s;
  return printable(s, max_bytes);
}

Json audit_payload(const HttpRequest& req, const std::string& idempotency_key) {
  AuditRecord a;
  a.identity = audit_text(req.caller, 256);
  for (const std::string& r : req.roles) a.roles.push_back(audit_text(r, 256));
  a.method = audit_text(req.method, 16);
  a.path = audit_text(req.path, 1024);
  a.resource = audit_text(audit_resource(req.path), 1024);
  a.request_id = req.request_id;
  a.idempotency_key = req.header_or("idempotency-key", "");
  if (a.idempotency_key.empty()) a.idempotency_key = idempotency_key;
  a.idempotency_key = audit_text(a.idempotency_key, 256);
  return a.payload();
}

std::string error_type_of(const HttpResponse& r) {
  if (r.status < 400) return "";
  return r.error_type.empty() ? fmt::format("HTTP{}", r.status) : r.error_type;
}

// What is wrong with the text of a path, query or header value, or "".
std::string text_problem(std::string_view s) {
  if (find_invalid_utf8(s) != std::string_view::npos) return "not valid UTF-8";
  if (has_noncharacter(s))
    return "holds U+FFFE or U+FFFF, a Unicode noncharacter, which is not allowed in text";
  return "";
}

// The first header, query or path value whose text is refused, and why ("path: not valid
// UTF-8"), or "". A body's noncharacters are refused where it is parsed (escapes included).
std::string first_invalid_text(const HttpRequest& req) {
  if (std::string p = text_problem(req.path); !p.empty()) return "path: " + p;
  for (const auto& [k, v] : req.query) {
    std::string p = text_problem(k);
    if (p.empty()) p = text_problem(v);
    if (!p.empty()) return "query parameter: " + p;
  }
  for (const auto& [key, name] : {std::pair{"x-gpufleet-user", "X-Gpufleet-User"},
                                  std::pair{"idempotency-key", "Idempotency-Key"}}) {
    if (std::string p = text_problem(req.header_or(key, "")); !p.empty()) {
      return std::string(name) + ": " + p;
    }
  }
  if (size_t at = find_invalid_utf8(req.body); at != std::string_view::npos) {
    return fmt::format("body (at byte {}): not valid UTF-8", at);
  }
  return "";
}

// Calls that take no body accept an empty one or `{}`; anything else is refused rather than
// ignored, so a client that sent something it thought mattered learns that it did not.
Status check_no_body(const std::string& route, const HttpRequest& req) {
  const bool bodiless = route.rfind("DELETE ", 0) == 0 || route.ends_with("/heartbeat") ||
                        route.ends_with("/circuit-breaker/reset");
  if (!bodiless) return ok_status();
  const size_t first = req.body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return ok_status();
  auto body = parse_json(req.body);
  if (body.ok() && body->is_object() && body->empty()) return ok_status();
  return validation_error(
      "body: " + route + " takes no body (or {}), got " +
      (body.ok() ? describe_json_value(*body) : std::string("text that is not JSON")));
}

}  // namespace

// Token buckets per identity. Wall time is an edge concern here (monotonic_nanos), never a
// controller's.
struct Api::Limiter {
  struct Bucket {
    double tokens = 0;
    int64_t last_ns = 0;
  };
  static constexpr size_t kMaxBuckets = 100'000;
  std::mutex mu;
  std::unordered_map<std::string, Bucket> buckets;

  // 0 when allowed, else the seconds until a token is available.
  double take(const std::string& who, double rate, double burst) {
    const int64_t now = monotonic_nanos();
    std::lock_guard lock(mu);
    if (buckets.size() >= kMaxBuckets && !buckets.contains(who)) {
      // Forget buckets that refilled: they hold no information.
      for (auto it = buckets.begin(); it != buckets.end();) {
        const double refill = (now - it->second.last_ns) / 1e9 * rate;
        it = it->second.tokens + refill >= burst ? buckets.erase(it) : std::next(it);
      }
    }
    auto [it, fresh] = buckets.try_emplace(who, Bucket{burst, now});
    Bucket& b = it->second;
    if (!fresh) {
      b.tokens = std::min(burst, b.tokens + (now - b.last_ns) / 1e9 * rate);
      b.last_ns = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / rate;
  }
};

Api::Api(ApiOptions options, ControlLoop& loop, Metrics& metrics, const Clock& clock,
         std::optional<ClusterSettings> clusters)
    : options_(options),
      loop_(loop),
      metrics_(metrics),
      clock_(clock),
      clusters_(std::move(clusters)),
      limiter_(std::make_unique<Limiter>()) {
  char nonce[24];
  std::snprintf(nonce, sizeof(nonce), "%08llx",
                static_cast<unsigned long long>(monotonic_nanos()) & 0xffffffffULL);
  boot_nonce_ = nonce;
  register_system_routes(*this);
  register_event_routes(*this);
  register_watch_routes(*this);
  register_replica_routes(*this);
  register_console_routes(*this);
  if (clusters_) {
    register_cluster_routes(*this);
    register_slurm_view_routes(*this);
    register_node_agent_routes(*this);
    register_slurm_agent_routes(*this);
    register_billing_routes(*this);
    register_quota_routes(*this);
    register_quota_tree_routes(*this);
    register_job_routes(*this);
    register_health_routes(*this);
    register_audit_routes(*this);
    register_history_routes(*this);
    register_aws_routes(*this);  // last: its routes become the ones above
    register_k8s_routes(*this);
  }
  router_.set_authorizer([](const std::string& route, const HttpRequest& req) {
    if (t_scope && route == "POST /v1/clusters/{name}/nodes/{id}/heartbeat")
      t_scope->audited_route = false;
    const std::string method = route.substr(0, route.find(' '));
    GF_RETURN_IF_ERROR(authorize(req, required_permission(method, route)));
    return check_no_body(route, req);
  });
}

Api::~Api() = default;

std::string idempotency_key(const HttpRequest& request, const Json* body) {
  std::string key = request.header_or("idempotency-key", "");
  if (key.empty() && body && body->is_object() && body->contains("ClientToken") &&
      (*body)["ClientToken"].is_string()) {
    key = (*body)["ClientToken"].get<std::string>();
  }
  return key.empty() ? "" : request.method + " " + request.path + " " + key;
}

Status Api::authenticate(HttpRequest& request) const {
  if (const std::string auth = request.header_or("authorization", ""); sigv4::is_sigv4(auth)) {
    return authenticate_sigv4(request, auth);
  }
  if (!tokens_) {
    // No auth file (loopback only): the caller names itself and holds every role.
    std::string name = request.header_or("x-gpufleet-user", "");
    request.caller = normalize_identity(name).empty() ? "anonymous" : name;
    request.roles = {"admin"};
    return ok_status();
  }
  request.caller = "anonymous";
  request.roles.clear();
  const std::string auth = request.header_or("authorization", "");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() <= kBearer.size() || auth.compare(0, kBearer.size(), kBearer) != 0) {
    return Status(ErrorCode::kUnauthenticated,
                  "Authorization: a bearer token is required (Authorization: Bearer <token>; the "
                  "CLI reads --token or GPUFLEET_TOKEN)");
  }
  const TokenEntry* entry = tokens_->find(std::string_view(auth).substr(kBearer.size()));
  if (!entry) return Status(ErrorCode::kUnauthenticated, "Authorization: the token is not valid");
  request.caller = entry->subject;
  request.roles = entry->roles;
  return ok_status();
}

// An AWS SDK's request (docs/aws-compatibility.md "Signatures"). Without an auth file the access
// key id names the caller, who holds every role, as X-Gpufleet-User would; with one the key must
// be listed there and the signature must verify, against the wall clock (an edge concern: a
// --sim-speed server's model time is not what the client signed with).
Status Api::authenticate_sigv4(HttpRequest& request, const std::string& header) const {
  request.caller = "anonymous";
  request.roles.clear();
  GF_ASSIGN_OR_RETURN(sigv4::Authorization auth, sigv4::parse(header));
  if (!tokens_) {
    request.caller = auth.access_key_id;
    request.roles = {"admin"};
    return ok_status();
  }
  const AccessKeyEntry* key = tokens_->find_access_key(auth.access_key_id);
  if (key == nullptr) {
    return Status(ErrorCode::kUnrecognizedClient,
                  "The security token included in the request is invalid: access key id " +
                      printable(auth.access_key_id, 128) + " is not in the auth file");
  }
  GF_RETURN_IF_ERROR(sigv4::verify(request, auth, key->secret_access_key, wall_now()));
  request.caller = key->subject;
  request.roles = key->roles;
  return ok_status();
}

void Api::audit_refused(const HttpRequest& request, int code, const std::string& error) {
  if (replica_state_ && replica_state_().role != "leader") {
    // A follower runs no loop to journal it (docs/replication.md): its server log keeps it.
    spdlog::warn("refused {} {} from {} ({} {}): not audited on a follower", request.method,
                 printable(request.path), printable(request.caller, 80), code, error);
    return;
  }
  Json payload = audit_payload(request, "");
  if (!error.empty()) payload["Error"] = error;
  payload["Code"] = code;
  // Aggregated per source and reason per minute (refusal_audit.h): a caller no identity vouches
  // for is counted by its address.
  const bool vouched = code != 401 && !request.caller.empty();
  if (!vouched) payload["Source"] = request.peer.empty() ? "unknown" : request.peer;
  const Time now = clock_.now();
  const std::string source =
      vouched ? "id:" + normalize_identity(request.caller) : "peer:" + request.peer;
  switch (refusals_->refused(source, code, error, payload, now)) {
    case RefusalAudit::Verdict::kCounted:
      return;
    case RefusalAudit::Verdict::kCountedDue:
      record_refusal_counts(RefusalAudit::window_end(now));
      return;
    case RefusalAudit::Verdict::kRecordNow:
      break;
  }
  Request w;
  w.name = "AuditRefused";
  w.audit = std::move(payload);
  w.success_code = code;
  w.handle = [](const FleetState&, Time) -> Result<Decision> { return Decision{}; };
  auto future = loop_.submit(std::move(w));
  if (options_.drive_loop_inline) loop_.drain();
  if (future.wait_for(options_.write_timeout) != std::future_status::ready) {
    spdlog::warn("audit record of {} {} ({}) not yet durable", request.method,
                 printable(request.path), request.request_id);
  }
}

void Api::record_refusal_counts(Time at) {
  Request w;
  w.name = "AuditRefusedCounts";
  w.handle = [refusals = refusals_](const FleetState&, Time now) -> Result<Decision> {
    Decision d;
    for (Json& p : refusals->take_ended(now))
      d.events.push_back(Event{std::string(event_type::kAuditRecorded), std::move(p), ""});
    return d;
  };
  loop_.submit_at(at, std::move(w));
}

HttpResponse Api::handle(HttpRequest request) {
  request.request_id = fmt::format("req-{}-{}", boot_nonce_, ++request_counter_);
  HttpResponse r;
  try {
    r = handle_checked(request);
  } catch (const std::exception& e) {
    spdlog::error("request {} {} {} failed: {}", request.request_id, request.method,
                  printable(request.path), e.what());
    r = error_response(internal_error("the server failed to handle request " + request.request_id +
                                      "; the error is in the server's log"));
    r.route = "unmatched";
  } catch (...) {
    spdlog::error("request {} {} {} failed with a non-standard exception", request.request_id,
                  request.method, printable(request.path));
    r = error_response(internal_error("the server failed to handle request " + request.request_id +
                                      "; the error is in the server's log"));
    r.route = "unmatched";
  }
  for (const ResponseShaper& shape : shapers_) shape(request, r);
  r.headers["X-Request-Id"] = request.request_id;
  r.headers["x-amzn-RequestId"] = request.request_id;  // where the AWS SDKs look for it
  // The server's clock (a --sim-speed server runs ahead of the client's): the CLI computes ages
  // against it (docs/api.md "Time").
  r.headers["X-Gpufleet-Now"] = format_iso8601(clock_.now());
  // The journal position this answer reflects: a client that wrote at seq N reads its write on a
  // follower with ?minSeq=N (docs/replication.md).
  r.headers["X-Gpufleet-Seq"] = std::to_string(loop_.published_seq());
  metrics_
      .counter("gpufleet_http_requests_total", "HTTP requests by route and status code.",
               prometheus_label("route", r.route) + "," +
                   prometheus_label("code", std::to_string(r.status)))
      .inc();
  return r;
}

std::optional<HttpResponse> Api::rate_limited(const HttpRequest& request, bool vouched) {
  if (options_.rate_limit_per_second <= 0) return std::nullopt;
  // A caller no identity vouches for is limited by its address, at a much lower rate
  // (docs/security.md "Connections").
  const std::string bucket =
      vouched ? "id:" + normalize_identity(request.caller) : "peer:" + request.peer;
  const double rate =
      vouched ? options_.rate_limit_per_second : options_.unauthenticated_rate_per_second;
  const double burst = std::max(1.0, vouched ? options_.rate_limit_burst : 2 * rate);
  const double wait = limiter_->take(bucket, rate, burst);
  if (wait <= 0) return std::nullopt;
  HttpResponse r = error_response(
      Status(ErrorCode::kThrottling,
             fmt::format("rate limit of {} requests per second exceeded for {}; retry later", rate,
                         vouched ? printable(request.caller, 80) : "unauthenticated callers")));
  r.route = "unmatched";
  r.headers["Retry-After"] = std::to_string(static_cast<int64_t>(std::ceil(wait)));
  return r;
}

HttpResponse Api::handle_checked(HttpRequest& request) {
  const bool mutating = is_mutating(request.method);
  auto refuse = [&](const Status& st, bool audit) {
    HttpResponse r = error_response(st);
    r.route = "unmatched";
    if (audit && mutating)
      audit_refused(request, r.status, std::string(error_type_name(st.code())));
    return r;
  };
  if (request.body.size() > options_.max_body_bytes) {
    (void)authenticate(request).ok();  // the audit record names whoever it was, if anyone
    request.caller = printable(request.caller, 256);
    return refuse(Status(ErrorCode::kPayloadTooLarge,
                         fmt::format("request body of {} bytes is over the limit of {} bytes",
                                     request.body.size(), options_.max_body_bytes)),
                  true);
  }
  const Status who = authenticate(request);
  if (std::string problem = first_invalid_text(request); !problem.empty()) {
    request.caller = printable(request.caller, 256);
    return refuse(validation_error(problem), true);
  }
  const bool exempt = request.path == "/healthz" || request.path == "/metrics";
  if (!exempt) {
    if (auto limited = rate_limited(request, who.ok())) return *limited;
  }
  // The console's files are public, and so is whoami (it answers SignedIn: false to a caller
  // without a valid token); the page then reads the API with its own token.
  const bool public_read = (request.method == "GET" || request.method == "HEAD") &&
                           (is_console_path(request.path) || request.path == "/v1/whoami");
  if (!who.ok() && !exempt && !public_read) return refuse(who, true);
  if (auto gated = replica_gate(request, mutating)) return *gated;

  CallScope scope;
  scope.request = &request;
  scope.mutating = mutating;
  HttpResponse r;
  {
    ScopeGuard guard(&scope);
    r = router_.dispatch(request);
  }
  if (scope.door) {
    // Each REST write the door made was audited as itself; a write refused before it made one
    // (its input did not parse) is audited here, named by its operation. A read is no mutation
    // to audit, though it came as a POST.
    if (scope.door_writes && scope.inner_writes == 0) {
      HttpRequest named = caller_of(request);
      named.method = request.method;
      named.path = request.path + (scope.door_operation.empty() ? "" : " " + scope.door_operation);
      named.request_id = request.request_id;
      named.headers = request.headers;
      audit_refused(named, r.status, error_type_of(r));
    }
  } else if (scope.mutating && scope.audited_route && !scope.audit_attached) {
    audit_refused(request, r.status, error_type_of(r));
  }
  return r;
}

void Api::door_call(const std::string& operation, bool writes) {
  if (t_scope == nullptr) return;
  t_scope->door = true;
  t_scope->door_writes = writes;
  t_scope->door_operation = operation;
}

HttpResponse Api::dispatch_inner(HttpRequest inner) {
  if (t_scope == nullptr) return router_.dispatch(std::move(inner));
  CallScope& s = *t_scope;
  const bool writes = is_mutating(inner.method);
  s.inner = std::move(inner);
  s.request = &*s.inner;
  s.mutating = writes;
  s.audited_route = true;
  s.audit_attached = false;
  HttpResponse r = router_.dispatch(*s.inner);
  if (writes) {
    ++s.inner_writes;
    if (s.audited_route && !s.audit_attached) audit_refused(*s.inner, r.status, error_type_of(r));
  }
  return r;
}

Outcome Api::write(Request request, int success_code) {
  request.success_code = success_code;
  if (t_scope) {
    const HttpRequest& call = *t_scope->request;
    if (auto it = call.query.find("dryRun"); it != call.query.end()) {
      if (it->second != "All") {
        Outcome o;
        o.status = validation_error(
            "dryRun: expected All (validate and answer, change nothing), "
            "got \"" +
            printable(it->second, 40) + "\"");
        return o;
      }
      // A dry run changes nothing, so it is no mutation to audit; nor is it refused.
      request.dry_run = true;
      t_scope->audit_attached = true;
    }
    // Keys the client chose (Idempotency-Key, ClientToken) remember what they were first used with.
    const std::string client_prefix = call.method + " " + call.path + " ";
    if (request.fingerprint.empty() && request.idempotency_key.rfind(client_prefix, 0) == 0) {
      request.fingerprint = sha256_hex(call.body).substr(0, 32);
    }
    if (t_scope->mutating && t_scope->audited_route && !t_scope->audit_attached &&
        !request.dry_run) {
      request.audit = audit_payload(call, request.idempotency_key);
      t_scope->audit_attached = true;
    }
  }
  auto ticket = std::make_shared<std::atomic<TicketState>>(TicketState::kQueued);
  request.ticket = ticket;
  auto future = loop_.submit(std::move(request));
  if (options_.drive_loop_inline) loop_.drain();
  if (future.wait_for(options_.write_timeout) != std::future_status::ready) {
    TicketState expected = TicketState::kQueued;
    if (ticket->compare_exchange_strong(expected, TicketState::kAbandoned)) {
      if (t_scope) t_scope->audit_attached = false;  // Api::handle records the refusal instead
      Outcome o;
      o.status = unavailable_error(
          "the control loop did not take the request in time; it was not applied and will not be "
          "— retry");
      return o;
    }
    // The loop took it: its batch is running, so the answer is close.
    if (future.wait_for(options_.write_timeout) != std::future_status::ready) {
      Outcome o;
      o.status = unavailable_error(
          "the control loop did not answer in time; the request may still be applied — retry "
          "with the same idempotency key");
      return o;
    }
  }
  return future.get();
}

HttpResponse Api::respond(const Outcome& outcome, int success_status) {
  if (!outcome.status.ok()) return error_response(outcome.status);
  return json_response(success_status, outcome.response);
}

}  // namespace gf
