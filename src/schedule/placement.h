// PlacementIndex: the free capacity of every schedulable node of every member cluster, indexed
// for gang placement (docs/dispatch.md steps 3–4). A gang is placed on one cluster, all pods or
// none: find() computes a complete placement without changing anything; commit() reserves it.
//
// Per cluster, nodes are pooled by instance type; each pool keeps its schedulable nodes in
// buckets by free GPUs (bitsets in node-index order), read in (free GPUs, node index) order, so
// the best-fit node for a pod is the first that holds it from its GPU count up.
// Among clusters the tightest fit wins: the fewest free GPUs left in the cluster after the gang,
// then the fewest free GPUs left on the nodes the gang touches (stranded fragments), then the
// cluster's name. Capacity is real per-node capacity, never a cluster-wide sum (docs/dispatch.md) —
// except for estimate(), which models a fleet that dispatches by summed free capacity.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/bit_words.h"
#include "core/resources.h"
#include "model/topology.h"

namespace gf::sched {

using NodeIdx = uint32_t;
using ClusterIdx = uint32_t;
inline constexpr ClusterIdx kNoCluster = std::numeric_limits<ClusterIdx>::max();

// How many topology levels a node carries labels for: the hostname level (the node itself)
// needs none. Levels are numbered as model/topology.h numbers them (1 = layer-1, coarsest).
inline constexpr size_t kLabelledLevels = kTopologyLevelCount - 1;
inline constexpr uint8_t kHostLevel = static_cast<uint8_t>(kTopologyLevelCount);
// A node's topology label values, level 1 first ("" = no label at that level).
using NodeTopology = std::array<std::string, kLabelledLevels>;

// `count` identical pods; each goes onto one node. `instance_type` non-empty = only nodes of
// that type (a whole-node pod of a service job, a Kueue flavor's node label).
//
// Topology (docs/scheduling.md "Topology"): `topology` is a level (0 = none); `required` = every
// pod of the pod set inside one domain of that level or not placed; otherwise preferred = the
// fewest domains that hold it. Pod sets with the same non-zero `topology_group` share one domain
// (a request for the whole job); group 0 = the pod set alone.
struct PodSet {
  int32_t count = 1;
  ResourceVector request;
  std::string instance_type;
  uint8_t topology = 0;
  bool topology_required = false;
  uint16_t topology_group = 0;
  bool operator==(const PodSet&) const = default;
};

struct PodBinding {
  uint16_t pod_set = 0;
  uint32_t index = 0;  // 0..count-1 within the pod set
  NodeIdx node = 0;
  bool operator==(const PodBinding&) const = default;
};

struct Placement {
  ClusterIdx cluster = kNoCluster;
  std::vector<PodBinding> pods;  // one per pod, in pod-set then index order
  int64_t cluster_free_gpus_after = 0;
  int64_t stranded_gpus = 0;  // free GPUs left on the nodes this gang uses
  // Topology-constrained pod sets: 0 = each in one domain of its level; k = k levels coarser than
  // asked (preferred); kSpread + domains = spread over domains (preferred). Lower is better.
  int32_t topology_rank = 0;
  int64_t domain_free_gpus_after = 0;  // free GPUs left in the chosen domains (tightest wins)
  bool operator==(const Placement&) const = default;
};
inline constexpr int32_t kSpread = 100;

// The domain of a topology level that holds the most pods of a constrained pod set (explanations).
struct DomainRoom {
  ClusterIdx cluster = kNoCluster;
  uint8_t level = 0;
  std::string value;   // the label value ("" for a host: `value` is then the instance id)
  int64_t pods = 0;    // pods of the unit that fit there now
  int64_t wanted = 0;  // pods of the unit
};

class PlacementIndex {
 public:
  // Returns the cluster's index, registering the name on first use. Indexes are never reused.
  ClusterIdx cluster(std::string_view name);
  std::optional<ClusterIdx> find_cluster(std::string_view name) const;
  const std::string& cluster_name(ClusterIdx c) const { return clusters_[c].name; }
  size_t cluster_count() const { return clusters_.size(); }

  // Adds a node (or updates its schedulable flag and topology if it exists). Capacity is fixed
  // at creation.
  NodeIdx upsert_node(ClusterIdx c, std::string_view instance_id, std::string_view instance_type,
                      const ResourceVector& capacity, bool schedulable,
                      const NodeTopology& topology = {});
  std::optional<NodeIdx> find_node(ClusterIdx c, std::string_view instance_id) const;
  // Unschedulable nodes keep their reservations but receive no new pods.
  void set_schedulable(NodeIdx n, bool schedulable);
  // Forgets a node. Its reservations must have been released.
  void remove_node(NodeIdx n);
  // The nodes of cluster `c` that exist (any schedulable state), in index order.
  std::vector<NodeIdx> nodes_of(ClusterIdx c) const;

  bool alive(NodeIdx n) const { return nodes_[n].alive; }
  bool schedulable(NodeIdx n) const { return nodes_[n].alive && nodes_[n].schedulable; }
  ClusterIdx cluster_of(NodeIdx n) const { return nodes_[n].cluster; }
  const std::string& instance_id(NodeIdx n) const { return nodes_[n].instance_id; }
  const ResourceVector& capacity(NodeIdx n) const { return nodes_[n].capacity; }
  const ResourceVector& free(NodeIdx n) const { return nodes_[n].free; }
  size_t node_slots() const { return nodes_.size(); }
  // Free GPUs over the cluster's schedulable nodes.
  int64_t free_gpus(ClusterIdx c) const { return clusters_[c].free_gpus; }

  // The size a cluster is heading for, per instance type (provisioning targets): ever_fits()
  // counts max(live nodes, target) nodes of each type.
  void set_targets(ClusterIdx c, std::map<std::string, int64_t, std::less<>> targets);
  // Capacity of one instance type, learned from its nodes or given for targets not yet launched.
  void set_type_capacity(std::string_view instance_type, const ResourceVector& capacity);

  // The tightest complete placement of `gang` over `allowed` clusters (null or empty = all).
  // Changes nothing. nullopt when no single cluster has room for every pod right now.
  std::optional<Placement> find(const std::vector<PodSet>& gang,
                                const std::vector<ClusterIdx>* allowed = nullptr) const;
  // Placement on one given cluster, or nullopt.
  std::optional<Placement> find_in(ClusterIdx c, const std::vector<PodSet>& gang) const;
  // The cluster a fleet without reservation would dispatch `gang` to (estimate mode,
  // docs/dispatch.md): one whose free resources summed over its schedulable nodes hold the gang's
  // total — a pod set with an instance type counting only nodes of that type — whether or not any
  // node arrangement does. Tightest first: the fewest free GPUs left in the cluster after the gang,
  // then the fewest free CPU, then the name. `allowed` as in find(). Changes nothing.
  std::optional<ClusterIdx> estimate(const std::vector<PodSet>& gang,
                                     const std::vector<ClusterIdx>* allowed = nullptr) const;
  // Whether some allowed cluster could hold the gang if all of its nodes (present or targeted)
  // were empty and schedulable. False = the shape is infeasible: waiting will not help.
  bool ever_fits(const std::vector<PodSet>& gang,
                 const std::vector<ClusterIdx>* allowed = nullptr) const;
  // How many of the gang's pods fit in cluster `c` right now, placing greedily (explanations).
  int64_t pods_that_fit(ClusterIdx c, const std::vector<PodSet>& gang) const;
  // For a gang with a required topology: the domain of cluster `c` that holds the most pods of
  // the first required pod set (or group) that fits in no domain now; nullopt when every one
  // fits somewhere or none is required.
  std::optional<DomainRoom> largest_domain(ClusterIdx c, const std::vector<PodSet>& gang) const;
  // The label value of node `n` at `level` (1..kLabelledLevels), "" when it has none.
  const std::string& topology_value(NodeIdx n, uint8_t level) const;

  // Nodes that find(), find_in() and pods_that_fit() must not use until it is reset (null):
  // other gangs' reservations (docs/scheduling.md "Reservation and backfill"). Must outlive its
  // use.
  void set_excluded(const BitWords* nodes) const { excluded_ = nodes; }
  bool excluded(NodeIdx n) const { return excluded_ != nullptr && excluded_->test(n); }

  void commit(const std::vector<PodSet>& gang, const Placement& placement);
  void release(const std::vector<PodSet>& gang, const Placement& placement);
  // Low level: used by commit/release.
  void reserve(NodeIdx n, const ResourceVector& amount);
  void unreserve(NodeIdx n, const ResourceVector& amount);

 private:
  struct Node {
    ClusterIdx cluster = 0;
    uint32_t pool = 0;
    uint32_t slot = 0;  // its place among its pool's members
    std::string instance_id;
    ResourceVector capacity;
    ResourceVector free;
    bool schedulable = false;
    bool alive = true;
    std::array<uint32_t, kLabelledLevels> domain{};  // 1-based into domains_; 0 = no label
  };
  // The nodes of one cluster sharing a label value at one level.
  struct Domain {
    ClusterIdx cluster = 0;
    uint8_t level = 0;
    std::string value;
    std::vector<NodeIdx> nodes;  // alive members, ascending
    int64_t free_gpus = 0;       // over its schedulable members
  };
  // Pod sets that must share a domain, and how.
  struct Unit {
    uint8_t level = 0;
    bool required = false;
    std::vector<uint16_t> pod_sets;  // in placement order
    int64_t pods = 0;
    int64_t gpus = 0;
  };
  struct Pool {
    std::string instance_type;
    // Every node ever of this type, by slot: ascending node index, since a node joins the
    // pool of its type when it is created.
    std::vector<NodeIdx> members;
    // The schedulable nodes by free GPUs, each a bitset over the slots: reading the buckets up
    // from a GPU count and each bucket's bits upwards visits nodes in (free GPUs, node index)
    // order, the best-fit order; moving a node between buckets is two bit flips.
    struct Bucket {
      BitWords slots;
      int64_t count = 0;
    };
    std::map<int64_t, Bucket> by_free;
    int64_t live = 0;     // alive nodes of this type (any schedulable state)
    ResourceVector free;  // summed over the schedulable nodes (estimate())
  };
  struct Cluster {
    std::string name;
    std::vector<Pool> pools;
    std::map<std::string, uint32_t, std::less<>> pool_of;
    std::map<std::string, NodeIdx, std::less<>> node_of;
    std::map<std::string, int64_t, std::less<>> targets;
    int64_t free_gpus = 0;
    std::array<std::vector<uint32_t>, kLabelledLevels> domains;  // ids per level, creation order
  };
  // The capacity a gang being placed has already taken on nodes, not yet committed.
  struct Overlay {
    std::vector<std::pair<NodeIdx, ResourceVector>> used;

    ResourceVector* find(NodeIdx n) {
      for (auto& [node, amount] : used) {
        if (node == n) return &amount;
      }
      return nullptr;
    }
    const ResourceVector* find(NodeIdx n) const {
      for (const auto& [node, amount] : used) {
        if (node == n) return &amount;
      }
      return nullptr;
    }
    void add(NodeIdx n, const ResourceVector& amount) {
      if (ResourceVector* v = find(n)) {
        *v += amount;
      } else {
        used.emplace_back(n, amount);
      }
    }
  };
  // A candidate domain for a unit: its nodes and free GPUs (a host is a one-node domain).
  struct Candidate {
    int64_t free_gpus = 0;
    uint32_t id = 0;  // domain id, or node index + 1 for a host
    const std::vector<NodeIdx>* nodes = nullptr;
    NodeIdx host = 0;
  };

  uint32_t pool(Cluster& c, std::string_view instance_type);
  void index_in(NodeIdx n);
  void index_out(NodeIdx n);
  std::optional<NodeIdx> best_node(const Cluster& c, const PodSet& ps,
                                   const Overlay& overlay) const;
  std::optional<Placement> place(ClusterIdx c, const std::vector<PodSet>& gang,
                                 int64_t* placed) const;
  // Topology (placement_topology.cpp).
  void set_topology(NodeIdx n, const NodeTopology& topology);
  static std::vector<Unit> units_of(const std::vector<PodSet>& gang);
  std::vector<Candidate> candidates(ClusterIdx c, uint8_t level) const;
  // The best node for one pod of `ps` among `nodes` (a domain), or nullopt.
  std::optional<NodeIdx> best_in(const std::vector<NodeIdx>& nodes, const PodSet& ps,
                                 const Overlay& overlay) const;
  // Places the unit's pods inside one candidate; on failure `overlay` and `p` are as before and
  // `*placed` says how many pods fitted.
  bool place_in(const Candidate& d, const std::vector<PodSet>& gang, const Unit& u,
                Overlay& overlay, Placement& p, int64_t* placed) const;
  bool place_unit(ClusterIdx c, const std::vector<PodSet>& gang, const Unit& u, Overlay& overlay,
                  Placement& p) const;
  bool spread_unit(ClusterIdx c, const std::vector<PodSet>& gang, const Unit& u, Overlay& overlay,
                   Placement& p) const;
  bool unit_ever_fits(const Cluster& c, const std::vector<PodSet>& gang, const Unit& u) const;

  std::vector<Node> nodes_;
  std::vector<Cluster> clusters_;
  std::map<std::string, ClusterIdx, std::less<>> cluster_of_;
  std::map<std::string, ResourceVector, std::less<>> type_capacity_;
  std::vector<Domain> domains_;
  mutable const BitWords* excluded_ = nullptr;
  std::map<std::tuple<ClusterIdx, uint8_t, std::string>, uint32_t, std::less<>> domain_of_;
};

// The pod-set order placement uses: most GPUs first, then most CPU, then index.
std::vector<uint16_t> placement_order(const std::vector<PodSet>& gang);

}  // namespace gf::sched
