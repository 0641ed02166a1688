#include "api/k8s/table.h"

#include <fmt/format.h>

namespace gf::k8s {
namespace {

std::string age_of(const Json& when, Time now) {
  if (!when.is_string()) return "<unknown>";
  auto t = parse_iso8601(when.get<std::string>());
  if (!t.ok()) return "<unknown>";
  return human_age(now - *t);
}

std::string path_string(const Json& obj, std::initializer_list<const char*> path,
                        const std::string& fallback = "<none>") {
  const Json* at = &obj;
  for (const char* p : path) {
    if (!at->is_object() || !at->contains(p)) return fallback;
    at = &(*at)[p];
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_number_integer()) return std::to_string(at->get<int64_t>());
  return fallback;
}

int64_t path_int(const Json& obj, std::initializer_list<const char*> path) {
  const Json* at = &obj;
  for (const char* p : path) {
    if (!at->is_object() || !at->contains(p)) return 0;
    at = &(*at)[p];
  }
  return at->is_number_integer() ? at->get<int64_t>() : 0;
}

// The GPUs of a PyTorchJob's whole gang: replicas × the nvidia.com/gpu limit of each container.
int64_t gang_gpus(const Json& job) {
  int64_t total = 0;
  const Json specs = job.value("spec", Json::object()).value("pytorchReplicaSpecs", Json::object());
  for (auto it = specs.begin(); it != specs.end(); ++it) {
    const int64_t replicas = it->value("replicas", int64_t{1});
    const Json containers = it->value("template", Json::object())
                                .value("spec", Json::object())
                                .value("containers", Json::array());
    for (const Json& c : containers) {
      const Json limits = c.value("resources", Json::object()).value("limits", Json::object());
      const Json gpu = limits.value("nvidia.com/gpu", Json());
      int64_t n = gpu.is_number_integer() ? gpu.get<int64_t>() : 0;
      if (gpu.is_string()) n = std::atoll(gpu.get<std::string>().c_str());
      total += replicas * n;
    }
  }
  return total;
}

std::string job_state(const Json& job) {
  const Json conds = job.value("status", Json::object()).value("conditions", Json::array());
  for (auto it = conds.rbegin(); it != conds.rend(); ++it) {
    if (it->value("status", "") == "True" && it->value("type", "") != "Queued")
      return it->value("type", "");
  }
  return path_string(job, {"status", "state"}, "");
}

std::string job_cluster(const Json& job) {
  const Json members = job.value("status", Json::object()).value("members", Json::array());
  std::string out;
  for (const Json& m : members) {
    const std::string c = m.is_object() ? m.value("cluster", "") : "";
    if (!c.empty()) out += (out.empty() ? "" : ",") + c;
  }
  return out.empty() ? "<none>" : out;
}

std::string first_address(const Json& n) {
  const Json a = n.value("status", Json::object()).value("addresses", Json::array());
  return a.empty() ? "<none>" : a[0].value("address", "<none>");
}

Json node_status(const Json& n) {
  std::string s = "Unknown";
  for (const Json& c : n.value("status", Json::object()).value("conditions", Json::array())) {
    if (c.value("type", "") == "Ready") s = c.value("status", "") == "True" ? "Ready" : "NotReady";
  }
  if (n.value("spec", Json::object()).value("unschedulable", false)) s += ",SchedulingDisabled";
  return s;
}

Json pod_cells(const Json& p, Time now) {
  const std::string phase = path_string(p, {"status", "phase"}, "Unknown");
  int64_t restarts = 0, ready = 0, total = 0;
  const Json st = p.value("status", Json::object());
  for (const Json& c : st.value("containerStatuses", Json::array())) {
    ++total;
    ready += c.value("ready", false) ? 1 : 0;
    restarts += c.value("restartCount", int64_t{0});
  }
  if (total == 0) {
    total = static_cast<int64_t>(
        p.value("spec", Json::object()).value("containers", Json::array()).size());
    ready = phase == "Running" ? total : 0;
    restarts = path_int(p, {"status", "restartCount"});
  }
  return Json::array({path_string(p, {"metadata", "name"}), fmt::format("{}/{}", ready, total),
                      phase, restarts,
                      age_of(p["metadata"].value("creationTimestamp", Json()), now),
                      path_string(p, {"status", "podIP"}), path_string(p, {"spec", "nodeName"}),
                      path_string(p, {"spec", "clusterName"})});
}

Json cells(const KindInfo& k, const Json& o, Time now) {
  const std::string name = path_string(o, {"metadata", "name"});
  const std::string age = age_of(o["metadata"].value("creationTimestamp", Json()), now);
  if (k.kind == "PyTorchJob") {
    std::string queue = path_string(o, {"metadata", "labels", "kueue.x-k8s.io/queue-name"}, "");
    if (queue.empty()) queue = path_string(o, {"status", "queue"});
    return Json::array({name, job_state(o), age, queue, job_cluster(o), gang_gpus(o)});
  }
  if (k.kind == "Pod") return pod_cells(o, now);
  if (k.kind == "Node") {
    const std::string group = path_string(o, {"metadata", "labels", "gpufleet.io/instance-group"});
    return Json::array({name, node_status(o), group, age,
                        path_string(o, {"status", "nodeInfo", "kubeletVersion"}), first_address(o),
                        path_string(o, {"metadata", "labels", "node.kubernetes.io/instance-type"}),
                        path_string(o, {"metadata", "labels", "gpufleet.io/cluster"}),
                        path_string(o, {"status", "capacity", "nvidia.com/gpu"}, "0")});
  }
  if (k.kind == "Namespace") return Json::array({name, "Active", age});
  if (k.kind == "Event") {
    const std::string object = fmt::format("{}/{}", path_string(o, {"involvedObject", "kind"}, ""),
                                           path_string(o, {"involvedObject", "name"}, ""));
    return Json::array({age_of(o.value("lastTimestamp", Json()), now), o.value("type", ""),
                        o.value("reason", ""), object, o.value("message", "")});
  }
  if (k.kind == "Queue") {
    return Json::array({name, age, path_string(o, {"spec", "quotaNode"}),
                        path_int(o, {"status", "admittedJobs"}),
                        path_int(o, {"status", "pendingJobs"})});
  }
  if (k.kind == "ClusterQueue") {
    std::string cohort = path_string(o, {"spec", "cohort"}, "");
    if (cohort.empty()) cohort = path_string(o, {"spec", "cohortName"}, "");
    return Json::array({name, cohort, path_int(o, {"status", "pendingWorkloads"}),
                        path_int(o, {"status", "admittedWorkloads"}), age});
  }
  if (k.kind == "LocalQueue") {
    return Json::array({name, path_string(o, {"spec", "clusterQueue"}, ""),
                        path_int(o, {"status", "pendingWorkloads"}),
                        path_int(o, {"status", "admittedWorkloads"}), age});
  }
  return Json::array({name, age});
}

}  // namespace

bool wants_table(const HttpRequest& req) {
  const std::string accept = req.header_or("accept", "");
  return accept.find("as=Table") != std::string::npos &&
         accept.find("g=meta.k8s.io") != std::string::npos;
}

Json table(const KindInfo& k, const std::vector<Json>& items, Time now, const std::string& rv,
           const std::string& continue_token, const std::string& include_object) {
  Json columns = Json::array();
  for (const Column& c : k.columns) {
    columns.push_back({{"name", c.name},
                       {"type", c.type},
                       {"format", c.format},
                       {"description", c.description},
                       {"priority", c.priority}});
  }
  Json rows = Json::array();
  for (const Json& o : items) {
    Json object;
    if (include_object == "Object") {
      object = o;
    } else if (include_object != "None") {
      object = {{"kind", "PartialObjectMetadata"},
                {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", o.value("metadata", Json::object())}};
    }
    Json row{{"cells", cells(k, o, now)}};
    if (!object.is_null()) row["object"] = std::move(object);
    rows.push_back(std::move(row));
  }
  Json meta{{"resourceVersion", rv}};
  if (!continue_token.empty()) meta["continue"] = continue_token;
  return Json{{"kind", "Table"},
              {"apiVersion", "meta.k8s.io/v1"},
              {"metadata", std::move(meta)},
              {"columnDefinitions", std::move(columns)},
              {"rows", std::move(rows)}};
}

std::string human_age(Duration d) {
  int64_t s = d.count() / 1'000'000;
  if (s < 0) s = 0;
  if (s < 120) return fmt::format("{}s", s);
  const int64_t m = s / 60, h = s / 3600, days = h / 24;
  if (m < 10) return s % 60 == 0 ? fmt::format("{}m", m) : fmt::format("{}m{}s", m, s % 60);
  if (m < 180) return fmt::format("{}m", m);
  if (h < 8) return m % 60 == 0 ? fmt::format("{}h", h) : fmt::format("{}h{}m", h, m % 60);
  if (h < 48) return fmt::format("{}h", h);
  if (h < 24 * 8)
    return h % 24 == 0 ? fmt::format("{}d", days) : fmt::format("{}d{}h", days, h % 24);
  if (days < 365 * 2) return fmt::format("{}d", days);
  if (days < 365 * 8) {
    const int64_t y = days / 365;
    return days % 365 == 0 ? fmt::format("{}y", y) : fmt::format("{}y{}d", y, days % 365);
  }
  return fmt::format("{}y", days / 365);
}

}  // namespace gf::k8s
