// Transport-neutral request/response types: handlers and the router never see cpp-httplib, so
// they are tested without sockets and the simulator calls them in-process.
#pragma once

#include <functional>
#include <map>
#include <memory>
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
  // The request target as it arrived, path and query still percent-encoded (what a Signature V4
  // signs); empty for a request made in process, whose `path` and `query` then stand for it.
  std::string target;
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

// A response body written as it comes (server-sent events; docs/api.md "Watching"). The server
// writes the head, then asks next() for bytes until it says the stream ended; when next() has
// nothing, the server asks when_ready() to wake it and waits without a thread. A stream is used
// by one connection at a time.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // The next bytes of the body, empty when there is nothing now; sets `end` once it is over.
  virtual std::string next(bool& end) = 0;
  // Calls `wake` once, from any thread (the caller's included, at once), when next() may have
  // more. Called only after next() answered nothing.
  virtual void when_ready(std::function<void()> wake) = 0;
  // Bytes the server sends while nothing else comes, so proxies and clients see it alive.
  virtual std::string heartbeat() const { return ": keep-alive\n\n"; }
  // Whether the stream is over though nothing woke it (a deadline passed): asked at each
  // heartbeat, and the server then ends the stream instead of writing one.
  virtual bool expired() const { return false; }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string route;  // the matched route pattern, for metrics ("unmatched" otherwise)
  std::map<std::string, std::string> headers;  // extra response headers (Retry-After, X-Request-Id)
  std::string error_type;                      // the __type of an error answer, for the audit log
  // Set: the body is this stream, written as it comes after the head (`body` is ignored).
  std::shared_ptr<ResponseStream> stream;
};

HttpResponse json_response(int status, const Json& body);
// %XX → byte; `plus_is_space` for query strings. A malformed escape stays as written.
std::string percent_decode(std::string_view s, bool plus_is_space);

// A time in a query string: ISO 8601 ("2026-01-01T00:00:00Z"), or a duration back from the
// server's own clock ("1h" = an hour before `now`), so a relative filter means the same on a
// --sim-speed server as the server's timestamps. The error names `key`.
Result<Time> query_time(const std::string& key, const std::string& text, Time now);
// docs/api.md: {"__type": "<Code>", "message": "<plain sentence>"} with the code's HTTP status.
HttpResponse error_response(const Status& status);

}  // namespace gf
