// PyTorchJob parsing (docs/workloads.md, docs/dispatch.md): metadata, the Master/Worker replica
// specs with their effective per-pod requests (Kubernetes request defaulting from limits), the run
// policy, and the pods Kubeflow's operator would create. The replica templates are free-form pod
// templates: only their containers' resources are read, and nothing under them is reported as
// unknown.
#include "workload/pytorchjob.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "core/k8s_names.h"
#include "core/quantity.h"
#include "core/resources.h"

namespace gf::workload {
namespace {

// The workload controller adds these to the job's times (start + activeDeadlineSeconds, stop +
// ttlSecondsAfterFinished, start + the duration annotation) in int64 microseconds; a century
// keeps every sum representable and is beyond any real deadline.
constexpr int64_t kMaxSeconds = 3'153'600'000;
constexpr Duration kMaxDuration = std::chrono::seconds(kMaxSeconds);

constexpr std::string_view kMaster = "Master";
constexpr std::string_view kWorker = "Worker";
constexpr std::string_view kReplicaSpecs = "spec.pytorchReplicaSpecs";

constexpr std::array<std::pair<RestartPolicy, std::string_view>, 4> kRestartPolicies{{
    {RestartPolicy::kAlways, "Always"},
    {RestartPolicy::kOnFailure, "OnFailure"},
    {RestartPolicy::kNever, "Never"},
    {RestartPolicy::kExitCode, "ExitCode"},
}};

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

void note_unknown(const ObjectReader& reader, std::vector<std::string>& warnings) {
  for (const std::string& f : reader.unknown_fields()) {
    warnings.push_back(f + ": unknown field, ignored");
  }
}

// metadata.labels / metadata.annotations: an object of strings.
Status read_string_map(const Json* value, const std::string& path,
                       std::map<std::string, std::string>& out) {
  if (!value) return ok_status();
  if (!value->is_object()) {
    return validation_error(path + ": expected an object of strings, got " +
                            describe_json_value(*value));
  }
  for (auto it = value->begin(); it != value->end(); ++it) {
    if (!it.value().is_string()) {
      return validation_error(path_join(path, it.key()) + ": expected string, got " +
                              describe_json_value(it.value()));
    }
    out.emplace(it.key(), it.value().get<std::string>());
  }
  return ok_status();
}

// Kueue's topology annotations among `annotations` (at `path`): required or preferred, not
// both, naming a level gpufleet knows.
Result<std::optional<TopologyRequest>> read_topology(
    const std::map<std::string, std::string>& annotations, const std::string& path) {
  auto required = annotations.find(std::string(kRequiredTopologyAnnotation));
  auto preferred = annotations.find(std::string(kPreferredTopologyAnnotation));
  if (required == annotations.end() && preferred == annotations.end())
    return std::optional<TopologyRequest>();
  if (required != annotations.end() && preferred != annotations.end()) {
    return validation_error(path_join(path, required->first) + ": is exclusive with " +
                            preferred->first + " (ask for one domain or prefer one, not both)");
  }
  const auto& [key, value] = required != annotations.end() ? *required : *preferred;
  if (!topology_level(value)) {
    std::string known;
    for (std::string_view l : kTopologyLevels)
      known += (known.empty() ? "" : ", ") + std::string(l);
    return validation_error(path_join(path, key) + ": " + in_quotes(value) +
                            " is not a topology level (known: " + known + ")");
  }
  return std::optional<TopologyRequest>(
      TopologyRequest{value, required != annotations.end(), false});
}

Status read_metadata(ObjectReader& top, PyTorchJob& job) {
  const Json* meta = top.required_value("metadata");
  if (!top.ok()) return top.status();
  ObjectReader m(*meta, "metadata");
  job.name = m.required_string("name");
  if (m.ok() && !valid_dns_label(job.name)) {
    m.fail("name", in_quotes(job.name) +
                       " is not a valid PyTorchJob name (lowercase letters, digits and '-', "
                       "starting and ending with a letter or digit, at most 63 characters)");
  }
  job.ns = m.optional_string("namespace").value_or("default");
  if (m.ok() && !valid_dns_label(job.ns)) {
    m.fail("namespace", in_quotes(job.ns) + " is not a valid namespace name");
  }
  const Json* labels = m.optional_value("labels");
  const Json* annotations = m.optional_value("annotations");
  // Server-set and bookkeeping fields that objects read back from a cluster carry.
  for (const char* known :
       {"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
        "managedFields", "finalizers", "ownerReferences", "generateName"}) {
    m.optional_value(known);
  }
  if (!m.ok()) return m.status();
  GF_RETURN_IF_ERROR(read_string_map(labels, "metadata.labels", job.labels));
  GF_RETURN_IF_ERROR(read_string_map(annotations, "metadata.annotations", job.annotations));
  note_unknown(m, job.warnings);

  if (auto it = job.labels.find(std::string(kQueueNameLabel)); it != job.labels.end()) {
    job.local_queue = it->second;
  }
  if (auto it = job.labels.find(std::string(kPriorityClassLabel)); it != job.labels.end()) {
    job.priority_class = it->second;
  }
  // The simulated run time and the lost-work model, each at most a century.
  for (const auto& [name, target] :
       {std::pair{kDurationAnnotation, &job.duration},
        std::pair{kCheckpointAnnotation, &job.checkpoint_interval},
        std::pair{kRestartOverheadAnnotation, &job.restart_overhead}}) {
    auto it = job.annotations.find(std::string(name));
    if (it == job.annotations.end()) continue;
    Result<Duration> d = parse_duration(it->second);
    if (!d.ok()) return d.status().with_prefix(path_join("metadata.annotations", it->first));
    if (*d > kMaxDuration) {
      return validation_error(path_join("metadata.annotations", it->first) +
                              ": must be at most 36500d (100 years), got " + it->second);
    }
    if (target == &job.checkpoint_interval && *d <= Duration::zero()) {
      return validation_error(path_join("metadata.annotations", it->first) +
                              ": must be greater than 0, got " + it->second);
    }
    *target = *d;
  }
  GF_ASSIGN_OR_RETURN(job.topology, read_topology(job.annotations, "metadata.annotations"));
  if (job.topology) job.topology->whole_job = true;
  return ok_status();
}

// One resource of one pod: the running total and, while a single container names it, that
// container's value as written.
struct PodResource {
  int64_t total = 0;
  Json written;
  int contributors = 0;
  QuantityScale scale = QuantityScale::kUnit;
};

// Reads `requests` or `limits` of one container: {name: parsed value}, originals in `written`.
Status read_resource_list(const Json* value, const std::string& path, ResourceRegistry& registry,
                          std::map<std::string, std::pair<int64_t, Json>>& out) {
  if (!value) return ok_status();
  if (!value->is_object()) {
    return validation_error(path + ": expected an object mapping resource names to quantities, " +
                            "e.g. {cpu: \"2\", memory: 2Gi}, got " + describe_json_value(*value));
  }
  for (auto it = value->begin(); it != value->end(); ++it) {
    const std::string field = path_join(path, it.key());
    Result<ResourceId> id = registry.intern(it.key());
    if (!id.ok()) return id.status().with_prefix(field);
    Result<int64_t> v = parse_quantity_json(it.value(), registry.scale(*id));
    if (!v.ok()) return v.status().with_prefix(field);
    out.emplace(it.key(), std::make_pair(*v, it.value()));
  }
  return ok_status();
}

// One container's `requests` or `limits`, as read_resource_list gives them.
using ResourceList = std::map<std::string, std::pair<int64_t, Json>>;

// Kubernetes request defaulting: a limit without a request is also the request, and a request
// above its limit is refused.
Status default_requests_from_limits(const ResourceList& lim, const std::string& requests_path,
                                    ResourceList& req) {
  for (const auto& [name, limit] : lim) {
    auto it = req.find(name);
    if (it == req.end()) {
      req.emplace(name, limit);
    } else if (it->second.first > limit.first) {
      return validation_error(path_join(requests_path, name) + ": " + it->second.second.dump() +
                              " exceeds the limit " + limit.second.dump());
    }
  }
  return ok_status();
}

// Adds one container's effective requests to the pod's totals, refusing a sum beyond int64.
Status add_to_pod(const ResourceList& req, const ResourceRegistry& registry,
                  const std::string& containers_path, std::map<std::string, PodResource>& pod) {
  for (const auto& [name, value] : req) {
    PodResource& p = pod[name];
    p.scale = registry.scale(*registry.find(name));
    if (__builtin_add_overflow(p.total, value.first, &p.total)) {
      return validation_error(containers_path + ": the containers' " + name +
                              " requests add up to more than " +
                              format_quantity(std::numeric_limits<int64_t>::max(), p.scale));
    }
    p.written = value.second;
    ++p.contributors;
  }
  return ok_status();
}

// One container (at `path`): its resources, if any, counted into `pod`.
Status add_container(const Json& container, const std::string& path,
                     const std::string& containers_path, ResourceRegistry& registry,
                     std::map<std::string, PodResource>& pod) {
  ObjectReader c(container, path);
  const Json* resources = c.optional_object("resources");
  if (!c.ok()) return c.status();
  if (!resources) return ok_status();
  ObjectReader r(*resources, c.field_path("resources"));
  const Json* requests = r.optional_value("requests");
  const Json* limits = r.optional_value("limits");
  if (!r.ok()) return r.status();
  ResourceList req, lim;
  GF_RETURN_IF_ERROR(read_resource_list(requests, r.field_path("requests"), registry, req));
  GF_RETURN_IF_ERROR(read_resource_list(limits, r.field_path("limits"), registry, lim));
  GF_RETURN_IF_ERROR(default_requests_from_limits(lim, r.field_path("requests"), req));
  return add_to_pod(req, registry, containers_path, pod);
}

// The pod's requests: a resource one container names keeps its value as written, a summed one
// is formatted. The pod must request some cpu, memory or GPU to be placeable.
Result<Json> pod_requests_json(const std::map<std::string, PodResource>& pod,
                               const std::string& containers_path) {
  Json out = Json::object();
  bool placeable = false;
  for (const auto& [name, p] : pod) {
    out[name] = p.contributors == 1 ? p.written : Json(format_quantity(p.total, p.scale));
    if ((name == "cpu" || name == "memory" || name == "nvidia.com/gpu") && p.total > 0) {
      placeable = true;
    }
  }
  if (!placeable) {
    return validation_error(
        containers_path +
        (pod.empty() ? ": no resource requests or limits (gpufleet needs them to place the pod)"
                     : ": no cpu, memory or nvidia.com/gpu request or limit (gpufleet needs "
                       "them to place the pod)"));
  }
  return out;
}

// The effective requests of one pod of `template_json` (the sum over its containers).
Result<Json> pod_requests(const Json& template_json, const std::string& path) {
  ObjectReader t(template_json, path);
  const Json* spec = t.required_value("spec");
  if (!t.ok()) return t.status();
  ObjectReader ps(*spec, t.field_path("spec"));
  const Json* containers = ps.optional_array("containers");
  if (ps.ok() && (!containers || containers->empty())) {
    ps.fail("containers", "is required: a pod template needs at least one container");
  }
  if (!ps.ok()) return ps.status();
  const std::string containers_path = ps.field_path("containers");

  ResourceRegistry registry;  // validates names and knows each resource's scale
  std::map<std::string, PodResource> pod;
  for (size_t i = 0; i < containers->size(); ++i) {
    GF_RETURN_IF_ERROR(add_container((*containers)[i], path_index(containers_path, i),
                                     containers_path, registry, pod));
  }
  return pod_requests_json(pod, containers_path);
}

Result<ReplicaSpec> parse_replica(const Json& value, std::string_view type,
                                  std::vector<std::string>& warnings) {
  const std::string path = path_join(kReplicaSpecs, type);
  ObjectReader r(value, path);
  ReplicaSpec rs;
  rs.type = std::string(type);
  const std::optional<int64_t> replicas = r.optional_int("replicas");
  if (r.ok() && type == kMaster && replicas.value_or(1) != 1) {
    r.fail("replicas", fmt::format("must be 1, got {}", *replicas));
  }
  if (r.ok() && replicas && (*replicas < 0 || *replicas > std::numeric_limits<int32_t>::max())) {
    r.fail("replicas", fmt::format("must be between 0 and {}, got {}",
                                   std::numeric_limits<int32_t>::max(), *replicas));
  }
  rs.replicas = static_cast<int32_t>(replicas.value_or(1));
  if (auto policy = r.optional_string("restartPolicy")) {
    if (auto p = parse_restart_policy(*policy)) {
      rs.restart = *p;
    } else {
      r.fail("restartPolicy", in_quotes(*policy) +
                                  " is not a restart policy (expected Always, OnFailure, Never "
                                  "or ExitCode)");
    }
  }
  const Json* tmpl = r.required_value("template");
  if (!r.ok()) return r.status();
  GF_ASSIGN_OR_RETURN(rs.requests, pod_requests(*tmpl, r.field_path("template")));
  rs.template_ = *tmpl;
  if (tmpl->is_object() && tmpl->contains("metadata") && (*tmpl)["metadata"].is_object()) {
    const Json& meta = (*tmpl)["metadata"];
    const std::string meta_path = path_join(r.field_path("template"), "metadata");
    std::map<std::string, std::string> annotations;
    if (meta.contains("annotations")) {
      GF_RETURN_IF_ERROR(
          read_string_map(&meta["annotations"], path_join(meta_path, "annotations"), annotations));
    }
    GF_ASSIGN_OR_RETURN(rs.topology,
                        read_topology(annotations, path_join(meta_path, "annotations")));
  }
  note_unknown(r, warnings);
  return rs;
}

// runPolicy, or the older top-level spec fields of the same names (runPolicy wins).
Status read_run_policy(ObjectReader& spec, PyTorchJob& job) {
  struct Fields {
    std::optional<int64_t> backoff, deadline, ttl;
    std::optional<std::string> clean;
  };
  auto read = [](ObjectReader& r, Fields& f) {
    f.backoff = r.optional_int("backoffLimit");
    if (r.ok() && f.backoff &&
        (*f.backoff < 0 || *f.backoff > std::numeric_limits<int32_t>::max())) {
      r.fail("backoffLimit", fmt::format("must be between 0 and {}, got {}",
                                         std::numeric_limits<int32_t>::max(), *f.backoff));
    }
    f.deadline = r.optional_int("activeDeadlineSeconds");
    if (r.ok() && f.deadline && (*f.deadline <= 0 || *f.deadline > kMaxSeconds)) {
      r.fail("activeDeadlineSeconds", fmt::format("must be > 0 and at most {} (100 years), got {}",
                                                  kMaxSeconds, *f.deadline));
    }
    f.ttl = r.optional_int("ttlSecondsAfterFinished");
    if (r.ok() && f.ttl && (*f.ttl < 0 || *f.ttl > kMaxSeconds)) {
      r.fail("ttlSecondsAfterFinished",
             fmt::format("must be between 0 and {} (100 years), got {}", kMaxSeconds, *f.ttl));
    }
    f.clean = r.optional_string("cleanPodPolicy");
    if (r.ok() && f.clean && *f.clean != "None" && *f.clean != "Running" && *f.clean != "All") {
      r.fail("cleanPodPolicy", in_quotes(*f.clean) + " is not one of None, Running, All");
    }
    return r.status();
  };
  Fields legacy, run;
  GF_RETURN_IF_ERROR(read(spec, legacy));
  const Json* rp = spec.optional_object("runPolicy");
  if (!spec.ok()) return spec.status();
  if (rp) {
    ObjectReader r(*rp, spec.field_path("runPolicy"));
    GF_RETURN_IF_ERROR(read(r, run));
    job.suspend = r.optional_bool("suspend").value_or(false);
    if (!r.ok()) return r.status();
    note_unknown(r, job.warnings);
  }
  if (auto c = run.clean ? run.clean : legacy.clean) job.clean_pod_policy = *c;
  if (auto b = run.backoff ? run.backoff : legacy.backoff) {
    job.backoff_limit = static_cast<int32_t>(*b);
  }
  job.active_deadline_seconds = run.deadline ? run.deadline : legacy.deadline;
  job.ttl_seconds_after_finished = run.ttl ? run.ttl : legacy.ttl;
  return ok_status();
}

}  // namespace

std::string_view to_string(RestartPolicy p) {
  for (const auto& [v, name] : kRestartPolicies) {
    if (v == p) return name;
  }
  return "OnFailure";
}

std::optional<RestartPolicy> parse_restart_policy(std::string_view s) {
  for (const auto& [v, name] : kRestartPolicies) {
    if (name == s) return v;
  }
  return std::nullopt;
}

bool is_pytorchjob(std::string_view api_version, std::string_view kind) {
  return api_version == kPyTorchJobApiVersion && kind == kPyTorchJobKind;
}

Result<PyTorchJob> parse_pytorchjob(const Json& doc) {
  if (!doc.is_object()) {
    return validation_error("document: expected a Kubernetes object, got " +
                            describe_json_value(doc));
  }
  PyTorchJob job;
  job.doc = doc;
  ObjectReader top(doc, "");
  const std::string api_version = top.required_string("apiVersion");
  const std::string kind = top.required_string("kind");
  if (top.ok() && !is_pytorchjob(api_version, kind)) {
    top.fail("kind", api_version + " " + kind + " is not a PyTorchJob (expected " +
                         std::string(kPyTorchJobApiVersion) + " " + std::string(kPyTorchJobKind) +
                         ")");
  }
  if (!top.ok()) return top.status();
  GF_RETURN_IF_ERROR(read_metadata(top, job));
  top.optional_value("status");  // server-owned; accepted and ignored

  const Json* spec_json = top.required_value("spec");
  if (!top.ok()) return top.status();
  ObjectReader spec(*spec_json, "spec");
  const Json* replica_specs = spec.required_value("pytorchReplicaSpecs");
  if (spec.ok() && !replica_specs->is_object()) {
    spec.fail("pytorchReplicaSpecs", "expected an object with Master and Worker, got " +
                                         describe_json_value(*replica_specs));
  }
  if (!spec.ok()) return spec.status();
  bool have_master = false;
  for (auto it = replica_specs->begin(); it != replica_specs->end(); ++it) {
    if (it.key() != kMaster && it.key() != kWorker) {
      return validation_error(path_join(kReplicaSpecs, it.key()) + ": unknown replica type " +
                              in_quotes(it.key()) + " (a PyTorchJob has Master and Worker)");
    }
    if (it.value().is_null()) continue;
    GF_ASSIGN_OR_RETURN(ReplicaSpec rs, parse_replica(it.value(), it.key(), job.warnings));
    if (it.key() == kMaster) {
      job.master = std::move(rs);
      have_master = true;
    } else {
      job.worker = std::move(rs);
    }
  }
  if (!have_master) {
    return validation_error(path_join(kReplicaSpecs, kMaster) +
                            ": is required (a PyTorchJob has exactly one Master)");
  }
  GF_RETURN_IF_ERROR(read_run_policy(spec, job));
  note_unknown(spec, job.warnings);
  note_unknown(top, job.warnings);
  return job;
}

std::vector<JobPodSet> PyTorchJob::pod_sets() const {
  std::vector<JobPodSet> out;
  JobPodSet m;
  m.role = "master";
  m.count = 1;
  m.requests = master.requests;
  m.topology = master.topology ? master.topology : topology;
  out.push_back(std::move(m));
  if (worker_count() > 0) {
    JobPodSet w;
    w.role = "worker";
    w.count = worker->replicas;
    w.requests = worker->requests;
    w.topology = worker->topology ? worker->topology : topology;
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<PyTorchJob::Pod> PyTorchJob::pods() const {
  const std::string master_name = name + "-master-0";
  auto make = [&](const ReplicaSpec& rs, std::string role, int32_t index, int32_t rank) {
    Pod p;
    p.name = fmt::format("{}-{}-{}", name, role, index);
    p.role = role;
    p.index = index;
    // The template's own labels, then the operator's (which win).
    const Json& tmpl = rs.template_;
    if (tmpl.is_object() && tmpl.contains("metadata") && tmpl["metadata"].is_object() &&
        tmpl["metadata"].contains("labels") && tmpl["metadata"]["labels"].is_object()) {
      for (auto it = tmpl["metadata"]["labels"].begin(); it != tmpl["metadata"]["labels"].end();
           ++it) {
        if (it.value().is_string()) p.labels[it.key()] = it.value().get<std::string>();
      }
    }
    p.labels["training.kubeflow.org/replica-type"] = role;
    p.labels["training.kubeflow.org/replica-index"] = std::to_string(index);
    p.labels["pytorch-replica-index"] = std::to_string(index);
    p.labels["job-name"] = name;
    p.labels["training.kubeflow.org/job-name"] = name;
    p.env["MASTER_ADDR"] = master_name;
    p.env["MASTER_PORT"] = std::to_string(kMasterPort);
    p.env["WORLD_SIZE"] = std::to_string(world_size());
    p.env["RANK"] = std::to_string(rank);
    return p;
  };
  std::vector<Pod> out;
  out.push_back(make(master, "master", 0, 0));
  for (int32_t i = 0; i < worker_count(); ++i) out.push_back(make(*worker, "worker", i, i + 1));
  return out;
}

}  // namespace gf::workload
