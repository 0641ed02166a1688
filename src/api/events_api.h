// Listing user events (docs/provisioning.md envelope), shared by GET /v1/events and, later,
// ListClusterEvents: newest first, filters, MaxResults and an opaque NextToken.
#pragma once

#include <optional>
#include <string>

#include "api/http.h"
#include "state/fleet_state.h"

namespace gf {

struct EventQuery {
  std::string resource_type;
  std::string cluster_name;
  std::string instance_group;
  std::string instance_id;
  std::optional<EventLevel> level;  // EventLevel: only events of this level
  std::optional<Time> after;        // EventTimeAfter (exclusive)
  std::optional<Time> before;       // EventTimeBefore (exclusive)
  int max_results = 100;
  std::string next_token;
};

// Reads the query string; errors name the parameter. Times may be durations back from `now`.
Result<EventQuery> parse_event_query(const HttpRequest& request, Time now);
// {"Events": [...], "NextToken": "..."} (NextToken only when more remain), of the events
// `caller` may see (may_see_event; every event when null).
Result<Json> list_events(const FleetView& view, const EventQuery& query,
                         const HttpRequest* caller = nullptr);

// The event with this EventId ("ev-<seq>-<index>"; the log is in that order), or null.
const UserEvent* find_event(const FleetView& view, std::string_view event_id);

}  // namespace gf
