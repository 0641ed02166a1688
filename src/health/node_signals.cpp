// Node-level detectors (docs/health.md): parsing and counting only. See node_signals.h.
#include "health/node_signals.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "health/kernel_log.h"

namespace gf::health {
namespace {

using text::consume;
using text::is_blank;
using text::is_digit;

// Decodes the octal escapes the kernel writes in /proc/mounts (space, tab, newline, backslash).
std::string unescape_mount_field(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

bool has_whole_option(std::string_view options, std::string_view want) {
  while (true) {
    size_t comma = options.find(',');
    if (options.substr(0, comma) == want) return true;
    if (comma == std::string_view::npos) return false;
    options.remove_prefix(comma + 1);
  }
}

// Removes a run of 1..max_n digits and returns their value.
std::optional<int64_t> take_number(std::string_view& s, size_t max_n) {
  size_t n = 0;
  while (n < s.size() && n < max_n && is_digit(s[n])) ++n;
  if (n == 0) return std::nullopt;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v * 10 + (s[i] - '0');
  s.remove_prefix(n);
  return v;
}

// "comm:pid" where comm may itself hold colons (kworker/u16:2) or blanks: the last colon splits.
bool split_task(std::string_view s, std::string& comm, std::optional<int64_t>& pid) {
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view digits = s.substr(colon + 1);
  std::optional<int64_t> p = take_number(digits, 10);
  if (!p || !digits.empty()) return false;
  comm = std::string(s.substr(0, colon));
  pid = p;
  return true;
}

std::optional<KernelPattern> hung_task(std::string_view msg) {
  consume(msg, "INFO: ");
  if (!consume(msg, "task ")) return std::nullopt;
  static constexpr std::string_view kBlocked = " blocked for more than ";
  size_t at = msg.find(kBlocked);
  if (at == std::string_view::npos) return std::nullopt;
  KernelPattern p;
  if (!split_task(msg.substr(0, at), p.task, p.pid)) return std::nullopt;
  std::string_view rest = msg.substr(at + kBlocked.size());
  if (!take_number(rest, 10) || !consume(rest, " seconds")) return std::nullopt;
  consume(rest, ".");
  if (!rest.empty()) return std::nullopt;
  if (p.task.starts_with("xfs")) {
    p.detector = kDetectorXfsHang;
    p.reason = "TaskHung";
  } else if (p.task == "docker" || p.task == "dockerd" || p.task == "containerd") {
    p.detector = kDetectorKernelDeadlock;
    p.reason = "DockerHung";
  } else {
    p.detector = kDetectorKernelDeadlock;
    p.reason = "TaskHung";
  }
  return p;
}

std::optional<KernelPattern> xfs(std::string_view msg) {
  KernelPattern p;
  p.detector = kDetectorXfsHang;
  if (consume(msg, "XFS (")) {
    size_t close = msg.find("): ");
    if (close == 0 || close == std::string_view::npos) return std::nullopt;
    msg.remove_prefix(close + 3);
    if (msg.find("Shutting down filesystem") != std::string_view::npos) {
      p.reason = "XfsShutdown";
      return p;
    }
    if (msg.starts_with("metadata I/O error")) {
      p.reason = "XfsMetadataIoError";
      return p;
    }
  }
  if (consume(msg, "xfs_log_force: error -") && take_number(msg, 4) && consume(msg, " returned")) {
    p.reason = "XfsLogForceError";
    return p;
  }
  return std::nullopt;
}

std::optional<KernelPattern> lockup(std::string_view msg) {
  if (!consume(msg, "NMI watchdog: ")) consume(msg, "watchdog: ");
  KernelPattern p;
  p.detector = kDetectorKernelDeadlock;
  if (consume(msg, "Watchdog detected hard LOCKUP on cpu ")) {
    if (!take_number(msg, 6)) return std::nullopt;
    p.reason = "HardLockup";
    return p;
  }
  // BUG: soft lockup - CPU#3 stuck for 22s! [python:1234]
  if (!consume(msg, "BUG: soft lockup - CPU#") || !take_number(msg, 6) ||
      !consume(msg, " stuck for ") || !take_number(msg, 10) || !consume(msg, "s!")) {
    return std::nullopt;
  }
  msg = text::trim_left(msg);
  if (consume(msg, "[") && msg.ends_with("]")) {
    if (!split_task(msg.substr(0, msg.size() - 1), p.task, p.pid)) {
      p.task.clear();
      p.pid.reset();
    }
  }
  p.reason = "SoftLockup";
  return p;
}

}  // namespace

bool readonly_by_nature(std::string_view fstype) {
  static constexpr std::array<std::string_view, 29> kTypes = {
      "squashfs",   "iso9660",    "cramfs",    "romfs",    "erofs",    "udf",
      "proc",       "sysfs",      "cgroup",    "cgroup2",  "devtmpfs", "devpts",
      "securityfs", "debugfs",    "tracefs",   "configfs", "pstore",   "bpf",
      "efivarfs",   "fusectl",    "hugetlbfs", "mqueue",   "autofs",   "binfmt_misc",
      "nsfs",       "rpc_pipefs", "selinuxfs", "tmpfs",    "ramfs"};
  return fstype == "overlay" || std::find(kTypes.begin(), kTypes.end(), fstype) != kTypes.end();
}

std::vector<ReadOnlyMount> readonly_mounts(std::string_view proc_mounts) {
  std::vector<ReadOnlyMount> out;
  while (!proc_mounts.empty()) {
    size_t nl = proc_mounts.find('\n');
    std::string_view line = proc_mounts.substr(0, nl);
    proc_mounts.remove_prefix(nl == std::string_view::npos ? proc_mounts.size() : nl + 1);
    if (line.size() > kMaxLineBytes || line.find('\0') != std::string_view::npos) continue;
    std::vector<std::string_view> f = split_fields(text::trim_right(line));
    if (f.size() < 4) continue;
    if (!has_whole_option(f[3], "ro") || readonly_by_nature(f[2])) continue;
    out.push_back(ReadOnlyMount{unescape_mount_field(f[0]), unescape_mount_field(f[1]),
                                std::string(f[2]), std::string(f[3])});
  }
  return out;
}

std::optional<KernelPattern> match_kernel_pattern(std::string_view line) {
  std::optional<std::string_view> msg = kernel_message(line);
  if (!msg || msg->empty()) return std::nullopt;
  std::optional<KernelPattern> p = hung_task(*msg);
  if (!p) p = xfs(*msg);
  if (!p) p = lockup(*msg);
  if (!p && msg->find("Remounting filesystem read-only") != std::string_view::npos) {
    p = KernelPattern{kDetectorReadonlyFs, "ReadonlyFilesystem", "", std::nullopt, ""};
  }
  if (p) p->message = std::string(*msg);
  return p;
}

bool RestartLoopCounter::record(std::string_view unit, Time t) {
  // Forget units whose latest restart has left the window.
  for (auto it = restarts_.begin(); it != restarts_.end();) {
    if (!it->second.empty() && it->second.back() < t - kWindow) {
      it = restarts_.erase(it);
    } else {
      ++it;
    }
  }
  auto it = restarts_.find(unit);
  if (it == restarts_.end()) {
    while (max_units_ > 0 && restarts_.size() >= max_units_) {
      auto oldest = std::min_element(
          restarts_.begin(), restarts_.end(),
          [](const auto& a, const auto& b) { return a.second.back() < b.second.back(); });
      restarts_.erase(oldest);
    }
    if (max_units_ == 0) return false;
    it = restarts_.emplace(std::string(unit), std::deque<Time>{}).first;
  }
  std::deque<Time>& times = it->second;
  if (!times.empty() && t < times.back()) t = times.back();
  times.push_back(t);
  while (times.size() > kThreshold) times.pop_front();
  while (!times.empty() && times.front() < t - kWindow) times.pop_front();
  return times.size() >= kThreshold;
}

namespace {

// "4: ACTIVE" → (4, "ACTIVE"); nullopt number when malformed.
void parse_sysfs_state(std::string_view s, std::optional<int>& number, std::string& name) {
  s = text::trim_right(text::trim_left(s));
  std::optional<int64_t> n = take_number(s, 2);
  if (!n || !consume(s, ":")) return;
  s = text::trim_left(s);
  if (s.empty() || s.find_first_of("\n\r\t") != std::string_view::npos ||
      s.find('\0') != std::string_view::npos) {
    return;
  }
  number = static_cast<int>(*n);
  name = std::string(s);
}

}  // namespace

bool IbPortReading::up() const { return (state == 4 || state == 5) && phys_state == 5; }

IbPortReading parse_ib_port(std::string_view state_file, std::string_view phys_state_file) {
  IbPortReading r;
  parse_sysfs_state(state_file, r.state, r.state_name);
  parse_sysfs_state(phys_state_file, r.phys_state, r.phys_state_name);
  return r;
}

std::optional<double> IbSymbolErrorRate::observe(uint64_t counter, Time t) {
  if (!last_counter_) {
    last_counter_ = counter;
    last_time_ = t;
    return std::nullopt;
  }
  if (t <= last_time_) return std::nullopt;
  uint64_t delta = counter >= *last_counter_ ? counter - *last_counter_ : counter;
  double elapsed_s = std::chrono::duration<double>(t - last_time_).count();
  last_counter_ = counter;
  last_time_ = t;
  return static_cast<double>(delta) * 3600.0 / elapsed_s;
}

std::string_view to_string(IbLinkVerdict v) {
  switch (v) {
    case IbLinkVerdict::kHealthy:
      return "healthy";
    case IbLinkVerdict::kSymbolErrors:
      return "symbol-errors";
    case IbLinkVerdict::kPortDown:
      return "port-down";
  }
  return "unknown";
}

IbLinkVerdict ib_link_verdict(const IbPortReading& port,
                              std::optional<double> symbol_errors_per_hour) {
  if (!port.up()) return IbLinkVerdict::kPortDown;
  if (symbol_errors_per_hour && *symbol_errors_per_hour > kIbSymbolErrorsPerHour) {
    return IbLinkVerdict::kSymbolErrors;
  }
  return IbLinkVerdict::kHealthy;
}

void HeartbeatTracker::beat(Time t) {
  if (!last_ || t > *last_) last_ = t;
}

bool HeartbeatTracker::missed(Time now) const {
  return last_ && now - *last_ > interval_ * kMissedBeats;
}

bool disk_pressure(uint64_t used_bytes, uint64_t total_bytes) {
  if (total_bytes == 0) return false;
  uint64_t available = used_bytes >= total_bytes ? 0 : total_bytes - used_bytes;
  // available / total < 10 %  ⇔  available * 10 < total  ⇔  available <= (total - 1) / 10
  return available <= (total_bytes - 1) / 10;
}

}  // namespace gf::health
