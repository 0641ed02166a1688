// Applies cluster/group/node journal events to FleetState and derives the user-visible events
// of ListClusterEvents from them (docs/provisioning.md, texts modelled on HyperPod's events
// reference).
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

std::string counts(int64_t min, int64_t target) {
  return "(MinCount " + std::to_string(min) + ", TargetCount " + std::to_string(target) + ")";
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

Status FleetState::apply_cluster_event(const EventRecord& rec, const Json& p) {
  const std::string& type = rec.type;
  const Time t = rec.time;
  ObjectReader r(p, "");
  const std::string name = r.required_string("Name");
  if (!r.ok()) return r.status();

  if (type == event_type::kClusterCreated) {
    if (view_.find_cluster(name)) return internal_error("cluster " + name + " already exists");
    Cluster c;
    c.name = name;
    c.id = r.required_string("Id");
    c.arn = r.required_string("Arn");
    c.continuous = r.optional_bool("Continuous").value_or(true);
    c.orchestrator = r.optional_string("Orchestrator").value_or("Slurm") == "Native"
                         ? Orchestrator::kNative
                         : Orchestrator::kSlurm;
    if (const Json* v = r.optional_value("VpcConfig")) c.vpc_config = *v;
    c.node_recovery = r.optional_string("NodeRecovery").value_or("Automatic");
    c.min_count_timeout = Duration(r.optional_int("MinCountTimeoutUs").value_or(hours(3).count()));
    c.creation_time = t;
    c.status = ClusterStatus::kCreating;
    const Json* groups = r.optional_array("Groups");
    if (!r.ok()) return r.status();
    if (groups) {
      for (const Json& gj : *groups) {
        GF_ASSIGN_OR_RETURN(GroupSpec spec, GroupSpec::from_json(gj));
        InstanceGroup g;
        g.spec = std::move(spec);
        g.status = GroupStatus::kCreating;
        g.created_at = t;
        if (g.spec.min > 0) g.min_deadline = t + c.min_count_timeout;
        c.groups.push_back(std::move(g));
      }
    }
    view_.cluster_counter += 1;
    add_user_event(
        rec, cluster_user_event(c, "Cluster", EventLevel::kInfo,
                                "Cluster " + name + " creation started (" +
                                    std::string(c.continuous ? "Continuous" : "all-or-nothing") +
                                    " provisioning)"));
    view_.clusters.emplace(name, std::make_shared<const Cluster>(std::move(c)));
    return ok_status();
  }

  Cluster* c = mutable_cluster(name);
  if (!c) return internal_error("no cluster " + name);

  if (type == event_type::kClusterUpdated) {
    if (auto recovery = r.optional_string("NodeRecovery")) c->node_recovery = *recovery;
    if (!c->continuous) {
      std::vector<GroupSpec> previous;
      for (const auto& g : c->groups) previous.push_back(g.spec);
      c->legacy_previous_specs = std::move(previous);
      c->status = ClusterStatus::kUpdating;
    }
    if (const Json* groups = r.optional_array("Groups")) {
      for (const Json& gj : *groups) {
        GF_ASSIGN_OR_RETURN(GroupSpec spec, GroupSpec::from_json(gj));
        if (InstanceGroup* g = c->find_group(spec.name)) {
          const bool min_changed = spec.min != g->spec.min;
          const bool target_changed = spec.target != g->spec.target;
          g->spec = spec;
          if (min_changed) {
            // Every MinCount update restarts the timeout (docs/provisioning.md).
            g->min_deadline = t + c->min_count_timeout;
            if (c->current_count(spec.name) < spec.min && g->status == GroupStatus::kInService) {
              g->status = GroupStatus::kUpdating;
            }
          }
          if (min_changed || target_changed) {
            add_user_event(rec, cluster_user_event(*c, "InstanceGroup", EventLevel::kInfo,
                                                   "InstanceGroup " + spec.name + " scaling to " +
                                                       counts(spec.min, spec.target) +
                                                       " started in Cluster " + name,
                                                   spec.name));
          }
        } else {
          InstanceGroup ng;
          ng.spec = spec;
          ng.status = GroupStatus::kCreating;
          ng.created_at = t;
          if (spec.min > 0) ng.min_deadline = t + c->min_count_timeout;
          add_user_event(rec, cluster_user_event(*c, "InstanceGroup", EventLevel::kInfo,
                                                 "InstanceGroup " + spec.name + " creation " +
                                                     counts(spec.min, spec.target) +
                                                     " started in Cluster " + name,
                                                 spec.name));
          c->groups.push_back(std::move(ng));
        }
      }
    }
    for (const std::string& del :
         r.optional_string_list("Delete").value_or(std::vector<std::string>{})) {
      if (InstanceGroup* g = c->find_group(del)) {
        g->status = GroupStatus::kDeleting;
        g->spec.target = 0;
        g->spec.min = 0;
        g->min_deadline.reset();
        add_user_event(
            rec, cluster_user_event(*c, "InstanceGroup", EventLevel::kInfo,
                                    "InstanceGroup " + del + " deletion started in Cluster " + name,
                                    del));
      }
    }
    return r.status();
  }

  if (type == event_type::kClusterDeleteRequested) {
    c->status = ClusterStatus::kDeleting;
    for (auto& g : c->groups) {
      g.status = GroupStatus::kDeleting;
      g.spec.target = 0;
      g.spec.min = 0;
      g.min_deadline.reset();
    }
    add_user_event(rec, cluster_user_event(*c, "Cluster", EventLevel::kInfo,
                                           "Cluster " + name + " deletion started"));
    return ok_status();
  }

  if (type == event_type::kClusterStatus) {
    auto status = parse_cluster_status(r.required_string("Status"));
    std::string reason = r.optional_string("Reason").value_or("");
    std::string failure = r.optional_string("FailureMessage").value_or("");
    if (!r.ok()) return r.status();
    if (!status) return internal_error("bad cluster status");
    c->status = *status;
    EventLevel level = EventLevel::kInfo;
    if (*status == ClusterStatus::kInService) {
      c->ever_in_service = true;
      c->legacy_previous_specs.reset();
      if (!c->continuous) {
        // All-or-nothing: every group is complete when the cluster is.
        for (auto& g : c->groups) {
          if (g.status == GroupStatus::kDeleting) continue;
          g.status = GroupStatus::kInService;
          g.ever_in_service = true;
          g.last_in_service_target = g.spec.target;
          g.last_in_service_min = g.spec.min;
        }
      }
    }
    if (*status == ClusterStatus::kFailed) {
      c->failure_message = failure;
      level = EventLevel::kError;
      for (auto& g : c->groups) {
        if (g.status == GroupStatus::kCreating || g.status == GroupStatus::kUpdating) {
          g.status = GroupStatus::kFailed;
          g.min_deadline.reset();
        }
      }
    }
    std::string text = "Cluster " + name + " is " + std::string(to_string(*status));
    if (!reason.empty()) text += ": " + reason;
    UserEvent e = cluster_user_event(*c, "Cluster", level, text);
    if (!failure.empty()) e.details = Json{{"FailureMessage", failure}};
    add_user_event(rec, std::move(e));
    return ok_status();
  }

  if (type == event_type::kClusterRollback) {
    std::string reason = r.optional_string("Reason").value_or("");
    if (c->legacy_previous_specs) {
      std::vector<GroupSpec> prev = *c->legacy_previous_specs;
      std::vector<InstanceGroup> kept;
      for (auto& g : c->groups) {
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
      c->groups = std::move(kept);
    }
    c->status = ClusterStatus::kRollingBack;
    add_user_event(rec, cluster_user_event(*c, "Cluster", EventLevel::kWarn,
                                           "Cluster " + name + " update rolling back: " + reason));
    return ok_status();
  }

  if (type == event_type::kClusterRemoved) {
    auto retired = view_.retired_billing
                       ? std::make_shared<std::vector<BillingRecord>>(*view_.retired_billing)
                       : std::make_shared<std::vector<BillingRecord>>();
    for (const auto& b : c->billing) retired->push_back(b);
    view_.retired_billing = std::move(retired);
    add_user_event(
        rec, cluster_user_event(*c, "Cluster", EventLevel::kInfo, "Cluster " + name + " deleted"));
    view_.clusters.erase(view_.clusters.find(name));
    return ok_status();
  }

  if (type.rfind("group.", 0) == 0) {
    const std::string group = r.required_string("Group");
    if (!r.ok()) return r.status();
    InstanceGroup* g = c->find_group(group);
    if (!g) return internal_error("no group " + group + " in cluster " + name);
    if (type == event_type::kGroupStatus) {
      auto status = parse_group_status(r.required_string("Status"));
      std::string reason = r.optional_string("Reason").value_or("");
      if (!r.ok()) return r.status();
      if (!status) return internal_error("bad group status");
      g->status = *status;
      if (*status == GroupStatus::kInService) {
        g->ever_in_service = true;
        g->last_in_service_target = g->spec.target;
        g->last_in_service_min = g->spec.min;
        g->min_deadline.reset();
      }
      std::string text = reason.empty()
                             ? "InstanceGroup " + group + " is " + std::string(to_string(*status))
                             : reason;
      add_user_event(rec, cluster_user_event(*c, "InstanceGroup",
                                             *status == GroupStatus::kFailed ? EventLevel::kError
                                                                             : EventLevel::kInfo,
                                             text, group));
      return ok_status();
    }
    if (type == event_type::kGroupRollback) {
      g->spec.target = r.required_int("Target");
      g->spec.min = r.required_int("Min");
      std::string reason = r.optional_string("Reason").value_or("");
      if (!r.ok()) return r.status();
      g->status = GroupStatus::kInService;
      g->min_deadline.reset();
      g->ever_in_service = true;
      g->last_in_service_target = g->spec.target;
      g->last_in_service_min = g->spec.min;
      UserEvent e = cluster_user_event(*c, "InstanceGroup", EventLevel::kWarn, reason, group);
      e.details = Json{{"MinCount", g->spec.min}, {"TargetCount", g->spec.target}};
      add_user_event(rec, std::move(e));
      return ok_status();
    }
    if (type == event_type::kGroupBackoff) {
      g->consecutive_failures = r.required_int("Failures");
      g->next_attempt = from_micros(r.required_int("NextAttemptUs"));
      g->last_failure = r.optional_string("Reason").value_or("");
      g->last_failed_attempt =
          std::max(g->last_failed_attempt, r.optional_int("Attempt").value_or(0));
      if (!r.ok()) return r.status();
      UserEvent e = cluster_user_event(
          *c, "InstanceGroup", EventLevel::kWarn,
          "InstanceGroup " + group + ": " + g->last_failure + "; retry " +
              std::to_string(g->consecutive_failures) + " in " +
              format_duration(
                  std::chrono::duration_cast<std::chrono::seconds>(*g->next_attempt - t)),
          group);
      e.details = Json{{"Attempt", g->consecutive_failures},
                       {"NextAttempt", format_iso8601(*g->next_attempt)}};
      add_user_event(rec, std::move(e));
      return ok_status();
    }
    if (type == event_type::kGroupTarget) {
      int64_t target = r.required_int("Target");
      std::string reason = r.optional_string("Reason").value_or("");
      if (!r.ok()) return r.status();
      g->spec.target = target;
      if (g->spec.min > target) g->spec.min = target;
      add_user_event(rec, cluster_user_event(*c, "InstanceGroup", EventLevel::kInfo,
                                             "InstanceGroup " + group + " TargetCount set to " +
                                                 std::to_string(target) +
                                                 (reason.empty() ? "" : " (" + reason + ")"),
                                             group));
      return ok_status();
    }
    if (type == event_type::kGroupRemoved) {
      add_user_event(rec, cluster_user_event(
                              *c, "InstanceGroup", EventLevel::kInfo,
                              "InstanceGroup " + group + " deleted from Cluster " + name, group));
      std::erase_if(c->groups, [&](const InstanceGroup& x) { return x.spec.name == group; });
      return ok_status();
    }
  }

  if (type.rfind("node.", 0) == 0) {
    const std::string id = r.required_string("InstanceId");
    if (!r.ok()) return r.status();
    if (type == event_type::kNodeLaunchRequested) {
      Node n;
      n.instance_id = id;
      n.group = r.required_string("Group");
      n.instance_type = r.required_string("InstanceType");
      n.attempt = r.required_int("Attempt");
      n.price_micros_per_hour = r.optional_int("PriceMicrosPerHour").value_or(0);
      if (!r.ok()) return r.status();
      InstanceGroup* g = c->find_group(n.group);
      if (!g) return internal_error("no group " + n.group);
      g->launch_attempts = std::max(g->launch_attempts, n.attempt);
      n.status = NodeStatus::kPending;
      n.message = "Launch requested";
      n.requested_at = t;
      n.launch_order = ++view_.instance_counter;
      add_user_event(
          rec, cluster_user_event(*c, "Instance", EventLevel::kInfo,
                                  "Instance creation in Cluster " + name + " and InstanceGroup " +
                                      n.group + " started (" + n.instance_type + ", attempt " +
                                      std::to_string(n.attempt) + ")",
                                  n.group, id));
      c->nodes.emplace(id, std::move(n));
      return ok_status();
    }
    auto it = c->nodes.find(id);
    if (it == c->nodes.end()) return internal_error("no node " + id + " in cluster " + name);
    Node& n = it->second;
    if (type == event_type::kNodeLaunchFailed) {
      std::string reason = r.optional_string("Reason").value_or("");
      std::string message = r.optional_string("Message").value_or("");
      UserEvent e = cluster_user_event(*c, "Instance", EventLevel::kError,
                                       "Instance creation in Cluster " + name +
                                           " and InstanceGroup " + n.group + " failed: " + message,
                                       n.group, id);
      e.details = Json{{"Reason", reason}, {"FailureMessage", message}, {"Attempt", n.attempt}};
      add_user_event(rec, std::move(e));
      c->nodes.erase(it);
      return ok_status();
    }
    if (type == event_type::kNodeLaunched) {
      n.launch_time = t;
      n.message = "Running lifecycle script";
      std::string script = "lifecycle script";
      if (const InstanceGroup* g = c->find_group(n.group);
          g && g->spec.lifecycle_config.is_object()) {
        script = "lifecycle script " +
                 g->spec.lifecycle_config.value("OnCreate", std::string("on_create.sh"));
      }
      add_user_event(rec, cluster_user_event(*c, "Instance", EventLevel::kInfo,
                                             "EC2 Instance " + id + " successfully provisioned; " +
                                                 script + " started (billing started)",
                                             n.group, id));
      return ok_status();
    }
    if (type == event_type::kNodeRunning) {
      n.status = NodeStatus::kRunning;
      n.running_at = t;
      n.message = "";
      // A launch requested after the last failure succeeded: capacity is back, end the backoff.
      // (Nodes of the same round that happened to fit do not reset it.)
      if (InstanceGroup* g = c->find_group(n.group); g && n.attempt > g->last_failed_attempt) {
        g->consecutive_failures = 0;
        g->next_attempt.reset();
      }
      add_user_event(
          rec, cluster_user_event(*c, "Instance", EventLevel::kInfo,
                                  "Instance lifecycle script execution for EC2 Instance " + id +
                                      " has succeeded; instance is Running",
                                  n.group, id));
      return ok_status();
    }
    if (type == event_type::kNodeLifecycleFailed || type == event_type::kNodeUnhealthy ||
        type == event_type::kNodeTerminateRequested) {
      std::string why =
          r.optional_string(type == event_type::kNodeTerminateRequested ? "Reason" : "Message")
              .value_or("");
      if (n.status == NodeStatus::kShuttingDown) return ok_status();
      close_billing(*c, n, t);
      n.status = NodeStatus::kShuttingDown;
      n.shutting_down_at = t;
      n.termination_reason = why;
      n.message = why;
      EventLevel level = EventLevel::kInfo;
      std::string text = "Termination of EC2 Instance " + id + " in progress";
      if (type == event_type::kNodeLifecycleFailed) {
        n.healthy = false;
        level = EventLevel::kError;
        text = "Instance lifecycle script execution for EC2 Instance " + id +
               " has failed: " + why + "; the instance is replaced";
      } else if (type == event_type::kNodeUnhealthy) {
        n.healthy = false;
        level = EventLevel::kWarn;
        text = "EC2 Instance " + id + " is unhealthy (" + why + "); replacing it";
      } else if (!why.empty()) {
        text += " (" + why + ")";
      }
      add_user_event(rec, cluster_user_event(*c, "Instance", level, text, n.group, id));
      return ok_status();
    }
    if (type == event_type::kNodeHealth) {
      const bool healthy = r.optional_bool("Healthy").value_or(true);
      std::string message = r.optional_string("Message").value_or("");
      if (!r.ok()) return r.status();
      n.healthy = healthy;
      add_user_event(rec, cluster_user_event(
                              *c, "Instance", healthy ? EventLevel::kInfo : EventLevel::kWarn,
                              "EC2 Instance " + id + (healthy ? " is healthy" : " is unhealthy") +
                                  (message.empty() ? "" : ": " + message),
                              n.group, id));
      return ok_status();
    }
    if (type == event_type::kNodeTerminated) {
      close_billing(*c, n, t);
      add_user_event(rec, cluster_user_event(*c, "Instance", EventLevel::kInfo,
                                             "EC2 Instance " + id + " terminated", n.group, id));
      c->nodes.erase(it);
      return ok_status();
    }
  }
  return internal_error("unknown event type \"" + type + "\"");
}

}  // namespace gf
