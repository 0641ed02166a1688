// The node-level detectors beside the GPU ones (docs/health.md
// node-problem-detector, NVSentinel NIC health monitor): `npd-readonly-fs` (/proc/mounts),
// `npd-xfs-hang` / `npd-kernel-deadlock` (node-problem-detector kernel-monitor patterns),
// `npd-restart-loop` (systemd unit restarts), `ib-link` (/sys/class/infiniband port state and
// symbol_error counter), `host-reachability` (missed heartbeats) and `disk-pressure`. Inputs are
// untrusted text: every parser takes any byte string, never throws, never reads past the view.
// Pure: no I/O, no clock (file contents and times are parameters). Rules and thresholds, with
// their sources: docs/health.md "Node signals".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"

namespace gf::health {

// ---- npd-readonly-fs -------------------------------------------------------------------------

struct ReadOnlyMount {
  std::string device;       // first field, octal escapes decoded
  std::string mount_point;  // second field, octal escapes (\040 space, \011 tab, \012 newline,
                            // \134 backslash) decoded
  std::string fstype;
  std::string options;  // verbatim, e.g. "ro,relatime"
  bool operator==(const ReadOnlyMount&) const = default;
};

// True for filesystem types that are read-only by nature or by deliberate configuration, whose
// `ro` says nothing about a failing disk: image formats (squashfs, iso9660, cramfs, romfs, erofs,
// udf), kernel pseudo filesystems (proc, sysfs, cgroup, cgroup2, devtmpfs, devpts, securityfs,
// debugfs, tracefs, configfs, pstore, bpf, efivarfs, fusectl, hugetlbfs, mqueue, autofs,
// binfmt_misc, nsfs, rpc_pipefs, selinuxfs), memory-backed filesystems (tmpfs, ramfs: systemd's
// read-only /sys/fs/cgroup, kubelet's projected secret volumes) and overlay (a read-only overlay
// is a container image layer).
bool readonly_by_nature(std::string_view fstype);

// /proc/mounts text → the mounts that are read-only although they should not be: lines of
// "device mountpoint fstype options [dump pass]" (blank or tab separated) whose comma-separated
// options contain `ro` as a whole option ("ro", not "errors=remount-ro" or "rootcontext=…") and
// whose fstype is not readonly_by_nature. Lines with fewer than four fields, over
// kMaxLineBytes, or holding NUL are skipped; a backslash not followed by three octal digits is
// kept as is. Result in file order.
std::vector<ReadOnlyMount> readonly_mounts(std::string_view proc_mounts);

// ---- npd-xfs-hang, npd-kernel-deadlock (and npd-readonly-fs from the kernel log) -------------

inline constexpr std::string_view kDetectorReadonlyFs = "npd-readonly-fs";
inline constexpr std::string_view kDetectorXfsHang = "npd-xfs-hang";
inline constexpr std::string_view kDetectorKernelDeadlock = "npd-kernel-deadlock";
inline constexpr std::string_view kDetectorRestartLoop = "npd-restart-loop";
inline constexpr std::string_view kDetectorIbLink = "ib-link";
inline constexpr std::string_view kDetectorHostReachability = "host-reachability";
inline constexpr std::string_view kDetectorDiskPressure = "disk-pressure";

struct KernelPattern {
  std::string_view detector;   // one of the kDetector* names above
  std::string_view reason;     // node-problem-detector's reason where it has one (TaskHung,
                               // DockerHung, XfsShutdown, ReadonlyFilesystem), else ours
  std::string task;            // hung task / soft lockup: the task's comm ("" otherwise)
  std::optional<int64_t> pid;  // hung task / soft lockup: its pid
  std::string message;         // the kernel message (transport prefix stripped), evidence
  bool operator==(const KernelPattern&) const = default;
};

// One kernel-log line (any prefix kernel_message strips) → the detector it feeds:
//   "[INFO: ]task <comm>:<pid> blocked for more than <N> seconds[.]"
//       comm starting with "xfs" (xfsaild/…, xfs-cil/…) → npd-xfs-hang, TaskHung;
//       comm "docker" / "dockerd" / "containerd" → npd-kernel-deadlock, DockerHung;
//       any other comm → npd-kernel-deadlock, TaskHung.
//   "XFS (<dev>): … Shutting down filesystem…"       → npd-xfs-hang, XfsShutdown
//   "XFS (<dev>): metadata I/O error…"                 → npd-xfs-hang, XfsMetadataIoError
//   "xfs_log_force: error -<n> returned…"              → npd-xfs-hang, XfsLogForceError
//   "[watchdog: ]BUG: soft lockup - CPU#<n> stuck for <N>s! [<comm>:<pid>]"
//                                                      → npd-kernel-deadlock, SoftLockup
//   "…Watchdog detected hard LOCKUP on cpu <n>…"       → npd-kernel-deadlock, HardLockup
//   "<prefix>: Remounting filesystem read-only"        → npd-readonly-fs, ReadonlyFilesystem
// nullopt for anything else, and for lines kernel_message refuses.
std::optional<KernelPattern> match_kernel_pattern(std::string_view line);

// ---- npd-restart-loop ------------------------------------------------------------------------

// True from the restart that makes kThreshold restarts of one unit within kWindow (the first and
// the last at most kWindow apart, both ends included). docs/health.md "5+ kubelet/containerd/slurmd
// restarts in 20 min"; node-problem-detector's FrequentKubeletRestart uses the same numbers.
// Memory is bounded: at most kThreshold times per unit, at most max_units units (beyond that the
// unit restarted least recently is forgotten), and units with no restart inside the window are
// dropped on every call. A time earlier than the unit's previous restart counts as that time.
class RestartLoopCounter {
 public:
  static constexpr size_t kThreshold = 5;
  static constexpr Duration kWindow = std::chrono::minutes(20);
  static constexpr size_t kDefaultMaxUnits = 256;
  explicit RestartLoopCounter(size_t max_units = kDefaultMaxUnits) : max_units_(max_units) {}
  bool record(std::string_view unit, Time t);
  size_t units() const { return restarts_.size(); }

 private:
  size_t max_units_;
  std::map<std::string, std::deque<Time>, std::less<>> restarts_;
};

// ---- ib-link ---------------------------------------------------------------------------------

// /sys/class/infiniband/<dev>/ports/<n>/state ("4: ACTIVE") and phys_state ("5: LinkUp").
// A field is nullopt when its file is empty or malformed (a vanished device leaves no file).
struct IbPortReading {
  std::optional<int> state;       // 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER
  std::string state_name;         // "ACTIVE"
  std::optional<int> phys_state;  // 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining,
                                  // 5 LinkUp, 6 LinkErrorRecovery, 7 Phy Test
  std::string phys_state_name;    // "LinkUp"
  // Up: state ACTIVE (4) or ACTIVE_DEFER (5) and phys_state LinkUp (5). Unknown counts as down.
  bool up() const;
  bool operator==(const IbPortReading&) const = default;
};
IbPortReading parse_ib_port(std::string_view state_file, std::string_view phys_state_file);

// symbol_error above this many per hour is a warning (docs/health.md "symbol errors > 120/h";
// NVSentinel NIC health monitor, IBTA 10^-12 bit error rate).
inline constexpr double kIbSymbolErrorsPerHour = 120.0;

// Errors per hour between the previous observation and this one. nullopt for the first
// observation (baseline) and when t is not after the previous observation (nothing is changed).
// A counter lower than the previous one was reset (driver reload, reboot, perfquery -R): the
// errors since then are at least the new value, so the new value is the delta. The sysfs counter
// saturates at 65535 on many HCAs; a saturated counter reads as rate 0 (see docs).
class IbSymbolErrorRate {
 public:
  std::optional<double> observe(uint64_t counter, Time t);

 private:
  std::optional<uint64_t> last_counter_;
  Time last_time_{};
};

enum class IbLinkVerdict : uint8_t {
  kHealthy,
  kSymbolErrors,  // warning: rate > kIbSymbolErrorsPerHour
  kPortDown,      // critical: port not up (docs/health.md: reboot)
};
std::string_view to_string(IbLinkVerdict v);  // "healthy", "symbol-errors", "port-down"
IbLinkVerdict ib_link_verdict(const IbPortReading& port,
                              std::optional<double> symbol_errors_per_hour);

// ---- host-reachability -----------------------------------------------------------------------

// docs/health.md gives no number: missed() is true once kMissedBeats heartbeats in a row are
// missing, i.e. more than interval × kMissedBeats has passed since the last beat (exactly that much
// is not yet missed: the third beat is only just due). Default interval 10 s, kubelet's lease
// renewal. Before the first beat nothing is missed (registration has its own timeout). A beat older
// than the latest one is ignored.
class HeartbeatTracker {
 public:
  static constexpr int kMissedBeats = 3;
  explicit HeartbeatTracker(Duration interval = std::chrono::seconds(10)) : interval_(interval) {}
  void beat(Time t);
  bool missed(Time now) const;
  std::optional<Time> last_beat() const { return last_; }

 private:
  Duration interval_;
  std::optional<Time> last_;
};

// ---- disk-pressure ---------------------------------------------------------------------------

// True when less than 10 % of the filesystem is available (kubelet's default hard eviction
// threshold nodefs.available<10%; no source gives one). Recorded only, severity warning:
// docs/health.md says disk pressure never causes a reboot or any other remediation. total 0 →
// false; used above total counts as full.
bool disk_pressure(uint64_t used_bytes, uint64_t total_bytes);

}  // namespace gf::health
