// Parsing and validation of the cluster API's write requests (docs/provisioning.md). Pure
// functions of (request JSON, current state, catalog): the API calls them inside the loop's request
// handler so validation sees the state the write will apply to. Every error is a
// ValidationException (or the code the spec names) whose message starts with the field path.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "model/catalog.h"
#include "model/cluster.h"
#include "state/fleet_state.h"

namespace gf {

struct CreateClusterRequest {
  std::string name;
  bool continuous = false;
  Orchestrator orchestrator = Orchestrator::kSlurm;
  Json vpc_config;
  std::string node_recovery = "Automatic";
  std::vector<GroupSpec> groups;
  std::vector<std::string> warnings;  // unknown fields, kept and ignored
};

struct UpdateClusterRequest {
  std::string name;
  std::vector<GroupSpec> groups;  // full desired specs; new names add groups
  std::vector<std::string> groups_to_delete;
  std::optional<std::string> node_recovery;
  std::vector<std::string> warnings;
};

// `fields`: what a field the request format does not have does (docs/api.md "Unknown fields"):
// by default the request is refused naming it and the closest known field.
Result<CreateClusterRequest> parse_create_cluster(
    const Json& body, const FleetView& state, const Catalog& catalog,
    FieldValidation fields = FieldValidation::kStrict);
Result<UpdateClusterRequest> parse_update_cluster(
    const std::string& name, const Json& body, const FleetView& state, const Catalog& catalog,
    FieldValidation fields = FieldValidation::kStrict);

// BatchAddClusterNodes: {NodesToAdd: [{InstanceGroupName, IncrementTargetCountBy}]}.
struct NodesToAdd {
  std::string group;
  int64_t increment = 0;
};
Result<std::vector<NodesToAdd>> parse_batch_add(const Json& body);
// BatchDeleteClusterNodes: {NodeIds: [...]}.
Result<std::vector<std::string>> parse_batch_delete(const Json& body);

// UpdateClusterSoftware (HyperPod's shape, docs/provisioning.md "Software updates"):
//   {"InstanceGroups": [{"InstanceGroupName": "..."}],      optional; absent = every group
//    "DeploymentConfig": {"RollingUpdatePolicy": {"MaximumBatchSize":
//        {"Type": "INSTANCE_COUNT" | "CAPACITY_PERCENTAGE", "Value": N}},
//      "WaitIntervalInSeconds": S},                           optional; default 1 instance, 0 s
//    "ImageId": "..."}                                        optional; default "latest"
// checked against the cluster: it must be InService (409 otherwise), the groups must exist and
// none may be Creating or Updating (409). Unknown fields are refused, naming the closest known.
struct SoftwareUpdateRequest {
  std::vector<std::string> groups;
  std::string batch_type = "INSTANCE_COUNT";
  int64_t batch_value = 1;
  Duration wait_interval{};
  std::string image = "latest";
};
Result<SoftwareUpdateRequest> parse_software_update(const Json& body, const Cluster& cluster);

// A group in Creating/Updating refuses BatchAdd/BatchDelete (docs/provisioning.md): the 409
// message.
std::optional<Status> group_busy(const Cluster& c, const InstanceGroup& g,
                                 std::string_view operation);

}  // namespace gf
