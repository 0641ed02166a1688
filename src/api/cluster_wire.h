// The cluster API's answers in HyperPod's shapes (docs/provisioning.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "model/cluster.h"
#include "state/fleet_state.h"

namespace gf {

Json describe_cluster(const Cluster& c);
Json cluster_summary(const Cluster& c);
// What runs on a cluster's nodes and what is being done to them: the pods of the jobs placed
// there (by instance id) and each node's open remediation. Built from the view once per answer.
struct NodeActivity {
  struct Pod {
    std::string name, job, job_id;
  };
  std::map<std::string, std::vector<Pod>, std::less<>> pods;  // by instance id
  static NodeActivity of(const FleetView& view, const Cluster& c);
};

// ListClusterNodes' entry, with our additions: Cordoned, PodCount, RemediationId,
// RemediationStatus, Labels (when it has some) and, on a Slurm cluster, SlurmNodeName
// (docs/api.md).
Json node_summary(const FleetView& view, const Cluster& c, const Node& n,
                  const NodeActivity& activity);
// DescribeClusterNode's NodeDetails: the summary plus health, labels, the pods on the node
// (Workload.Pods), billing and the launch attempt.
Json node_detail(const FleetView& view, const Cluster& c, const Node& n, Time now);

}  // namespace gf
