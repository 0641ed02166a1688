// Capacity delivered and provisioning counts of a simulation (docs/scenarios.md metrics.json),
// from applying its journal records, as they are appended, to a state of its own that follows
// clusters and health only (FleetState::apply_clusters_and_health): between two journal records
// the fleet does not change, so integrating the state seen after each record is exact. It also
// feeds the offered GPUs of every stretch to the fleet KPIs' time series.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "journal/journal.h"
#include "model/catalog.h"
#include "sim/fleet_kpis.h"
#include "sim/simulation.h"
#include "state/cluster_events.h"
#include "state/fleet_state.h"

namespace gf {

class MetricsReplay {
 public:
  // `kpis` (may be null) receives the offered GPUs of every stretch.
  explicit MetricsReplay(FleetKpis* kpis = nullptr) : kpis_(kpis) {}

  // One journal record, as it is appended (the simulation's journal is an ObservedJournal):
  // records come in sequence order, each exactly once.
  Status on_record(const EventRecord& rec) {
    const Time at = std::max(last_, rec.time);
    integrate(state_, last_, at);
    last_ = at;
    count(state_.view(), rec);
    GF_RETURN_IF_ERROR(state_.apply_clusters_and_health(rec));
    observe(state_, rec.time);
    return ok_status();
  }

  // Whether on_record reads the payload of a record of this type: the state it keeps reads those
  // of clusters, health and the control plane, and count() only those of clusters.
  static bool reads_payload(std::string_view type) {
    return FleetState::clusters_and_health_reads(type);
  }

  // The stretch from the last record to the end of the run.
  void finish(Time end) {
    integrate(state_, last_, std::max(last_, end));
    last_ = std::max(last_, end);
  }

  // GPU-hours the running instances offered (utilization's denominator).
  double gpu_hours() const {
    double total = 0;
    for (const auto& [name, c] : clusters_) {
      for (const auto& [gname, g] : c.groups) {
        const InstanceTypeInfo* info = Catalog::builtin().find(g.instance_type);
        if (info != nullptr) total += static_cast<double>(g.running_us) * info->gpus / 3.6e9;
      }
    }
    return total;
  }

  Json to_json(const Json& clusters_now) const {
    Json clusters = Json::array();
    for (const auto& [name, c] : clusters_) {
      Json groups = Json::array();
      int64_t running = 0, target = 0;
      for (const auto& [gname, g] : c.groups) {
        running += g.running_us;
        target += g.target_us;
        Json gj = {{"InstanceGroupName", gname},
                   {"InstanceType", g.instance_type},
                   {"runningInstanceHours", hours_of(g.running_us)},
                   {"targetInstanceHours", hours_of(g.target_us)},
                   {"delivered", fraction(g.running_us, g.target_us)},
                   {"timeToInServiceSeconds", seconds_or_null(g.to_in_service)},
                   {"timeToTargetSeconds", seconds_or_null(g.to_target)}};
        groups.push_back(std::move(gj));
      }
      Json cj = {{"ClusterName", name},
                 {"runningInstanceHours", hours_of(running)},
                 {"targetInstanceHours", hours_of(target)},
                 {"delivered", fraction(running, target)},
                 {"timeToInServiceSeconds", seconds_or_null(c.to_in_service)},
                 {"groups", std::move(groups)}};
      for (const auto& now : clusters_now) {
        if (now.value("ClusterName", "") == name) cj["ClusterStatus"] = now["ClusterStatus"];
      }
      clusters.push_back(std::move(cj));
    }
    Json by_reason = Json::object();
    int64_t failures = 0;
    for (const auto& [reason, n] : failures_) {
      by_reason[reason] = n;
      failures += n;
    }
    Json provisioning = {{"launches", launches_},
                         {"launchFailures", failures},
                         {"launchFailuresByReason", std::move(by_reason)},
                         {"retries", retries_},
                         {"rollbacks", min_count_rollbacks_ + legacy_rollbacks_},
                         {"minCountRollbacks", min_count_rollbacks_},
                         {"legacyUpdateRollbacks", legacy_rollbacks_},
                         {"clustersFailed", clusters_failed_},
                         {"terminations", terminations_}};
    return Json{{"capacityDelivered", std::move(clusters)},
                {"provisioning", std::move(provisioning)}};
  }

 private:
  struct GroupAcc {
    std::string instance_type;
    int64_t running_us = 0;  // Running instances × µs
    int64_t target_us = 0;   // TargetCount × µs
    std::optional<Duration> to_in_service;
    std::optional<Duration> to_target;  // first time Running reached a TargetCount above 0
  };
  struct ClusterAcc {
    std::map<std::string, GroupAcc> groups;  // by name; deleted groups keep their totals
    std::optional<Duration> to_in_service;
  };

  static Json fraction(int64_t num, int64_t den) {
    if (den <= 0) return nullptr;
    return round4(static_cast<double>(num) / static_cast<double>(den));
  }

  // Running nodes per group of `c` (in group order), kept up to date only when the cluster
  // changed, and then for the nodes the state's node log names when it can (a full recount
  // walks every node of the cluster).
  const std::vector<int64_t>& running(const FleetState& state, const std::string& name,
                                      const Cluster& c) {
    auto rev = state.cluster_revisions().find(name);
    const uint64_t revision = rev == state.cluster_revisions().end() ? 0 : rev->second;
    RunningCount& rc = running_[name];
    if (rc.revision == revision && rc.counts.size() == c.groups.size() && revision != 0)
      return rc.counts;
    // The group index a node counts for, or npos.
    auto group_of = [&](const Node& n) {
      if (!n.is_current()) return std::string::npos;
      for (size_t i = 0; i < c.groups.size(); ++i) {
        if (c.groups[i].spec.name == n.group) return i;
      }
      return std::string::npos;
    };
    std::optional<std::vector<std::string>> changed;
    if (rc.revision != 0 && revision != 0 && rc.counts.size() == c.groups.size())
      changed = state.nodes_changed_since(name, rc.revision);
    if (changed) {
      for (const std::string& id : *changed) {
        if (auto was = rc.counted.find(id); was != rc.counted.end()) {
          --rc.counts[was->second];
          rc.counted.erase(was);
        }
        auto it = c.nodes.find(id);
        if (it == c.nodes.end()) continue;
        if (const size_t g = group_of(it->second); g != std::string::npos) {
          ++rc.counts[g];
          rc.counted.emplace(id, g);
        }
      }
    } else {
      rc.counts.assign(c.groups.size(), 0);
      rc.counted.clear();
      for (const auto& [id, n] : c.nodes) {
        if (const size_t g = group_of(n); g != std::string::npos) {
          ++rc.counts[g];
          rc.counted.emplace_hint(rc.counted.end(), id, g);
        }
      }
    }
    rc.revision = revision;
    return rc.counts;
  }

  void integrate(const FleetState& state, Time from, Time to) {
    const FleetView& view = state.view();
    const int64_t us = (to - from).count();
    double gpus = 0;
    for (const auto& [name, c] : view.clusters) {
      ClusterAcc& acc = clusters_[name];
      const std::vector<int64_t>& run = running(state, name, *c);
      for (size_t gi = 0; gi < c->groups.size(); ++gi) {
        const auto& g = c->groups[gi];
        GroupAcc& ga = acc.groups[g.spec.name];
        ga.instance_type = g.spec.instance_type;
        ga.running_us += run[gi] * us;
        ga.target_us += g.spec.target * us;
        const InstanceTypeInfo* info = Catalog::builtin().find(g.spec.instance_type);
        if (info != nullptr) gpus += static_cast<double>(run[gi] * info->gpus);
      }
    }
    if (kpis_ != nullptr && us > 0) kpis_->add_offered(from, to, gpus);
  }

  // Counts the record against the state before it is applied (a node's status then says
  // whether an unhealthy report came at launch or later in its life).
  void count(const FleetView& view, const EventRecord& rec) {
    const std::string& type = rec.type;
    if (type == event_type::kNodeLaunchRequested) {
      ++launches_;
    } else if (type == event_type::kGroupBackoff) {
      ++retries_;
    } else if (type == event_type::kGroupRollback) {
      ++min_count_rollbacks_;
    } else if (type == event_type::kClusterRollback) {
      ++legacy_rollbacks_;
    } else if (type == event_type::kNodeTerminateRequested) {
      ++terminations_;
    } else if (type == event_type::kNodeLifecycleFailed) {
      ++failures_["LifecycleScriptFailure"];
    } else if (type == event_type::kNodeLaunchFailed || type == event_type::kNodeUnhealthy ||
               type == event_type::kClusterStatus) {
      // One that does not decode is not counted; applying it next fails the run.
      auto p = parse_json(rec.payload, kStoredTextLimits);
      if (!p.ok()) return;
      if (type == event_type::kClusterStatus) {
        auto e = cluster_events::decode<cluster_events::StatusChanged>(*p);
        clusters_failed_ += e.ok() && e->status == ClusterStatus::kFailed;
      } else if (type == event_type::kNodeLaunchFailed) {
        if (auto e = cluster_events::decode<cluster_events::LaunchFailed>(*p); e.ok())
          ++failures_[e->reason];
      } else if (auto e = cluster_events::decode<cluster_events::NodeUnhealthy>(*p); e.ok()) {
        // An unhealthy report while the node is still Pending is a launch failure.
        if (const Cluster* c = view.find_cluster(e->cluster)) {
          auto it = c->nodes.find(e->instance_id);
          if (it != c->nodes.end() && it->second.status == NodeStatus::kPending) {
            ++failures_["UnhealthyInstance"];
          }
        }
      }
    }
  }

  // First InService of each cluster and group, and first full TargetCount of each group, counted
  // from its creation.
  void observe(const FleetState& state, Time at) {
    const FleetView& view = state.view();
    for (const auto& [name, c] : view.clusters) {
      ClusterAcc& acc = clusters_[name];
      if (!acc.to_in_service && c->status == ClusterStatus::kInService) {
        acc.to_in_service = at - c->creation_time;
      }
      const std::vector<int64_t>& run = running(state, name, *c);
      for (size_t gi = 0; gi < c->groups.size(); ++gi) {
        const auto& g = c->groups[gi];
        GroupAcc& ga = acc.groups[g.spec.name];
        ga.instance_type = g.spec.instance_type;
        if (!ga.to_in_service && g.status == GroupStatus::kInService) {
          ga.to_in_service = at - g.created_at;
        }
        if (!ga.to_target && g.spec.target > 0 && run[gi] >= g.spec.target) {
          ga.to_target = at - g.created_at;
        }
      }
    }
  }

  static double round4(double x) { return std::round(x * 1e4) / 1e4; }
  static double hours_of(int64_t instance_us) {
    return round4(static_cast<double>(instance_us) / 3.6e9);
  }
  static Json seconds_or_null(std::optional<Duration> d) {
    if (!d) return nullptr;
    return seconds_since_start(kSimEpoch + *d);
  }

  FleetKpis* kpis_ = nullptr;
  FleetState state_;
  Time last_ = kSimEpoch;
  struct RunningCount {
    uint64_t revision = 0;                  // the cluster revision counted
    std::vector<int64_t> counts;            // Running nodes per group, in group order
    std::map<std::string, size_t> counted;  // instance id → its group, for nodes counted
  };
  std::map<std::string, RunningCount> running_;  // by cluster
  std::map<std::string, ClusterAcc> clusters_;
  std::map<std::string, int64_t> failures_;
  int64_t launches_ = 0;
  int64_t retries_ = 0;
  int64_t min_count_rollbacks_ = 0;
  int64_t legacy_rollbacks_ = 0;
  int64_t clusters_failed_ = 0;
  int64_t terminations_ = 0;
};

}  // namespace gf
