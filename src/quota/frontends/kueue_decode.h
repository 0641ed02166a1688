// Decoded forms of Kueue's kinds, shared by parsing (validation with a scratch registry) and
// compilation (the real registry). Internal to the front ends.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/resources.h"
#include "core/result.h"
#include "quota/quota_types.h"

namespace gf::frontend::detail {

// The quota dimension of (flavor, resource): "<flavor>.flavor.gpufleet.io/<resource, '/' -> '.'>",
// each part shortened with a hash suffix when it would exceed the registry's name limits.
std::string flavored_dim_name(std::string_view flavor, std::string_view resource);

struct FlavorQuotas {
  std::string name;                                     // ResourceFlavor name
  std::string field;                                    // "spec.resourceGroups[0].flavors[1]"
  std::vector<std::pair<ResourceId, ResourceId>> dims;  // plain id -> flavored id
};

struct ResourceGroups {
  std::vector<quota::ResourceQuota> quotas;  // on flavored dimensions
  std::vector<FlavorQuotas> flavors;         // in resourceGroups order
};

struct ResourceFlavorSpec {
  std::string name;
  std::string instance_type;  // empty = any node
};

struct CohortSpec {
  std::string name;
  std::string parent;  // empty = root
  ResourceGroups groups;
  int64_t weight_milli = 1000;
};

struct ClusterQueueSpec {
  std::string name;
  std::string cohort;  // empty = standalone
  ResourceGroups groups;
  quota::PreemptionPolicy preemption;
  quota::QueueingStrategy queueing = quota::QueueingStrategy::kBestEffortFifo;
  int64_t weight_milli = 1000;
};

struct LocalQueueSpec {
  std::string ns;
  std::string name;
  std::string cluster_queue;
};

struct PriorityClassSpec {
  std::string name;
  int32_t value = 0;
};

// Each reads a whole document (header included) and appends unknown-field warnings.
Result<ResourceFlavorSpec> decode_resource_flavor(const Json& doc, std::vector<std::string>& w);
Result<CohortSpec> decode_cohort(const Json& doc, ResourceRegistry& registry,
                                 std::vector<std::string>& w);
Result<ClusterQueueSpec> decode_cluster_queue(const Json& doc, ResourceRegistry& registry,
                                              std::vector<std::string>& w);
Result<LocalQueueSpec> decode_local_queue(const Json& doc, std::vector<std::string>& w);
Result<PriorityClassSpec> decode_priority_class(const Json& doc, std::vector<std::string>& w);

}  // namespace gf::frontend::detail
