// The user-visible event envelope of docs/provisioning.md (ListClusterEvents shape, reused for
// every ResourceType). User events are a projection of journal events: applying a journal event may
// record zero or more of them.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

#include "core/json.h"
#include "core/time.h"
#include "journal/journal.h"

namespace gf {

enum class EventLevel { kInfo, kWarn, kError };
std::string_view event_level_name(EventLevel level);
Result<EventLevel> parse_event_level(std::string_view text);

// Every ResourceType a user event has; the event filters accept these (in any letter case).
inline constexpr std::array<std::string_view, 8> kUserEventResourceTypes{
    "Cluster", "InstanceGroup", "Instance", "Job", "Alert", "Remediation", "Host", "ControlPlane"};
// The canonical spelling of `text` ("alert" → "Alert"); an error naming `field` and the known
// types when it is none of them.
Result<std::string> parse_resource_type(std::string_view text, std::string_view field);

struct UserEvent {
  std::string event_id;  // "ev-<seq>-<index>", ordered like the journal
  Seq seq = 0;
  std::string resource_type;  // Cluster | InstanceGroup | Instance | ControlPlane | Job | …
  Time time{};
  EventLevel level = EventLevel::kInfo;
  std::string description;
  Json details = Json::object();
  std::string cluster_name;  // empty when not about a cluster
  std::string cluster_arn;
  std::string instance_group;
  std::string instance_id;

  // Wire shape: EventId, ResourceType, EventTime, EventLevel, Description, EventDetails and the
  // cluster fields when set.
  Json to_wire() const;
  // to_wire() with `extra` members added, as dump() writes it (keys in order), without building
  // the document or copying the details: a simulation writes every event so (events.jsonl).
  std::string to_wire_text(const std::map<std::string, Json, std::less<>>& extra = {}) const;
  // Full round trip for snapshots.
  Json to_json() const;
  static Result<UserEvent> from_json(const Json& j);
  // The envelope fields without EventId, Seq and time (the event.recorded journal payload).
  static Result<UserEvent> from_envelope(const Json& j, const std::string& path);
};

}  // namespace gf
