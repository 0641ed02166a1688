#include "api/api.h"

#include <exception>

namespace gf {

Api::Api(ApiOptions options, ControlLoop& loop, Metrics& metrics, const Clock& clock,
         Provisioner* provisioner)
    : options_(options), loop_(loop), metrics_(metrics), clock_(clock), provisioner_(provisioner) {
  register_system_routes(*this);
  register_event_routes(*this);
  if (provisioner_) {
    register_cluster_routes(*this);
    register_billing_routes(*this);
    register_quota_routes(*this);
    register_job_routes(*this);
    register_health_routes(*this);
  }
}

std::string idempotency_key(const HttpRequest& request, const Json* body) {
  std::string key = request.header_or("idempotency-key", "");
  if (key.empty() && body && body->is_object() && body->contains("ClientToken") &&
      (*body)["ClientToken"].is_string()) {
    key = (*body)["ClientToken"].get<std::string>();
  }
  return key.empty() ? "" : request.method + " " + request.path + " " + key;
}

HttpResponse Api::handle(HttpRequest request) {
  HttpResponse r;
  if (request.body.size() > options_.max_body_bytes) {
    r = error_response(Status(ErrorCode::kPayloadTooLarge,
                              "request body of " + std::to_string(request.body.size()) +
                                  " bytes is over the limit of " +
                                  std::to_string(options_.max_body_bytes) + " bytes"));
    r.route = "unmatched";
  } else {
    try {
      r = router_.dispatch(std::move(request));
    } catch (const std::exception& e) {
      r = error_response(internal_error(std::string("unexpected error: ") + e.what()));
      r.route = "unmatched";
    }
  }
  metrics_
      .counter("gpufleet_http_requests_total", "HTTP requests by route and status code.",
               prometheus_label("route", r.route) + "," +
                   prometheus_label("code", std::to_string(r.status)))
      .inc();
  return r;
}

Outcome Api::write(Request request) {
  auto future = loop_.submit(std::move(request));
  if (options_.drive_loop_inline) loop_.drain();
  if (future.wait_for(options_.write_timeout) != std::future_status::ready) {
    Outcome o;
    o.status = unavailable_error(
        "the control loop did not answer in time; the request may still be applied — retry "
        "with the same idempotency key");
    return o;
  }
  return future.get();
}

HttpResponse Api::respond(const Outcome& outcome, int success_status) {
  if (!outcome.status.ok()) return error_response(outcome.status);
  return json_response(success_status, outcome.response);
}

}  // namespace gf
