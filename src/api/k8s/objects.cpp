#include "api/k8s/objects.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/door.h"
#include "api/k8s/status.h"
#include "core/label_selector.h"
#include "model/catalog.h"

namespace gf::k8s {
namespace {

HttpResponse not_served(const HttpRequest& req) {
  return status_response(404, "NotFound",
                         "the server could not find the requested resource (" + req.method + " " +
                             printable(req.path, 200) + ")");
}

// The journal position a read reflects: the published view's (inner calls answer from it).
std::string seq_of(Api& api) { return std::to_string(api.loop().view()->applied_seq); }

std::string objects_path(const KindInfo& k, const std::string& ns, const std::string& name) {
  std::string p = "/v1/objects/" + k.objects;
  if (k.namespaced) p += "/" + ns;
  return p + "/" + name;
}

// A PropagationPolicy belongs to the group its apiVersion names; both groups share one store.
bool in_group(const KindInfo& k, const Json& obj) {
  if (k.kind != "PropagationPolicy") return true;
  return obj.value("apiVersion", "").rfind(k.group + "/", 0) == 0;
}

Fetched failed(HttpResponse r, const Target& t) {
  Fetched f;
  to_status(r, Subject{t.kind, t.name});
  f.error = std::move(r);
  return f;
}

Fetched list_from_objects(Api& api, const HttpRequest& req, const Target& t) {
  const std::string rv = seq_of(api);  // before the read: never newer than what it saw
  door::Inner in{.path = "/v1/objects/" + t.kind->objects};
  if (t.kind->namespaced && !t.all_namespaces) in.query["namespace"] = t.ns;
  door::Answer a = door::call(api, req, std::move(in));
  if (!a.ok()) return failed(std::move(a.response), t);
  Fetched f;
  f.resource_version = rv;
  for (Json& item : a.body.value("items", Json::array())) {
    if (!in_group(*t.kind, item)) continue;
    f.items.push_back(std::move(item));
  }
  return f;
}

// Node status from a HyperPod node summary: Ready only while the instance is Running.
Json node_object(const Json& n, const std::string& cluster, const Catalog& catalog) {
  const std::string id = n.value("InstanceId", "");
  const std::string type = n.value("InstanceType", "");
  const std::string group = n.value("InstanceGroupName", "");
  const Json is = n.value("InstanceStatus", Json::object());
  const std::string status = is.value("Status", "");
  const std::string since = n.value("LaunchTime", "1970-01-01T00:00:00Z");
  const InstanceTypeInfo* info = catalog.find(type);
  const int gpus = info ? info->gpus : 0;
  const bool ready = status == "Running";
  Json capacity{{"cpu", std::to_string(info ? info->vcpus : 0)}, {"pods", "110"}};
  if (gpus > 0) capacity["nvidia.com/gpu"] = std::to_string(gpus);
  // The node's own labels (its network topology, docs/scheduling.md "Topology"), then the
  // door's, which win.
  Json labels = Json::object();
  if (auto own = n.find("Labels"); own != n.end() && own->is_object()) {
    for (auto it = own->begin(); it != own->end(); ++it) {
      if (it.value().is_string()) labels[it.key()] = it.value();
    }
  }
  labels["gpufleet.io/cluster"] = cluster;
  labels["gpufleet.io/instance-group"] = group;
  labels["node.kubernetes.io/instance-type"] = type;
  labels["kubernetes.io/hostname"] = id;
  labels["kubernetes.io/os"] = "linux";
  labels["kubernetes.io/arch"] = "amd64";
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", id},
        {"uid", "node-" + id},
        {"creationTimestamp", since},
        {"labels", std::move(labels)}}},
      {"spec",
       {{"unschedulable", n.value("Cordoned", false)},
        {"providerID", "gpufleet://" + cluster + "/" + id}}},
      {"status",
       {{"capacity", capacity},
        {"allocatable", capacity},
        {"conditions", Json::array({{{"type", "Ready"},
                                     {"status", ready ? "True" : "False"},
                                     {"reason", ready ? "InstanceRunning" : "Instance" + status},
                                     {"message", is.value("Message", "instance status " + status)},
                                     {"lastHeartbeatTime", since},
                                     {"lastTransitionTime", since}}})},
        {"addresses", Json::array({{{"type", "Hostname"}, {"address", id}}})},
        {"nodeInfo",
         {{"architecture", "amd64"},
          {"bootID", ""},
          {"containerRuntimeVersion", "gpufleet://" GPUFLEET_VERSION},
          {"kernelVersion", ""},
          {"kubeProxyVersion", ""},
          {"kubeletVersion", "gpufleet-" GPUFLEET_VERSION},
          {"machineID", id},
          {"operatingSystem", "linux"},
          {"osImage", type},
          {"systemUUID", id}}}}}};
}

Fetched list_nodes(Api& api, const HttpRequest& req, const Target& t) {
  const std::string rv = seq_of(api);  // before the read: never newer than what it saw
  door::Answer clusters = door::call(api, req, door::Inner{.path = "/v1/clusters"});
  if (!clusters.ok()) return failed(std::move(clusters.response), t);
  Fetched f;
  f.resource_version = rv;
  for (const Json& c : clusters.body.value("ClusterSummaries", Json::array())) {
    const std::string name = c.value("ClusterName", "");
    door::Answer nodes =
        door::call(api, req, door::Inner{.path = "/v1/clusters/" + name + "/nodes"});
    if (nodes.response.status == 404) continue;  // deleted between the two reads
    if (!nodes.ok()) return failed(std::move(nodes.response), t);
    for (const Json& n : nodes.body.value("ClusterNodeSummaries", Json::array()))
      f.items.push_back(node_object(n, name, *api.clusters().catalog));
  }
  return f;
}

Fetched list_namespaces(Api& api, const HttpRequest& req, const Target& t) {
  const std::string rv = seq_of(api);  // before the read: never newer than what it saw
  std::set<std::string> names = {"default", "kube-queue", "kube-system"};
  Fetched f;
  for (const char* family :
       {"pytorchjobs", "propagationpolicies", "localqueues", "elasticquotatrees"}) {
    door::Answer a =
        door::call(api, req, door::Inner{.path = std::string("/v1/objects/") + family});
    if (!a.ok()) return failed(std::move(a.response), t);
    f.resource_version = rv;
    for (const Json& item : a.body.value("items", Json::array())) {
      if (item.contains("metadata") && item["metadata"].is_object())
        names.insert(item["metadata"].value("namespace", "default"));
    }
  }
  for (const std::string& n : names) {
    f.items.push_back({{"apiVersion", "v1"},
                       {"kind", "Namespace"},
                       {"metadata", {{"name", n}, {"uid", "ns-" + n}}},
                       {"spec", {{"finalizers", Json::array({"kubernetes"})}}},
                       {"status", {{"phase", "Active"}}}});
  }
  return f;
}

// A PyTorchJob's events (GET /v1/objects/pytorchjobs/{ns}/{name}?describe=true) as core/v1 Events.
Status job_events(Api& api, const HttpRequest& req, const std::string& ns, const std::string& job,
                  Fetched& f) {
  const std::string rv = seq_of(api);  // before the read: never newer than what it saw
  door::Answer a = door::call(api, req,
                              door::Inner{.path = "/v1/objects/pytorchjobs/" + ns + "/" + job,
                                          .query = {{"describe", "true"}}});
  if (a.response.status == 404) return ok_status();
  if (!a.ok()) return Status(ErrorCode::kInternal, a.response.body);
  f.resource_version = rv;
  const Json meta = a.body.value("metadata", Json::object());
  size_t i = 0;
  for (const Json& e : a.body.value("events", Json::array())) {
    const std::string at = e.value("time", "");
    f.items.push_back({{"apiVersion", "v1"},
                       {"kind", "Event"},
                       {"metadata",
                        {{"name", fmt::format("{}.{}", job, i)},
                         {"namespace", ns},
                         {"uid", fmt::format("{}-e{}", meta.value("uid", job), i)},
                         {"creationTimestamp", at}}},
                       {"involvedObject",
                        {{"apiVersion", "kubeflow.org/v1"},
                         {"kind", "PyTorchJob"},
                         {"namespace", ns},
                         {"name", job},
                         {"uid", meta.value("uid", "")}}},
                       {"reason", e.value("reason", "")},
                       {"message", e.value("message", "")},
                       {"type", e.value("type", "Normal")},
                       {"count", 1},
                       {"firstTimestamp", at},
                       {"lastTimestamp", at},
                       {"source", {{"component", e.value("from", "gpufleet")}}},
                       {"reportingComponent", e.value("from", "gpufleet")}});
    ++i;
  }
  return ok_status();
}

// Events of the jobs the field selector names (involvedObject.name), else of every job there.
Fetched list_events(Api& api, const HttpRequest& req, const Target& t) {
  std::string only;
  const std::string selector = req.query_or("fieldSelector", "");
  for (size_t at = 0; at <= selector.size();) {
    size_t comma = selector.find(',', at);
    if (comma == std::string::npos) comma = selector.size();
    const std::string term = selector.substr(at, comma - at);
    if (term.rfind("involvedObject.name=", 0) == 0) only = term.substr(20);
    at = comma + 1;
  }
  std::vector<std::pair<std::string, std::string>> jobs;
  Fetched f;
  if (!only.empty() && !t.all_namespaces) {
    jobs.emplace_back(t.ns, only);
  } else {
    Target jt = t;
    jt.kind = find_kind("kubeflow.org", "v1", "pytorchjobs");
    Fetched all = list_from_objects(api, req, jt);
    if (all.error) return all;
    for (const Json& j : all.items) {
      const Json m = j.value("metadata", Json::object());
      jobs.emplace_back(m.value("namespace", "default"), m.value("name", ""));
    }
    f.resource_version = all.resource_version;
  }
  for (const auto& [ns, name] : jobs) {
    if (Status st = job_events(api, req, ns, name, f); !st.ok())
      return failed(error_response(st), t);
  }
  return f;
}

struct FieldTerm {
  std::string key;
  std::string value;
  bool equal = true;
};

std::string field_value(const KindInfo& k, const Json& o, const std::string& key) {
  const Json meta = o.value("metadata", Json::object());
  if (key == "metadata.name") return meta.value("name", "");
  if (key == "metadata.namespace") return meta.value("namespace", "");
  if (k.kind == "Event") {
    const Json inv = o.value("involvedObject", Json::object());
    if (key.rfind("involvedObject.", 0) == 0) return inv.value(key.substr(15), "");
    if (key == "type" || key == "reason") return o.value(key, "");
  }
  if (k.kind == "Pod") {
    if (key == "spec.nodeName") return o.value("spec", Json::object()).value("nodeName", "");
    if (key == "status.phase") return o.value("status", Json::object()).value("phase", "");
  }
  return {};
}

bool field_supported(const KindInfo& k, const std::string& key) {
  if (key == "metadata.name" || key == "metadata.namespace") return true;
  if (k.kind == "Event") {
    return key == "type" || key == "reason" || key == "involvedObject.name" ||
           key == "involvedObject.namespace" || key == "involvedObject.kind" ||
           key == "involvedObject.uid" || key == "involvedObject.apiVersion";
  }
  return k.kind == "Pod" && (key == "spec.nodeName" || key == "status.phase");
}

Result<std::vector<FieldTerm>> parse_field_selector(const KindInfo& k, const std::string& text) {
  std::vector<FieldTerm> out;
  for (size_t at = 0; at < text.size();) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string term = text.substr(at, comma - at);
    at = comma + 1;
    if (term.empty()) continue;
    FieldTerm t;
    size_t op = term.find("!=");
    size_t len = 2;
    if (op != std::string::npos) {
      t.equal = false;
    } else if ((op = term.find("==")) == std::string::npos) {
      op = term.find('=');
      len = 1;
    }
    if (op == std::string::npos || op == 0)
      return validation_error("fieldSelector: invalid selector \"" + printable(term, 80) + "\"");
    t.key = term.substr(0, op);
    t.value = term.substr(op + len);
    if (!field_supported(k, t.key))
      return validation_error("fieldSelector: field label not supported: " + printable(t.key, 80));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::optional<HttpResponse> parse_target(const HttpRequest& req, Target& out) {
  std::vector<std::string> seg;
  for (size_t i = 1; i <= req.path.size();) {
    size_t j = req.path.find('/', i);
    if (j == std::string::npos) j = req.path.size();
    seg.push_back(req.path.substr(i, j - i));
    i = j + 1;
  }
  std::string group, version;
  size_t at = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    version = seg[1];
    at = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
    at = 3;
  } else {
    return not_served(req);
  }
  std::vector<std::string> rest(seg.begin() + static_cast<long>(at), seg.end());
  // namespaces/{ns}/{plural}[/{name}[/{sub}]] — but namespaces/{name} is a Namespace itself.
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    out.ns = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  } else {
    out.all_namespaces = true;
  }
  if (rest.empty() || rest.size() > 3) return not_served(req);
  out.kind = find_kind(group, version, rest[0]);
  if (out.kind == nullptr) return not_served(req);
  if (!out.kind->namespaced && !out.ns.empty()) return not_served(req);
  if (rest.size() >= 2) {
    out.name = rest[1];
    if (out.kind->namespaced && out.all_namespaces) return not_served(req);
  }
  if (rest.size() == 3) {
    out.sub = rest[2];
    const bool ok =
        (out.sub == "status" && out.kind->status) || (out.sub == "log" && out.kind->log);
    if (!ok) return not_served(req);
  }
  if (!out.kind->namespaced) out.all_namespaces = false;
  return std::nullopt;
}

void complete(Json& obj, const KindInfo& k, const std::string& rv) {
  if (!obj.is_object()) return;
  obj["apiVersion"] = k.group_version();
  obj["kind"] = k.kind;
  Json& m = obj["metadata"];
  if (!m.is_object()) m = Json::object();
  if (k.namespaced && !m.contains("namespace")) m["namespace"] = "default";
  if (!m.contains("uid")) {
    m["uid"] = fmt::format("{}-{}-{}", k.singular, m.value("namespace", ""), m.value("name", ""));
  }
  if (!m.contains("creationTimestamp")) m["creationTimestamp"] = nullptr;
  m["resourceVersion"] = rv;
  if (!m.contains("generation") && k.source == Source::kObjects && k.kind != "Pod")
    m["generation"] = 1;
  if (obj.contains("status") && obj["status"].is_object() && obj["status"].contains("conditions") &&
      obj["status"]["conditions"].is_array()) {
    for (Json& c : obj["status"]["conditions"]) {
      if (c.is_object() && !c.contains("observedGeneration"))
        c["observedGeneration"] = m.value("generation", 1);
    }
  }
}

Fetched list_objects(Api& api, const HttpRequest& req, const Target& t) {
  Fetched f;
  switch (t.kind->source) {
    case Source::kObjects:
      f = list_from_objects(api, req, t);
      break;
    case Source::kNodes:
      f = list_nodes(api, req, t);
      break;
    case Source::kNamespaces:
      f = list_namespaces(api, req, t);
      break;
    case Source::kEvents:
      f = list_events(api, req, t);
      break;
  }
  for (Json& item : f.items) complete(item, *t.kind, f.resource_version);
  return f;
}

Fetched get_object(Api& api, const HttpRequest& req, const Target& t) {
  const std::string rv = seq_of(api);  // before the read: never newer than what it saw
  if (t.kind->source == Source::kObjects) {
    door::Answer a = door::call(api, req, door::Inner{.path = objects_path(*t.kind, t.ns, t.name)});
    if (!a.ok() || !in_group(*t.kind, a.body)) {
      if (a.ok()) a.response = error_response(not_found_error(t.name));
      return failed(std::move(a.response), t);
    }
    Fetched f;
    f.resource_version = rv;
    f.items.push_back(std::move(a.body));
    complete(f.items.back(), *t.kind, f.resource_version);
    return f;
  }
  // Nodes, namespaces and events: the one of that name in the list.
  Fetched all = list_objects(api, req, t);
  if (all.error) return all;
  Fetched f;
  f.resource_version = all.resource_version;
  for (Json& item : all.items) {
    if (item["metadata"].value("name", "") == t.name) f.items.push_back(std::move(item));
  }
  if (f.items.empty()) return failed(error_response(not_found_error(t.name)), t);
  return f;
}

Result<std::vector<Json>> select(const HttpRequest& req, const KindInfo& k,
                                 std::vector<Json> items) {
  auto labels = LabelSelector::parse(req.query_or("labelSelector", ""));
  if (!labels.ok()) return labels.status().with_prefix("labelSelector");
  GF_ASSIGN_OR_RETURN(auto fields, parse_field_selector(k, req.query_or("fieldSelector", "")));
  std::vector<Json> out;
  for (Json& o : items) {
    if (!labels->matches(o.value("metadata", Json::object()).value("labels", Json::object())))
      continue;
    bool keep = true;
    for (const FieldTerm& ft : fields)
      keep = keep && ((field_value(k, o, ft.key) == ft.value) == ft.equal);
    if (keep) out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gf::k8s
