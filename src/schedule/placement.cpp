#include "schedule/placement.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace gf::sched {

std::vector<uint16_t> placement_order(const std::vector<PodSet>& gang) {
  std::vector<uint16_t> order(gang.size());
  std::iota(order.begin(), order.end(), uint16_t{0});
  std::stable_sort(order.begin(), order.end(), [&](uint16_t a, uint16_t b) {
    const ResourceVector& ra = gang[a].request;
    const ResourceVector& rb = gang[b].request;
    if (ra.get(kGpu) != rb.get(kGpu)) return ra.get(kGpu) > rb.get(kGpu);
    if (ra.get(kCpu) != rb.get(kCpu)) return ra.get(kCpu) > rb.get(kCpu);
    return a < b;
  });
  return order;
}

ClusterIdx PlacementIndex::cluster(std::string_view name) {
  if (auto it = cluster_of_.find(name); it != cluster_of_.end()) return it->second;
  const auto idx = static_cast<ClusterIdx>(clusters_.size());
  clusters_.push_back(Cluster{});
  clusters_.back().name = std::string(name);
  cluster_of_.emplace(std::string(name), idx);
  return idx;
}

std::optional<ClusterIdx> PlacementIndex::find_cluster(std::string_view name) const {
  auto it = cluster_of_.find(name);
  if (it == cluster_of_.end()) return std::nullopt;
  return it->second;
}

uint32_t PlacementIndex::pool(Cluster& c, std::string_view instance_type) {
  if (auto it = c.pool_of.find(instance_type); it != c.pool_of.end()) return it->second;
  const auto idx = static_cast<uint32_t>(c.pools.size());
  Pool fresh;
  fresh.instance_type = std::string(instance_type);
  c.pools.push_back(std::move(fresh));
  c.pool_of.emplace(std::string(instance_type), idx);
  return idx;
}

void PlacementIndex::index_in(NodeIdx n) {
  Node& node = nodes_[n];
  if (!node.alive || !node.schedulable) return;
  Cluster& c = clusters_[node.cluster];
  Pool& pool = c.pools[node.pool];
  Pool::Bucket& bucket = pool.by_free[node.free.get(kGpu)];
  bucket.slots.set(node.slot);
  bucket.count += 1;
  pool.free += node.free;
  c.free_gpus += node.free.get(kGpu);
  for (uint32_t d : node.domain) {
    if (d != 0) domains_[d - 1].free_gpus += node.free.get(kGpu);
  }
}

void PlacementIndex::index_out(NodeIdx n) {
  Node& node = nodes_[n];
  if (!node.alive || !node.schedulable) return;
  Cluster& c = clusters_[node.cluster];
  Pool& pool = c.pools[node.pool];
  auto it = pool.by_free.find(node.free.get(kGpu));
  if (it != pool.by_free.end()) {
    it->second.slots.clear(node.slot);
    if (--it->second.count == 0) pool.by_free.erase(it);
  }
  pool.free -= node.free;
  c.free_gpus -= node.free.get(kGpu);
  for (uint32_t d : node.domain) {
    if (d != 0) domains_[d - 1].free_gpus -= node.free.get(kGpu);
  }
}

NodeIdx PlacementIndex::upsert_node(ClusterIdx ci, std::string_view instance_id,
                                    std::string_view instance_type, const ResourceVector& capacity,
                                    bool schedulable, const NodeTopology& topology) {
  Cluster& c = clusters_[ci];
  if (auto it = c.node_of.find(instance_id); it != c.node_of.end()) {
    set_schedulable(it->second, schedulable);
    set_topology(it->second, topology);
    return it->second;
  }
  const auto n = static_cast<NodeIdx>(nodes_.size());
  Node node;
  node.cluster = ci;
  node.pool = pool(c, instance_type);
  node.slot = static_cast<uint32_t>(c.pools[node.pool].members.size());
  c.pools[node.pool].members.push_back(n);
  node.instance_id = std::string(instance_id);
  node.capacity = capacity;
  node.free = capacity;
  node.schedulable = schedulable;
  nodes_.push_back(std::move(node));
  c.node_of.emplace(std::string(instance_id), n);
  c.pools[nodes_[n].pool].live += 1;
  type_capacity_.try_emplace(std::string(instance_type), capacity);
  index_in(n);
  set_topology(n, topology);
  return n;
}

std::optional<NodeIdx> PlacementIndex::find_node(ClusterIdx c, std::string_view instance_id) const {
  const auto& map = clusters_[c].node_of;
  auto it = map.find(instance_id);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

void PlacementIndex::set_schedulable(NodeIdx n, bool schedulable) {
  if (nodes_[n].schedulable == schedulable) return;
  index_out(n);
  nodes_[n].schedulable = schedulable;
  index_in(n);
}

void PlacementIndex::remove_node(NodeIdx n) {
  Node& node = nodes_[n];
  if (!node.alive) return;
  set_topology(n, NodeTopology{});
  index_out(n);
  Cluster& c = clusters_[node.cluster];
  c.pools[node.pool].live -= 1;
  c.node_of.erase(node.instance_id);
  node.alive = false;
}

std::vector<NodeIdx> PlacementIndex::nodes_of(ClusterIdx c) const {
  std::vector<NodeIdx> out;
  out.reserve(clusters_[c].node_of.size());
  for (const auto& [id, n] : clusters_[c].node_of) out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

void PlacementIndex::set_targets(ClusterIdx c,
                                 std::map<std::string, int64_t, std::less<>> targets) {
  clusters_[c].targets = std::move(targets);
}

void PlacementIndex::set_type_capacity(std::string_view instance_type,
                                       const ResourceVector& capacity) {
  type_capacity_[std::string(instance_type)] = capacity;
}

void PlacementIndex::reserve(NodeIdx n, const ResourceVector& amount) {
  index_out(n);
  nodes_[n].free -= amount;
  index_in(n);
}

void PlacementIndex::unreserve(NodeIdx n, const ResourceVector& amount) {
  index_out(n);
  nodes_[n].free += amount;
  index_in(n);
}

void PlacementIndex::commit(const std::vector<PodSet>& gang, const Placement& placement) {
  for (const PodBinding& b : placement.pods) reserve(b.node, gang[b.pod_set].request);
}

void PlacementIndex::release(const std::vector<PodSet>& gang, const Placement& placement) {
  for (const PodBinding& b : placement.pods) unreserve(b.node, gang[b.pod_set].request);
}

std::optional<NodeIdx> PlacementIndex::best_node(const Cluster& c, const PodSet& ps,
                                                 const Overlay& overlay) const {
  const int64_t gpus = ps.request.get(kGpu);
  std::optional<NodeIdx> best;
  int64_t best_free = std::numeric_limits<int64_t>::max();
  auto consider = [&](NodeIdx n, int64_t free_gpus) {
    if (free_gpus < best_free || (free_gpus == best_free && best && n < *best)) {
      best = n;
      best_free = free_gpus;
    }
  };
  // Nodes this gang already uses: packing more of it there strands the fewest GPUs.
  for (const auto& [n, used] : overlay.used) {
    const Node& node = nodes_[n];
    if (!ps.instance_type.empty() && c.pools[node.pool].instance_type != ps.instance_type) continue;
    if (excluded(n)) continue;
    const ResourceVector effective = node.free - used;
    if (ps.request.fits_within(effective)) consider(n, effective.get(kGpu));
  }
  // The first node in (free GPUs, node index) order from `gpus` up that takes the pod.
  auto scan = [&](const Pool& pool) {
    for (auto b = pool.by_free.lower_bound(gpus); b != pool.by_free.end(); ++b) {
      if (b->first > best_free) return;
      const bool searched_on = b->second.slots.each([&](size_t slot) {
        const NodeIdx n = pool.members[slot];
        if (overlay.find(n) != nullptr || !ps.request.fits_within(nodes_[n].free) || excluded(n))
          return true;
        consider(n, b->first);
        return false;
      });
      if (!searched_on) return;
    }
  };
  if (!ps.instance_type.empty()) {
    auto it = c.pool_of.find(ps.instance_type);
    if (it != c.pool_of.end()) scan(c.pools[it->second]);
  } else {
    for (const Pool& pool : c.pools) scan(pool);
  }
  return best;
}

std::optional<Placement> PlacementIndex::place(ClusterIdx ci, const std::vector<PodSet>& gang,
                                               int64_t* placed) const {
  const Cluster& c = clusters_[ci];
  Overlay overlay;
  Placement p;
  p.cluster = ci;
  int64_t count = 0;
  int64_t gang_gpus = 0;
  // Pod sets bound to a topology first: they have the fewest places to go.
  for (const Unit& u : units_of(gang)) {
    if (!place_unit(ci, gang, u, overlay, p)) {
      if (placed != nullptr) *placed = count;
      return std::nullopt;
    }
    count += u.pods;
    gang_gpus += u.gpus;
  }
  for (uint16_t ps_idx : placement_order(gang)) {
    const PodSet& ps = gang[ps_idx];
    if (ps.topology != 0) continue;
    for (int32_t i = 0; i < ps.count; ++i) {
      std::optional<NodeIdx> n = best_node(c, ps, overlay);
      if (!n) {
        if (placed != nullptr) *placed = count;
        return std::nullopt;
      }
      overlay.add(*n, ps.request);
      p.pods.push_back(PodBinding{ps_idx, static_cast<uint32_t>(i), *n});
      gang_gpus += ps.request.get(kGpu);
      ++count;
    }
  }
  if (placed != nullptr) *placed = count;
  std::sort(p.pods.begin(), p.pods.end(), [](const PodBinding& a, const PodBinding& b) {
    return a.pod_set != b.pod_set ? a.pod_set < b.pod_set : a.index < b.index;
  });
  p.cluster_free_gpus_after = c.free_gpus - gang_gpus;
  for (const auto& [n, used] : overlay.used) p.stranded_gpus += (nodes_[n].free - used).get(kGpu);
  return p;
}

std::optional<Placement> PlacementIndex::find_in(ClusterIdx c,
                                                 const std::vector<PodSet>& gang) const {
  return place(c, gang, nullptr);
}

std::optional<Placement> PlacementIndex::find(const std::vector<PodSet>& gang,
                                              const std::vector<ClusterIdx>* allowed) const {
  int64_t gang_gpus = 0;
  for (const PodSet& ps : gang) gang_gpus += ps.request.get(kGpu) * ps.count;
  std::optional<Placement> best;
  auto consider = [&](ClusterIdx c) {
    if (clusters_[c].free_gpus < gang_gpus) return;
    std::optional<Placement> p = place(c, gang, nullptr);
    if (!p) return;
    // The tightest domain first (docs/scheduling.md "Topology"), then the tightest cluster.
    if (!best || std::tie(p->topology_rank, p->domain_free_gpus_after, p->cluster_free_gpus_after,
                          p->stranded_gpus, clusters_[c].name) <
                     std::tie(best->topology_rank, best->domain_free_gpus_after,
                              best->cluster_free_gpus_after, best->stranded_gpus,
                              clusters_[best->cluster].name)) {
      best = std::move(p);
    }
  };
  if (allowed != nullptr && !allowed->empty()) {
    for (ClusterIdx c : *allowed) {
      if (c < clusters_.size()) consider(c);
    }
  } else {
    for (ClusterIdx c = 0; c < clusters_.size(); ++c) consider(c);
  }
  return best;
}

std::optional<ClusterIdx> PlacementIndex::estimate(const std::vector<PodSet>& gang,
                                                   const std::vector<ClusterIdx>* allowed) const {
  ResourceVector total;                                           // the whole gang
  std::map<std::string_view, ResourceVector, std::less<>> typed;  // pod sets bound to a type
  for (const PodSet& ps : gang) {
    ResourceVector need;
    for (int32_t i = 0; i < ps.count; ++i) need += ps.request;
    total += need;
    if (!ps.instance_type.empty()) typed[ps.instance_type] += need;
  }
  std::optional<ClusterIdx> best;
  std::pair<int64_t, int64_t> best_left;  // (GPUs, CPU) left in the cluster after the gang
  auto consider = [&](ClusterIdx ci) {
    const Cluster& c = clusters_[ci];
    ResourceVector free;
    for (const Pool& p : c.pools) free += p.free;
    if (!total.fits_within(free)) return;
    for (const auto& [type, need] : typed) {
      auto it = c.pool_of.find(type);
      if (it == c.pool_of.end() || !need.fits_within(c.pools[it->second].free)) return;
    }
    const ResourceVector left = free - total;
    const std::pair<int64_t, int64_t> key{left.get(kGpu), left.get(kCpu)};
    if (!best || key < best_left || (key == best_left && c.name < clusters_[*best].name)) {
      best = ci;
      best_left = key;
    }
  };
  if (allowed != nullptr && !allowed->empty()) {
    for (ClusterIdx c : *allowed) {
      if (c < clusters_.size()) consider(c);
    }
  } else {
    for (ClusterIdx c = 0; c < clusters_.size(); ++c) consider(c);
  }
  return best;
}

int64_t PlacementIndex::pods_that_fit(ClusterIdx c, const std::vector<PodSet>& gang) const {
  int64_t placed = 0;
  place(c, gang, &placed);
  return placed;
}

bool PlacementIndex::ever_fits(const std::vector<PodSet>& gang,
                               const std::vector<ClusterIdx>* allowed) const {
  int64_t pods = 0;
  for (const PodSet& ps : gang) pods += ps.count;
  const std::vector<uint16_t> order = placement_order(gang);
  const std::vector<Unit> units = units_of(gang);
  auto fits_cluster = [&](const Cluster& c) {
    for (const Unit& u : units) {
      if (u.required && !unit_ever_fits(c, gang, u)) return false;
    }
    // Virtual empty nodes: per instance type, max(live, target) of them (at most one per pod).
    struct Virtual {
      const std::string* type;
      ResourceVector free;
    };
    std::vector<Virtual> virt;
    std::map<std::string, int64_t, std::less<>> counts;
    for (const Pool& p : c.pools)
      counts[p.instance_type] = std::max(counts[p.instance_type], p.live);
    for (const auto& [type, n] : c.targets) counts[type] = std::max(counts[type], n);
    for (const auto& [type, n] : counts) {
      auto cap = type_capacity_.find(type);
      if (cap == type_capacity_.end()) continue;
      for (int64_t i = 0; i < std::min(n, pods); ++i)
        virt.push_back(Virtual{&cap->first, cap->second});
    }
    for (uint16_t ps_idx : order) {
      const PodSet& ps = gang[ps_idx];
      for (int32_t i = 0; i < ps.count; ++i) {
        Virtual* best = nullptr;
        for (Virtual& v : virt) {
          if (!ps.instance_type.empty() && *v.type != ps.instance_type) continue;
          if (!ps.request.fits_within(v.free)) continue;
          if (best == nullptr || v.free.get(kGpu) < best->free.get(kGpu)) best = &v;
        }
        if (best == nullptr) return false;
        best->free -= ps.request;
      }
    }
    return true;
  };
  if (allowed != nullptr && !allowed->empty()) {
    for (ClusterIdx c : *allowed) {
      if (c < clusters_.size() && fits_cluster(clusters_[c])) return true;
    }
    return false;
  }
  for (const Cluster& c : clusters_) {
    if (fits_cluster(c)) return true;
  }
  return false;
}

}  // namespace gf::sched
