// The REST API: one Router holding every resource family's routes. Reads serve the loop's
// published view; writes go through the loop as Requests and answer after the journal commit.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "api/http.h"
#include "api/router.h"
#include "core/metrics.h"
#include "loop/control_loop.h"

namespace gf {

struct ApiOptions {
  size_t max_body_bytes = 4 << 20;
  std::chrono::milliseconds write_timeout{30000};
};

class Api {
 public:
  Api(ApiOptions options, ControlLoop& loop, Metrics& metrics);

  // Routes, counts gpufleet_http_requests_total{route,code}, never throws.
  HttpResponse handle(HttpRequest request);

  Router& router() { return router_; }
  ControlLoop& loop() { return loop_; }
  Metrics& metrics() { return metrics_; }
  const ApiOptions& options() const { return options_; }

  // Runs a write through the loop and waits for the commit (or the timeout).
  Outcome write(Request request);
  // Outcome → HTTP answer: errors in SPEC §1 shape, success as `status` with the response body.
  static HttpResponse respond(const Outcome& outcome, int success_status = 200);

 private:
  ApiOptions options_;
  ControlLoop& loop_;
  Metrics& metrics_;
  Router router_;
};

// Route registration, one function per resource family (api/<family>_api.cpp).
void register_system_routes(Api& api);
void register_event_routes(Api& api);

}  // namespace gf
