// The fault-class table (docs/remediation.md "Defaults by fault class"): what each fault does to
// the job on its node, and the repair that usually fixes it.
#include "model/fault_classes.h"

#include <gtest/gtest.h>

namespace gf::health {
namespace {

TEST(FaultClasses, Xid79StopsTheJobAndUsuallyNeedsNewHardware) {
  const FaultClass c = fault_class("xid", "xid:79");
  EXPECT_EQ(c.effect, JobEffect::kFatal);
  EXPECT_EQ(c.usual_fix, "migrate");
  EXPECT_NEAR(c.usual_fix_share, 0.68, 1e-9);
  EXPECT_FALSE(c.source.empty());
}

TEST(FaultClasses, AnXidThatTakesTheDetectorsActionIsFatalWithTheDetectorsFix) {
  for (const char* f : {"xid:48", "xid:95", "xid:119", "xid:46"}) {
    const FaultClass c = fault_class("xid", f);
    EXPECT_EQ(c.effect, JobEffect::kFatal) << f;
    EXPECT_TRUE(c.usual_fix.empty()) << f;
  }
}

TEST(FaultClasses, ApplicationAndRecordOnlyXidsStopNoNode) {
  for (const char* f : {"xid:13", "xid:31", "xid:63", "xid:92", "xid:200"})
    EXPECT_EQ(fault_class("xid", f).effect, JobEffect::kNone) << f;
}

TEST(FaultClasses, NvlinkErrorsAndHungTasksHangTheJob) {
  EXPECT_EQ(fault_class("xid", "xid:74").effect, JobEffect::kHang);
  EXPECT_EQ(fault_class("npd-xfs-hang", "npd-xfs-hang:TaskHung").effect, JobEffect::kHang);
  EXPECT_TRUE(stops_job(JobEffect::kHang));
  EXPECT_TRUE(stops_job(JobEffect::kFatal));
  EXPECT_FALSE(stops_job(JobEffect::kDegraded));
}

TEST(FaultClasses, ThermalSlowdownDegradesAndIbSymbolErrorsStopNothing) {
  EXPECT_EQ(fault_class("dcgm-thermal", "dcgm:thermal").effect, JobEffect::kDegraded);
  EXPECT_EQ(fault_class("ib-link", "ib-link:symbol-errors").effect, JobEffect::kNone);
  EXPECT_EQ(fault_class("ib-link", "ib-link:port-down").effect, JobEffect::kFatal);
  EXPECT_EQ(fault_class("disk-pressure", "disk-pressure:x").effect, JobEffect::kNone);
  EXPECT_EQ(fault_class("no-such-detector", "x").effect, JobEffect::kNone);
}

TEST(FaultClasses, EffectNamesRoundTrip) {
  for (JobEffect e : {JobEffect::kNone, JobEffect::kFatal, JobEffect::kHang, JobEffect::kDegraded})
    EXPECT_EQ(parse_job_effect(to_string(e)), e);
  EXPECT_FALSE(parse_job_effect("crash").has_value());
}

}  // namespace
}  // namespace gf::health
