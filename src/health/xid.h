// The `xid` detector's parsing half (docs/health.md, docs/remediation.md): NVIDIA
// driver kernel-log lines become structured events. Xid (GPU) and SXid (NVSwitch) lines, the
// multi-line "fallen off the bus" message the driver prints WITHOUT an Xid, the driver's
// PCI → GPU UUID lines, collapsing a fault that repeats every few seconds (docs/health.md:
// identical signals within 3 min count as one), and the per-code catalogue facts the remediation
// engine needs. Log lines are untrusted bytes: every parser here takes any byte string and answers
// nullopt (never throws, never reads past the view). Pure: no I/O, no clock (time is a
// parameter). Accepted formats and rules: docs/health.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/time.h"
#include "health/kernel_log.h"

namespace gf::health {

// Codes outside these ranges are not well-formed: Xid codes are small (the catalogue ends near
// 175), SXid codes have five digits (11004, 24007, 26006, 28006).
inline constexpr int32_t kMaxXidCode = 999;
inline constexpr int32_t kMaxSXidCode = 99999;

enum class XidSource : uint8_t { kGpu, kNvSwitch };  // "Xid" vs "SXid"
std::string_view to_string(XidSource s);             // "Xid", "SXid"

struct XidEvent {
  XidSource source = XidSource::kGpu;
  int32_t code = 0;            // 1..kMaxXidCode (Xid), 1..kMaxSXidCode (SXid)
  std::string pci;             // normalised "dddd:bb:dd.f" (normalize_pci)
  std::optional<int64_t> pid;  // absent when not printed, '<unknown>' or not a number
  std::string process;         // name=...; "" when absent or <unknown>
  std::string message;         // free text after code/pid/name (SXid: after severity), verbatim
  std::string severity;        // SXid only: "Fatal" / "Non-fatal" when printed
  std::string device;          // SXid only: "nvidia-nvswitch3" when the line carries that prefix
  std::string line;            // the raw line, byte for byte (evidence)
  bool operator==(const XidEvent&) const = default;
};

// One kernel-log line: `NVRM: Xid (PCI:<bdf>): <code>[, pid=…][, name=…][, <text>]` or
// `[nvidia-nvswitchN: ]SXid (PCI:<bdf>): <code>[, Fatal|Non-fatal][, <text>]`, behind any
// transport prefix kernel_message strips (dmesg, syslog/journald, /dev/kmsg). nullopt for
// anything else: a line kernel_message refuses (control bytes such as NUL, over kMaxLineBytes, a
// user-space syslog line), other text before the marker, a truncated line, a missing,
// non-numeric or out-of-range code, a malformed PCI address.
std::optional<XidEvent> parse_xid_line(std::string_view line);

// "0000:18:00" → "0000:18:00.0"; "0000:B3:00.0" → "0000:b3:00.0"; "18:00.0" → "0000:18:00.0";
// NVML's 8-digit domain "00000000:18:00.0" → "0000:18:00.0". Bus and device are exactly two hex
// digits, the function one digit 0-7, the domain 1-8 hex digits (printed with at least 4).
// nullopt when malformed.
std::optional<std::string> normalize_pci(std::string_view addr);

// The action the driver names in an Xid 154 message ("GPU recovery action changed from 0x0 (None)
// to 0x1 (GPU Reset Required)"), mapped as docs/health.md asks: 0x0 None → "none", 0x1 GPU reset →
// "reboot", 0x2 node reboot → "reboot", 0x3 drain P2P and 0x4 drain and reset → "migrate".
// nullopt when the message names no known action.
std::optional<std::string_view> xid154_recovery_action(std::string_view message);

// A GPU that fell off the bus at probe time prints no Xid, only three lines
//   NVRM: The NVIDIA GPU 0000:b3:00.0
//   NVRM: (PCI ID: 10de:26b5) installed in this system has
//   NVRM: fallen off the bus and is not responding to commands.
// (the PCI ID may sit on the first line, the whole sentence on one line, or journald may deliver
// the three as one entry with embedded newlines). feed() takes lines in log order and returns the
// normalised PCI address once the sentence is complete. Up to kMaxForeignLines lines that are not
// driver (NVRM) lines may come between two of its lines; an NVRM line that does not continue the
// sentence abandons it.
class FallenOffBusDetector {
 public:
  static constexpr int kMaxForeignLines = 4;
  std::optional<std::string> feed(std::string_view line);

 private:
  enum class Fed : uint8_t { kForeign, kAbandoned, kContinued };
  std::optional<std::string> feed_segment(std::string_view segment);
  Fed advance(std::string_view body, bool nvrm);
  void reset();

  int step_ = 0;  // words of the sentence matched so far (0: idle)
  int foreign_ = 0;
  std::string pci_;
};

// PCI address → GPU index and UUID. Learned from the driver's `NVRM: GPU at PCI:0000:03:00:
// GPU-455d8f70-2051-db6c-0430-ffc457bff834` lines, or given as an explicit table (NVML /
// nvidia-smi). With any explicit entry the table is authoritative for indices; without one, a
// learned GPU's index is its rank in PCI bus order among the GPUs learned so far (nvidia-smi's
// usual order; NVML does not promise it, so prefer the table when one is available).
class PciGpuMap {
 public:
  // True when the line was such a driver line (any log prefix); re-learning is idempotent.
  bool learn(std::string_view line);
  // False (and nothing stored) when pci is malformed or index negative.
  bool set(std::string pci, int32_t index, std::string uuid = "");
  std::optional<int32_t> index_of(std::string_view pci) const;
  std::string uuid_of(std::string_view pci) const;  // "" when unknown
  size_t size() const { return by_pci_.size(); }

 private:
  struct Entry {
    std::optional<int32_t> index;  // explicit
    std::string uuid;
  };
  std::map<PciAddress, Entry> by_pci_;  // in PCI bus order
  bool has_explicit_ = false;
};

// Identical events (same source, code, PCI address and message) within `window` are one. The
// window runs from the last ACCEPTED occurrence: a fault repeating every few seconds is accepted
// once per window (so an alert's last-seen keeps moving), never suppressed for ever. Memory is
// bounded: entries whose window has passed are forgotten on every call, and beyond max_entries
// the oldest is forgotten (a later repeat of it is then accepted again). A `now` earlier than the
// remembered occurrence counts as inside the window.
class XidDeduper {
 public:
  static constexpr size_t kDefaultMaxEntries = 1024;
  explicit XidDeduper(Duration window = minutes(3), size_t max_entries = kDefaultMaxEntries);
  bool accept(const XidEvent& e, Time now);
  size_t size() const { return last_accepted_.size(); }

 private:
  using Key = std::tuple<XidSource, int32_t, std::string, std::string>;
  using Stamp = std::pair<Time, uint64_t>;  // accepted at, acceptance number (tie-break)
  void forget(std::map<Key, Stamp>::iterator it);

  Duration window_;
  size_t max_entries_;
  uint64_t accepted_ = 0;
  std::map<Key, Stamp> last_accepted_;
  std::map<Stamp, std::map<Key, Stamp>::iterator> by_time_;  // the same entries, oldest first
};

// Catalogue facts per Xid code (docs/health.md). action: "none", "reboot", "reboot-when-idle",
// "migrate" or "manual" (unknown codes, codes whose action needs a register decode, 154 whose
// action is in its message: xid154_recovery_action). critical: in the EKS well-known set
// {46,48,54,62,63,64,74,79,95,109,110,119,120,136,140,142,143,151,155,156,158}.
struct XidInfo {
  std::string_view mnemonic;  // "" for codes the notes do not describe
  std::string_view action;
  bool critical = false;
};
XidInfo xid_info(int32_t code);

}  // namespace gf::health
