// NvmlProbe: the driver's NVML, loaded with dlopen. nvml.h is not a build dependency: the few
// types, constants and signatures used are declared here, with their values from NVML's public
// header (NVIDIA/go-nvml gen/nvml/nvml.h). Handles stay opaque pointers.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstring>

#include "health/gpu_probe.h"
#include "health/xid.h"

namespace gf::health {

namespace {

struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;  // nvmlDevice_t
using NvmlReturn = int;                // nvmlReturn_t

constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlErrorGpuIsLost = 15;

constexpr int kNvmlMemoryErrorTypeUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr int kNvmlVolatileEcc = 0;                 // nvmlEccCounterType_t
constexpr int kNvmlTemperatureGpu = 0;              // nvmlTemperatureSensors_t
constexpr unsigned kNvmlUuidBufferSize = 96;        // NVML_DEVICE_UUID_V2_BUFFER_SIZE

// nvmlPciInfo_t (v2/v3 layout), with slack at the end in case a driver writes more.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_sub_system_id;
  char bus_id[32];
  char slack[64];
};

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using CountFn = NvmlReturn (*)(unsigned int*);
using HandleFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using PciFn = NvmlReturn (*)(NvmlDevice, NvmlPciInfo*);
using UuidFn = NvmlReturn (*)(NvmlDevice, char*, unsigned int);
using EccFn = NvmlReturn (*)(NvmlDevice, int, int, unsigned long long*);
using RemapFn = NvmlReturn (*)(NvmlDevice, unsigned int*, unsigned int*, unsigned int*,
                               unsigned int*);
using UintFn = NvmlReturn (*)(NvmlDevice, unsigned int*);
using ReasonsFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);
using TempFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);

std::string dl_error_text() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown dlopen error");
}

// Records the outcome of one call in `r`: true when the value may be used.
bool took(GpuReading& r, NvmlReturn rc, const char* name) {
  if (rc == kNvmlSuccess) return true;
  // NOT_SUPPORTED (3), FUNCTION_NOT_FOUND (13) or any other failure: the value is unusable.
  if (rc == kNvmlErrorGpuIsLost) r.present = false;
  r.unsupported.emplace_back(name);
  return false;
}

// Records a function this driver's NVML lacks: never a value.
bool missing(GpuReading& r, const char* name) {
  r.unsupported.emplace_back(name);
  return false;
}

}  // namespace

struct NvmlProbe::Lib {
  void* handle = nullptr;
  bool initialized = false;
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  CountFn count = nullptr;
  HandleFn handle_by_index = nullptr;
  PciFn pci_info = nullptr;
  const char* pci_info_name = "nvmlDeviceGetPciInfo_v3";
  UuidFn uuid = nullptr;
  EccFn total_ecc = nullptr;
  RemapFn remapped_rows = nullptr;
  UintFn replay = nullptr;
  UintFn link_gen = nullptr;
  UintFn link_width = nullptr;
  ReasonsFn reasons = nullptr;
  TempFn temperature = nullptr;

  template <typename Fn>
  Fn sym(const char* name) const {
    return reinterpret_cast<Fn>(dlsym(handle, name));
  }

  std::string describe(NvmlReturn rc) const {
    std::string text = error_string != nullptr && error_string(rc) != nullptr
                           ? std::string(error_string(rc))
                           : std::string("error");
    return fmt::format("{} ({})", text, rc);
  }

  // The reading of GPU `index`: not present when NVML gives no handle for it. The readers below
  // run in a fixed order, which is the order of `unsupported`.
  GpuReading read_gpu(unsigned int index) const;
  // PCI bus id and UUID.
  void read_identity(NvmlDevice dev, GpuReading& r) const;
  // Volatile uncorrectable ECC errors and row remapping.
  void read_memory_errors(NvmlDevice dev, GpuReading& r) const;
  // PCIe replay counter and the current link generation and width.
  void read_pcie(NvmlDevice dev, GpuReading& r) const;
  // Clock-event reasons and the GPU temperature.
  void read_clocks_and_temperature(NvmlDevice dev, GpuReading& r) const;
};

NvmlProbe::NvmlProbe(std::string library) : library_(std::move(library)) {}

NvmlProbe::~NvmlProbe() {
  if (!lib_) return;
  if (lib_->initialized && lib_->shutdown != nullptr) (void)lib_->shutdown();
  if (lib_->handle != nullptr) dlclose(lib_->handle);
}

Status NvmlProbe::ensure_loaded() {
  if (!lib_) {
    dlerror();  // clear any stale error
    void* h = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      std::string why = dl_error_text();
      if (why.find(library_) == std::string::npos) why = library_ + ": " + why;
      return unavailable_error("NVML not available: " + why);
    }
    auto lib = std::make_unique<Lib>();
    lib->handle = h;
    lib->init = lib->sym<InitFn>("nvmlInit_v2");
    lib->shutdown = lib->sym<ShutdownFn>("nvmlShutdown");
    lib->error_string = lib->sym<ErrorStringFn>("nvmlErrorString");
    lib->count = lib->sym<CountFn>("nvmlDeviceGetCount_v2");
    lib->handle_by_index = lib->sym<HandleFn>("nvmlDeviceGetHandleByIndex_v2");
    lib->pci_info = lib->sym<PciFn>("nvmlDeviceGetPciInfo_v3");
    if (lib->pci_info == nullptr) {
      lib->pci_info = lib->sym<PciFn>("nvmlDeviceGetPciInfo_v2");
      lib->pci_info_name = "nvmlDeviceGetPciInfo_v2";
    }
    lib->uuid = lib->sym<UuidFn>("nvmlDeviceGetUUID");
    lib->total_ecc = lib->sym<EccFn>("nvmlDeviceGetTotalEccErrors");
    lib->remapped_rows = lib->sym<RemapFn>("nvmlDeviceGetRemappedRows");
    lib->replay = lib->sym<UintFn>("nvmlDeviceGetPcieReplayCounter");
    lib->link_gen = lib->sym<UintFn>("nvmlDeviceGetCurrPcieLinkGeneration");
    lib->link_width = lib->sym<UintFn>("nvmlDeviceGetCurrPcieLinkWidth");
    lib->reasons = lib->sym<ReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
    if (lib->reasons == nullptr) {
      lib->reasons = lib->sym<ReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    lib->temperature = lib->sym<TempFn>("nvmlDeviceGetTemperature");
    for (const auto& [fn, name] :
         {std::pair{reinterpret_cast<void*>(lib->init), "nvmlInit_v2"},
          std::pair{reinterpret_cast<void*>(lib->count), "nvmlDeviceGetCount_v2"},
          std::pair{reinterpret_cast<void*>(lib->handle_by_index),
                    "nvmlDeviceGetHandleByIndex_v2"}}) {
      if (fn == nullptr) {
        dlclose(h);
        lib->handle = nullptr;
        return unavailable_error("NVML not available: " + library_ + " lacks " + name);
      }
    }
    lib_ = std::move(lib);
  }
  if (!lib_->initialized) {
    const NvmlReturn rc = lib_->init();
    if (rc != kNvmlSuccess) {
      return unavailable_error("NVML not available: " + library_ +
                               ": nvmlInit_v2 failed: " + lib_->describe(rc));
    }
    lib_->initialized = true;
  }
  return ok_status();
}

void NvmlProbe::Lib::read_identity(NvmlDevice dev, GpuReading& r) const {
  NvmlPciInfo pci{};
  if (pci_info == nullptr ? missing(r, "nvmlDeviceGetPciInfo_v3")
                          : took(r, pci_info(dev, &pci), pci_info_name)) {
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    if (auto norm = normalize_pci(pci.bus_id)) r.pci = *norm;
  }
  char buf[kNvmlUuidBufferSize + 1] = {};
  if (uuid == nullptr ? missing(r, "nvmlDeviceGetUUID")
                      : took(r, uuid(dev, buf, kNvmlUuidBufferSize), "nvmlDeviceGetUUID")) {
    r.uuid = std::string(buf, strnlen(buf, kNvmlUuidBufferSize));
  }
}

void NvmlProbe::Lib::read_memory_errors(NvmlDevice dev, GpuReading& r) const {
  unsigned long long dbe = 0;
  if (total_ecc == nullptr
          ? missing(r, "nvmlDeviceGetTotalEccErrors")
          : took(r, total_ecc(dev, kNvmlMemoryErrorTypeUncorrected, kNvmlVolatileEcc, &dbe),
                 "nvmlDeviceGetTotalEccErrors")) {
    r.ecc_dbe_volatile = dbe;
  }
  unsigned int corr = 0, unc = 0, pending = 0, failure = 0;
  if (remapped_rows == nullptr ? missing(r, "nvmlDeviceGetRemappedRows")
                               : took(r, remapped_rows(dev, &corr, &unc, &pending, &failure),
                                      "nvmlDeviceGetRemappedRows")) {
    r.row_remap_pending = pending != 0;
    r.row_remap_failure = failure != 0;
  }
}

void NvmlProbe::Lib::read_pcie(NvmlDevice dev, GpuReading& r) const {
  unsigned int value = 0;
  if (replay == nullptr ? missing(r, "nvmlDeviceGetPcieReplayCounter")
                        : took(r, replay(dev, &value), "nvmlDeviceGetPcieReplayCounter")) {
    r.pcie_replay_counter = value;
  }
  value = 0;
  if (link_gen == nullptr ? missing(r, "nvmlDeviceGetCurrPcieLinkGeneration")
                          : took(r, link_gen(dev, &value), "nvmlDeviceGetCurrPcieLinkGeneration")) {
    r.pcie_link_gen = static_cast<int32_t>(value);
  }
  value = 0;
  if (link_width == nullptr ? missing(r, "nvmlDeviceGetCurrPcieLinkWidth")
                            : took(r, link_width(dev, &value), "nvmlDeviceGetCurrPcieLinkWidth")) {
    r.pcie_link_width = static_cast<int32_t>(value);
  }
}

void NvmlProbe::Lib::read_clocks_and_temperature(NvmlDevice dev, GpuReading& r) const {
  unsigned long long bits = 0;
  if (reasons == nullptr ? missing(r, "nvmlDeviceGetCurrentClocksEventReasons")
                         : took(r, reasons(dev, &bits), "nvmlDeviceGetCurrentClocksEventReasons")) {
    r.clocks_event_reasons = bits;
  }
  unsigned int value = 0;
  if (temperature == nullptr
          ? missing(r, "nvmlDeviceGetTemperature")
          : took(r, temperature(dev, kNvmlTemperatureGpu, &value), "nvmlDeviceGetTemperature")) {
    r.temperature_c = static_cast<int32_t>(value);
  }
}

GpuReading NvmlProbe::Lib::read_gpu(unsigned int index) const {
  GpuReading r;
  r.index = static_cast<int32_t>(index);
  NvmlDevice dev = nullptr;
  if (handle_by_index(index, &dev) != kNvmlSuccess || dev == nullptr) {
    r.present = false;
    return r;
  }
  read_identity(dev, r);
  read_memory_errors(dev, r);
  read_pcie(dev, r);
  read_clocks_and_temperature(dev, r);
  return r;
}

Result<std::vector<GpuReading>> NvmlProbe::read() {
  GF_RETURN_IF_ERROR(ensure_loaded());
  Lib& lib = *lib_;
  unsigned int count = 0;
  if (NvmlReturn rc = lib.count(&count); rc != kNvmlSuccess) {
    return unavailable_error("NVML nvmlDeviceGetCount_v2 failed: " + lib.describe(rc));
  }
  std::vector<GpuReading> out;
  out.reserve(count);
  for (unsigned int i = 0; i < count; ++i) out.push_back(lib.read_gpu(i));
  return out;
}

}  // namespace gf::health
