// Raw detector input → detections (docs/health.md detectors, docs/scenarios.md `fault.signal`):
// kernel-log text and structured probe readings, through the real parsers of src/health/. Pure:
// nothing sleeps.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "remediate/signal.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gf::remediate {
namespace {

Json yaml(std::string_view text) {
  Result<Json> j = parse_yaml(text);
  EXPECT_TRUE(j.ok()) << j.status().message();
  return j.ok() ? j.value() : Json();
}

std::vector<Detection> detected(const Json& signal) {
  Result<std::vector<Detection>> r = detect(signal);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : std::vector<Detection>{};
}

std::string refused(const Json& signal) {
  Result<std::vector<Detection>> r = detect(signal);
  return r.ok() ? "" : r.status().message();
}

// ---- kernel log (xid, pcie-bus, npd-*) ----------------------------------------------------------

TEST(SignalKernelLog, SpecScenarioXid79Line) {
  const std::string line = "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.";
  std::vector<Detection> d = detected(Json(line));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "xid");
  EXPECT_EQ(d[0].fault, "xid:79");
  EXPECT_EQ(d[0].subject, "0000:18:00.0");
  EXPECT_EQ(d[0].evidence, line);
  EXPECT_FALSE(d[0].summary.empty());
  EXPECT_EQ(d[0].default_action, std::nullopt);
}

TEST(SignalKernelLog, Xid154CarriesTheDriverNamedAction) {
  const std::string reset =
      "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU "
      "Reset Required)";
  std::vector<Detection> d = detected(Json(reset));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].fault, "xid:154");
  EXPECT_EQ(d[0].subject, "0008:01:00.0");
  EXPECT_EQ(d[0].default_action, Action::kReboot);

  std::vector<Detection> drain =
      detected(Json("NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) "
                    "to 0x4 (Drain and Reset)"));
  ASSERT_EQ(drain.size(), 1u);
  EXPECT_EQ(drain[0].default_action, Action::kMigrate);

  std::vector<Detection> none =
      detected(Json("NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x1 (GPU "
                    "Reset Required) to 0x0 (None)"));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].default_action, Action::kNone);
}

TEST(SignalKernelLog, MultiLineTextGivesOneDetectionPerXidLine) {
  const std::string a =
      "[ 1843.308145] NVRM: Xid (PCI:0000:B3:00.0): 79, pid=1234, name=nv-hostengine";
  const std::string b =
      "Nov 30 05:00:00 gpu-node-17 kernel: NVRM: Xid (PCI:0000:17:00): 119, pid=1, name=x, Timeout "
      "waiting for RPC";
  std::vector<Detection> d = detected(Json(a + "\nsome unrelated line\r\n" + b + "\n"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].fault, "xid:79");
  EXPECT_EQ(d[0].subject, "0000:b3:00.0");
  EXPECT_EQ(d[0].evidence, a);
  EXPECT_EQ(d[1].fault, "xid:119");
  EXPECT_EQ(d[1].subject, "0000:17:00.0");
  EXPECT_EQ(d[1].evidence, b);
}

TEST(SignalKernelLog, SXidLineIsAnSxidFault) {
  std::vector<Detection> d =
      detected(Json("nvidia-nvswitch3: SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 28 sourcetrack "
                    "timeout error (First)"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "xid");
  EXPECT_EQ(d[0].fault, "sxid:24007");
}

TEST(SignalKernelLog, GarbageGivesNoDetectionAndNoError) {
  std::string bytes;
  for (int i = 0; i < 512; ++i) bytes.push_back(static_cast<char>((i * 131 + 7) % 256));
  for (const std::string& text :
       {std::string(), std::string("hello"), bytes, std::string("\n\n\r\n"),
        std::string("NVRM: Xid (PCI:0000:18:00): abc"),
        std::string("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.163.01")}) {
    Result<std::vector<Detection>> r = detect(Json(text));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r.value().empty());
  }
}

TEST(SignalKernelLog, FallenOffTheBusWithoutXidIsPcieBus) {
  const std::string text =
      "NVRM: The NVIDIA GPU 0000:b3:00.0\n"
      "NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
      "NVRM: fallen off the bus and is not responding to commands.\n";
  std::vector<Detection> d = detected(Json(text));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "pcie-bus");
  EXPECT_EQ(d[0].fault, "pcie-bus:missing");
  EXPECT_EQ(d[0].subject, "0000:b3:00.0");
  EXPECT_EQ(d[0].evidence, "NVRM: fallen off the bus and is not responding to commands.");
}

TEST(SignalKernelLog, HungTaskIsAnNpdDetector) {
  const std::string line =
      "[ 9999.123456] INFO: task python3:4242 blocked for more than 120 seconds.";
  std::vector<Detection> d = detected(Json(line));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].detector.starts_with("npd-")) << d[0].detector;
  EXPECT_EQ(d[0].detector, "npd-kernel-deadlock");
  EXPECT_EQ(d[0].fault, "npd-kernel-deadlock:TaskHung");
  EXPECT_EQ(d[0].subject, "python3");
  EXPECT_EQ(d[0].evidence, line);

  std::vector<Detection> xfs =
      detected(Json("INFO: task xfsaild/nvme0n1:812 blocked for more than 120 seconds."));
  ASSERT_EQ(xfs.size(), 1u);
  EXPECT_EQ(xfs[0].detector, "npd-xfs-hang");
}

// ---- dcgm
// ------------------------------------------------------------------------------------------

TEST(SignalDcgm, VolatileDbeIsDcgmEcc) {
  std::vector<Detection> d =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, value: 1}}"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "dcgm-ecc");
  EXPECT_EQ(d[0].fault, "dcgm:dbe");
  EXPECT_FALSE(d[0].evidence.empty());
  EXPECT_TRUE(detected(yaml("{dcgm: {field: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, value: 0}}")).empty());
}

TEST(SignalDcgm, DefaultSubjectIsAWellFormedPciAddress) {
  // gpu 0 → bus 0x18 (the documented scenario's GPU), gpu 3 → bus 0x1b.
  std::vector<Detection> d0 =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, value: 1}}"));
  ASSERT_EQ(d0.size(), 1u);
  EXPECT_EQ(d0[0].subject, "0000:18:00.0");
  std::vector<Detection> d3 =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, value: 1, gpu: 3}}"));
  ASSERT_EQ(d3.size(), 1u);
  EXPECT_EQ(d3[0].subject, "0000:1b:00.0");
  std::vector<Detection> pci = detected(
      yaml("{dcgm: {field: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, value: 1, pci: '0000:b3:00.0'}}"));
  ASSERT_EQ(pci.size(), 1u);
  EXPECT_EQ(pci[0].subject, "0000:b3:00.0");
}

TEST(SignalDcgm, RowRemapFailureAndPending) {
  std::vector<Detection> f =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_ROW_REMAP_FAILURE, value: 1}}"));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].detector, "dcgm-row-remap");
  EXPECT_EQ(f[0].fault, "dcgm:row-remap-failure");
  std::vector<Detection> p =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_ROW_REMAP_PENDING, value: true}}"));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].detector, "dcgm-row-remap");
  EXPECT_NE(p[0].fault, "dcgm:row-remap-failure");
}

TEST(SignalDcgm, ThermalBitHeldIsDcgmThermalIdleBitIsNothing) {
  std::vector<Detection> d =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_CLOCKS_EVENT_REASONS, value: 0x40}}"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "dcgm-thermal");
  // The same mask written as a string bit mask.
  EXPECT_EQ(
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_CLOCKS_EVENT_REASONS, value: '0x40'}}")).size(),
      1u);
  EXPECT_TRUE(
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_CLOCKS_EVENT_REASONS, value: 0x1}}")).empty());
}

TEST(SignalDcgm, OldFieldNameBeforeThe3xRenamesIsAnAlias) {
  // dcgm-exporters from before DCGM 3.x send the throttle mask under its old name.
  std::vector<Detection> d =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS, value: 0x40}}"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "dcgm-thermal");
  EXPECT_EQ(canonical_dcgm_field("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS");
  EXPECT_EQ(canonical_dcgm_field("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"), "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL");
  const std::string why = refused(yaml("{dcgm: {field: DCGM_FI_DEV_NOPE, value: 1}}"));
  EXPECT_NE(why.find("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"), std::string::npos) << why;
}

TEST(SignalDcgm, PcieReplayAboveThresholdOnly) {
  std::vector<Detection> d =
      detected(yaml("{dcgm: {field: DCGM_FI_DEV_PCIE_REPLAY_COUNTER, value: 100}}"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "dcgm-pcie-replay");
  EXPECT_TRUE(detected(yaml("{dcgm: {field: DCGM_FI_DEV_PCIE_REPLAY_COUNTER, value: 5}}")).empty());
}

TEST(SignalDcgm, UnknownFieldAndBadValueAreErrorsNamingThePath) {
  const std::string e = refused(yaml("{dcgm: {field: DCGM_FI_DEV_GPU_TEMP, value: 90}}"));
  EXPECT_TRUE(e.starts_with("Signal.dcgm.field: ")) << e;
  EXPECT_NE(e.find("DCGM_FI_DEV_GPU_TEMP"), std::string::npos) << e;
  const std::string v =
      refused(yaml("{dcgm: {field: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, value: lots}}"));
  EXPECT_TRUE(v.starts_with("Signal.dcgm.value: ")) << v;
  EXPECT_TRUE(refused(yaml("{dcgm: {value: 1}}")).starts_with("Signal.dcgm.field"))
      << refused(yaml("{dcgm: {value: 1}}"));
}

// ---- mount, slurm, ib, node-wide
// --------------------------------------------------------------------

TEST(SignalMount, ReadOnlyRootIsNpdReadonlyFs) {
  std::vector<Detection> d = detected(yaml("{mount: {path: /, readOnly: true}}"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "npd-readonly-fs");
  EXPECT_EQ(d[0].subject, "/");
  EXPECT_EQ(d[0].fault, "npd-readonly-fs:ReadonlyFilesystem");
  EXPECT_TRUE(detected(yaml("{mount: {path: /, readOnly: false}}")).empty());
}

TEST(SignalMount, ReadOnlyByNatureIsNothing) {
  EXPECT_TRUE(detected(yaml("{mount: {path: /proc, readOnly: true, fstype: proc}}")).empty());
  EXPECT_TRUE(
      detected(yaml("{mount: {path: /sys/fs/cgroup, readOnly: true, fstype: tmpfs}}")).empty());
}

TEST(SignalSlurm, DrainBySomeoneElseIsSlurmNodeState) {
  std::vector<Detection> d = detected(yaml(R"({slurm: {state: DRAIN, reason: "bad gpu"}})"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "slurm-node-state");
  EXPECT_EQ(d[0].fault, "slurm:drain");
  EXPECT_NE(d[0].evidence.find("bad gpu"), std::string::npos) << d[0].evidence;
  std::vector<Detection> down = detected(yaml("{slurm: {state: DOWN}}"));
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].fault, "slurm:down");
}

TEST(SignalSlurm, OurOwnDrainIsNothing) {
  EXPECT_TRUE(
      detected(yaml(R"({slurm: {state: DRAIN, reason: "gpufleet: remediation rem-1"}})")).empty());
}

TEST(SignalSlurm, BadStateIsAnError) {
  const std::string e = refused(yaml("{slurm: {state: IDLE}}"));
  EXPECT_TRUE(e.starts_with("Signal.slurm.state: ")) << e;
  EXPECT_TRUE(refused(yaml("{slurm: {reason: x}}")).starts_with("Signal.slurm.state"));
}

TEST(SignalIb, PortDownAndSymbolErrors) {
  std::vector<Detection> down = detected(yaml("{ib: {port: 1, state: Down}}"));
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].detector, "ib-link");
  EXPECT_EQ(down[0].fault, "ib-link:port-down");
  EXPECT_EQ(down[0].subject, "port 1");
  std::vector<Detection> sym = detected(yaml("{ib: {port: 2, symbolErrorsPerHour: 500}}"));
  ASSERT_EQ(sym.size(), 1u);
  EXPECT_EQ(sym[0].fault, "ib-link:symbol-errors");
  EXPECT_EQ(sym[0].subject, "port 2");
  EXPECT_TRUE(detected(yaml("{ib: {port: 1, state: Active, symbolErrorsPerHour: 10}}")).empty());
  EXPECT_TRUE(refused(yaml("{ib: {port: 1, state: Polling}}")).starts_with("Signal.ib.state: "));
}

TEST(SignalNodeWide, UnreachableAndDiskPressure) {
  std::vector<Detection> u = detected(yaml("{unreachable: true}"));
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].detector, "host-reachability");
  EXPECT_EQ(u[0].subject, "");
  std::vector<Detection> p = detected(yaml("{diskPressure: true}"));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].detector, "disk-pressure");
  EXPECT_TRUE(detected(yaml("{unreachable: false}")).empty());
  EXPECT_TRUE(refused(yaml("{diskPressure: yes please}")).starts_with("Signal.diskPressure: "));
}

TEST(SignalNodeWide, GpuMissingIsPcieBus) {
  std::vector<Detection> d = detected(yaml(R"({gpuMissing: {index: 3, pci: "0000:b3:00.0"}})"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "pcie-bus");
  EXPECT_EQ(d[0].subject, "0000:b3:00.0");
}

TEST(SignalRestarts, FiveOrMoreIn20MinutesIsARestartLoop) {
  std::vector<Detection> d = detected(yaml("{restarts: {unit: kubelet, count: 6}}"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].detector, "npd-restart-loop");
  EXPECT_EQ(d[0].subject, "kubelet");
  EXPECT_EQ(d[0].fault, "npd-restart-loop:kubelet");
  EXPECT_EQ(detected(yaml("{restarts: {unit: containerd, count: 5}}")).size(), 1u);
  EXPECT_TRUE(detected(yaml("{restarts: {unit: kubelet, count: 3}}")).empty());
  EXPECT_TRUE(refused(yaml("{restarts: {unit: kubelet, count: -1}}"))
                  .starts_with("Signal.restarts.count: "));
}

// ---- malformed readings
// ------------------------------------------------------------------------------

TEST(SignalErrors, MalformedShapesNameThePath) {
  EXPECT_TRUE(refused(yaml("{unreachable: true, diskPressure: true}")).starts_with("Signal: "));
  EXPECT_TRUE(refused(Json(42)).starts_with("Signal: "));
  EXPECT_TRUE(refused(Json::object()).starts_with("Signal: "));
  EXPECT_TRUE(refused(Json::array()).starts_with("Signal: "));
  const std::string unknown = refused(yaml("{smart: {disk: sda}}"));
  EXPECT_TRUE(unknown.starts_with("Signal.smart: ")) << unknown;
  EXPECT_NE(unknown.find("unknown signal kind"), std::string::npos) << unknown;
  EXPECT_TRUE(refused(yaml("{mount: 5}")).starts_with("Signal.mount: "))
      << refused(yaml("{mount: 5}"));
  // A caller's own path prefix is used.
  Result<std::vector<Detection>> r =
      detect(yaml("{dcgm: {field: X, value: 1}}"), "steps[3].fault.signal");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().message().starts_with("steps[3].fault.signal.dcgm.field: "))
      << r.status().message();
}

}  // namespace
}  // namespace gf::remediate
