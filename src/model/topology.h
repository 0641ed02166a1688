// Network topology as node labels (docs/scheduling.md "Topology"): the levels a gang may ask to
// be packed into, the layout a simulated or local cloud gives its instances, and the slots that
// layout fills in launch order.
//
// Levels are node label keys, coarsest first, as AWS labels EKS and HyperPod nodes from EC2's
// instance topology: network-node-layer-1 is the top of the hierarchy, layer-3 the network node
// the instance attaches to; an UltraServer id groups the instances of one NVLink domain; the host
// name is the node itself.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "core/result.h"

namespace gf {

inline constexpr std::string_view kTopologyLayer1 = "topology.k8s.aws/network-node-layer-1";
inline constexpr std::string_view kTopologyLayer2 = "topology.k8s.aws/network-node-layer-2";
inline constexpr std::string_view kTopologyLayer3 = "topology.k8s.aws/network-node-layer-3";
inline constexpr std::string_view kTopologyUltraServer = "topology.k8s.aws/ultraserver-id";
inline constexpr std::string_view kTopologyHostname = "kubernetes.io/hostname";

// The levels, coarsest first. A level's number is its place here plus one (0 = no level).
inline constexpr std::array<std::string_view, 5> kTopologyLevels = {
    kTopologyLayer1, kTopologyLayer2, kTopologyLayer3, kTopologyUltraServer, kTopologyHostname};
inline constexpr size_t kTopologyLevelCount = kTopologyLevels.size();

// The level number of a label key (1..kTopologyLevelCount), or nullopt when it is not a level.
std::optional<uint8_t> topology_level(std::string_view label);
// The label key of level number `level` (1-based).
std::string_view topology_level_label(uint8_t level);
// A short name for messages: "layer-3", "ultraserver", "host".
std::string_view topology_level_short(uint8_t level);

// What a pod set asks of the topology (Kueue's podset-required-topology /
// podset-preferred-topology annotations): `level` a label key of kTopologyLevels; required =
// all its pods in one domain of that level or none placed; preferred = the fewest domains.
// `whole_job`: asked for the whole job, so every pod set asking so shares one domain.
struct TopologyRequest {
  std::string level;
  bool required = false;
  bool whole_job = false;
  bool operator==(const TopologyRequest&) const = default;
};

// Whether EC2 reports a network topology for instances of `type`: the accelerated types (the
// catalog's types with GPUs or other accelerators).
bool reports_topology(const std::string& type);

// How a cloud lays out its accelerated instances (a scenario's or --sim-cloud's
// `topology: {nodesPerBlock, blocksPerSpine}`): layer 3 is a block of `nodes_per_block` nodes,
// layer 2 a spine of `blocks_per_spine` blocks, layer 1 one per cluster.
struct TopologyLayout {
  int64_t nodes_per_block = 0;  // 0 = no topology labels
  int64_t blocks_per_spine = 1;
  bool enabled() const { return nodes_per_block > 0; }
  // Errors name the field under `path`; unknown fields are refused.
  static Result<TopologyLayout> from_json(const Json& j, const std::string& path);
};

// The slots of one cloud's layout: per cluster, blocks of one instance type each, filled in
// launch order (an instance takes the first free slot of the lowest block of its type with room,
// else the lowest unused block). Plain data: the cloud driver calls it on its own thread.
class TopologySlots {
 public:
  explicit TopologySlots(TopologyLayout layout) : layout_(layout) {}
  const TopologyLayout& layout() const { return layout_; }

  // The labels of a new instance (empty when the layout is off). A repeat for an instance that
  // holds a slot returns the same labels.
  std::map<std::string, std::string> assign(const std::string& cluster, const std::string& type,
                                            const std::string& instance_id);
  // The instance left: its slot is free again. Unknown ids are ignored.
  void release(const std::string& instance_id);
  // After a restart: the instance holds the slot its labels name (labels this layout did not
  // write are ignored).
  void restore(const std::string& cluster, const std::string& type, const std::string& instance_id,
               const std::map<std::string, std::string>& labels);

  // The labels of an instance in block `block` of `cluster`.
  std::map<std::string, std::string> labels(const std::string& cluster, int64_t block) const;
  // The labels of an instance holding a slot (empty when it holds none).
  std::map<std::string, std::string> labels_of(const std::string& instance_id) const;

 private:
  struct Block {
    std::string type;
    int64_t used = 0;
  };
  struct Held {
    std::string cluster;
    int64_t block = 0;
  };
  TopologyLayout layout_;
  std::map<std::string, std::map<int64_t, Block>> blocks_;  // cluster -> block index -> block
  std::map<std::string, Held> held_;                        // instance id -> its block
};

}  // namespace gf
