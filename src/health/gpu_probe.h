// The GPU probe and the DCGM-style rules (docs/health.md, docs/dispatch.md):
// a GpuProbe reads per-GPU counters (NvmlProbe from the driver's NVML library, loaded at run time
// with dlopen so the binary neither links nor needs it; ScriptedProbe for tests and simulation),
// and pure rule functions turn readings into signals for the detectors `dcgm-ecc`,
// `dcgm-row-remap`, `dcgm-pcie-replay`, `dcgm-thermal` and `pcie-bus`. The rules do no I/O and
// read no clock (times are parameters); alerting (persistence, de-duplication) happens later.
// Fields, NVML calls and thresholds: docs/health.md "GPU probe and DCGM rules".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace gf::health {

// One GPU at one instant. A field whose NVML call the driver lacks (no such symbol, or
// NVML_ERROR_NOT_SUPPORTED) keeps its neutral value (0 / false) and the call's name is listed in
// `unsupported`; the rules never fire on a field listed there.
struct GpuReading {
  int32_t index = 0;
  std::string pci;                // normalised "dddd:bb:dd.f" (normalize_pci); "" when unknown
  std::string uuid;               // "GPU-…"; "" when unknown
  bool present = true;            // false: the GPU answered NVML_ERROR_GPU_IS_LOST or had no handle
  uint64_t ecc_dbe_volatile = 0;  // DCGM_FI_DEV_ECC_DBE_VOL_TOTAL (311)
  bool row_remap_pending = false;        // DCGM_FI_DEV_ROW_REMAP_PENDING (396)
  bool row_remap_failure = false;        // DCGM_FI_DEV_ROW_REMAP_FAILURE (395)
  uint64_t pcie_replay_counter = 0;      // DCGM_FI_DEV_PCIE_REPLAY_COUNTER (202), monotonic
  int32_t pcie_link_gen = 0;             // DCGM_FI_DEV_PCIE_LINK_GEN (237); 0 unknown
  int32_t pcie_link_width = 0;           // DCGM_FI_DEV_PCIE_LINK_WIDTH (238); 0 unknown
  uint64_t clocks_event_reasons = 0;     // DCGM_FI_DEV_CLOCKS_EVENT_REASONS (112), bit mask
  int32_t temperature_c = 0;             // DCGM_FI_DEV_GPU_TEMP (150)
  std::vector<std::string> unsupported;  // NVML function names, e.g. "nvmlDeviceGetRemappedRows"
  bool operator==(const GpuReading&) const = default;

  bool supports(std::string_view nvml_function) const;
};

class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  // Every GPU the probe can see, in index order. An error means the probe saw nothing (library
  // missing, init failed): never read it as "all GPUs missing".
  virtual Result<std::vector<GpuReading>> read() = 0;
  virtual std::string_view name() const = 0;
};

// Readings set by tests and the simulator.
class ScriptedProbe final : public GpuProbe {
 public:
  Result<std::vector<GpuReading>> read() override;
  std::string_view name() const override { return "scripted"; }

  void set_readings(std::vector<GpuReading> readings);
  void set_reading(GpuReading reading);  // replaces the reading with the same index, or adds it
  void remove(int32_t index);            // the GPU vanishes from the bus
  void fail_with(Status error);          // every read() answers this until clear_error()
  void clear_error();
  int64_t reads() const { return reads_; }

 private:
  std::vector<GpuReading> readings_;  // kept in index order
  Status error_;
  int64_t reads_ = 0;
};

// Reads the driver's NVML through dlopen(library, RTLD_NOW | RTLD_LOCAL). The library is loaded
// and nvmlInit_v2 called on the first read() (retried on later reads while it fails); the
// destructor calls nvmlShutdown and dlclose. Without the library or a working driver, read()
// answers kUnavailable "NVML not available: <library>: <reason>"; it never aborts. Not
// thread-safe: one probe per polling thread.
class NvmlProbe final : public GpuProbe {
 public:
  static constexpr std::string_view kDefaultLibrary = "libnvidia-ml.so.1";
  explicit NvmlProbe(std::string library = std::string(kDefaultLibrary));
  ~NvmlProbe() override;
  NvmlProbe(const NvmlProbe&) = delete;
  NvmlProbe& operator=(const NvmlProbe&) = delete;

  Result<std::vector<GpuReading>> read() override;
  std::string_view name() const override { return "nvml"; }

 private:
  struct Lib;
  Status ensure_loaded();
  std::string library_;
  std::unique_ptr<Lib> lib_;
};

// ---- rules -------------------------------------------------------------------------------------

struct GpuSignal {
  std::string
      detector;  // "dcgm-ecc", "dcgm-row-remap", "dcgm-pcie-replay", "dcgm-thermal", "pcie-bus"
  std::string fault;  // fault code, e.g. "dcgm:row-remap-failure"
  int32_t gpu_index = 0;
  std::string pci;
  std::string reason;    // one plain sentence
  std::string evidence;  // machine-readable "key=value" pairs
  bool operator==(const GpuSignal&) const = default;
};

// Clock-event reason bits (NVML nvmlClocksEventReason*, DCGM DCGM_CLOCKS_EVENT_REASON_*).
inline constexpr uint64_t kClocksEventGpuIdle = 0x1;
inline constexpr uint64_t kClocksEventApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kClocksEventSwPowerCap = 0x4;
inline constexpr uint64_t kClocksEventHwSlowdown = 0x8;
inline constexpr uint64_t kClocksEventSyncBoost = 0x10;
inline constexpr uint64_t kClocksEventSwThermal = 0x20;
inline constexpr uint64_t kClocksEventHwThermal = 0x40;
inline constexpr uint64_t kClocksEventHwPowerBrake = 0x80;
inline constexpr uint64_t kClocksEventDisplayClocks = 0x100;
// The bits that count as thermal throttling (docs/health.md): HW_SLOWDOWN, SW/HW_THERMAL,
// HW_POWER_BRAKE. Never GPU_IDLE, SW_POWER_CAP, SYNC_BOOST or the clock-setting bits.
inline constexpr uint64_t kThermalThrottleMask = kClocksEventHwSlowdown | kClocksEventSwThermal |
                                                 kClocksEventHwThermal | kClocksEventHwPowerBrake;
// "HW_SLOWDOWN|HW_THERMAL"; unknown bits as hex; "" for 0.
std::string clocks_event_reason_names(uint64_t bits);

// DCGM needs at least a minute of data for PCIe and thermal verdicts (docs/health.md).
inline constexpr Duration kMinRateWindow = minutes(1);

// Replays per minute above which dcgm-pcie-replay fires: ceil(per-lane rate × lanes), per-lane
// rate = 1e-12 BER × line rate × 60 s (Gen1 0.15, Gen2 0.30, Gen3 0.48, Gen4 0.96, Gen5 1.92,
// Gen6 3.84 per minute) — 16 on Gen4 x16, 31 on Gen5 x16. Unknown generation or width (0) → the
// the documented default for Gen4 x16 (16); generations above 6 use the Gen6 rate.
int64_t pcie_replay_threshold_per_min(int32_t link_gen, int32_t link_width);

// dcgm-ecc: any volatile double-bit ECC error (fault "dcgm:dbe").
std::optional<GpuSignal> check_ecc(const GpuReading& cur);
// dcgm-row-remap: failure (fault "dcgm:row-remap-failure", action migrate) wins over pending
// (fault "dcgm:row-remap-pending", action reboot).
std::optional<GpuSignal> check_row_remap(const GpuReading& cur);
// dcgm-pcie-replay: the counter rose faster than pcie_replay_threshold_per_min between two
// readings of the same GPU (same PCI address and UUID) at least kMinRateWindow apart. A counter
// that went backwards (driver reload, rollover) or a shorter span gives nothing.
std::optional<GpuSignal> check_pcie_replay(const GpuReading& prev, Time prev_at,
                                           const GpuReading& cur, Time cur_at);
// dcgm-thermal: a thermal bit (kThermalThrottleMask) set in both readings of the same GPU, at
// least kMinRateWindow apart ("sustained"); the signal names the bits set in both.
std::optional<GpuSignal> check_thermal(const GpuReading& prev, Time prev_at, const GpuReading& cur,
                                       Time cur_at);

// A GPU the node's inventory says it has.
struct ExpectedGpu {
  int32_t index = 0;
  std::string pci;  // any form normalize_pci accepts; "" → match by uuid
  std::string uuid;
};
// pcie-bus: the expected GPU is absent from a successful probe reading (no reading with its PCI
// address — or UUID when it has no address — or one marked not present) and no Xid was reported
// for it (an Xid 79 is the `xid` detector's business). Fault "pcie-bus:missing".
std::optional<GpuSignal> check_pcie_bus(const ExpectedGpu& expected,
                                        const std::vector<GpuReading>& readings, bool xid_reported);

}  // namespace gf::health
