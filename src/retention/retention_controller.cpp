#include "retention/retention_controller.h"

#include <algorithm>

#include "state/plane_events.h"

namespace gf {

ControllerDecision RetentionController::decide(const FleetState& state, Time now) {
  ControllerDecision out;
  plane_events::RetentionApplied e;
  auto wake = [&out](Time t) { out.wake_at = out.wake_at ? std::min(*out.wake_at, t) : t; };
  for (const auto& [stopped, key] : state.finished_jobs()) {
    if (!options_.retire_jobs) break;
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
  if (const UserEvent* newest = state.view().events.oldest_chunk_newest()) {
    // A chunk goes once its newest event is strictly older than the cutoff (as the state drops).
    if (newest->time < now - options_.event_retention) {
      e.events_before = now - options_.event_retention;
    } else {
      wake(newest->time + options_.event_retention + Duration(1));
    }
  }
  if (!e.jobs.empty() || e.events_before) out.events.push_back(plane_events::to_event(e));
  return out;
}

}  // namespace gf
