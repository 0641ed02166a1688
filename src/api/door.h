// What a second protocol's door shares (the AWS SDKs' in src/api/aws/, Kubernetes' in
// src/api/k8s/): neither is a second implementation. Each call becomes the gpufleet REST request
// that does the same, run through Api::dispatch_inner (authorized, idempotent and audited as that
// route), and the door reshapes the answer into its protocol's.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/api.h"
#include "api/http.h"
#include "core/json.h"

namespace gf::door {

// The REST request a call becomes.
struct Inner {
  std::string method = "GET";
  std::string path;
  std::map<std::string, std::string> query{};
  std::optional<Json> body{};
  bool text = false;  // the answer is text (logs): kept as it is, not parsed as JSON
};

// What the REST route answered: its JSON body when it succeeded, else the error answer itself.
struct Answer {
  HttpResponse response;
  Json body;
  bool ok() const { return response.status < 300; }
};

// Runs `inner` as the caller of `outer` (its identity, roles, headers and request id, and its
// `?dryRun=All`, which then changes nothing here either).
Answer call(Api& api, const HttpRequest& outer, Inner inner);

}  // namespace gf::door
