// Workloads (docs/workloads.md, docs/dispatch.md): PyTorchJobs and PropagationPolicies through
// `POST /v1/apply`, and the objects `/v1/objects/{pytorchjobs,propagationpolicies,pods}` return,
// shaped like Kubernetes' (metadata with uid and creationTimestamp, a status with conditions) so
// the CLI can show the seed's views: `get pytorchjob [-M]`, `get pod -M`, `describe pytorchjob`,
// `get pytorchjob NAME -m CLUSTER -o yaml`.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "api/workload_wire.h"
#include "core/ids.h"
#include "quota/frontends/quota_objects.h"
#include "state/job_events.h"

namespace gf {
namespace {

using workload::PropagationPolicy;
using workload::PyTorchJob;

std::string qualified(const std::string& ns, const std::string& name) { return ns + "/" + name; }

// A document without the fields the server adds or Kubernetes owns, to tell an update from a
// repeat.
Json comparable(Json doc) {
  if (doc.contains("metadata") && doc.at("metadata").is_object()) {
    Json& m = doc["metadata"];
    for (const char* k :
         {"uid", "creationTimestamp", "resourceVersion", "generation", "managedFields"})
      m.erase(k);
    if (!m.contains("namespace")) m["namespace"] = "default";
  }
  doc.erase("status");
  return doc;
}

Json with_identity(Json doc, const Json* previous, const std::string& uid, Time now) {
  Json& meta = doc["metadata"];
  if (!meta.contains("namespace")) meta["namespace"] = "default";
  if (previous != nullptr && previous->contains("metadata")) {
    meta["uid"] = previous->at("metadata").value("uid", uid);
    meta["creationTimestamp"] =
        previous->at("metadata").value("creationTimestamp", format_iso8601(now));
  } else {
    meta["uid"] = uid;
    meta["creationTimestamp"] = format_iso8601(now);
  }
  return doc;
}

const frontend::QuotaObject* find_object(const FleetView& v, frontend::Kind kind,
                                         const std::string& name, const std::string& ns) {
  if (!v.quota_objects) return nullptr;
  auto it = v.quota_objects->find(frontend::ObjectKey{kind, ns, name});
  return it == v.quota_objects->end() ? nullptr : &it->second;
}

// The job record a new PyTorchJob becomes, dispatched per `policy`; with none, held until a
// policy selects it (docs/dispatch.md "A job before its policy").
Result<Job> workload_job(const FleetState& s, const PyTorchJob& pj,
                         const PropagationPolicy* held_or, Json doc) {
  static const PropagationPolicy kNone;
  const PropagationPolicy& policy = held_or != nullptr ? *held_or : kNone;
  Job job;
  job.kind = std::string(workload::kPyTorchJobKind);
  job.name = pj.name;
  job.ns = pj.ns;
  job.pod_sets = pj.pod_sets();
  job.duration = pj.duration;
  job.checkpoint_interval = pj.checkpoint_interval;
  job.restart_overhead = pj.restart_overhead;
  job.clusters = policy.cluster_names;
  job.request = std::move(doc);
  if (!pj.local_queue.empty()) {
    if (find_object(s.view(), frontend::Kind::kLocalQueue, pj.local_queue, pj.ns) == nullptr) {
      return validation_error("metadata.labels." + std::string(workload::kQueueNameLabel) +
                              ": LocalQueue " + qualified(pj.ns, pj.local_queue) +
                              " does not exist");
    }
    job.local_queue = pj.local_queue;
  }
  if (!pj.priority_class.empty()) {
    const frontend::QuotaObject* cls =
        find_object(s.view(), frontend::Kind::kWorkloadPriorityClass, pj.priority_class, "");
    if (cls == nullptr) {
      return validation_error("metadata.labels." + std::string(workload::kPriorityClassLabel) +
                              ": WorkloadPriorityClass \"" + pj.priority_class +
                              "\" does not exist");
    }
    job.priority = static_cast<int32_t>(cls->doc.value("value", int64_t{0}));
  }
  Dispatch d;
  d.policy = policy.name;
  d.queued = policy.suspend_scheduling;
  d.toleration_seconds = policy.toleration_seconds;
  d.purge_mode = std::string(workload::to_string(policy.purge_mode));
  d.grace_period_seconds = policy.grace_period_seconds;
  d.restart_policy["master"] = std::string(workload::to_string(pj.master.restart));
  if (pj.worker) d.restart_policy["worker"] = std::string(workload::to_string(pj.worker->restart));
  d.backoff_limit = pj.backoff_limit;
  d.active_deadline_seconds = pj.active_deadline_seconds;
  d.ttl_seconds_after_finished = pj.ttl_seconds_after_finished;
  d.suspended = pj.suspend;
  d.awaiting_policy = held_or == nullptr;
  job.dispatch = std::move(d);
  job.status = pj.suspend || held_or == nullptr ? JobStatus::kSubmitted : JobStatus::kRunnable;
  job.status_reason = pj.suspend           ? "suspended (runPolicy.suspend)"
                      : held_or == nullptr ? std::string(kAwaitingPolicyReason)
                                           : "waiting to be dispatched";
  return job;
}

Json result_item(std::string_view kind, const std::string& ns, const std::string& name,
                 std::string_view result, const std::vector<std::string>& warnings) {
  Json item{{"kind", std::string(kind)},
            {"namespace", ns},
            {"name", name},
            {"result", std::string(result)}};
  if (!warnings.empty()) item["warnings"] = warnings;
  return item;
}

// Jobs held for want of a policy (docs/dispatch.md "A job before its policy") that one of
// `candidates` (the policies after this request) now selects: each takes that policy's settings.
void bind_held_jobs(const FleetState& s, const std::vector<const PropagationPolicy*>& candidates,
                    std::vector<Event>& events) {
  for (const auto& [id, j] : s.view().jobs) {
    if (!j->dispatch || !j->dispatch->awaiting_policy || is_terminal(j->status)) continue;
    std::map<std::string, std::string> labels;
    const Json meta = j->request.value("metadata", Json::object());
    const Json given = meta.value("labels", Json::object());
    for (auto it = given.begin(); it != given.end(); ++it) {
      if (it->is_string()) labels[it.key()] = it->get<std::string>();
    }
    const PropagationPolicy* p =
        workload::match_policy(candidates, workload::kPyTorchJobApiVersion,
                               workload::kPyTorchJobKind, j->name, j->ns, labels);
    if (p == nullptr) continue;
    events.push_back(job_events::to_event(
        job_events::PolicyBound{j->id, p->name, p->suspend_scheduling, p->toleration_seconds,
                                std::string(workload::to_string(p->purge_mode)),
                                p->grace_period_seconds, p->cluster_names}));
  }
}

// A PyTorchJob applied again: unchanged, or "configured" when only what may change once a job
// exists changed — runPolicy.suspend and the annotations (Kubeflow's rule for a running job;
// kubectl keeps its last-applied configuration in an annotation).
Status decide_job_update(const Job& existing, const PyTorchJob& pj, std::vector<Event>& events,
                         Json& items) {
  const std::string what = "PyTorchJob " + qualified(pj.ns, pj.name);
  const Json before = comparable(existing.request);
  const Json after = comparable(pj.doc);
  if (before == after) {
    items.push_back(
        result_item(workload::kPyTorchJobKind, pj.ns, pj.name, "unchanged", pj.warnings));
    return ok_status();
  }
  auto annotations = [](const Json& d) {
    return d.value("metadata", Json::object()).value("annotations", Json::object());
  };
  auto strip = [](Json d) {
    if (d.contains("metadata") && d["metadata"].is_object()) d["metadata"].erase("annotations");
    if (d.contains("spec") && d["spec"].contains("runPolicy"))
      d["spec"]["runPolicy"].erase("suspend");
    if (d.contains("spec") && d["spec"].contains("runPolicy") && d["spec"]["runPolicy"].empty())
      d["spec"].erase("runPolicy");
    return d;
  };
  if (strip(before) != strip(after)) {
    return validation_error("spec: " + what +
                            " exists and only spec.runPolicy.suspend and metadata.annotations may "
                            "change; delete it and apply again to change anything else");
  }
  if (!annotations(after).is_object())
    return validation_error("metadata.annotations: expected an object of strings");
  if (annotations(before) != annotations(after)) {
    events.push_back(
        job_events::to_event(job_events::Annotations{existing.id, annotations(after)}));
  }
  if (existing.dispatch && existing.dispatch->suspended != pj.suspend) {
    if (is_terminal(existing.status)) {
      return validation_error(
          "spec.runPolicy.suspend: " + what + " has already " +
          std::string(workload_state(existing) == "Succeeded" ? "succeeded" : "failed"));
    }
    events.push_back(job_events::to_event(job_events::Suspend{existing.id, pj.suspend}));
  }
  items.push_back(
      result_item(workload::kPyTorchJobKind, pj.ns, pj.name, "configured", pj.warnings));
  return ok_status();
}

// A PyTorchJob new to the fleet: submitted per the policy that selects it, or held until one
// does (docs/dispatch.md "A job before its policy"). `index` is its place in the request, `counter`
// its job number.
Status decide_new_job(const FleetState& s, Time now, const PyTorchJob& pj, size_t index,
                      int64_t counter, const std::vector<const PropagationPolicy*>& candidates,
                      std::vector<Event>& events, Json& items) {
  const PropagationPolicy* policy =
      workload::match_policy(candidates, workload::kPyTorchJobApiVersion, workload::kPyTorchJobKind,
                             pj.name, pj.ns, pj.labels);
  const std::string uid = fmt::format("uid-{}-j{}", s.applied_seq() + 1, index);
  GF_ASSIGN_OR_RETURN(Job job,
                      workload_job(s, pj, policy, with_identity(pj.doc, nullptr, uid, now)));
  job.key = static_cast<uint64_t>(counter);
  job.id = job_id(counter, job.name);
  events.push_back(job_events::to_event(job_events::Submitted{std::move(job)}));
  std::vector<std::string> warnings = pj.warnings;
  if (policy == nullptr) {
    warnings.push_back("metadata: no PropagationPolicy in namespace " + pj.ns + " selects " +
                       "PyTorchJob " + qualified(pj.ns, pj.name) +
                       " yet: it is held (not queued) until one does");
  }
  Json item = result_item(workload::kPyTorchJobKind, pj.ns, pj.name, "created", warnings);
  if (policy != nullptr) item["policy"] = policy->name;
  items.push_back(std::move(item));
  return ok_status();
}

}  // namespace

bool is_workload_kind(std::string_view api_version, std::string_view kind) {
  return workload::is_pytorchjob(api_version, kind) ||
         workload::is_propagation_policy(api_version, kind);
}

Status parse_workload_doc(const Json& doc, WorkloadDocs& docs) {
  const std::string api_version = doc.value("apiVersion", "");
  const std::string kind = doc.value("kind", "");
  if (workload::is_pytorchjob(api_version, kind)) {
    GF_ASSIGN_OR_RETURN(PyTorchJob pj, workload::parse_pytorchjob(doc));
    docs.jobs.push_back(std::move(pj));
    return ok_status();
  }
  GF_ASSIGN_OR_RETURN(PropagationPolicy p, workload::parse_propagation_policy(doc));
  docs.policies.push_back(std::move(p));
  return ok_status();
}

Status decide_workload_apply(const FleetState& s, Time now, const WorkloadDocs& docs,
                             std::vector<Event>& events, Json& items) {
  // Policies first: a job in the same request may be selected by one of them. The stored map is
  // copied only when the request applies policies (a request of jobs only reads it).
  const PolicyMap no_policies;
  std::optional<PolicyMap> changed;
  if (!docs.policies.empty()) changed.emplace(s.view().policies ? *s.view().policies : no_policies);
  const PolicyMap& policies =
      changed ? *changed : (s.view().policies ? *s.view().policies : no_policies);
  std::vector<object_events::PolicyDoc> policy_objects;
  for (size_t i = 0; i < docs.policies.size(); ++i) {
    const PropagationPolicy& p = docs.policies[i];
    auto it = policies.find({p.ns, p.name});
    const Json* previous = it == policies.end() ? nullptr : &it->second.doc;
    if (previous != nullptr && comparable(*previous) == comparable(p.doc)) {
      items.push_back(
          result_item(workload::kPropagationPolicyKind, p.ns, p.name, "unchanged", p.warnings));
      continue;
    }
    const std::string uid = fmt::format("uid-{}-p{}", s.applied_seq() + 1, i);
    PropagationPolicy stored = p;
    stored.doc = with_identity(p.doc, previous, uid, now);
    policy_objects.push_back(object_events::PolicyDoc{p.ns, p.name, stored.doc});
    items.push_back(result_item(workload::kPropagationPolicyKind, p.ns, p.name,
                                previous ? "configured" : "created", p.warnings));
    (*changed)[{p.ns, p.name}] = std::move(stored);
  }
  if (!policy_objects.empty()) {
    events.push_back(
        event_codec::to_event(object_events::PolicyApplied{std::move(policy_objects)}));
  }

  std::vector<const PropagationPolicy*> candidates;
  candidates.reserve(policies.size());
  for (const auto& [key, p] : policies) candidates.push_back(&p);
  if (!docs.policies.empty()) bind_held_jobs(s, candidates, events);
  int64_t counter = s.view().job_counter;
  std::set<std::string> seen;
  for (size_t i = 0; i < docs.jobs.size(); ++i) {
    const PyTorchJob& pj = docs.jobs[i];
    const std::string what = "PyTorchJob " + qualified(pj.ns, pj.name);
    if (!seen.insert(qualified(pj.ns, pj.name)).second) {
      return validation_error("metadata.name: " + what + " appears twice in one request");
    }
    if (const Job* existing = s.view().find_workload(workload::kPyTorchJobKind, pj.ns, pj.name)) {
      GF_RETURN_IF_ERROR(decide_job_update(*existing, pj, events, items));
      continue;
    }
    counter += 1;
    GF_RETURN_IF_ERROR(decide_new_job(s, now, pj, i, counter, candidates, events, items));
  }
  return ok_status();
}

}  // namespace gf
