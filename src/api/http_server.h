// The HTTP/1.1 front of the Api, event-driven (Boost.Beast on Asio): a few I/O threads own every
// socket, so an idle or slow connection costs a socket and a buffer, never a thread; handlers run
// on a bounded worker pool because a write waits for the journal commit. Every request, unknown
// routes and every method included, goes through Api::handle so errors keep one JSON shape and
// metrics see every request. Limits and timeouts: docs/security.md; figures: docs/performance.md.
#pragma once

#include <functional>

#include <chrono>
#include <memory>
#include <string>

#include "api/api.h"
#include "core/result.h"

namespace gf {

struct HttpServerOptions {
  int io_threads = 2;       // event loop threads: accept, TLS, read, write
  int worker_threads = 16;  // threads that run Api::handle (a write blocks until it is durable)
  int backlog = 1024;       // listen(2) backlog: bursts of connects queue instead of stalling
  size_t max_connections = 20000;
  size_t max_queued_requests = 4096;  // requests waiting for a worker; beyond: 503 at once
  // Streamed answers (GET /v1/watch) open at once; beyond: 503. Each holds a socket and its
  // connection's buffers, never a thread.
  size_t max_streams = 2000;
  // A stream with nothing to send writes a heartbeat this often (a dead client is found then).
  std::chrono::milliseconds stream_heartbeat{15000};
  size_t max_header_bytes = 16 << 10;
  size_t max_body_bytes = (4 << 20) + 1;
  // From accept (or the end of the previous answer) to the end of the request headers: closes
  // idle keep-alive connections and clients that trickle headers.
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds idle_timeout{60000};  // keep-alive wait before the next request
  std::chrono::milliseconds body_timeout{30000};  // the whole body, once headers are in
  std::chrono::milliseconds write_timeout{30000};
  // TLS when both are set: PEM files (OpenSSL).
  std::string tls_cert_file;
  std::string tls_key_file;
};

class HttpServer {
 public:
  explicit HttpServer(Api& api, HttpServerOptions options = {});
  // Serves through `handler` instead of one Api (a replica swaps its Api when it steps down,
  // docs/replication.md); `api_max_body_bytes` is what the handler's Api accepts.
  using Handler = std::function<HttpResponse(HttpRequest)>;
  HttpServer(Handler handler, size_t api_max_body_bytes, HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (port 0 = any free port; SO_REUSEADDR but never SO_REUSEPORT, so a second
  // server on a busy port fails here) and serves on background threads.
  Status start(const std::string& host, int port);
  int port() const { return port_; }
  bool tls() const;
  // Stops accepting, closes every connection, waits for running handlers.
  void stop();

  struct Impl;  // the Asio state; public only so that the connection class can name it

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// "127.0.0.1:8470" → host, port. Errors name the flag.
Result<std::pair<std::string, int>> parse_listen_address(const std::string& text);
// Whether a --listen host is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback_host(const std::string& host);

}  // namespace gf
