#include "health/xid.h"

#include <algorithm>
#include <array>

namespace gf::health {

using namespace text;  // NOLINT(google-build-using-namespace): kernel_log.h's string helpers

namespace {

// 1..max as printed by the driver (%d); nullopt for signs, overflow or out of range.
std::optional<int32_t> consume_code(std::string_view& s, int32_t max) {
  size_t n = 0;
  while (n < s.size() && is_digit(s[n])) ++n;
  if (n == 0 || n > 5) return std::nullopt;
  int32_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v * 10 + (s[i] - '0');
  if (v < 1 || v > max) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

// The value of a "key=value" field up to the next comma; advances past the comma.
std::string_view take_field(std::string_view& s) {
  const size_t comma = s.find(',');
  const std::string_view value = trim_right(s.substr(0, comma));
  s = comma == std::string_view::npos ? std::string_view() : trim_left(s.substr(comma + 1));
  return value;
}

bool is_unknown(std::string_view v) { return v == "<unknown>" || v == "'<unknown>'"; }

void parse_gpu_fields(std::string_view& rest, XidEvent& e) {
  if (consume(rest, "pid=")) {
    const std::string_view v = take_field(rest);
    if (!v.empty() && v.size() <= 18 && all_of(v, is_digit)) {
      int64_t pid = 0;
      for (char c : v) pid = pid * 10 + (c - '0');
      e.pid = pid;
    }
  }
  if (consume(rest, "name=")) {
    const std::string_view v = take_field(rest);
    if (!is_unknown(v)) e.process = std::string(v);
  }
}

void parse_switch_fields(std::string_view& rest, XidEvent& e) {
  std::string_view t = rest;
  std::string word(take_field(t));
  std::transform(word.begin(), word.end(), word.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
  if (word == "fatal") {
    e.severity = "Fatal";
  } else if (word == "non-fatal" || word == "nonfatal") {
    e.severity = "Non-fatal";
  } else {
    return;
  }
  rest = t;
}

}  // namespace

std::string_view to_string(XidSource s) { return s == XidSource::kGpu ? "Xid" : "SXid"; }

std::optional<std::string> normalize_pci(std::string_view addr) {
  const std::optional<PciAddress> a = parse_pci_address(addr);
  if (!a) return std::nullopt;
  return a->to_string();
}

std::optional<XidEvent> parse_xid_line(std::string_view line) {
  const std::optional<std::string_view> message = kernel_message(line);
  if (!message) return std::nullopt;
  std::string_view body = *message;

  XidEvent e;
  if (consume(body, "NVRM: Xid (")) {
    e.source = XidSource::kGpu;
  } else {
    std::string_view t = body;
    if (consume(t, "nvidia-nvswitch") && consume_digits(t, 1, 3) && consume(t, ":")) {
      e.device = std::string(body.substr(0, body.size() - t.size() - 1));
      body = trim_left(t);
    }
    if (!consume(body, "SXid (")) return std::nullopt;
    e.source = XidSource::kNvSwitch;
  }
  consume(body, "PCI:");
  const size_t close = body.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::optional<std::string> pci = normalize_pci(body.substr(0, close));
  if (!pci) return std::nullopt;
  e.pci = std::move(*pci);
  body.remove_prefix(close + 1);
  if (!consume(body, ":")) return std::nullopt;
  body = trim_left(body);
  const std::optional<int32_t> code =
      consume_code(body, e.source == XidSource::kGpu ? kMaxXidCode : kMaxSXidCode);
  if (!code) return std::nullopt;
  e.code = *code;
  if (!body.empty()) {
    if (!consume(body, ",")) return std::nullopt;  // "79abc", "79 text"
    body = trim_left(body);
    if (e.source == XidSource::kGpu) {
      parse_gpu_fields(body, e);
    } else {
      parse_switch_fields(body, e);
    }
  }
  e.message = std::string(body);
  e.line = std::string(line);
  return e;
}

std::optional<std::string_view> xid154_recovery_action(std::string_view message) {
  const size_t at = message.rfind(" to 0x");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view t = message.substr(at + 6);
  size_t n = 0;
  while (n < t.size() && n < 8 && is_hex(t[n])) ++n;
  const std::optional<uint32_t> v = parse_hex(t.substr(0, n), 1, 8);
  if (!v) return std::nullopt;
  switch (*v) {
    case 0:
      return "none";
    case 1:
    case 2:
      return "reboot";
    case 3:
    case 4:
      return "migrate";
    default:
      return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------------
// FallenOffBusDetector: the sentence as words; step_ counts the words matched so far.

namespace {

constexpr std::array<std::string_view, 22> kFallenWords = {
    "The", "NVIDIA", "GPU",    "<bdf>",      "(PCI",   "ID:",      "<id>", "installed",
    "in",  "this",   "system", "has",        "fallen", "off",      "the",  "bus",
    "and", "is",     "not",    "responding", "to",     "commands."};
constexpr int kStepBdf = 3, kStepPciId = 4, kStepId = 6, kStepInstalled = 7;
constexpr int kStepLast = static_cast<int>(kFallenWords.size()) - 1;

bool is_pci_id(std::string_view w) {  // "10de:26b5)"
  return w.size() == 10 && all_of(w.substr(0, 4), is_hex) && w[4] == ':' &&
         all_of(w.substr(5, 4), is_hex) && w[9] == ')';
}

}  // namespace

void FallenOffBusDetector::reset() {
  step_ = 0;
  foreign_ = 0;
  pci_.clear();
}

// Matches the words of `body` from step_ on; step_ and pci_ advance only when every word fits.
FallenOffBusDetector::Fed FallenOffBusDetector::advance(std::string_view body, bool nvrm) {
  int step = step_;
  std::string pci = pci_;
  bool any = false;
  while (step <= kStepLast) {
    body = trim_left(body);
    if (body.empty()) break;
    const size_t end = std::min(body.find_first_of(" \t"), body.size());
    const std::string_view w = body.substr(0, end);
    body.remove_prefix(end);
    if (step == kStepPciId && w != "(PCI") step = kStepInstalled;  // the PCI ID is optional
    bool ok = false;
    if (step == kStepBdf) {
      std::optional<std::string> p = normalize_pci(w);
      ok = p.has_value();
      if (ok) pci = std::move(*p);
    } else if (step == kStepId) {
      ok = is_pci_id(w);
    } else if (step == kStepLast) {
      ok = w == "commands." || w == "commands";
    } else {
      ok = w == kFallenWords[static_cast<size_t>(step)];
    }
    if (!ok) return nvrm ? Fed::kAbandoned : Fed::kForeign;
    ++step;
    any = true;
  }
  if (!any) return nvrm ? Fed::kAbandoned : Fed::kForeign;
  step_ = step;
  pci_ = std::move(pci);
  return Fed::kContinued;
}

std::optional<std::string> FallenOffBusDetector::feed_segment(std::string_view segment) {
  const std::optional<std::string_view> message = kernel_message(segment);
  std::string_view body = message.value_or(std::string_view());
  const bool nvrm = message && consume(body, "NVRM:");
  if (step_ > 0) {
    switch (advance(body, nvrm)) {
      case Fed::kContinued:
        foreign_ = 0;
        if (step_ > kStepLast) {
          std::string pci = std::move(pci_);
          reset();
          return pci;
        }
        return std::nullopt;
      case Fed::kForeign:
        if (++foreign_ > kMaxForeignLines) reset();
        return std::nullopt;
      case Fed::kAbandoned:
        reset();
        break;  // the line may start a new sentence
    }
  }
  if (!nvrm) return std::nullopt;
  if (advance(body, nvrm) != Fed::kContinued || step_ <= kStepBdf) {
    reset();  // a start needs at least "The NVIDIA GPU <bdf>"
    return std::nullopt;
  }
  if (step_ > kStepLast) {  // the whole sentence on one line
    std::string pci = std::move(pci_);
    reset();
    return pci;
  }
  return std::nullopt;
}

std::optional<std::string> FallenOffBusDetector::feed(std::string_view line) {
  std::optional<std::string> first;
  while (true) {  // journald may deliver the three lines as one entry
    const size_t nl = line.find('\n');
    const std::string_view segment = line.substr(0, nl);
    if (!trim_right(segment).empty()) {
      std::optional<std::string> pci = feed_segment(segment);
      if (pci && !first) first = std::move(pci);
    }
    if (nl == std::string_view::npos) break;
    line.remove_prefix(nl + 1);
  }
  return first;
}

// ---------------------------------------------------------------------------------------------
// PciGpuMap

namespace {

bool is_gpu_uuid(std::string_view u) {  // GPU-455d8f70-2051-db6c-0430-ffc457bff834
  if (!consume(u, "GPU-") || u.size() != 36) return false;
  for (size_t i = 0; i < u.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? u[i] != '-' : !is_hex(u[i])) return false;
  }
  return true;
}

}  // namespace

bool PciGpuMap::learn(std::string_view line) {
  const std::optional<std::string_view> message = kernel_message(line);
  std::string_view body = message.value_or(std::string_view());
  if (!consume(body, "NVRM: GPU at ")) return false;
  consume(body, "PCI:");
  const size_t sep = body.find(": ");
  if (sep == std::string_view::npos) return false;
  const auto key = parse_pci_address(body.substr(0, sep));
  const std::string_view uuid = trim_left(body.substr(sep + 2));
  if (!key || !is_gpu_uuid(uuid)) return false;
  by_pci_[*key].uuid = std::string(uuid);
  return true;
}

bool PciGpuMap::set(std::string pci, int32_t index, std::string uuid) {
  const auto key = parse_pci_address(pci);
  if (!key || index < 0) return false;
  Entry& e = by_pci_[*key];
  e.index = index;
  if (!uuid.empty()) e.uuid = std::move(uuid);
  has_explicit_ = true;
  return true;
}

std::optional<int32_t> PciGpuMap::index_of(std::string_view pci) const {
  const auto key = parse_pci_address(pci);
  if (!key) return std::nullopt;
  const auto it = by_pci_.find(*key);
  if (it == by_pci_.end()) return std::nullopt;
  if (has_explicit_) return it->second.index;
  return static_cast<int32_t>(std::distance(by_pci_.begin(), it));
}

std::string PciGpuMap::uuid_of(std::string_view pci) const {
  const auto key = parse_pci_address(pci);
  if (!key) return "";
  const auto it = by_pci_.find(*key);
  return it == by_pci_.end() ? "" : it->second.uuid;
}

// ---------------------------------------------------------------------------------------------
// XidDeduper

XidDeduper::XidDeduper(Duration window, size_t max_entries)
    : window_(window), max_entries_(std::max<size_t>(1, max_entries)) {}

void XidDeduper::forget(std::map<Key, Stamp>::iterator it) {
  by_time_.erase(it->second);
  last_accepted_.erase(it);
}

bool XidDeduper::accept(const XidEvent& e, Time now) {
  // by_time_ is oldest first, so the first entry still inside its window ends the sweep.
  while (!by_time_.empty() && now - by_time_.begin()->first.first >= window_) {
    forget(by_time_.begin()->second);
  }
  Key key{e.source, e.code, e.pci, e.message};
  if (last_accepted_.contains(key)) return false;
  if (last_accepted_.size() >= max_entries_) forget(by_time_.begin()->second);
  const Stamp stamp{now, accepted_++};
  const auto it = last_accepted_.emplace(std::move(key), stamp).first;
  by_time_.emplace(stamp, it);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Catalogue (docs/health.md; "Suggested engine action" column mapped onto the five buckets).

namespace {

struct CatalogueRow {
  int32_t code;
  std::string_view mnemonic;
  std::string_view action;
};

constexpr std::array<CatalogueRow, 46> kCatalogue = {{
    {8, "GPU stopped processing (idle timeout)", "none"},
    {13, "Graphics engine exception", "none"},
    {31, "GPU memory page fault", "none"},
    {32, "Invalid or corrupted push buffer stream", "none"},
    {43, "GPU stopped processing (application fault)", "none"},
    {45, "Preemptive cleanup", "none"},
    {46, "GPU stopped processing", "reboot"},
    {48, "Double-bit ECC error", "reboot"},
    {54, "Auxiliary power not connected", "migrate"},
    {61, "PMU breakpoint (unused)", "manual"},
    {62, "PMU halt", "reboot"},
    {63, "Row remap / page retirement event", "none"},
    {64, "Row remap / page retirement failure", "reboot"},
    {68, "NVDEC0 exception", "none"},
    {69, "Graphics engine class error", "none"},
    {74, "NVLink error", "reboot"},
    {79, "GPU has fallen off the bus", "reboot"},
    {92, "High single-bit ECC error rate", "none"},
    {94, "Contained ECC error", "reboot-when-idle"},
    {95, "Uncontained ECC error", "reboot"},
    {109, "Context switch timeout", "reboot"},
    {110, "Security fault", "reboot"},
    {119, "GSP RPC timeout", "reboot"},
    {120, "GSP error", "reboot"},
    {121, "C2C corrected errors", "reboot-when-idle"},
    {136, "Link training failed", "reboot"},
    {137, "NVLink privilege error", "none"},
    {140, "Unrecoverable ECC error escape", "reboot"},
    {143, "GPU initialization error", "reboot"},
    {144, "NVLink5 SAW error", "manual"},
    {145, "NVLink5 RLW error", "manual"},
    {146, "NVLink5 TLW error", "manual"},
    {147, "NVLink5 TREX error", "manual"},
    {148, "NVLink5 NVLPW error", "manual"},
    {149, "NVLink5 NETIR error", "reboot"},
    {150, "NVLink5 MSE error", "manual"},
    {151, "Key rotation error", "reboot"},
    {154, "GPU recovery action changed", "manual"},
    {155, "NVLink SW-defined link down", "reboot"},
    {156, "Resource retirement event", "reboot-when-idle"},
    {157, "Resource retirement failure", "manual"},
    {158, "GPU fatal timeout", "reboot"},
    {162, "Power smoothing re-engaged", "none"},
    {163, "Power smoothing disengaged", "none"},
    {171, "Uncorrectable DRAM error", "reboot"},
    {172, "Uncorrectable SRAM error", "reboot"},
}};

constexpr std::array<int32_t, 21> kCritical = {
    46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156, 158};

}  // namespace

XidInfo xid_info(int32_t code) {
  XidInfo info{"", "manual", false};
  info.critical = std::find(kCritical.begin(), kCritical.end(), code) != kCritical.end();
  const auto it = std::find_if(kCatalogue.begin(), kCatalogue.end(),
                               [&](const CatalogueRow& r) { return r.code == code; });
  if (it != kCatalogue.end()) {
    info.mnemonic = it->mnemonic;
    info.action = it->action;
  }
  return info;
}

}  // namespace gf::health
