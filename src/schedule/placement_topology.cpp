// Topology-aware placement (docs/scheduling.md "Topology"): nodes grouped into domains by their
// topology labels, and the pod sets of a gang that ask for a level placed inside the tightest
// domain of that level that holds them, in the spirit of Kueue's BestFit profile — across every
// member cluster at once, since find() compares the domains each cluster offers.
#include <algorithm>

#include "schedule/placement.h"

namespace gf::sched {

void PlacementIndex::set_topology(NodeIdx n, const NodeTopology& topology) {
  Node& node = nodes_[n];
  bool same = true;
  for (size_t l = 0; l < kLabelledLevels && same; ++l) {
    const uint32_t d = node.domain[l];
    same = (d == 0 ? topology[l].empty() : domains_[d - 1].value == topology[l]);
  }
  if (same) return;
  index_out(n);  // the old domains lose its free GPUs; index_in() gives them to the new ones
  for (size_t l = 0; l < kLabelledLevels; ++l) {
    if (const uint32_t old = node.domain[l]; old != 0) std::erase(domains_[old - 1].nodes, n);
    node.domain[l] = 0;
    if (topology[l].empty() || !node.alive) continue;
    const auto level = static_cast<uint8_t>(l + 1);
    auto key = std::make_tuple(node.cluster, level, topology[l]);
    auto it = domain_of_.find(key);
    if (it == domain_of_.end()) {
      domains_.push_back(Domain{node.cluster, level, topology[l], {}, 0});
      const auto id = static_cast<uint32_t>(domains_.size());
      clusters_[node.cluster].domains[l].push_back(id);
      it = domain_of_.emplace(std::move(key), id).first;
    }
    std::vector<NodeIdx>& members = domains_[it->second - 1].nodes;
    members.insert(std::ranges::lower_bound(members, n), n);
    node.domain[l] = it->second;
  }
  index_in(n);
}

const std::string& PlacementIndex::topology_value(NodeIdx n, uint8_t level) const {
  static const std::string kNone;
  if (level == 0 || level > kLabelledLevels) return kNone;
  const uint32_t d = nodes_[n].domain[level - 1];
  return d == 0 ? kNone : domains_[d - 1].value;
}

std::vector<PlacementIndex::Unit> PlacementIndex::units_of(const std::vector<PodSet>& gang) {
  std::vector<Unit> units;
  if (std::ranges::none_of(gang, [](const PodSet& ps) { return ps.topology != 0; })) return units;
  std::vector<uint16_t> group_of_unit;  // each unit's topology_group (0 = a pod set alone)
  for (uint16_t i : placement_order(gang)) {
    const PodSet& ps = gang[i];
    if (ps.topology == 0) continue;
    Unit* u = nullptr;
    for (size_t k = 0; k < units.size() && ps.topology_group != 0; ++k) {
      if (group_of_unit[k] == ps.topology_group) u = &units[k];
    }
    if (u == nullptr) {
      units.push_back(Unit{ps.topology, ps.topology_required, {}, 0, 0});
      group_of_unit.push_back(ps.topology_group);
      u = &units.back();
    }
    // A group whose pod sets ask differently gets the strictest of their requests.
    u->level = std::max(u->level, ps.topology);
    u->required = u->required || ps.topology_required;
    u->pod_sets.push_back(i);
    u->pods += ps.count;
    u->gpus += ps.count * ps.request.get(kGpu);
  }
  return units;
}

std::vector<PlacementIndex::Candidate> PlacementIndex::candidates(ClusterIdx ci,
                                                                  uint8_t level) const {
  std::vector<Candidate> out;
  const Cluster& c = clusters_[ci];
  if (level == kHostLevel) {
    for (const auto& [id, n] : c.node_of) {
      if (schedulable(n)) out.push_back(Candidate{nodes_[n].free.get(kGpu), n + 1, nullptr, n});
    }
    return out;
  }
  for (uint32_t id : c.domains[level - 1]) {
    const Domain& d = domains_[id - 1];
    if (!d.nodes.empty()) out.push_back(Candidate{d.free_gpus, id, &d.nodes, 0});
  }
  return out;
}

std::optional<NodeIdx> PlacementIndex::best_in(const std::vector<NodeIdx>& nodes, const PodSet& ps,
                                               const Overlay& overlay) const {
  std::optional<NodeIdx> best;
  int64_t best_free = 0;
  for (NodeIdx n : nodes) {
    if (!schedulable(n) || excluded(n)) continue;
    const Node& node = nodes_[n];
    if (!ps.instance_type.empty() &&
        clusters_[node.cluster].pools[node.pool].instance_type != ps.instance_type) {
      continue;
    }
    const ResourceVector* used = overlay.find(n);
    const ResourceVector effective = used != nullptr ? node.free - *used : node.free;
    if (!ps.request.fits_within(effective)) continue;
    if (!best || effective.get(kGpu) < best_free) {  // ascending order: ties keep the lower index
      best = n;
      best_free = effective.get(kGpu);
    }
  }
  return best;
}

bool PlacementIndex::place_in(const Candidate& d, const std::vector<PodSet>& gang, const Unit& u,
                              Overlay& overlay, Placement& p, int64_t* placed) const {
  const Overlay saved = overlay;
  const size_t before = p.pods.size();
  const std::vector<NodeIdx> host{d.host};
  const std::vector<NodeIdx>& nodes = d.nodes != nullptr ? *d.nodes : host;
  const Cluster& c = clusters_[p.cluster];
  // A domain that is the whole cluster (layer 1 in one network) needs no per-node filter.
  const bool whole = d.nodes != nullptr && nodes.size() == c.node_of.size();
  int64_t count = 0;
  for (uint16_t ps_idx : u.pod_sets) {
    const PodSet& ps = gang[ps_idx];
    for (int32_t i = 0; i < ps.count; ++i) {
      const std::optional<NodeIdx> n =
          whole ? best_node(c, ps, overlay) : best_in(nodes, ps, overlay);
      if (!n) {
        overlay = saved;
        p.pods.resize(before);
        if (placed != nullptr) *placed = count;
        return false;
      }
      overlay.add(*n, ps.request);
      p.pods.push_back(PodBinding{ps_idx, static_cast<uint32_t>(i), *n});
      ++count;
    }
  }
  if (placed != nullptr) *placed = count;
  return true;
}

bool PlacementIndex::place_unit(ClusterIdx ci, const std::vector<PodSet>& gang, const Unit& u,
                                Overlay& overlay, Placement& p) const {
  // The requested level first; a preferred request climbs one level at a time (Kueue's rule).
  for (int level = u.level, climbed = 0; level >= 1; --level, ++climbed) {
    std::vector<Candidate> cands = candidates(ci, static_cast<uint8_t>(level));
    std::erase_if(cands, [&](const Candidate& d) { return d.free_gpus < u.gpus; });
    // The tightest domain that holds the unit: the fewest free GPUs, then creation order.
    std::ranges::sort(cands, [](const Candidate& a, const Candidate& b) {
      return a.free_gpus != b.free_gpus ? a.free_gpus < b.free_gpus : a.id < b.id;
    });
    for (const Candidate& d : cands) {
      if (!place_in(d, gang, u, overlay, p, nullptr)) continue;
      p.topology_rank += climbed;
      p.domain_free_gpus_after += d.free_gpus - u.gpus;
      return true;
    }
    if (u.required) return false;
  }
  return spread_unit(ci, gang, u, overlay, p);
}

bool PlacementIndex::spread_unit(ClusterIdx ci, const std::vector<PodSet>& gang, const Unit& u,
                                 Overlay& overlay, Placement& p) const {
  // A preferred request no one domain holds: the fewest domains of its level, most free first,
  // then any node (nodes without the label, or hosts packed as best_node packs them).
  std::vector<Candidate> cands;
  if (u.level != kHostLevel) cands = candidates(ci, u.level);
  std::ranges::sort(cands, [](const Candidate& a, const Candidate& b) {
    return a.free_gpus != b.free_gpus ? a.free_gpus > b.free_gpus : a.id < b.id;
  });
  const Cluster& c = clusters_[ci];
  const Overlay saved = overlay;
  const size_t before = p.pods.size();
  size_t d = 0;
  int32_t used = 0;         // domains the unit touches (the fallback counts as one)
  bool in_current = false;  // cands[d] already counted
  bool fell_back = false;
  for (uint16_t ps_idx : u.pod_sets) {
    const PodSet& ps = gang[ps_idx];
    for (int32_t i = 0; i < ps.count; ++i) {
      std::optional<NodeIdx> n;
      while (!n && d < cands.size()) {
        n = best_in(*cands[d].nodes, ps, overlay);
        if (!n) {
          ++d;
          in_current = false;
        } else if (!in_current) {
          ++used;
          in_current = true;
        }
      }
      if (!n && (n = best_node(c, ps, overlay)) && !fell_back) {
        ++used;
        fell_back = true;
      }
      if (!n) {
        overlay = saved;
        p.pods.resize(before);
        return false;
      }
      overlay.add(*n, ps.request);
      p.pods.push_back(PodBinding{ps_idx, static_cast<uint32_t>(i), *n});
    }
  }
  p.topology_rank += kSpread + used;
  return true;
}

bool PlacementIndex::unit_ever_fits(const Cluster& c, const std::vector<PodSet>& gang,
                                    const Unit& u) const {
  // Nodes still to come may complete a domain: wait for them rather than park.
  for (const auto& [type, target] : c.targets) {
    auto it = c.pool_of.find(type);
    if (it == c.pool_of.end() || c.pools[it->second].live < target) return true;
  }
  // Would the unit fit among these nodes, were they empty?
  auto fits_empty = [&](const std::vector<NodeIdx>& nodes) {
    std::vector<ResourceVector> room;
    room.reserve(nodes.size());
    for (NodeIdx n : nodes) room.push_back(nodes_[n].capacity);
    for (uint16_t ps_idx : u.pod_sets) {
      const PodSet& ps = gang[ps_idx];
      for (int32_t i = 0; i < ps.count; ++i) {
        size_t best = room.size();
        for (size_t k = 0; k < room.size(); ++k) {
          const Node& node = nodes_[nodes[k]];
          if (!ps.instance_type.empty() && c.pools[node.pool].instance_type != ps.instance_type)
            continue;
          if (!ps.request.fits_within(room[k])) continue;
          if (best == room.size() || room[k].get(kGpu) < room[best].get(kGpu)) best = k;
        }
        if (best == room.size()) return false;
        room[best] -= ps.request;
      }
    }
    return true;
  };
  if (u.level == kHostLevel) {
    for (const auto& [id, n] : c.node_of) {
      if (fits_empty({n})) return true;
    }
    return false;
  }
  for (uint32_t id : c.domains[u.level - 1]) {
    if (fits_empty(domains_[id - 1].nodes)) return true;
  }
  return false;
}

std::optional<DomainRoom> PlacementIndex::largest_domain(ClusterIdx ci,
                                                         const std::vector<PodSet>& gang) const {
  for (const Unit& u : units_of(gang)) {
    if (!u.required) continue;
    Placement scratch;
    scratch.cluster = ci;
    std::optional<DomainRoom> best;
    bool fits = false;
    for (const Candidate& d : candidates(ci, u.level)) {
      Overlay overlay;
      int64_t pods = 0;
      fits = place_in(d, gang, u, overlay, scratch, &pods);
      if (fits) break;
      if (!best || pods > best->pods) {
        best = DomainRoom{ci, u.level, "", pods, u.pods};
        best->value = d.nodes != nullptr ? domains_[d.id - 1].value : nodes_[d.host].instance_id;
      }
      scratch.pods.clear();
    }
    if (fits) continue;
    if (!best) best = DomainRoom{ci, u.level, "", 0, u.pods};
    return best;
  }
  return std::nullopt;
}

}  // namespace gf::sched
