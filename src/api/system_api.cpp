// /healthz, /metrics and /v1/version.
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
    r.body = api.metrics().render();
    return r;
  });
  api.router().add("GET", "/v1/version", [&api](const HttpRequest&) {
    auto view = api.loop().view();
    return json_response(200, Json{{"Version", GPUFLEET_VERSION},
                                   {"AppliedSeq", view->applied_seq},
                                   {"Starts", view->control_plane.starts}});
  });
}

}  // namespace gf
