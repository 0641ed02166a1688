// Transport-neutral request/response types: handlers and the router never see cpp-httplib, so
// they are tested without sockets and the simulator calls them in-process.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"

namespace gf {

struct HttpRequest {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string path;
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> path_params;  // filled by the router
  std::map<std::string, std::string> headers;      // lower-case names
  std::string body;
  std::string caller = "anonymous";  // X-Gpufleet-User or the token's subject
  std::vector<std::string> roles;    // the token's roles; every role without an auth file
  std::string peer;                  // the client's address, for logs and unauthenticated limits
  std::string request_id;            // minted by Api::handle, answered as X-Request-Id

  std::string query_or(const std::string& key, const std::string& fallback) const;
  std::string header_or(const std::string& key, const std::string& fallback) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string route;  // the matched route pattern, for metrics ("unmatched" otherwise)
  std::map<std::string, std::string> headers;  // extra response headers (Retry-After, X-Request-Id)
  std::string error_type;                      // the __type of an error answer, for the audit log
};

HttpResponse json_response(int status, const Json& body);

// A time in a query string: ISO 8601 ("2026-01-01T00:00:00Z"), or a duration back from the
// server's own clock ("1h" = an hour before `now`), so a relative filter means the same on a
// --sim-speed server as the server's timestamps. The error names `key`.
Result<Time> query_time(const std::string& key, const std::string& text, Time now);
// docs/api.md: {"__type": "<Code>", "message": "<plain sentence>"} with the code's HTTP status.
HttpResponse error_response(const Status& status);

}  // namespace gf
