// GET /v1/audit: the audit log, oldest first, filtered by time, identity and resource
// (docs/security.md). Served from the published view.
#include <fmt/format.h>

#include <charconv>

#include "api/api.h"

namespace gf {

namespace {

constexpr int kDefaultLimit = 1000;
constexpr int kMaxLimit = 10000;

}  // namespace

void register_audit_routes(Api& api) {
  api.router().add("GET", "/v1/audit", [&api](const HttpRequest& req) {
    auto view = api.loop().view();
    std::optional<Time> since;
    if (std::string s = req.query_or("since", ""); !s.empty()) {
      auto t = query_time("since", s, api.clock().now());
      if (!t.ok()) return error_response(t.status());
      since = *t;
    }
    const std::string identity = normalize_identity(req.query_or("identity", ""));
    const std::string resource = req.query_or("resource", "");
    int limit = kDefaultLimit;
    if (std::string l = req.query_or("limit", ""); !l.empty()) {
      auto [ptr, ec] = std::from_chars(l.data(), l.data() + l.size(), limit);
      if (ec != std::errc() || ptr != l.data() + l.size() || limit < 1 || limit > kMaxLimit) {
        return error_response(
            validation_error(fmt::format("limit: must be an integer from 1 to {}", kMaxLimit)));
      }
    }
    // The newest `limit` matches, answered oldest first.
    std::vector<const AuditRecord*> found;
    view->audit.for_each_newest_first([&](size_t, const AuditRecord& a) {
      if (since && a.time < *since) return false;
      if (!identity.empty() && normalize_identity(a.identity) != identity) return true;
      if (!resource.empty() && a.resource.rfind(resource, 0) != 0) return true;
      found.push_back(&a);
      return found.size() < static_cast<size_t>(limit);
    });
    Json list = Json::array();
    for (auto it = found.rbegin(); it != found.rend(); ++it) list.push_back((*it)->to_json());
    return json_response(200, Json{{"AuditRecords", std::move(list)}});
  });
}

}  // namespace gf
