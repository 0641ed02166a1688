// Full-fidelity (de)serialization of clusters for snapshots: restoring a snapshot must give the
// same state hash as replaying the journal.
#pragma once

#include "core/json.h"
#include "model/cluster.h"

namespace gf {

Json cluster_to_snapshot(const Cluster& c);
Result<Cluster> cluster_from_snapshot(const Json& j);

}  // namespace gf
