#include "provision/slurm_layout.h"

#include <fmt/format.h>

#include <map>

namespace gf {

std::string slurm_node_name(const Node& n) { return fmt::format("{}-{}", n.group, n.attempt); }

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

}  // namespace gf
