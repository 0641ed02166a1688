#include "model/fault_classes.h"

#include <array>

#include "model/alerts.h"

namespace gf::health {

std::string_view to_string(JobEffect e) {
  switch (e) {
    case JobEffect::kFatal:
      return "fatal";
    case JobEffect::kHang:
      return "hang";
    case JobEffect::kDegraded:
      return "degraded";
    case JobEffect::kNone:
      break;
  }
  return "none";
}

std::optional<JobEffect> parse_job_effect(std::string_view s) {
  for (JobEffect e : {JobEffect::kNone, JobEffect::kFatal, JobEffect::kHang, JobEffect::kDegraded})
    if (to_string(e) == s) return e;
  return std::nullopt;
}

namespace {

struct Row {
  std::string_view key;  // a fault ("xid:79") or a detector name ("ib-link")
  FaultClass cls;
};

using E = JobEffect;

// docs/remediation.md "Defaults by fault class" lists the same rows with their sources.
constexpr std::array<Row, 17> kRows{{
    {"xid:79",
     {E::kFatal, "migrate", 0.68,
      "GPU fallen off the bus: every process on it fails; Crusoe GTC25: 68 % of GPU faults needed "
      "a host replacement, 32 % recovered"}},
    {"xid:48",
     {E::kFatal, "", 0,
      "double-bit ECC: the rank using the memory dies; Delta: a reset's row remap mitigates "
      "71-92 %",
      1, "migrate"}},
    {"xid:95",
     {E::kFatal, "", 0, "uncontained SRAM ECC: all work on the GPU is lost; RESET_GPU", 1,
      "migrate"}},
    {"xid:119",
     {E::kFatal, "", 0, "GSP timeout: the GPU enters an error state; Delta: a node reboot"}},
    {"xid:64",
     {E::kFatal, "migrate", 1.0, "row remap failure: the bank has no spare rows; replace"}},
    {"xid:74",
     {E::kHang, "", 0,
      "NVLink error: stalled collectives until the NCCL watchdog; Llama 3 section 3.3.4", 1,
      "migrate"}},
    {"xid",
     {E::kFatal, "", 0, "Xid codes that need a GPU reset: the GPU's processes are terminated", 1,
      "migrate"}},
    {"pcie-bus", {E::kFatal, "migrate", 0.68, "PCIe bus drop: as Xid 79"}},
    {"dcgm-ecc",
     {E::kFatal, "migrate", 1.0,
      "an uncorrectable error the job's numbers cannot be trusted after (silent data corruption "
      "found): the device is replaced; a reboot does not fix it"}},
    {"dcgm-row-remap", {E::kFatal, "", 0, "double-bit ECC pending a row remap", 1, "migrate"}},
    {"dcgm-thermal",
     {E::kDegraded, "migrate", 1.0,
      "thermal slowdown: the gang runs at the throttled GPU's speed (GREYHOUND: 20 % slower); "
      "thermal interface or sensor hardware, which only other hardware fixes (Together migrates "
      "at once)",
      1.2}},
    {"npd-readonly-fs", {E::kFatal, "", 0, "read-only filesystem: checkpoint writes fail"}},
    {"npd-xfs-hang", {E::kHang, "", 0, "hung tasks: the job stalls until its watchdog"}},
    {"npd-kernel-deadlock", {E::kHang, "", 0, "kernel deadlock: the job stalls"}},
    {"npd-restart-loop", {E::kFatal, "", 0, "kubelet/containerd/slurmd restart loop"}},
    {"ib-link:port-down",
     {E::kFatal, "migrate", 0.86,
      "InfiniBand port down: NCCL's transport retries end in an error (about 30 s at NCCL's "
      "defaults); Crusoe GTC25: 14 % of InfiniBand faults recovered in place, 36 % needed "
      "hardware, 50 % were on the fabric side, which other hardware sidesteps"}},
    {"host-reachability",
     {E::kFatal, "migrate", 1.0,
      "host unreachable: its ranks are gone; Llama 3: unplanned host maintenance and host "
      "hardware (48 of 419), which the job survives only on other hardware"}},
}};

}  // namespace

FaultClass fault_class(std::string_view detector, std::string_view fault) {
  for (const Row& r : kRows)
    if (r.key == fault) return r.cls;
  // Only the Xid codes that take the detector's action (application errors and record-only
  // codes stop at most the process that caused them, and nothing is done to the node).
  if (detector == "xid" && classify(detector, fault).action != kActionReboot) return FaultClass{};
  for (const Row& r : kRows)
    if (r.key == detector) return r.cls;
  return FaultClass{};
}

}  // namespace gf::health
