#include "model/alerts.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace gf::health {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "warning";
}

std::optional<Severity> parse_severity(std::string_view s) {
  if (s == "info") return Severity::kInfo;
  if (s == "warning") return Severity::kWarning;
  if (s == "critical") return Severity::kCritical;
  return std::nullopt;
}

namespace {

using S = Severity;
constexpr Duration kW = kDefaultPersistence;

// docs/health.md "Default mapping"; every window is the documented default (5 min) until a policy
// says otherwise.
constexpr std::array<DetectorRule, 14> kRules{{
    {"xid", S::kCritical, kW, kActionReboot, false,
     "Xid 46, 62, 64, 95, 109, 119, 120, 140, 143 (GPU reset needed); Xid 48 (DBE) | reboot "
     "[critical] (other codes: see classify)"},
    {"pcie-bus", S::kCritical, kW, kActionReboot, false,
     "Xid 79 (fell off the bus), PCIe bus drop without Xid | reboot as host power cycle "
     "[critical]; ladder"},
    {"dcgm-ecc", S::kCritical, kW, kActionReboot, false,
     "DCGM volatile DBE > 0; row-remap pending | reboot [critical]"},
    {"dcgm-row-remap", S::kCritical, kW, kActionReboot, false,
     "DCGM volatile DBE > 0; row-remap pending | reboot [critical]; DCGM row-remap failure | "
     "migrate [critical]"},
    {"dcgm-pcie-replay", S::kWarning, kW, kActionReprovision, false,
     "PCIe replay rate above threshold (default 16/min Gen4, 31/min Gen5) | reprovision "
     "[warning]"},
    {"dcgm-thermal", S::kWarning, kW, kActionMigrate, false,
     "sustained thermal throttle (HW_SLOWDOWN, SW/HW_THERMAL, HW_POWER_BRAKE bits) | migrate "
     "[warning]"},
    {"npd-readonly-fs", S::kCritical, kW, kActionReprovision, false,
     "read-only filesystem | reprovision [critical]"},
    {"npd-xfs-hang", S::kCritical, kW, kActionReboot, false,
     "XFS hang, hung task, kernel deadlock, 5+ kubelet/containerd/slurmd restarts in 20 min | "
     "reboot [critical]"},
    {"npd-kernel-deadlock", S::kCritical, kW, kActionReboot, false,
     "XFS hang, hung task, kernel deadlock, 5+ kubelet/containerd/slurmd restarts in 20 min | "
     "reboot [critical]"},
    {"npd-restart-loop", S::kCritical, kW, kActionReboot, false,
     "XFS hang, hung task, kernel deadlock, 5+ kubelet/containerd/slurmd restarts in 20 min | "
     "reboot [critical]"},
    {"slurm-node-state", S::kWarning, kW, kActionMigrate, true,
     "Slurm node DOWN/DRAIN set by someone else (reason not ours) | migrate, approval required "
     "[warning]; never overwrite that drain reason"},
    {"ib-link", S::kCritical, kW, kActionReboot, false,
     "InfiniBand port down | reboot [critical]; symbol errors > 120/h → warning"},
    {"host-reachability", S::kCritical, kW, kActionReboot, false,
     "host unreachable | reboot [critical]"},
    {"disk-pressure", S::kWarning, kW, kActionRecordOnly, false,
     "disk pressure | record only [warning]"},
}};

std::optional<int> xid_code(std::string_view fault) {
  constexpr std::string_view kPrefix = "xid:";
  if (fault.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view digits = fault.substr(kPrefix.size());
  int code = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty())
    return std::nullopt;
  return code;
}

bool one_of(int code, std::span<const int> codes) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

}  // namespace

std::span<const DetectorRule> detector_rules() { return kRules; }

const DetectorRule* detector_rule(std::string_view detector) {
  for (const DetectorRule& r : kRules)
    if (r.detector == detector) return &r;
  return nullptr;
}

AlertClass classify(std::string_view detector, std::string_view fault) {
  const DetectorRule* r = detector_rule(detector);
  if (r == nullptr) return AlertClass{};  // warning, support, default window
  AlertClass c{r->severity, r->action, r->persistence, r->approval_required};
  if (detector == "xid") {
    std::optional<int> code = xid_code(fault);
    if (!code) return {S::kWarning, kActionSupport, r->persistence, false};
    if (one_of(*code, kXidRecordOnly)) return {S::kInfo, kActionRecordOnly, r->persistence, false};
    if (one_of(*code, kXidDetectorAction)) return c;
    if (*code == kXidDriverRecovery)
      return {S::kCritical, kActionDriverRecovery, r->persistence, false};
    return {S::kWarning, kActionSupport, r->persistence, false};
  }
  if (detector == "dcgm-row-remap" && fault == kRowRemapFailure) c.action = kActionMigrate;
  if (detector == "ib-link" && fault == kIbSymbolErrors) {
    c.severity = S::kWarning;
    c.action = kActionSupport;
  }
  return c;
}

}  // namespace gf::health
