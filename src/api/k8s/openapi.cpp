// GET /openapi/v2 and /openapi/v3[/{api/v1|apis/g/v}] (docs/kubernetes.md "OpenAPI"): what
// `kubectl apply` needs to validate on the server (each writable kind's PATCH operation names its
// group-version-kind and takes `fieldValidation`, so kubectl sends `fieldValidation=Strict` and
// leaves validation to gpufleet's own parsers) and what `kubectl explain` prints (each kind's
// schema, with the fields gpufleet reads described).
#include <fmt/format.h>

#include "api/k8s/k8s.h"
#include "api/k8s/registry.h"
#include "api/k8s/status.h"

namespace gf::k8s {
namespace {

Json str(const std::string& description) {
  return Json{{"type", "string"}, {"description", description}};
}
Json integer(const std::string& description) {
  return Json{{"type", "integer"}, {"format", "int64"}, {"description", description}};
}
Json open_object(const std::string& description) {
  return Json{{"type", "object"},
              {"description", description},
              {"x-kubernetes-preserve-unknown-fields", true}};
}

Json metadata_schema() {
  return Json{
      {"type", "object"},
      {"description", "Standard object metadata."},
      {"properties",
       {{"name", str("The object's name, unique within its namespace (or the fleet).")},
        {"namespace", str("The namespace; default when absent.")},
        {"labels", Json{{"type", "object"},
                        {"description", "Labels; kueue.x-k8s.io/queue-name picks a LocalQueue."},
                        {"additionalProperties", {{"type", "string"}}}}},
        {"annotations", Json{{"type", "object"},
                             {"description", "Annotations, kept verbatim."},
                             {"additionalProperties", {{"type", "string"}}}}},
        {"uid", str("Set by gpufleet when the object is created.")},
        {"resourceVersion", str("The journal position this answer reflects.")},
        {"generation", integer("Changes of the spec (starts at 1).")},
        {"creationTimestamp", Json{{"type", "string"},
                                   {"format", "date-time"},
                                   {"description", "When gpufleet created the object."}}}}}};
}

Json pytorchjob_spec() {
  Json replica{{"type", "object"},
               {"description", "One replica type of the gang (Master or Worker)."},
               {"properties",
                {{"replicas",
                  integer("How many pods of this type; the gang is placed whole or not at all.")},
                 {"restartPolicy", str("Never, OnFailure, Always or ExitCode: whether a failed pod "
                                       "restarts the gang.")},
                 {"template", open_object("The pod template: containers with their resources "
                                          "(nvidia.com/gpu limits make the gang's GPUs).")}}}};
  Json run_policy{
      {"type", "object"},
      {"description", "How the job runs."},
      {"properties",
       {{"suspend", Json{{"type", "boolean"},
                         {"description",
                          "Held out of scheduling while true; the only field "
                          "that may change once the job exists."}}},
        {"backoffLimit", integer("Restarts of the gang before the job fails.")},
        {"activeDeadlineSeconds", integer("The job fails when it ran longer than this.")},
        {"ttlSecondsAfterFinished", integer("The job is deleted this long after it ended.")},
        {"cleanPodPolicy", str("None, Running or All: which pods go when the job ends.")}}}};
  return Json{
      {"type", "object"},
      {"description", "What the PyTorchJob runs: its replica types and run policy."},
      {"properties",
       {{"pytorchReplicaSpecs", Json{{"type", "object"},
                                     {"description", "The replica types by name (Master, Worker)."},
                                     {"additionalProperties", replica}}},
        {"runPolicy", run_policy},
        {"cleanPodPolicy", str("Kubeflow v1's place for runPolicy.cleanPodPolicy.")}}}};
}

std::string schema_name(const KindInfo& k) {
  std::string reversed;
  const std::string g = k.group.empty() ? "io.k8s.api.core" : k.group;
  if (!k.group.empty()) {
    // kubeflow.org → org.kubeflow
    size_t end = g.size();
    while (true) {
      const size_t dot = g.rfind('.', end - 1);
      const size_t start = dot == std::string::npos ? 0 : dot + 1;
      reversed += (reversed.empty() ? "" : ".") + g.substr(start, end - start);
      if (dot == std::string::npos) break;
      end = dot;
    }
  } else {
    reversed = g;
  }
  return reversed + "." + k.version + "." + k.kind;
}

Json kind_schema(const KindInfo& k) {
  Json gvk = Json::array({{{"group", k.group}, {"version", k.version}, {"kind", k.kind}}});
  Json spec = k.kind == "PyTorchJob" ? pytorchjob_spec()
                                     : open_object("The " + k.kind +
                                                   "'s specification, as "
                                                   "docs/kubernetes.md describes for gpufleet.");
  return Json{
      {"type", "object"},
      {"description", fmt::format("{} as gpufleet serves it (docs/kubernetes.md).", k.kind)},
      {"x-kubernetes-group-version-kind", gvk},
      {"properties",
       {{"apiVersion", str("The versioned schema of this object: " + k.group_version() + ".")},
        {"kind", str("The kind: " + k.kind + ".")},
        {"metadata", metadata_schema()},
        {"spec", spec},
        {"status", open_object("What gpufleet observes: conditions with observedGeneration, "
                               "and the kind's own fields. Read only.")}}}};
}

Json operation(const KindInfo& k, const std::string& action, bool patch) {
  Json params = Json::array();
  for (const char* name : {"dryRun", "fieldManager", "fieldValidation", "force"}) {
    params.push_back(
        {{"name", name},
         {"in", "query"},
         {"schema", {{"type", std::string_view(name) == "force" ? "boolean" : "string"}}}});
  }
  Json schema_ref{{"$ref", "#/components/schemas/" + schema_name(k)}};
  Json ok{{"description", "OK"}, {"content", {{"application/json", {{"schema", schema_ref}}}}}};
  Json op{{"operationId", action + k.kind},
          {"x-kubernetes-action", action},
          {"x-kubernetes-group-version-kind",
           {{"group", k.group}, {"version", k.version}, {"kind", k.kind}}},
          {"parameters", params},
          {"responses", {{"200", ok}}}};
  if (patch) {
    Json object_schema{{"schema", {{"type", "object"}}}};
    Json content{{"application/json-patch+json", object_schema},
                 {"application/merge-patch+json", object_schema},
                 {"application/apply-patch+yaml", object_schema}};
    op["requestBody"] = Json{{"content", content}};
  }
  return op;
}

Json gv_document(const std::string& group, const std::string& version) {
  Json paths = Json::object();
  Json schemas = Json::object();
  for (const KindInfo& k : kinds()) {
    if (k.group != group || k.version != version) continue;
    const std::string base = (group.empty() ? "/api/" + version : "/apis/" + group + "/" + version);
    const std::string item =
        base + (k.namespaced ? "/namespaces/{namespace}/" : "/") + k.plural + "/{name}";
    Json ops{{"get", operation(k, "get", false)}};
    if (k.writable) {
      ops["patch"] = operation(k, "patch", true);
      ops["put"] = operation(k, "put", false);
      ops["delete"] = operation(k, "delete", false);
    }
    paths[item] = std::move(ops);
    schemas[schema_name(k)] = kind_schema(k);
  }
  return Json{
      {"openapi", "3.0.0"},
      {"info",
       {{"title", "gpufleet"}, {"version", fmt::format("v{}.{}.0", kKubeMajor, kKubeMinor)}}},
      {"paths", std::move(paths)},
      {"components", {{"schemas", std::move(schemas)}}}};
}

// A stable tag of a document's content: kubectl caches per-version documents by it.
std::string content_hash(const Json& doc) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : doc.dump()) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:016X}", h);
}

HttpResponse v3_root(const HttpRequest&) {
  Json paths = Json::object();
  paths["api/v1"] = {
      {"serverRelativeURL", "/openapi/v3/api/v1?hash=" + content_hash(gv_document("", "v1"))}};
  for (const GroupVersion& g : api_groups()) {
    const std::string key = "apis/" + g.group + "/" + g.version;
    paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" +
                                            content_hash(gv_document(g.group, g.version))}};
  }
  return json_response(200, Json{{"paths", std::move(paths)}});
}

HttpResponse v3_group(const HttpRequest& req) {
  const std::string& g = req.path_params.at("group");
  const std::string& v = req.path_params.at("version");
  for (const GroupVersion& gv : api_groups()) {
    if (gv.group == g && gv.version == v) return json_response(200, gv_document(g, v));
  }
  return status_response(404, "NotFound", "no OpenAPI document for " + g + "/" + v);
}

}  // namespace

void register_openapi(Api& api) {
  Router& r = api.router();
  // OpenAPI v2 is protobuf only. The door serves an empty document: kubectl 1.20 (which reads no
  // v3) then validates nothing itself and leaves it to the server, as newer kubectl does.
  r.add("GET", "/openapi/v2", [](const HttpRequest&) {
    HttpResponse resp;
    resp.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    return resp;
  });
  r.add("GET", "/openapi/v3", v3_root);
  r.add("GET", "/openapi/v3/api/v1",
        [](const HttpRequest&) { return json_response(200, gv_document("", "v1")); });
  r.add("GET", "/openapi/v3/apis/{group}/{version}", v3_group);
}

}  // namespace gf::k8s
