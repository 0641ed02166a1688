// Applies cluster/group/node journal events to FleetState and derives the user-visible events
// of ListClusterEvents from them (docs/provisioning.md, texts modelled on HyperPod's events
// reference).
#include <algorithm>

#include "state/cluster_events.h"
#include "state/fleet_state.h"

namespace gf {

namespace {

UserEvent cluster_user_event(const Cluster& c, std::string resource_type, EventLevel level,
                             std::string description, std::string group = "",
                             std::string instance = "") {
  UserEvent e;
  e.resource_type = std::move(resource_type);
  e.level = level;
  e.description = std::move(description);
  e.cluster_name = c.name;
  e.cluster_arn = c.arn;
  e.instance_group = std::move(group);
  e.instance_id = std::move(instance);
  return e;
}

void close_billing(Cluster& c, const Node& n, Time at) {
  if (!n.launch_time || n.shutting_down_at) return;
  BillingRecord b;
  b.instance_id = n.instance_id;
  b.cluster_name = c.name;
  b.cluster_arn = c.arn;
  b.group = n.group;
  b.instance_type = n.instance_type;
  b.price_micros_per_hour = n.price_micros_per_hour;
  b.start = *n.launch_time;
  b.end = at;
  c.billing.push_back(std::move(b));
}

// A group being created at `t`; its MinCount timeout starts now.
InstanceGroup new_group(const GroupSpec& spec, Time t, Duration min_count_timeout) {
  InstanceGroup g;
  g.spec = spec;
  g.status = GroupStatus::kCreating;
  g.created_at = t;
  if (spec.min > 0) g.min_deadline = t + min_count_timeout;
  return g;
}

std::string counts(int64_t min, int64_t target) {
  return fmt::format("(MinCount {}, TargetCount {})", min, target);
}

}  // namespace

const Cluster* FleetView::find_cluster(std::string_view name) const {
  auto it = clusters.find(name);
  return it == clusters.end() ? nullptr : it->second.get();
}

Cluster* FleetState::mutable_cluster(std::string_view name) {
  auto it = view_.clusters.find(name);
  if (it == view_.clusters.end()) return nullptr;
  if (it->second.use_count() > 1) it->second = std::make_shared<const Cluster>(*it->second);
  // The pointee is owned solely by this state now; const_cast is the copy-on-write handoff.
  return const_cast<Cluster*>(it->second.get());
}

// One applier per event type, dispatched by table. The wrapper finds what the event names — the
// cluster, its group, its node — so an applier starts from records that exist.
template <typename E>
Status FleetState::apply_typed_cluster_event(const EventRecord& rec, const Json& p) {
  GF_ASSIGN_OR_RETURN(const E e, cluster_events::decode<E>(p));
  Status st;
  if constexpr (std::is_same_v<E, cluster_events::Created>) {
    st = on_cluster_event(rec, e);
  } else {
    Cluster* c = mutable_cluster(e.cluster);
    if (!c) return internal_error("no cluster " + e.cluster);
    if constexpr (requires { e.instance_id; } &&
                  !std::is_same_v<E, cluster_events::LaunchRequested>) {
      auto it = c->nodes.find(e.instance_id);
      if (it == c->nodes.end())
        return internal_error("no node " + e.instance_id + " in cluster " + e.cluster);
      st = on_cluster_event(rec, e, *c, it->second);
    } else if constexpr (requires { e.group; }) {
      InstanceGroup* g = c->find_group(e.group);
      if (!g) return internal_error("no group " + e.group + " in cluster " + e.cluster);
      st = on_cluster_event(rec, e, *c, *g);
    } else {
      st = on_cluster_event(rec, e, *c);
    }
  }
  GF_RETURN_IF_ERROR(st);
  // A node event (a launch request adds its node) changes that node and no other, nor the
  // cluster's status or groups' targets: mirrors resync just it.
  if constexpr (requires { e.instance_id; }) {
    mark_cluster_dirty(e.cluster, e.instance_id);
  } else {
    mark_cluster_dirty(e.cluster);
  }
  return ok_status();
}

Status FleetState::apply_cluster_event(const EventRecord& rec, const Json& p) {
  using Applier = Status (FleetState::*)(const EventRecord&, const Json&);
  using namespace cluster_events;
  static const std::map<std::string_view, Applier> kAppliers = {
      {Created::kType, &FleetState::apply_typed_cluster_event<Created>},
      {Updated::kType, &FleetState::apply_typed_cluster_event<Updated>},
      {DeleteRequested::kType, &FleetState::apply_typed_cluster_event<DeleteRequested>},
      {StatusChanged::kType, &FleetState::apply_typed_cluster_event<StatusChanged>},
      {RolledBack::kType, &FleetState::apply_typed_cluster_event<RolledBack>},
      {Removed::kType, &FleetState::apply_typed_cluster_event<Removed>},
      {GroupStatusChanged::kType, &FleetState::apply_typed_cluster_event<GroupStatusChanged>},
      {GroupRolledBack::kType, &FleetState::apply_typed_cluster_event<GroupRolledBack>},
      {GroupBackoff::kType, &FleetState::apply_typed_cluster_event<GroupBackoff>},
      {GroupTargetSet::kType, &FleetState::apply_typed_cluster_event<GroupTargetSet>},
      {GroupRemoved::kType, &FleetState::apply_typed_cluster_event<GroupRemoved>},
      {LaunchRequested::kType, &FleetState::apply_typed_cluster_event<LaunchRequested>},
      {LaunchFailed::kType, &FleetState::apply_typed_cluster_event<LaunchFailed>},
      {Launched::kType, &FleetState::apply_typed_cluster_event<Launched>},
      {NodeRunning::kType, &FleetState::apply_typed_cluster_event<NodeRunning>},
      {LifecycleFailed::kType, &FleetState::apply_typed_cluster_event<LifecycleFailed>},
      {NodeUnhealthy::kType, &FleetState::apply_typed_cluster_event<NodeUnhealthy>},
      {TerminateRequested::kType, &FleetState::apply_typed_cluster_event<TerminateRequested>},
      {Terminated::kType, &FleetState::apply_typed_cluster_event<Terminated>},
      {NodeHealth::kType, &FleetState::apply_typed_cluster_event<NodeHealth>},
      {NodeSlurmState::kType, &FleetState::apply_typed_cluster_event<NodeSlurmState>},
      {SoftwareUpdateStarted::kType, &FleetState::apply_typed_cluster_event<SoftwareUpdateStarted>},
      {NodeUpdateStarted::kType, &FleetState::apply_typed_cluster_event<NodeUpdateStarted>},
      {NodeUpdated::kType, &FleetState::apply_typed_cluster_event<NodeUpdated>},
      {SoftwareUpdateFinished::kType,
       &FleetState::apply_typed_cluster_event<SoftwareUpdateFinished>},
  };
  auto it = kAppliers.find(rec.type);
  if (it == kAppliers.end()) {
    return internal_error("unknown event type \"" + rec.type +
                          "\" (journal written by a newer gpufleet?)");
  }
  return (this->*(it->second))(rec, p);
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::Created& e) {
  const Time t = rec.time;
  if (view_.find_cluster(e.cluster))
    return internal_error("cluster " + e.cluster + " already exists");
  Cluster c;
  c.name = e.cluster;
  c.id = e.id;
  c.arn = e.arn;
  c.continuous = e.continuous;
  c.orchestrator = e.orchestrator;
  c.vpc_config = e.vpc_config;
  c.node_recovery = e.node_recovery;
  c.min_count_timeout = e.min_count_timeout;
  c.creation_time = t;
  c.status = ClusterStatus::kCreating;
  for (const GroupSpec& spec : e.groups)
    c.groups.push_back(new_group(spec, t, c.min_count_timeout));
  view_.cluster_counter += 1;
  add_user_event(rec, cluster_user_event(
                          c, "Cluster", EventLevel::kInfo,
                          fmt::format("Cluster {} creation started ({} provisioning)", e.cluster,
                                      c.continuous ? "Continuous" : "all-or-nothing")));
  view_.clusters.emplace(e.cluster, std::make_shared<const Cluster>(std::move(c)));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::Updated& e,
                                    Cluster& c) {
  const Time t = rec.time;
  if (e.node_recovery) c.node_recovery = *e.node_recovery;
  if (!c.continuous) {
    std::vector<GroupSpec> previous;
    for (const auto& g : c.groups) previous.push_back(g.spec);
    c.legacy_previous_specs = std::move(previous);
    c.status = ClusterStatus::kUpdating;
  }
  for (const GroupSpec& spec : e.groups) {
    if (InstanceGroup* g = c.find_group(spec.name)) {
      const bool min_changed = spec.min != g->spec.min;
      const bool target_changed = spec.target != g->spec.target;
      g->spec = spec;
      if (min_changed) {
        // Every MinCount update restarts the timeout (docs/provisioning.md).
        g->min_deadline = t + c.min_count_timeout;
        if (c.current_count(spec.name) < spec.min && g->status == GroupStatus::kInService) {
          g->status = GroupStatus::kUpdating;
        }
      }
      if (min_changed || target_changed) {
        add_user_event(rec, cluster_user_event(
                                c, "InstanceGroup", EventLevel::kInfo,
                                fmt::format("InstanceGroup {} scaling to {} started in Cluster {}",
                                            spec.name, counts(spec.min, spec.target), c.name),
                                spec.name));
      }
    } else {
      add_user_event(
          rec, cluster_user_event(c, "InstanceGroup", EventLevel::kInfo,
                                  fmt::format("InstanceGroup {} creation {} started in Cluster {}",
                                              spec.name, counts(spec.min, spec.target), c.name),
                                  spec.name));
      c.groups.push_back(new_group(spec, t, c.min_count_timeout));
    }
  }
  for (const std::string& del : e.delete_groups) {
    if (InstanceGroup* g = c.find_group(del)) {
      g->status = GroupStatus::kDeleting;
      g->spec.target = 0;
      g->spec.min = 0;
      g->min_deadline.reset();
      add_user_event(
          rec,
          cluster_user_event(
              c, "InstanceGroup", EventLevel::kInfo,
              fmt::format("InstanceGroup {} deletion started in Cluster {}", del, c.name), del));
    }
  }
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::DeleteRequested&,
                                    Cluster& c) {
  c.status = ClusterStatus::kDeleting;
  for (auto& g : c.groups) {
    g.status = GroupStatus::kDeleting;
    g.spec.target = 0;
    g.spec.min = 0;
    g.min_deadline.reset();
  }
  add_user_event(rec, cluster_user_event(c, "Cluster", EventLevel::kInfo,
                                         fmt::format("Cluster {} deletion started", c.name)));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::StatusChanged& e,
                                    Cluster& c) {
  const std::string failure = e.failure_message.value_or("");
  c.status = e.status;
  EventLevel level = EventLevel::kInfo;
  if (e.status == ClusterStatus::kInService) {
    c.ever_in_service = true;
    c.legacy_previous_specs.reset();
    if (!c.continuous) {
      // All-or-nothing: every group is complete when the cluster is.
      for (auto& g : c.groups) {
        if (g.status == GroupStatus::kDeleting) continue;
        g.status = GroupStatus::kInService;
        g.ever_in_service = true;
        g.last_in_service_target = g.spec.target;
        g.last_in_service_min = g.spec.min;
      }
    }
  }
  if (e.status == ClusterStatus::kFailed) {
    c.failure_message = failure;
    level = EventLevel::kError;
    for (auto& g : c.groups) {
      if (g.status == GroupStatus::kCreating || g.status == GroupStatus::kUpdating) {
        g.status = GroupStatus::kFailed;
        g.min_deadline.reset();
      }
    }
  }
  std::string text = fmt::format("Cluster {} is {}", c.name, to_string(e.status));
  if (!e.reason.empty()) text += ": " + e.reason;
  UserEvent u = cluster_user_event(c, "Cluster", level, text);
  if (!failure.empty()) u.details = Json{{"FailureMessage", failure}};
  add_user_event(rec, std::move(u));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::RolledBack& e,
                                    Cluster& c) {
  if (c.legacy_previous_specs) {
    const std::vector<GroupSpec> prev = *c.legacy_previous_specs;
    std::vector<InstanceGroup> kept;
    for (auto& g : c.groups) {
      for (const auto& spec : prev) {
        if (spec.name == g.spec.name) {
          g.spec = spec;
          g.status = GroupStatus::kInService;
          kept.push_back(g);
        }
      }
      if (!std::any_of(prev.begin(), prev.end(),
                       [&](const GroupSpec& s) { return s.name == g.spec.name; })) {
        g.spec.target = 0;
        g.spec.min = 0;
        g.status = GroupStatus::kDeleting;
        kept.push_back(g);
      }
    }
    c.groups = std::move(kept);
  }
  c.status = ClusterStatus::kRollingBack;
  add_user_event(
      rec, cluster_user_event(c, "Cluster", EventLevel::kWarn,
                              fmt::format("Cluster {} update rolling back: {}", c.name, e.reason)));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::Removed& e,
                                    Cluster& c) {
  auto retired = view_.retired_billing
                     ? std::make_shared<std::vector<BillingRecord>>(*view_.retired_billing)
                     : std::make_shared<std::vector<BillingRecord>>();
  for (const auto& b : c.billing) retired->push_back(b);
  view_.retired_billing = std::move(retired);
  add_user_event(rec, cluster_user_event(c, "Cluster", EventLevel::kInfo,
                                         fmt::format("Cluster {} deleted", c.name)));
  view_.clusters.erase(view_.clusters.find(e.cluster));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::GroupStatusChanged& e, Cluster& c,
                                    InstanceGroup& g) {
  g.status = e.status;
  if (e.status == GroupStatus::kInService) {
    g.ever_in_service = true;
    g.last_in_service_target = g.spec.target;
    g.last_in_service_min = g.spec.min;
    g.min_deadline.reset();
  }
  std::string text = e.reason.empty()
                         ? fmt::format("InstanceGroup {} is {}", e.group, to_string(e.status))
                         : e.reason;
  add_user_event(rec, cluster_user_event(
                          c, "InstanceGroup",
                          e.status == GroupStatus::kFailed ? EventLevel::kError : EventLevel::kInfo,
                          std::move(text), e.group));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::GroupRolledBack& e, Cluster& c,
                                    InstanceGroup& g) {
  g.spec.target = e.target;
  g.spec.min = e.min;
  g.status = GroupStatus::kInService;
  g.min_deadline.reset();
  g.ever_in_service = true;
  g.last_in_service_target = g.spec.target;
  g.last_in_service_min = g.spec.min;
  UserEvent u = cluster_user_event(c, "InstanceGroup", EventLevel::kWarn, e.reason, e.group);
  u.details = Json{{"MinCount", g.spec.min}, {"TargetCount", g.spec.target}};
  add_user_event(rec, std::move(u));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::GroupBackoff& e,
                                    Cluster& c, InstanceGroup& g) {
  g.consecutive_failures = e.failures;
  g.next_attempt = e.next_attempt;
  g.last_failure = e.reason;
  g.last_failed_attempt = std::max(g.last_failed_attempt, e.attempt);
  UserEvent u = cluster_user_event(
      c, "InstanceGroup", EventLevel::kWarn,
      fmt::format("InstanceGroup {}: {}; retry {} in {}", e.group, g.last_failure,
                  g.consecutive_failures,
                  format_duration(
                      std::chrono::duration_cast<std::chrono::seconds>(e.next_attempt - rec.time))),
      e.group);
  u.details =
      Json{{"Attempt", g.consecutive_failures}, {"NextAttempt", format_iso8601(e.next_attempt)}};
  add_user_event(rec, std::move(u));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::GroupTargetSet& e,
                                    Cluster& c, InstanceGroup& g) {
  g.spec.target = e.target;
  if (g.spec.min > e.target) g.spec.min = e.target;
  add_user_event(
      rec, cluster_user_event(c, "InstanceGroup", EventLevel::kInfo,
                              fmt::format("InstanceGroup {} TargetCount set to {}{}", e.group,
                                          e.target, e.reason.empty() ? "" : " (" + e.reason + ")"),
                              e.group));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::GroupRemoved& e,
                                    Cluster& c, InstanceGroup&) {
  add_user_event(
      rec, cluster_user_event(
               c, "InstanceGroup", EventLevel::kInfo,
               fmt::format("InstanceGroup {} deleted from Cluster {}", e.group, c.name), e.group));
  std::erase_if(c.groups, [&](const InstanceGroup& x) { return x.spec.name == e.group; });
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::LaunchRequested& e, Cluster& c,
                                    InstanceGroup& g) {
  Node n;
  n.instance_id = e.instance_id;
  n.group = e.group;
  n.instance_type = e.instance_type;
  n.attempt = e.attempt;
  n.slurm_slot = e.slurm_slot.value_or(0);
  n.price_micros_per_hour = e.price_micros_per_hour;
  n.image = c.image;  // a node launches with the cluster's current software
  n.software_generation = c.software_generation;
  g.launch_attempts = std::max(g.launch_attempts, n.attempt);
  n.status = NodeStatus::kPending;
  n.message = "Launch requested";
  n.requested_at = rec.time;
  n.launch_order = ++view_.instance_counter;
  add_user_event(
      rec, cluster_user_event(c, "Instance", EventLevel::kInfo,
                              fmt::format("Instance creation in Cluster {} and InstanceGroup {} "
                                          "started ({}; the group's launch attempt {}, retries "
                                          "included)",
                                          c.name, n.group, n.instance_type, n.attempt),
                              n.group, e.instance_id));
  c.nodes.emplace(e.instance_id, std::move(n));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::LaunchFailed& e,
                                    Cluster& c, Node& n) {
  UserEvent u = cluster_user_event(
      c, "Instance", EventLevel::kError,
      fmt::format("Instance creation in Cluster {} and InstanceGroup {} failed: {}", c.name,
                  n.group, e.message),
      n.group, e.instance_id);
  u.details = Json{{"Reason", e.reason}, {"FailureMessage", e.message}, {"Attempt", n.attempt}};
  add_user_event(rec, std::move(u));
  c.nodes.erase(e.instance_id);
  return ok_status();
}

namespace {

// A time a node reported, within what the journal can vouch for: not before `floor`, not after
// the event itself.
Time reported(const std::optional<Time>& at, Time floor, Time event) {
  if (!at) return event;
  return std::clamp(*at, std::min(floor, event), event);
}

}  // namespace

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::Launched& e,
                                    Cluster& c, Node& n) {
  n.launch_time = reported(e.at, n.requested_at, rec.time);
  if (e.address) n.address = *e.address;
  if (e.labels) {
    for (const auto& [k, v] : *e.labels) n.labels[k] = v;
  }
  n.message = "Running lifecycle script";
  std::string script = "lifecycle script";
  if (const InstanceGroup* g = c.find_group(n.group); g && g->spec.lifecycle_config.is_object()) {
    script = "lifecycle script " +
             g->spec.lifecycle_config.value("OnCreate", std::string("on_create.sh"));
  }
  add_user_event(
      rec, cluster_user_event(c, "Instance", EventLevel::kInfo,
                              fmt::format("EC2 Instance {} successfully provisioned; {} started "
                                          "(billing started)",
                                          e.instance_id, script),
                              n.group, e.instance_id));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::NodeRunning& e,
                                    Cluster& c, Node& n) {
  n.status = NodeStatus::kRunning;
  n.running_at = reported(e.at, n.launch_time.value_or(n.requested_at), rec.time);
  n.message = "";
  // A launch requested after the last failure succeeded: capacity is back, end the backoff.
  // (Nodes of the same round that happened to fit do not reset it.)
  if (InstanceGroup* g = c.find_group(n.group); g && n.attempt > g->last_failed_attempt) {
    g->consecutive_failures = 0;
    g->next_attempt.reset();
  }
  add_user_event(
      rec, cluster_user_event(c, "Instance", EventLevel::kInfo,
                              fmt::format("Instance lifecycle script execution for EC2 Instance {} "
                                          "has succeeded; instance is Running",
                                          e.instance_id),
                              n.group, e.instance_id));
  return ok_status();
}

void FleetState::shut_down_node(const EventRecord& rec, Cluster& c, Node& n, const std::string& why,
                                bool unhealthy, EventLevel level, std::string text,
                                std::optional<Time> billed_until) {
  if (n.status == NodeStatus::kShuttingDown) return;
  const Time end = billed_until.value_or(rec.time);
  close_billing(c, n, end);
  n.status = NodeStatus::kShuttingDown;
  n.shutting_down_at = end;
  n.termination_reason = why;
  n.message = why;
  if (unhealthy) n.healthy = false;
  add_user_event(rec,
                 cluster_user_event(c, "Instance", level, std::move(text), n.group, n.instance_id));
}

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::LifecycleFailed& e, Cluster& c, Node& n) {
  // Billed until the script ended, as the node reported it.
  shut_down_node(rec, c, n, e.message, true, EventLevel::kError,
                 fmt::format("Instance lifecycle script execution for EC2 Instance {} has failed: "
                             "{}; the instance is replaced",
                             e.instance_id, e.message),
                 reported(e.at, n.launch_time.value_or(n.requested_at), rec.time));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::NodeUnhealthy& e,
                                    Cluster& c, Node& n) {
  shut_down_node(
      rec, c, n, e.message, true, EventLevel::kWarn,
      fmt::format("EC2 Instance {} is unhealthy ({}); replacing it", e.instance_id, e.message));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::TerminateRequested& e, Cluster& c,
                                    Node& n) {
  shut_down_node(rec, c, n, e.reason, false, EventLevel::kInfo,
                 fmt::format("Termination of EC2 Instance {} in progress{}", e.instance_id,
                             e.reason.empty() ? "" : " (" + e.reason + ")"));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::NodeHealth& e,
                                    Cluster& c, Node& n) {
  n.healthy = e.healthy;
  add_user_event(
      rec, cluster_user_event(c, "Instance", e.healthy ? EventLevel::kInfo : EventLevel::kWarn,
                              fmt::format("EC2 Instance {} is {}{}", e.instance_id,
                                          e.healthy ? "healthy" : "unhealthy",
                                          e.message.empty() ? "" : ": " + e.message),
                              n.group, e.instance_id));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord&, const cluster_events::NodeSlurmState& e,
                                    Cluster&, Node& n) {
  n.slurm = SlurmNodeReport{e.state, e.reason, e.jobs};
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::Terminated& e,
                                    Cluster& c, Node& n) {
  close_billing(c, n, rec.time);
  add_user_event(rec, cluster_user_event(c, "Instance", EventLevel::kInfo,
                                         fmt::format("EC2 Instance {} terminated", e.instance_id),
                                         n.group, e.instance_id));
  c.nodes.erase(e.instance_id);
  return ok_status();
}

// ---- software updates (docs/provisioning.md "Software updates") --------------------------------

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::SoftwareUpdateStarted& e, Cluster& c) {
  SoftwareUpdate u;
  u.image = e.image;
  u.groups = e.groups;
  u.batch_type = e.batch_type;
  u.batch_value = e.batch_value;
  u.wait_interval = e.wait_interval;
  u.started = rec.time;
  c.software_update = std::move(u);
  c.image = e.image;
  c.software_generation = e.generation;
  c.status = ClusterStatus::kSystemUpdating;
  for (InstanceGroup& g : c.groups) {
    if (c.software_update->updates(g.spec.name)) g.status = GroupStatus::kSystemUpdating;
  }
  std::string groups;
  for (const std::string& g : e.groups) groups += (groups.empty() ? "" : ", ") + g;
  UserEvent u_event = cluster_user_event(
      c, "Cluster", EventLevel::kInfo,
      fmt::format("Cluster {} is SystemUpdating: software update to {} of instance groups {}, "
                  "in batches of {} {} with {} between batches",
                  c.name, e.image, groups, e.batch_value,
                  e.batch_type == "CAPACITY_PERCENTAGE" ? "% of their capacity" : "instances",
                  format_duration(e.wait_interval)));
  u_event.details = Json{{"ImageId", e.image}, {"InstanceGroups", e.groups}};
  add_user_event(rec, std::move(u_event));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::NodeUpdateStarted& e, Cluster& c,
                                    Node& n) {
  if (!c.software_update) return internal_error("node.update_started without an update");
  n.status = NodeStatus::kSystemUpdating;
  n.message = "updating software to " + c.software_update->image;
  c.software_update->batches = std::max(c.software_update->batches, e.batch);
  c.software_update->next_batch_at.reset();
  add_user_event(rec, cluster_user_event(
                          c, "Instance", EventLevel::kInfo,
                          fmt::format("EC2 Instance {} is SystemUpdating (batch {}): its software "
                                      "is updated to {}",
                                      e.instance_id, e.batch, c.software_update->image),
                          n.group, e.instance_id));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec, const cluster_events::NodeUpdated& e,
                                    Cluster& c, Node& n) {
  n.status = NodeStatus::kRunning;
  n.message = "";
  n.image = e.image;
  n.software_generation = e.generation;
  // The batch is over when no node is left updating: the next waits the interval.
  const bool batch_over = std::none_of(c.nodes.begin(), c.nodes.end(), [](const auto& kv) {
    return kv.second.status == NodeStatus::kSystemUpdating;
  });
  if (c.software_update && batch_over) {
    c.software_update->next_batch_at = rec.time + c.software_update->wait_interval;
  }
  add_user_event(rec, cluster_user_event(c, "Instance", EventLevel::kInfo,
                                         fmt::format("EC2 Instance {} updated to {}; instance is "
                                                     "Running",
                                                     e.instance_id, e.image),
                                         n.group, e.instance_id));
  return ok_status();
}

Status FleetState::on_cluster_event(const EventRecord& rec,
                                    const cluster_events::SoftwareUpdateFinished& e, Cluster& c) {
  const std::string image = c.software_update ? c.software_update->image : c.image;
  c.software_update.reset();
  if (c.status == ClusterStatus::kSystemUpdating) c.status = ClusterStatus::kInService;
  for (InstanceGroup& g : c.groups) {
    if (g.status == GroupStatus::kSystemUpdating) g.status = GroupStatus::kInService;
  }
  add_user_event(
      rec, cluster_user_event(c, "Cluster", EventLevel::kInfo,
                              fmt::format("Cluster {} is InService: software update to {} finished "
                                          "({} instances updated)",
                                          c.name, image, e.updated)));
  return ok_status();
}

}  // namespace gf
