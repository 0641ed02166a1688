#include "provision/slurm_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "orchestrator/slurm/slurm_control.h"

namespace gf {

int64_t next_slurm_slot(const Cluster& c, const std::string& group, std::set<int64_t>& taken) {
  if (taken.empty()) {
    taken.insert(0);
    for (const auto& [id, n] : c.nodes) {
      // A node shutting down still holds its name until it is gone.
      if (n.group == group && n.status != NodeStatus::kFailure)
        taken.insert(n.slurm_slot > 0 ? n.slurm_slot : n.attempt);  // before slots: its attempt
    }
  }
  int64_t slot = 1;
  while (taken.contains(slot)) ++slot;
  taken.insert(slot);
  return slot;
}

SlurmLayout slurm_layout(const Cluster& c, const Catalog& catalog) {
  SlurmLayout layout;
  std::map<std::string, std::vector<std::string>> partitions;
  for (const auto& g : c.groups) {
    for (const auto& p : g.spec.partitions) partitions[p];  // listed even while empty
  }
  for (const auto& [id, n] : c.nodes) {
    if (n.status != NodeStatus::kRunning) continue;
    const InstanceGroup* g = c.find_group(n.group);
    if (!g || g->spec.node_type == NodeType::kController) continue;
    SlurmNodeLine line;
    line.name = slurm_node_name(n);
    if (const InstanceTypeInfo* info = catalog.find(n.instance_type)) {
      line.cpus = info->vcpus;
      line.real_memory_mb = info->memory_mib;
      line.gpus = info->gpus;
    }
    line.features = n.instance_type;
    layout.nodes.push_back(std::move(line));
    for (const auto& p : g->spec.partitions) partitions[p].push_back(slurm_node_name(n));
  }
  for (auto& [name, nodes] : partitions) layout.partitions.push_back({name, std::move(nodes)});
  return layout;
}

SlurmLayout slurm_real_layout(const Cluster& c, const Catalog& catalog) {
  SlurmLayout layout;
  std::map<std::string, std::vector<std::string>> partitions;
  int group_index = 0;
  for (const auto& g : c.groups) {
    if (g.spec.node_type != NodeType::kCompute) continue;
    for (const auto& p : g.spec.partitions) partitions[p];
    std::map<int64_t, bool> running;  // by slot
    int64_t highest = 0;
    for (const auto& [id, n] : c.nodes) {
      if (n.group != g.spec.name) continue;
      const int64_t slot = n.slurm_slot > 0 ? n.slurm_slot : n.attempt;
      highest = std::max(highest, slot);
      // Declared plainly once it runs, and while it is being updated or checked (its slurmd may
      // be down for a while, but it is still the cluster's).
      if (n.status == NodeStatus::kRunning || n.status == NodeStatus::kSystemUpdating ||
          n.status == NodeStatus::kDeepHealthCheckInProgress)
        running[slot] = true;
    }
    // Room for the target and for replacements launched while the nodes they replace still
    // hold their slots.
    const int64_t want = std::max(highest, g.spec.target + std::max<int64_t>(4, g.spec.target / 4));
    const int64_t window = (want + 15) / 16 * 16;
    const InstanceTypeInfo* info = catalog.find(g.spec.instance_type);
    for (int64_t a = 1; a <= window; ++a) {
      Node probe;
      probe.group = g.spec.name;
      probe.slurm_slot = a;
      SlurmNodeLine line;
      line.name = slurm_node_name(probe);
      if (info) {
        line.cpus = info->vcpus;
        line.real_memory_mb = info->memory_mib;
      }
      line.features = g.spec.instance_type;
      line.port = 1 + 4096 * group_index + static_cast<int>(a % 4096);
      line.state = running.contains(a) ? "" : "FUTURE";
      if (!slurm::check_slurm_name("node", line.name).ok())
        continue;  // too long for Slurm: the group is left out
      for (const auto& p : g.spec.partitions) partitions[p].push_back(line.name);
      layout.nodes.push_back(std::move(line));
    }
    ++group_index;
  }
  // The first partition of the first Compute group is the default one: `sbatch` without -p
  // runs there, as on a cluster whose administrator marked it Default=YES. A group's
  // SlurmConfig.DefaultPartition names another.
  std::string first;
  for (const auto& g : c.groups) {
    if (g.spec.node_type == NodeType::kCompute && !g.spec.partitions.empty() && first.empty())
      first = g.spec.partitions.front();
  }
  for (const auto& g : c.groups) {
    if (g.spec.node_type == NodeType::kCompute && !g.spec.default_partition.empty())
      first = g.spec.default_partition;
  }
  for (auto& [name, nodes] : partitions) {
    if (slurm::check_slurm_name("partition", name).ok())
      layout.partitions.push_back({name, std::move(nodes), name == first});
  }
  return layout;
}

Status check_real_slurm_groups(const std::vector<GroupSpec>& groups) {
  for (size_t i = 0; i < groups.size(); ++i) {
    const GroupSpec& g = groups[i];
    if (g.node_type != NodeType::kCompute || g.name.size() <= kRealSlurmGroupNameMax) continue;
    return validation_error(fmt::format(
        "InstanceGroups[{}].InstanceGroupName: \"{}\" is {} characters; a Compute group of a real "
        "Slurm cluster takes at most {}: its node names (<group>-<slot>) name slurmd's step "
        "sockets, and a Unix socket path holds at most {} characters (docs/slurm.md)",
        i, g.name, g.name.size(), kRealSlurmGroupNameMax, kUnixSocketPathMax));
  }
  return ok_status();
}

}  // namespace gf
