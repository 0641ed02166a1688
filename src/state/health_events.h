// Journal event types for health, alerts and remediation (docs/remediation.md). Appliers live in
// health_apply.cpp; each also records user events (ResourceType Alert, Remediation, Host).
#pragma once

#include <string_view>

namespace gf::event_type {

// {Cluster, Group, Node, Host, Detector, Subject, Fault, Severity, Summary, Evidence, Present,
//  PersistenceUs, Action, Support, ClearedBy[], Recurs, Signal, ResolvedBy}: one detector
// observation (present) or clear (not present). Opens, updates, resolves or discards an alert.
inline constexpr std::string_view kAlertSignal = "alert.signal";
// {AlertId}: its persistence window passed while it was still present.
inline constexpr std::string_view kAlertFired = "alert.fired";
// {AlertId}: a recurring simulated fault came back (the new alert.signal follows).
inline constexpr std::string_view kAlertRecurred = "alert.recurred";
// {AlertId, Target, State}: the webhook (or support webhook) took this state of the alert.
inline constexpr std::string_view kAlertDelivered = "alert.delivered";
// {Remediation: the canonical record}
inline constexpr std::string_view kRemediationProposed = "remediation.proposed";
// {RemediationId, Status, Reason, By?, IdleDeadlineUs?, NewHost?}: a status change (or, with the
// same status, a new reason: what it waits for).
inline constexpr std::string_view kRemediationUpdated = "remediation.updated";
// {Cluster, Policy}
inline constexpr std::string_view kRemediationPolicySet = "remediation.policy_set";
// {HostId, Status, Reason, Checks?}: burn-in start/outcome (BurnIn, InService, Repair, or
// Interrupted = back to the status before the burn-in).
inline constexpr std::string_view kHostStatus = "host.status";
// {Cluster, Reason} / {Cluster, By}
inline constexpr std::string_view kBreakerTripped = "breaker.tripped";
inline constexpr std::string_view kBreakerReset = "breaker.reset";
// {Cluster, InstanceId, Labels}
inline constexpr std::string_view kNodeLabels = "health.node_labels";

}  // namespace gf::event_type
