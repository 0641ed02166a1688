// Appliers for alerts, remediations, hosts, circuit breakers and remediation policies
// (docs/remediation.md). Every change also becomes a user event (ResourceType Alert | Remediation |
// Host | Cluster), so a remediation's whole timeline — proposed, approved, cordon, drain, act,
// rejoin — is in GET /v1/events and events.jsonl.
#include "core/ids.h"
#include "model/fault_classes.h"
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
  mark_cluster_dirty(cluster, node);
}

void FleetState::set_node_faulted(const std::string& cluster, const std::string& node,
                                  bool faulted) {
  const Cluster* c = view_.find_cluster(cluster);
  if (!c) return;
  auto it = c->nodes.find(node);
  if (it == c->nodes.end() || it->second.faulted == faulted) return;
  mutable_cluster(cluster)->nodes.at(node).faulted = faulted;
  mark_cluster_dirty(cluster, node);
}

double FleetState::node_slowdown(const std::string& node) const {
  const HealthState& h = view_.health_state();
  const std::string prefix = node + "|";
  double slowdown = 1;
  for (auto it = h.open_alerts.lower_bound(prefix);
       it != h.open_alerts.end() && it->first.starts_with(prefix); ++it) {
    const AlertRecord& a = h.alerts.at(it->second);
    const health::FaultClass c = health::fault_class(a.detector, a.fault);
    if (c.effect == health::JobEffect::kDegraded) slowdown = std::max(slowdown, c.slowdown);
  }
  return slowdown;
}

// A degraded alert opened or closed on `node` at `t`: every simulated gang running there runs
// at the pace of its slowest node. Alerts are rare next to jobs, and only a degraded one scans
// the running jobs.
void FleetState::repace_jobs_on(const std::string& node, Time t) {
  std::vector<std::string> ids;
  for (const auto& [id, j] : view_.jobs) {
    if (j->status == JobStatus::kRunning && j->duration &&
        std::find(j->pod_nodes.begin(), j->pod_nodes.end(), node) != j->pod_nodes.end())
      ids.push_back(id);
  }
  for (const std::string& id : ids) {
    Job* job = mutable_job(id);
    double pace = 1;
    for (const std::string& n : job->pod_nodes) pace = std::max(pace, node_slowdown(n));
    set_run_pace(*job, t, pace);
  }
}

namespace {

// Whether an open alert of the node is of a fault that stops jobs (fatal or hang).
bool node_has_job_stopping_alert(const HealthState& h, const std::string& node) {
  const std::string prefix = node + "|";
  for (auto it = h.open_alerts.lower_bound(prefix);
       it != h.open_alerts.end() && it->first.starts_with(prefix); ++it) {
    const AlertRecord& o = h.alerts.at(it->second);
    if (health::stops_job(health::fault_class(o.detector, o.fault).effect)) return true;
  }
  return false;
}

EventLevel alert_level(const AlertRecord& a) {
  if (a.state == "resolved" || a.state == "discarded") return EventLevel::kInfo;
  return a.severity == health::Severity::kCritical  ? EventLevel::kError
         : a.severity == health::Severity::kWarning ? EventLevel::kWarn
                                                    : EventLevel::kInfo;
}

// One more observation of an open alert; the first evidence is kept, then only the newest ones.
void observe(AlertRecord& a, Time t, bool present, const std::string& evidence) {
  a.last_seen = std::max(a.last_seen, t);
  ++a.observations;
  a.evidence.push_back(health::Evidence{t, present, evidence});
  if (a.evidence.size() > 1 + remediate::kMaxRecentEvidence)
    a.evidence.erase(a.evidence.begin() + 1);
}

// The record of an alert first seen at `t`, pending until its persistence window passes.
AlertRecord new_alert(std::string id, const health_events::AlertSignal& e, Time t) {
  AlertRecord a;
  a.id = std::move(id);
  a.cluster = e.cluster;
  a.group = e.group.value_or("");
  a.node = e.node;
  a.host = e.host.value_or("");
  a.detector = e.detector;
  a.subject = e.subject;
  a.fault = e.fault;
  a.severity = *e.severity;
  a.summary = e.summary.value_or("");
  a.first_seen = a.last_seen = t;
  a.persistence = *e.persistence;
  a.observations = 1;
  a.evidence.push_back(health::Evidence{t, true, e.evidence});
  a.action = *e.action;
  a.support = e.support.value_or(false);
  a.cleared_by = e.cleared_by.value_or(std::vector<std::string>{});
  a.recurs = e.recurs.value_or(0);
  a.signal = e.signal.value_or(Json(nullptr));
  return a;
}

}  // namespace

void FleetState::add_health_user_event(const EventRecord& rec, std::string resource_type,
                                       EventLevel level, std::string text, Json details,
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
}

void FleetState::add_alert_user_event(const EventRecord& rec, const AlertRecord& a,
                                      const std::string& what) {
  add_health_user_event(rec, "Alert", alert_level(a),
                        fmt::format("Alert {} {} on {}: {} [{}] {}", a.id, what, a.node, a.fault,
                                    health::to_string(a.severity), a.summary),
                        Json{{"AlertId", a.id},
                             {"Detector", a.detector},
                             {"Fault", a.fault},
                             {"State", a.state},
                             {"Severity", health::to_string(a.severity)}},
                        a.cluster, a.node);
}

template <typename E>
Status FleetState::apply_typed_health_event(const EventRecord& rec, const Json& p) {
  GF_ASSIGN_OR_RETURN(const E e, health_events::decode<E>(p));
  return on_health_event(rec, e);
}

Status FleetState::apply_health_event(const EventRecord& rec, const Json& p) {
  using Applier = Status (FleetState::*)(const EventRecord&, const Json&);
  using namespace health_events;
  static const std::map<std::string_view, Applier> kAppliers = {
      {AlertSignal::kType, &FleetState::apply_typed_health_event<AlertSignal>},
      {AlertFired::kType, &FleetState::apply_typed_health_event<AlertFired>},
      {AlertRecurred::kType, &FleetState::apply_typed_health_event<AlertRecurred>},
      {AlertDelivered::kType, &FleetState::apply_typed_health_event<AlertDelivered>},
      {RemediationProposed::kType, &FleetState::apply_typed_health_event<RemediationProposed>},
      {RemediationUpdated::kType, &FleetState::apply_typed_health_event<RemediationUpdated>},
      {PolicySet::kType, &FleetState::apply_typed_health_event<PolicySet>},
      {HostStatus::kType, &FleetState::apply_typed_health_event<HostStatus>},
      {BreakerTripped::kType, &FleetState::apply_typed_health_event<BreakerTripped>},
      {BreakerReset::kType, &FleetState::apply_typed_health_event<BreakerReset>},
      {NodeLabels::kType, &FleetState::apply_typed_health_event<NodeLabels>},
  };
  auto it = kAppliers.find(rec.type);
  if (it == kAppliers.end()) {
    return internal_error("unknown event type \"" + rec.type +
                          "\" (journal written by a newer gpufleet?)");
  }
  return (this->*(it->second))(rec, p);
}

Status FleetState::on_health_event(const EventRecord& rec, const health_events::AlertSignal& e) {
  const Time t = rec.time;
  HealthState& h = mutable_health();
  const std::string key = HealthState::alert_key(e.node, e.detector, e.subject, e.fault);
  auto open = h.open_alerts.find(key);
  if (e.present) {
    if (open != h.open_alerts.end()) {
      observe(h.alerts.at(open->second), t, true, e.evidence);
      return ok_status();
    }
    AlertRecord a = new_alert(numbered_id("alert", ++h.alert_counter), e, t);
    if (a.persistence <= Duration::zero()) {
      a.state = "firing";
      a.fired_at = t;
      if (a.severity == health::Severity::kCritical) h.host_last_critical[a.host] = t;
    }
    h.open_alerts[key] = a.id;
    const std::string what = a.state == "firing"
                                 ? "firing"
                                 : "pending (fires after " + format_duration(a.persistence) + ")";
    auto& stored = h.alerts[a.id] = std::move(a);
    add_alert_user_event(rec, stored, what);
    const health::JobEffect effect = health::fault_class(e.detector, e.fault).effect;
    if (health::stops_job(effect)) set_node_faulted(e.cluster, e.node, true);
    if (effect == health::JobEffect::kDegraded) repace_jobs_on(e.node, t);
    return ok_status();
  }
  if (open == h.open_alerts.end()) return ok_status();
  AlertRecord& a = h.alerts.at(open->second);
  h.open_alerts.erase(open);
  const health::JobEffect effect = health::fault_class(a.detector, a.fault).effect;
  if (health::stops_job(effect))
    set_node_faulted(a.cluster, a.node, node_has_job_stopping_alert(h, a.node));
  if (effect == health::JobEffect::kDegraded) repace_jobs_on(a.node, t);
  observe(a, t, false, e.evidence);
  a.resolved_at = t;
  a.resolved_by = *e.resolved_by;
  if (a.state == "pending") {
    a.state = "discarded";
    add_alert_user_event(rec, a,
                         fmt::format("discarded: cleared before its {} persistence window ({})",
                                     format_duration(a.persistence), a.resolved_by));
  } else {
    a.state = "resolved";
    add_alert_user_event(rec, a, "resolved (" + a.resolved_by + ")");
    if (a.recurs > 0 && *e.fixed)
      h.recurrences.emplace(t + e.recur_after.value_or(minutes(10)), a.id);
  }
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord& rec, const health_events::AlertFired& e) {
  HealthState& h = mutable_health();
  auto it = h.alerts.find(e.alert_id);
  if (it == h.alerts.end() || it->second.state != "pending") return ok_status();
  AlertRecord& a = it->second;
  a.state = "firing";
  a.fired_at = a.first_seen + a.persistence;
  if (a.severity == health::Severity::kCritical) h.host_last_critical[a.host] = *a.fired_at;
  add_alert_user_event(rec, a, "firing after " + format_duration(a.persistence));
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord&, const health_events::AlertRecurred& e) {
  HealthState& h = mutable_health();
  for (auto it = h.recurrences.begin(); it != h.recurrences.end(); ++it) {
    if (it->second == e.alert_id) {
      h.recurrences.erase(it);
      break;
    }
  }
  if (auto it = h.alerts.find(e.alert_id); it != h.alerts.end()) it->second.recurs = 0;
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord&, const health_events::AlertDelivered& e) {
  HealthState& h = mutable_health();
  auto it = h.alerts.find(e.alert_id);
  if (it != h.alerts.end()) it->second.delivered.insert(e.target + ":" + e.state);
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord& rec,
                                   const health_events::RemediationProposed& e) {
  Remediation r = e.remediation;
  HealthState& h = mutable_health();
  ++h.remediation_counter;
  if (!r.request_id.empty()) h.requests[r.detector + "|" + r.request_id] = r.id;
  std::string text =
      fmt::format("Remediation {} proposed for {}: {} for {} (requester {}, rule {})", r.id, r.node,
                  to_string(r.effective), r.fault, r.requester, r.rule);
  if (r.effective != r.action)
    text += fmt::format("; asked {}: {}", to_string(r.action), r.effective_reason);
  if (r.status == RStatus::kApproved) text += "; approved by " + r.approver;
  if (r.status == RStatus::kProposed && !r.reason.empty()) text += "; " + r.reason;
  if (remediate::is_open(r.status)) h.open_by_node[r.node] = r.id;
  h.by_node[r.node].push_back(r.id);
  const std::string cluster = r.cluster, node = r.node;
  Json details{{"RemediationId", r.id},
               {"Status", to_string(r.status)},
               {"EffectiveAction", to_string(r.effective)}};
  h.remediations[r.id] = std::move(r);
  add_health_user_event(rec, "Remediation", EventLevel::kInfo, std::move(text), std::move(details),
                        cluster, node);
  return ok_status();
}

// A migrated or deleted node's old host goes to inspection (then burn-in); a migration moves the
// node onto a fresh host. Returns the text to add to the user event.
std::string FleetState::retire_host(const EventRecord& rec, Remediation& r,
                                    const std::optional<std::string>& new_host) {
  HealthState& h = mutable_health();
  remediate::Host old;
  old.id = r.host;
  old.status = "Inspecting";
  old.cluster = r.cluster;
  old.node = r.node;
  old.since = rec.time;
  old.reason = fmt::format("{} by {}", to_string(r.effective), r.id);
  old.suspect = r.suspect;
  if (r.suspect) old.reason += ": suspect host (" + r.effective_reason + ")";
  if (const Cluster* c = view_.find_cluster(r.cluster); c && c->nodes.contains(r.node)) {
    old.instance_type = c->nodes.at(r.node).instance_type;
  }
  if (auto lc = h.host_last_critical.find(r.host); lc != h.host_last_critical.end())
    old.last_critical = lc->second;
  h.index_host(old);
  h.hosts[old.id] = std::move(old);
  if (r.effective != remediate::Action::kMigrate) return "";
  const std::string fresh = new_host ? *new_host : fmt::format("host-m{}", ++h.host_counter);
  if (const Cluster* c = view_.find_cluster(r.cluster); c && c->nodes.contains(r.node)) {
    mutable_cluster(r.cluster)->nodes.at(r.node).host_id = fresh;
    mark_cluster_dirty(r.cluster, r.node);
  }
  return fmt::format(" (moved to {}; {} sent to inspection)", fresh, r.host);
}

void FleetState::apply_remediation_transition(const EventRecord& rec,
                                              const health_events::RemediationUpdated& e,
                                              RStatus before, Remediation& r, std::string& text) {
  const Time t = rec.time;
  const std::string by = e.by.value_or("");
  switch (before == e.status ? RStatus::kProposed : e.status) {  // a new reason only: no effects
    case RStatus::kApproved:
      r.approver = by;
      r.approved_at = t;
      // The policy's own approval (a held proposal resumed after a breaker reset) counts as
      // automatic, for the breaker's window too.
      if (by.rfind("policy:", 0) == 0) r.auto_approved = true;
      r.held_by_breaker = false;
      text += " (approver " + by + ")";
      break;
    case RStatus::kWaitingForIdle:
      r.started_at = t;
      if (e.idle_deadline) r.idle_deadline = *e.idle_deadline;
      set_node_flags(r.cluster, r.node, true, std::nullopt);
      break;
    case RStatus::kDraining:
      r.drained_at = t;
      set_node_flags(r.cluster, r.node, true, true);
      break;
    case RStatus::kRejoining:
      r.acted_at = t;
      if (r.effective == remediate::Action::kMigrate || r.effective == remediate::Action::kDelete)
        text += retire_host(rec, r, e.new_host);
      break;
    case RStatus::kSucceeded:
      r.completed_at = t;
      set_node_flags(r.cluster, r.node, false, false);
      break;
    case RStatus::kFailed:
      r.completed_at = t;
      set_node_flags(r.cluster, r.node, std::nullopt, false);  // stays cordoned: still unhealthy
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
}

Status FleetState::on_health_event(const EventRecord& rec,
                                   const health_events::RemediationUpdated& e) {
  HealthState& h = mutable_health();
  auto it = h.remediations.find(e.remediation_id);
  if (it == h.remediations.end())
    return internal_error("remediation.updated: unknown remediation " + e.remediation_id);
  Remediation& r = it->second;
  const RStatus before = r.status;
  r.status = e.status;
  if (!remediate::is_open(e.status)) {
    if (auto o = h.open_by_node.find(r.node); o != h.open_by_node.end() && o->second == r.id)
      h.open_by_node.erase(o);
  }
  r.reason = e.reason;
  std::string text = fmt::format("Remediation {} ({} {}): ", r.id, to_string(r.effective), r.node);
  if (before == e.status) {
    text += "waiting: " + r.reason;
  } else {
    text += std::string(to_string(e.status)) + (r.reason.empty() ? "" : ": " + r.reason);
  }
  apply_remediation_transition(rec, e, before, r, text);
  const EventLevel level = e.status == RStatus::kFailed ? EventLevel::kError
                           : (e.status == RStatus::kCancelled || e.status == RStatus::kRejected)
                               ? EventLevel::kWarn
                               : EventLevel::kInfo;
  add_health_user_event(rec, "Remediation", level, std::move(text),
                        Json{{"RemediationId", r.id},
                             {"Status", to_string(e.status)},
                             {"EffectiveAction", to_string(r.effective)}},
                        r.cluster, r.node);
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord& rec, const health_events::PolicySet& e) {
  mutable_health().policies[e.cluster] = e.policy;
  add_health_user_event(rec, "Cluster", EventLevel::kInfo,
                        fmt::format("Remediation policy of {} updated", e.cluster),
                        e.policy.to_json(), e.cluster, "");
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord& rec, const health_events::HostStatus& e) {
  HealthState& h = mutable_health();
  auto it = h.hosts.find(e.host_id);
  if (it == h.hosts.end()) return internal_error("host.status: unknown host " + e.host_id);
  remediate::Host& host = it->second;
  std::string status = e.status;
  std::string text = "Host " + e.host_id + ": ";
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
    tk.host = e.host_id;
    tk.cluster = host.cluster;
    tk.node = host.node;
    tk.instance_type = host.instance_type;
    tk.opened_at = rec.time;
    tk.summary = e.reason;
    tk.checks = e.checks.value_or(Json::array());
    text += fmt::format("{}; hardware ticket {} opened: {}",
                        host.suspect ? "suspect host kept out of the pool" : "burn-in failed",
                        tk.id, e.reason);
    h.tickets.push_back(std::move(tk));
  } else {
    return internal_error("host.status: unknown status \"" + status + "\"");
  }
  host.status = status;
  host.since = rec.time;
  host.reason = e.reason;
  h.index_host(host);
  add_health_user_event(rec, "Host", status == "Repair" ? EventLevel::kWarn : EventLevel::kInfo,
                        std::move(text), Json{{"HostId", e.host_id}, {"Status", status}},
                        host.cluster, "");
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord& rec, const health_events::BreakerTripped& e) {
  remediate::Breaker& b = mutable_health().breakers[e.cluster];
  b.open = true;
  b.tripped_at = rec.time;
  b.reason = e.reason;
  add_health_user_event(rec, "Cluster", EventLevel::kError,
                        fmt::format("Remediation circuit breaker of {} tripped: {}; automatic "
                                    "remediation halted until a person resets it",
                                    e.cluster, b.reason),
                        Json{{"CircuitBreaker", "Open"}}, e.cluster, "");
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord& rec, const health_events::BreakerReset& e) {
  remediate::Breaker& b = mutable_health().breakers[e.cluster];
  b.open = false;
  b.reset_at = rec.time;
  b.reset_by = e.by;
  add_health_user_event(
      rec, "Cluster", EventLevel::kInfo,
      fmt::format("Remediation circuit breaker of {} reset by {}", e.cluster, b.reset_by),
      Json{{"CircuitBreaker", "Closed"}}, e.cluster, "");
  return ok_status();
}

Status FleetState::on_health_event(const EventRecord&, const health_events::NodeLabels& e) {
  const Cluster* c = view_.find_cluster(e.cluster);
  if (!c || !c->nodes.contains(e.instance_id)) return ok_status();
  mutable_cluster(e.cluster)->nodes.at(e.instance_id).labels = e.labels;
  mark_cluster_dirty(e.cluster, e.instance_id);
  return ok_status();
}

}  // namespace gf
