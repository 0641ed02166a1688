// Remediation policy (docs/remediation.md): rules matched by fault pattern and node pool,
// with the docs/health.md default mapping underneath; wait-for-idle, persistence, cooldown,
// concurrency, circuit breaker, escalation and migration-evidence windows; and the two pure rules
// that turn the asked action into the effective one (escalation ladder, evidence for migrate). No
// I/O, no clock: time is a parameter. See docs/remediation.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "model/alerts.h"

namespace gf::remediate {

// kNone: record only (never remediated). kDelete: send the node to repair (a person only).
enum class Action : uint8_t { kNone, kReboot, kReprovision, kMigrate, kDelete };
std::string_view to_string(Action a);  // "none", "reboot", "reprovision", "migrate", "delete"
std::optional<Action> parse_action(std::string_view s);

enum class Approval : uint8_t { kAuto, kManual };
std::string_view to_string(Approval a);  // "auto", "manual"

struct Rule {
  std::string fault;      // "xid:119", "xid:*", a detector name ("dcgm-row-remap"), or "*"
  std::string node_pool;  // an instance group name; "" = every pool
  Action action = Action::kReboot;
  Approval approval = Approval::kAuto;
  bool operator==(const Rule&) const = default;
};

inline constexpr Duration kMaxWaitCap = hours(24);

struct Policy {
  std::vector<Rule> rules;                      // matched before the default mapping
  std::optional<Duration> max_wait = hours(2);  // WaitForIdle.MaxWait; nullopt = Never (no limit)
  // WaitForIdle.FatalFaults: Drain (false: a fault that already stopped the job drains at once)
  // or Wait (true: it waits like any other; docs/remediation.md "Defaults by fault class").
  bool wait_on_fatal = false;
  std::map<std::string, Duration, std::less<>> persistence;  // AlertPersistence by detector; "*"
  Duration cooldown = minutes(30);
  int64_t max_concurrent_count = 0;    // MaxConcurrent as a count (0 = use the percent)
  int64_t max_concurrent_percent = 5;  // MaxConcurrent as "N%" of the cluster's nodes
  // DisruptionBudget: remediations in flight at once per node pool, a count or a percent of the
  // pool's live nodes (at least 1).
  int64_t budget_count = 0;
  int64_t budget_percent = 10;
  // UsualFixFirst: go straight to the repair that usually fixes the fault's cause when it is more
  // than the default mapping's action (Xid 79: migrate), when a spare allows it.
  bool usual_fix_first = true;
  // Suspect: a host with this many remediated faults within SuspectWindow is suspect: replaced
  // (migrate) and sent to repair with a ticket instead of back to the pool. 0: never.
  int64_t suspect_faults = 3;
  Duration suspect_window = days(30);
  int64_t breaker_max_auto = 5;        // CircuitBreaker.MaxAuto auto-approvals ...
  Duration breaker_window = hours(1);  // ... within Window trip it
  Duration escalation_window = days(7);
  Duration migration_evidence_window = days(10);

  // PascalCase wire shape of GET/PUT /v1/clusters/{name}/remediation-policy (every field, with
  // the defaults filled in).
  Json to_json() const;
  // Every field optional (defaults as above); errors name the field path, e.g.
  // "WaitForIdle.MaxWait: 30h is above the 24h cap".
  static Result<Policy> from_json(const Json& j, const std::string& path = "");

  // max(1, nodes × percent / 100), or the count.
  int64_t max_concurrent(int64_t cluster_nodes) const;
  // max(1, pool nodes × percent / 100), or the count.
  int64_t disruption_budget(int64_t pool_nodes) const;
  // The detector's window, else "*", else the detector table's default (5 min).
  Duration persistence_for(std::string_view detector) const;
  bool operator==(const Policy&) const = default;
};

// What the policy says about one alert: the action, whether a person must approve it, and the
// rule that decided (a user rule's pattern, or "default:<detector or fault>").
struct RuleMatch {
  Action action = Action::kNone;
  Approval approval = Approval::kAuto;
  bool support = false;  // nothing is mapped: recorded and forwarded to the support webhook
  std::string rule;
};

// User rules first, most specific wins: exact fault before "xid:*" before the detector name
// before "*"; within each, a rule for the node's pool before one for every pool; ties go to the
// earlier rule. Then the default mapping of docs/health.md (health::classify): reboot and
// reprovision are auto-approved, migrate needs a person, and "approval required" rows always do.
// `default_action` overrides the table's action (Xid 154: the one the driver's message names).
RuleMatch match(const Policy& policy, std::string_view detector, std::string_view fault,
                std::string_view node_pool, std::optional<Action> default_action = std::nullopt);

// One row of the default mapping match() falls back to when no rule of the policy matches
// (docs/remediation.md "Default rules"): what `detector`'s alerts for `faults` get.
struct DefaultRule {
  std::string detector;
  std::string faults;    // "*": the detector's other faults; else a comma-separated list
  std::string action;    // the table's action: reboot, reprovision, migrate, record-only, support,
                         // driver-recovery (the one the driver's message names)
  std::string approval;  // auto, manual, or "-" where nothing is done to the node
};
// Every row, in the detector table's order; computed with match() on an empty policy, so it is
// what the controller does.
std::vector<DefaultRule> default_rules();

// One earlier remediation on the same machine, for the ladder.
struct Attempt {
  Action action = Action::kReboot;  // the effective action that ran
  std::string fault;
  Time at{};            // when it was proposed
  bool counts = true;   // false: cancelled/rejected, or its fault cleared on its own
  bool fixed = false;   // it acted and succeeded (a suspect host counts these)
  bool failed = false;  // it acted and the fault was still there after it
};

struct Effective {
  Action action = Action::kNone;
  std::string reason;  // empty when the asked action stands
};

// docs/remediation.md: when the same fault came back after the same action was tried twice on this
// machine within `window`, a reboot becomes reprovision and a reprovision becomes migrate
// (repeatedly: a reboot asked after two reboots and two reprovisions becomes migrate).
Effective escalate(Action asked, std::string_view fault, std::span<const Attempt> history, Time now,
                   Duration window);

// docs/remediation.md: migrate needs a critical alert firing now on the node, or one that fired on
// that machine within `window`; otherwise reprovision, with the reason.
Effective require_migration_evidence(Action action, bool critical_now,
                                     std::optional<Time> last_critical, Time now, Duration window);

}  // namespace gf::remediate
