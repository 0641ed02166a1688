// Journal event types (facts recorded by the loop) and the shape controllers and request
// handlers return. Every type here has an applier in fleet_state.cpp; replaying the same events
// in the same order always rebuilds the same state.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"
#include "state/user_event.h"

namespace gf {

namespace event_type {
// {version, store}: a `gpufleet serve` process took over the journal.
inline constexpr std::string_view kControlPlaneStarted = "controlplane.started";
// {reason}: graceful shutdown finished its last batch.
inline constexpr std::string_view kControlPlaneStopped = "controlplane.stopped";
// A user-visible event with no other state change: payload is the envelope without EventId and
// EventTime (both derived from the journal record).
inline constexpr std::string_view kEventRecorded = "event.recorded";
}  // namespace event_type

// One fact decided by a request handler or a controller, before it has a sequence number.
struct Event {
  std::string type;
  Json payload = Json::object();
  std::string idempotency_key;  // empty = none
};

// Builds an event.recorded event.
Event record_event(std::string resource_type, EventLevel level, std::string description,
                   Json details = Json::object());

}  // namespace gf
