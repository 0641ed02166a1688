// `kubectl get`'s server-side printing (docs/kubernetes.md "Tables"): a meta.k8s.io/v1 Table with
// the columns users know for each kind, ages on the server's clock.
#pragma once

#include <string>
#include <vector>

#include "api/http.h"
#include "api/k8s/registry.h"
#include "core/json.h"
#include "core/time.h"

namespace gf::k8s {

// Whether the Accept header asks for a Table (`application/json;as=Table;v=v1;g=meta.k8s.io`).
bool wants_table(const HttpRequest& req);

// The Table of `items` (each row's object is its PartialObjectMetadata, or the whole object with
// includeObject=Object); `continue_token` goes into the list metadata.
Json table(const KindInfo& kind, const std::vector<Json>& items, Time now,
           const std::string& resource_version, const std::string& continue_token,
           const std::string& include_object);

// Kubernetes' short ages: 45s, 5m30s, 3h, 2d5h, 3y.
std::string human_age(Duration d);

}  // namespace gf::k8s
