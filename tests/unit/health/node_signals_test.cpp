// Node-level detectors (docs/health.md): npd-readonly-fs, npd-xfs-hang, npd-kernel-deadlock,
// npd-restart-loop, ib-link, host-reachability, disk-pressure. Real-format samples, garbage,
// boundaries. Times are parameters: nothing sleeps.
#include "health/node_signals.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gf::health {
namespace {

using namespace std::string_view_literals;

const Time t0 = kSimEpoch;

// ---- npd-readonly-fs ----

TEST(NodeSignalReadonlyFs, RemountedRootAndDataDiskAreReportedPseudoAndImageFsAreNot) {
  const std::string mounts =
      "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
      "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
      "/dev/nvme0n1p1 / ext4 ro,relatime,errors=remount-ro 0 0\n"
      "tmpfs /sys/fs/cgroup tmpfs ro,nosuid,nodev,noexec,mode=755 0 0\n"
      "cgroup2 /sys/fs/cgroup/unified cgroup2 ro,nosuid,nodev,noexec,relatime 0 0\n"
      "/dev/loop0 /snap/core20/1828 squashfs ro,nodev,relatime 0 0\n"
      "/dev/sr0 /media/cdrom iso9660 ro,nosuid,nodev 0 0\n"
      "overlay /var/lib/docker/overlay2/x/merged overlay ro,relatime,lowerdir=/a 0 0\n"
      "/dev/md0 /raid xfs rw,noatime,attr2,inode64 0 0\n"
      "/dev/nvme1n1 /mnt/local\\040disk xfs ro,noatime 0 0\n";
  const std::vector<ReadOnlyMount> ro = readonly_mounts(mounts);
  ASSERT_EQ(ro.size(), 2u);
  EXPECT_EQ(ro[0], (ReadOnlyMount{"/dev/nvme0n1p1", "/", "ext4", "ro,relatime,errors=remount-ro"}));
  EXPECT_EQ(ro[1].mount_point, "/mnt/local disk");
  EXPECT_EQ(ro[1].fstype, "xfs");
}

TEST(NodeSignalReadonlyFs, RoMustBeAWholeOption) {
  EXPECT_TRUE(readonly_mounts("/dev/sda1 / ext4 rw,errors=remount-ro 0 0\n").empty());
  EXPECT_TRUE(readonly_mounts("/dev/sda1 /x ext4 rw,rootcontext=ro 0 0\n").empty());
  EXPECT_TRUE(readonly_mounts("/dev/sda1 /x ext4 rox 0 0\n").empty());
  EXPECT_EQ(readonly_mounts("/dev/sda1 /x ext4 relatime,ro 0 0\n").size(), 1u);
  EXPECT_EQ(readonly_mounts("/dev/sda1 /x ext4 ro").size(), 1u);  // no dump/pass, no newline
}

TEST(NodeSignalReadonlyFs, OctalEscapesInMountPointsAreDecoded) {
  const auto ro = readonly_mounts(
      "/dev/sdb1 /data\\040set\\011a\\134b\\012c ext4 ro 0 0\n"
      "/dev/sdc1 /bad\\9\\04 ext4 ro 0 0\r\n");
  ASSERT_EQ(ro.size(), 2u);
  EXPECT_EQ(ro[0].mount_point, "/data set\ta\\b\nc");
  EXPECT_EQ(ro[1].mount_point, "/bad\\9\\04");  // not three octal digits: kept as is
  EXPECT_EQ(ro[1].options, "ro");
}

TEST(NodeSignalReadonlyFs, GarbageLinesAreSkipped) {
  const std::string nul = std::string("/dev/sda1 / ext4 ro") + '\0' + " 0 0\n";
  EXPECT_TRUE(readonly_mounts(nul).empty());
  EXPECT_TRUE(readonly_mounts("").empty());
  EXPECT_TRUE(readonly_mounts("\n\n   \n").empty());
  EXPECT_TRUE(readonly_mounts("/dev/sda1 / ro\n").empty());  // three fields
  std::string long_device(5000, 'x');
  long_device.append(" / ext4 ro\n");
  EXPECT_TRUE(readonly_mounts(long_device).empty());
  EXPECT_EQ(readonly_mounts("garbage\n/dev/sda1 / ext4 ro 0 0\n\\\\\\ \\").size(), 1u);
}

TEST(NodeSignalReadonlyFs, ReadOnlyByNatureTypes) {
  for (auto t : {"squashfs"sv, "iso9660"sv, "proc"sv, "sysfs"sv, "tmpfs"sv, "overlay"sv,
                 "cgroup2"sv, "erofs"sv}) {
    EXPECT_TRUE(readonly_by_nature(t)) << t;
  }
  for (auto t : {"ext4"sv, "xfs"sv, "btrfs"sv, "nfs4"sv, "lustre"sv, ""sv}) {
    EXPECT_FALSE(readonly_by_nature(t)) << t;
  }
}

TEST(NpdKernelPattern, RemountReadOnlyLineFeedsReadonlyFs) {
  auto p = match_kernel_pattern(
      "Nov 30 05:00:00 gpu-7 kernel: [   88.123456] EXT4-fs (nvme0n1p1): Remounting filesystem "
      "read-only");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorReadonlyFs);
  EXPECT_EQ(p->reason, "ReadonlyFilesystem");
  EXPECT_EQ(p->message, "EXT4-fs (nvme0n1p1): Remounting filesystem read-only");
}

// ---- npd-xfs-hang / npd-kernel-deadlock ----

TEST(NpdKernelPattern, HungTaskIsKernelDeadlockWithTaskAndPid) {
  auto p = match_kernel_pattern(
      "[ 7261.123456] INFO: task python:1234 blocked for more than 120 seconds.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorKernelDeadlock);
  EXPECT_EQ(p->reason, "TaskHung");
  EXPECT_EQ(p->task, "python");
  EXPECT_EQ(p->pid, 1234);
  EXPECT_EQ(p->message, "INFO: task python:1234 blocked for more than 120 seconds.");

  p = match_kernel_pattern("task kworker/u16:2:4711 blocked for more than 241 seconds.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->task, "kworker/u16:2");
  EXPECT_EQ(p->pid, 4711);

  p = match_kernel_pattern("<3>INFO: task pt_main thread:99 blocked for more than 122 seconds");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->task, "pt_main thread");
}

TEST(NpdKernelPattern, HungDockerIsDockerHungAndHungXfsTaskIsXfsHang) {
  auto p = match_kernel_pattern("INFO: task docker:20744 blocked for more than 120 seconds.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorKernelDeadlock);
  EXPECT_EQ(p->reason, "DockerHung");
  p = match_kernel_pattern(
      "kernel: INFO: task xfsaild/sda1:512 blocked for more than 120 seconds.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorXfsHang);
  EXPECT_EQ(p->reason, "TaskHung");
  EXPECT_EQ(p->task, "xfsaild/sda1");
}

TEST(NpdKernelPattern, XfsShutdownMetadataErrorAndLogForce) {
  auto p = match_kernel_pattern(
      "[  100.500000] XFS (dm-0): Log I/O Error Detected. Shutting down filesystem");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorXfsHang);
  EXPECT_EQ(p->reason, "XfsShutdown");
  p = match_kernel_pattern(
      "XFS (sdb1): metadata I/O error in \"xfs_trans_read_buf_map\" at daddr 0x2 len 1 error 5");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, "XfsMetadataIoError");
  p = match_kernel_pattern("Nov 30 05:00:00 gpu-7 kernel: xfs_log_force: error -5 returned.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorXfsHang);
  EXPECT_EQ(p->reason, "XfsLogForceError");
  p = match_kernel_pattern("XFS (sda1): xfs_log_force: error -5 returned.");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, "XfsLogForceError");
}

TEST(NpdKernelPattern, SoftAndHardLockupAreKernelDeadlock) {
  auto p = match_kernel_pattern(
      "[    5.000000] watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [python:1234]");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorKernelDeadlock);
  EXPECT_EQ(p->reason, "SoftLockup");
  EXPECT_EQ(p->task, "python");
  EXPECT_EQ(p->pid, 1234);
  p = match_kernel_pattern(
      "NMI watchdog: BUG: soft lockup - CPU#12 stuck for 23s! [kworker/12:1:88]");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->task, "kworker/12:1");
  p = match_kernel_pattern("NMI watchdog: Watchdog detected hard LOCKUP on cpu 5");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->reason, "HardLockup");
  p = match_kernel_pattern("watchdog: Watchdog detected hard LOCKUP on cpu 17");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->detector, kDetectorKernelDeadlock);
}

TEST(NpdKernelPattern, GarbageAndNearMissesAreNullopt) {
  for (auto line :
       {""sv, "   "sv, "hello"sv, "task"sv, "task python:1234 blocked for more than"sv,
        "task python:1234 blocked for more than 120 seconds. extra"sv,
        "task python blocked for more than 120 seconds."sv,
        "task :1 blocked for more than 120 seconds."sv,
        "task python:abc blocked for more than 120 seconds."sv,
        "task python:1 blocked for more than x seconds."sv, "XFS (: "sv, "XFS ()"sv,
        "XFS (sda): all good"sv, "xfs_log_force: error -"sv, "BUG: soft lockup - CPU#"sv,
        "Watchdog detected hard LOCKUP on cpu x"sv, "NVRM: Xid (PCI:0000:18:00): 79, pid=1"sv,
        "Nov 30 05:00:00 gpu-7 logger: INFO: task python:1 blocked for more than 120 seconds."sv}) {
    EXPECT_EQ(match_kernel_pattern(line), std::nullopt) << line;
  }
  EXPECT_EQ(match_kernel_pattern(std::string("task a:1 blocked for more than 1 seconds.") + '\0'),
            std::nullopt);
  EXPECT_EQ(match_kernel_pattern(std::string(5000, 'A')), std::nullopt);
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  EXPECT_EQ(match_kernel_pattern(bytes), std::nullopt);
}

// ---- npd-restart-loop ----

TEST(RestartLoopFiveRestartsIn20Min, ExactlyFiveFiresFourDoesNot) {
  RestartLoopCounter c;
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(c.record("kubelet", t0 + minutes(5) * i)) << i;
  EXPECT_TRUE(c.record("kubelet", t0 + minutes(20)));  // first and fifth exactly 20 min apart
  EXPECT_TRUE(c.record("kubelet", t0 + minutes(21)));  // still five within the last 20 min
}

TEST(RestartLoopFiveRestartsIn20Min, FiveSpreadOverMoreThan20MinDoNotFire) {
  RestartLoopCounter c;
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(c.record("containerd", t0 + minutes(5) * i));
  EXPECT_FALSE(c.record("containerd", t0 + minutes(20) + seconds(1)));
}

TEST(RestartLoopFiveRestartsIn20Min, WindowSlides) {
  RestartLoopCounter c;
  for (int i = 0; i < 4; ++i) c.record("slurmd", t0 + minutes(i));
  EXPECT_TRUE(c.record("slurmd", t0 + minutes(4)));
  // Restarts at 1..4 and 22 min: the one at 1 min is 21 min old.
  EXPECT_FALSE(c.record("slurmd", t0 + minutes(22)));
  EXPECT_FALSE(c.record("slurmd", t0 + minutes(23)));
  EXPECT_FALSE(c.record("slurmd", t0 + minutes(24)));
  EXPECT_FALSE(c.record("slurmd", t0 + minutes(25)));  // 4 min restart is 21 min old
  EXPECT_TRUE(c.record("slurmd", t0 + minutes(26)));   // 22..26
}

TEST(RestartLoopFiveRestartsIn20Min, UnitsAreCountedSeparatelyAndMemoryIsBounded) {
  RestartLoopCounter c(3);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(c.record("kubelet", t0 + seconds(i)));
    EXPECT_FALSE(c.record("containerd", t0 + seconds(i)));
  }
  EXPECT_TRUE(c.record("kubelet", t0 + seconds(10)));
  for (int i = 0; i < 10; ++i) c.record("unit" + std::to_string(i), t0 + seconds(20 + i));
  EXPECT_LE(c.units(), 3u);
  // Everything leaves the window: the next call forgets it.
  EXPECT_FALSE(c.record("other", t0 + hours(1)));
  EXPECT_EQ(c.units(), 1u);
}

TEST(RestartLoopFiveRestartsIn20Min, OutOfOrderTimesCountAsThePreviousRestart) {
  RestartLoopCounter c;
  c.record("kubelet", t0 + minutes(10));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(c.record("kubelet", t0));
  EXPECT_TRUE(c.record("kubelet", t0));
}

// ---- ib-link ----

TEST(IbLinkPortDown, SysfsStateFilesAreParsed) {
  IbPortReading r = parse_ib_port("4: ACTIVE\n", "5: LinkUp\n");
  EXPECT_EQ(r.state, 4);
  EXPECT_EQ(r.state_name, "ACTIVE");
  EXPECT_EQ(r.phys_state, 5);
  EXPECT_EQ(r.phys_state_name, "LinkUp");
  EXPECT_TRUE(r.up());
  EXPECT_EQ(ib_link_verdict(r, 0.0), IbLinkVerdict::kHealthy);

  r = parse_ib_port("1: DOWN\n", "3: Disabled\n");
  EXPECT_FALSE(r.up());
  EXPECT_EQ(ib_link_verdict(r, std::nullopt), IbLinkVerdict::kPortDown);
  r = parse_ib_port("2: INIT\n", "5: LinkUp\n");  // SM has not brought it up
  EXPECT_EQ(ib_link_verdict(r, std::nullopt), IbLinkVerdict::kPortDown);
  r = parse_ib_port("4: ACTIVE\n", "7: Phy Test\n");
  EXPECT_EQ(r.phys_state_name, "Phy Test");
  EXPECT_EQ(to_string(ib_link_verdict(r, std::nullopt)), "port-down");
}

TEST(IbLinkPortDown, MissingOrGarbageFilesCountAsDown) {
  for (auto s : {""sv, "ACTIVE"sv, "4"sv, "4:"sv, "x: ACTIVE"sv, "999: ACTIVE"sv}) {
    IbPortReading r = parse_ib_port(s, "5: LinkUp");
    EXPECT_EQ(r.state, std::nullopt) << s;
    EXPECT_EQ(ib_link_verdict(r, 0.0), IbLinkVerdict::kPortDown) << s;
  }
}

TEST(IbSymbolErrorsAbove120PerHour, RateBetweenObservations) {
  IbSymbolErrorRate rate;
  EXPECT_EQ(rate.observe(1000, t0), std::nullopt);  // baseline
  EXPECT_DOUBLE_EQ(*rate.observe(1030, t0 + minutes(15)), 120.0);
  const IbPortReading up = parse_ib_port("4: ACTIVE", "5: LinkUp");
  EXPECT_EQ(ib_link_verdict(up, 120.0), IbLinkVerdict::kHealthy);  // > 120/h, not >=
  EXPECT_DOUBLE_EQ(*rate.observe(1061, t0 + minutes(30)), 124.0);
  EXPECT_EQ(ib_link_verdict(up, 124.0), IbLinkVerdict::kSymbolErrors);
  EXPECT_EQ(to_string(IbLinkVerdict::kSymbolErrors), "symbol-errors");
  // Port down wins over the rate.
  EXPECT_EQ(ib_link_verdict(parse_ib_port("1: DOWN", "2: Polling"), 1e6), IbLinkVerdict::kPortDown);
}

TEST(IbSymbolErrorsAbove120PerHour, CounterResetAndNonAdvancingTime) {
  IbSymbolErrorRate rate;
  rate.observe(50000, t0);
  EXPECT_EQ(rate.observe(50010, t0), std::nullopt);               // no time passed
  EXPECT_EQ(rate.observe(50010, t0 - seconds(5)), std::nullopt);  // time went back
  EXPECT_DOUBLE_EQ(*rate.observe(50000, t0 + hours(1)), 0.0);     // baseline kept at t0
  EXPECT_DOUBLE_EQ(*rate.observe(10, t0 + hours(2)), 10.0);       // reset: 10 since reset
  EXPECT_DOUBLE_EQ(*rate.observe(20, t0 + hours(3)), 10.0);
}

// ---- host-reachability ----

TEST(HeartbeatThreeMissed, MissedAfterThreeIntervals) {
  HeartbeatTracker h(seconds(10));
  EXPECT_FALSE(h.missed(t0 + hours(1)));  // never beat: registration's business
  h.beat(t0);
  EXPECT_FALSE(h.missed(t0 + seconds(29)));
  EXPECT_FALSE(h.missed(t0 + seconds(30)));  // third beat only just due
  EXPECT_TRUE(h.missed(t0 + seconds(30) + Duration(1)));
  h.beat(t0 + seconds(31));
  EXPECT_FALSE(h.missed(t0 + seconds(40)));
  h.beat(t0 + seconds(1));  // stale beat ignored
  EXPECT_EQ(h.last_beat(), t0 + seconds(31));
  EXPECT_TRUE(h.missed(t0 + seconds(62)));
}

TEST(HeartbeatThreeMissed, DefaultIntervalIsTenSeconds) {
  HeartbeatTracker h;
  h.beat(t0);
  EXPECT_FALSE(h.missed(t0 + seconds(30)));
  EXPECT_TRUE(h.missed(t0 + seconds(31)));
}

// ---- disk-pressure ----

TEST(DiskPressureBelowTenPercentAvailable, Boundaries) {
  EXPECT_FALSE(disk_pressure(90, 100));  // exactly 10 % available
  EXPECT_TRUE(disk_pressure(91, 100));
  EXPECT_FALSE(disk_pressure(0, 100));
  EXPECT_TRUE(disk_pressure(100, 100));
  EXPECT_TRUE(disk_pressure(200, 100));  // over-full counts as full
  EXPECT_FALSE(disk_pressure(0, 0));     // unknown size
  EXPECT_FALSE(disk_pressure(899, 1000));
  EXPECT_FALSE(disk_pressure(900, 1000));
  EXPECT_TRUE(disk_pressure(901, 1000));
  const uint64_t big = UINT64_MAX;
  EXPECT_FALSE(disk_pressure(big - big / 10 - 1, big));  // no overflow near the top
  EXPECT_TRUE(disk_pressure(big - big / 10, big));
}

}  // namespace
}  // namespace gf::health
