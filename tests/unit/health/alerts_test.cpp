// Alerts (SPEC §5.1; seed 003): the detector table and the pending → firing → resolved state
// machine. Times are parameters: nothing sleeps.
#include "health/alerts.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace gf::health {
namespace {

const Time t0 = kSimEpoch;

Signal sig(std::string detector, std::string subject, std::string fault, Time at,
           bool present = true, std::string evidence = "ev", std::string node = "node-1") {
  return Signal{std::move(detector), std::move(node), std::move(subject), std::move(fault),
                std::move(evidence), at, present};
}

std::vector<std::string> kinds(const std::vector<AlertChange>& cs) {
  std::vector<std::string> out;
  for (const AlertChange& c : cs) out.emplace_back(to_string(c.kind));
  return out;
}

using Kinds = std::vector<std::string>;

// ---- table ----

TEST(AlertTable, EveryDetectorOfSpecHasARule) {
  const std::vector<std::string> spec = {
      "xid",          "pcie-bus",         "dcgm-ecc",         "dcgm-row-remap",
      "dcgm-pcie-replay", "dcgm-thermal", "npd-readonly-fs",  "npd-xfs-hang",
      "npd-kernel-deadlock", "npd-restart-loop", "slurm-node-state", "ib-link",
      "host-reachability", "disk-pressure"};
  EXPECT_EQ(detector_rules().size(), spec.size());
  std::set<std::string> seen;
  for (const std::string& d : spec) {
    const DetectorRule* r = detector_rule(d);
    ASSERT_NE(r, nullptr) << d;
    EXPECT_EQ(r->detector, d);
    EXPECT_EQ(r->persistence, minutes(5)) << d;  // SPEC: default persistence window 5 min
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

// ---- persistence ----

TEST(AlertPersistence, ShorterThanWindowNeverFires) {
  AlertTracker t;
  EXPECT_EQ(kinds(t.observe(sig("xid", "0000:18:00.0", "xid:79", t0))), Kinds{"Pending"});
  EXPECT_TRUE(t.tick(t0 + minutes(5) - seconds(1)).empty());
  auto cs = t.observe(sig("xid", "0000:18:00.0", "xid:79", t0 + minutes(5) - seconds(1), false));
  EXPECT_EQ(kinds(cs), Kinds{"Discarded"});
  EXPECT_EQ(cs[0].alert.state, AlertState::kPending);
  EXPECT_FALSE(cs[0].alert.fired_at.has_value());
  EXPECT_TRUE(t.tick(t0 + hours(1)).empty());
  EXPECT_TRUE(t.active().empty());
  EXPECT_TRUE(t.resolved().empty());
  EXPECT_FALSE(t.next_deadline().has_value());
}

TEST(AlertPersistence, FiresAtExactlyTheWindow) {
  AlertTracker t;
  t.observe(sig("host-reachability", "", "host:unreachable", t0));
  EXPECT_TRUE(t.tick(t0 + minutes(5) - Duration(1)).empty());
  auto cs = t.tick(t0 + minutes(5));
  ASSERT_EQ(kinds(cs), Kinds{"Firing"});
  EXPECT_EQ(cs[0].at, t0 + minutes(5));
  EXPECT_EQ(cs[0].alert.state, AlertState::kFiring);
  EXPECT_EQ(cs[0].alert.fired_at, t0 + minutes(5));
  EXPECT_TRUE(t.tick(t0 + minutes(6)).empty());  // fires once
}

TEST(AlertPersistence, ZeroWindowFiresAtOnce) {
  AlertTracker t;
  t.set_persistence("xid", Duration::zero());
  auto cs = t.observe(sig("xid", "gpu0", "xid:79", t0));
  ASSERT_EQ(kinds(cs), (Kinds{"Pending", "Firing"}));
  EXPECT_EQ(cs[1].at, t0);
  EXPECT_FALSE(t.next_deadline().has_value());
  // Other detectors keep their window.
  EXPECT_EQ(kinds(t.observe(sig("dcgm-ecc", "gpu0", "dcgm:dbe", t0))), Kinds{"Pending"});
}

TEST(AlertPersistence, ConfiguredWindowReplacesTheDefault) {
  AlertTracker t;
  t.set_persistence("dcgm-thermal", minutes(10));
  t.observe(sig("dcgm-thermal", "gpu0", "dcgm:thermal", t0));
  EXPECT_EQ(t.next_deadline(), t0 + minutes(10));
  EXPECT_TRUE(t.tick(t0 + minutes(9)).empty());
  EXPECT_EQ(kinds(t.tick(t0 + minutes(10))), Kinds{"Firing"});
}

TEST(AlertPersistence, LateTickReportsTheTimeTheWindowEnded) {
  AlertTracker t;
  t.observe(sig("dcgm-ecc", "0000:18:00.0", "dcgm:dbe", t0));
  auto cs = t.tick(t0 + hours(2));
  ASSERT_EQ(kinds(cs), Kinds{"Firing"});
  EXPECT_EQ(cs[0].at, t0 + minutes(5));
}

TEST(AlertPersistence, RepeatedObservationPastTheWindowFiresWithoutATick) {
  AlertTracker t;
  t.observe(sig("npd-readonly-fs", "/", "npd:readonly-fs", t0));
  EXPECT_TRUE(t.observe(sig("npd-readonly-fs", "/", "npd:readonly-fs", t0 + minutes(3))).empty());
  auto cs = t.observe(sig("npd-readonly-fs", "/", "npd:readonly-fs", t0 + minutes(6)));
  ASSERT_EQ(kinds(cs), Kinds{"Firing"});
  EXPECT_EQ(cs[0].alert.first_seen, t0);
  EXPECT_EQ(cs[0].alert.last_seen, t0 + minutes(6));
}

TEST(AlertPersistence, ClearAfterTheWindowWithoutATickFiresThenResolves) {
  AlertTracker t;
  t.observe(sig("ib-link", "mlx5_0/1", "ib-link:down", t0));
  auto cs = t.observe(sig("ib-link", "mlx5_0/1", "ib-link:down", t0 + minutes(7), false));
  EXPECT_EQ(kinds(cs), (Kinds{"Firing", "Resolved"}));
  EXPECT_EQ(cs[0].at, t0 + minutes(5));
  EXPECT_EQ(cs[1].at, t0 + minutes(7));
}

// ---- resolve ----

TEST(AlertResolve, ClearedSignalResolvesAFiringAlert) {
  AlertTracker t;
  t.observe(sig("xid", "0000:18:00.0", "xid:79", t0));
  t.tick(t0 + minutes(5));
  auto cs = t.observe(sig("xid", "0000:18:00.0", "xid:79", t0 + minutes(9), false, "cleared"));
  ASSERT_EQ(kinds(cs), Kinds{"Resolved"});
  EXPECT_EQ(cs[0].alert.state, AlertState::kResolved);
  EXPECT_EQ(cs[0].alert.resolved_at, t0 + minutes(9));
  EXPECT_TRUE(t.active().empty());
  ASSERT_EQ(t.resolved().size(), 1u);
  EXPECT_EQ(t.resolved().front().id, cs[0].alert.id);
  EXPECT_EQ(t.find("node-1", "xid", "0000:18:00.0", "xid:79"), nullptr);
}

TEST(AlertResolve, ClearOfAnUnknownAlertChangesNothing) {
  AlertTracker t;
  EXPECT_TRUE(t.observe(sig("xid", "0000:18:00.0", "xid:79", t0, false)).empty());
  EXPECT_TRUE(t.active().empty());
}

TEST(AlertResolve, RefiresAfterResolveAsANewAlert) {
  AlertTracker t;
  auto first = t.observe(sig("xid", "0000:18:00.0", "xid:79", t0));
  t.tick(t0 + minutes(5));
  t.observe(sig("xid", "0000:18:00.0", "xid:79", t0 + minutes(6), false));
  auto again = t.observe(sig("xid", "0000:18:00.0", "xid:79", t0 + minutes(10)));
  ASSERT_EQ(kinds(again), Kinds{"Pending"});
  EXPECT_NE(again[0].alert.id, first[0].alert.id);
  EXPECT_EQ(again[0].alert.first_seen, t0 + minutes(10));  // a fresh window
  EXPECT_TRUE(t.tick(t0 + minutes(14)).empty());
  EXPECT_EQ(kinds(t.tick(t0 + minutes(15))), Kinds{"Firing"});
  EXPECT_EQ(t.resolved().size(), 1u);
}

TEST(AlertResolve, ResolvedHistoryIsBounded) {
  AlertTracker t(/*max_resolved=*/3);
  for (int i = 0; i < 10; ++i) {
    const Time at = t0 + hours(i);
    t.observe(sig("host-reachability", "", "host:unreachable", at));
    t.tick(at + minutes(5));
    t.observe(sig("host-reachability", "", "host:unreachable", at + minutes(6), false));
  }
  ASSERT_EQ(t.resolved().size(), 3u);
  EXPECT_EQ(t.resolved().front().id, "alert-8");
  EXPECT_EQ(t.resolved().back().id, "alert-10");
}

// ---- keys ----

TEST(AlertKey, TwoSubjectsOnOneNodeAreTwoAlerts) {
  AlertTracker t;
  EXPECT_EQ(kinds(t.observe(sig("xid", "0000:18:00.0", "xid:79", t0))), Kinds{"Pending"});
  EXPECT_EQ(kinds(t.observe(sig("xid", "0000:b3:00.0", "xid:79", t0 + seconds(1)))),
            Kinds{"Pending"});
  EXPECT_EQ(t.active().size(), 2u);
  auto cs = t.observe(sig("xid", "0000:18:00.0", "xid:79", t0 + minutes(1), false));
  EXPECT_EQ(kinds(cs), Kinds{"Discarded"});
  ASSERT_EQ(t.active().size(), 1u);
  EXPECT_EQ(t.active()[0].subject, "0000:b3:00.0");
}

TEST(AlertKey, NodeDetectorAndFaultArePartOfTheKey) {
  AlertTracker t;
  t.observe(sig("xid", "gpu0", "xid:79", t0));
  t.observe(sig("xid", "gpu0", "xid:48", t0));
  t.observe(sig("xid", "gpu0", "xid:79", t0, true, "ev", "node-2"));
  t.observe(sig("pcie-bus", "gpu0", "xid:79", t0));
  EXPECT_EQ(t.active().size(), 4u);
}

TEST(AlertKey, SimultaneousFiringsComeInKeyOrder) {
  AlertTracker t;
  t.observe(sig("xid", "gpu1", "xid:79", t0, true, "ev", "node-b"));
  t.observe(sig("xid", "gpu0", "xid:79", t0, true, "ev", "node-a"));
  t.observe(sig("dcgm-ecc", "gpu0", "dcgm:dbe", t0 - minutes(1), true, "ev", "node-z"));
  auto cs = t.tick(t0 + minutes(5));
  ASSERT_EQ(cs.size(), 3u);
  EXPECT_EQ(cs[0].alert.node, "node-z");  // earliest fire time first
  EXPECT_EQ(cs[1].alert.node, "node-a");
  EXPECT_EQ(cs[2].alert.node, "node-b");
}

// ---- evidence ----

TEST(AlertEvidence, KeptVerbatim) {
  AlertTracker t;
  const std::string raw =
      "[ 1234.5678] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.\t \xff";
  auto cs = t.observe(sig("xid", "0000:18:00.0", "xid:79", t0, true, raw));
  ASSERT_EQ(cs.size(), 1u);
  ASSERT_EQ(cs[0].alert.evidence.size(), 1u);
  EXPECT_EQ(cs[0].alert.evidence[0].text, raw);
  EXPECT_EQ(cs[0].alert.evidence[0].at, t0);
  t.observe(sig("xid", "0000:18:00.0", "xid:79", t0 + minutes(1), true, "second"));
  const Alert* a = t.find("node-1", "xid", "0000:18:00.0", "xid:79");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->evidence.size(), 2u);
  EXPECT_EQ(a->evidence[0].text, raw);
  EXPECT_EQ(a->evidence[1].text, "second");
  EXPECT_EQ(a->observations, 2u);
}

TEST(AlertEvidence, BoundedToFirstAndLastN) {
  AlertTracker t;
  const size_t n = AlertTracker::kMaxRecentEvidence;
  const int total = static_cast<int>(n) + 10;
  for (int i = 0; i < total; ++i)
    t.observe(sig("disk-pressure", "/", "disk:pressure", t0 + seconds(i), true,
                  "obs-" + std::to_string(i)));
  const Alert* a = t.find("node-1", "disk-pressure", "/", "disk:pressure");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->evidence.size(), 1 + n);
  EXPECT_EQ(a->evidence.front().text, "obs-0");
  EXPECT_EQ(a->evidence[1].text, "obs-" + std::to_string(total - static_cast<int>(n)));
  EXPECT_EQ(a->evidence.back().text, "obs-" + std::to_string(total - 1));
  EXPECT_EQ(a->observations, static_cast<uint64_t>(total));
  EXPECT_EQ(a->evidence_dropped, static_cast<uint64_t>(total) - 1 - n);
}

TEST(AlertEvidence, ClearObservationIsKept) {
  AlertTracker t;
  t.observe(sig("ib-link", "mlx5_0/1", "ib-link:down", t0, true, "state=DOWN"));
  t.tick(t0 + minutes(5));
  auto cs = t.observe(sig("ib-link", "mlx5_0/1", "ib-link:down", t0 + minutes(8), false,
                          "state=ACTIVE"));
  ASSERT_EQ(cs.size(), 1u);
  ASSERT_EQ(cs[0].alert.evidence.size(), 2u);
  EXPECT_EQ(cs[0].alert.evidence[1].text, "state=ACTIVE");
  EXPECT_FALSE(cs[0].alert.evidence[1].present);
}

TEST(AlertEvidence, AlertCarriesTheTableClass) {
  AlertTracker t;
  auto cs = t.observe(sig("disk-pressure", "/", "disk:pressure", t0));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].alert.action, kActionRecordOnly);
  EXPECT_EQ(cs[0].alert.severity, Severity::kWarning);
  auto unknown = t.observe(sig("vendor-check", "", "v:1", t0));
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].alert.action, kActionSupport);
}

// ---- next deadline ----

TEST(AlertDeadline, NextDeadlineIsTheEarliestPendingWindowEnd) {
  AlertTracker t;
  EXPECT_FALSE(t.next_deadline().has_value());
  t.observe(sig("xid", "gpu0", "xid:79", t0 + minutes(2)));
  EXPECT_EQ(t.next_deadline(), t0 + minutes(7));
  t.observe(sig("xid", "gpu1", "xid:79", t0));
  EXPECT_EQ(t.next_deadline(), t0 + minutes(5));
  // A repeat does not move the window.
  t.observe(sig("xid", "gpu1", "xid:79", t0 + minutes(4)));
  EXPECT_EQ(t.next_deadline(), t0 + minutes(5));
  t.tick(t0 + minutes(5));
  EXPECT_EQ(t.next_deadline(), t0 + minutes(7));  // firing alerts have no deadline
  t.tick(t0 + minutes(7));
  EXPECT_FALSE(t.next_deadline().has_value());
}

TEST(AlertDeadline, DiscardedAlertLeavesNoDeadline) {
  AlertTracker t;
  t.observe(sig("xid", "gpu0", "xid:79", t0));
  t.observe(sig("xid", "gpu0", "xid:79", t0 + minutes(1), false));
  EXPECT_FALSE(t.next_deadline().has_value());
}

}  // namespace
}  // namespace gf::health
