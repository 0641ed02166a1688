#include "health/alerts.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace gf::health {

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "warning";
}

std::string_view to_string(AlertState s) {
  switch (s) {
    case AlertState::kPending: return "pending";
    case AlertState::kFiring: return "firing";
    case AlertState::kResolved: return "resolved";
  }
  return "pending";
}

std::string_view to_string(ChangeKind k) {
  switch (k) {
    case ChangeKind::kPending: return "Pending";
    case ChangeKind::kFiring: return "Firing";
    case ChangeKind::kResolved: return "Resolved";
    case ChangeKind::kDiscarded: return "Discarded";
  }
  return "Pending";
}

namespace {

using S = Severity;
constexpr Duration kW = kDefaultPersistence;

// SPEC §5.1 "Default mapping"; every window is the SPEC default (5 min) until a policy says
// otherwise.
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
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  return code;
}

bool one_of(int code, std::initializer_list<int> codes) {
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
    if (one_of(*code, {13, 31, 43, 45, 68, 69, 63, 92, 94}))
      return {S::kInfo, kActionRecordOnly, r->persistence, false};
    if (one_of(*code, {46, 62, 64, 95, 109, 119, 120, 140, 143, 48, 74, 79})) return c;
    if (*code == 154) return {S::kCritical, kActionDriverRecovery, r->persistence, false};
    return {S::kWarning, kActionSupport, r->persistence, false};
  }
  if (detector == "dcgm-row-remap" && fault == "dcgm:row-remap-failure") c.action = kActionMigrate;
  if (detector == "ib-link" && fault == "ib-link:symbol-errors") {
    c.severity = S::kWarning;
    c.action = kActionSupport;
  }
  return c;
}

void AlertTracker::add_evidence(Alert& a, const Signal& s) {
  ++a.observations;
  a.evidence.push_back(Evidence{s.at, s.present, s.evidence});
  if (a.evidence.size() > 1 + kMaxRecentEvidence) {
    a.evidence.erase(a.evidence.begin() + 1);
    ++a.evidence_dropped;
  }
}

std::optional<AlertChange> AlertTracker::fire_if_due(Entry& e, Time now) {
  if (e.alert.state != AlertState::kPending) return std::nullopt;
  const Time due = e.alert.first_seen + e.persistence;
  if (now < due) return std::nullopt;
  e.alert.state = AlertState::kFiring;
  e.alert.fired_at = due;
  return AlertChange{ChangeKind::kFiring, due, e.alert};
}

void AlertTracker::set_persistence(std::string detector, Duration window) {
  persistence_[std::move(detector)] = std::max(window, Duration::zero());
}

std::vector<AlertChange> AlertTracker::observe(const Signal& s) {
  std::vector<AlertChange> out;
  Key key{s.node, s.detector, s.subject, s.fault};
  auto it = active_.find(key);
  if (!s.present) {
    if (it == active_.end()) return out;
    Entry& e = it->second;
    add_evidence(e.alert, s);
    e.alert.last_seen = std::max(e.alert.last_seen, s.at);
    // Present (never cleared) until now: fires if its window passed before this clear.
    if (auto fired = fire_if_due(e, s.at)) out.push_back(std::move(*fired));
    if (e.alert.state == AlertState::kPending) {
      out.push_back(AlertChange{ChangeKind::kDiscarded, s.at, e.alert});
      active_.erase(it);
      return out;
    }
    e.alert.state = AlertState::kResolved;
    e.alert.resolved_at = std::max(s.at, *e.alert.fired_at);
    out.push_back(AlertChange{ChangeKind::kResolved, *e.alert.resolved_at, e.alert});
    if (max_resolved_ > 0) {
      resolved_.push_back(std::move(e.alert));
      while (resolved_.size() > max_resolved_) resolved_.pop_front();
    }
    active_.erase(it);
    return out;
  }
  if (it == active_.end()) {
    const AlertClass c = classify(s.detector, s.fault);
    Entry e;
    auto w = persistence_.find(s.detector);
    e.persistence = w == persistence_.end() ? c.persistence : w->second;
    Alert& a = e.alert;
    a.id = "alert-" + std::to_string(next_id_++);
    a.node = s.node;
    a.detector = s.detector;
    a.subject = s.subject;
    a.fault = s.fault;
    a.severity = c.severity;
    a.action = std::string(c.action);
    a.approval_required = c.approval_required;
    a.first_seen = a.last_seen = s.at;
    add_evidence(a, s);
    it = active_.emplace(std::move(key), std::move(e)).first;
    out.push_back(AlertChange{ChangeKind::kPending, s.at, it->second.alert});
  } else {
    Alert& a = it->second.alert;
    add_evidence(a, s);
    a.last_seen = std::max(a.last_seen, s.at);
  }
  if (auto fired = fire_if_due(it->second, s.at)) out.push_back(std::move(*fired));
  return out;
}

std::vector<AlertChange> AlertTracker::tick(Time now) {
  std::vector<AlertChange> out;
  for (auto& [key, e] : active_)  // key order: stable_sort below keeps it within one fire time
    if (auto fired = fire_if_due(e, now)) out.push_back(std::move(*fired));
  std::stable_sort(out.begin(), out.end(),
                   [](const AlertChange& a, const AlertChange& b) { return a.at < b.at; });
  return out;
}

std::optional<Time> AlertTracker::next_deadline() const {
  std::optional<Time> best;
  for (const auto& [key, e] : active_) {
    if (e.alert.state != AlertState::kPending) continue;
    const Time due = e.alert.first_seen + e.persistence;
    if (!best || due < *best) best = due;
  }
  return best;
}

std::vector<Alert> AlertTracker::active() const {
  std::vector<Alert> out;
  out.reserve(active_.size());
  for (const auto& [key, e] : active_) out.push_back(e.alert);
  return out;
}

const Alert* AlertTracker::find(std::string_view node, std::string_view detector,
                                std::string_view subject, std::string_view fault) const {
  auto it = active_.find(Key{std::string(node), std::string(detector), std::string(subject),
                             std::string(fault)});
  return it == active_.end() ? nullptr : &it->second.alert;
}

}  // namespace gf::health
