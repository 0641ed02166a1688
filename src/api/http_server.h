// cpp-httplib front of the Api. Every route, including unknown ones and every method, goes
// through Api::handle so that errors keep the SPEC §1 shape and metrics see every request.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "api/api.h"
#include "core/result.h"

namespace httplib {
class Server;
}

namespace gf {

class HttpServer {
 public:
  explicit HttpServer(Api& api);
  ~HttpServer();

  // Binds host:port (port 0 = any free port) and serves on a background thread.
  Status start(const std::string& host, int port);
  int port() const { return port_; }
  void stop();

 private:
  Api& api_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// "127.0.0.1:8470" → host, port. Errors name the flag.
Result<std::pair<std::string, int>> parse_listen_address(const std::string& text);

}  // namespace gf
