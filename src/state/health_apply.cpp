// Appliers for alerts, remediations, hosts, circuit breakers and remediation policies
// (docs/remediation.md). Every change also becomes a user event (ResourceType Alert | Remediation |
// Host | Cluster), so a remediation's whole timeline — proposed, approved, cordon, drain, act,
// rejoin — is in GET /v1/events and events.jsonl.
#include "core/ids.h"
#include "state/fleet_state.h"
#include "state/health_events.h"

namespace gf {

using remediate::AlertRecord;
using remediate::HealthState;
using remediate::Remediation;
using RStatus = remediate::Status;

const remediate::HealthState& FleetView::health_state() const {
  static const HealthState kEmpty;
  return health ? *health : kEmpty;
}

remediate::HealthState& FleetState::mutable_health() {
  if (!view_.health) {
    view_.health = std::make_shared<HealthState>();
  } else if (view_.health.use_count() > 1) {
    view_.health = std::make_shared<HealthState>(*view_.health);
  }
  return const_cast<HealthState&>(*view_.health);
}

void FleetState::set_node_flags(const std::string& cluster, const std::string& node,
                                std::optional<bool> cordoned, std::optional<bool> maintenance) {
  const Cluster* c = view_.find_cluster(cluster);
  if (!c || !c->nodes.contains(node)) return;
  Cluster* m = mutable_cluster(cluster);
  Node& n = m->nodes.at(node);
  if (cordoned) n.cordoned = *cordoned;
  if (maintenance) n.maintenance = *maintenance;
  mark_cluster_dirty(cluster);
}

namespace {

EventLevel alert_level(const AlertRecord& a) {
  if (a.state == "resolved" || a.state == "discarded") return EventLevel::kInfo;
  return a.severity == health::Severity::kCritical  ? EventLevel::kError
         : a.severity == health::Severity::kWarning ? EventLevel::kWarn
                                                    : EventLevel::kInfo;
}

}  // namespace

Status FleetState::apply_health_event(const EventRecord& rec, const Json& p) {
  const std::string& type = rec.type;
  const Time t = rec.time;
  auto user_event = [&](std::string resource_type, EventLevel level, std::string text, Json details,
                        const std::string& cluster, const std::string& node) {
    UserEvent e;
    e.resource_type = std::move(resource_type);
    e.level = level;
    e.description = std::move(text);
    e.details = std::move(details);
    if (const Cluster* c = view_.find_cluster(cluster)) {
      e.cluster_name = c->name;
      e.cluster_arn = c->arn;
      if (auto it = c->nodes.find(node); it != c->nodes.end()) {
        e.instance_id = node;
        e.instance_group = it->second.group;
      }
    }
    add_user_event(rec, std::move(e));
  };
  auto alert_event = [&](const AlertRecord& a, const std::string& what) {
    user_event("Alert", alert_level(a),
               "Alert " + a.id + " " + what + " on " + a.node + ": " + a.fault + " [" +
                   std::string(health::to_string(a.severity)) + "] " + a.summary,
               Json{{"AlertId", a.id},
                    {"Detector", a.detector},
                    {"Fault", a.fault},
                    {"State", a.state},
                    {"Severity", health::to_string(a.severity)}},
               a.cluster, a.node);
  };
  try {
    if (type == event_type::kAlertSignal) {
      HealthState& h = mutable_health();
      const std::string node = p.at("Node").get<std::string>();
      const std::string key = HealthState::alert_key(node, p.at("Detector").get<std::string>(),
                                                     p.at("Subject").get<std::string>(),
                                                     p.at("Fault").get<std::string>());
      const bool present = p.at("Present").get<bool>();
      const std::string evidence = p.value("Evidence", "");
      auto open = h.open_alerts.find(key);
      if (present) {
        if (open != h.open_alerts.end()) {
          AlertRecord& a = h.alerts.at(open->second);
          a.last_seen = std::max(a.last_seen, t);
          ++a.observations;
          a.evidence.push_back(health::Evidence{t, true, evidence});
          if (a.evidence.size() > 1 + remediate::kMaxRecentEvidence)
            a.evidence.erase(a.evidence.begin() + 1);
          return ok_status();
        }
        AlertRecord a;
        a.id = numbered_id("alert", ++h.alert_counter);
        a.cluster = p.at("Cluster").get<std::string>();
        a.group = p.value("Group", "");
        a.node = node;
        a.host = p.value("Host", "");
        a.detector = p.at("Detector").get<std::string>();
        a.subject = p.at("Subject").get<std::string>();
        a.fault = p.at("Fault").get<std::string>();
        const std::string sev = p.value("Severity", "warning");
        a.severity = sev == "critical" ? health::Severity::kCritical
                     : sev == "info"   ? health::Severity::kInfo
                                       : health::Severity::kWarning;
        a.summary = p.value("Summary", "");
        a.first_seen = a.last_seen = t;
        a.persistence = Duration(p.value("PersistenceUs", int64_t{0}));
        a.observations = 1;
        a.evidence.push_back(health::Evidence{t, true, evidence});
        a.action = p.value("Action", "none");
        a.support = p.value("Support", false);
        if (p.contains("ClearedBy"))
          a.cleared_by = p.at("ClearedBy").get<std::vector<std::string>>();
        a.recurs = p.value("Recurs", int64_t{0});
        a.signal = p.value("Signal", Json(nullptr));
        if (a.persistence <= Duration::zero()) {
          a.state = "firing";
          a.fired_at = t;
          if (a.severity == health::Severity::kCritical) h.host_last_critical[a.host] = t;
        }
        h.open_alerts[key] = a.id;
        const std::string what =
            a.state == "firing" ? "firing"
                                : "pending (fires after " + format_duration(a.persistence) + ")";
        auto& stored = h.alerts[a.id] = std::move(a);
        alert_event(stored, what);
        return ok_status();
      }
      if (open == h.open_alerts.end()) return ok_status();
      AlertRecord& a = h.alerts.at(open->second);
      h.open_alerts.erase(open);
      a.last_seen = std::max(a.last_seen, t);
      ++a.observations;
      a.evidence.push_back(health::Evidence{t, false, evidence});
      if (a.evidence.size() > 1 + remediate::kMaxRecentEvidence)
        a.evidence.erase(a.evidence.begin() + 1);
      a.resolved_at = t;
      a.resolved_by = p.value("ResolvedBy", "signal cleared");
      if (a.state == "pending") {
        a.state = "discarded";
        alert_event(a, "discarded: cleared before its " + format_duration(a.persistence) +
                           " persistence window (" + a.resolved_by + ")");
      } else {
        a.state = "resolved";
        alert_event(a, "resolved (" + a.resolved_by + ")");
        if (a.recurs > 0 && p.value("Fixed", false))
          h.recurrences.emplace(t + Duration(p.value("RecurAfterUs", minutes(10).count())), a.id);
      }
      return ok_status();
    }
    if (type == event_type::kAlertFired) {
      HealthState& h = mutable_health();
      auto it = h.alerts.find(p.at("AlertId").get<std::string>());
      if (it == h.alerts.end() || it->second.state != "pending") return ok_status();
      AlertRecord& a = it->second;
      a.state = "firing";
      a.fired_at = a.first_seen + a.persistence;
      if (a.severity == health::Severity::kCritical) h.host_last_critical[a.host] = *a.fired_at;
      alert_event(a, "firing after " + format_duration(a.persistence));
      return ok_status();
    }
    if (type == event_type::kAlertRecurred) {
      HealthState& h = mutable_health();
      const std::string id = p.at("AlertId").get<std::string>();
      for (auto it = h.recurrences.begin(); it != h.recurrences.end(); ++it) {
        if (it->second == id) {
          h.recurrences.erase(it);
          break;
        }
      }
      if (auto it = h.alerts.find(id); it != h.alerts.end()) it->second.recurs = 0;
      return ok_status();
    }
    if (type == event_type::kAlertDelivered) {
      HealthState& h = mutable_health();
      auto it = h.alerts.find(p.at("AlertId").get<std::string>());
      if (it != h.alerts.end())
        it->second.delivered.insert(p.at("Target").get<std::string>() + ":" +
                                    p.at("State").get<std::string>());
      return ok_status();
    }
    if (type == event_type::kRemediationProposed) {
      GF_ASSIGN_OR_RETURN(Remediation r, Remediation::from_canonical(p.at("Remediation")));
      HealthState& h = mutable_health();
      ++h.remediation_counter;
      if (!r.request_id.empty()) h.requests[r.detector + "|" + r.request_id] = r.id;
      std::string text = "Remediation " + r.id + " proposed for " + r.node + ": " +
                         std::string(to_string(r.effective)) + " for " + r.fault + " (requester " +
                         r.requester + ", rule " + r.rule + ")";
      if (r.effective != r.action)
        text += "; asked " + std::string(to_string(r.action)) + ": " + r.effective_reason;
      if (r.status == RStatus::kApproved) text += "; approved by " + r.approver;
      if (r.status == RStatus::kProposed && !r.reason.empty()) text += "; " + r.reason;
      if (remediate::is_open(r.status)) h.open_by_node[r.node] = r.id;
      const std::string cluster = r.cluster, node = r.node;
      Json details{{"RemediationId", r.id},
                   {"Status", to_string(r.status)},
                   {"EffectiveAction", to_string(r.effective)}};
      h.remediations[r.id] = std::move(r);
      user_event("Remediation", EventLevel::kInfo, std::move(text), std::move(details), cluster,
                 node);
      return ok_status();
    }
    if (type == event_type::kRemediationUpdated) {
      HealthState& h = mutable_health();
      auto it = h.remediations.find(p.at("RemediationId").get<std::string>());
      if (it == h.remediations.end())
        return internal_error("remediation.updated: unknown remediation");
      Remediation& r = it->second;
      const std::optional<RStatus> st = remediate::parse_status(p.at("Status").get<std::string>());
      if (!st) return internal_error("remediation.updated: unknown status");
      const RStatus before = r.status;
      r.status = *st;
      if (!remediate::is_open(*st)) {
        if (auto o = h.open_by_node.find(r.node); o != h.open_by_node.end() && o->second == r.id)
          h.open_by_node.erase(o);
      }
      r.reason = p.value("Reason", r.reason);
      const std::string by = p.value("By", "");
      std::string text =
          "Remediation " + r.id + " (" + std::string(to_string(r.effective)) + " " + r.node + "): ";
      if (before == *st) {
        text += "waiting: " + r.reason;
      } else {
        text += std::string(to_string(*st)) + (r.reason.empty() ? "" : ": " + r.reason);
      }
      switch (before == *st ? RStatus::kProposed : *st) {  // a new reason only: no side effects
        case RStatus::kApproved:
          r.approver = by;
          r.approved_at = t;
          text += " (approver " + by + ")";
          break;
        case RStatus::kWaitingForIdle:
          if (before != *st) {
            r.started_at = t;
            if (p.contains("IdleDeadlineUs") && !p.at("IdleDeadlineUs").is_null())
              r.idle_deadline = from_micros(p.at("IdleDeadlineUs").get<int64_t>());
            set_node_flags(r.cluster, r.node, true, std::nullopt);
          }
          break;
        case RStatus::kDraining:
          set_node_flags(r.cluster, r.node, true, true);
          break;
        case RStatus::kRejoining: {
          r.acted_at = t;
          if (r.effective == remediate::Action::kMigrate ||
              r.effective == remediate::Action::kDelete) {
            remediate::Host old;
            old.id = r.host;
            old.status = "Inspecting";
            old.cluster = r.cluster;
            old.node = r.node;
            old.since = t;
            old.reason = std::string(to_string(r.effective)) + " by " + r.id;
            if (const Cluster* c = view_.find_cluster(r.cluster); c && c->nodes.contains(r.node)) {
              old.instance_type = c->nodes.at(r.node).instance_type;
            }
            if (auto lc = h.host_last_critical.find(r.host); lc != h.host_last_critical.end())
              old.last_critical = lc->second;
            h.hosts[old.id] = std::move(old);
            if (r.effective == remediate::Action::kMigrate) {
              const std::string fresh =
                  p.value("NewHost", "host-m" + std::to_string(++h.host_counter));
              if (const Cluster* c = view_.find_cluster(r.cluster);
                  c && c->nodes.contains(r.node)) {
                mutable_cluster(r.cluster)->nodes.at(r.node).host_id = fresh;
              }
              text += " (moved to " + fresh + "; " + r.host + " sent to inspection)";
            }
          }
          break;
        }
        case RStatus::kSucceeded:
          r.completed_at = t;
          set_node_flags(r.cluster, r.node, false, false);
          break;
        case RStatus::kFailed:
          r.completed_at = t;
          set_node_flags(r.cluster, r.node, std::nullopt,
                         false);  // stays cordoned: still unhealthy
          break;
        case RStatus::kCancelled:
        case RStatus::kRejected:
          r.completed_at = t;
          if (!by.empty()) text += " (by " + by + ")";
          if (remediate::in_flight(before)) set_node_flags(r.cluster, r.node, false, false);
          break;
        default:
          break;
      }
      const EventLevel level = *st == RStatus::kFailed ? EventLevel::kError
                               : (*st == RStatus::kCancelled || *st == RStatus::kRejected)
                                   ? EventLevel::kWarn
                                   : EventLevel::kInfo;
      user_event("Remediation", level, std::move(text),
                 Json{{"RemediationId", r.id},
                      {"Status", to_string(*st)},
                      {"EffectiveAction", to_string(r.effective)}},
                 r.cluster, r.node);
      return ok_status();
    }
    if (type == event_type::kRemediationPolicySet) {
      GF_ASSIGN_OR_RETURN(remediate::Policy pol,
                          remediate::Policy::from_json(p.at("Policy"), "Policy"));
      const std::string cluster = p.at("Cluster").get<std::string>();
      mutable_health().policies[cluster] = std::move(pol);
      user_event("Cluster", EventLevel::kInfo, "Remediation policy of " + cluster + " updated",
                 p.at("Policy"), cluster, "");
      return ok_status();
    }
    if (type == event_type::kHostStatus) {
      HealthState& h = mutable_health();
      const std::string id = p.at("HostId").get<std::string>();
      auto it = h.hosts.find(id);
      if (it == h.hosts.end()) return internal_error("host.status: unknown host " + id);
      remediate::Host& host = it->second;
      std::string status = p.at("Status").get<std::string>();
      const std::string reason = p.value("Reason", "");
      std::string text = "Host " + id + ": ";
      if (status == "BurnIn") {
        host.previous = host.status;
        text += "burn-in started (GPU, NCCL, InfiniBand, storage checks)";
      } else if (status == "Interrupted") {
        status = host.previous.empty() ? "Inspecting" : host.previous;
        text += "burn-in interrupted; restored to " + status;
      } else if (status == "InService") {
        text += "burn-in passed; back in the pool";
        host.node.clear();
      } else if (status == "Repair") {
        remediate::Ticket tk;
        tk.id = numbered_id("ticket", ++h.ticket_counter);
        tk.host = id;
        tk.cluster = host.cluster;
        tk.node = host.node;
        tk.instance_type = host.instance_type;
        tk.opened_at = t;
        tk.summary = reason;
        tk.checks = p.value("Checks", Json::array());
        text += "burn-in failed; hardware ticket " + tk.id + " opened: " + reason;
        h.tickets.push_back(std::move(tk));
      }
      host.status = status;
      host.since = t;
      host.reason = reason;
      user_event("Host", status == "Repair" ? EventLevel::kWarn : EventLevel::kInfo,
                 std::move(text), Json{{"HostId", id}, {"Status", status}}, host.cluster, "");
      return ok_status();
    }
    if (type == event_type::kBreakerTripped || type == event_type::kBreakerReset) {
      const std::string cluster = p.at("Cluster").get<std::string>();
      remediate::Breaker& b = mutable_health().breakers[cluster];
      if (type == event_type::kBreakerTripped) {
        b.open = true;
        b.tripped_at = t;
        b.reason = p.value("Reason", "");
        user_event("Cluster", EventLevel::kError,
                   "Remediation circuit breaker of " + cluster + " tripped: " + b.reason +
                       "; automatic remediation halted until a person resets it",
                   Json{{"CircuitBreaker", "Open"}}, cluster, "");
      } else {
        b.open = false;
        b.reset_at = t;
        b.reset_by = p.value("By", "");
        user_event("Cluster", EventLevel::kInfo,
                   "Remediation circuit breaker of " + cluster + " reset by " + b.reset_by,
                   Json{{"CircuitBreaker", "Closed"}}, cluster, "");
      }
      return ok_status();
    }
    if (type == event_type::kNodeLabels) {
      const std::string cluster = p.at("Cluster").get<std::string>();
      const std::string node = p.at("InstanceId").get<std::string>();
      const Cluster* c = view_.find_cluster(cluster);
      if (!c || !c->nodes.contains(node)) return ok_status();
      mutable_cluster(cluster)->nodes.at(node).labels =
          p.at("Labels").get<std::map<std::string, std::string>>();
      return ok_status();
    }
  } catch (const std::exception& e) {
    return internal_error(type + ": malformed payload: " + e.what());
  }
  return internal_error("unknown event type \"" + type +
                        "\" (journal written by a newer gpufleet?)");
}

}  // namespace gf
