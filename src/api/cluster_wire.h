// The cluster API's answers in HyperPod's shapes (docs/provisioning.md).
#pragma once

#include "core/json.h"
#include "model/cluster.h"

namespace gf {

Json describe_cluster(const Cluster& c);
Json cluster_summary(const Cluster& c);
Json node_summary(const Cluster& c, const Node& n);
Json node_detail(const Cluster& c, const Node& n, Time now);

}  // namespace gf
