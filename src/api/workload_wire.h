// Workloads over the API (docs/workloads.md, docs/dispatch.md): PyTorchJobs and PropagationPolicies
// as `POST /v1/apply` takes them, and the Kubernetes-like objects `/v1/objects/{pytorchjobs,
// propagationpolicies, pods}` return. Internal to the api component.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/api.h"
#include "model/propagation_policy.h"
#include "workload/pytorchjob.h"

namespace gf {

// Annotation on a member cluster's copy of a job (`get pytorchjob NAME -m CLUSTER`).
inline constexpr std::string_view kMemberAnnotation = "gpufleet.io/member-cluster";

// The workload documents of one apply request, parsed and validated on their own.
struct WorkloadDocs {
  std::vector<workload::PropagationPolicy> policies;
  std::vector<workload::PyTorchJob> jobs;
  bool empty() const { return policies.empty() && jobs.empty(); }
};

bool is_workload_kind(std::string_view api_version, std::string_view kind);
// Parses one PyTorchJob or PropagationPolicy document into `docs`.
Status parse_workload_doc(const Json& doc, WorkloadDocs& docs);
// Validates the documents against the state (policies of the same request count) and appends
// the events to record and one result item per document. Errors change nothing.
Status decide_workload_apply(const FleetState& s, Time now, const WorkloadDocs& docs,
                             std::vector<Event>& events, Json& items);

bool is_workload_plural(std::string_view plural);  // pytorchjobs, propagationpolicies, pods
HttpResponse workload_list(Api& api, const std::string& plural, const HttpRequest& req);
HttpResponse workload_get(Api& api, const std::string& plural, const HttpRequest& req);
HttpResponse workload_delete(Api& api, const std::string& plural, const HttpRequest& req);

}  // namespace gf
