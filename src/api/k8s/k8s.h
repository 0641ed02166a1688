// The Kubernetes door (docs/kubernetes.md): enough of the Kubernetes API at /version, /api,
// /apis and /openapi that kubectl and the official Python client work against gpufleet unchanged.
// Like the AWS doors (src/api/aws/) it is not a second implementation: every read and write
// becomes the gpufleet REST call that does the same (door::call), authorized, idempotent and
// audited as that call, and its answer is reshaped into the Kubernetes object, list, Table or
// Status the client reads.
#pragma once

#include <string>
#include <string_view>

#include "api/api.h"
#include "api/http.h"

namespace gf::k8s {

// Whether a request path is the Kubernetes door's: its failures, however early (401, 413, 429),
// answer as a Status.
bool is_k8s_path(std::string_view path);

// The version the door reports (GET /version): the Kubernetes minor its wire matches, so the
// kubectl version dispatcher picks a client that speaks it.
inline constexpr std::string_view kKubeMajor = "1";
inline constexpr std::string_view kKubeMinor = "32";

void register_discovery(Api& api);
void register_openapi(Api& api);
void register_resources(Api& api);

}  // namespace gf::k8s
