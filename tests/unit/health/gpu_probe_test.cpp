// The GPU probe and the DCGM-style rules (docs/health.md): each rule's boundary cases over
// ScriptedProbe readings, and NvmlProbe on a machine without the NVML library answering "not
// available" without crashing. No sleeping: times are parameters.
#include "health/gpu_probe.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gf::health {
namespace {

GpuReading gpu(int32_t index, std::string pci, std::string uuid = "") {
  GpuReading r;
  r.index = index;
  r.pci = std::move(pci);
  r.uuid = uuid.empty() ? "GPU-0000000" + std::to_string(index) : std::move(uuid);
  return r;
}

const Time t0 = kSimEpoch;

// Reads the scripted probe once and returns reading `index`.
GpuReading read_one(ScriptedProbe& probe, int32_t index) {
  auto got = probe.read();
  EXPECT_TRUE(got.ok()) << got.status().to_string();
  for (const auto& r : *got) {
    if (r.index == index) return r;
  }
  ADD_FAILURE() << "no reading for GPU " << index;
  return {};
}

// ---- ScriptedProbe ---------------------------------------------------------------------------

TEST(ScriptedProbe, SetReplaceRemoveKeepIndexOrder) {
  ScriptedProbe probe;
  EXPECT_EQ(probe.name(), "scripted");
  probe.set_readings({gpu(1, "0000:1b:00.0"), gpu(0, "0000:18:00.0")});
  probe.set_reading(gpu(3, "0000:b3:00.0"));
  GpuReading replaced = gpu(1, "0000:1b:00.0");
  replaced.temperature_c = 80;
  probe.set_reading(replaced);
  auto got = probe.read();
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].index, 0);
  EXPECT_EQ((*got)[1].temperature_c, 80);
  EXPECT_EQ((*got)[2].index, 3);
  probe.remove(1);
  EXPECT_EQ(probe.read()->size(), 2u);
  EXPECT_EQ(probe.reads(), 2);
}

TEST(ScriptedProbe, ScriptedErrorUntilCleared) {
  ScriptedProbe probe;
  probe.set_reading(gpu(0, "0000:18:00.0"));
  probe.fail_with(unavailable_error("NVML not available: scripted"));
  auto got = probe.read();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(got.status().message(), "NVML not available: scripted");
  probe.clear_error();
  EXPECT_TRUE(probe.read().ok());
}

// ---- dcgm-ecc ----------------------------------------------------------------------------------

TEST(DcgmEccRule, ZeroIsQuietOneFires) {
  ScriptedProbe probe;
  GpuReading r = gpu(2, "0000:3b:00.0");
  probe.set_reading(r);
  EXPECT_FALSE(check_ecc(read_one(probe, 2)));
  r.ecc_dbe_volatile = 1;
  probe.set_reading(r);
  auto s = check_ecc(read_one(probe, 2));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->detector, "dcgm-ecc");
  EXPECT_EQ(s->fault, "dcgm:dbe");
  EXPECT_EQ(s->gpu_index, 2);
  EXPECT_EQ(s->pci, "0000:3b:00.0");
  EXPECT_NE(s->evidence.find("ecc_dbe_volatile=1"), std::string::npos);
}

TEST(DcgmEccRule, UnsupportedOrLostGpuNeverFires) {
  GpuReading r = gpu(0, "0000:18:00.0");
  r.ecc_dbe_volatile = 5;
  r.unsupported = {"nvmlDeviceGetTotalEccErrors"};
  EXPECT_FALSE(check_ecc(r));
  r.unsupported.clear();
  r.present = false;
  EXPECT_FALSE(check_ecc(r));
}

// ---- dcgm-row-remap ----------------------------------------------------------------------------

TEST(DcgmRowRemapRule, PendingFailureAndBoth) {
  GpuReading r = gpu(0, "0000:18:00.0");
  EXPECT_FALSE(check_row_remap(r));
  r.row_remap_pending = true;
  auto pending = check_row_remap(r);
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->detector, "dcgm-row-remap");
  EXPECT_EQ(pending->fault, "dcgm:row-remap-pending");
  r.row_remap_failure = true;  // failure wins (migrate rather than reboot)
  auto both = check_row_remap(r);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->fault, "dcgm:row-remap-failure");
  EXPECT_NE(both->evidence.find("row_remap_pending=1 row_remap_failure=1"), std::string::npos);
  r.row_remap_pending = false;
  EXPECT_EQ(check_row_remap(r)->fault, "dcgm:row-remap-failure");
}

TEST(DcgmRowRemapRule, UnsupportedUnderMigNeverFires) {
  GpuReading r = gpu(0, "0000:18:00.0");
  r.row_remap_failure = true;
  r.unsupported = {"nvmlDeviceGetRemappedRows"};
  EXPECT_FALSE(check_row_remap(r));
}

// ---- dcgm-pcie-replay --------------------------------------------------------------------------

TEST(DcgmPcieReplayRule, ThresholdsFromLinkGenAndWidth) {
  EXPECT_EQ(pcie_replay_threshold_per_min(4, 16), 16);  // 15.36 → 16
  EXPECT_EQ(pcie_replay_threshold_per_min(5, 16), 31);  // 30.72 → 31
  EXPECT_EQ(pcie_replay_threshold_per_min(3, 16), 8);   // 7.68 → 8
  EXPECT_EQ(pcie_replay_threshold_per_min(6, 16), 62);  // 61.44 → 62
  EXPECT_EQ(pcie_replay_threshold_per_min(4, 8), 8);    // 7.68 → 8
  EXPECT_EQ(pcie_replay_threshold_per_min(1, 1), 1);    // 0.15 → 1
  EXPECT_EQ(pcie_replay_threshold_per_min(7, 16), 62);  // above Gen6: Gen6 rate
  EXPECT_EQ(pcie_replay_threshold_per_min(0, 16), 16);  // unknown: the documented default
  EXPECT_EQ(pcie_replay_threshold_per_min(5, 0), 16);
}

TEST(DcgmPcieReplayRule, Gen4AtThresholdQuietAboveFires) {
  ScriptedProbe probe;
  GpuReading r = gpu(0, "0000:18:00.0");
  r.pcie_link_gen = 4;
  r.pcie_link_width = 16;
  r.pcie_replay_counter = 100;
  probe.set_reading(r);
  const GpuReading prev = read_one(probe, 0);
  r.pcie_replay_counter = 116;  // exactly 16/min: not above
  probe.set_reading(r);
  EXPECT_FALSE(check_pcie_replay(prev, t0, read_one(probe, 0), t0 + minutes(1)));
  r.pcie_replay_counter = 117;  // 17/min
  probe.set_reading(r);
  auto s = check_pcie_replay(prev, t0, read_one(probe, 0), t0 + minutes(1));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->detector, "dcgm-pcie-replay");
  EXPECT_EQ(s->fault, "dcgm:pcie-replay");
  EXPECT_NE(s->evidence.find("pcie_replay_delta=17"), std::string::npos);
  EXPECT_NE(s->evidence.find("threshold_per_min=16"), std::string::npos);
  // The same 17 replays over two minutes is 8.5/min.
  EXPECT_FALSE(check_pcie_replay(prev, t0, read_one(probe, 0), t0 + minutes(2)));
}

TEST(DcgmPcieReplayRule, Gen5UsesItsOwnThreshold) {
  GpuReading prev = gpu(0, "0000:18:00.0");
  prev.pcie_link_gen = 5;
  prev.pcie_link_width = 16;
  GpuReading cur = prev;
  cur.pcie_replay_counter = 62;  // 31/min over 2 min: at threshold
  EXPECT_FALSE(check_pcie_replay(prev, t0, cur, t0 + minutes(2)));
  cur.pcie_replay_counter = 63;
  EXPECT_TRUE(check_pcie_replay(prev, t0, cur, t0 + minutes(2)));
}

TEST(DcgmPcieReplayRule, ShortSpanResetOrOtherGpuGivesNothing) {
  GpuReading prev = gpu(0, "0000:18:00.0");
  prev.pcie_replay_counter = 1000;
  GpuReading cur = prev;
  cur.pcie_replay_counter = 2000;
  EXPECT_FALSE(check_pcie_replay(prev, t0, cur, t0 + minutes(1) - seconds(1)));  // < 1 min
  EXPECT_TRUE(check_pcie_replay(prev, t0, cur, t0 + minutes(1)));
  EXPECT_FALSE(check_pcie_replay(cur, t0, prev, t0 + minutes(1)));  // counter went back
  GpuReading swapped = cur;
  swapped.uuid = "GPU-other";
  EXPECT_FALSE(check_pcie_replay(prev, t0, swapped, t0 + minutes(1)));
  GpuReading unsupported = cur;
  unsupported.unsupported = {"nvmlDeviceGetPcieReplayCounter"};
  EXPECT_FALSE(check_pcie_replay(prev, t0, unsupported, t0 + minutes(1)));
}

// ---- dcgm-thermal ------------------------------------------------------------------------------

TEST(DcgmThermalRule, EachThermalBitSustainedFires) {
  for (uint64_t bit : {kClocksEventHwSlowdown, kClocksEventSwThermal, kClocksEventHwThermal,
                       kClocksEventHwPowerBrake}) {
    GpuReading r = gpu(1, "0000:1b:00.0");
    r.clocks_event_reasons = bit;
    auto s = check_thermal(r, t0, r, t0 + minutes(1));
    ASSERT_TRUE(s) << bit;
    EXPECT_EQ(s->detector, "dcgm-thermal");
    EXPECT_EQ(s->fault, "dcgm:thermal");
    EXPECT_NE(s->evidence.find("sustained=" + clocks_event_reason_names(bit)), std::string::npos);
  }
}

TEST(DcgmThermalRule, NonThermalBitsShortSpanOrOneReadingIsQuiet) {
  GpuReading r = gpu(1, "0000:1b:00.0");
  r.clocks_event_reasons = kClocksEventGpuIdle | kClocksEventSwPowerCap | kClocksEventSyncBoost |
                           kClocksEventApplicationsClocksSetting | kClocksEventDisplayClocks;
  EXPECT_FALSE(check_thermal(r, t0, r, t0 + minutes(10)));
  GpuReading hot = r;
  hot.clocks_event_reasons = kClocksEventHwThermal;
  EXPECT_FALSE(check_thermal(hot, t0, hot, t0 + minutes(1) - seconds(1)));  // not sustained yet
  EXPECT_FALSE(check_thermal(r, t0, hot, t0 + minutes(5)));  // only the latest reading
  EXPECT_FALSE(check_thermal(hot, t0, r, t0 + minutes(5)));  // cleared
  GpuReading slow = r;
  slow.clocks_event_reasons = kClocksEventHwSlowdown;
  EXPECT_FALSE(check_thermal(hot, t0, slow, t0 + minutes(5)));  // different bits: no common one
}

TEST(DcgmThermalRule, ReasonNamesDecodeBits) {
  EXPECT_EQ(clocks_event_reason_names(0), "");
  EXPECT_EQ(clocks_event_reason_names(0x48), "HW_SLOWDOWN|HW_THERMAL");
  EXPECT_EQ(clocks_event_reason_names(0x1000 | 0x1), "GPU_IDLE|0x1000");
  EXPECT_EQ(kThermalThrottleMask, 0xe8u);
}

// ---- pcie-bus ----------------------------------------------------------------------------------

TEST(PcieBusRule, MissingGpuWithoutXidFires) {
  ScriptedProbe probe;
  probe.set_readings({gpu(0, "0000:18:00.0"), gpu(1, "0000:b3:00.0")});
  const ExpectedGpu expected{1, "0000:B3:00", "GPU-00000001"};
  auto seen = probe.read();
  ASSERT_TRUE(seen.ok());
  EXPECT_FALSE(check_pcie_bus(expected, *seen, false));
  probe.remove(1);
  seen = probe.read();
  auto s = check_pcie_bus(expected, *seen, false);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->detector, "pcie-bus");
  EXPECT_EQ(s->fault, "pcie-bus:missing");
  EXPECT_EQ(s->gpu_index, 1);
  EXPECT_EQ(s->pci, "0000:b3:00.0");
  EXPECT_NE(s->evidence.find("probe=absent"), std::string::npos);
  EXPECT_FALSE(check_pcie_bus(expected, *seen, true));  // an Xid explains it: xid detector's
}

TEST(PcieBusRule, LostGpuAndUuidMatch) {
  GpuReading lost = gpu(1, "0000:b3:00.0");
  lost.present = false;
  auto s = check_pcie_bus({1, "0000:b3:00.0", ""}, {gpu(0, "0000:18:00.0"), lost}, false);
  ASSERT_TRUE(s);
  EXPECT_NE(s->evidence.find("probe=lost"), std::string::npos);
  EXPECT_FALSE(check_pcie_bus({0, "", "GPU-00000000"}, {gpu(0, "0000:18:00.0")}, false));
  EXPECT_TRUE(check_pcie_bus({0, "", "GPU-gone"}, {gpu(0, "0000:18:00.0")}, false));
  EXPECT_FALSE(check_pcie_bus({0, "", ""}, {}, false));  // nothing to match on
}

// ---- NvmlProbe ---------------------------------------------------------------------------------

TEST(NvmlProbe, AbsentLibraryIsNotAvailableNamingIt) {
  NvmlProbe probe("libnvidia-ml-gpufleet-absent.so.1");
  EXPECT_EQ(probe.name(), "nvml");
  for (int i = 0; i < 2; ++i) {  // a retry must not crash either
    auto got = probe.read();
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), ErrorCode::kUnavailable);
    EXPECT_EQ(got.status().message().rfind("NVML not available: ", 0), 0u)
        << got.status().message();
    EXPECT_NE(got.status().message().find("libnvidia-ml-gpufleet-absent.so.1"), std::string::npos)
        << got.status().message();
  }
}

TEST(NvmlProbe, LibraryWithoutNvmlSymbolsIsNotAvailable) {
  NvmlProbe probe("libm.so.6");  // loads, but has no nvmlInit_v2
  auto got = probe.read();
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("NVML not available: libm.so.6 lacks nvmlInit_v2"),
            std::string::npos)
      << got.status().message();
}

TEST(NvmlProbe, DefaultLibraryOnThisMachine) {
  NvmlProbe probe;
  auto got = probe.read();
  if (got.ok()) GTEST_SKIP() << "this machine has NVML and " << got->size() << " GPU(s)";
  EXPECT_EQ(got.status().message().rfind("NVML not available: ", 0), 0u);
  EXPECT_NE(got.status().message().find("libnvidia-ml.so.1"), std::string::npos)
      << got.status().message();
}

}  // namespace
}  // namespace gf::health
