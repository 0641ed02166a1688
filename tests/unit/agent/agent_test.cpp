// The node agent's detector half (docs/agent.md on the rules of docs/health.md): sources are
// fixture files and commands, the GPU probe is a ScriptedProbe, the reporter records what would be
// POSTed.
#include "agent/agent.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/temp_dir.h"
#include "unit/agent/fixture_lines.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gf::agent {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const std::string& kFixtures = testing::kAgentFixtures;
const std::string& kXid79 = testing::kFixtureXid79;
const std::string& kXid48 = testing::kFixtureXid48;
const std::string& kHungTask = testing::kFixtureHungTask;
constexpr Time kT0 = kSimEpoch;

struct Sent {
  Json body;
  bool clear = false;
};

class FakeReporter final : public Reporter {
 public:
  Status report(const Json& body, bool clear) override {
    ++calls;
    if (!fail.ok()) return fail;
    sent.push_back({body, clear});
    return ok_status();
  }
  // The Signal bodies (clears left out).
  std::vector<Json> signals() const {
    std::vector<Json> out;
    for (const Sent& s : sent) {
      if (!s.clear) out.push_back(s.body.at("Signal"));
    }
    return out;
  }
  std::vector<std::string> clears() const {
    std::vector<std::string> out;
    for (const Sent& s : sent) {
      if (s.clear) out.push_back(s.body.at("Detector").get<std::string>());
    }
    return out;
  }
  void reset() { sent.clear(); }

  std::vector<Sent> sent;
  Status fail;
  int calls = 0;
};

// Every source disabled; a test turns on the one it exercises.
AgentOptions nothing() {
  AgentOptions o;
  o.server = "http://127.0.0.1:1";
  o.cluster = "hc";
  o.node = "i-0001";
  o.kernel_log = "-";
  o.proc_mounts = "-";
  o.infiniband_dir = "-";
  o.nvml = "none";
  o.disk = "-";
  o.scontrol = "";
  return o;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}
void append_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

// ---- kernel log (xid, npd patterns) ----

TEST(AgentKernelLog,
     Xid_RecognisedLinesArePostedVerbatim_GarbageAndUserSpaceLinesNeverLeaveTheNode) {
  FakeReporter r;
  AgentOptions o = nothing();
  o.kernel_log = kFixtures + "/kern.log";
  o.from_start = true;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());
  // Xid 79 appears twice within 3 minutes: one report. The user-space "NVRM: Xid" line, the
  // garbage, the "79abc" code and ordinary kernel lines are dropped.
  const std::vector<Json> got = r.signals();
  ASSERT_EQ(got.size(), 3u) << Json(got).dump(2);
  EXPECT_EQ(got[0], kXid79);
  EXPECT_EQ(got[1], kXid48);
  EXPECT_EQ(got[2], kHungTask);  // npd-kernel-deadlock (TaskHung)
  EXPECT_TRUE(r.clears().empty());
  // Nothing new: nothing sent.
  r.reset();
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  EXPECT_TRUE(r.sent.empty());
}

TEST(AgentKernelLog, Xid_IdenticalSignalsWithin3MinCountAsOne_AfterTheWindowAgain) {
  TempDir dir;
  const std::string log = dir.file("kern.log");
  write_file(log, kXid79 + "\n");
  FakeReporter r;
  AgentOptions o = nothing();
  o.kernel_log = log;
  o.from_start = true;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  append_file(log, kXid79 + "\n");
  ASSERT_TRUE(a.poll(kT0 + minutes(2)).ok());
  EXPECT_EQ(r.signals().size(), 1u) << "a repeat within 3 min is the same signal";
  append_file(log, kXid79 + "\n");
  ASSERT_TRUE(a.poll(kT0 + minutes(3)).ok());
  EXPECT_EQ(r.signals().size(), 2u) << "at the window the fault is reported again";
  // Another code on the same GPU is a different signal.
  append_file(log,
              "Nov 30 05:03:01 gpu-7 kernel: NVRM: Xid (PCI:0000:b3:00.0): 48, pid=1, name=x\n");
  ASSERT_TRUE(a.poll(kT0 + minutes(3) + seconds(10)).ok());
  EXPECT_EQ(r.signals().size(), 3u);
}

TEST(AgentKernelLog, KernelLog_StartsAtTheEnd_AppendedLinesArePickedUpOnTheNextPoll) {
  TempDir dir;
  const std::string log = dir.file("kern.log");
  write_file(log, kXid79 + "\n");  // already there when the agent starts: not re-reported
  FakeReporter r;
  AgentOptions o = nothing();
  o.kernel_log = log;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());
  EXPECT_TRUE(r.sent.empty());
  // A line still being written (no newline yet) waits for its end.
  append_file(log, kXid48.substr(0, 60));
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  EXPECT_TRUE(r.sent.empty());
  append_file(log, kXid48.substr(60) + "\n" + kHungTask + "\r\n");
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  ASSERT_EQ(r.signals().size(), 2u);
  EXPECT_EQ(r.signals()[0], kXid48);
  EXPECT_EQ(r.signals()[1], kHungTask);
  // Rotated (a new, shorter file): read from its start.
  fs::remove(log);
  write_file(log, "Nov 30 06:00:00 gpu-7 kernel: NVRM: Xid (PCI:0000:04:00): 62, pid=1\n");
  ASSERT_TRUE(a.poll(kT0 + seconds(30)).ok());
  ASSERT_EQ(r.signals().size(), 3u);
  EXPECT_NE(r.signals()[2].get<std::string>().find("): 62,"), std::string::npos);
}

TEST(AgentKernelLog, PcieBus_FallenOffTheBusSentenceIsSentAsOneText) {
  TempDir dir;
  const std::string log = dir.file("kern.log");
  write_file(log,
             "kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n"
             "kernel: usb 1-1: new device\n"
             "kernel: NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
             "kernel: NVRM: fallen off the bus and is not responding to commands.\n");
  FakeReporter r;
  AgentOptions o = nothing();
  o.kernel_log = log;
  o.from_start = true;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  const std::string text = r.signals()[0].get<std::string>();
  EXPECT_EQ(text.rfind("kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n", 0), 0u) << text;
  EXPECT_NE(text.find("fallen off the bus"), std::string::npos) << text;
  // The server parses the text with a fresh detector: it must complete the sentence on its own.
  health::FallenOffBusDetector fresh;
  std::optional<std::string> pci;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) pci = fresh.feed(line);
  EXPECT_EQ(pci, "0000:b3:00.0");
}

TEST(AgentKernelLog, MissingKernelLog_WarnsOnce_AndGoesOn) {
  FakeReporter r;
  AgentOptions o = nothing();
  o.kernel_log = "/nonexistent/kern.log";
  NodeAgent a(o, r);
  EXPECT_TRUE(a.poll(kT0).ok());
  EXPECT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_EQ(a.messages().size(), 1u);
  EXPECT_NE(a.messages()[0].find("/nonexistent/kern.log"), std::string::npos);
}

// ---- npd-readonly-fs ----

TEST(AgentMounts, ReadonlyFs_RoMountReportedOnce_ClearedWhenRemountedRw) {
  TempDir dir;
  const std::string mounts = dir.file("mounts");
  fs::copy_file(kFixtures + "/mounts_ro.txt", mounts);
  FakeReporter r;
  AgentOptions o = nothing();
  o.proc_mounts = mounts;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  // squashfs, tmpfs and errors=remount-ro do not count.
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(
      r.signals()[0],
      Json::parse(
          R"({"mount":{"path":"/scratch","readOnly":true,"fstype":"xfs","device":"/dev/nvme1n1"}})"));
  EXPECT_TRUE(r.clears().empty());
  fs::copy_file(kFixtures + "/mounts_rw.txt", mounts, fs::copy_options::overwrite_existing);
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  EXPECT_EQ(r.clears(), std::vector<std::string>{"npd-readonly-fs"});
  ASSERT_TRUE(a.poll(kT0 + seconds(30)).ok());
  EXPECT_EQ(r.sent.size(), 2u) << "cleared once";
}

// ---- ib-link ----

TEST(AgentInfiniband, IbLink_PortDownReportedOnce_ClearedWhenTheLinkIsUpAgain) {
  TempDir dir;
  const std::string ib = dir.file("ib");
  fs::copy(kFixtures + "/ib", ib, fs::copy_options::recursive);
  FakeReporter r;
  AgentOptions o = nothing();
  o.infiniband_dir = ib;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_EQ(r.signals().size(), 1u);  // mlx5_0 port 1 down; mlx5_1 port 1 active
  EXPECT_EQ(r.signals()[0], Json::parse(R"({"ib":{"port":1,"state":"Down"}})"));
  write_file(ib + "/mlx5_0/ports/1/state", "4: ACTIVE\n");
  write_file(ib + "/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  EXPECT_EQ(r.clears(), std::vector<std::string>{"ib-link"});
  // A device that vanishes leaves no files: its port reads as down.
  fs::remove_all(ib + "/mlx5_1");
  ASSERT_TRUE(a.poll(kT0 + seconds(30)).ok());
  ASSERT_EQ(r.signals().size(), 2u);
  EXPECT_EQ(r.signals()[1], Json::parse(R"({"ib":{"port":1,"state":"Down"}})"));
}

TEST(AgentInfiniband, IbLink_SymbolErrorsAbove120PerHourReportedWithTheRate) {
  TempDir dir;
  const std::string ib = dir.file("ib");
  fs::create_directories(ib);
  fs::copy(kFixtures + "/ib/mlx5_1", ib + "/mlx5_1", fs::copy_options::recursive);
  FakeReporter r;
  AgentOptions o = nothing();
  o.infiniband_dir = ib;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());  // baseline
  write_file(ib + "/mlx5_1/ports/1/counters/symbol_error", "60\n");
  ASSERT_TRUE(a.poll(kT0 + std::chrono::hours(1)).ok());
  EXPECT_TRUE(r.sent.empty()) << "60/h is below the threshold";
  write_file(ib + "/mlx5_1/ports/1/counters/symbol_error", "560\n");
  ASSERT_TRUE(a.poll(kT0 + std::chrono::hours(2)).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(r.signals()[0], Json::parse(R"({"ib":{"port":1,"symbolErrorsPerHour":500}})"));
  ASSERT_TRUE(a.poll(kT0 + std::chrono::hours(3)).ok());  // no new errors
  EXPECT_EQ(r.clears(), std::vector<std::string>{"ib-link"});
}

// ---- GPU probe (dcgm-*, pcie-bus) ----

health::GpuReading gpu(int32_t index, std::string pci) {
  health::GpuReading g;
  g.index = index;
  g.pci = std::move(pci);
  g.uuid = "GPU-0000000" + std::to_string(index);
  g.pcie_link_gen = 4;
  g.pcie_link_width = 16;
  return g;
}

TEST(AgentGpu, DcgmEcc_VolatileDbeAboveZeroReported_WithGpuAndPci) {
  health::ScriptedProbe probe;
  health::GpuReading g0 = gpu(0, "0000:18:00.0"), g1 = gpu(1, "0000:2a:00.0");
  g1.ecc_dbe_volatile = 2;
  probe.set_readings({g0, g1});
  FakeReporter r;
  NodeAgent a(nothing(), r, &probe);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(
      r.signals()[0],
      Json::parse(
          R"({"dcgm":{"field":"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL","value":2,"gpu":1,"pci":"0000:2a:00.0"}})"));
  g1.ecc_dbe_volatile = 3;  // more errors: reported again with the new value
  probe.set_reading(g1);
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  ASSERT_EQ(r.signals().size(), 2u);
  EXPECT_EQ(r.signals()[1]["dcgm"]["value"], 3);
}

TEST(AgentGpu, PcieBus_GpuSeenAtTheFirstReadThatDisappearsIsReportedMissingOnce) {
  health::ScriptedProbe probe;
  probe.set_readings({gpu(0, "0000:18:00.0"), gpu(1, "0000:2a:00.0")});
  FakeReporter r;
  NodeAgent a(nothing(), r, &probe);
  ASSERT_TRUE(a.poll(kT0).ok());
  EXPECT_TRUE(r.sent.empty());
  probe.remove(1);
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(r.signals()[0], Json::parse(R"({"gpuMissing":{"index":1,"pci":"0000:2a:00.0"}})"));
  // A probe error is never "all GPUs missing".
  probe.fail_with(unavailable_error("NVML not available: driver unloaded"));
  ASSERT_TRUE(a.poll(kT0 + seconds(30)).ok());
  EXPECT_EQ(r.signals().size(), 1u);
}

TEST(AgentGpu, DcgmRowRemap_FailureWinsOverPending) {
  health::ScriptedProbe probe;
  health::GpuReading g = gpu(0, "0000:18:00.0");
  g.row_remap_pending = true;
  g.row_remap_failure = true;
  probe.set_readings({g});
  FakeReporter r;
  NodeAgent a(nothing(), r, &probe);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(r.signals()[0]["dcgm"]["field"], "DCGM_FI_DEV_ROW_REMAP_FAILURE");
  EXPECT_EQ(r.signals()[0]["dcgm"]["value"], 1);
}

TEST(AgentGpu, DcgmThermal_SustainedMeansTwoReadingsAtLeastAMinuteApart) {
  health::ScriptedProbe probe;
  health::GpuReading g = gpu(0, "0000:18:00.0");
  g.clocks_event_reasons = health::kClocksEventHwSlowdown | health::kClocksEventGpuIdle;
  probe.set_readings({g});
  FakeReporter r;
  NodeAgent a(nothing(), r, &probe);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_TRUE(a.poll(kT0 + seconds(30)).ok());
  EXPECT_TRUE(r.sent.empty()) << "30 s is not sustained";
  ASSERT_TRUE(a.poll(kT0 + seconds(60)).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(
      r.signals()[0],
      Json::parse(
          R"({"dcgm":{"field":"DCGM_FI_DEV_CLOCKS_EVENT_REASONS","value":8,"gpu":0,"pci":"0000:18:00.0"}})"));
}

TEST(AgentGpu, DcgmPcieReplay_RateAboveThresholdReportedAsReplaysPerMinute) {
  health::ScriptedProbe probe;
  health::GpuReading g = gpu(0, "0000:18:00.0");
  probe.set_readings({g});
  FakeReporter r;
  NodeAgent a(nothing(), r, &probe);
  ASSERT_TRUE(a.poll(kT0).ok());
  g.pcie_replay_counter = 10;  // 10/min on Gen4 x16: below 16
  probe.set_reading(g);
  ASSERT_TRUE(a.poll(kT0 + minutes(1)).ok());
  EXPECT_TRUE(r.sent.empty());
  g.pcie_replay_counter = 10 + 2 * 40;  // 40/min over two minutes
  probe.set_reading(g);
  ASSERT_TRUE(a.poll(kT0 + minutes(3)).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(r.signals()[0],
            Json::parse(R"({"dcgm":{"field":"DCGM_FI_DEV_PCIE_REPLAY_COUNTER","value":40,"gpu":0,)"
                        R"("pci":"0000:18:00.0","linkGen":4}})"));
}

TEST(AgentGpu, Nvml_MissingLibraryIsNotAvailable_SaidOnce_NoCrash) {
  FakeReporter r;
  AgentOptions o = nothing();
  o.nvml = "/nonexistent/libnvidia-ml.so.1";
  NodeAgent a(o, r);
  EXPECT_TRUE(a.poll(kT0).ok());
  EXPECT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_EQ(a.messages().size(), 1u);
  EXPECT_EQ(a.messages()[0].rfind("NVML not available: ", 0), 0u) << a.messages()[0];
  EXPECT_NE(a.messages()[0].find("/nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << a.messages()[0];
  EXPECT_TRUE(r.sent.empty());
}

// ---- disk-pressure ----

TEST(AgentDisk, DiskPressure_LessThan10PercentAvailableReported_ClearedWhenFreed) {
  FakeReporter r;
  AgentOptions o = nothing();
  o.disk = "/data";
  NodeAgent a(o, r);
  DiskUsage usage{95, 100};
  std::string asked;
  a.set_disk_stat([&](const std::string& path) -> Result<DiskUsage> {
    asked = path;
    return usage;
  });
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  EXPECT_EQ(asked, "/data");
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(r.signals()[0], Json::parse(R"({"diskPressure":true})"));
  usage = {50, 100};
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  EXPECT_EQ(r.clears(), std::vector<std::string>{"disk-pressure"});
}

TEST(AgentDisk, DiskPressure_StatvfsOfARealPathWorks) {
  Result<DiskUsage> u = statvfs_usage("/");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_GT(u->total, 0u);
  EXPECT_LE(u->used, u->total);
  EXPECT_FALSE(statvfs_usage("/nonexistent/dir").ok());
}

// ---- slurm-node-state ----

TEST(AgentSlurm, SlurmNodeState_DrainSetBySomeoneElseReported_OurOwnDrainIsNot_ClearedWhenBack) {
  TempDir dir;
  const std::string out = dir.file("scontrol.txt");
  fs::copy_file(kFixtures + "/scontrol_drain.txt", out);
  FakeReporter r;
  AgentOptions o = nothing();
  o.scontrol = "cat " + out;
  NodeAgent a(o, r);
  ASSERT_TRUE(a.poll(kT0).ok());
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_EQ(r.signals().size(), 1u);
  EXPECT_EQ(r.signals()[0],
            Json::parse(R"({"slurm":{"state":"DRAIN","reason":"NHC: check_hw_ib failed"}})"));
  // gpufleet's own drain reason: not a fault, the foreign one is gone.
  fs::copy_file(kFixtures + "/scontrol_ours.txt", out, fs::copy_options::overwrite_existing);
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  EXPECT_EQ(r.clears(), std::vector<std::string>{"slurm-node-state"});
  fs::copy_file(kFixtures + "/scontrol_idle.txt", out, fs::copy_options::overwrite_existing);
  ASSERT_TRUE(a.poll(kT0 + seconds(30)).ok());
  EXPECT_EQ(r.sent.size(), 2u);
}

TEST(AgentSlurm, SlurmNodeState_ParsesStateAndReasonOfOneLineOutput) {
  auto s = parse_scontrol_node(
      "NodeName=n1 State=DOWN* ThreadsPerCore=2 Reason=Not responding [slurm@2026-01-01T00:00:00] "
      "Comment=x");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, "DOWN*");
  EXPECT_EQ(s->reason, "Not responding");
  s = parse_scontrol_node("NodeName=n1 State=MIXED ThreadsPerCore=2");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->reason, "");
  EXPECT_FALSE(parse_scontrol_node("slurm_load_node error: Invalid node name specified"));
  EXPECT_FALSE(parse_scontrol_node(""));
}

TEST(AgentSlurm, SlurmNodeState_FailingCommandWarnsOnce) {
  FakeReporter r;
  AgentOptions o = nothing();
  o.scontrol = "exit 3";
  NodeAgent a(o, r);
  EXPECT_TRUE(a.poll(kT0).ok());
  EXPECT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_EQ(a.messages().size(), 1u);
  EXPECT_NE(a.messages()[0].find("status 3"), std::string::npos) << a.messages()[0];
}

// ---- delivery ----

TEST(AgentDelivery, ServerDown_SignalsAreKeptAndSentInOrderNextInterval) {
  TempDir dir;
  const std::string log = dir.file("kern.log");
  write_file(log, kXid79 + "\n" + kXid48 + "\n");
  FakeReporter r;
  r.fail = unavailable_error("cannot reach gpufleet");
  AgentOptions o = nothing();
  o.kernel_log = log;
  o.from_start = true;
  NodeAgent a(o, r);
  EXPECT_EQ(a.poll(kT0).code(), ErrorCode::kUnavailable);
  EXPECT_EQ(a.queued(), 2u);
  append_file(log, kHungTask + "\n");
  EXPECT_FALSE(a.poll(kT0 + seconds(10)).ok());
  EXPECT_EQ(a.queued(), 3u);
  EXPECT_EQ(a.messages().size(), 1u) << "the outage is said once";
  r.fail = ok_status();
  ASSERT_TRUE(a.poll(kT0 + seconds(20)).ok());
  EXPECT_EQ(a.queued(), 0u);
  ASSERT_EQ(r.signals().size(), 3u);
  EXPECT_EQ(r.signals()[0], kXid79);
  EXPECT_EQ(r.signals()[1], kXid48);
  EXPECT_EQ(r.signals()[2], kHungTask);
}

TEST(AgentDelivery, QueueIsBounded_OldestDroppedWithAWarning) {
  FakeReporter r;
  r.fail = unavailable_error("down");
  AgentOptions o = nothing();
  o.kernel_log = kFixtures + "/kern.log";
  o.from_start = true;
  o.max_queue = 2;
  NodeAgent a(o, r);
  EXPECT_FALSE(a.poll(kT0).ok());
  EXPECT_EQ(a.queued(), 2u);
  EXPECT_EQ(a.dropped(), 1);
  bool warned = false;
  for (const std::string& m : a.messages())
    warned |= m.find("dropped the oldest") != std::string::npos;
  EXPECT_TRUE(warned);
  r.fail = ok_status();
  ASSERT_TRUE(a.poll(kT0 + seconds(10)).ok());
  ASSERT_EQ(r.signals().size(), 2u);
  EXPECT_EQ(r.signals()[0], kXid48);  // the Xid 79 was the oldest
}

TEST(AgentDelivery, ServerRefusal_IsLoggedAndDropped_TheAgentGoesOn) {
  FakeReporter r;
  r.fail = validation_error("node 'i-0001' not found");
  AgentOptions o = nothing();
  o.kernel_log = kFixtures + "/kern.log";
  o.from_start = true;
  NodeAgent a(o, r);
  const Status s = a.poll(kT0);
  EXPECT_EQ(s.code(), ErrorCode::kValidation);
  EXPECT_EQ(a.queued(), 0u);
  EXPECT_EQ(a.refused(), 3);
  EXPECT_EQ(r.calls, 3) << "one refusal does not stop the others";
}

TEST(AgentDelivery, HttpReporter_UnreachableServerIsUnavailable) {
  HttpReporter rep("http://127.0.0.1:1", "hc", "i-0001", 1);
  const Status s = rep.report(Json{{"Signal", kXid79}}, false);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.message();
}

}  // namespace
}  // namespace gf::agent
