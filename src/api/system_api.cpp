// /healthz, /metrics and /v1/version.
#include <cstdio>

#include "api/api.h"

namespace gf {

void register_system_routes(Api& api) {
  api.router().add("GET", "/healthz", [&api](const HttpRequest&) {
    HttpResponse r;
    if (api.loop().failed()) {
      r.status = 503;
      r.content_type = "text/plain";
      r.body = "control loop stopped\n";
      return r;
    }
    r.content_type = "text/plain";
    r.body = "ok\n";
    return r;
  });
  api.router().add("GET", "/metrics", [&api](const HttpRequest&) {
    auto view = api.loop().view();
    api.metrics()
        .gauge("gpufleet_state_applied_seq", "The last journal sequence applied to state.")
        .set(view->applied_seq);
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = api.metrics().render() + render_fleet_metrics(*view, api.clock().now());
    return r;
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
