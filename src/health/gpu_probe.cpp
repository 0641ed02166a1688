#include "health/gpu_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "health/xid.h"

namespace gf::health {

bool GpuReading::supports(std::string_view nvml_function) const {
  return std::find(unsupported.begin(), unsupported.end(), nvml_function) == unsupported.end();
}

// ---- ScriptedProbe -----------------------------------------------------------------------------

Result<std::vector<GpuReading>> ScriptedProbe::read() {
  ++reads_;
  if (!error_.ok()) return error_;
  return readings_;
}

void ScriptedProbe::set_readings(std::vector<GpuReading> readings) {
  readings_ = std::move(readings);
  std::stable_sort(readings_.begin(), readings_.end(),
                   [](const GpuReading& a, const GpuReading& b) { return a.index < b.index; });
}

void ScriptedProbe::set_reading(GpuReading reading) {
  auto it = std::find_if(readings_.begin(), readings_.end(),
                         [&](const GpuReading& r) { return r.index == reading.index; });
  if (it != readings_.end()) {
    *it = std::move(reading);
    return;
  }
  auto pos = std::find_if(readings_.begin(), readings_.end(),
                          [&](const GpuReading& r) { return r.index > reading.index; });
  readings_.insert(pos, std::move(reading));
}

void ScriptedProbe::remove(int32_t index) {
  std::erase_if(readings_, [&](const GpuReading& r) { return r.index == index; });
}

void ScriptedProbe::fail_with(Status error) {
  if (error.ok()) error = unavailable_error("scripted probe error");
  error_ = std::move(error);
}

void ScriptedProbe::clear_error() { error_ = Status(); }

// ---- rules -------------------------------------------------------------------------------------

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

GpuSignal make_signal(std::string_view detector, std::string_view fault, const GpuReading& r,
                      std::string reason, std::string evidence) {
  GpuSignal s;
  s.detector = std::string(detector);
  s.fault = std::string(fault);
  s.gpu_index = r.index;
  s.pci = r.pci;
  s.reason = std::move(reason);
  s.evidence = fmt::format("gpu={} pci={}{} {}", r.index, r.pci,
                           r.uuid.empty() ? "" : " uuid=" + r.uuid, evidence);
  return s;
}

std::string gpu_name(const GpuReading& r) {
  return fmt::format("GPU {}{}", r.index, r.pci.empty() ? "" : " (" + r.pci + ")");
}

bool same_gpu(const GpuReading& a, const GpuReading& b) {
  return a.index == b.index && a.pci == b.pci && a.uuid == b.uuid;
}

}  // namespace

std::string clocks_event_reason_names(uint64_t bits) {
  static constexpr std::pair<uint64_t, std::string_view> kNames[] = {
      {kClocksEventGpuIdle, "GPU_IDLE"},
      {kClocksEventApplicationsClocksSetting, "APPLICATIONS_CLOCKS_SETTING"},
      {kClocksEventSwPowerCap, "SW_POWER_CAP"},
      {kClocksEventHwSlowdown, "HW_SLOWDOWN"},
      {kClocksEventSyncBoost, "SYNC_BOOST"},
      {kClocksEventSwThermal, "SW_THERMAL"},
      {kClocksEventHwThermal, "HW_THERMAL"},
      {kClocksEventHwPowerBrake, "HW_POWER_BRAKE"},
      {kClocksEventDisplayClocks, "DISPLAY_CLOCKS"},
  };
  std::string out;
  uint64_t rest = bits;
  for (const auto& [bit, name] : kNames) {
    if ((bits & bit) == 0) continue;
    if (!out.empty()) out += '|';
    out += name;
    rest &= ~bit;
  }
  if (rest != 0) {
    if (!out.empty()) out += '|';
    out += hex(rest);
  }
  return out;
}

int64_t pcie_replay_threshold_per_min(int32_t link_gen, int32_t link_width) {
  if (link_gen <= 0 || link_width <= 0) return 16;
  // Per-lane replays per minute in hundredths: 1e-12 × GT/s × 60.
  static constexpr int64_t kPerLaneCenti[] = {15, 30, 48, 96, 192, 384};
  const int64_t centi = kPerLaneCenti[std::min(link_gen, 6) - 1] * link_width;
  return (centi + 99) / 100;
}

std::optional<GpuSignal> check_ecc(const GpuReading& cur) {
  if (!cur.present || !cur.supports("nvmlDeviceGetTotalEccErrors")) return std::nullopt;
  if (cur.ecc_dbe_volatile == 0) return std::nullopt;
  return make_signal("dcgm-ecc", "dcgm:dbe", cur,
                     fmt::format("{} reported {} volatile double-bit ECC error(s).", gpu_name(cur),
                                 cur.ecc_dbe_volatile),
                     fmt::format("ecc_dbe_volatile={}", cur.ecc_dbe_volatile));
}

std::optional<GpuSignal> check_row_remap(const GpuReading& cur) {
  if (!cur.present || !cur.supports("nvmlDeviceGetRemappedRows")) return std::nullopt;
  const std::string evidence =
      fmt::format("row_remap_pending={} row_remap_failure={}", cur.row_remap_pending ? 1 : 0,
                  cur.row_remap_failure ? 1 : 0);
  if (cur.row_remap_failure) {
    return make_signal("dcgm-row-remap", "dcgm:row-remap-failure", cur,
                       gpu_name(cur) + " failed to remap a memory row.", evidence);
  }
  if (cur.row_remap_pending) {
    return make_signal("dcgm-row-remap", "dcgm:row-remap-pending", cur,
                       gpu_name(cur) + " has a memory row remap pending; a GPU reset applies it.",
                       evidence);
  }
  return std::nullopt;
}

std::optional<GpuSignal> check_pcie_replay(const GpuReading& prev, Time prev_at,
                                           const GpuReading& cur, Time cur_at) {
  if (!prev.present || !cur.present || !same_gpu(prev, cur)) return std::nullopt;
  if (!prev.supports("nvmlDeviceGetPcieReplayCounter") ||
      !cur.supports("nvmlDeviceGetPcieReplayCounter")) {
    return std::nullopt;
  }
  const Duration span = cur_at - prev_at;
  if (span < kMinRateWindow) return std::nullopt;
  if (cur.pcie_replay_counter < prev.pcie_replay_counter) return std::nullopt;  // reset / rollover
  const uint64_t delta = cur.pcie_replay_counter - prev.pcie_replay_counter;
  const int64_t threshold = pcie_replay_threshold_per_min(cur.pcie_link_gen, cur.pcie_link_width);
  // rate = delta / span minutes > threshold  ⇔  delta × 1 min > threshold × span (no rounding).
  const auto span_us = static_cast<unsigned __int128>(span.count());
  const auto minute_us = static_cast<unsigned __int128>(Duration(minutes(1)).count());
  if (static_cast<unsigned __int128>(delta) * minute_us <=
      static_cast<unsigned __int128>(threshold) * span_us) {
    return std::nullopt;
  }
  const double per_min = static_cast<double>(delta) * 60e6 / static_cast<double>(span.count());
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f", per_min);
  return make_signal(
      "dcgm-pcie-replay", "dcgm:pcie-replay", cur,
      fmt::format("{} PCIe replay rate {}/min is above {}/min.", gpu_name(cur), rate, threshold),
      fmt::format("pcie_replay_delta={} span_s={} rate_per_min={} threshold_per_min={} "
                  "link_gen={} link_width={} pcie_replay_counter={}",
                  delta, std::chrono::duration_cast<std::chrono::seconds>(span).count(), rate,
                  threshold, cur.pcie_link_gen, cur.pcie_link_width, cur.pcie_replay_counter));
}

std::optional<GpuSignal> check_thermal(const GpuReading& prev, Time prev_at, const GpuReading& cur,
                                       Time cur_at) {
  if (!prev.present || !cur.present || !same_gpu(prev, cur)) return std::nullopt;
  if (!cur.supports("nvmlDeviceGetCurrentClocksEventReasons") ||
      !prev.supports("nvmlDeviceGetCurrentClocksEventReasons")) {
    return std::nullopt;
  }
  const Duration span = cur_at - prev_at;
  if (span < kMinRateWindow) return std::nullopt;
  const uint64_t held = prev.clocks_event_reasons & cur.clocks_event_reasons & kThermalThrottleMask;
  if (held == 0) return std::nullopt;
  const std::string names = clocks_event_reason_names(held);
  return make_signal(
      "dcgm-thermal", "dcgm:thermal", cur,
      gpu_name(cur) + " is throttled (" + names + ") for at least " + format_duration(span) + ".",
      fmt::format("clocks_event_reasons={} sustained={} span_s={} temperature_c={}",
                  hex(cur.clocks_event_reasons), names,
                  std::chrono::duration_cast<std::chrono::seconds>(span).count(),
                  cur.temperature_c));
}

std::optional<GpuSignal> check_pcie_bus(const ExpectedGpu& expected,
                                        const std::vector<GpuReading>& readings,
                                        bool xid_reported) {
  if (xid_reported) return std::nullopt;
  std::string pci;
  if (!expected.pci.empty()) {
    auto norm = normalize_pci(expected.pci);
    pci = norm ? *norm : expected.pci;
  } else if (expected.uuid.empty()) {
    return std::nullopt;  // nothing to match on
  }
  const GpuReading* found = nullptr;
  for (const auto& r : readings) {
    if (!pci.empty() ? r.pci == pci : r.uuid == expected.uuid) {
      found = &r;
      break;
    }
  }
  if (found != nullptr && found->present) return std::nullopt;
  GpuReading who;
  who.index = expected.index;
  who.pci = pci;
  who.uuid = expected.uuid;
  const std::string what = found == nullptr ? "absent" : "lost";
  return make_signal("pcie-bus", "pcie-bus:missing", who,
                     gpu_name(who) + " is " + (found == nullptr ? "missing from" : "lost on") +
                         " the PCIe bus without an Xid.",
                     fmt::format("expected_index={} probe={} gpus_seen={}", expected.index, what,
                                 readings.size()));
}

}  // namespace gf::health
