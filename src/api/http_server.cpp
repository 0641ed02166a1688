#include "api/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <thread>

namespace gf {

namespace {

HttpRequest to_request(const httplib::Request& req) {
  HttpRequest r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.params) r.query[k] = v;
  for (const auto& [k, v] : req.headers) {
    std::string lower = k;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    r.headers[lower] = v;
  }
  r.body = req.body;
  r.caller = r.header_or("x-gpufleet-user", "anonymous");
  if (r.caller.empty()) r.caller = "anonymous";
  return r;
}

}  // namespace

Result<std::pair<std::string, int>> parse_listen_address(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return validation_error("--listen: expected HOST:PORT such as 127.0.0.1:8470, got \"" + text +
                            "\"");
  }
  int port = -1;
  const char* b = text.data() + colon + 1;
  const char* e = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(b, e, port);
  if (ec != std::errc() || ptr != e || port < 0 || port > 65535) {
    return validation_error("--listen: port must be 0-65535, got \"" + text.substr(colon + 1) +
                            "\"");
  }
  return std::make_pair(text.substr(0, colon), port);
}

HttpServer::HttpServer(Api& api) : api_(api), server_(std::make_unique<httplib::Server>()) {
  // The body limit is enforced by Api::handle so the 413 keeps our JSON shape; httplib's own
  // limit sits just above it to stop reading absurd bodies early.
  server_->set_payload_max_length(api_.options().max_body_bytes + 1);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    HttpResponse r = api_.handle(to_request(req));
    res.status = r.status;
    res.set_content(r.body, r.content_type.c_str());
  };
  const std::string any = R"(/.*)";
  server_->Get(any, handler);
  server_->Post(any, handler);
  server_->Put(any, handler);
  server_->Patch(any, handler);
  server_->Delete(any, handler);
  server_->Options(any, handler);
  // Failures httplib answers itself (413 over its limit, 400 bad request line): same JSON shape.
  server_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    Status st;
    if (res.status == 413) {
      st = Status(ErrorCode::kPayloadTooLarge, "request body is over the server's size limit");
    } else if (res.status == 404) {
      st = not_found_error("no such resource");
    } else if (res.status >= 500) {
      st = internal_error("the server failed to handle the request");
    } else {
      st = validation_error("malformed HTTP request (status " + std::to_string(res.status) + ")");
    }
    HttpResponse r = error_response(st);
    res.set_content(r.body, r.content_type.c_str());
  });
}

HttpServer::~HttpServer() { stop(); }

Status HttpServer::start(const std::string& host, int port) {
  if (port == 0) {
    port_ = server_->bind_to_any_port(host.c_str());
    if (port_ <= 0) return unavailable_error("cannot listen on " + host + ": bind failed");
  } else {
    if (!server_->bind_to_port(host.c_str(), port)) {
      return unavailable_error("cannot listen on " + host + ":" + std::to_string(port) +
                               " (address in use, or not a local address?)");
    }
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() only reaches a server that is already accepting; wait for that so a signal that
  // arrives right after start() cannot leave the listener running and stop() joining forever.
  while (!server_->is_running()) std::this_thread::yield();
  return ok_status();
}

void HttpServer::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace gf
