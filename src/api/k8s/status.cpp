#include "api/k8s/status.h"

#include <fmt/format.h>

namespace gf::k8s {
namespace {

std::string reason_for(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return code >= 500 ? "InternalError" : "BadRequest";
  }
}

// "spec.pytorchReplicaSpecs.Master: ..." → "spec.pytorchReplicaSpecs.Master": the field path
// gpufleet's messages start with, or "" when the message does not start with one.
std::string leading_field(const std::string& message) {
  const size_t colon = message.find(": ");
  if (colon == std::string::npos || colon == 0) return "";
  const std::string head = message.substr(0, colon);
  if (head.find(' ') != std::string::npos) return "";
  return head;
}

Json details_of(const Subject& s) {
  Json d = Json::object();
  if (s.kind == nullptr) return d;
  if (!s.name.empty()) d["name"] = s.name;
  d["group"] = s.kind->group;
  d["kind"] = s.kind->plural;
  return d;
}

}  // namespace

HttpResponse status_response(int code, const std::string& reason, const std::string& message,
                             Json details) {
  Json body{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", reason},
            {"code", code}};
  if (!details.empty()) body["details"] = std::move(details);
  HttpResponse r = json_response(code, body);
  r.error_type = reason;
  return r;
}

void to_status(HttpResponse& r, const Subject& s) {
  if (r.status < 400 || r.stream) return;
  auto parsed = parse_json(r.body);
  if (parsed.ok() && parsed->is_object() && parsed->value("kind", "") == "Status") return;
  std::string message = r.body;
  if (parsed.ok() && parsed->is_object() && parsed->contains("message") &&
      (*parsed)["message"].is_string()) {
    message = (*parsed)["message"].get<std::string>();
  }
  int code = r.status;
  Json details = details_of(s);
  const std::string field = leading_field(message);
  if (code == 400 && s.write && s.kind != nullptr) {
    code = 422;
    details["causes"] =
        Json::array({{{"reason", "FieldValueInvalid"}, {"message", message}, {"field", field}}});
    message =
        fmt::format("{}.{} \"{}\" is invalid: {}", s.kind->kind, s.kind->group, s.name, message);
  } else if (code == 404 && s.kind != nullptr && !s.name.empty()) {
    message = fmt::format("{} \"{}\" not found", s.kind->qualified(), s.name);
  } else if (code == 403 && s.kind != nullptr) {
    message = fmt::format("{} \"{}\" is forbidden: {}", s.kind->qualified(), s.name, message);
  }
  std::string reason = reason_for(code);
  if (code == 409 && message.find("already exists") != std::string::npos) reason = "AlreadyExists";
  HttpResponse out = status_response(code, reason, message, std::move(details));
  out.route = r.route;
  for (const auto& [k, v] : r.headers) {
    if (k != "x-amzn-ErrorType") out.headers[k] = v;
  }
  r = std::move(out);
}

Json success_status(const Subject& s) {
  return Json{{"kind", "Status"},
              {"apiVersion", "v1"},
              {"metadata", Json::object()},
              {"status", "Success"},
              {"details", details_of(s)}};
}

}  // namespace gf::k8s
