// Why a job is not running (Scheduler::explain, wait kinds), and the consistency check the
// tests run after every step (Scheduler::check_invariants).
#include <fmt/format.h>

#include <algorithm>

#include "schedule/scheduler.h"
#include "workload/pytorchjob.h"

namespace gf::sched {

std::string_view wait_kind_name(WaitKind kind) {
  switch (kind) {
    case WaitKind::kNotWaiting:
      return "NotWaiting";
    case WaitKind::kQuota:
      return "Quota";
    case WaitKind::kStrictFifo:
      return "StrictFIFO";
    case WaitKind::kPlacement:
      return "Placement";
    case WaitKind::kInfeasible:
      return "Infeasible";
    case WaitKind::kBackoff:
      return "Backoff";
    case WaitKind::kNoQueue:
      return "NoQueue";
    case WaitKind::kHeldForReclaim:
      return "HeldForReclaim";
    case WaitKind::kCeiling:
      return "EnvironmentCapacity";
    case WaitKind::kUnplaced:
      return "Unplaced";
    case WaitKind::kPodsPending:
      return "PodsPending";
  }
  return "?";
}

std::string_view condition_reason(const WaitReason& w) {
  switch (w.kind) {
    case WaitKind::kNotWaiting:
      return "";
    case WaitKind::kQuota:
      return w.resource == "kube-queue/max-jobs" ? "MaxJobsReached" : "QuotaExceeded";
    case WaitKind::kStrictFifo:
      return "StrictFIFO";
    case WaitKind::kPlacement:
      return "NoFit";
    case WaitKind::kInfeasible:
      return "Parked";
    case WaitKind::kBackoff:
      return "Backoff";
    case WaitKind::kNoQueue:
      return "NoQueue";
    case WaitKind::kHeldForReclaim:
      return "HeldForReclaim";
    case WaitKind::kCeiling:
      return "CapacityLimit";
    case WaitKind::kUnplaced:
      return "Unplaced";
    case WaitKind::kPodsPending:
      return "PodsPending";
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// Explanations

std::string Scheduler::resource_name(ResourceId r) const {
  if (r == kMaxJobs) return "kube-queue/max-jobs";
  if (registry_ != nullptr && r < registry_->size()) return std::string(registry_->name(r));
  return fmt::format("resource#{}", r);
}

std::string Scheduler::g_name(quota::NodeId node) const {
  const quota::QuotaGraph& g = engine_->graph();
  if (node == quota::kNoNode || node >= g.size()) return "(no queue)";
  return g.spec(node).name;
}

std::string Scheduler::describe_fit(const quota::FitResult& fit) const {
  return engine_->graph().describe(fit, registry_);
}

WaitReason Scheduler::explain(JobKey key, Time now) const {
  WaitReason r;
  auto it = jobs_.find(key);
  if (it == jobs_.end()) {
    r.message = "not known to the scheduler (finished or never submitted)";
    return r;
  }
  const Job& j = it->second;
  switch (j.wait) {
    case Wait::kAdmitted:
      return explain_admitted(j);
    case Wait::kBackoff:
      r.kind = WaitKind::kBackoff;
      r.message = fmt::format("preempted {} time(s); requeued with backoff until {}",
                              j.spec.preemptions, format_iso8601(j.backoff_until));
      return r;
    case Wait::kOrphan:
      r.kind = WaitKind::kNoQueue;
      r.message = "its quota queue does not exist; it waits until the queue is created";
      return r;
    case Wait::kParked:
      r.kind = WaitKind::kInfeasible;
      r.message =
          "infeasible: no member cluster could ever hold the whole gang on its nodes (even "
          "empty, at its target size)";
      for (const PodSet& ps : j.spec.shape->alternatives[0].pods) {
        if (!ps.topology_required) continue;
        r.message +=
            fmt::format(" inside one {} domain, as its {} annotation requires",
                        topology_level_label(ps.topology), workload::kRequiredTopologyAnnotation);
        break;
      }
      r.message += "; parked until the fleet's shape changes";
      return r;
    case Wait::kActive:
    case Wait::kGone:
      break;
  }
  // Pending: the first thing that stops it, for its first alternative.
  const Alternative& alt = j.spec.shape->alternatives[0];
  if (j.spec.quota_managed) {
    if (std::optional<WaitReason> held = explain_quota(j, alt, now)) {
      if (const Reservation* r = reservation_of(j.spec.key)) {
        held->message += fmt::format(
            "; {} nodes of cluster {} are reserved for it from {} (when the running jobs end "
            "and return the quota it needs)",
            r->nodes.size(), index_.cluster_name(r->cluster), format_iso8601(r->start));
      }
      return std::move(*held);
    }
  }
  return explain_placement(j, alt, now);
}

WaitReason Scheduler::explain_admitted(const Job& j) const {
  WaitReason r;
  if (j.placement) {
    r.kind = WaitKind::kNotWaiting;
    r.message = "admitted and placed on cluster " + index_.cluster_name(j.placement->cluster);
  } else if (j.bound) {
    r = explain_pods_pending(j);
  } else if (!j.excluded.empty()) {
    r.kind = WaitKind::kUnplaced;
    r.message = "admitted (its quota is kept) and failed over from " + cluster_list(j.excluded);
    const bool left = j.spec.allowed_clusters.empty()
                          ? index_.cluster_count() > j.excluded.size()
                          : std::ranges::any_of(j.spec.allowed_clusters, [&](ClusterIdx c) {
                              return !std::ranges::binary_search(j.excluded, c);
                            });
    r.message += left ? "; waiting for another allowed cluster with room for the whole gang"
                      : "; every cluster it may use is excluded, so it waits for a new one";
  } else {
    r.kind = WaitKind::kUnplaced;
    r.message = fmt::format(
        "admitted (its quota is kept) but its gang lost a node; waiting for one cluster with "
        "room for all {} pod set(s) to place it again",
        j.spec.shape->alternatives[j.alternative].pods.size());
  }
  return r;
}

WaitReason Scheduler::explain_pods_pending(const Job& j) const {
  WaitReason r;
  const std::vector<PodSet>& gang = j.spec.shape->alternatives[j.alternative].pods;
  r.kind = WaitKind::kPodsPending;
  for (const PodSet& ps : gang) r.requested += ps.count;
  r.available = index_.pods_that_fit(*j.bound, gang);
  r.shortfall = r.requested - r.available;
  const std::string name = index_.cluster_name(*j.bound);
  const std::string fit = pods_fit_message(j, *j.bound);
  r.message =
      j.dispatched
          ? fmt::format(
                "dispatched to cluster {} (estimated from summed free capacity), but no "
                "node arrangement there fits the gang: {}",
                name, fit)
          : fmt::format("waiting for room in its cluster {}{}: {}", name,
                        j.spec.sticky ? " (sticky: placed again only there until a failover)" : "",
                        fit);
  if (r.shortfall == 0) r.message += "; the next pass places it";
  if (!j.excluded.empty()) r.message += "; failed over from " + cluster_list(j.excluded);
  return r;
}

std::optional<WaitReason> Scheduler::explain_quota(const Job& j, const Alternative& alt,
                                                   Time now) const {
  WaitReason r;
  const quota::QuotaGraph& g = engine_->graph();
  const JobKey key = j.spec.key;
  const Queue& q = queues_[queue_slot(j.spec)];
  if (q.strict && !q.active.empty() && std::get<2>(q.active.begin()->first) != key) {
    r.kind = WaitKind::kStrictFifo;
    r.node = g.spec(j.spec.queue).name;
    r.message = fmt::format("queue {} is StrictFIFO and its head, job {}, does not fit yet", r.node,
                            std::get<2>(q.active.begin()->first));
    return r;
  }
  const quota::FitResult fit = g.fits(engine_->ledger(), j.spec.queue, alt.quota_request);
  if (!fit.fits) {
    r.kind = WaitKind::kQuota;
    r.node = fit.node < g.size() ? g.spec(fit.node).name : "";
    r.limit = std::string(quota::limit_kind_name(fit.limit));
    r.resource = resource_name(fit.resource);
    r.requested = fit.requested;
    r.available = fit.available;
    r.shortfall = fit.shortfall;
    r.message = "waiting for quota: " + describe_fit(fit);
    const quota::PreemptionPlan plan = engine_->plan_preemption(key, now, options_.min_run_time);
    if (plan.outcome == quota::PlanOutcome::kImpossible && !plan.why.empty())
      r.message += "; preemption cannot help: " + plan.why;
    return r;
  }
  if (!within_ceiling(j, alt.quota_request)) {
    r.kind = WaitKind::kCeiling;
    r.node = g.spec(g.root(j.spec.queue)).name;
    r.message = "the service environment's capacity limit of " + r.node + " is reached";
    return r;
  }
  auto h = holds_.find(root_of(j));
  if (fit.borrows && h != holds_.end() && !h->second.empty() && !h->second.contains(key)) {
    r.kind = WaitKind::kHeldForReclaim;
    r.node = g.spec(g.root(j.spec.queue)).name;
    r.message =
        fmt::format("it would borrow, but job {} is reclaiming its nominal quota in cohort {}",
                    *h->second.begin(), r.node);
    return r;
  }
  return std::nullopt;
}

std::optional<WaitReason> Scheduler::explain_topology(const Job& j, const Alternative& alt) const {
  if (std::ranges::none_of(alt.pods, [](const PodSet& ps) { return ps.topology_required; }))
    return std::nullopt;
  std::optional<DomainRoom> best;
  for (ClusterIdx c = 0; c < index_.cluster_count(); ++c) {
    if (!j.spec.allowed_clusters.empty() &&
        std::ranges::find(j.spec.allowed_clusters, c) == j.spec.allowed_clusters.end()) {
      continue;
    }
    std::optional<DomainRoom> room = index_.largest_domain(c, alt.pods);
    if (!room) return std::nullopt;  // its domains hold the gang here: something else blocks it
    if (!best || room->pods > best->pods) best = std::move(room);
  }
  if (!best) return std::nullopt;
  WaitReason r;
  r.kind = WaitKind::kPlacement;
  r.requested = best->wanted;
  r.available = best->pods;
  r.shortfall = best->wanted - best->pods;
  const std::string_view level = topology_level_label(best->level);
  r.resource = std::string(level);
  if (best->pods == 0 && best->value.empty()) {
    r.message = fmt::format(
        "quota admits it, but its gang requires one {} domain ({}) and no node of a cluster it "
        "may use carries that label",
        level, workload::kRequiredTopologyAnnotation);
    return r;
  }
  r.message = fmt::format(
      "quota admits it, but no {} domain of a cluster it may use has room for the {} pods that "
      "must share one ({}); the largest holds {} of its {} pods: {} in cluster {}",
      level, best->wanted, workload::kRequiredTopologyAnnotation, best->pods, best->wanted,
      best->value, index_.cluster_name(best->cluster));
  return r;
}

std::string Scheduler::explain_reservation(const Job& j, const Alternative& alt, Time now) const {
  std::string out;
  // Would it fit now but for other jobs' reservations? Then backfill's rule holds it back.
  const std::vector<ClusterIdx>* allowed =
      j.spec.allowed_clusters.empty() ? nullptr : &j.spec.allowed_clusters;
  const std::optional<Placement> unfenced =
      reservations_.size() > (reservation_of(j.spec.key) ? 1u : 0u) ? index_.find(alt.pods, allowed)
                                                                    : std::nullopt;
  if (unfenced) {
    std::vector<NodeIdx> fenced = fenced_for(j, now, false);
    std::ranges::sort(fenced);
    for (const auto& [key, r] : reservations_) {
      if (key == j.spec.key || !std::ranges::includes(fenced, r.nodes)) continue;
      out = fmt::format(
          "quota admits it and its gang fits on cluster {} now, but only on nodes reserved for "
          "job {} from {}, and {} (backfill runs a job on reserved nodes only if it ends before "
          "the reservation starts)",
          index_.cluster_name(unfenced->cluster), key, format_iso8601(r.start),
          j.spec.time_limit ? fmt::format("its run of up to {} would end after that",
                                          format_duration(*j.spec.time_limit))
                            : std::string("it has no time limit (activeDeadlineSeconds or "
                                          "gpufleet.io/duration) to tell when it ends"));
      break;
    }
  }
  if (const Reservation* r = reservation_of(j.spec.key)) {
    out += fmt::format(
        "{}{} nodes of cluster {} are reserved for it from {} (its expected start, when the "
        "running jobs there end)",
        out.empty() ? "; " : "; meanwhile ", r->nodes.size(), index_.cluster_name(r->cluster),
        format_iso8601(r->start));
  }
  return out;
}

WaitReason Scheduler::explain_placement(const Job& j, const Alternative& alt, Time now) const {
  const std::string reserved = explain_reservation(j, alt, now);
  if (reserved.rfind("quota admits it", 0) == 0) {  // held back by another job's reservation
    WaitReason r;
    r.kind = WaitKind::kPlacement;
    r.message = reserved;
    return r;
  }
  if (std::optional<WaitReason> topo = explain_topology(j, alt)) {
    topo->message += reserved;
    return *topo;
  }
  WaitReason r;
  r.kind = WaitKind::kPlacement;
  int64_t pods = 0;
  for (const PodSet& ps : alt.pods) pods += ps.count;
  std::string best;
  int64_t best_fit = -1;
  for (ClusterIdx c = 0; c < index_.cluster_count(); ++c) {
    if (!j.spec.allowed_clusters.empty() &&
        std::find(j.spec.allowed_clusters.begin(), j.spec.allowed_clusters.end(), c) ==
            j.spec.allowed_clusters.end()) {
      continue;
    }
    const int64_t n = index_.pods_that_fit(c, alt.pods);
    if (n > best_fit) {
      best_fit = n;
      best = index_.cluster_name(c);
    }
  }
  r.requested = pods;
  r.available = std::max<int64_t>(best_fit, 0);
  r.shortfall = pods - r.available;
  if (best.empty()) {
    r.message = "quota admits it, but there is no member cluster to place it on";
    return r;
  }
  const std::string_view short_of =
      options_.reservation
          ? "no single cluster has free nodes for the whole gang"
          : "no single cluster has enough free capacity in total for the whole gang "
            "(estimate mode dispatches by summed free capacity)";
  r.message = fmt::format(
      "quota admits it, but {} (gang scheduling places all {} pods on one cluster or none); the "
      "best, {}, has room for {} of {} pods now",
      short_of, pods, best, r.available, pods);
  r.message += reserved;
  return r;
}

// One job's bindings agree with its admission, its pods with the index, its admission with the
// quota engine; adds what its pods use to `used` (per node).
Status Scheduler::check_job(const Job& j, std::vector<ResourceVector>& used) const {
  const JobKey key = j.spec.key;
  const auto broken = [&](std::string_view what) {
    return internal_error(fmt::format("job {} {}", key, what));
  };
  if (j.wait != Wait::kAdmitted && (j.bound || !j.excluded.empty() || j.dispatched)) {
    return broken("is bound or has exclusions but is not admitted");
  }
  if (j.placement && (j.bound != j.placement->cluster || !j.excluded.empty() || j.dispatched)) {
    return broken("is placed but bound elsewhere or still excluding clusters");
  }
  if (j.dispatched && !j.bound) return broken("is dispatched but not bound");
  if (j.bound && std::ranges::binary_search(j.excluded, *j.bound)) {
    return broken("is bound to a cluster it failed over from");
  }
  if (j.wait == Wait::kAdmitted && !j.placement && !unplaced_.contains(key_of(j))) {
    return broken("is admitted without pods but not waiting to be placed");
  }
  if (j.placement) {
    if (j.wait != Wait::kAdmitted)
      return internal_error(fmt::format("job {} placed but not admitted", key));
    const Alternative& alt = j.spec.shape->alternatives[j.alternative];
    int64_t pods = 0;
    for (const PodSet& ps : alt.pods) pods += ps.count;
    if (static_cast<int64_t>(j.placement->pods.size()) != pods) {
      return internal_error(
          fmt::format("job {} has {} of {} pods placed", key, j.placement->pods.size(), pods));
    }
    for (const PodBinding& b : j.placement->pods) {
      if (!index_.alive(b.node))
        return internal_error(fmt::format("job {} bound to a removed node", key));
      if (index_.cluster_of(b.node) != j.placement->cluster) {
        return internal_error(fmt::format("job {} spans two clusters", key));
      }
      used[b.node] += alt.pods[b.pod_set].request;
    }
  }
  if (j.spec.quota_managed && j.spec.queue != quota::kNoNode) {
    const quota::Workload* w = engine_->find(key);
    if (w == nullptr)
      return internal_error(fmt::format("job {} missing from the quota engine", key));
    if (w->admitted != (j.wait == Wait::kAdmitted)) {
      return internal_error(
          fmt::format("job {} admitted state differs from the quota engine", key));
    }
  }
  return ok_status();
}

Status Scheduler::check_invariants() const {
  std::vector<ResourceVector> used(index_.node_slots());
  for (const auto& [key, j] : jobs_) GF_RETURN_IF_ERROR(check_job(j, used));
  for (const Key& k : unplaced_) {
    auto it = jobs_.find(std::get<2>(k));
    if (it == jobs_.end() || it->second.wait != Wait::kAdmitted || it->second.placement ||
        key_of(it->second) != k) {
      return internal_error(fmt::format(
          "job {} waits to be placed but is not admitted without pods", std::get<2>(k)));
    }
  }
  // Jobs without pods (dispatched, interrupted, failed over) reserve nothing on any node.
  for (NodeIdx n = 0; n < index_.node_slots(); ++n) {
    if (!index_.alive(n)) continue;
    if (index_.capacity(n) - used[n] != index_.free(n)) {
      return internal_error("node " + index_.instance_id(n) +
                            ": free capacity does not match its pods");
    }
    if (index_.free(n).any_negative())
      return internal_error("node " + index_.instance_id(n) + " over-committed");
  }
  return ok_status();
}

}  // namespace gf::sched
