// Which cluster a job is bound to (docs/dispatch.md estimate vs reservation, docs/dispatch.md
// failover, docs/dispatch.md interrupts): choosing a cluster for a gang, dispatching with pods
// pending, sticky re-placement after a node loss, and failover to another cluster. Every change
// here is either returned as an Action or is itself a call the caller records (failover), so replay
// reproduces it.
#include <fmt/format.h>

#include <algorithm>

#include "schedule/scheduler.h"

namespace gf::sched {

std::optional<ClusterIdx> Scheduler::bound_cluster(JobKey key) const {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return std::nullopt;
  return it->second.bound;
}

bool Scheduler::pods_placed(JobKey key) const {
  auto it = jobs_.find(key);
  return it != jobs_.end() && it->second.placement.has_value();  // a placement implies admission
}

std::optional<Placement> Scheduler::choose(const Job& j, const Alternative& alt) const {
  // Bound (dispatched, or sticky after an interruption): its own cluster or nothing.
  if (j.bound) return index_.find_in(*j.bound, alt.pods);
  const std::vector<ClusterIdx>* allowed = &j.spec.allowed_clusters;
  std::vector<ClusterIdx> narrowed;
  if (!j.excluded.empty()) {
    // An empty list means "any", so the exclusions need an explicit list of what is left.
    if (allowed->empty()) {
      for (ClusterIdx c = 0; c < index_.cluster_count(); ++c) narrowed.push_back(c);
    } else {
      narrowed = *allowed;
    }
    std::erase_if(narrowed,
                  [&](ClusterIdx c) { return std::ranges::binary_search(j.excluded, c); });
    if (narrowed.empty()) return std::nullopt;  // every cluster it may use failed it: it waits
    allowed = &narrowed;
  }
  if (options_.reservation) return index_.find(alt.pods, allowed);
  // Estimate mode: the fleet picks by summed free capacity; the member cluster then really
  // places the pods, or they stay pending there.
  const std::optional<ClusterIdx> c = index_.estimate(alt.pods, allowed);
  if (!c) return std::nullopt;
  if (std::optional<Placement> p = index_.find_in(*c, alt.pods)) return p;
  Placement dispatched;
  dispatched.cluster = *c;
  return dispatched;
}

void Scheduler::do_interrupt(Job& j) {
  do_unbind(j);
  if (!j.spec.sticky) j.bound.reset();  // free to go to any allowed cluster
  unplaced_.insert(key_of(j));
}

Status Scheduler::failover(JobKey key, Time /*now*/) {
  // `now` keeps the signature of the other recorded decisions; nothing here depends on time.
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return not_found_error(fmt::format("job {}", key));
  Job& j = it->second;
  if (j.wait != Wait::kAdmitted)
    return conflict_error(fmt::format("job {} is not admitted: nothing to fail over", key));
  if (!j.bound) {
    return conflict_error(fmt::format(
        "job {} is not bound to a cluster: it already waits to be placed on any allowed one", key));
  }
  const ClusterIdx from = *j.bound;
  do_unbind(j);
  j.bound.reset();
  j.dispatched = false;
  auto pos = std::ranges::lower_bound(j.excluded, from);
  if (pos == j.excluded.end() || *pos != from) j.excluded.insert(pos, from);
  unplaced_.insert(key_of(j));
  // kEvict code 2 is an interruption; 3 a failover away from cluster `amount`.
  log_.append({quota::DecisionKind::kEvict, key, 0, j.spec.queue, 0, from, 3});
  return ok_status();
}

Action Scheduler::admit_action(const Job& j, Placement p, bool replaced) const {
  Action act;
  act.kind = ActionKind::kAdmit;
  act.job = j.spec.key;
  act.alternative = j.alternative;
  act.replaced = replaced;
  if (p.pods.empty()) {
    act.message = "dispatched to cluster " + index_.cluster_name(p.cluster) +
                  " by its summed free capacity; no node arrangement there fits the gang yet (" +
                  pods_fit_message(j, p.cluster) + "), so its pods stay pending";
  }
  act.placement = std::move(p);
  return act;
}

std::string Scheduler::pods_fit_message(const Job& j, ClusterIdx c) const {
  const std::vector<PodSet>& gang = j.spec.shape->alternatives[j.alternative].pods;
  int64_t pods = 0;
  for (const PodSet& ps : gang) pods += ps.count;
  return fmt::format("{} of {} pods fit", index_.pods_that_fit(c, gang), pods);
}

std::string Scheduler::cluster_list(const std::vector<ClusterIdx>& clusters) const {
  std::string out;
  for (ClusterIdx c : clusters) out += (out.empty() ? "" : ", ") + index_.cluster_name(c);
  return out;
}

}  // namespace gf::sched
