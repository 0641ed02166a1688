#include "api/http.h"

namespace gf {

std::string HttpRequest::query_or(const std::string& key, const std::string& fallback) const {
  auto it = query.find(key);
  return it == query.end() ? fallback : it->second;
}

std::string HttpRequest::header_or(const std::string& key, const std::string& fallback) const {
  auto it = headers.find(key);
  return it == headers.end() ? fallback : it->second;
}

Result<Time> query_time(const std::string& key, const std::string& text, Time now) {
  if (auto t = parse_iso8601(text); t.ok()) return *t;
  if (auto d = parse_duration(text); d.ok()) return now - *d;
  return validation_error(key + ": expected an ISO 8601 time such as 2026-01-01T00:00:00Z or a " +
                          "duration back from now such as 1h, got \"" + printable(text, 60) + "\"");
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += plus_is_space && s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

HttpResponse json_response(int status, const Json& body) {
  HttpResponse r;
  r.status = status;
  r.body = safe_dump(body, 2) + "\n";
  return r;
}

HttpResponse error_response(const Status& status) {
  Json body = {{"__type", error_type_name(status.code())}, {"message", status.message()}};
  HttpResponse r = json_response(http_status(status.code()), body);
  r.error_type = std::string(error_type_name(status.code()));
  r.headers["x-amzn-ErrorType"] = r.error_type;  // where the AWS SDKs look first
  return r;
}

}  // namespace gf
