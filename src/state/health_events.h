// Journal event types for health, alerts and remediation (docs/remediation.md), typed as
// state/event_codec.h describes. Appliers live in health_apply.cpp; each also records user events
// (ResourceType Alert, Remediation, Host, Cluster).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/time.h"
#include "model/health_records.h"
#include "model/remediation_policy.h"
#include "state/event_codec.h"

namespace gf::event_codec {
template <>
struct Codec<remediate::Status>
    : EnumCodec<remediate::Status,
                static_cast<std::string_view (*)(remediate::Status)>(&remediate::to_string),
                &remediate::parse_status> {};
template <>
struct Codec<health::Severity>
    : EnumCodec<health::Severity,
                static_cast<std::string_view (*)(health::Severity)>(&health::to_string),
                &health::parse_severity> {};
// A remediation travels as its canonical record (µs times).
template <>
struct Codec<remediate::Remediation> {
  static Json put(const remediate::Remediation& r) { return r.to_canonical(); }
  static void take(const Json& j, remediate::Remediation& out) {
    Result<remediate::Remediation> r = remediate::Remediation::from_canonical(j);
    if (!r.ok()) throw Malformed(r.status().message());
    out = std::move(*r);
  }
};
}  // namespace gf::event_codec

namespace gf::health_events {

using event_codec::decode;
using event_codec::field;
using event_codec::to_event;
using event_codec::to_json;

// One detector observation (present) or clear (not present). Opens, updates, resolves or discards
// an alert. A present signal carries the verdict of the policy at the time (severity, persistence,
// action, support) and the simulated fault model (cleared by, recurs, signal); a clear says what
// resolved it and whether that action fixed the fault.
struct AlertSignal {
  static constexpr std::string_view kType = "alert.signal";
  std::string cluster;
  std::string node;
  std::string detector;
  std::string subject;
  std::string fault;
  bool present = false;
  std::string evidence;
  std::optional<std::string> group;
  std::optional<std::string> host;
  std::optional<health::Severity> severity;
  std::optional<std::string> summary;
  std::optional<Duration> persistence;
  std::optional<std::string> action;
  std::optional<bool> support;
  std::optional<std::vector<std::string>> cleared_by;
  std::optional<int64_t> recurs;
  std::optional<Json> signal;
  std::optional<std::string> resolved_by;
  std::optional<bool> fixed;
  std::optional<Duration> recur_after;
  static constexpr auto fields() {
    return std::tuple{field("Cluster", &AlertSignal::cluster),
                      field("Node", &AlertSignal::node),
                      field("Detector", &AlertSignal::detector),
                      field("Subject", &AlertSignal::subject),
                      field("Fault", &AlertSignal::fault),
                      field("Present", &AlertSignal::present),
                      field("Evidence", &AlertSignal::evidence),
                      field("Group", &AlertSignal::group),
                      field("Host", &AlertSignal::host),
                      field("Severity", &AlertSignal::severity),
                      field("Summary", &AlertSignal::summary),
                      field("PersistenceUs", &AlertSignal::persistence),
                      field("Action", &AlertSignal::action),
                      field("Support", &AlertSignal::support),
                      field("ClearedBy", &AlertSignal::cleared_by),
                      field("Recurs", &AlertSignal::recurs),
                      field("Signal", &AlertSignal::signal),
                      field("ResolvedBy", &AlertSignal::resolved_by),
                      field("Fixed", &AlertSignal::fixed),
                      field("RecurAfterUs", &AlertSignal::recur_after)};
  }
  Status check() const;  // a present signal carries the verdict, a clear its resolution
};
// Its persistence window passed while it was still present.
struct AlertFired {
  static constexpr std::string_view kType = "alert.fired";
  std::string alert_id;
  static constexpr auto fields() { return std::tuple{field("AlertId", &AlertFired::alert_id)}; }
};
// A recurring simulated fault came back (the new alert.signal follows).
struct AlertRecurred {
  static constexpr std::string_view kType = "alert.recurred";
  std::string alert_id;
  static constexpr auto fields() { return std::tuple{field("AlertId", &AlertRecurred::alert_id)}; }
};
// The webhook (or support webhook) `target` took this state of the alert.
struct AlertDelivered {
  static constexpr std::string_view kType = "alert.delivered";
  std::string alert_id;
  std::string target;
  std::string state;
  static constexpr auto fields() {
    return std::tuple{field("AlertId", &AlertDelivered::alert_id),
                      field("Target", &AlertDelivered::target),
                      field("State", &AlertDelivered::state)};
  }
};
// A remediation is proposed (maybe approved by policy at once): its canonical record.
struct RemediationProposed {
  static constexpr std::string_view kType = "remediation.proposed";
  remediate::Remediation remediation;
  static constexpr auto fields() {
    return std::tuple{field("Remediation", &RemediationProposed::remediation)};
  }
};
// A status change, or with the same status a new reason (what it waits for). `by` approves or
// cancels; WaitingForIdle ends at `idle_deadline` at the latest (none: never); a migration names
// the `new_host` (none: one is numbered).
struct RemediationUpdated {
  static constexpr std::string_view kType = "remediation.updated";
  std::string remediation_id;
  remediate::Status status = remediate::Status::kProposed;
  std::string reason;
  std::optional<std::string> by;
  std::optional<Time> idle_deadline;
  std::optional<std::string> new_host;
  static constexpr auto fields() {
    return std::tuple{field("RemediationId", &RemediationUpdated::remediation_id),
                      field("Status", &RemediationUpdated::status),
                      field("Reason", &RemediationUpdated::reason),
                      field("By", &RemediationUpdated::by),
                      field("IdleDeadlineUs", &RemediationUpdated::idle_deadline),
                      field("NewHost", &RemediationUpdated::new_host)};
  }
};
// PUT /v1/clusters/{name}/remediation-policy.
struct PolicySet {
  static constexpr std::string_view kType = "remediation.policy_set";
  std::string cluster;
  remediate::Policy policy;
  static constexpr auto fields() {
    return std::tuple{field("Cluster", &PolicySet::cluster), field("Policy", &PolicySet::policy)};
  }
};
// Burn-in start and outcome of a freed host: BurnIn, InService, Repair (a hardware ticket with the
// failed `checks`), or Interrupted (back to the status before the burn-in).
struct HostStatus {
  static constexpr std::string_view kType = "host.status";
  std::string host_id;
  std::string status;
  std::string reason;
  std::optional<Json> checks;
  static constexpr auto fields() {
    return std::tuple{field("HostId", &HostStatus::host_id), field("Status", &HostStatus::status),
                      field("Reason", &HostStatus::reason), field("Checks", &HostStatus::checks)};
  }
};
// Too many automatic remediations: the cluster's circuit breaker opens until a person resets it.
struct BreakerTripped {
  static constexpr std::string_view kType = "breaker.tripped";
  std::string cluster;
  std::string reason;
  static constexpr auto fields() {
    return std::tuple{field("Cluster", &BreakerTripped::cluster),
                      field("Reason", &BreakerTripped::reason)};
  }
};
// A person reset the circuit breaker.
struct BreakerReset {
  static constexpr std::string_view kType = "breaker.reset";
  std::string cluster;
  std::string by;
  static constexpr auto fields() {
    return std::tuple{field("Cluster", &BreakerReset::cluster), field("By", &BreakerReset::by)};
  }
};
// PUT /v1/clusters/{name}/nodes/{id}/labels: the node's labels, whole.
struct NodeLabels {
  static constexpr std::string_view kType = "health.node_labels";
  std::string cluster;
  std::string instance_id;
  std::map<std::string, std::string> labels;
  static constexpr auto fields() {
    return std::tuple{field("Cluster", &NodeLabels::cluster),
                      field("InstanceId", &NodeLabels::instance_id),
                      field("Labels", &NodeLabels::labels)};
  }
};

}  // namespace gf::health_events

namespace gf::event_type {

inline constexpr std::string_view kAlertSignal = health_events::AlertSignal::kType;
inline constexpr std::string_view kAlertFired = health_events::AlertFired::kType;
inline constexpr std::string_view kAlertRecurred = health_events::AlertRecurred::kType;
inline constexpr std::string_view kAlertDelivered = health_events::AlertDelivered::kType;
inline constexpr std::string_view kRemediationProposed = health_events::RemediationProposed::kType;
inline constexpr std::string_view kRemediationUpdated = health_events::RemediationUpdated::kType;
inline constexpr std::string_view kRemediationPolicySet = health_events::PolicySet::kType;
inline constexpr std::string_view kHostStatus = health_events::HostStatus::kType;
inline constexpr std::string_view kBreakerTripped = health_events::BreakerTripped::kType;
inline constexpr std::string_view kBreakerReset = health_events::BreakerReset::kType;
inline constexpr std::string_view kNodeLabels = health_events::NodeLabels::kType;

}  // namespace gf::event_type
