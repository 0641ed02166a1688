// /healthz, /metrics and /v1/version.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "api/api.h"

namespace gf {

namespace {

// GET /healthz: 200 "ok" (with a replica's role, epoch and lag), or 503 saying why writes are
// paused (docs/operations.md).
HttpResponse healthz(Api& api) {
  HttpResponse r;
  if (api.loop().failed()) {
    // Reads go on from the last state the journal holds; writes wait for the journal
    // (docs/operations.md).
    r.status = 503;
    r.content_type = "text/plain";
    r.body = "writes paused: " + api.loop().failure() + "\n";
    return r;
  }
  if (api.replica_list()) {
    if (const ReplicaState st = api.replica_state(); !st.store_error.empty()) {
      r.status = 503;
      r.content_type = "text/plain";
      r.body = "writes paused: the journal's database cannot be reached: " + st.store_error + "\n";
      return r;
    }
  }
  r.content_type = "text/plain";
  r.body = "ok\n";
  // A replicated server also says its role, lease epoch and lag (docs/replication.md).
  if (api.replica_list()) {
    const ReplicaState st = api.replica_state();
    const Seq applied = api.loop().view()->applied_seq;
    r.body += fmt::format(
        "role: {}\nepoch: {}\napplied_seq: {}\nlag_events: {}\nlag_seconds: {:.3f}\n", st.role,
        st.epoch, applied, std::max<Seq>(0, st.known_seq - applied), st.lag_seconds);
  }
  return r;
}

}  // namespace

void register_system_routes(Api& api) {
  api.router().add("GET", "/healthz", [&api](const HttpRequest&) { return healthz(api); });
  api.router().add("GET", "/metrics", [&api](const HttpRequest&) {
    auto view = api.loop().view();
    api.metrics()
        .gauge("gpufleet_state_applied_seq", "The last journal sequence applied to state.")
        .set(view->applied_seq);
    const ReplicaState st = api.replica_state();
    api.metrics()
        .gauge("gpufleet_replica_leader", "1 when this replica leads (holds the lease), else 0.")
        .set(st.role == "leader" ? 1 : 0);
    api.metrics()
        .gauge("gpufleet_replica_epoch", "The lease epoch this replica leads at or last saw.")
        .set(st.epoch);
    api.metrics()
        .gauge("gpufleet_replica_lag_events",
               "Events journaled that this replica has not applied yet.")
        .set(std::max<Seq>(0, st.known_seq - view->applied_seq));
    api.metrics()
        .gauge("gpufleet_replica_lag_milliseconds",
               "How long this replica has been behind the journal (0 when caught up).")
        .set(static_cast<int64_t>(st.lag_seconds * 1000));
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = api.metrics().render() + render_fleet_metrics(*view, api.clock().now());
    return r;
  });
  // Who the caller is, as the server authenticated it: the console shows it and hides the
  // buttons the caller's roles cannot use (docs/console.md). Public: a caller without a valid
  // token is told SignedIn: false (and whether the server wants a token at all).
  api.router().add("GET", "/v1/whoami", [&api](const HttpRequest& req) {
    Json roles = Json::array();
    for (const std::string& r : req.roles) roles.push_back(r);
    const bool signed_in = !req.roles.empty();
    return json_response(200, {{"Subject", signed_in ? req.caller : ""},
                               {"Roles", roles},
                               {"SignedIn", signed_in},
                               {"AuthRequired", api.authenticating()}});
  });
  // The hash of the fleet model (without journal position, keys and audit): equal before and
  // after a refused request. For tests and operators checking that nothing changed (admin).
  api.router().add("GET", "/v1/debug/state-hash", [&api](const HttpRequest&) {
    return read_view(api, [](const FleetView& v) -> Result<Json> {
      char buf[24];
      std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v.model_hash()));
      return Json{{"ModelHash", buf}, {"AppliedSeq", v.applied_seq}};
    });
  });
  api.router().add("GET", "/v1/version", [&api](const HttpRequest&) {
    auto view = api.loop().view();
    return json_response(200, Json{{"Version", GPUFLEET_VERSION},
                                   {"AppliedSeq", view->applied_seq},
                                   {"Starts", view->control_plane.starts}});
  });
}

}  // namespace gf
