// What the managed blocks of a Slurm cluster's slurm.conf say (docs/provisioning.md): one NodeName
// line per Running compute or login node, one PartitionName line per partition of the compute
// groups.
#pragma once

#include <set>
#include <string>

#include "model/catalog.h"
#include "model/cluster.h"
#include "orchestrator/slurm/slurm_conf.h"

namespace gf {

// Slurm node names are `<group>-<slot>`, the slot the lowest free in its group when it was
// launched: stable for the node's life, unique in the cluster, reused by the node that replaces
// it (so a cluster of 16 workers keeps the names `worker-gpu-a-[1-16]` however often its nodes
// are replaced), and compressible into hostlist ranges. Nodes launched before slots existed keep
// `<group>-<launch attempt>`. slurm_node_name() lives with Node (model/cluster.h).

// The slot a new node of `group` takes: the lowest one no node of the group holds (a node that
// is shutting down holds its slot until it is gone). `taken` carries the slots handed out in one
// pass (empty at first: filled from the cluster).
int64_t next_slurm_slot(const Cluster& c, const std::string& group, std::set<int64_t>& taken);

SlurmLayout slurm_layout(const Cluster& cluster, const Catalog& catalog);

// The layout of a real Slurm cluster (docs/slurm.md "Nodes joining"): every compute node name a
// launch may use is declared ahead, so that nodes join without restarting slurmctld — for each
// compute group the slots 1 … W, W the group's target plus room for replacements (a quarter, at
// least 4) rounded up to a multiple of 16 (it changes, and slurmctld restarts, only when the
// target grows past it). Running nodes are declared plainly, the others State=FUTURE (hidden
// until their slurmd registers); partitions list every declared name. `port` is an offset the
// controller adds to its base port (1 + 4096 × the group's place among the compute groups + the
// slot, modulo 4096). Login and controller nodes run no slurmd and are not declared.
SlurmLayout slurm_real_layout(const Cluster& cluster, const Catalog& catalog);

// The longest Compute group name of a real Slurm cluster: its node names, `<group>-<slot>` with
// slots of up to 5 digits, name the step sockets (kSlurmSocketNameMax, docs/slurm.md).
inline constexpr size_t kRealSlurmGroupNameMax = kSlurmSocketNameMax - 6;
// A real Slurm cluster's groups whose node names could not name a step socket are refused
// before anything launches, never discovered as a held job; the error names the group's field.
Status check_real_slurm_groups(const std::vector<GroupSpec>& groups);

}  // namespace gf
