// Alerts (docs/health.md; seed 003): the detector table as data (severity, persistence window,
// default remediation action per detector, with per-fault overrides where the default of
// docs/health.md mapping names a fault), and the evidence entry an alert keeps. Pure: no I/O, no
// clock. The pending → firing → resolved state machine lives in the journaled state
// (remediate::AlertRecord, applied by state/health_apply.cpp; the health controller emits
// `alert.fired` at the end of the window). Table and state machine: docs/health.md "Alerts".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/time.h"

namespace gf::health {

enum class Severity : uint8_t { kInfo, kWarning, kCritical };
std::string_view to_string(Severity s);  // "info", "warning", "critical"
std::optional<Severity> parse_severity(std::string_view s);

// Actions: "reboot", "reprovision", "migrate" (docs/remediation.md), "record-only" (recorded, never
// remediated), "support" (no remediation mapped: recorded and forwarded to the support webhook),
// "driver-recovery" (Xid 154: the action the driver's message names, xid154_recovery_action).
inline constexpr std::string_view kActionReboot = "reboot";
inline constexpr std::string_view kActionReprovision = "reprovision";
inline constexpr std::string_view kActionMigrate = "migrate";
inline constexpr std::string_view kActionRecordOnly = "record-only";
inline constexpr std::string_view kActionSupport = "support";
inline constexpr std::string_view kActionDriverRecovery = "driver-recovery";

// docs/health.md: "Default persistence window 5 min (configurable per detector)".
inline constexpr Duration kDefaultPersistence = minutes(5);

struct DetectorRule {
  std::string_view detector;
  Severity severity = Severity::kCritical;
  Duration persistence = kDefaultPersistence;
  std::string_view action;         // one of the kAction* names
  bool approval_required = false;  // docs/health.md's row says "approval required"
  std::string_view source;         // the docs/health.md table row it comes from
};

// The 14 docs/health.md detectors, in the order of docs/health.md.
std::span<const DetectorRule> detector_rules();
// nullptr for a detector the table does not name (its alerts go to the support webhook).
const DetectorRule* detector_rule(std::string_view detector);

// What an alert of this detector and fault code gets: the detector's row, with the rows of
// docs/health.md that name a fault overriding severity and action ("xid:79", "xid:13",
// "dcgm:row-remap-failure", "ib-link:symbol-errors"). Unknown detector: warning, "support", default
// window. An Xid code the table of docs/health.md does not name: warning, "support".
struct AlertClass {
  Severity severity = Severity::kWarning;
  std::string_view action = kActionSupport;
  Duration persistence = kDefaultPersistence;
  bool approval_required = false;
};
AlertClass classify(std::string_view detector, std::string_view fault);

// The Xid codes docs/health.md names, by what classify() gives them: application or user errors
// (record only), codes that take the xid detector's action (reboot), and Xid 154 (the recovery
// the driver's message names). Any other code goes to the support webhook.
inline constexpr std::array<int, 9> kXidRecordOnly{13, 31, 43, 45, 68, 69, 63, 92, 94};
inline constexpr std::array<int, 12> kXidDetectorAction{46,  62,  64,  95, 109, 119,
                                                        120, 140, 143, 48, 74,  79};
inline constexpr int kXidDriverRecovery = 154;
// The faults whose docs/health.md row overrides their detector's.
inline constexpr std::string_view kRowRemapFailure = "dcgm:row-remap-failure";
inline constexpr std::string_view kIbSymbolErrors = "ib-link:symbol-errors";

// One observation kept on an alert (remediate::AlertRecord::evidence). present=false: the
// detector saw the condition cleared.
struct Evidence {
  Time at{};
  bool present = true;
  std::string text;  // verbatim
  bool operator==(const Evidence&) const = default;
};

}  // namespace gf::health
