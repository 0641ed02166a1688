// What the managed blocks of a Slurm cluster's slurm.conf say (docs/provisioning.md): one NodeName
// line per Running compute or login node, one PartitionName line per partition of the compute
// groups.
#pragma once

#include "model/catalog.h"
#include "model/cluster.h"
#include "orchestrator/slurm/slurm_conf.h"

namespace gf {

// Slurm node names are `<group>-<launch attempt>`: stable for the node's life, unique in the
// cluster, and compressible into hostlist ranges (`worker-gpu-a-[1-16]`).
std::string slurm_node_name(const Node& n);

SlurmLayout slurm_layout(const Cluster& cluster, const Catalog& catalog);

}  // namespace gf
