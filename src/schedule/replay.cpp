// Scheduler::restore*, Scheduler::apply: bringing a scheduler in step with recorded decisions
// (journal replay, snapshots). Applying what the scheduler already reflects changes nothing.
#include <fmt/format.h>

#include <algorithm>

#include "schedule/scheduler.h"

namespace gf::sched {

Status Scheduler::restore(JobKey key, uint16_t alternative, const Placement* placement,
                          Time admitted_at) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return not_found_error(fmt::format("job {}", key));
  Job& j = it->second;
  if (j.wait == Wait::kAdmitted) return conflict_error(fmt::format("job {} already admitted", key));
  if (alternative >= j.spec.shape->alternatives.size())
    return validation_error(fmt::format("job {}: no such alternative", key));
  if (placement != nullptr) {
    if (placement->pods.empty() && placement->cluster >= index_.cluster_count()) {
      return validation_error(fmt::format("job {}: dispatched to an unknown cluster", key));
    }
    do_admit(j, alternative, *placement, admitted_at, false);
    return ok_status();
  }
  leave_pending(j);
  if (j.spec.quota_managed && j.spec.queue != quota::kNoNode) {
    GF_CHECK_OK(engine_->set_request(key, j.spec.shape->alternatives[alternative].quota_request));
    engine_admit(j, admitted_at);
  }
  j.alternative = alternative;
  j.admitted_at = admitted_at;
  j.wait = Wait::kAdmitted;
  unplaced_.insert(key_of(j));
  return ok_status();
}

Status Scheduler::restore_backoff(JobKey key, Time until) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return not_found_error(fmt::format("job {}", key));
  Job& j = it->second;
  if (j.wait == Wait::kAdmitted) return conflict_error(fmt::format("job {} is admitted", key));
  leave_pending(j);
  j.backoff_until = until;
  j.wait = Wait::kBackoff;
  backoff_.insert({until, key});
  return ok_status();
}

Status Scheduler::restore_binding(JobKey key, std::optional<ClusterIdx> bound,
                                  std::vector<ClusterIdx> excluded) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return not_found_error(fmt::format("job {}", key));
  Job& j = it->second;
  if (j.wait != Wait::kAdmitted) return conflict_error(fmt::format("job {} is not admitted", key));
  if (j.placement) {
    return conflict_error(
        fmt::format("job {} has its pods placed: it is bound where they are", key));
  }
  std::ranges::sort(excluded);
  excluded.erase(std::unique(excluded.begin(), excluded.end()), excluded.end());
  const auto unknown = [&](ClusterIdx c) { return c >= index_.cluster_count(); };
  if ((bound && unknown(*bound)) || std::ranges::any_of(excluded, unknown)) {
    return validation_error(fmt::format("job {}: binding names an unknown cluster", key));
  }
  if (bound && std::ranges::binary_search(excluded, *bound)) {
    return validation_error(fmt::format("job {}: bound to a cluster it failed over from", key));
  }
  if (j.bound != bound) j.dispatched = false;  // restore() with an empty placement sets it
  j.bound = bound;
  j.excluded = std::move(excluded);
  return ok_status();
}

Status Scheduler::apply(const Action& action, Time now) {
  auto it = jobs_.find(action.job);
  switch (action.kind) {
    case ActionKind::kAdmit: {
      if (it == jobs_.end()) return not_found_error(fmt::format("job {}", action.job));
      Job& j = it->second;
      if (j.wait == Wait::kAdmitted && j.placement && *j.placement == action.placement)
        return ok_status();
      if (action.placement.pods.empty()) {  // a dispatch with pods pending
        if (j.wait == Wait::kAdmitted && !j.placement && j.bound == action.placement.cluster)
          return ok_status();
        if (action.placement.cluster >= index_.cluster_count()) {
          return validation_error(
              fmt::format("job {}: dispatched to an unknown cluster", action.job));
        }
      }
      if (action.alternative >= j.spec.shape->alternatives.size()) {
        return validation_error(
            fmt::format("job {}: no alternative {}", action.job, action.alternative));
      }
      for (const PodBinding& b : action.placement.pods) {
        if (b.node >= index_.node_slots() || !index_.alive(b.node)) {
          return internal_error(
              fmt::format("job {}: placement on a node that does not exist", action.job));
        }
      }
      if (j.wait == Wait::kAdmitted) {
        do_admit(j, j.alternative, action.placement, now, true);
      } else {
        do_admit(j, action.alternative, action.placement, now, false);
      }
      return ok_status();
    }
    case ActionKind::kPreempt: {
      if (it == jobs_.end()) return ok_status();  // already terminated by this scheduler
      Job& j = it->second;
      if (j.wait != Wait::kAdmitted) return ok_status();
      do_unbind(j);
      engine_evict(j);
      do_evict(j, now, action.until, action.terminated);
      if (action.terminated) {
        engine_forget(j);
        jobs_.erase(it);
      }
      return ok_status();
    }
    case ActionKind::kInterrupt: {
      if (it == jobs_.end()) return ok_status();
      Job& j = it->second;
      if (j.wait != Wait::kAdmitted || !j.placement) return ok_status();
      do_interrupt(j);
      return ok_status();
    }
  }
  return ok_status();
}

}  // namespace gf::sched
