#include "provision/provisioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "provision/slurm_layout.h"
#include "state/cluster_events.h"

namespace gf {

namespace {

using event_codec::to_event;

bool has_group_of(const Cluster& c, NodeType type) {
  return std::any_of(c.groups.begin(), c.groups.end(), [&](const InstanceGroup& g) {
    return g.spec.node_type == type && g.status != GroupStatus::kDeleting;
  });
}

std::string script_name(const InstanceGroup& g) {
  if (g.spec.lifecycle_config.is_object()) {
    std::string uri = g.spec.lifecycle_config.value("SourceS3Uri", std::string());
    std::string on_create = g.spec.lifecycle_config.value("OnCreate", std::string("on_create.sh"));
    return on_create + (uri.empty() ? "" : " (" + uri + ")");
  }
  return "the lifecycle script";
}

}  // namespace

Provisioner::Provisioner(ProvisionOptions options, const Catalog& catalog, Random& rng)
    : options_(std::move(options)), catalog_(catalog), rng_(rng) {}

std::string Provisioner::instance_id(int64_t counter) const {
  return gf::instance_id(options_.id_seed, counter);
}

std::string Provisioner::cluster_id(int64_t counter) const {
  return gf::cluster_id(options_.id_seed, counter);
}

Duration Provisioner::backoff(int64_t failures) {
  int64_t d = options_.retry_base.count();
  for (int64_t i = 1; i < failures && d < options_.retry_max.count(); ++i) d *= 2;
  d = std::min(d, options_.retry_max.count());
  // Equal jitter: half fixed, half random, so intervals grow yet retries do not synchronize.
  const int64_t half = d / 2;
  return Duration(half + rng_.uniform_range(0, half));
}

void Provisioner::wake(ControllerDecision& d, Time t) {
  if (!d.wake_at || t < *d.wake_at) d.wake_at = t;
}

ControllerDecision Provisioner::decide(const FleetState& state, Time now) {
  ControllerDecision d;
  int64_t counter = state.view().instance_counter;
  const auto& revisions = state.cluster_revisions();
  std::unordered_map<std::string, Quiet> quiet;
  std::unordered_map<std::string, IssuedMap> issued;  // this pass's, by cluster
  std::unordered_map<std::string, uint64_t> issued_revision;
  const IssuedMap none;
  for (const auto& [name, cp] : state.view().clusters) {
    auto rev = revisions.find(name);
    const uint64_t revision = rev == revisions.end() ? 0 : rev->second;
    auto prev = issued_.find(name);
    if (auto q = quiet_.find(name); q != quiet_.end() && q->second.revision == revision &&
                                    revision != 0 && (!q->second.wake || now < *q->second.wake)) {
      // Nothing to decide: its intents stay as they were.
      if (prev != issued_.end()) issued.emplace(name, std::move(prev->second));
      if (auto r = issued_revision_.find(name); r != issued_revision_.end())
        issued_revision.emplace(name, r->second);
      if (q->second.wake) wake(d, *q->second.wake);
      quiet.emplace(name, q->second);
      continue;
    }
    const std::optional<Time> outer_wake = d.wake_at;
    d.wake_at.reset();
    const size_t events = d.events.size();
    const size_t intents = d.intents.size();
    // When the node log says which nodes changed since this cluster's entries were complete, only
    // those are looked at again for lost intents; else every node.
    std::optional<std::vector<std::string>> changed;
    if (auto r = issued_revision_.find(name); r != issued_revision_.end() && prev != issued_.end())
      changed = state.nodes_changed_since(name, r->second);
    if (changed) {
      IssuedMap& entries = issued[name] = std::move(prev->second);
      prev_issued_ = &entries;
      next_issued_ = &entries;
      changed_ = &*changed;
    } else {
      prev_issued_ = prev == issued_.end() ? &none : &prev->second;
      next_issued_ = &issued[name];
    }
    reconcile_cluster(*cp, now, counter, d);
    issued_revision[name] = revision;
    prev_issued_ = nullptr;
    next_issued_ = nullptr;
    changed_ = nullptr;
    if (d.events.size() == events && d.intents.size() == intents) {
      quiet.emplace(name, Quiet{revision, d.wake_at});
    }
    if (outer_wake) wake(d, *outer_wake);
  }
  quiet_.swap(quiet);
  issued_.swap(issued);
  issued_revision_.swap(issued_revision);
  return d;
}

void Provisioner::reconcile_cluster(const Cluster& c, Time now, int64_t& counter,
                                    ControllerDecision& d) {
  reissue_lost_intents(c, d);
  counts_.clear();
  for (const auto& [id, n] : c.nodes) {
    GroupCounts& gc = counts_[n.group];
    gc.live += n.is_live();
    gc.current += n.is_current();
    gc.leaving += n.status == NodeStatus::kShuttingDown;
  }
  if (c.status == ClusterStatus::kDeleting || c.status == ClusterStatus::kFailed) {
    for (const auto& [id, n] : c.nodes) {
      if (n.status != NodeStatus::kShuttingDown) {
        terminate(c, n, c.status == ClusterStatus::kFailed ? "cluster failed" : "cluster deletion",
                  d);
      }
    }
    if (c.status == ClusterStatus::kDeleting && c.nodes.empty()) {
      d.events.push_back(to_event(cluster_events::Removed{c.name}));
    }
    return;
  }

  // Slurm needs a healthy controller before anything else launches (docs/provisioning.md), until
  // the cluster has been InService once.
  auto group_has_running = [&](const Cluster& cl, NodeType type) {
    for (const auto& g : cl.groups) {
      if (g.spec.node_type == type && counts_[g.spec.name].current > 0) return true;
    }
    return false;
  };
  const bool controller_up = group_has_running(c, NodeType::kController);
  const bool gate = c.continuous && c.orchestrator == Orchestrator::kSlurm && !c.ever_in_service &&
                    !controller_up;
  for (const auto& g : c.groups) {
    const bool may_launch = !gate || g.spec.node_type == NodeType::kController;
    reconcile_group(c, g, may_launch, now, counter, d);
  }
  if (c.software_update) {
    reconcile_software_update(c, now, d);
    return;  // the update ends SystemUpdating, and nothing else changes the cluster's status
  }

  // Cluster status.
  auto status_event = [&](ClusterStatus s, const std::string& reason) {
    d.events.push_back(to_event(cluster_events::StatusChanged{c.name, s, reason, std::nullopt}));
  };
  auto groups_at_target = [&] {
    for (const auto& g : c.groups) {
      const GroupCounts& gc = counts_[g.spec.name];
      if (gc.current != g.spec.target || gc.leaving > 0) return false;
    }
    return true;
  };
  if (!c.continuous) {
    if (c.status != ClusterStatus::kInService && groups_at_target()) {
      status_event(ClusterStatus::kInService, c.status == ClusterStatus::kRollingBack
                                                  ? "rollback complete; previous state restored"
                                                  : "every instance group is fully provisioned");
    }
    return;
  }
  if (c.status == ClusterStatus::kCreating) {
    bool ready = false;
    std::string reason;
    if (c.orchestrator == Orchestrator::kSlurm) {
      const bool login_ok =
          !has_group_of(c, NodeType::kLogin) || group_has_running(c, NodeType::kLogin);
      ready = controller_up && login_ok;
      reason = has_group_of(c, NodeType::kLogin) ? "a controller and a login node are Running"
                                                 : "a controller node is Running";
    } else {
      ready = std::all_of(c.groups.begin(), c.groups.end(), [&](const InstanceGroup& g) {
        return counts_[g.spec.name].current >= g.spec.min;
      });
      reason = "every instance group has reached its MinCount";
    }
    if (ready) status_event(ClusterStatus::kInService, reason);
  }
}

void Provisioner::reconcile_group(const Cluster& c, const InstanceGroup& g, bool may_launch,
                                  Time now, int64_t& counter, ControllerDecision& d) {
  const std::string& gname = g.spec.name;
  const GroupCounts& gc = counts_[gname];
  const int64_t live = gc.live;
  const int64_t current = gc.current;

  if (g.status == GroupStatus::kDeleting) {
    bool any = false;
    for (const auto& [id, n] : c.nodes) {
      if (n.group != gname) continue;
      any = true;
      if (n.status != NodeStatus::kShuttingDown) terminate(c, n, "instance group deletion", d);
    }
    if (!any) d.events.push_back(to_event(cluster_events::GroupRemoved{c.name, gname}));
    return;
  }

  // Legacy all-or-nothing: a failed cluster or a rollback in progress launches nothing new.
  const bool legacy_frozen = !c.continuous && c.status == ClusterStatus::kRollingBack;
  if (live < g.spec.target && may_launch && !legacy_frozen) {
    if (g.next_attempt && now < *g.next_attempt) {
      wake(d, *g.next_attempt);
    } else {
      int64_t n = std::min(g.spec.target - live, options_.max_launches_per_pass);
      if (g.consecutive_failures > 0) {
        // A retry after failed rounds probes: it asks for a shrinking share of what is missing
        // (at least a few) instead of sending the cloud the same doomed batch again. The first
        // success ends the backoff and the next round asks for everything.
        const int64_t share = n >> std::min<int64_t>(g.consecutive_failures, 16);
        n = std::max(std::min<int64_t>(n, options_.min_probe_launches), share);
      }
      launch(c, g, n, counter, d);
    }
  } else if (live > g.spec.target) {
    terminate_excess(c, g, live - g.spec.target,
                     fmt::format("scale-down to TargetCount {}", g.spec.target), d);
  }

  if (!c.continuous) return;
  // A group the controller gate holds back has not started; it stays Creating until it may.
  if (!may_launch) return;
  if (g.status == GroupStatus::kCreating || g.status == GroupStatus::kUpdating) {
    if (current >= g.spec.min) {
      const std::string reason =
          g.spec.min > 0 ? fmt::format(
                               "minimum capacity reached: InstanceGroup {} has {} Running "
                               "of MinCount {} (TargetCount {})",
                               gname, current, g.spec.min, g.spec.target)
                         : "";
      d.events.push_back(to_event(
          cluster_events::GroupStatusChanged{c.name, gname, GroupStatus::kInService, reason}));
    } else if (g.min_deadline && now >= *g.min_deadline) {
      const int64_t target = g.ever_in_service ? g.last_in_service_target : 0;
      const int64_t min = g.ever_in_service ? g.last_in_service_min : 0;
      const std::string reason = fmt::format(
          "rollback initiated: InstanceGroup {} did not reach MinCount {} within {} ({} Running); "
          "rolling back to (MinCount {}, TargetCount {})",
          gname, g.spec.min, format_duration(c.min_count_timeout), current, min, target);
      d.events.push_back(
          to_event(cluster_events::GroupRolledBack{c.name, gname, target, min, reason}));
    } else if (g.min_deadline) {
      wake(d, *g.min_deadline);
    }
  }
}

namespace {

// A Slurm cluster's node learns its role and Slurm name with its launch (docs/slurm.md).
void set_slurm(const Cluster& c, const InstanceGroup& g, int64_t slot, LaunchOp& op) {
  if (c.orchestrator != Orchestrator::kSlurm || g.spec.node_type == NodeType::kNone) return;
  op.slurm_role = std::string(to_string(g.spec.node_type));
  Node n;
  n.group = op.group;
  n.attempt = op.attempt;
  n.slurm_slot = slot;
  op.slurm_name = slurm_node_name(n);
}

}  // namespace

void Provisioner::launch(const Cluster& c, const InstanceGroup& g, int64_t n, int64_t& counter,
                         ControllerDecision& d) {
  const InstanceTypeInfo* info = catalog_.find(g.spec.instance_type);
  std::set<int64_t> slots;  // Slurm slots handed out in this call
  for (int64_t i = 0; i < n; ++i) {
    LaunchOp op;
    op.cluster = c.name;
    op.group = g.spec.name;
    op.instance_id = instance_id(++counter);
    op.instance_type = g.spec.instance_type;
    op.attempt = g.launch_attempts + i + 1;
    op.lifecycle_config = g.spec.lifecycle_config;
    std::optional<int64_t> slot;
    if (c.orchestrator == Orchestrator::kSlurm) slot = next_slurm_slot(c, g.spec.name, slots);
    set_slurm(c, g, slot.value_or(0), op);
    d.events.push_back(to_event(
        cluster_events::LaunchRequested{c.name, g.spec.name, op.instance_id, op.instance_type,
                                        op.attempt, info ? info->price_micros_per_hour : 0, slot}));
    d.intents.push_back(Intent{kCloudDriver, kLaunchIntent, op.to_json()});
    (*next_issued_)[op.instance_id] |= kIssuedLaunch;
  }
}

void Provisioner::update_software(const Cluster& c, const Node& n, ControllerDecision& d) {
  UpdateSoftwareOp op{c.name, n.instance_id, n.instance_type, c.image};
  d.intents.push_back(Intent{kCloudDriver, kUpdateSoftwareIntent, op.to_json()});
  (*next_issued_)[n.instance_id] |= kIssuedUpdate;
}

void Provisioner::reconcile_software_update(const Cluster& c, Time now, ControllerDecision& d) {
  const SoftwareUpdate& u = *c.software_update;
  int64_t updating = 0, behind_pending = 0, done = 0, targets = 0;
  std::vector<const Node*> candidates;  // Running, of an updated group, on older software
  for (const auto& [id, n] : c.nodes) {
    if (!u.updates(n.group) || !n.is_live()) continue;
    if (n.status == NodeStatus::kSystemUpdating) {
      ++updating;
    } else if (n.software_generation >= c.software_generation) {
      ++done;
    } else if (n.status == NodeStatus::kRunning) {
      candidates.push_back(&n);
    } else {
      ++behind_pending;  // launched before the update: updated once it runs
    }
  }
  for (const InstanceGroup& g : c.groups) {
    if (u.updates(g.spec.name)) targets += g.spec.target;
  }
  if (updating > 0) return;  // the batch in hand; its reports come back as requests
  if (u.next_batch_at && now < *u.next_batch_at) {
    wake(d, *u.next_batch_at);
    return;
  }
  if (candidates.empty()) {
    if (behind_pending == 0) {
      d.events.push_back(to_event(cluster_events::SoftwareUpdateFinished{c.name, done}));
    }
    return;
  }
  // Oldest launch first: the longest-serving nodes get the new software first.
  std::sort(candidates.begin(), candidates.end(),
            [](const Node* a, const Node* b) { return a->launch_order < b->launch_order; });
  const int64_t batch = u.batches + 1;
  const int64_t size = std::min<int64_t>(u.batch_size(targets), candidates.size());
  for (int64_t i = 0; i < size; ++i) {
    const Node& n = *candidates[i];
    d.events.push_back(to_event(cluster_events::NodeUpdateStarted{c.name, n.instance_id, batch}));
    update_software(c, n, d);
  }
}

void Provisioner::terminate(const Cluster& c, const Node& n, const std::string& reason,
                            ControllerDecision& d) {
  d.events.push_back(to_event(cluster_events::TerminateRequested{c.name, n.instance_id, reason}));
  TerminateOp op{c.name, n.instance_id, n.instance_type};
  d.intents.push_back(Intent{kCloudDriver, kTerminateIntent, op.to_json()});
  (*next_issued_)[n.instance_id] |= kIssuedTerminate;
}

void Provisioner::terminate_excess(const Cluster& c, const InstanceGroup& g, int64_t excess,
                                   const std::string& reason, ControllerDecision& d) {
  // Unhealthy first, then the most recently launched (docs/provisioning.md).
  std::vector<const Node*> live;
  for (const auto& [id, n] : c.nodes) {
    if (n.group == g.spec.name && n.is_live()) live.push_back(&n);
  }
  std::sort(live.begin(), live.end(), [](const Node* a, const Node* b) {
    if (a->healthy != b->healthy) return !a->healthy;
    return a->launch_order > b->launch_order;
  });
  for (int64_t i = 0; i < excess && i < static_cast<int64_t>(live.size()); ++i) {
    terminate(c, *live[i], reason, d);
  }
}

void Provisioner::reissue_lost_intents(const Cluster& c, ControllerDecision& d) {
  if (changed_) {
    for (const std::string& id : *changed_) {
      auto n = c.nodes.find(id);
      if (n == c.nodes.end()) {
        next_issued_->erase(id);  // gone: its entry goes with it
      } else {
        reissue_lost_intent(c, id, n->second, d);
      }
    }
    return;
  }
  for (const auto& [id, n] : c.nodes) reissue_lost_intent(c, id, n, d);
}

void Provisioner::reissue_lost_intent(const Cluster& c, const std::string& id, const Node& n,
                                      ControllerDecision& d) {
  auto it = prev_issued_->find(id);
  int issued = it == prev_issued_->end() ? 0 : it->second;
  if (n.status == NodeStatus::kPending && !(issued & kIssuedLaunch)) {
    LaunchOp op;
    op.cluster = c.name;
    op.group = n.group;
    op.instance_id = id;
    op.instance_type = n.instance_type;
    op.attempt = n.attempt;
    op.resume_lifecycle = n.launched();
    if (const InstanceGroup* g = c.find_group(n.group)) {
      op.lifecycle_config = g->spec.lifecycle_config;
      set_slurm(c, *g, n.slurm_slot, op);
    }
    d.intents.push_back(Intent{kCloudDriver, kLaunchIntent, op.to_json()});
    issued |= kIssuedLaunch;
  } else if (n.status == NodeStatus::kShuttingDown && !(issued & kIssuedTerminate)) {
    TerminateOp op{c.name, id, n.instance_type};
    d.intents.push_back(Intent{kCloudDriver, kTerminateIntent, op.to_json()});
    issued |= kIssuedTerminate;
  } else if (n.status == NodeStatus::kSystemUpdating && !(issued & kIssuedUpdate)) {
    UpdateSoftwareOp op{c.name, id, n.instance_type, c.image};
    d.intents.push_back(Intent{kCloudDriver, kUpdateSoftwareIntent, op.to_json()});
    issued |= kIssuedUpdate;
  }
  if (issued) (*next_issued_)[id] |= issued;
}

namespace {

// Labels a cloud gave a launched instance (its network topology), from the report's detail.
std::optional<std::map<std::string, std::string>> reported_labels(const CloudReport& rep) {
  const auto labels = rep.detail.find("Labels");
  if (labels == rep.detail.end() || !labels->is_object()) return std::nullopt;
  std::map<std::string, std::string> out;
  for (auto it = labels->begin(); it != labels->end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

}  // namespace

Result<Decision> Provisioner::handle_report(const FleetState& state, Time now,
                                            const CloudReport& rep) {
  Decision d;
  const Cluster* c = state.view().find_cluster(rep.cluster);
  if (!c) return d;  // stale: the cluster is gone
  auto it = c->nodes.find(rep.instance_id);
  if (it == c->nodes.end()) return d;
  const Node& n = it->second;
  const InstanceGroup* g = c->find_group(n.group);
  using Kind = CloudReport::Kind;

  const bool pending = n.status == NodeStatus::kPending;
  switch (rep.kind) {
    case Kind::kLaunched:
      if (pending && !n.launched()) {
        cluster_events::Launched up{
            c->name, n.instance_id, rep.at,
            rep.address.empty() ? std::nullopt : std::optional<std::string>(rep.address),
            reported_labels(rep)};
        d.events.push_back(to_event(std::move(up)));
      }
      return d;
    case Kind::kRunning:
      if (pending && n.launched())
        d.events.push_back(to_event(cluster_events::NodeRunning{c->name, n.instance_id, rep.at}));
      return d;
    case Kind::kTerminated:
      d.events.push_back(to_event(cluster_events::Terminated{c->name, n.instance_id}));
      return d;
    case Kind::kUnhealthy: {
      if (!pending) return d;
      d.events.push_back(to_event(cluster_events::NodeUnhealthy{
          c->name, n.instance_id,
          rep.message.empty() ? "instance failed its health checks" : rep.message}));
      return d;  // retryable: the controller replaces it on its next pass
    }
    case Kind::kLaunchFailed:
    case Kind::kLifecycleFailed:
      break;
    case Kind::kRemediated:
    case Kind::kBurnIn:
      return d;  // the health controller's (routed there by the runtime)
    case Kind::kSoftwareUpdated:
      // Stale when the node is no longer updating (terminated meanwhile, or a repeat).
      if (n.status == NodeStatus::kSystemUpdating && c->software_update) {
        d.events.push_back(to_event(cluster_events::NodeUpdated{c->name, n.instance_id, rep.message,
                                                                c->software_generation}));
      }
      return d;
  }
  if (!pending) return d;
  const bool capacity = rep.kind == Kind::kLaunchFailed;
  if (capacity) {
    d.events.push_back(to_event(cluster_events::LaunchFailed{
        c->name, n.instance_id, std::string(to_string(rep.reason)), rep.message}));
  } else {
    d.events.push_back(
        to_event(cluster_events::LifecycleFailed{c->name, n.instance_id, rep.message, rep.at}));
  }
  if (!g) return d;

  // Non-retryable controller failures while creating fail the cluster (docs/provisioning.md).
  if (c->continuous && c->status == ClusterStatus::kCreating &&
      c->orchestrator == Orchestrator::kSlurm && g->spec.node_type == NodeType::kController) {
    const std::string failure =
        capacity ? fmt::format(
                       "Cluster creation failed: there is no capacity for the controller "
                       "group {}'s instance type {} ({}). Choose another instance type "
                       "for the controller group, or create the cluster in another "
                       "availability zone.",
                       g->spec.name, g->spec.instance_type, rep.message)
                 : fmt::format(
                       "Cluster creation failed: the lifecycle script {} failed on "
                       "controller instance {} ({}). Fix the lifecycle script and create "
                       "the cluster again.",
                       script_name(*g), n.instance_id, rep.message);
    d.events.push_back(
        to_event(cluster_events::StatusChanged{c->name, ClusterStatus::kFailed, failure, failure}));
    return d;
  }
  if (!c->continuous) {
    const std::string why = capacity
                                ? fmt::format("could not provision {} for InstanceGroup {}: {}",
                                              g->spec.instance_type, g->spec.name, rep.message)
                                : fmt::format("lifecycle script {} failed on {}: {}",
                                              script_name(*g), n.instance_id, rep.message);
    if (c->status == ClusterStatus::kCreating) {
      const std::string failure = fmt::format(
          "Cluster creation failed (all-or-nothing provisioning): {}. Every instance launched "
          "for it is terminated.",
          why);
      d.events.push_back(to_event(
          cluster_events::StatusChanged{c->name, ClusterStatus::kFailed, failure, failure}));
    } else if (c->status == ClusterStatus::kUpdating) {
      d.events.push_back(to_event(cluster_events::RolledBack{c->name, why}));
    }
    return d;
  }
  // Worker (or login) failure: retry the group with backoff, once per failed round.
  if (!(g->next_attempt && *g->next_attempt > now)) {
    const int64_t failures = g->consecutive_failures + 1;
    const std::string reason =
        capacity ? fmt::format("insufficient capacity for {}", g->spec.instance_type)
                 : fmt::format("lifecycle script {} failed", script_name(*g));
    d.events.push_back(to_event(cluster_events::GroupBackoff{
        c->name, g->spec.name, failures, n.attempt, now + backoff(failures), reason}));
  }
  return d;
}

}  // namespace gf
