#include "model/topology.h"

#include <fmt/format.h>

#include <charconv>

#include "model/catalog.h"

namespace gf {

std::optional<uint8_t> topology_level(std::string_view label) {
  for (size_t i = 0; i < kTopologyLevels.size(); ++i) {
    if (kTopologyLevels[i] == label) return static_cast<uint8_t>(i + 1);
  }
  return std::nullopt;
}

std::string_view topology_level_label(uint8_t level) {
  if (level == 0 || level > kTopologyLevelCount) return "";
  return kTopologyLevels[level - 1];
}

std::string_view topology_level_short(uint8_t level) {
  static constexpr std::array<std::string_view, kTopologyLevelCount> kShort = {
      "layer-1", "layer-2", "layer-3", "ultraserver", "host"};
  if (level == 0 || level > kTopologyLevelCount) return "";
  return kShort[level - 1];
}

Result<TopologyLayout> TopologyLayout::from_json(const Json& j, const std::string& path) {
  if (!j.is_object()) {
    return validation_error(path + ": expected an object {nodesPerBlock, blocksPerSpine}, got " +
                            describe_json_value(j));
  }
  ObjectReader r(j, path);
  TopologyLayout t;
  t.nodes_per_block = r.required_int("nodesPerBlock");
  t.blocks_per_spine = r.optional_int("blocksPerSpine").value_or(1);
  if (!r.ok()) return r.status();
  if (const std::vector<std::string> unknown = r.unknown_fields(); !unknown.empty()) {
    return validation_error(path_join(path, unknown.front()) +
                            ": unknown field (known: nodesPerBlock, blocksPerSpine)");
  }
  // Bounds keep block and spine numbers small and their products in range.
  if (t.nodes_per_block < 1 || t.nodes_per_block > 100000) {
    return validation_error(
        fmt::format("{}.nodesPerBlock: expected 1..100000, got {}", path, t.nodes_per_block));
  }
  if (t.blocks_per_spine < 1 || t.blocks_per_spine > 100000) {
    return validation_error(
        fmt::format("{}.blocksPerSpine: expected 1..100000, got {}", path, t.blocks_per_spine));
  }
  return t;
}

bool reports_topology(const std::string& type) {
  const InstanceTypeInfo* info = Catalog::builtin().find(type);
  return info != nullptr && info->gpus > 0;
}

std::map<std::string, std::string> TopologySlots::labels_of(const std::string& instance_id) const {
  auto it = held_.find(instance_id);
  if (it == held_.end()) return {};
  return labels(it->second.cluster, it->second.block);
}

std::map<std::string, std::string> TopologySlots::labels(const std::string& cluster,
                                                         int64_t block) const {
  return {{std::string(kTopologyLayer1), "nn-" + cluster},
          {std::string(kTopologyLayer2),
           fmt::format("nn-{}-s{}", cluster, block / layout_.blocks_per_spine)},
          {std::string(kTopologyLayer3), fmt::format("nn-{}-b{}", cluster, block)}};
}

std::map<std::string, std::string> TopologySlots::assign(const std::string& cluster,
                                                         const std::string& type,
                                                         const std::string& instance_id) {
  if (!layout_.enabled()) return {};
  if (auto it = held_.find(instance_id); it != held_.end())
    return labels(it->second.cluster, it->second.block);
  std::map<int64_t, Block>& blocks = blocks_[cluster];
  int64_t chosen = -1;
  for (auto& [index, b] : blocks) {
    if (b.type == type && b.used < layout_.nodes_per_block) {
      chosen = index;
      break;
    }
  }
  if (chosen < 0) {  // the lowest block no instance holds
    chosen = 0;
    for (const auto& [index, b] : blocks) {
      if (index != chosen) break;
      ++chosen;
    }
    blocks[chosen].type = type;
  }
  blocks[chosen].used += 1;
  held_[instance_id] = Held{cluster, chosen};
  return labels(cluster, chosen);
}

void TopologySlots::release(const std::string& instance_id) {
  auto it = held_.find(instance_id);
  if (it == held_.end()) return;
  auto c = blocks_.find(it->second.cluster);
  if (c != blocks_.end()) {
    auto b = c->second.find(it->second.block);
    if (b != c->second.end() && --b->second.used <= 0) c->second.erase(b);
  }
  held_.erase(it);
}

void TopologySlots::restore(const std::string& cluster, const std::string& type,
                            const std::string& instance_id,
                            const std::map<std::string, std::string>& labels) {
  if (!layout_.enabled() || held_.contains(instance_id)) return;
  auto it = labels.find(std::string(kTopologyLayer3));
  const std::string prefix = "nn-" + cluster + "-b";
  if (it == labels.end() || it->second.rfind(prefix, 0) != 0) return;
  const std::string_view digits = std::string_view(it->second).substr(prefix.size());
  int64_t block = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), block);
  if (ec != std::errc{} || end != digits.data() + digits.size() || block < 0) return;
  Block& b = blocks_[cluster][block];
  if (b.used == 0) b.type = type;
  b.used += 1;
  held_[instance_id] = Held{cluster, block};
}

}  // namespace gf
