// Journal event types of the control plane itself, typed as state/event_codec.h describes: its
// starts and stops, and user-visible events with no other state change. (The audit record,
// audit.recorded, is in state/audit.h.) Appliers live in fleet_state.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/time.h"
#include "state/event_codec.h"
#include "state/user_event.h"

namespace gf::event_codec {
template <>
struct Codec<EventLevel> {
  static Json put(const EventLevel& v) { return std::string(event_level_name(v)); }
  static void take(const Json& j, EventLevel& out) {
    if (!j.is_string()) throw Malformed(fmt::format("expected a string, got {}", j.type_name()));
    Result<EventLevel> level = parse_event_level(j.get<std::string>());
    if (!level.ok()) throw Malformed(level.status().message());
    out = *level;
  }
};
}  // namespace gf::event_codec

namespace gf::plane_events {

using event_codec::decode;
using event_codec::field;
using event_codec::to_event;
using event_codec::to_json;

// A `gpufleet serve` process took over the journal (`store`: where it keeps it).
struct Started {
  static constexpr std::string_view kType = "controlplane.started";
  std::string version;
  std::optional<std::string> store;
  static constexpr auto fields() {
    return std::tuple{field("version", &Started::version), field("store", &Started::store)};
  }
};
// Graceful shutdown finished its last batch.
struct Stopped {
  static constexpr std::string_view kType = "controlplane.stopped";
  std::string reason;
  static constexpr auto fields() { return std::tuple{field("reason", &Stopped::reason)}; }
};
// A user-visible event with no other state change: the envelope without EventId and EventTime
// (both come from the journal record).
struct Recorded {
  static constexpr std::string_view kType = "event.recorded";
  std::string resource_type;
  EventLevel level = EventLevel::kInfo;
  std::string description;
  Json details = Json::object();
  std::optional<std::string> cluster_name;
  std::optional<std::string> cluster_arn;
  std::optional<std::string> instance_group;
  std::optional<std::string> instance_id;
  static constexpr auto fields() {
    return std::tuple{field("ResourceType", &Recorded::resource_type),
                      field("EventLevel", &Recorded::level),
                      field("Description", &Recorded::description),
                      field("EventDetails", &Recorded::details),
                      field("ClusterName", &Recorded::cluster_name),
                      field("ClusterArn", &Recorded::cluster_arn),
                      field("InstanceGroupName", &Recorded::instance_group),
                      field("InstanceId", &Recorded::instance_id)};
  }
  UserEvent user_event() const;
};
// What leaves the hot state (docs/operations.md "What is kept where"): finished jobs past their
// retention, retired to the journal's history table in the same transaction, and the user events
// and in-memory audit records older than `events_before` (whole chunks of them: a chunk goes once
// its newest is older).
struct RetentionApplied {
  static constexpr std::string_view kType = "retention.applied";
  std::vector<std::string> jobs;
  std::optional<Time> events_before;
  static constexpr auto fields() {
    return std::tuple{field("jobs", &RetentionApplied::jobs),
                      field("events_before", &RetentionApplied::events_before)};
  }
};

}  // namespace gf::plane_events

namespace gf::event_type {

inline constexpr std::string_view kControlPlaneStarted = plane_events::Started::kType;
inline constexpr std::string_view kControlPlaneStopped = plane_events::Stopped::kType;
inline constexpr std::string_view kEventRecorded = plane_events::Recorded::kType;
inline constexpr std::string_view kRetentionApplied = plane_events::RetentionApplied::kType;

}  // namespace gf::event_type

namespace gf {

// Builds an event.recorded event.
Event record_event(std::string resource_type, EventLevel level, std::string description,
                   Json details = Json::object());

}  // namespace gf
