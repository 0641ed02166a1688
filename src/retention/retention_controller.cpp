#include "retention/retention_controller.h"

#include <algorithm>
#include <optional>

#include "state/plane_events.h"

namespace gf {

ControllerDecision RetentionController::decide(const FleetState& state, Time now) {
  ControllerDecision out;
  plane_events::RetentionApplied e;
  auto wake = [&out](Time t) { out.wake_at = out.wake_at ? std::min(*out.wake_at, t) : t; };
  for (const auto& [stopped, key] : state.finished_jobs()) {
    if (stopped + options_.job_retention > now) {
      wake(stopped + options_.job_retention);
      break;
    }
    if (e.jobs.size() == options_.max_jobs_per_event) {
      wake(now);  // the rest in the next batch
      break;
    }
    if (const Job* job = state.job_by_key(key)) e.jobs.push_back(job->id);
  }
  // A chunk of user events or audit records goes once its newest is strictly older than the
  // cutoff (as the state drops them).
  const UserEvent* event = state.view().events.oldest_chunk_newest();
  const AuditRecord* audit = state.view().audit.oldest_chunk_newest();
  for (const std::optional<Time> newest :
       {event ? std::optional<Time>(event->time) : std::nullopt,
        audit ? std::optional<Time>(audit->time) : std::nullopt}) {
    if (!newest) continue;
    if (*newest < now - options_.event_retention) {
      e.events_before = now - options_.event_retention;
    } else {
      wake(*newest + options_.event_retention + Duration(1));
    }
  }
  if (!e.jobs.empty() || e.events_before) out.events.push_back(plane_events::to_event(e));
  return out;
}

}  // namespace gf
