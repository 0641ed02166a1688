#include "workload/pod_spec.h"

#include <fmt/format.h>

#include <map>

#include "core/hash.h"
#include "core/quantity.h"
#include "workload/pytorchjob.h"

namespace gf::workload {

namespace {

constexpr int64_t kGracePeriodSeconds = 30;  // Kubernetes' terminationGracePeriodSeconds default

// An ordered environment where a later name replaces an earlier one in place.
class Env {
 public:
  void set(const std::string& name, std::string value) {
    auto it = at_.find(name);
    if (it != at_.end()) {
      vars_[it->second].second = std::move(value);
      return;
    }
    at_[name] = vars_.size();
    vars_.emplace_back(name, std::move(value));
  }
  Json to_json() const {
    Json out = Json::array();
    for (const auto& [k, v] : vars_) out.push_back(Json{{"Name", k}, {"Value", v}});
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
  std::map<std::string, size_t> at_;
};

struct PodIdentity {
  std::string name;
  std::string role;  // pod set role
  int32_t role_index = 0;
  const JobPodSet* set = nullptr;
};

Result<PodIdentity> identify(const Job& job, size_t index) {
  size_t i = 0;
  for (const JobPodSet& ps : job.pod_sets) {
    for (int32_t k = 0; k < ps.count; ++k, ++i) {
      if (i == index)
        return PodIdentity{fmt::format("{}-{}-{}", job.name, ps.role, k), ps.role, k, &ps};
    }
  }
  return internal_error(fmt::format("job {} has no pod {}", job.id, index));
}

// "metadata.labels['k']" -> "k" when `path` has that form with `prefix`.
std::optional<std::string> bracket_key(const std::string& path, std::string_view prefix) {
  if (path.rfind(prefix, 0) != 0) return std::nullopt;
  std::string_view rest = std::string_view(path).substr(prefix.size());
  if (rest.size() < 4 || rest.front() != '[' || rest.back() != ']') return std::nullopt;
  rest = rest.substr(1, rest.size() - 2);
  if (rest.size() >= 2 && (rest.front() == '\'' || rest.front() == '"') &&
      rest.back() == rest.front())
    return std::string(rest.substr(1, rest.size() - 2));
  return std::nullopt;
}

struct FieldContext {
  const std::string& pod;
  const std::string& ns;
  const std::map<std::string, std::string>& labels;
  const Json& annotations;
  const PodPlacement& where;
};

// A valueFrom.fieldRef path of the downward API; nullopt when it names nothing we know.
std::optional<std::string> field_value(const std::string& path, const FieldContext& c) {
  if (path == "metadata.name") return c.pod;
  if (path == "metadata.namespace") return c.ns;
  if (path == "spec.nodeName") return c.where.node;
  if (path == "status.podIP" || path == "status.hostIP") return c.where.node_address;
  if (auto key = bracket_key(path, "metadata.labels")) {
    auto it = c.labels.find(*key);
    return it == c.labels.end() ? std::string() : it->second;
  }
  if (auto key = bracket_key(path, "metadata.annotations")) {
    if (c.annotations.is_object() && c.annotations.contains(*key) &&
        c.annotations[*key].is_string())
      return c.annotations[*key].get<std::string>();
    return std::string();
  }
  return std::nullopt;
}

// Field `key` of `j` when `j` is an object and the field is of the kind of `fallback` (array,
// object; null: any kind), else `fallback`. A job's manifest is kept as submitted: what a pod runs
// is read from it without ever throwing on a field of another type.
Json field_or(const Json& j, std::string_view key, Json fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || (!fallback.is_null() && it->type() != fallback.type())) return fallback;
  return *it;
}

// A string field of `j`, or `fallback` when absent or not a string.
std::string text_or(const Json& j, std::string_view key, std::string fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<std::string> strings_of(const Json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const Json& v : j) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

// One container of a pod template, its env resolved on top of `base`.
Json container_spec(const Json& c, const Env& base, const FieldContext& ctx, Json& warnings) {
  Env env = base;
  for (const Json& e : field_or(c, "env", Json::array())) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
    const std::string name = e["name"].get<std::string>();
    if (e.contains("value")) {
      env.set(name, e["value"].is_string() ? e["value"].get<std::string>() : e["value"].dump());
      continue;
    }
    const Json& from = field_or(e, "valueFrom", Json::object());
    std::optional<std::string> v;
    if (from.is_object() && from.contains("fieldRef") && from["fieldRef"].is_object())
      v = field_value(text_or(from["fieldRef"], "fieldPath"), ctx);
    if (!v) {
      warnings.push_back(fmt::format(
          "env {}: only value and valueFrom.fieldRef are resolved here (no secrets, config maps "
          "or resource fields); it is empty",
          name));
    }
    env.set(name, v.value_or(""));
  }
  Json limits = Json::object();
  const Json& res = field_or(c, "resources", Json::object());
  if (res.is_object() && res.contains("limits") && res["limits"].is_object())
    limits = res["limits"];
  return Json{{"Name", text_or(c, "name", "main")},
              {"Image", text_or(c, "image")},
              {"Command", strings_of(field_or(c, "command", Json::array()))},
              {"Args", strings_of(field_or(c, "args", Json::array()))},
              {"WorkingDir", text_or(c, "workingDir")},
              {"Env", env.to_json()},
              {"Limits", limits}};
}

// The operator's variables for one PyTorchJob pod, on the node `where`.
Env pytorch_env(const Job& job, const PyTorchJob::Pod& pod, const PyTorchJob& p,
                const PodPlacement& where) {
  Env env;
  const std::string port = std::to_string(master_port(job));
  env.set("PYTHONUNBUFFERED", "0");
  env.set("MASTER_ADDR", where.master_address);
  env.set("MASTER_PORT", port);
  env.set("WORLD_SIZE", std::to_string(p.world_size()));
  env.set("RANK", pod.env.at("RANK"));
  env.set("PET_NNODES", std::to_string(p.world_size()));
  env.set("PET_NODE_RANK", pod.env.at("RANK"));
  std::string nproc = "auto";
  if (p.doc.is_object() && p.doc.contains("spec") && p.doc["spec"].is_object()) {
    const Json& n = field_or(p.doc["spec"], "nprocPerNode", Json());
    if (n.is_string()) nproc = n.get<std::string>();
    if (n.is_number_integer()) nproc = std::to_string(n.get<int64_t>());
  }
  env.set("PET_NPROC_PER_NODE", nproc);
  env.set("PET_MASTER_ADDR", where.master_address);
  env.set("PET_MASTER_PORT", port);
  return env;
}

std::string gpu_list(const std::vector<int32_t>& gpus) {
  std::string out;
  for (int32_t g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

Result<Json> pytorch_pod_spec(const Job& job, const PodIdentity& id, const PodPlacement& where) {
  GF_ASSIGN_OR_RETURN(PyTorchJob p, parse_pytorchjob(job.request));
  const std::vector<PyTorchJob::Pod> pods = p.pods();
  const PyTorchJob::Pod* pod = nullptr;
  for (const auto& candidate : pods) {
    if (candidate.name == id.name) pod = &candidate;
  }
  if (pod == nullptr) return internal_error("no pod " + id.name + " in PyTorchJob " + p.name);
  const ReplicaSpec& rs = pod->role == "master" ? p.master : *p.worker;
  Env env = pytorch_env(job, *pod, p, where);
  if (!where.gpus.empty()) env.set("NVIDIA_VISIBLE_DEVICES", gpu_list(where.gpus));
  const Json& tmpl = rs.template_;
  const Json& spec = tmpl.is_object() ? field_or(tmpl, "spec", Json::object()) : Json::object();
  const Json annotations =
      tmpl.is_object() && tmpl.contains("metadata") && tmpl["metadata"].is_object()
          ? field_or(tmpl["metadata"], "annotations", Json::object())
          : Json::object();
  const FieldContext ctx{pod->name, p.ns, pod->labels, annotations, where};
  Json warnings = Json::array();
  Json containers = Json::array();
  for (const Json& c : field_or(spec, "containers", Json::array())) {
    if (c.is_object()) containers.push_back(container_spec(c, env, ctx, warnings));
  }
  int64_t grace = kGracePeriodSeconds;
  if (spec.contains("terminationGracePeriodSeconds") &&
      spec["terminationGracePeriodSeconds"].is_number_integer())
    grace = std::max<int64_t>(0, spec["terminationGracePeriodSeconds"].get<int64_t>());
  return Json{{"Name", pod->name},
              {"Namespace", p.ns},
              {"Role", pod->role},
              {"Index", pod->index},
              {"RestartPolicy", std::string(to_string(rs.restart))},
              {"GracePeriodSeconds", grace},
              {"Labels", pod->labels},
              {"Containers", std::move(containers)},
              {"Warnings", std::move(warnings)}};
}

// A service job: the payload's entrypoint, or a sleep for its duration.
Json service_pod_spec(const Job& job, const PodIdentity& id, const PodPlacement& where) {
  Json payload =
      job.request.is_object() ? field_or(job.request, "serviceRequestPayload", Json()) : Json();
  if (payload.is_string()) {
    auto parsed = parse_json(payload.get<std::string>());
    payload = parsed.ok() ? *parsed : Json();
  }
  Env env;
  if (!where.gpus.empty()) env.set("NVIDIA_VISIBLE_DEVICES", gpu_list(where.gpus));
  std::vector<std::string> command, args;
  std::string image;
  if (payload.is_object()) {
    const Json& algo = field_or(payload, "AlgorithmSpecification", Json::object());
    if (algo.is_object()) {
      command = strings_of(field_or(algo, "ContainerEntrypoint", Json::array()));
      args = strings_of(field_or(algo, "ContainerArguments", Json::array()));
      image = text_or(algo, "TrainingImage");
    }
    const Json& vars = field_or(payload, "Environment", Json::object());
    if (vars.is_object()) {
      for (auto it = vars.begin(); it != vars.end(); ++it)
        env.set(it.key(),
                it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
  }
  if (command.empty()) {
    const int64_t secs = job.duration ? job.duration->count() / 1'000'000 : -1;
    command = {"sleep", secs >= 0 ? std::to_string(secs) : "infinity"};
    args.clear();
  }
  Json container{
      {"Name", "main"},   {"Image", image},       {"Command", command},      {"Args", args},
      {"WorkingDir", ""}, {"Env", env.to_json()}, {"Limits", Json::object()}};
  return Json{{"Name", id.name},          {"Namespace", job.ns},
              {"Role", id.role},          {"Index", id.role_index},
              {"RestartPolicy", "Never"}, {"GracePeriodSeconds", kGracePeriodSeconds},
              {"Labels", Json::object()}, {"Containers", Json::array({std::move(container)})},
              {"Warnings", Json::array()}};
}

}  // namespace

int64_t pod_gpus(const JobPodSet& set, int32_t node_gpus) {
  if (set.whole_node) return node_gpus;
  if (!set.requests.is_object() || !set.requests.contains("nvidia.com/gpu")) return 0;
  auto q = parse_quantity_json(set.requests.at("nvidia.com/gpu"), QuantityScale::kUnit);
  return q.ok() ? *q : 0;
}

int32_t master_port(const Job& job) {
  if (job.kind == "PyTorchJob" && job.request.is_object()) {
    auto p = parse_pytorchjob(job.request);
    if (p.ok()) {
      const Json& tmpl = p->master.template_;
      const Json& spec = tmpl.is_object() ? field_or(tmpl, "spec", Json::object()) : Json::object();
      for (const Json& c : field_or(spec, "containers", Json::array())) {
        if (!c.is_object()) continue;
        for (const Json& port : field_or(c, "ports", Json::array())) {
          if (port.is_object() && text_or(port, "name") == "pytorchjob-port" &&
              port.contains("containerPort") && port["containerPort"].is_number_integer()) {
            const int64_t n = port["containerPort"].get<int64_t>();
            if (n >= 1 && n <= 65535) return static_cast<int32_t>(n);
          }
        }
      }
    }
  }
  return 20000 + static_cast<int32_t>(fnv1a(job.id) % 20000);
}

Result<Json> pod_spec(const Job& job, const PodPlacement& where) {
  GF_ASSIGN_OR_RETURN(PodIdentity id, identify(job, where.index));
  Json spec;
  if (job.kind == "PyTorchJob") {
    GF_ASSIGN_OR_RETURN(spec, pytorch_pod_spec(job, id, where));
  } else {
    spec = service_pod_spec(job, id, where);
  }
  spec["JobId"] = job.id;
  spec["JobName"] = job.name;
  spec["Placement"] = where.placement;
  spec["Node"] = where.node;
  spec["Gpus"] = where.gpus;
  return spec;
}

}  // namespace gf::workload
