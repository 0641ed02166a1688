// Reads and deletes of workloads (docs/workloads.md, docs/dispatch.md): PyTorchJobs with Kubeflow's
// conditions and their member-cluster copies, the pods Kubeflow's operator would have created on
// the member cluster, and PropagationPolicies. Reads run through the loop: the explanation of a
// waiting job needs the writer's scheduler.
#include <algorithm>

#include "api/workload_wire.h"
#include "state/job_events.h"

namespace gf {
namespace {

using workload::PropagationPolicy;

std::string param(const HttpRequest& req, const char* key) {
  auto it = req.path_params.find(key);
  return it == req.path_params.end() ? "" : it->second;
}

std::vector<const Job*> workloads_in(const FleetView& v, const std::string& ns) {
  std::vector<const Job*> out;
  for (const auto& [id, j] : v.jobs) {
    if (j->dispatch && (ns.empty() || j->ns == ns)) out.push_back(j.get());
  }
  std::sort(out.begin(), out.end(), [](const Job* a, const Job* b) { return a->key < b->key; });
  return out;
}

Json condition(std::string_view type, std::string reason, std::string message, Time at) {
  return Json{{"type", std::string(type)},
              {"status", "True"},
              {"reason", std::move(reason)},
              {"message", std::move(message)},
              {"lastTransitionTime", format_iso8601(at)},
              {"lastUpdateTime", format_iso8601(at)}};
}

// Kubeflow's conditions: Created always, then the current one when it is not Created.
Json conditions(const Job& j) {
  const std::string who = "PyTorchJob " + j.name;
  Json out = Json::array();
  out.push_back(condition("Created", "PyTorchJobCreated", who + " is created.", j.created_at));
  // Held until a PropagationPolicy selects it (docs/dispatch.md "A job before its policy").
  if (j.dispatch && j.dispatch->awaiting_policy && !is_terminal(j.status)) {
    out.push_back(condition("Queued", "NoPropagationPolicy", j.status_reason, j.created_at));
  }
  // Held back by quota or placement (Kueue's Workload says the same): gone once admitted.
  if (j.waiting && !j.admitted && !is_terminal(j.status)) {
    out.push_back(condition("Queued", j.waiting->reason, j.waiting->message, j.waiting->since));
  }
  const std::string_view state = workload_state(j);
  const Time at = j.history.empty() ? j.created_at : j.history.back().time;
  if (state == "Running") {
    out.push_back(
        condition("Running", "PyTorchJobRunning", who + " is running.", j.started_at.value_or(at)));
  } else if (state == "Restarting") {
    out.push_back(condition("Restarting", "PyTorchJobRestarting",
                            who + " is restarting because " + j.status_reason + ".", at));
  } else if (state == "Succeeded") {
    out.push_back(condition("Succeeded", "PyTorchJobSucceeded", who + " is successfully completed.",
                            j.stopped_at.value_or(at)));
  } else if (state == "Failed") {
    out.push_back(condition("Failed", "PyTorchJobFailed", who + " has failed: " + j.status_reason,
                            j.stopped_at.value_or(at)));
  } else if (state == "Suspended") {
    out.push_back(condition("Suspended", "PyTorchJobSuspended", who + " is suspended.", at));
  }
  return out;
}

// Per replica type: pods active, succeeded, failed.
Json replica_statuses(const Job& j) {
  Json out = Json::object();
  for (const JobPodSet& ps : j.pod_sets) {
    const std::string type = ps.role == "master" ? "Master" : "Worker";
    int64_t active = 0, succeeded = 0, failed = 0;
    if (j.status == JobStatus::kRunning) active = ps.count;
    if (j.status == JobStatus::kSucceeded) succeeded = ps.count;
    if (j.status == JobStatus::kFailed && j.started_at) failed = ps.count;
    out[type] = Json{{"active", active}, {"succeeded", succeeded}, {"failed", failed}};
  }
  return out;
}

// One row per copy of the job on a member cluster: the one the fleet manages (ADOPTION Y), then
// copies left by failover (ADOPTION N).
Json members(const Job& j) {
  Json out = Json::array();
  const Dispatch& d = *j.dispatch;
  const std::string current =
      !d.cluster.empty() ? d.cluster : (is_terminal(j.status) ? j.cluster : "");
  if (!current.empty()) {
    out.push_back(Json{{"cluster", current},
                       {"state", std::string(workload_state(j))},
                       {"adoption", "Y"},
                       {"since", format_iso8601(d.bound_at.value_or(j.created_at))}});
  }
  for (const MemberCopy& c : d.left) {
    Json row{{"cluster", c.cluster},
             {"state", c.state},
             {"adoption", "N"},
             {"since", format_iso8601(c.since)}};
    if (c.purge_at) row["purgeAt"] = format_iso8601(*c.purge_at);
    out.push_back(std::move(row));
  }
  return out;
}

Json event_rows(const Job& j) {
  Json out = Json::array();
  for (const JobEvent& e : j.history) {
    const bool warning = e.reason == "Failover" || e.reason == "PodsPending" ||
                         e.reason == "Restarting" || e.reason == "Failed" ||
                         e.reason == "Preempted" || e.reason == "Interrupted";
    std::string from = "pytorchjob-controller";
    if (e.reason == "ScheduleBindingSucceed" || e.reason == "PodsBound" ||
        e.reason == "PodsPending")
      from = "default-scheduler";
    if (e.reason == "Failover" || e.reason == "CopyPurged") from = "failover-controller";
    if (e.reason == "Borrowing") from = "kube-queue";
    out.push_back(Json{{"type", warning ? "Warning" : "Normal"},
                       {"reason", e.reason},
                       {"from", from},
                       {"message", e.message},
                       {"time", format_iso8601(e.time)}});
  }
  return out;
}

// The containers' images, for `describe` on a server whose pods run for real: recorded, not
// pulled (docs/local-cloud.md "Pods").
Json recorded_images(const Job& j) {
  Json out = Json::array();
  auto parsed = workload::parse_pytorchjob(j.request);
  if (!parsed.ok()) return out;
  for (const workload::ReplicaSpec* rs :
       {&parsed->master, parsed->worker ? &*parsed->worker : nullptr}) {
    if (rs == nullptr || !rs->template_.is_object()) continue;
    const Json spec = rs->template_.value("spec", Json::object());
    if (!spec.is_object()) continue;
    for (const Json& c : spec.value("containers", Json::array())) {
      if (!c.is_object()) continue;
      out.push_back(Json{{"replicaType", rs->type},
                         {"container", c.value("name", "")},
                         {"image", c.value("image", "")}});
    }
  }
  return out;
}

Json render_job(const Job& j, bool describe, bool real_pods = false) {
  Json out = j.request;
  Json status{{"conditions", conditions(j)},
              {"replicaStatuses", replica_statuses(j)},
              {"state", std::string(workload_state(j))},
              {"members", members(j)},
              {"restartCount", j.dispatch->restarts},
              {"propagationPolicy", j.dispatch->policy},
              {"jobId", j.id}};
  if (j.started_at) status["startTime"] = format_iso8601(*j.started_at);
  if (j.stopped_at && is_terminal(j.status))
    status["completionTime"] = format_iso8601(*j.stopped_at);
  if (j.dispatch->failovers > 0) status["failovers"] = j.dispatch->failovers;
  out["status"] = std::move(status);
  if (describe) {
    if (!is_terminal(j.status) && j.waiting) {
      out["explanation"] = Json{{"kind", j.waiting->kind}, {"message", j.waiting->message}};
      if (!j.waiting->node.empty()) out["explanation"]["quotaNode"] = j.waiting->node;
    }
    out["events"] = event_rows(j);
    // Real pods: each one as its node's agent reported it, with why it does not run (on a real
    // Slurm cluster, Slurm's reason: docs/slurm.md "States").
    if (!j.pod_states.empty() && !is_terminal(j.status)) {
      Json pods = Json::array();
      for (const Job::Pod& pod : j.pods()) {
        auto ps = j.pod_states.find(pod.name);
        pods.push_back(Json{{"name", pod.name},
                            {"node", pod.node},
                            {"phase", ps == j.pod_states.end() ? "Pending" : ps->second.phase},
                            {"message", ps == j.pod_states.end() ? "" : ps->second.message}});
      }
      out["pods"] = std::move(pods);
    }
    if (real_pods) {
      out["images"] = recorded_images(j);
      out["imageNote"] =
          "recorded, not pulled: the local cloud has no registry; each container runs its command "
          "and args on its node";
    }
  }
  return out;
}

// The job as the member cluster `cluster` holds it (`get pytorchjob NAME -m CLUSTER -o yaml`).
Result<Json> render_member(const Job& j, const std::string& cluster) {
  const Json rows = members(j);
  for (const Json& row : rows) {
    if (row.value("cluster", "") != cluster) continue;
    Json out = render_job(j, false);
    out["metadata"]["annotations"][std::string(kMemberAnnotation)] = cluster;
    Json& st = out["status"];
    st.erase("members");
    st.erase("propagationPolicy");
    if (row.value("adoption", "") == "N") {
      st["state"] = row.value("state", "");
      st["conditions"] = Json::array({condition(
          "Created", "PyTorchJobCreated", "PyTorchJob " + j.name + " is created.", j.created_at)});
      st["replicaStatuses"] = Json::object();
    }
    return out;
  }
  return not_found_error("PyTorchJob " + j.ns + "/" + j.name + " has no copy on member cluster " +
                         cluster);
}

// The phase of the pods of the copy the fleet manages, on `cluster`.
std::string pod_phase(const FleetView& v, const Job& j, const std::string& cluster) {
  if (j.status == JobStatus::kSucceeded) return "Succeeded";
  if (j.status == JobStatus::kFailed) return "Failed";
  if (j.status == JobStatus::kRunning) return "Running";
  const Cluster* c = v.find_cluster(cluster);
  if (c == nullptr || c->status == ClusterStatus::kFailed) return "Unknown";
  return "Pending";
}

// The pods of the job's copies, as the member clusters hold them.
// A pod's status: the job's phase and restarts, or for real pods (docs/local-cloud.md) what its
// node's agent reported of it, with its message (on a real Slurm cluster, Slurm's words).
Json pod_status(const Job& j, const std::string& pod, const std::string& phase, int32_t restarts,
                bool with_nodes) {
  auto ps = with_nodes ? j.pod_states.find(pod) : j.pod_states.end();
  const bool reported = ps != j.pod_states.end();
  const std::string& now = reported ? ps->second.phase : phase;
  Json status{{"phase", now},
              {"ready", now == "Running"},
              {"restartCount", restarts + (reported ? ps->second.restarts : 0)}};
  if (reported && !ps->second.message.empty()) status["message"] = ps->second.message;
  return status;
}

void add_pods(const FleetView& v, const Job& j, Json& out) {
  auto parsed = workload::parse_pytorchjob(j.request);
  if (!parsed.ok()) return;
  const Dispatch& d = *j.dispatch;
  const std::vector<workload::PyTorchJob::Pod> pods = parsed->pods();
  auto container_env = [&](const workload::PyTorchJob::Pod& pod) {
    Json env = Json::array();
    for (const auto& [k, val] : pod.env) env.push_back(Json{{"name", k}, {"value", val}});
    return env;
  };
  const std::string job_uid =
      j.request.value("metadata", Json::object()).value("uid", "uid-" + j.id);
  auto add = [&](const std::string& cluster, const std::string& phase, int32_t restarts,
                 Time created, bool with_nodes) {
    for (size_t i = 0; i < pods.size(); ++i) {
      const workload::PyTorchJob::Pod& pod = pods[i];
      Json labels = Json::object();
      for (const auto& [k, val] : pod.labels) labels[k] = val;
      Json spec{
          {"clusterName", cluster},
          {"containers", Json::array({Json{{"name", "pytorch"}, {"env", container_env(pod)}}})}};
      if (with_nodes && i < j.pod_nodes.size()) spec["nodeName"] = j.pod_nodes[i];
      Json status = pod_status(j, pod.name, phase, restarts, with_nodes);
      out.push_back(
          Json{{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata",
                {{"name", pod.name},
                 {"namespace", j.ns},
                 {"labels", std::move(labels)},
                 {"creationTimestamp", format_iso8601(created)},
                 {"uid", job_uid + "-" + pod.name},
                 {"ownerReferences",
                  Json::array({Json{{"apiVersion", std::string(workload::kPyTorchJobApiVersion)},
                                    {"kind", "PyTorchJob"},
                                    {"name", j.name},
                                    {"uid", job_uid},
                                    {"controller", true},
                                    {"blockOwnerDeletion", true}}})}}},
               {"spec", std::move(spec)},
               {"status", std::move(status)}});
    }
  };
  const std::string current =
      !d.cluster.empty() ? d.cluster : (is_terminal(j.status) ? j.cluster : "");
  const bool cleaned = is_terminal(j.status) && parsed->clean_pod_policy == "All";
  if (!current.empty() && !cleaned) {
    add(current, pod_phase(v, j, current), d.restarts, d.bound_at.value_or(j.created_at), true);
  }
  for (const MemberCopy& c : d.left) {
    const Cluster* cl = v.find_cluster(c.cluster);
    const bool reachable = cl != nullptr && cl->status != ClusterStatus::kFailed &&
                           cl->status != ClusterStatus::kDeleting;
    add(c.cluster, reachable ? "Pending" : "Unknown", c.restarts, c.since, false);
  }
}

Json render_policy(const FleetView& v, const PropagationPolicy& p) {
  Json out = p.doc;
  Json selected = Json::array();
  for (const Job* j : workloads_in(v, p.ns)) {
    if (j->dispatch->policy == p.name) selected.push_back(j->name);
  }
  out["status"] = Json{{"selected", std::move(selected)}};
  return out;
}

}  // namespace

bool is_workload_plural(std::string_view plural) {
  return plural == "pytorchjobs" || plural == "pytorchjob" || plural == "propagationpolicies" ||
         plural == "propagationpolicy" || plural == "pods" || plural == "pod";
}

// A list shows only what the caller may see: the jobs filed under its teams, their pods, the
// policies of its namespaces (docs/security.md "Who sees a job").
HttpResponse workload_list(Api& api, const std::string& plural, const HttpRequest& req) {
  const std::string ns = req.query_or("namespace", "");
  return read_view(api, [plural, ns, &req](const FleetView& v) -> Result<Json> {
    Json items = Json::array();
    if (plural.starts_with("pytorchjob")) {
      for (const Job* j : workloads_in(v, ns)) {
        if (may_see_job(req, v, *j)) items.push_back(render_job(*j, false));
      }
    } else if (plural.starts_with("pod")) {
      for (const Job* j : workloads_in(v, ns)) {
        if (may_see_job(req, v, *j)) add_pods(v, *j, items);
      }
    } else if (v.policies) {
      for (const auto& [key, p] : *v.policies) {
        if ((ns.empty() || key.first == ns) && may_see_namespace(req, key.first))
          items.push_back(render_policy(v, p));
      }
    }
    return Json{{"items", std::move(items)}};
  });
}

HttpResponse workload_get(Api& api, const std::string& plural, const HttpRequest& req) {
  std::string ns = param(req, "namespace");
  if (ns.empty()) ns = req.query_or("namespace", "default");
  const std::string name = param(req, "name");
  const std::string cluster = req.query_or("cluster", "");
  const bool describe = req.query_or("describe", "") == "true";
  return read_view(api, [&](const FleetView& v) -> Result<Json> {
    if (plural.starts_with("pytorchjob")) {
      const Job* j = v.find_workload(workload::kPyTorchJobKind, ns, name);
      if (j == nullptr || !may_see_job(req, v, *j))
        return not_found_error("PyTorchJob " + ns + "/" + name + " not found");
      if (!cluster.empty()) return render_member(*j, cluster);
      return render_job(*j, describe, api.log_source() != nullptr);
    }
    if (plural.starts_with("pod")) {
      for (const Job* j : workloads_in(v, ns)) {
        if (!may_see_job(req, v, *j)) continue;
        Json pods = Json::array();
        add_pods(v, *j, pods);
        for (const Json& p : pods) {
          if (p["metadata"].value("name", "") != name) continue;
          if (!cluster.empty() && p["spec"].value("clusterName", "") != cluster) continue;
          return p;
        }
      }
      return not_found_error("pod " + ns + "/" + name + " not found");
    }
    if (v.policies && may_see_namespace(req, ns)) {
      auto it = v.policies->find({ns, name});
      if (it != v.policies->end()) return render_policy(v, it->second);
    }
    return not_found_error("PropagationPolicy " + ns + "/" + name + " not found");
  });
}

HttpResponse workload_delete(Api& api, const std::string& plural, const HttpRequest& req) {
  std::string ns = param(req, "namespace");
  if (ns.empty()) ns = req.query_or("namespace", "default");
  const std::string name = param(req, "name");
  Request w;
  w.name = "DeleteObject";
  w.handle = [=, req = caller_of(req)](const FleetState& s, Time) -> Result<Decision> {
    Decision d;
    if (plural.starts_with("pytorchjob")) {
      const Job* j = s.view().find_workload(workload::kPyTorchJobKind, ns, name);
      if (j == nullptr || !may_change_job(req, s.view(), *j))
        return not_found_error("PyTorchJob " + ns + "/" + name + " not found");
      d.events.push_back(job_events::to_event(job_events::Deleted{j->id, "deleted by user"}));
      d.response = Json{{"deleted", {{"kind", "PyTorchJob"}, {"namespace", ns}, {"name", name}}}};
      return d;
    }
    if (plural.starts_with("propagationpolic")) {
      if (!has_role(req, "admin") && !team_covers_namespace(req, ns))
        return not_found_error("PropagationPolicy " + ns + "/" + name + " not found");
      if (!s.view().policies || !s.view().policies->contains({ns, name})) {
        return not_found_error("PropagationPolicy " + ns + "/" + name + " not found");
      }
      d.events.push_back(event_codec::to_event(object_events::PolicyDeleted{ns, name}));
      d.response =
          Json{{"deleted", {{"kind", "PropagationPolicy"}, {"namespace", ns}, {"name", name}}}};
      return d;
    }
    return validation_error("pods belong to their PyTorchJob: delete the job instead");
  };
  return Api::respond(api.write(std::move(w)));
}

}  // namespace gf
