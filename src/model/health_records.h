// What the state keeps about health and remediation (docs/remediation.md): alerts, remediations,
// physical hosts, hardware tickets, per-cluster policies and circuit breakers. Plain data with
// their wire shapes (the API's) and a canonical form for snapshots. Changed only by
// state/health_apply.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/time.h"
#include "model/alerts.h"
#include "model/remediation_policy.h"

namespace gf::remediate {

enum class Status : uint8_t {
  kProposed,
  kApproved,
  kWaitingForIdle,
  kDraining,
  kExecuting,
  kRejoining,
  kSucceeded,
  kFailed,
  kCancelled,
  kRejected
};
std::string_view to_string(Status s);
std::optional<Status> parse_status(std::string_view s);

// Not yet ended (Proposed … Rejoining).
bool is_open(Status s);
// Started and not ended: the node is cordoned (WaitingForIdle … Rejoining).
bool in_flight(Status s);

// An alert keeps its first observation and the last kMaxRecentEvidence ones (docs/health.md:
// evidence verbatim, bounded).
inline constexpr size_t kMaxRecentEvidence = 16;
// One observation's evidence is one log line or one reading: longer ones are cut to this.
inline constexpr size_t kMaxEvidenceBytes = 4096;
// One signal request may hold many kernel-log lines, but at most this many detections: each
// becomes a journal event, so the bound keeps one request's cost bounded (docs/security.md).
inline constexpr size_t kMaxDetectionsPerSignal = 256;

// An alert as the state keeps it. `state` "discarded" = it cleared before its window passed.
struct AlertRecord {
  std::string id;  // "alert-<n>"
  std::string cluster, group, node, host;
  std::string detector, subject, fault;
  health::Severity severity = health::Severity::kWarning;
  std::string summary;
  std::string state = "pending";  // pending | firing | resolved | discarded
  Time first_seen{}, last_seen{};
  std::optional<Time> fired_at, resolved_at;
  Duration persistence{};
  std::string resolved_by;  // "signal cleared", "reboot" (the action that fixed it), …
  uint64_t observations = 0;
  std::vector<health::Evidence> evidence;  // the first, then the last kMaxRecentEvidence (verbatim)
  // The policy's verdict when it was raised.
  std::string action;    // none | reboot | reprovision | migrate
  bool support = false;  // nothing mapped: forwarded to the support webhook
  // Simulated fault model (scenario `fault`: clearedBy, recurs).
  std::vector<std::string> cleared_by;  // empty = any action fixes it
  int64_t recurs = 0;
  Json signal;                      // the raw signal, for a recurrence
  std::set<std::string> delivered;  // "<target>:<state>" already delivered

  bool active() const { return state == "pending" || state == "firing"; }
  Json to_json(bool canonical = false) const;  // the API shape (AlertId, ClusterName, NodeId, …)
  Json to_canonical() const { return to_json(true); }
  static Result<AlertRecord> from_canonical(const Json& j);
};

struct Remediation {
  std::string id;  // "rem-<n>"
  std::string cluster, node, group, host;
  std::string fault, detector, request_id;
  Action action = Action::kReboot;     // asked
  Action effective = Action::kReboot;  // after the escalation and evidence rules
  std::string effective_reason;
  Status status = Status::kProposed;
  std::string requester, approver, rule, reason;
  std::vector<std::string> evidence;  // alert ids
  bool auto_approved = false;
  // The policy approves it on its own, but the circuit breaker held it for a person: once a
  // person resets the breaker, it is approved automatically if its alert still fires.
  bool held_by_breaker = false;
  // Its host was suspect (docs/remediation.md "Suspect hosts"): it is replaced, and the old host
  // goes to repair with a ticket instead of back to the pool.
  bool suspect = false;
  Time created_at{};
  std::optional<Time> approved_at, started_at, acted_at, completed_at;
  std::optional<Time> drained_at;     // Draining began: the wait for idle ended
  std::optional<Time> idle_deadline;  // WaitingForIdle ends here at the latest (none: never)

  Json to_json(
      bool canonical = false) const;  // the API record (docs/remediation.md); canonical: µs times
  Json to_canonical() const { return to_json(true); }
  static Result<Remediation> from_canonical(const Json& j);
};

// A physical machine under a node. InService hosts carry a node; freed ones go through
// Inspecting → BurnIn → InService (spare, back to the pool) or Repair (with a ticket).
struct Host {
  std::string id;
  std::string status = "InService";  // InService | Inspecting | BurnIn | Repair
  std::string previous;  // the status before BurnIn (an interrupted burn-in returns here)
  std::string cluster, node, instance_type;
  Time since{};
  std::string reason;
  std::optional<Time> last_critical;  // the last critical alert that fired on it
  bool suspect = false;               // retired as a suspect host: repair and a ticket, no burn-in
  Json to_json(bool canonical = false) const;
  static Result<Host> from_json(const Json& j);  // the canonical form
};

struct Ticket {
  std::string id;  // "ticket-<n>"
  std::string host, cluster, node, instance_type;
  Time opened_at{};
  std::string summary;
  Json checks = Json::array();  // [{Name, Result, Log}]
  Json to_json(bool canonical = false) const;
  static Result<Ticket> from_json(const Json& j);  // the canonical form
};

struct Breaker {
  bool open = false;
  std::optional<Time> tripped_at;
  std::string reason;
  std::optional<Time> reset_at;
  std::string reset_by;
  bool operator==(const Breaker&) const = default;
};

// Everything of health and remediation (docs/remediation.md) in the state. Shared immutable between
// published views; health_apply.cpp copies it on write.
struct HealthState {
  std::map<std::string, AlertRecord, std::less<>> alerts;  // by id
  std::map<std::string, std::string, std::less<>>
      open_alerts;  // "<node>|<detector>|<subject>|<fault>" -> id
  std::map<std::string, Remediation, std::less<>> remediations;  // by id
  std::map<std::string, std::string, std::less<>> requests;      // "<detector>|<request id>" -> id
  std::map<std::string, std::string, std::less<>> open_by_node;  // node -> its open remediation
  // node -> the ids of every remediation of that node (derived, like the two
  // indexes above: rebuilt by from_json, not serialized).
  std::map<std::string, std::vector<std::string>, std::less<>> by_node;
  std::map<std::string, Host, std::less<>> hosts;  // hosts out of service, and spares
  // The hosts being inspected or burnt in (derived like by_node; index_host keeps it).
  std::set<std::string, std::less<>> hosts_in_inspection;
  std::vector<Ticket> tickets;
  std::map<std::string, Policy, std::less<>> policies;  // by cluster (absent = the default policy)
  std::map<std::string, Breaker, std::less<>> breakers;
  // Recurring simulated faults waiting to come back: (time, alert id whose fault recurs).
  std::set<std::pair<Time, std::string>> recurrences;
  std::map<std::string, std::optional<Time>, std::less<>> host_last_critical;  // by host id
  int64_t alert_counter = 0, remediation_counter = 0, ticket_counter = 0, host_counter = 0;

  static std::string alert_key(std::string_view node, std::string_view detector,
                               std::string_view subject, std::string_view fault);
  const AlertRecord* find_alert(std::string_view id) const;
  const Remediation* find_remediation(std::string_view id) const;
  // Files `host` in hosts_in_inspection by its status: after every change of it.
  void index_host(const Host& host);
  // The open remediation of that node, or null (at most one: one node per remediation).
  const Remediation* open_remediation(std::string_view node) const;
  const Policy& policy(std::string_view cluster) const;
  // The end of the node's cooldown: the latest end of a remediation that acted on it, plus its
  // cluster's cooldown; nullopt when none acted (docs/remediation.md).
  std::optional<Time> cooldown_until(std::string_view node) const;

  Json to_json() const;  // canonical
  static Result<HealthState> from_json(const Json& j);
};

}  // namespace gf::remediate
