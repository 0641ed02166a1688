// The remediation engine's decisions that both the controller and the API make
// (docs/remediation.md): turning a detector signal into alert.signal events with the policy's
// verdict, and turning a proposal (a firing alert, or a person's request) into a remediation record
// with its effective action (escalation ladder, evidence for migrate), approval (policy rule,
// NodeRecovery, circuit breaker) and idempotency key. Pure: state and time in, events out.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loop/controller.h"
#include "model/health_records.h"
#include "model/remediation_policy.h"
#include "remediate/signal.h"
#include "state/health_events.h"

namespace gf::remediate {

inline constexpr char kRemediateIntent[] =
    "remediate";  // cloud driver: reboot/reprovision/migrate/delete
inline constexpr char kBurnInIntent[] = "burnin";  // cloud driver: burn-in checks of a freed host
inline constexpr char kWebhookDriver[] = "webhook";
inline constexpr char kDeliverIntent[] = "deliver";

// The simulated fault model a scenario's `fault` step carries (docs/scenarios.md).
struct FaultModel {
  std::vector<std::string> cleared_by;  // empty: every action fixes it
  int64_t recurs = 0;
};

// The node a signal is about, checked: the cluster exists and the node is one of its live nodes.
Result<const Node*> live_node(const FleetState& state, const std::string& cluster,
                              const std::string& node);

// Detections → alert.signal events (present), each with the policy's severity, window, action,
// support flag. Nothing recognised → no events.
std::vector<Event> signal_events(const FleetState& state, const std::string& cluster,
                                 const Node& node,
                                 const std::vector<remediate::Detection>& detections,
                                 const Json& raw, const FaultModel& model);
// alert.signal events (not present) for the node's open alerts, all or those of `detector`.
std::vector<Event> clear_events(const FleetState& state, const std::string& node,
                                const std::string& detector, const std::string& resolved_by,
                                bool fixed);

struct ProposalRequest {
  std::string cluster, node;
  std::optional<remediate::Action> action;  // nullopt: the policy's action for the evidence
  std::string requester;                    // "detector:<name>", "label:…", or a person
  std::string detector, request_id, reason;
  std::vector<std::string> evidence;  // alert ids (empty: every firing alert of the node)
  bool from_detector = false;
  std::string key;  // idempotency key of the remediation.proposed event
};

// The capacity check of the cloud driver: nullopt when a spare instance of `instance_type` is
// available for a reprovision or migrate; otherwise why not.
using CapacityCheck = std::function<std::optional<std::string>(const std::string& instance_type)>;

// Builds remediation.proposed (and breaker.tripped when this auto-approval trips the breaker).
// `auto_now` counts auto-approvals already decided in this pass, not yet in the state. Errors:
// no such live node, no firing alert as evidence, an open remediation of that node, a policy
// that maps the evidence to no action, no spare capacity.
// `taken` counts remediation ids already handed out in this pass.
Result<std::vector<Event>> propose(const FleetState& state, Time now, const ProposalRequest& req,
                                   const CapacityCheck& capacity, int64_t auto_now = 0,
                                   int64_t taken = 0);

// Defaults by fault class (docs/remediation.md): a suspect host (Policy.suspect_faults faults
// within suspect_window, this one and those earlier remediations of `history`, the host's, fixed)
// is replaced (migrate, r.suspect); otherwise, with UsualFixFirst and the default mapping, a fault
// whose usual fix is more than r's effective action goes straight to it when a spare exists. True
// when it changed r's effective action (which the matched rule's approval then covers).
bool fault_class_action(std::span<const Attempt> history, const Policy& policy, const RuleMatch& m,
                        const AlertRecord& lead, const Node& node, Time now,
                        const CapacityCheck& capacity, Remediation& r);

// A remediation.updated event: the struct (to add a deadline or a new host), and as an event.
health_events::RemediationUpdated updated(const remediate::Remediation& r, remediate::Status status,
                                          std::string reason, std::string by = "");
Event update_event(const remediate::Remediation& r, remediate::Status status, std::string reason,
                   std::string by = "");

// Auto-approvals of the cluster within the policy's circuit-breaker window before `now`, and
// since a person last reset its breaker.
int64_t recent_auto_approvals(const remediate::HealthState& h, const std::string& cluster, Time now,
                              Duration window);

}  // namespace gf::remediate
