#include "api/events_api.h"

#include <fmt/format.h>

#include <charconv>

#include "api/api.h"
#include "api/auth.h"

namespace gf {

namespace {

constexpr int kMaxResultsLimit = 100;

Result<int> parse_int_param(const std::string& name, const std::string& text) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return validation_error(name + ": expected an integer, got \"" + text + "\"");
  }
  return v;
}

}  // namespace

Result<EventQuery> parse_event_query(const HttpRequest& req, Time now) {
  EventQuery q;
  if (const std::string t = req.query_or("ResourceType", ""); !t.empty()) {
    GF_ASSIGN_OR_RETURN(q.resource_type, parse_resource_type(t, "ResourceType"));
  }
  if (const std::string level = req.query_or("EventLevel", ""); !level.empty()) {
    GF_ASSIGN_OR_RETURN(q.level, parse_event_level(level));
  }
  q.instance_group = req.query_or("InstanceGroupName", "");
  q.instance_id = req.query_or("NodeId", "");
  q.cluster_name = req.query_or("ClusterName", "");
  q.next_token = req.query_or("NextToken", "");
  if (auto it = req.query.find("EventTimeAfter"); it != req.query.end()) {
    GF_ASSIGN_OR_RETURN(q.after, query_time("EventTimeAfter", it->second, now));
  }
  if (auto it = req.query.find("EventTimeBefore"); it != req.query.end()) {
    GF_ASSIGN_OR_RETURN(q.before, query_time("EventTimeBefore", it->second, now));
  }
  if (auto it = req.query.find("MaxResults"); it != req.query.end()) {
    GF_ASSIGN_OR_RETURN(q.max_results, parse_int_param("MaxResults", it->second));
    if (q.max_results < 1 || q.max_results > kMaxResultsLimit) {
      return validation_error(fmt::format("MaxResults: must be between 1 and {}, got {}",
                                          kMaxResultsLimit, q.max_results));
    }
  }
  return q;
}

Result<Json> list_events(const FleetView& view, const EventQuery& q, const HttpRequest* caller) {
  // The token is the log position to continue below (events are listed newest first, and the
  // log is append-only, so a position stays valid while new events arrive).
  size_t start = view.events.size();
  if (!q.next_token.empty()) {
    if (q.next_token.size() < 2 || q.next_token[0] != 'p') {
      return validation_error("NextToken: not a token this server issued");
    }
    size_t pos = 0;
    auto [ptr, ec] =
        std::from_chars(q.next_token.data() + 1, q.next_token.data() + q.next_token.size(), pos);
    if (ec != std::errc() || ptr != q.next_token.data() + q.next_token.size() ||
        pos > view.events.size()) {
      return validation_error("NextToken: not a token this server issued");
    }
    start = pos;
  }
  Json events = Json::array();
  std::optional<size_t> resume;
  for (size_t i = start; i > 0; --i) {
    const UserEvent& e = view.events.at(i - 1);
    if (q.before && e.time >= *q.before) continue;
    if (q.after && e.time <= *q.after) break;  // older events only get older
    if (!q.resource_type.empty() && e.resource_type != q.resource_type) continue;
    if (q.level && e.level != *q.level) continue;
    if (!q.cluster_name.empty() && e.cluster_name != q.cluster_name) continue;
    if (!q.instance_group.empty() && e.instance_group != q.instance_group) continue;
    if (!q.instance_id.empty() && e.instance_id != q.instance_id) continue;
    if (caller != nullptr && !may_see_event(*caller, view, e)) continue;
    if (static_cast<int>(events.size()) == q.max_results) {
      resume = i;
      break;
    }
    events.push_back(e.to_wire());
  }
  Json out = {{"Events", std::move(events)}};
  if (resume) out["NextToken"] = fmt::format("p{}", *resume);
  return out;
}

namespace {

// "ev-<seq>-<index>" as the pair it orders by.
std::optional<std::pair<uint64_t, uint64_t>> event_position(std::string_view id) {
  if (id.substr(0, 3) != "ev-") return std::nullopt;
  id.remove_prefix(3);
  const size_t dash = id.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  uint64_t seq = 0, index = 0;
  auto [p1, e1] = std::from_chars(id.data(), id.data() + dash, seq);
  auto [p2, e2] = std::from_chars(id.data() + dash + 1, id.data() + id.size(), index);
  if (e1 != std::errc() || p1 != id.data() + dash || e2 != std::errc() ||
      p2 != id.data() + id.size())
    return std::nullopt;
  return std::pair{seq, index};
}

}  // namespace

const UserEvent* find_event(const FleetView& view, std::string_view event_id) {
  const auto want = event_position(event_id);
  if (!want) return nullptr;
  size_t lo = 0, hi = view.events.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const auto at = event_position(view.events.at(mid).event_id);
    if (!at) return nullptr;  // not the order this search assumes
    if (*at < *want) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < view.events.size() && view.events.at(lo).event_id == event_id)
    return &view.events.at(lo);
  return nullptr;
}

void register_event_routes(Api& api) {
  api.router().add("GET", "/v1/events", [&api](const HttpRequest& req) {
    auto q = parse_event_query(req, api.clock().now());
    if (!q.ok()) return error_response(q.status());
    auto view = api.loop().view();
    auto out = list_events(*view, *q, &req);
    if (!out.ok()) return error_response(out.status());
    return json_response(200, *out);
  });
}

}  // namespace gf
