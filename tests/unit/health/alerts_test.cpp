// Alerts (docs/health.md; seed 003): the detector table. The pending → firing → resolved state
// machine is journaled state: tests/unit/state/alert_state_test.cpp.
#include "model/alerts.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace gf::health {
namespace {

// ---- table ----

TEST(AlertTable, EveryDetectorOfSpecHasARule) {
  const std::vector<std::string> spec = {"xid",
                                         "pcie-bus",
                                         "dcgm-ecc",
                                         "dcgm-row-remap",
                                         "dcgm-pcie-replay",
                                         "dcgm-thermal",
                                         "npd-readonly-fs",
                                         "npd-xfs-hang",
                                         "npd-kernel-deadlock",
                                         "npd-restart-loop",
                                         "slurm-node-state",
                                         "ib-link",
                                         "host-reachability",
                                         "disk-pressure"};
  EXPECT_EQ(detector_rules().size(), spec.size());
  std::set<std::string> seen;
  for (const std::string& d : spec) {
    const DetectorRule* r = detector_rule(d);
    ASSERT_NE(r, nullptr) << d;
    EXPECT_EQ(r->detector, d);
    EXPECT_EQ(r->persistence, minutes(5)) << d;  // docs/health.md: default persistence window 5 min
    EXPECT_FALSE(r->action.empty()) << d;
    EXPECT_FALSE(r->source.empty()) << d;
    seen.insert(d);
  }
  EXPECT_EQ(seen.size(), spec.size());
}

TEST(AlertTable, RowsMatchTheSpecMapping) {
  struct Row {
    const char* detector;
    Severity severity;
    std::string_view action;
  };
  const Row rows[] = {
      {"xid", Severity::kCritical, kActionReboot},
      {"pcie-bus", Severity::kCritical, kActionReboot},
      {"dcgm-ecc", Severity::kCritical, kActionReboot},
      {"dcgm-row-remap", Severity::kCritical, kActionReboot},
      {"dcgm-pcie-replay", Severity::kWarning, kActionReprovision},
      {"dcgm-thermal", Severity::kWarning, kActionMigrate},
      {"npd-readonly-fs", Severity::kCritical, kActionReprovision},
      {"npd-xfs-hang", Severity::kCritical, kActionReboot},
      {"npd-kernel-deadlock", Severity::kCritical, kActionReboot},
      {"npd-restart-loop", Severity::kCritical, kActionReboot},
      {"slurm-node-state", Severity::kWarning, kActionMigrate},
      {"ib-link", Severity::kCritical, kActionReboot},
      {"host-reachability", Severity::kCritical, kActionReboot},
      {"disk-pressure", Severity::kWarning, kActionRecordOnly},
  };
  for (const Row& row : rows) {
    const DetectorRule* r = detector_rule(row.detector);
    ASSERT_NE(r, nullptr) << row.detector;
    EXPECT_EQ(r->severity, row.severity) << row.detector;
    EXPECT_EQ(r->action, row.action) << row.detector;
    EXPECT_EQ(r->approval_required, std::string_view(row.detector) == "slurm-node-state");
  }
}

TEST(AlertTable, DiskPressureIsRecordOnly) {
  const DetectorRule* r = detector_rule("disk-pressure");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->action, kActionRecordOnly);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_EQ(classify("disk-pressure", "disk-pressure:nodefs").action, kActionRecordOnly);
}

TEST(AlertTable, UnknownDetectorHasNoRule) {
  EXPECT_EQ(detector_rule("my-custom-check"), nullptr);
  EXPECT_EQ(detector_rule(""), nullptr);
  EXPECT_EQ(detector_rule("XID"), nullptr);
  const AlertClass c = classify("my-custom-check", "x:1");
  EXPECT_EQ(c.action, kActionSupport);
  EXPECT_EQ(c.persistence, minutes(5));
}

TEST(AlertTable, XidCodesFollowTheSpecRows) {
  for (int code : {46, 62, 64, 95, 109, 119, 120, 140, 143, 48, 74, 79}) {
    const AlertClass c = classify("xid", "xid:" + std::to_string(code));
    EXPECT_EQ(c.action, kActionReboot) << code;
    EXPECT_EQ(c.severity, Severity::kCritical) << code;
  }
  for (int code : {13, 31, 43, 45, 68, 69, 63, 92, 94}) {
    const AlertClass c = classify("xid", "xid:" + std::to_string(code));
    EXPECT_EQ(c.action, kActionRecordOnly) << code;
    EXPECT_EQ(c.severity, Severity::kInfo) << code;
  }
  EXPECT_EQ(classify("xid", "xid:154").action, kActionDriverRecovery);
  EXPECT_EQ(classify("xid", "xid:999").action, kActionSupport);  // no row: support
  EXPECT_EQ(classify("xid", "xid:7x").action, kActionSupport);
  EXPECT_EQ(classify("xid", "garbage").action, kActionSupport);
}

TEST(AlertTable, FaultRowsOverrideTheDetectorDefault) {
  EXPECT_EQ(classify("dcgm-row-remap", "dcgm:row-remap-pending").action, kActionReboot);
  EXPECT_EQ(classify("dcgm-row-remap", "dcgm:row-remap-failure").action, kActionMigrate);
  EXPECT_EQ(classify("dcgm-row-remap", "dcgm:row-remap-failure").severity, Severity::kCritical);
  EXPECT_EQ(classify("ib-link", "ib-link:down").action, kActionReboot);
  EXPECT_EQ(classify("ib-link", "ib-link:symbol-errors").severity, Severity::kWarning);
  EXPECT_TRUE(classify("slurm-node-state", "slurm:drain").approval_required);
}

}  // namespace
}  // namespace gf::health
