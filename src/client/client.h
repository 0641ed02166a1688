// The one HTTP client of the gpufleet API, shared by the CLI and the node agent. Errors come back
// as a Status carrying the server's __type (ErrorCode) and message, so a caller prints the
// server's sentence, and retries only what is worth retrying (Unavailable, Throttling).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "core/url.h"

namespace gf {

struct ClientOptions {
  std::string server = "http://127.0.0.1:8470";
  std::string user = "anonymous";  // sent as X-Gpufleet-User without a token
  int timeout_seconds = 60;
  std::string token;    // sent as Authorization: Bearer (then no X-Gpufleet-User)
  std::string ca_cert;  // PEM file that signs an https server's certificate
};

// The ErrorCode of an error answer: by its __type, else by its HTTP status.
ErrorCode error_code_of(const std::string& type, int status);

class Client {
 public:
  explicit Client(ClientOptions options) : options_(std::move(options)) {}

  Result<Json> get(const std::string& path);
  Result<Json> post(const std::string& path, const std::string& body,
                    const std::string& content_type = "application/json");
  Result<Json> put(const std::string& path, const std::string& body,
                   const std::string& content_type = "application/json");
  Result<Json> patch(const std::string& path, const std::string& body);
  Result<Json> del(const std::string& path);

  // GET returning the raw body (e.g. /metrics).
  Result<std::string> get_text(const std::string& path);

  // The server's clock as its last answer gave it (X-Gpufleet-Now), or nullopt before the first
  // answer (or from a server that does not send it). Ages are computed against it: a
  // --sim-speed server runs ahead of the client's clock.
  std::optional<Time> server_now() const { return server_now_; }
  // A header of the last answer ("" when it had none), e.g. X-Log-Offset.
  std::string last_header(const std::string& name) const;
  // Later calls go to `server` (an agent whose server restarted on another port).
  void set_server(std::string server) { options_.server = std::move(server); }
  const std::string& server() const { return options_.server; }
  const ClientOptions& options() const { return options_; }

 private:
  Result<std::pair<int, std::string>> send(const std::string& method, const std::string& path,
                                           const std::string& body,
                                           const std::string& content_type);
  Result<std::pair<int, std::string>> send_once(const std::string& server,
                                                const std::string& method, const std::string& path,
                                                const std::string& body,
                                                const std::string& content_type);
  Result<Json> to_json_result(int status, const std::string& body);

  ClientOptions options_;
  std::optional<Time> server_now_;
  std::map<std::string, std::string> last_headers_;  // lower-case names
};

// Wakes a waiting command when the server has news (GET /v1/watch, docs/api.md "Watching")
// instead of letting it poll on a fixed interval. A server without the watch, or a stream that
// breaks, leaves wait_for_news() to wait out its bound: the caller then polls as before.
class EventWatch {
 public:
  // Opens `path` (a /v1/watch URL) on a thread of its own.
  EventWatch(const ClientOptions& options, std::string path);
  ~EventWatch();  // closes the stream and joins the thread
  EventWatch(const EventWatch&) = delete;
  EventWatch& operator=(const EventWatch&) = delete;

  // Waits until an event came since the last call, or `max` passes: true when one came.
  bool wait_for_news(Duration max);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gf
