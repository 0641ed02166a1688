// Journal event types for the objects users apply: quota objects (docs/quota.md) and
// PropagationPolicies (docs/dispatch.md), typed as state/event_codec.h describes. Appliers live in
// job_apply.cpp (quota) and workload_apply.cpp (policies).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "model/quota_objects.h"
#include "state/event_codec.h"

namespace gf::event_codec {
template <>
struct Codec<frontend::Kind>
    : EnumCodec<frontend::Kind, &frontend::kind_name, &frontend::kind_from_name> {};
}  // namespace gf::event_codec

namespace gf::object_events {

using event_codec::decode;
using event_codec::field;
using event_codec::to_event;
using event_codec::to_json;

// One quota object in its canonical stored form.
struct QuotaObjectDoc {
  frontend::Kind kind = frontend::Kind::kClusterQueue;
  std::string ns;  // empty for cluster-scoped kinds
  std::string name;
  Json doc;
  static constexpr auto fields() {
    return std::tuple{field("kind", &QuotaObjectDoc::kind), field("namespace", &QuotaObjectDoc::ns),
                      field("name", &QuotaObjectDoc::name), field("doc", &QuotaObjectDoc::doc)};
  }
};
// Quota objects created or replaced (POST /v1/apply, the AWS shapes), all in one event.
struct QuotaApplied {
  static constexpr std::string_view kType = "quota.applied";
  std::vector<QuotaObjectDoc> objects;
  static constexpr auto fields() { return std::tuple{field("objects", &QuotaApplied::objects)}; }
};
struct QuotaDeleted {
  static constexpr std::string_view kType = "quota.deleted";
  frontend::Kind kind = frontend::Kind::kClusterQueue;
  std::string ns;
  std::string name;
  static constexpr auto fields() {
    return std::tuple{field("kind", &QuotaDeleted::kind), field("namespace", &QuotaDeleted::ns),
                      field("name", &QuotaDeleted::name)};
  }
};

// One PropagationPolicy as applied.
struct PolicyDoc {
  std::string ns;
  std::string name;
  Json doc;
  static constexpr auto fields() {
    return std::tuple{field("namespace", &PolicyDoc::ns), field("name", &PolicyDoc::name),
                      field("doc", &PolicyDoc::doc)};
  }
};
// PropagationPolicies created or replaced.
struct PolicyApplied {
  static constexpr std::string_view kType = "policy.applied";
  std::vector<PolicyDoc> objects;
  static constexpr auto fields() { return std::tuple{field("objects", &PolicyApplied::objects)}; }
};
struct PolicyDeleted {
  static constexpr std::string_view kType = "policy.deleted";
  std::string ns;
  std::string name;
  static constexpr auto fields() {
    return std::tuple{field("namespace", &PolicyDeleted::ns), field("name", &PolicyDeleted::name)};
  }
};

}  // namespace gf::object_events

namespace gf::event_type {

inline constexpr std::string_view kQuotaApplied = object_events::QuotaApplied::kType;
inline constexpr std::string_view kQuotaDeleted = object_events::QuotaDeleted::kType;
inline constexpr std::string_view kPolicyApplied = object_events::PolicyApplied::kType;
inline constexpr std::string_view kPolicyDeleted = object_events::PolicyDeleted::kType;

}  // namespace gf::event_type
