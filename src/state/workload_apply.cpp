// Applies the workload events (docs/dispatch.md): PropagationPolicies, and the fleet's dispatch
// decisions for PyTorchJobs that have no service-job counterpart — failover, copies purged, suspend
// and resume, delete. The job events both kinds share (admitted, running, interrupted, finished)
// live in job_apply.cpp and call note_binding() here for workloads.
#include <fmt/format.h>

#include <algorithm>

#include "state/fleet_state.h"
#include "state/job_events.h"
#include "state/workload_state.h"

namespace gf {

std::string workload_key(std::string_view kind, std::string_view ns, std::string_view name) {
  return std::string(kind) + "/" + std::string(ns) + "/" + std::string(name);
}

const Job* FleetView::find_workload(std::string_view kind, std::string_view ns,
                                    std::string_view name) const {
  auto it = workload_ids.find(workload_key(kind, ns, name));
  if (it == workload_ids.end()) return nullptr;
  auto j = jobs.find(it->second);
  return j == jobs.end() ? nullptr : j->second.get();
}

std::optional<Time> workload_deadline(const Job& job) {
  if (!job.dispatch) return std::nullopt;
  const Dispatch& d = *job.dispatch;
  std::optional<Time> at;
  auto consider = [&](Time t) {
    if (!at || t < *at) at = t;
  };
  if (is_terminal(job.status)) {
    if (d.ttl_seconds_after_finished && job.stopped_at)
      consider(*job.stopped_at + seconds(*d.ttl_seconds_after_finished));
    return at;
  }
  if (d.suspended) return std::nullopt;
  for (const MemberCopy& c : d.left) {
    if (!c.purge_at) continue;
    consider(job.status == JobStatus::kRunning && job.started_at ? *job.started_at : *c.purge_at);
  }
  if (d.active_deadline_seconds && d.first_started_at)
    consider(*d.first_started_at + seconds(*d.active_deadline_seconds));
  if (d.toleration_seconds && d.not_running_since && !d.cluster.empty() && job.admitted &&
      job.status != JobStatus::kRunning) {
    consider(*d.not_running_since + seconds(*d.toleration_seconds));
  }
  return at;
}

std::string binding_result(const Job& job, const std::string& cluster) {
  std::string out = "{" + cluster + ":0,[";
  for (size_t i = 0; i < job.pod_sets.size(); ++i) {
    if (i > 0) out += " ";
    out += fmt::format("{{{} {}}}", job.pod_sets[i].role, job.pod_sets[i].count);
  }
  return out + "]}";
}

void note_binding(Job& job, Time t, const std::string& cluster, bool pods_pending, bool borrowing) {
  Dispatch& d = *job.dispatch;
  const bool new_binding = d.cluster != cluster || !d.bound_at;
  if (new_binding) {
    d.cluster = cluster;
    d.bound_at = t;
    d.not_running_since = t;  // each cluster gets its own tolerationSeconds
    job.add_history(
        t, "ScheduleBindingSucceed",
        "Binding has been scheduled successfully. Result: " + binding_result(job, cluster));
    if (borrowing)
      job.add_history(t, "Borrowing",
                      "admitted on idle quota its cohort lends (above its quota node's min)");
  }
  if (pods_pending) {
    if (!d.not_running_since) d.not_running_since = t;
    job.add_history(t, "PodsPending",
                    "cluster " + cluster +
                        " was chosen on an estimate of its summed free resources, but no node "
                        "arrangement there fits the gang: its pods stay Pending");
  } else {
    job.add_history(
        t, "PodsBound",
        fmt::format("all {} pods bound to nodes of cluster {}", job.pod_nodes.size(), cluster));
  }
}

Status FleetState::on_event(const EventRecord&, const object_events::PolicyApplied& e) {
  auto map = std::make_shared<PolicyMap>(view_.policies ? *view_.policies : PolicyMap{});
  for (const object_events::PolicyDoc& o : e.objects) {
    auto pol = workload::parse_propagation_policy(o.doc);
    if (!pol.ok()) return internal_error("policy.applied: " + pol.status().message());
    (*map)[{o.ns, o.name}] = std::move(pol).value();
  }
  view_.policies = map->empty() ? nullptr : std::shared_ptr<const PolicyMap>(std::move(map));
  return ok_status();
}

Status FleetState::on_event(const EventRecord&, const object_events::PolicyDeleted& e) {
  auto map = std::make_shared<PolicyMap>(view_.policies ? *view_.policies : PolicyMap{});
  map->erase({e.ns, e.name});
  view_.policies = map->empty() ? nullptr : std::shared_ptr<const PolicyMap>(std::move(map));
  return ok_status();
}

namespace {

// The workload-only events name a PyTorchJob the fleet dispatches.
Status require_workload(const EventRecord& rec, const Job& job) {
  if (job.dispatch) return ok_status();
  return internal_error(rec.type + " for job " + job.id + ", which is not a workload");
}

}  // namespace

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Failover& e, Job& job) {
  const Time t = rec.time;
  GF_RETURN_IF_ERROR(require_workload(rec, job));
  Dispatch& d = *job.dispatch;
  const std::string& from = e.from;
  end_run(job, t, "failover");  // a gang placed in this batch but not started starts over elsewhere
  const std::string& mode = e.purge_mode;
  MemberCopy copy{from, std::string(workload_state(job)), t, std::nullopt, d.restarts};
  if (mode == "Gracefully") {
    copy.purge_at = t + seconds(d.grace_period_seconds);
    d.left.push_back(copy);
  } else if (mode == "Never") {
    d.left.push_back(copy);
  }
  d.failovers += 1;
  d.excluded.push_back(from);
  d.cluster.clear();
  d.bound_at.reset();
  d.not_running_since = t;  // the clock starts over for the next cluster
  job.cluster.clear();
  job.pod_nodes.clear();
  job.status = JobStatus::kRunnable;
  job.status_reason = "failing over from cluster " + from;
  std::string what =
      mode == "Gracefully"
          ? fmt::format("its copy there is removed once the new placement runs (at most {}s)",
                        d.grace_period_seconds)
      : mode == "Never" ? "its copy there is left in place (purgeMode Never)"
                        : "its copy there is purged at once (purgeMode " + mode + ")";
  job.add_history(t, "Failover", e.message + "; " + what);
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::CopyPurged& e, Job& job) {
  const Time t = rec.time;
  GF_RETURN_IF_ERROR(require_workload(rec, job));
  Dispatch& d = *job.dispatch;
  const std::string& cluster = e.cluster;
  const auto before = d.left.size();
  std::erase_if(d.left, [&](const MemberCopy& c) { return c.cluster == cluster; });
  if (d.left.size() == before)
    return internal_error("job " + job.id + " has no copy on cluster " + cluster);
  job.add_history(t, "CopyPurged", "copy on cluster " + cluster + " removed: " + e.reason);
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Suspend& e, Job& job) {
  const Time t = rec.time;
  GF_RETURN_IF_ERROR(require_workload(rec, job));
  Dispatch& d = *job.dispatch;
  const bool suspend = e.suspend;
  if (suspend == d.suspended) return ok_status();
  d.suspended = suspend;
  // The stored document says so too: a client that reads the job back sees what it applied.
  Json& spec = job.request["spec"];
  if (spec.is_object()) {
    if (suspend) {
      spec["runPolicy"]["suspend"] = true;
    } else if (spec.contains("runPolicy") && spec["runPolicy"].is_object()) {
      spec["runPolicy"]["suspend"] = false;
    }
  }
  if (suspend) {
    end_run(job, t, "suspended");
    job.waiting.reset();
    job.admitted = false;
    job.cluster.clear();
    job.pod_nodes.clear();
    d.cluster.clear();
    d.bound_at.reset();
    d.not_running_since.reset();
    d.restarting = false;
    job.status = JobStatus::kSubmitted;
    job.status_reason = "suspended (runPolicy.suspend)";
    job.add_history(t, "Suspended", "runPolicy.suspend set: pods deleted, quota released");
  } else if (d.awaiting_policy) {
    job.status_reason = std::string(kAwaitingPolicyReason);
    job.add_history(t, "Resumed", "runPolicy.suspend cleared: still waiting for a policy");
  } else {
    job.status = JobStatus::kRunnable;
    job.status_reason = "waiting in the queue";
    job.add_history(t, "Resumed", "runPolicy.suspend cleared: queued again");
  }
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::PolicyBound& e,
                                Job& job) {
  GF_RETURN_IF_ERROR(require_workload(rec, job));
  Dispatch& d = *job.dispatch;
  if (!d.awaiting_policy) return internal_error("job " + job.id + " was not waiting for a policy");
  d.awaiting_policy = false;
  d.policy = e.policy;
  d.queued = e.queued;
  d.toleration_seconds = e.toleration_seconds;
  d.purge_mode = e.purge_mode;
  d.grace_period_seconds = e.grace_period_seconds;
  job.clusters = e.clusters;
  if (!d.suspended) {
    job.status = JobStatus::kRunnable;
    job.status_reason = "waiting to be dispatched";
  }
  job.add_history(rec.time, "PolicySelected",
                  "PropagationPolicy " + e.policy +
                      " selects it: " + (d.suspended ? "still suspended" : "queued"));
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Annotations& e,
                                Job& job) {
  GF_RETURN_IF_ERROR(require_workload(rec, job));
  if (!e.annotations.is_object())
    return internal_error("job " + job.id + ": annotations must be an object");
  Json& meta = job.request["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (e.annotations.empty()) {
    meta.erase("annotations");
  } else {
    meta["annotations"] = e.annotations;
  }
  return ok_status();
}

Status FleetState::on_job_event(const EventRecord& rec, const job_events::Deleted& e, Job& job) {
  const Time t = rec.time;
  GF_RETURN_IF_ERROR(require_workload(rec, job));
  drop_job_run(job.key);
  add_job_user_event(rec, job, JobEvent{t, "Deleted", e.reason});
  const std::string id = job.id;  // `job` dies with its record
  view_.workload_ids.erase(workload_key(job.kind, job.ns, job.name));
  forget_job(job.key, id);
  return ok_status();
}

}  // namespace gf
