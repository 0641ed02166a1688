// The audit log: one record per mutating API call, refused ones included (401, 403, 400 …),
// journaled as `audit.recorded` in the same batch as the call's own events, so it is exactly as
// durable as the change it describes and replicates with the journal. Bodies are never recorded.
// See docs/security.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "journal/journal.h"
#include "state/event_codec.h"

namespace gf {

struct AuditRecord {
  Seq seq = 0;
  Time time{};
  std::string identity;            // the token's subject, or the X-Gpufleet-User name without auth
  std::vector<std::string> roles;  // as granted when the call was made
  std::string method;
  std::string path;
  std::string resource;  // e.g. "remediations/rem-0001", "clusters/training"
  int code = 0;          // the HTTP status answered
  std::string error;     // the error type ("ValidationException"), "" on success
  std::string idempotency_key;
  std::string request_id;
  // A record of refused calls (docs/security.md "What is audited"): how many calls it stands for
  // (1 for one call), where the calls came from when no identity vouched for them (the client
  // address), and since when it counts them.
  int64_t count = 1;
  std::string source;
  std::optional<Time> since;

  // The journal payload (seq and time come from the record).
  Json payload() const;
  static Result<AuditRecord> from_payload(const Json& payload, Seq seq, Time time);
  // The API and snapshot shape: the payload plus Seq and Time.
  Json to_json() const;
  static Result<AuditRecord> from_json(const Json& j);
};

// The journal event of one audit record (state/event_codec.h): the record without its seq and
// time, which come from the journal.
struct AuditRecorded {
  static constexpr std::string_view kType = "audit.recorded";
  std::string identity;
  std::vector<std::string> roles;
  std::string method;
  std::string path;
  std::string resource;
  int code = 0;
  std::string request_id;
  std::optional<std::string> error;            // none on success
  std::optional<std::string> idempotency_key;  // none when the call had none
  std::optional<int64_t> count;                // none: one call
  std::optional<std::string> source;           // none: the identity speaks for it
  std::optional<std::string> since;            // ISO 8601; none: the record's own time
  static constexpr auto fields() {
    using event_codec::field;
    return std::tuple{field("Identity", &AuditRecorded::identity),
                      field("Roles", &AuditRecorded::roles),
                      field("Method", &AuditRecorded::method),
                      field("Path", &AuditRecorded::path),
                      field("Resource", &AuditRecorded::resource),
                      field("Code", &AuditRecorded::code),
                      field("RequestId", &AuditRecorded::request_id),
                      field("Error", &AuditRecorded::error),
                      field("IdempotencyKey", &AuditRecorded::idempotency_key),
                      field("Count", &AuditRecorded::count),
                      field("Source", &AuditRecorded::source),
                      field("Since", &AuditRecorded::since)};
  }
};

namespace event_type {
inline constexpr std::string_view kAuditRecorded = AuditRecorded::kType;
}  // namespace event_type

// "POST", "/v1/remediations/rem-1/approve" → "remediations/rem-1": the path below /v1 without
// the verb segment of an action.
std::string audit_resource(const std::string& path);

}  // namespace gf
