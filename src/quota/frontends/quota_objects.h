// The three quota front ends (docs/quota.md): ElasticQuotaTree, Kueue's kinds (ResourceFlavor,
// Cohort, ClusterQueue, LocalQueue, WorkloadPriorityClass) and AWS Batch quota shares
// (ServiceEnvironment, SchedulingPolicy, JobQueue, QuotaShare). Each object is parsed and validated
// on its own (field-path errors, unknown fields kept with a warning); `compile` then turns the
// whole set into one quota::QuotaGraph plus the lookup tables the scheduler needs. Mapping rules
// and the supported Kueue subset: docs/quota-frontends.md. Pure: no I/O, no clock.
#pragma once

#include <bitset>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/resources.h"
#include "core/result.h"
#include "model/quota_objects.h"
#include "quota/quota_graph.h"

namespace gf::frontend {

// True for apiVersion/kind pairs handled here: scheduling.sigs.k8s.io/v1beta1 ElasticQuotaTree;
// kueue.x-k8s.io/v1beta1 or v1beta2 (also v1alpha1 for Cohort) ResourceFlavor, Cohort,
// ClusterQueue, LocalQueue, WorkloadPriorityClass.
bool is_k8s_quota_kind(std::string_view api_version, std::string_view kind);
// Parses and validates one such document. Errors: ValidationException whose message starts with
// the field path, e.g. `spec.root.children[0].max.cpu: invalid quantity "5Gb": ...`.
Result<QuotaObject> parse_k8s_object(const Json& doc);

// AWS Batch shapes (bodies of POST /v1/service-environments, /v1/scheduling-policies,
// /v1/job-queues, /v1/quota-shares).
Result<QuotaObject> parse_service_environment(const Json& body);
Result<QuotaObject> parse_scheduling_policy(const Json& body);
Result<QuotaObject> parse_job_queue(const Json& body);
Result<QuotaObject> parse_quota_share(const Json& body);

// examples/quota-shares.json: {serviceEnvironment, schedulingPolicy, jobQueue, quotaShares[]}
// (any non-empty subset). Errors name the bundle path: `quotaShares[1].capacityLimits: ...`.
bool is_quota_share_bundle(const Json& doc);
Result<std::vector<QuotaObject>> parse_quota_share_bundle(
    const Json& doc);  // env, policy, queue, shares

enum class IdleStrategy : uint8_t { kFifo, kFairShare };

// "ENABLED"/"DISABLED"; "VALID" with "JobQueue Healthy", or "INVALID" with the reason.
struct JobQueueStatus {
  std::string state;
  std::string status;
  std::string status_reason;
};

// Kueue: one flavor a ClusterQueue may assign, in the queue's resourceGroups order.
struct FlavorOption {
  std::string flavor;         // ResourceFlavor name
  std::string instance_type;  // nodeLabels["node.kubernetes.io/instance-type"]; empty = any node
  // plain resource id (cpu, memory, nvidia.com/gpu, ...) -> the flavored quota dimension id.
  // Quantities in a flavored dimension use the plain resource's unit (cpu: millicores).
  std::map<ResourceId, ResourceId> dims;
};

// ElasticQuotaTree queue object: name "root-child-2-<5 chars>", namespace "kube-queue".
struct QueueObject {
  std::string name;
  std::string ns;
  quota::NodeId node = quota::kNoNode;
  std::string tree_node;  // the tree node's name ("child-2")
};

// The status compile() gives job queue `name` (nullopt when there is none), from the objects
// alone: what a submission checks before the quota is compiled again.
std::optional<JobQueueStatus> job_queue_status(const ObjectMap& objects, std::string_view name);

struct CompiledQuota {
  quota::QuotaGraph graph;
  std::map<std::string, quota::NodeId, std::less<>> namespace_leaf;         // EQT namespace -> leaf
  std::map<std::string, quota::NodeId, std::less<>> local_queue_leaf;       // "ns/name" -> CQ node
  std::map<std::string, std::string, std::less<>> local_queue_cq;           // "ns/name" -> CQ name
  std::map<std::pair<std::string, std::string>, quota::NodeId> share_leaf;  // (queue, share)
  std::map<std::string, int32_t, std::less<>> priority_classes;  // WorkloadPriorityClass values
  // Per NodeId: the dims a job in this leaf is charged (EQT: those declared in the leaf's min or
  // max, so resources the tree does not mention are unlimited; others: all).
  std::vector<std::bitset<kMaxResources>> charged;
  std::vector<std::vector<FlavorOption>> flavors;  // per NodeId: Kueue ClusterQueue flavors
  std::vector<IdleStrategy> idle;                  // per NodeId (meaningful at roots)
  // Quota-share cohorts: the service environment's capacityLimits (instances); the scheduler
  // never lets the cohort's usage exceed it.
  std::map<quota::NodeId, ResourceVector> root_ceiling;
  std::map<std::string, JobQueueStatus, std::less<>> job_queue_status;  // by jobQueueName
  // Job queue name -> the `clusters` list of its environment (empty = all member clusters).
  std::map<std::string, std::vector<std::string>, std::less<>> environment_clusters;
  std::vector<QueueObject> queues;  // EQT queue objects, one per tree node
  std::vector<std::string> warnings;
};

// Compiles every object into one graph. `registry` interns resource names (instance types such as
// ml.g5.xlarge and Kueue's flavored dimensions become dimensions). Cross-object errors name the
// object: `QuotaShare QS4: jobQueue: job queue "x" does not exist`.
Result<CompiledQuota> compile(const ObjectMap& objects, ResourceRegistry& registry);

// Validates `incoming` against the current set: what compile would refuse, plus the apply-time
// rules (one ElasticQuotaTree; AWS: <= 20 shares per queue, one quota-managed queue per
// environment, shares only on VALID queues). Used before an apply commits; changes nothing but
// may intern resource names in `registry`.
Status check_apply(const ObjectMap& current, const std::vector<QuotaObject>& incoming,
                   ResourceRegistry& registry);

}  // namespace gf::frontend
