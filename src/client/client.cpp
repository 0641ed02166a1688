#include "client/client.h"

#include <fcntl.h>
#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <string_view>
#include <thread>

namespace gf {

ErrorCode error_code_of(const std::string& type, int status) {
  for (ErrorCode c :
       {ErrorCode::kValidation, ErrorCode::kNotFound, ErrorCode::kConflict,
        ErrorCode::kResourceInUse, ErrorCode::kThrottling, ErrorCode::kUnauthenticated,
        ErrorCode::kForbidden, ErrorCode::kInvalidSignature, ErrorCode::kUnrecognizedClient,
        ErrorCode::kIncompleteSignature, ErrorCode::kMethodNotAllowed, ErrorCode::kPayloadTooLarge,
        ErrorCode::kNotImplemented, ErrorCode::kUnavailable, ErrorCode::kInternal}) {
    if (error_type_name(c) == type) return c;
  }
  switch (status) {
    case 401:
      return ErrorCode::kUnauthenticated;
    case 403:
      return ErrorCode::kForbidden;
    case 404:
      return ErrorCode::kNotFound;
    case 405:
      return ErrorCode::kMethodNotAllowed;
    case 409:
      return ErrorCode::kConflict;
    case 413:
      return ErrorCode::kPayloadTooLarge;
    case 429:
      return ErrorCode::kThrottling;
    case 501:
      return ErrorCode::kNotImplemented;
    case 503:
      return ErrorCode::kUnavailable;
    default:
      return status >= 500 ? ErrorCode::kInternal : ErrorCode::kValidation;
  }
}

Result<std::pair<int, std::string>> Client::send(const std::string& method, const std::string& path,
                                                 const std::string& body,
                                                 const std::string& content_type) {
  // A follower replica answers a write with 307 and the leader's URL (docs/replication.md): the
  // same request goes there, at most a few hops.
  constexpr int kMaxRedirects = 3;
  std::string server = options_.server;
  std::string target = path;
  for (int hop = 0;; ++hop) {
    GF_ASSIGN_OR_RETURN(auto answer, send_once(server, method, target, body, content_type));
    if ((answer.first != 307 && answer.first != 308) || hop == kMaxRedirects) return answer;
    const std::string location = last_header("location");
    const size_t scheme = location.find("://");
    if (scheme == std::string::npos) return answer;
    // The token goes with the request: never from https down to plain http.
    if (server.rfind("https://", 0) == 0 && location.rfind("https://", 0) != 0) return answer;
    const size_t slash = location.find('/', scheme + 3);
    server = location.substr(0, slash);
    target = slash == std::string::npos ? "/" : location.substr(slash);
  }
}

namespace {

// Who calls: the bearer token, else the user name.
httplib::Headers identity_headers(const ClientOptions& options) {
  httplib::Headers headers;
  if (!options.token.empty()) {
    headers.emplace("Authorization", "Bearer " + options.token);
  } else {
    headers.emplace("X-Gpufleet-User", options.user);
  }
  return headers;
}

// Close-on-exec: no process the caller starts (a pod, a lifecycle script) holds its connection.
void close_on_exec(int socket) { ::fcntl(socket, F_SETFD, FD_CLOEXEC); }

}  // namespace

Result<std::pair<int, std::string>> Client::send_once(const std::string& server,
                                                      const std::string& method,
                                                      const std::string& path,
                                                      const std::string& body,
                                                      const std::string& content_type) {
  httplib::Client cli(server);
  if (!cli.is_valid()) {
    return validation_error("--server: \"" + server + "\" is not a URL like http://127.0.0.1:8470");
  }
  cli.set_socket_options(close_on_exec);
  cli.set_connection_timeout(5);
  cli.set_read_timeout(options_.timeout_seconds);
  if (!options_.ca_cert.empty()) cli.set_ca_cert_path(options_.ca_cert.c_str());
  const httplib::Headers headers = identity_headers(options_);
  httplib::Result res{nullptr, httplib::Error::Unknown};
  if (method == "GET")
    res = cli.Get(path, headers);
  else if (method == "POST")
    res = cli.Post(path, headers, body, content_type);
  else if (method == "PUT")
    res = cli.Put(path, headers, body, content_type);
  else if (method == "PATCH")
    res = cli.Patch(path, headers, body, content_type);
  else if (method == "DELETE")
    res = cli.Delete(path, headers);
  if (!res) {
    return unavailable_error("cannot reach gpufleet at " + server + " (" +
                             httplib::to_string(res.error()) +
                             "); is `gpufleet serve` running? Set --server or GPUFLEET_SERVER");
  }
  last_headers_.clear();
  for (const auto& [k, v] : res->headers) {
    std::string key = k;
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    last_headers_[key] = v;
  }
  if (res->has_header("X-Gpufleet-Now")) {
    if (auto now = parse_iso8601(res->get_header_value("X-Gpufleet-Now")); now.ok()) {
      server_now_ = *now;
    }
  }
  return std::make_pair(res->status, res->body);
}

Result<Json> Client::to_json_result(int status, const std::string& body) {
  Json j = Json::object();
  if (!body.empty()) {
    auto parsed = parse_json(body);
    if (!parsed.ok()) {
      if (status >= 400) return Status(error_code_of("", status), body);
      return internal_error("the server answered something that is not JSON: " +
                            body.substr(0, 200));
    }
    j = std::move(parsed).value();
  }
  if (status >= 400) {
    std::string type = j.is_object() ? j.value("__type", "") : "";
    std::string message = j.is_object() ? j.value("message", body) : body;
    return Status(error_code_of(type, status), message);
  }
  return j;
}

Result<Json> Client::get(const std::string& path) {
  GF_ASSIGN_OR_RETURN(auto r, send("GET", path, "", ""));
  return to_json_result(r.first, r.second);
}

Result<std::string> Client::get_text(const std::string& path) {
  GF_ASSIGN_OR_RETURN(auto r, send("GET", path, "", ""));
  if (r.first >= 400) {
    auto j = to_json_result(r.first, r.second);
    return j.status();
  }
  return r.second;
}

Result<Json> Client::post(const std::string& path, const std::string& body,
                          const std::string& content_type) {
  GF_ASSIGN_OR_RETURN(auto r, send("POST", path, body, content_type));
  return to_json_result(r.first, r.second);
}

Result<Json> Client::put(const std::string& path, const std::string& body,
                         const std::string& content_type) {
  GF_ASSIGN_OR_RETURN(auto r, send("PUT", path, body, content_type));
  return to_json_result(r.first, r.second);
}

Result<Json> Client::patch(const std::string& path, const std::string& body) {
  GF_ASSIGN_OR_RETURN(auto r, send("PATCH", path, body, "application/json"));
  return to_json_result(r.first, r.second);
}

Result<Json> Client::del(const std::string& path) {
  GF_ASSIGN_OR_RETURN(auto r, send("DELETE", path, "", ""));
  return to_json_result(r.first, r.second);
}

std::string Client::last_header(const std::string& name) const {
  std::string key = name;
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto it = last_headers_.find(key);
  return it == last_headers_.end() ? "" : it->second;
}

struct EventWatch::Impl {
  httplib::Client cli;
  std::mutex mu;
  std::condition_variable cv;
  bool news = false;
  bool stopping = false;
  std::thread reader;

  explicit Impl(const std::string& server) : cli(server) { cli.set_socket_options(close_on_exec); }
};

EventWatch::EventWatch(const ClientOptions& options, std::string path)
    : impl_(std::make_unique<Impl>(options.server)) {
  Impl& w = *impl_;
  if (!w.cli.is_valid()) return;
  w.cli.set_connection_timeout(5);
  w.cli.set_read_timeout(3600);  // heartbeats come every 15 s; stop() ends the read
  if (!options.ca_cert.empty()) w.cli.set_ca_cert_path(options.ca_cert.c_str());
  httplib::Headers headers = identity_headers(options);
  w.reader = std::thread([&w, path = std::move(path), headers = std::move(headers)] {
    (void)w.cli.Get(path, headers, [&w](const char* data, size_t n) {
      // An event (not a heartbeat comment, not a bare resume id) is news.
      if (std::string_view(data, n).find("event: ") != std::string_view::npos) {
        std::lock_guard lock(w.mu);
        w.news = true;
        w.cv.notify_all();
      }
      std::lock_guard lock(w.mu);
      return !w.stopping;
    });
  });
}

EventWatch::~EventWatch() {
  Impl& w = *impl_;
  {
    std::lock_guard lock(w.mu);
    w.stopping = true;
  }
  w.cli.stop();
  if (w.reader.joinable()) w.reader.join();
}

bool EventWatch::wait_for_news(Duration max) {
  Impl& w = *impl_;
  std::unique_lock lock(w.mu);
  const bool came = w.cv.wait_for(lock, max, [&] { return w.news; });
  w.news = false;
  return came;
}

}  // namespace gf
