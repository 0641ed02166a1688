#include "schedule/workload_controller.h"

#include <fmt/format.h>

#include <algorithm>

#include "state/job_events.h"

namespace gf {
namespace {

using job_events::to_event;

}  // namespace

std::optional<std::string> restart_refusal(const Job& job,
                                           const std::vector<std::string>& failed_roles) {
  if (!job.dispatch) return std::nullopt;
  const Dispatch& d = *job.dispatch;
  for (const std::string& role : failed_roles) {
    auto it = d.restart_policy.find(role);
    if (it != d.restart_policy.end() && it->second == "Never") {
      return "pod " + job.name + "-" + role + " failed (its node was lost) and the " + role +
             " replica's restartPolicy is Never";
    }
  }
  if (d.backoff_limit && d.restarts >= *d.backoff_limit) {
    return fmt::format("the job restarted {} times; runPolicy.backoffLimit is {}", d.restarts,
                       *d.backoff_limit);
  }
  return std::nullopt;
}

ControllerDecision WorkloadController::decide(const FleetState& state, Time now) {
  ControllerDecision out;
  const sched::Scheduler& s = cache_.scheduler(state);
  for (const auto& [at, key] : state.workload_deadlines()) {
    if (at > now) {
      out.wake_at = at;
      break;
    }
    const Job* job = state.job_by_key(key);
    if (job == nullptr || !job->dispatch) continue;
    const Dispatch& d = *job->dispatch;
    if (is_terminal(job->status)) {
      if (d.ttl_seconds_after_finished && job->stopped_at &&
          *job->stopped_at + seconds(*d.ttl_seconds_after_finished) <= now) {
        out.events.push_back(to_event(job_events::Deleted{
            job->id,
            fmt::format("ttlSecondsAfterFinished ({}s) passed", *d.ttl_seconds_after_finished)}));
      }
      continue;
    }
    // Copies left by a Gracefully failover go once the new placement runs, or when their
    // grace period is over.
    for (const MemberCopy& c : d.left) {
      if (!c.purge_at) continue;
      if (job->status == JobStatus::kRunning) {
        out.events.push_back(to_event(job_events::CopyPurged{
            job->id, c.cluster, "the new placement on cluster " + job->cluster + " is running"}));
      } else if (*c.purge_at <= now) {
        out.events.push_back(to_event(job_events::CopyPurged{
            job->id, c.cluster,
            fmt::format("gracePeriodSeconds ({}s) passed", d.grace_period_seconds)}));
      }
    }
    if (d.active_deadline_seconds && d.first_started_at &&
        *d.first_started_at + seconds(*d.active_deadline_seconds) <= now) {
      out.events.push_back(
          to_event(job_events::Finished{job->id, JobStatus::kFailed,
                                        fmt::format("DeadlineExceeded: running longer than "
                                                    "activeDeadlineSeconds ({}s)",
                                                    *d.active_deadline_seconds)}));
      continue;
    }
    // Failover: bound to a cluster where its pods have not all run for tolerationSeconds.
    if (d.toleration_seconds && d.not_running_since && !d.cluster.empty() && job->admitted &&
        job->status != JobStatus::kRunning && s.contains(job->key) &&
        *d.not_running_since + seconds(*d.toleration_seconds) <= now) {
      const std::string why = job->status == JobStatus::kStarting ? "its pods stayed Pending"
                              : d.restarting ? "its pods could not be recreated after an interrupt"
                                             : "its pods could not run";
      out.events.push_back(
          to_event(job_events::Failover{job->id, d.cluster, d.purge_mode,
                                        fmt::format("{} on cluster {} for {}s (tolerationSeconds)",
                                                    why, d.cluster, *d.toleration_seconds)}));
    }
  }
  return out;
}

}  // namespace gf
