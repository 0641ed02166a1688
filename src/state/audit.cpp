#include "state/audit.h"

#include <set>

namespace gf {

Json AuditRecord::payload() const {
  Json j{{"Identity", identity}, {"Roles", roles}, {"Method", method},       {"Path", path},
         {"Resource", resource}, {"Code", code},   {"RequestId", request_id}};
  if (!error.empty()) j["Error"] = error;
  if (!idempotency_key.empty()) j["IdempotencyKey"] = idempotency_key;
  return j;
}

Result<AuditRecord> AuditRecord::from_payload(const Json& payload, Seq seq, Time time) {
  ObjectReader r(payload, "audit");
  AuditRecord a;
  a.seq = seq;
  a.time = time;
  a.identity = r.required_string("Identity");
  a.roles = r.optional_string_list("Roles").value_or(std::vector<std::string>{});
  a.method = r.required_string("Method");
  a.path = r.required_string("Path");
  a.resource = r.optional_string("Resource").value_or("");
  a.code = static_cast<int>(r.required_int("Code"));
  a.error = r.optional_string("Error").value_or("");
  a.idempotency_key = r.optional_string("IdempotencyKey").value_or("");
  a.request_id = r.optional_string("RequestId").value_or("");
  (void)r.optional_int("Seq");
  (void)r.optional_string("Time");
  (void)r.optional_int("TimeUs");
  if (!r.ok()) return r.status();
  return a;
}

Json AuditRecord::to_json() const {
  Json j = payload();
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
