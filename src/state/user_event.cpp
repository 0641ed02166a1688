#include "state/user_event.h"

#include <fmt/format.h>

#include <cctype>

namespace gf {

std::string_view event_level_name(EventLevel level) {
  switch (level) {
    case EventLevel::kInfo:
      return "Info";
    case EventLevel::kWarn:
      return "Warn";
    case EventLevel::kError:
      return "Error";
  }
  return "Info";
}

Result<EventLevel> parse_event_level(std::string_view text) {
  if (text == "Info") return EventLevel::kInfo;
  if (text == "Warn") return EventLevel::kWarn;
  if (text == "Error") return EventLevel::kError;
  return validation_error("EventLevel: expected Info, Warn or Error, got \"" + std::string(text) +
                          "\"");
}

Result<std::string> parse_resource_type(std::string_view text, std::string_view field) {
  auto lower = [](std::string_view v) {
    std::string out(v);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::string known;
  for (std::string_view t : kUserEventResourceTypes) {
    if (lower(t) == lower(text)) return std::string(t);
    known += (known.empty() ? "" : ", ") + std::string(t);
  }
  return validation_error(fmt::format("{}: expected one of {}, got \"{}\"", field, known, text));
}

Json UserEvent::to_wire() const {
  Json j = {{"EventId", event_id},
            {"ResourceType", resource_type},
            {"EventTime", format_iso8601(time)},
            {"EventLevel", event_level_name(level)},
            {"Description", description},
            {"EventDetails", details}};
  if (!cluster_name.empty()) j["ClusterName"] = cluster_name;
  if (!cluster_arn.empty()) j["ClusterArn"] = cluster_arn;
  if (!instance_group.empty()) j["InstanceGroupName"] = instance_group;
  if (!instance_id.empty()) j["InstanceId"] = instance_id;
  return j;
}

std::string UserEvent::to_wire_text(const std::map<std::string, Json, std::less<>>& extra) const {
  // Each member's text, by key: dump() writes an object's members in its map's key order.
  std::map<std::string_view, std::string> members;
  auto text = [&](std::string_view key, const std::string& value) {
    members.emplace(key, Json(value).dump());
  };
  text("EventId", event_id);
  text("ResourceType", resource_type);
  text("EventTime", format_iso8601(time));
  text("EventLevel", std::string(event_level_name(level)));
  text("Description", description);
  members.emplace("EventDetails", details.dump());
  if (!cluster_name.empty()) text("ClusterName", cluster_name);
  if (!cluster_arn.empty()) text("ClusterArn", cluster_arn);
  if (!instance_group.empty()) text("InstanceGroupName", instance_group);
  if (!instance_id.empty()) text("InstanceId", instance_id);
  for (const auto& [key, value] : extra) members.insert_or_assign(key, value.dump());
  std::string out = "{";
  for (const auto& [key, value] : members) {
    if (out.size() > 1) out += ',';
    out += Json(std::string(key)).dump();
    out += ':';
    out += value;
  }
  out += '}';
  return out;
}

Json UserEvent::to_json() const {
  Json j = to_wire();
  j["Seq"] = seq;
  j["TimeMicros"] = to_micros(time);
  return j;
}

Result<UserEvent> UserEvent::from_envelope(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  UserEvent e;
  e.resource_type = r.required_string("ResourceType");
  e.description = r.required_string("Description");
  std::string level = r.optional_string("EventLevel").value_or("Info");
  if (const Json* d = r.optional_value("EventDetails")) e.details = *d;
  e.cluster_name = r.optional_string("ClusterName").value_or("");
  e.cluster_arn = r.optional_string("ClusterArn").value_or("");
  e.instance_group = r.optional_string("InstanceGroupName").value_or("");
  e.instance_id = r.optional_string("InstanceId").value_or("");
  if (!r.ok()) return r.status();
  GF_ASSIGN_OR_RETURN(e.level, parse_event_level(level));
  return e;
}

Result<UserEvent> UserEvent::from_json(const Json& j) {
  GF_ASSIGN_OR_RETURN(UserEvent e, from_envelope(j, "event"));
  ObjectReader r(j, "event");
  e.event_id = r.required_string("EventId");
  e.seq = r.required_int("Seq");
  e.time = from_micros(r.required_int("TimeMicros"));
  if (!r.ok()) return r.status();
  return e;
}

}  // namespace gf
