#include "remediate/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/ids.h"
#include "model/fault_classes.h"
#include "state/health_events.h"

namespace gf::remediate {

using RStatus = remediate::Status;

Result<const Node*> live_node(const FleetState& state, const std::string& cluster,
                              const std::string& node) {
  const Cluster* c = state.view().find_cluster(cluster);
  if (!c) return not_found_error("cluster '" + cluster + "' does not exist");
  auto it = c->nodes.find(node);
  if (it == c->nodes.end() || !it->second.is_live()) {
    return not_found_error("NodeId: '" + node + "' is not a live node of cluster '" + cluster +
                           "'");
  }
  return &it->second;
}

std::vector<Event> signal_events(const FleetState& state, const std::string& cluster,
                                 const Node& node,
                                 const std::vector<remediate::Detection>& detections,
                                 const Json& raw, const FaultModel& model) {
  std::vector<Event> out;
  const remediate::Policy& policy = state.view().health_state().policy(cluster);
  // A structured reading is small and kept whole (a recurrence re-detects it); a kernel-log text
  // may hold thousands of lines, so each event keeps only its own line.
  const bool keep_raw = !raw.is_string() && safe_dump(raw).size() <= remediate::kMaxEvidenceBytes;
  for (const remediate::Detection& d : detections) {
    std::string evidence = d.evidence.size() > remediate::kMaxEvidenceBytes
                               ? d.evidence.substr(0, remediate::kMaxEvidenceBytes)
                               : d.evidence;
    const health::AlertClass cls = health::classify(d.detector, d.fault);
    const remediate::RuleMatch m =
        remediate::match(policy, d.detector, d.fault, node.group, d.default_action);
    health_events::AlertSignal e;
    e.cluster = cluster;
    e.group = node.group;
    e.node = node.instance_id;
    e.host = node.host();
    e.detector = d.detector;
    e.subject = d.subject;
    e.fault = d.fault;
    e.severity = cls.severity;
    e.summary = d.summary;
    e.evidence = evidence;
    e.present = true;
    e.persistence = policy.persistence_for(d.detector);
    e.action = m.support ? "none" : std::string(to_string(m.action));
    e.support = m.support;
    e.cleared_by = model.cleared_by;
    e.recurs = model.recurs;
    e.signal = keep_raw ? raw : Json(evidence);
    out.push_back(to_event(e));
  }
  return out;
}

std::vector<Event> clear_events(const FleetState& state, const std::string& node,
                                const std::string& detector, const std::string& resolved_by,
                                bool fixed) {
  std::vector<Event> out;
  const HealthState& h = state.view().health_state();
  for (const auto& [key, id] : h.open_alerts) {
    const AlertRecord& a = h.alerts.at(id);
    if (a.node != node || (!detector.empty() && a.detector != detector)) continue;
    if (fixed && !a.cleared_by.empty() &&
        std::find(a.cleared_by.begin(), a.cleared_by.end(), resolved_by) == a.cleared_by.end()) {
      continue;  // this action does not fix that fault
    }
    health_events::AlertSignal e;
    e.cluster = a.cluster;
    e.node = a.node;
    e.detector = a.detector;
    e.subject = a.subject;
    e.fault = a.fault;
    e.present = false;
    e.evidence = fixed ? "fixed by " + resolved_by : "signal cleared";
    e.resolved_by = resolved_by;
    e.fixed = fixed;
    out.push_back(to_event(e));
  }
  return out;
}

health_events::RemediationUpdated updated(const Remediation& r, RStatus status, std::string reason,
                                          std::string by) {
  health_events::RemediationUpdated e;
  e.remediation_id = r.id;
  e.status = status;
  e.reason = std::move(reason);
  if (!by.empty()) e.by = std::move(by);
  return e;
}

Event update_event(const Remediation& r, RStatus status, std::string reason, std::string by) {
  return to_event(updated(r, status, std::move(reason), std::move(by)));
}

int64_t recent_auto_approvals(const HealthState& h, const std::string& cluster, Time now,
                              Duration window) {
  // A person's reset starts the count again: approvals before it do not trip the breaker anew.
  std::optional<Time> reset;
  if (auto b = h.breakers.find(cluster); b != h.breakers.end()) reset = b->second.reset_at;
  int64_t n = 0;
  for (const auto& [id, r] : h.remediations) {
    if (r.cluster == cluster && r.auto_approved && r.approved_at && now - *r.approved_at < window &&
        (!reset || *r.approved_at >= *reset))
      ++n;
  }
  return n;
}

namespace {

int severity_rank(health::Severity s) {
  return s == health::Severity::kCritical ? 2 : s == health::Severity::kWarning ? 1 : 0;
}

std::vector<remediate::Attempt> history_of(const HealthState& h, const std::string& host) {
  std::vector<remediate::Attempt> out;
  for (const auto& [id, r] : h.remediations) {
    if (r.host != host) continue;
    // Cancelled and rejected proposals (and faults that cleared on their own, which cancel
    // theirs) do not count; only what ran does.
    const bool ran = r.status == RStatus::kSucceeded || r.status == RStatus::kFailed ||
                     remediate::in_flight(r.status);
    out.push_back(remediate::Attempt{
        r.effective, r.fault, r.created_at, ran && r.acted_at.has_value(),
        r.status == RStatus::kSucceeded && r.acted_at.has_value(), r.status == RStatus::kFailed});
  }
  return out;
}

int action_rank(Action a) {
  switch (a) {
    case Action::kReboot:
      return 1;
    case Action::kReprovision:
      return 2;
    case Action::kMigrate:
      return 3;
    case Action::kDelete:
      return 4;
    case Action::kNone:
      break;
  }
  return 0;
}

// Faults of the host that a remediation fixed within `window` before `now`: a fault that came
// back after a failed repair is the ladder's business, not a sign of a lemon.
int64_t recent_repairs(std::span<const Attempt> history, Time now, Duration window) {
  int64_t n = 0;
  for (const Attempt& a : history) n += a.fixed && now - a.at < window;
  return n;
}

}  // namespace

namespace {

// The usual fix of `lead`'s fault class for r, with the reason, or nullopt: after a repair of
// the same fault on this host failed within `window`, the class's next step (a GPU that a reset
// did not fix needs other hardware, not a reimage); else its usual fix, when it is more than r's.
std::optional<std::pair<Action, std::string>> class_fix(std::span<const Attempt> history,
                                                        const Policy& policy,
                                                        const AlertRecord& lead, Time now,
                                                        const Remediation& r) {
  const health::FaultClass fc = health::fault_class(lead.detector, lead.fault);
  for (const Attempt& a : history) {
    if (!a.failed || a.fault != lead.fault || now - a.at >= policy.escalation_window) continue;
    const std::optional<Action> next = parse_action(fc.after_failure);
    if (!next || action_rank(*next) <= action_rank(r.effective)) break;
    return std::pair{*next,
                     fmt::format("{} came back after a {} on this host within {}: {} "
                                 "(what did not fix it once will not)",
                                 lead.fault, to_string(a.action),
                                 format_duration(policy.escalation_window), to_string(*next))};
  }
  const std::optional<Action> usual = parse_action(fc.usual_fix);
  if (!usual || action_rank(*usual) <= action_rank(r.effective)) return std::nullopt;
  return std::pair{
      *usual, fmt::format("{} usually needs {} ({:.0f} %: {}); going straight to it", lead.fault,
                          fc.usual_fix, fc.usual_fix_share * 100, fc.source)};
}

}  // namespace

bool fault_class_action(std::span<const Attempt> history, const Policy& policy, const RuleMatch& m,
                        const AlertRecord& lead, const Node& node, Time now,
                        const CapacityCheck& capacity, Remediation& r) {
  if (r.action != m.action || r.effective == Action::kDelete) return false;  // a person's choice
  const int64_t repairs = recent_repairs(history, now, policy.suspect_window);
  if (policy.suspect_faults > 0 && repairs + 1 >= policy.suspect_faults) {
    r.effective_reason = fmt::format(
        "suspect host {}: fault {} within {} ({} earlier repairs); replaced by new "
        "hardware, the host goes to repair with a ticket",
        r.host, repairs + 1, format_duration(policy.suspect_window), repairs);
    r.effective = Action::kMigrate;
    r.suspect = true;
    return true;
  }
  if (!policy.usual_fix_first || !m.rule.starts_with("default")) return false;
  const std::optional<std::pair<Action, std::string>> fix =
      class_fix(history, policy, lead, now, r);
  if (!fix) return false;
  if (capacity && capacity(node.instance_type)) {  // no spare for it now
    r.effective_reason += std::string(r.effective_reason.empty() ? "" : "; ") + "no spare for " +
                          std::string(to_string(fix->first)) + ", which " + lead.fault +
                          " needs: " + std::string(to_string(r.effective)) + " first";
    return false;
  }
  r.effective = fix->first;
  r.effective_reason = fix->second;
  return true;
}

namespace {

// The node's firing alerts a remediation may rest on (the request's, else every one a detector
// may act on), most severe first; an error when there is none.
Result<std::vector<const AlertRecord*>> gather_evidence(const HealthState& h,
                                                        const ProposalRequest& req) {
  std::vector<const AlertRecord*> evidence;
  if (!req.evidence.empty()) {
    for (const std::string& id : req.evidence) {
      const AlertRecord* a = h.find_alert(id);
      if (a && a->state == "firing" && a->node == req.node) evidence.push_back(a);
    }
  } else {
    const std::string prefix = req.node + "|";
    for (auto it = h.open_alerts.lower_bound(prefix);
         it != h.open_alerts.end() && it->first.starts_with(prefix); ++it) {
      const AlertRecord& a = h.alerts.at(it->second);
      // A detector proposes only for alerts with an action; a person may act on any failing check.
      if (a.state == "firing" && (!req.from_detector || a.action != "none")) evidence.push_back(&a);
    }
  }
  if (evidence.empty()) {
    return validation_error("NodeId: node " + req.node +
                            " has no firing alert; a remediation needs a failing health check as "
                            "evidence (see: gpufleet alert list --node " +
                            req.node + ")");
  }
  std::stable_sort(evidence.begin(), evidence.end(),
                   [](const AlertRecord* a, const AlertRecord* b) {
                     return severity_rank(a->severity) > severity_rank(b->severity);
                   });
  return evidence;
}

// r's effective action and its reason: the ladder, the evidence rule for migrate, then the
// defaults by fault class. True when the fault class chose it (the rule's approval covers it).
bool decide_effective(const HealthState& h, const Policy& policy, const RuleMatch& m,
                      const AlertRecord& lead, const Node& node, Time now,
                      const CapacityCheck& capacity, Remediation& r) {
  const std::vector<Attempt> hist = history_of(h, r.host);
  Effective eff{r.action, ""};
  if (r.action == Action::kReboot || r.action == Action::kReprovision)
    eff = escalate(r.action, lead.fault, hist, now, policy.escalation_window);
  bool critical_now = false;
  const std::string prefix = r.node + "|";
  for (auto it = h.open_alerts.lower_bound(prefix);
       it != h.open_alerts.end() && it->first.starts_with(prefix); ++it) {
    const AlertRecord& a = h.alerts.at(it->second);
    critical_now =
        critical_now || (a.state == "firing" && a.severity == health::Severity::kCritical);
  }
  std::optional<Time> last_critical;
  if (auto it = h.host_last_critical.find(r.host); it != h.host_last_critical.end())
    last_critical = it->second;
  const Effective ev = require_migration_evidence(eff.action, critical_now, last_critical, now,
                                                  policy.migration_evidence_window);
  r.effective = ev.action;
  r.effective_reason = eff.reason;
  if (!ev.reason.empty())
    r.effective_reason += (r.effective_reason.empty() ? "" : "; ") + ev.reason;
  // Defaults by fault class (docs/remediation.md): a suspect host is replaced; otherwise a fault
  // whose cause a bigger repair usually needs goes straight to it, when a spare allows it.
  return fault_class_action(hist, policy, m, lead, node, now, capacity, r);
}

// Approval: the rule's, a person's always for migrate and delete unless a rule (or the fault
// class under a rule's auto-approval) chose exactly that; NodeRecovery None and an open or
// tripping circuit breaker leave it to a person. Sets r's approval; may add breaker.tripped.
void decide_approval(const HealthState& h, const Policy& policy, const Cluster& cluster,
                     const RuleMatch& m, const ProposalRequest& req, Time now, int64_t auto_now,
                     bool by_class, Remediation& r, std::vector<Event>& out) {
  bool auto_ok = m.approval == Approval::kAuto && !m.support && m.action != Action::kNone;
  // A person's request runs on its own only when the policy auto-approves exactly that action for
  // the evidence; anything else (a record-only alert, another action) waits for a second person.
  if (!req.from_detector && m.action != r.effective) auto_ok = false;
  if ((r.effective == Action::kMigrate || r.effective == Action::kDelete) &&
      m.action != r.effective && !by_class)
    auto_ok = false;
  if (r.effective == Action::kDelete) auto_ok = false;
  auto hold = [&](const std::string& why) {
    auto_ok = false;
    r.reason += std::string(r.reason.empty() ? "" : "; ") + why;
  };
  if (auto_ok && cluster.node_recovery == "None")
    hold("NodeRecovery is None: a person must approve");
  auto breaker = h.breakers.find(req.cluster);
  if (auto_ok && breaker != h.breakers.end() && breaker->second.open) {
    r.held_by_breaker = true;
    hold(
        "circuit breaker open: automatic remediation halted until reset (gpufleet "
        "circuit-breaker reset " +
        req.cluster + ")");
  } else if (auto_ok) {
    const int64_t recent =
        recent_auto_approvals(h, req.cluster, now, policy.breaker_window) + auto_now;
    if (recent + 1 > policy.breaker_max_auto) {
      const std::string why =
          fmt::format("{} automatic remediations within {} (limit {})", recent + 1,
                      format_duration(policy.breaker_window), policy.breaker_max_auto);
      out.push_back(to_event(health_events::BreakerTripped{req.cluster, why}));
      r.held_by_breaker = true;
      hold("circuit breaker tripped: " + why + "; a person must approve");
    }
  }
  if (auto_ok) {
    r.status = RStatus::kApproved;
    r.auto_approved = true;
    r.approver = "policy:" + m.rule;
    r.approved_at = now;
  }
}

}  // namespace

Result<std::vector<Event>> propose(const FleetState& state, Time now, const ProposalRequest& req,
                                   const CapacityCheck& capacity, int64_t auto_now, int64_t taken) {
  GF_ASSIGN_OR_RETURN(const Node* node, live_node(state, req.cluster, req.node));
  const Cluster& cluster = *state.view().find_cluster(req.cluster);
  const HealthState& h = state.view().health_state();
  if (const Remediation* open = h.open_remediation(req.node)) {
    return conflict_error("NodeId: node " + req.node + " already has remediation " + open->id +
                          " (" + std::string(to_string(open->status)) +
                          "); each remediation targets one node and a node has one at a time");
  }
  // Evidence: a failing health check (a firing alert) on that node.
  GF_ASSIGN_OR_RETURN(const std::vector<const AlertRecord*> evidence, gather_evidence(h, req));
  const AlertRecord& lead = *evidence.front();
  const Policy& policy = h.policy(req.cluster);
  std::optional<Action> default_action;
  if (lead.fault == "xid:154") default_action = parse_action(lead.action);
  const RuleMatch m = match(policy, lead.detector, lead.fault, node->group, default_action);
  const Action asked = req.action.value_or(m.action);
  if (asked == Action::kNone) {
    return validation_error("Action: the policy maps " + lead.fault + " on pool " + node->group +
                            " to no action (rule " + m.rule + "); it is recorded only");
  }
  if (asked == Action::kDelete && req.from_detector)
    return validation_error("Action: delete is done only by a person");

  Remediation r;
  r.id = numbered_id("rem", h.remediation_counter + 1 + taken);
  r.cluster = req.cluster;
  r.node = req.node;
  r.group = node->group;
  r.host = node->host();
  r.fault = lead.fault;
  r.detector = req.detector;
  r.request_id = req.request_id;
  r.action = asked;
  r.requester = req.requester;
  r.rule = m.rule;
  r.created_at = now;
  r.reason = req.reason;
  for (const AlertRecord* a : evidence) r.evidence.push_back(a->id);
  const bool by_class = decide_effective(h, policy, m, lead, *node, now, capacity, r);
  if ((r.effective == Action::kMigrate || r.effective == Action::kReprovision) &&
      !req.from_detector && capacity) {
    if (std::optional<std::string> why = capacity(node->instance_type)) {
      return conflict_error("Action: " + std::string(to_string(r.effective)) + " needs a spare " +
                            node->instance_type + ": " + *why);
    }
  }
  std::vector<Event> out;
  decide_approval(h, policy, cluster, m, req, now, auto_now, by_class, r, out);
  out.insert(out.begin(), to_event(health_events::RemediationProposed{r}, req.key));
  return out;
}

}  // namespace gf::remediate
