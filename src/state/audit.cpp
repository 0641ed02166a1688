#include "state/audit.h"

#include <set>

namespace gf {

Json AuditRecord::payload() const {
  AuditRecorded e;
  e.identity = identity;
  e.roles = roles;
  e.method = method;
  e.path = path;
  e.resource = resource;
  e.code = code;
  e.request_id = request_id;
  if (!error.empty()) e.error = error;
  if (!idempotency_key.empty()) e.idempotency_key = idempotency_key;
  if (count != 1) e.count = count;
  if (!source.empty()) e.source = source;
  if (since) e.since = format_iso8601(*since);
  return event_codec::to_json(e);
}

Result<AuditRecord> AuditRecord::from_payload(const Json& payload, Seq seq, Time time) {
  GF_ASSIGN_OR_RETURN(AuditRecorded e, event_codec::decode<AuditRecorded>(payload));
  AuditRecord a;
  a.seq = seq;
  a.time = time;
  a.identity = std::move(e.identity);
  a.roles = std::move(e.roles);
  a.method = std::move(e.method);
  a.path = std::move(e.path);
  a.resource = std::move(e.resource);
  a.code = e.code;
  a.error = e.error.value_or("");
  a.idempotency_key = e.idempotency_key.value_or("");
  a.request_id = std::move(e.request_id);
  a.count = e.count.value_or(1);
  if (a.count < 1) return validation_error("audit: Count must be at least 1");
  a.source = e.source.value_or("");
  if (e.since) {
    GF_ASSIGN_OR_RETURN(Time t, parse_iso8601(*e.since));
    a.since = t;
  }
  return a;
}

Json AuditRecord::to_json() const {
  Json j = payload();
  j.erase("v");  // the API and snapshot shape has no event version
  j["Seq"] = seq;
  j["Time"] = format_iso8601(time);
  j["TimeUs"] = to_micros(time);
  return j;
}

Result<AuditRecord> AuditRecord::from_json(const Json& j) {
  if (!j.is_object() || !j.contains("Seq") || !j.contains("TimeUs") ||
      !j["TimeUs"].is_number_integer() || !j["Seq"].is_number_integer()) {
    return validation_error("audit: expected an object with Seq and TimeUs");
  }
  return from_payload(j, j["Seq"].get<Seq>(), from_micros(j["TimeUs"].get<int64_t>()));
}

std::string audit_resource(const std::string& path) {
  static const std::set<std::string, std::less<>> kVerbs = {
      "approve", "reject", "cancel", "terminate", "reset", "signals", "clear", "heartbeat"};
  std::string p = path;
  if (p.rfind("/v1/", 0) == 0) p = p.substr(4);
  while (!p.empty() && p.back() == '/') p.pop_back();
  for (int i = 0; i < 2; ++i) {
    const size_t slash = p.rfind('/');
    if (slash == std::string::npos || !kVerbs.contains(std::string_view(p).substr(slash + 1)))
      break;
    p = p.substr(0, slash);
  }
  return p;
}

}  // namespace gf
