// The Kubernetes door's reads: each kind's objects fetched through gpufleet's own REST routes
// (door::call, so every read is authorized as that route) and completed to what Kubernetes
// clients expect — apiVersion and kind on every item, metadata.uid, resourceVersion (the journal
// position the answer reflects), generation and creationTimestamp, conditions with
// observedGeneration, Nodes and Pods complete to the core/v1 schema.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/http.h"
#include "api/k8s/registry.h"
#include "core/json.h"

namespace gf::k8s {

// What a request names (the path below /api/v1 or /apis/{group}/{version}).
struct Target {
  const KindInfo* kind = nullptr;
  std::string ns{};    // the namespace (namespaced kinds); "" with `all_namespaces`
  std::string name{};  // "" for the collection
  std::string sub{};   // "status", "log" or ""
  bool all_namespaces = false;
};

// The path's target, or the Status answer (404) when it names nothing the door serves.
std::optional<HttpResponse> parse_target(const HttpRequest& req, Target& out);

// Objects, or the failed inner answer.
struct Fetched {
  std::vector<Json> items;
  std::string resource_version;  // the journal position of the answer
  std::optional<HttpResponse> error;
};

// Every object of the target's kind in its namespace (all namespaces when it names none).
Fetched list_objects(Api& api, const HttpRequest& req, const Target& t);
// One object (t.name); a 404 answer when there is none.
Fetched get_object(Api& api, const HttpRequest& req, const Target& t);

// The items the request's labelSelector and fieldSelector keep (metadata.name and
// metadata.namespace for every kind; involvedObject.*, type and reason for events; spec.nodeName
// and status.phase for pods); the error names the parameter.
Result<std::vector<Json>> select(const HttpRequest& req, const KindInfo& kind,
                                 std::vector<Json> items);

// Sets apiVersion, kind and the metadata Kubernetes clients rely on.
void complete(Json& obj, const KindInfo& kind, const std::string& resource_version);

}  // namespace gf::k8s
