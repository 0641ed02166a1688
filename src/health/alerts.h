// Alerts (SPEC §5.1; seed 003): the detector table as data (severity, persistence window,
// default remediation action per detector, with per-fault overrides where the SPEC's default
// mapping names a fault), and AlertTracker, the pending → firing → resolved state machine that
// turns detector signals into alerts. Pure: no I/O, no clock (time is a parameter). Table and
// state machine: docs/health.md "Alerts".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/time.h"

namespace gf::health {

enum class Severity : uint8_t { kInfo, kWarning, kCritical };
std::string_view to_string(Severity s);  // "info", "warning", "critical"

// Actions: "reboot", "reprovision", "migrate" (SPEC §5.2), "record-only" (recorded, never
// remediated), "support" (no remediation mapped: recorded and forwarded to the support webhook),
// "driver-recovery" (Xid 154: the action the driver's message names, xid154_recovery_action).
inline constexpr std::string_view kActionReboot = "reboot";
inline constexpr std::string_view kActionReprovision = "reprovision";
inline constexpr std::string_view kActionMigrate = "migrate";
inline constexpr std::string_view kActionRecordOnly = "record-only";
inline constexpr std::string_view kActionSupport = "support";
inline constexpr std::string_view kActionDriverRecovery = "driver-recovery";

// SPEC §5.1: "Default persistence window 5 min (configurable per detector)".
inline constexpr Duration kDefaultPersistence = minutes(5);

struct DetectorRule {
  std::string_view detector;
  Severity severity = Severity::kCritical;
  Duration persistence = kDefaultPersistence;
  std::string_view action;          // one of the kAction* names
  bool approval_required = false;   // the SPEC row says "approval required"
  std::string_view source;          // the SPEC §5.1 table row it comes from
};

// The 14 SPEC §5.1 detectors, in SPEC order.
std::span<const DetectorRule> detector_rules();
// nullptr for a detector the table does not name (its alerts go to the support webhook).
const DetectorRule* detector_rule(std::string_view detector);

// What an alert of this detector and fault code gets: the detector's row, with the SPEC rows
// that name a fault overriding severity and action ("xid:79", "xid:13", "dcgm:row-remap-failure",
// "ib-link:symbol-errors"). Unknown detector: warning, "support", default window. An Xid code the
// SPEC table does not name: warning, "support".
struct AlertClass {
  Severity severity = Severity::kWarning;
  std::string_view action = kActionSupport;
  Duration persistence = kDefaultPersistence;
  bool approval_required = false;
};
AlertClass classify(std::string_view detector, std::string_view fault);

// One observation by a detector. present=false: the detector saw the condition cleared.
struct Signal {
  std::string detector;
  std::string node;
  std::string subject;   // gpu pci, mount point, port... ("" for node-wide)
  std::string fault;     // e.g. "xid:79"
  std::string evidence;  // verbatim (raw log line, counters)
  Time at{};
  bool present = true;
};

enum class AlertState : uint8_t { kPending, kFiring, kResolved };
std::string_view to_string(AlertState s);  // "pending", "firing", "resolved"

struct Evidence {
  Time at{};
  bool present = true;
  std::string text;  // verbatim
  bool operator==(const Evidence&) const = default;
};

struct Alert {
  std::string id;  // "alert-<n>", n counting from 1 per tracker; a re-fire gets a new id
  std::string node, detector, subject, fault;
  Severity severity = Severity::kWarning;
  std::string action;
  bool approval_required = false;
  AlertState state = AlertState::kPending;
  Time first_seen{}, last_seen{};
  std::optional<Time> fired_at, resolved_at;
  // evidence[0] is the first observation; the rest are the last kMaxRecentEvidence ones.
  std::vector<Evidence> evidence;
  uint64_t observations = 0;      // every observation, including those whose evidence was dropped
  uint64_t evidence_dropped = 0;  // observations between the first and the recent ones
};

enum class ChangeKind : uint8_t { kPending, kFiring, kResolved, kDiscarded };
std::string_view to_string(ChangeKind k);  // "Pending", "Firing", "Resolved", "Discarded"

struct AlertChange {
  ChangeKind kind = ChangeKind::kPending;
  Time at{};    // when it happened (a firing: first_seen + window, even if noticed later)
  Alert alert;  // the alert after the change
};

class AlertTracker {
 public:
  static constexpr size_t kMaxRecentEvidence = 16;
  static constexpr size_t kDefaultMaxResolved = 256;
  explicit AlertTracker(size_t max_resolved = kDefaultMaxResolved) : max_resolved_(max_resolved) {}

  // A policy's window for one detector (SPEC: "configurable per detector"); applies to alerts
  // first seen afterwards. Zero: an alert fires as soon as it is seen. Negative counts as zero.
  void set_persistence(std::string detector, Duration window);

  // Present: a new key becomes Pending (and Firing at once when its window is zero); a known one
  // records the evidence and fires when its window has passed by `s.at`. Cleared: a Firing alert
  // is Resolved, a Pending one whose window has not passed is Discarded (never fires); a clear
  // of an unknown key changes nothing. Changes come in time order.
  std::vector<AlertChange> observe(const Signal& s);
  // Fires every Pending alert whose window has passed by `now`, ordered by (fire time, node,
  // detector, subject, fault).
  std::vector<AlertChange> tick(Time now);
  // The earliest time a Pending alert will fire; nullopt when none is pending.
  std::optional<Time> next_deadline() const;

  // Pending and firing alerts, ordered by (node, detector, subject, fault).
  std::vector<Alert> active() const;
  const Alert* find(std::string_view node, std::string_view detector, std::string_view subject,
                    std::string_view fault) const;
  // The last max_resolved resolved alerts, oldest first.
  const std::deque<Alert>& resolved() const { return resolved_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  struct Entry {
    Alert alert;
    Duration persistence{};
  };
  static void add_evidence(Alert& a, const Signal& s);
  static std::optional<AlertChange> fire_if_due(Entry& e, Time now);

  size_t max_resolved_;
  std::map<std::string, Duration, std::less<>> persistence_;
  uint64_t next_id_ = 1;
  std::map<Key, Entry> active_;
  std::deque<Alert> resolved_;
};

}  // namespace gf::health
