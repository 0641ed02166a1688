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

namespace {

// `text` as a JSON string, appended: the bytes as they are when every one is printable ASCII
// that JSON leaves unescaped (nearly every string of an event), else as dump() writes it.
void append_json_string(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
      out += Json(std::string(text)).dump();
      return;
    }
  }
  out += '"';
  out += text;
  out += '"';
}

}  // namespace

std::string UserEvent::to_wire_text(const std::map<std::string, Json, std::less<>>& extra) const {
  // dump() writes an object's members in key order: the wire members below are listed so, and
  // the extra ones are merged in (an extra one of a wire name replaces it).
  struct Member {
    std::string_view key;
    const std::string* text;  // a string member, or
    const Json* json;         // any other; neither = absent
  };
  const std::string time_text = format_iso8601(time);
  const std::string level_text(event_level_name(level));
  auto text_if = [](const std::string& v) { return v.empty() ? nullptr : &v; };
  const Member wire[] = {{"ClusterArn", text_if(cluster_arn), nullptr},
                         {"ClusterName", text_if(cluster_name), nullptr},
                         {"Description", &description, nullptr},
                         {"EventDetails", nullptr, &details},
                         {"EventId", &event_id, nullptr},
                         {"EventLevel", &level_text, nullptr},
                         {"EventTime", &time_text, nullptr},
                         {"InstanceGroupName", text_if(instance_group), nullptr},
                         {"InstanceId", text_if(instance_id), nullptr},
                         {"ResourceType", &resource_type, nullptr}};
  std::string out = "{";
  out.reserve(256);
  auto put = [&](std::string_view key, const std::string* text, const Json* json) {
    if (out.size() > 1) out += ',';
    append_json_string(out, key);
    out += ':';
    if (text != nullptr) {
      append_json_string(out, *text);
    } else if (json->is_string()) {
      append_json_string(out, json->get_ref<const std::string&>());
    } else {
      out += json->dump();
    }
  };
  auto more = extra.begin();
  for (const Member& m : wire) {
    for (; more != extra.end() && more->first < m.key; ++more)
      put(more->first, nullptr, &more->second);
    if (more != extra.end() && more->first == m.key) {
      put(more->first, nullptr, &more->second);
      ++more;
    } else if (m.text != nullptr || m.json != nullptr) {
      put(m.key, m.text, m.json);
    }
  }
  for (; more != extra.end(); ++more) put(more->first, nullptr, &more->second);
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
