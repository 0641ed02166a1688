// Remediation policy (docs/health.md–5.4): parsing and validation, the default mapping and user
// rules' specificity, the escalation ladder and the evidence rule for migrate. Times are
// parameters: nothing sleeps.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "model/remediation_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gf::remediate {
namespace {

const Time t0 = kSimEpoch + days(30);

Json parse(std::string_view text) {
  Result<Json> j = parse_json(text);
  EXPECT_TRUE(j.ok()) << j.status().message();
  return j.ok() ? j.value() : Json::object();
}

// The error message of a refused policy ("" when it was accepted).
std::string refused(std::string_view text) {
  Result<Policy> p = Policy::from_json(parse(text));
  return p.ok() ? "" : p.status().message();
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.starts_with(prefix); }

// ---- docs/remediation.md defaults
// -------------------------------------------------------------------

// The table `policy get` shows is what match() does on an empty policy, row by row.
TEST(PolicyDefaults, DefaultRulesTableIsWhatMatchDoesForEveryDetector) {
  const std::vector<DefaultRule> rows = default_rules();
  auto row = [&](std::string_view detector, std::string_view faults) -> const DefaultRule* {
    for (const DefaultRule& r : rows) {
      if (r.detector == detector && r.faults == faults) return &r;
    }
    return nullptr;
  };
  for (const health::DetectorRule& d : health::detector_rules()) {
    EXPECT_NE(row(d.detector, "*"), nullptr) << d.detector << " has no row";
  }
  const DefaultRule* reboot = nullptr;
  for (const DefaultRule& r : rows) {
    if (r.detector == "xid" && r.faults.find("xid:79") != std::string::npos) reboot = &r;
  }
  ASSERT_NE(reboot, nullptr);
  EXPECT_EQ(reboot->action, "reboot");
  EXPECT_EQ(reboot->approval, "auto");
  EXPECT_EQ(match(Policy{}, "xid", "xid:79", "").approval, Approval::kAuto);
  ASSERT_NE(row("dcgm-row-remap", "dcgm:row-remap-failure"), nullptr);
  EXPECT_EQ(row("dcgm-row-remap", "dcgm:row-remap-failure")->action, "migrate");
  EXPECT_EQ(row("dcgm-row-remap", "dcgm:row-remap-failure")->approval, "manual");
  EXPECT_EQ(row("slurm-node-state", "*")->approval, "manual") << "approval required row";
  EXPECT_EQ(row("disk-pressure", "*")->action, "record-only");
  EXPECT_EQ(row("disk-pressure", "*")->approval, "-");
  EXPECT_EQ(row("xid", "xid:154")->action, "driver-recovery");
  EXPECT_EQ(row("xid", "xid:154")->approval, "auto");
  EXPECT_EQ(row("xid", "*")->action, "support");
  ASSERT_NE(row("ib-link", "ib-link:symbol-errors"), nullptr);
  EXPECT_EQ(row("ib-link", "ib-link:symbol-errors")->action, "support");
}

TEST(PolicyDefaults, EmptyObjectGivesSpecDefaults) {
  Result<Policy> r = Policy::from_json(Json::object());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Policy& p = r.value();
  EXPECT_TRUE(p.rules.empty());
  ASSERT_TRUE(p.max_wait.has_value());
  EXPECT_EQ(*p.max_wait, hours(2));     // docs/remediation.md default max wait 2 h
  EXPECT_EQ(p.cooldown, minutes(30));   // docs/remediation.md ~30 min cooldown
  EXPECT_EQ(p.max_concurrent(100), 5);  // docs/remediation.md max(1, 5 % of nodes)
  EXPECT_EQ(p.breaker_max_auto, 5);
  EXPECT_EQ(p.breaker_window, hours(1));
  EXPECT_EQ(p.escalation_window, days(7));  // docs/remediation.md attempts older than 7 days
  EXPECT_EQ(p.migration_evidence_window, days(10));  // docs/remediation.md within 10 days
  EXPECT_EQ(p.persistence_for("xid"), minutes(5));   // docs/health.md default persistence 5 min
  EXPECT_EQ(p, Policy{});
}

TEST(PolicyDefaults, ToJsonFillsEveryField) {
  const Json j = Policy{}.to_json();
  EXPECT_EQ(j.at("Rules"), Json::array());
  EXPECT_EQ(j.at("WaitForIdle").at("MaxWait"), "2h");
  EXPECT_EQ(j.at("AlertPersistence").at("*"), "5m");
  EXPECT_EQ(j.at("Cooldown"), "30m");
  EXPECT_EQ(j.at("MaxConcurrent"), "5%");
  EXPECT_EQ(j.at("CircuitBreaker").at("MaxAuto"), 5);
  EXPECT_EQ(j.at("CircuitBreaker").at("Window"), "1h");
  EXPECT_EQ(j.at("EscalationWindow"), "7d");
  EXPECT_EQ(j.at("MigrationEvidenceWindow"), "10d");
}

// ---- round trip ----------------------------------------------------------------------------

TEST(PolicyRoundTrip, FullPolicySurvivesToJsonFromJson) {
  Policy p;
  p.rules = {Rule{"xid:119", "", Action::kReboot, Approval::kAuto},
             Rule{"xid:*", "workers", Action::kReprovision, Approval::kManual},
             Rule{"dcgm-row-remap", "", Action::kMigrate, Approval::kManual},
             Rule{"*", "", Action::kNone, Approval::kAuto}};
  p.max_wait = hours(6);
  p.persistence = {{"*", minutes(2)}, {"xid", seconds(30)}, {"ib-link", minutes(10)}};
  p.cooldown = minutes(45);
  p.max_concurrent_count = 3;
  p.max_concurrent_percent = 0;
  p.breaker_max_auto = 9;
  p.breaker_window = minutes(90);
  p.escalation_window = days(3);
  p.migration_evidence_window = days(14);
  Result<Policy> back = Policy::from_json(p.to_json());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back.value(), p);
  EXPECT_EQ(back.value().to_json(), p.to_json());
}

TEST(PolicyRoundTrip, NeverAndPercentSurvive) {
  Policy p;
  p.max_wait = std::nullopt;  // "never interrupt running jobs"
  p.max_concurrent_percent = 20;
  p.persistence = {{"*", minutes(5)}};
  const Json j = p.to_json();
  EXPECT_EQ(j.at("WaitForIdle"), Json({{"Never", true}, {"FatalFaults", "Drain"}}));
  EXPECT_EQ(j.at("MaxConcurrent"), "20%");
  Result<Policy> back = Policy::from_json(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back.value(), p);
}

TEST(PolicyRoundTrip, DefaultPolicyRoundTripIsStable) {
  // to_json fills AlertPersistence "*" with the default window; reading it back and writing it
  // again gives the same wire shape, and the same windows for every detector.
  Result<Policy> back = Policy::from_json(Policy{}.to_json());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back.value().to_json(), Policy{}.to_json());
  for (std::string_view d : {"xid", "pcie-bus", "disk-pressure", "made-up"}) {
    EXPECT_EQ(back.value().persistence_for(d), Policy{}.persistence_for(d)) << d;
  }
}

TEST(PolicyParse, AcceptsYamlDurationsSecondsAndNestedFields) {
  Result<Policy> r = Policy::from_json(parse(R"({
    "Rules": [{"Fault": "xid:79", "NodePool": "workers", "Action": "reprovision", "Approval": "manual"},
              {"Fault": "dcgm:row-remap-failure", "Action": "migrate"}],
    "WaitForIdle": {"MaxWait": "24h"},
    "AlertPersistence": {"xid": 60, "dcgm-thermal": "15m"},
    "Cooldown": "1h",
    "MaxConcurrent": 4,
    "CircuitBreaker": {"MaxAuto": 2, "Window": "30m"},
    "EscalationWindow": "14d",
    "MigrationEvidenceWindow": "5d"})"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Policy& p = r.value();
  ASSERT_EQ(p.rules.size(), 2u);
  EXPECT_EQ(p.rules[0], (Rule{"xid:79", "workers", Action::kReprovision, Approval::kManual}));
  // Approval defaults to auto.
  EXPECT_EQ(p.rules[1], (Rule{"dcgm:row-remap-failure", "", Action::kMigrate, Approval::kAuto}));
  EXPECT_EQ(p.max_wait, hours(24));  // the cap itself is allowed
  EXPECT_EQ(p.persistence_for("xid"), minutes(1));
  EXPECT_EQ(p.persistence_for("dcgm-thermal"), minutes(15));
  EXPECT_EQ(p.cooldown, hours(1));
  EXPECT_EQ(p.max_concurrent(1000), 4);
  EXPECT_EQ(p.breaker_max_auto, 2);
  EXPECT_EQ(p.breaker_window, minutes(30));
  EXPECT_EQ(p.escalation_window, days(14));
  EXPECT_EQ(p.migration_evidence_window, days(5));
}

// ---- errors name the field path ---------------------------------------------------------------

TEST(PolicyErrors, WaitForIdleMaxWaitAboveThe24hCapIsRefused) {
  const std::string e = refused(R"({"WaitForIdle": {"MaxWait": "25h"}})");
  EXPECT_TRUE(starts_with(e, "WaitForIdle.MaxWait: ")) << e;
  EXPECT_NE(e.find("24h cap"), std::string::npos) << e;
}

TEST(PolicyErrors, NeverTogetherWithMaxWaitIsRefused) {
  const std::string e = refused(R"({"WaitForIdle": {"Never": true, "MaxWait": "1h"}})");
  EXPECT_TRUE(starts_with(e, "WaitForIdle.Never: ")) << e;
  // Never alone is "no limit".
  Result<Policy> never = Policy::from_json(parse(R"({"WaitForIdle": {"Never": true}})"));
  ASSERT_TRUE(never.ok()) << never.status().message();
  EXPECT_EQ(never.value().max_wait, std::nullopt);
}

TEST(PolicyErrors, NegativeOrMalformedDurationIsRefused) {
  EXPECT_TRUE(starts_with(refused(R"({"Cooldown": "-5m"})"), "Cooldown: "))
      << refused(R"({"Cooldown": "-5m"})");
  EXPECT_TRUE(starts_with(refused(R"({"Cooldown": "soon"})"), "Cooldown: "));
  EXPECT_TRUE(starts_with(refused(R"({"EscalationWindow": true})"), "EscalationWindow: "));
}

TEST(PolicyErrors, RuleActionDeleteIsRefusedBecauseOnlyAPersonDeletes) {
  const std::string e = refused(R"({"Rules": [{"Fault": "xid:79", "Action": "delete"}]})");
  EXPECT_TRUE(starts_with(e, "Rules[0].Action: ")) << e;
  EXPECT_NE(e.find("person"), std::string::npos) << e;
}

TEST(PolicyErrors, UnknownRuleActionIsRefused) {
  const std::string e = refused(
      R"({"Rules": [{"Fault": "xid:79", "Action": "reboot"}, {"Fault": "*", "Action": "explode"}]})");
  EXPECT_TRUE(starts_with(e, "Rules[1].Action: ")) << e;
  EXPECT_NE(e.find("explode"), std::string::npos) << e;
}

TEST(PolicyErrors, MissingRuleFieldsAreRefused) {
  EXPECT_TRUE(starts_with(refused(R"({"Rules": [{"Action": "reboot"}]})"), "Rules[0].Fault"));
  EXPECT_TRUE(starts_with(refused(R"({"Rules": [{"Fault": "xid:79"}]})"), "Rules[0].Action"));
  EXPECT_TRUE(starts_with(refused(R"({"Rules": ["xid:79"]})"), "Rules[0]"));
}

TEST(PolicyErrors, BadApprovalIsRefused) {
  const std::string e =
      refused(R"({"Rules": [{"Fault": "xid:79", "Action": "reboot", "Approval": "maybe"}]})");
  EXPECT_TRUE(starts_with(e, "Rules[0].Approval: ")) << e;
  EXPECT_NE(e.find("maybe"), std::string::npos) << e;
}

TEST(PolicyErrors, BadFaultPatternIsRefused) {
  for (const char* fault : {"xid:7x", "xid:", "XID:79", "", "dcgm:*", "xid 79"}) {
    Json j = {{"Rules", Json::array({{{"Fault", fault}, {"Action", "reboot"}}})}};
    Result<Policy> p = Policy::from_json(j);
    ASSERT_FALSE(p.ok()) << fault;
    EXPECT_TRUE(starts_with(p.status().message(), "Rules[0].Fault: ")) << p.status().message();
  }
  for (const char* fault : {"xid:119", "xid:*", "dcgm-row-remap", "dcgm:row-remap-failure", "*"}) {
    Json j = {{"Rules", Json::array({{{"Fault", fault}, {"Action", "reboot"}}})}};
    EXPECT_TRUE(Policy::from_json(j).ok()) << fault;
  }
}

TEST(PolicyErrors, UnknownFieldIsRefusedAtEveryLevel) {
  EXPECT_EQ(refused(R"({"Cooldwon": "5m"})"), "Cooldwon: unknown field");
  EXPECT_EQ(refused(R"({"WaitForIdle": {"MaxWiat": "1h"}})"), "WaitForIdle.MaxWiat: unknown field");
  EXPECT_EQ(refused(R"({"CircuitBreaker": {"Max": 3}})"), "CircuitBreaker.Max: unknown field");
  EXPECT_EQ(refused(R"({"Rules": [{"Fault": "*", "Action": "none", "Pool": "a"}]})"),
            "Rules[0].Pool: unknown field");
}

TEST(PolicyErrors, MaxConcurrentMustBeACountOrAPercent) {
  for (const char* bad :
       {R"("0%")", R"("abc")", "0", "-3", R"("101%")", R"("5.5%")", R"("x%")", "2.5"}) {
    const std::string e = refused(std::string(R"({"MaxConcurrent": )") + bad + "}");
    EXPECT_TRUE(starts_with(e, "MaxConcurrent: ")) << bad << " -> " << e;
  }
}

TEST(PolicyErrors, CircuitBreakerMaxAutoZeroIsRefused) {
  EXPECT_TRUE(
      starts_with(refused(R"({"CircuitBreaker": {"MaxAuto": 0}})"), "CircuitBreaker.MaxAuto: "));
  EXPECT_TRUE(
      starts_with(refused(R"({"CircuitBreaker": {"Window": "0s"}})"), "CircuitBreaker.Window: "));
}

TEST(PolicyErrors, AlertPersistencePerDetectorAndUnknownDetector) {
  Result<Policy> ok =
      Policy::from_json(parse(R"({"AlertPersistence": {"*": "1m", "xid": "10m"}})"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok.value().persistence_for("xid"), minutes(10));
  EXPECT_EQ(ok.value().persistence_for("ib-link"), minutes(1));
  // A single duration is the window for every detector.
  Result<Policy> all = Policy::from_json(parse(R"({"AlertPersistence": "3m"})"));
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all.value().persistence_for("dcgm-ecc"), minutes(3));

  const std::string e = refused(R"({"AlertPersistence": {"xid": "1m", "nvidia-magic": "2m"}})");
  EXPECT_TRUE(starts_with(e, "AlertPersistence.nvidia-magic: unknown detector")) << e;
  EXPECT_TRUE(
      starts_with(refused(R"({"AlertPersistence": {"xid": "later"}})"), "AlertPersistence.xid: "));
}

TEST(PolicyErrors, PathPrefixIsUsedAndARefusalChangesNothing) {
  Policy current;
  current.cooldown = minutes(10);
  const Policy before = current;
  Result<Policy> r =
      Policy::from_json(parse(R"({"Cooldown": "1h", "MaxConcurrent": "0%"})"), "Policy");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(starts_with(r.status().message(), "Policy.MaxConcurrent: ")) << r.status().message();
  if (r.ok()) current = r.value();  // what a caller does: only an accepted policy replaces
  EXPECT_EQ(current, before);
  EXPECT_FALSE(Policy::from_json(Json::array()).ok());
  EXPECT_FALSE(Policy::from_json(Json("x")).ok());
}

// ---- docs/remediation.md concurrency cap, docs/health.md persistence
// ---------------------------------------------------

TEST(MaxConcurrent, FivePercentOfClusterNodesAtLeastOne) {
  Policy p;
  EXPECT_EQ(p.max_concurrent(100), 5);
  EXPECT_EQ(p.max_concurrent(10), 1);  // max(1, 0)
  EXPECT_EQ(p.max_concurrent(0), 1);
  EXPECT_EQ(p.max_concurrent(1000), 50);
}

TEST(MaxConcurrent, CountIgnoresClusterSize) {
  Result<Policy> r = Policy::from_json(parse(R"({"MaxConcurrent": 3})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().max_concurrent(10), 3);
  EXPECT_EQ(r.value().max_concurrent(1000), 3);
  Result<Policy> pct = Policy::from_json(parse(R"({"MaxConcurrent": "10%"})"));
  ASSERT_TRUE(pct.ok());
  EXPECT_EQ(pct.value().max_concurrent(200), 20);
}

TEST(PersistenceFor, DetectorThenStarThenTableDefault) {
  Policy p;
  EXPECT_EQ(p.persistence_for("xid"), minutes(5));
  EXPECT_EQ(p.persistence_for("not-a-detector"), minutes(5));
  p.persistence["*"] = minutes(1);
  EXPECT_EQ(p.persistence_for("xid"), minutes(1));
  p.persistence["xid"] = seconds(0);
  EXPECT_EQ(p.persistence_for("xid"), seconds(0));
  EXPECT_EQ(p.persistence_for("ib-link"), minutes(1));
}

// ---- docs/health.md default mapping
// ----------------------------------------------------------------------

TEST(DefaultMapping, Xid119And95RebootAutoApproved) {
  const Policy p;
  for (std::string_view f : {"xid:119", "xid:95"}) {
    RuleMatch m = match(p, "xid", f, "workers");
    EXPECT_EQ(m.action, Action::kReboot) << f;
    EXPECT_EQ(m.approval, Approval::kAuto) << f;
    EXPECT_FALSE(m.support);
    EXPECT_EQ(m.rule, "default:" + std::string(f));
  }
}

TEST(DefaultMapping, ApplicationXid13IsRecordOnly) {
  RuleMatch m = match(Policy{}, "xid", "xid:13", "workers");
  EXPECT_EQ(m.action, Action::kNone);
  EXPECT_FALSE(m.support);
  EXPECT_EQ(m.rule, "default:xid:13");
}

TEST(DefaultMapping, UnmappedXidAndUnknownDetectorGoToSupport) {
  RuleMatch x = match(Policy{}, "xid", "xid:777", "workers");
  EXPECT_TRUE(x.support);
  EXPECT_EQ(x.action, Action::kNone);
  RuleMatch d = match(Policy{}, "vendor-probe", "vendor-probe:weird", "workers");
  EXPECT_TRUE(d.support);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_EQ(d.rule, "default:vendor-probe:weird");
}

TEST(DefaultMapping, RowRemapFailureMigratesWithApproval) {
  RuleMatch m = match(Policy{}, "dcgm-row-remap", "dcgm:row-remap-failure", "workers");
  EXPECT_EQ(m.action, Action::kMigrate);
  EXPECT_EQ(m.approval, Approval::kManual);  // docs/remediation.md migration needs approval
  // Row-remap pending reboots, auto-approved.
  RuleMatch pending = match(Policy{}, "dcgm-row-remap", "dcgm:row-remap-pending", "workers");
  EXPECT_EQ(pending.action, Action::kReboot);
  EXPECT_EQ(pending.approval, Approval::kAuto);
}

TEST(DefaultMapping, SlurmDrainBySomeoneElseMigratesApprovalRequired) {
  RuleMatch m = match(Policy{}, "slurm-node-state", "slurm:drain", "workers");
  EXPECT_EQ(m.action, Action::kMigrate);
  EXPECT_EQ(m.approval, Approval::kManual);
}

TEST(DefaultMapping, DiskPressureIsRecordOnlyNotSupport) {
  RuleMatch m = match(Policy{}, "disk-pressure", "disk-pressure:nodefs", "workers");
  EXPECT_EQ(m.action, Action::kNone);
  EXPECT_FALSE(m.support);
}

TEST(DefaultMapping, ReadonlyFsReprovisionsAndPcieReplayReprovisions) {
  EXPECT_EQ(match(Policy{}, "npd-readonly-fs", "npd-readonly-fs:ReadonlyFilesystem", "").action,
            Action::kReprovision);
  EXPECT_EQ(match(Policy{}, "dcgm-pcie-replay", "dcgm:pcie-replay", "").action,
            Action::kReprovision);
}

TEST(DefaultMapping, Xid154TakesTheDriverNamedAction) {
  RuleMatch r = match(Policy{}, "xid", "xid:154", "workers", Action::kReboot);
  EXPECT_EQ(r.action, Action::kReboot);
  EXPECT_EQ(r.approval, Approval::kAuto);
  RuleMatch m = match(Policy{}, "xid", "xid:154", "workers", Action::kMigrate);
  EXPECT_EQ(m.action, Action::kMigrate);
  EXPECT_EQ(m.approval, Approval::kManual);
}

// ---- docs/remediation.md user rules, most specific wins
// ---------------------------------------------------------

TEST(UserRules, ExactFaultBeatsXidStarBeatsDetectorBeatsStar) {
  Policy p;
  p.rules = {Rule{"*", "", Action::kNone, Approval::kManual},
             Rule{"xid", "", Action::kMigrate, Approval::kManual},
             Rule{"xid:*", "", Action::kReprovision, Approval::kManual},
             Rule{"xid:79", "", Action::kReboot, Approval::kAuto}};
  RuleMatch exact = match(p, "xid", "xid:79", "workers");
  EXPECT_EQ(exact.action, Action::kReboot);
  EXPECT_EQ(exact.rule, "xid:79");
  EXPECT_FALSE(exact.support);
  EXPECT_EQ(match(p, "xid", "xid:48", "workers").rule, "xid:*");
  EXPECT_EQ(match(p, "xid", "xid:48", "workers").action, Action::kReprovision);
  EXPECT_EQ(match(p, "xid", "sxid:24007", "workers").rule, "xid");  // not an xid:* fault
  EXPECT_EQ(match(p, "ib-link", "ib-link:port-down", "workers").rule, "*");
  // A user rule also takes over what the default would have sent to support.
  RuleMatch unknown = match(p, "vendor-probe", "vendor-probe:x", "workers");
  EXPECT_FALSE(unknown.support);
  EXPECT_EQ(unknown.rule, "*");
}

TEST(UserRules, NodePoolSpecificBeatsAnyPoolAndOtherPoolsDoNotMatch) {
  Policy p;
  p.rules = {Rule{"xid:79", "", Action::kReboot, Approval::kAuto},
             Rule{"xid:79", "workers", Action::kReprovision, Approval::kManual},
             Rule{"xid:48", "inference", Action::kMigrate, Approval::kManual}};
  RuleMatch w = match(p, "xid", "xid:79", "workers");
  EXPECT_EQ(w.action, Action::kReprovision);
  EXPECT_EQ(w.approval, Approval::kManual);
  EXPECT_EQ(w.rule, "xid:79@workers");
  EXPECT_EQ(match(p, "xid", "xid:79", "other").rule, "xid:79");
  // The inference-only rule does not apply to workers: the default mapping does.
  RuleMatch d = match(p, "xid", "xid:48", "workers");
  EXPECT_EQ(d.rule, "default:xid:48");
  EXPECT_EQ(d.action, Action::kReboot);
  EXPECT_EQ(match(p, "xid", "xid:48", "inference").action, Action::kMigrate);
}

TEST(UserRules, FaultTierComesBeforePoolTier) {
  Policy p;
  p.rules = {Rule{"xid:*", "workers", Action::kReprovision, Approval::kAuto},
             Rule{"xid:79", "", Action::kReboot, Approval::kAuto}};
  EXPECT_EQ(match(p, "xid", "xid:79", "workers").rule, "xid:79");
}

TEST(UserRules, EarlierRuleWinsTies) {
  Policy p;
  p.rules = {Rule{"xid:79", "", Action::kReprovision, Approval::kManual},
             Rule{"xid:79", "", Action::kReboot, Approval::kAuto}};
  RuleMatch m = match(p, "xid", "xid:79", "workers");
  EXPECT_EQ(m.action, Action::kReprovision);
  EXPECT_EQ(m.approval, Approval::kManual);
}

TEST(UserRules, DetectorFaultCodeRuleMatchesExactly) {
  Policy p;
  p.rules = {Rule{"dcgm:row-remap-failure", "", Action::kReprovision, Approval::kAuto}};
  EXPECT_EQ(match(p, "dcgm-row-remap", "dcgm:row-remap-failure", "").action, Action::kReprovision);
  EXPECT_EQ(match(p, "dcgm-row-remap", "dcgm:row-remap-pending", "").rule,
            "default:dcgm:row-remap-pending");
}

// ---- docs/remediation.md escalation ladder
// ---------------------------------------------------------------------

Attempt attempt(Action a, std::string fault, Duration ago, bool counts = true) {
  return Attempt{a, std::move(fault), t0 - ago, counts};
}

TEST(Escalation, ThirdRebootOfTheSameFaultWithin7DaysBecomesReprovision) {
  const std::vector<Attempt> h = {attempt(Action::kReboot, "xid:79", days(6)),
                                  attempt(Action::kReboot, "xid:79", hours(1))};
  Effective e = escalate(Action::kReboot, "xid:79", h, t0, days(7));
  EXPECT_EQ(e.action, Action::kReprovision);
  EXPECT_NE(e.reason.find("xid:79"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("2 reboots"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("7d"), std::string::npos) << e.reason;
}

TEST(Escalation, OneRebootLeavesTheActionUnchanged) {
  const std::vector<Attempt> h = {attempt(Action::kReboot, "xid:79", hours(1))};
  Effective e = escalate(Action::kReboot, "xid:79", h, t0, days(7));
  EXPECT_EQ(e.action, Action::kReboot);
  EXPECT_TRUE(e.reason.empty());
}

TEST(Escalation, AttemptsOlderThanTheWindowDoNotCount) {
  const std::vector<Attempt> h = {attempt(Action::kReboot, "xid:79", days(8)),
                                  attempt(Action::kReboot, "xid:79", hours(1))};
  Effective e = escalate(Action::kReboot, "xid:79", h, t0, days(7));
  EXPECT_EQ(e.action, Action::kReboot);
  EXPECT_TRUE(e.reason.empty());
}

TEST(Escalation, CancelledOrSelfClearedAttemptsDoNotCount) {
  const std::vector<Attempt> h = {attempt(Action::kReboot, "xid:79", days(1), false),
                                  attempt(Action::kReboot, "xid:79", hours(1))};
  EXPECT_EQ(escalate(Action::kReboot, "xid:79", h, t0, days(7)).action, Action::kReboot);
}

TEST(Escalation, ADifferentFaultDoesNotCount) {
  const std::vector<Attempt> h = {attempt(Action::kReboot, "xid:48", days(1)),
                                  attempt(Action::kReboot, "xid:79", hours(1))};
  EXPECT_EQ(escalate(Action::kReboot, "xid:79", h, t0, days(7)).action, Action::kReboot);
}

TEST(Escalation, TwoRebootsAndTwoReprovisionsBecomeMigrate) {
  const std::vector<Attempt> h = {attempt(Action::kReboot, "xid:79", days(5)),
                                  attempt(Action::kReboot, "xid:79", days(4)),
                                  attempt(Action::kReprovision, "xid:79", days(3)),
                                  attempt(Action::kReprovision, "xid:79", days(2))};
  Effective e = escalate(Action::kReboot, "xid:79", h, t0, days(7));
  EXPECT_EQ(e.action, Action::kMigrate);
  EXPECT_NE(e.reason.find("reboots"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("reprovisions"), std::string::npos) << e.reason;
  // Asked reprovision after two reprovisions is migrate as well.
  EXPECT_EQ(escalate(Action::kReprovision, "xid:79", h, t0, days(7)).action, Action::kMigrate);
}

TEST(Escalation, MigrateAndNoneAreNotEscalated) {
  const std::vector<Attempt> h = {attempt(Action::kReboot, "xid:79", days(1)),
                                  attempt(Action::kReboot, "xid:79", hours(1))};
  EXPECT_EQ(escalate(Action::kMigrate, "xid:79", h, t0, days(7)).action, Action::kMigrate);
  EXPECT_EQ(escalate(Action::kNone, "xid:79", h, t0, days(7)).action, Action::kNone);
}

// ---- docs/remediation.md migrate needs evidence
// -----------------------------------------------------------------

TEST(MigrationEvidence, CriticalAlertFiringNowKeepsMigrate) {
  Effective e = require_migration_evidence(Action::kMigrate, true, std::nullopt, t0, days(10));
  EXPECT_EQ(e.action, Action::kMigrate);
  EXPECT_TRUE(e.reason.empty());
}

TEST(MigrationEvidence, CriticalWithin10DaysKeepsMigrate) {
  Effective e = require_migration_evidence(Action::kMigrate, false, t0 - days(9), t0, days(10));
  EXPECT_EQ(e.action, Action::kMigrate);
  EXPECT_TRUE(e.reason.empty());
}

TEST(MigrationEvidence, NoCriticalWithin10DaysFallsBackToReprovision) {
  for (std::optional<Time> last : {std::optional<Time>(t0 - days(11)), std::optional<Time>()}) {
    Effective e = require_migration_evidence(Action::kMigrate, false, last, t0, days(10));
    EXPECT_EQ(e.action, Action::kReprovision);
    EXPECT_NE(e.reason.find("10d"), std::string::npos) << e.reason;  // format_duration(days(10))
    EXPECT_NE(e.reason.find("reprovision"), std::string::npos) << e.reason;
  }
}

TEST(MigrationEvidence, OtherActionsAreUnchanged) {
  for (Action a : {Action::kNone, Action::kReboot, Action::kReprovision}) {
    Effective e = require_migration_evidence(a, false, std::nullopt, t0, days(10));
    EXPECT_EQ(e.action, a);
    EXPECT_TRUE(e.reason.empty());
  }
}

// ---- names on the wire
// ---------------------------------------------------------------------------

TEST(ActionNames, RoundTripAndUnknown) {
  for (Action a :
       {Action::kNone, Action::kReboot, Action::kReprovision, Action::kMigrate, Action::kDelete}) {
    EXPECT_EQ(parse_action(to_string(a)), a);
  }
  EXPECT_EQ(parse_action("Reboot"), std::nullopt);
  EXPECT_EQ(parse_action(""), std::nullopt);
  EXPECT_EQ(to_string(Approval::kAuto), "auto");
  EXPECT_EQ(to_string(Approval::kManual), "manual");
}

}  // namespace
}  // namespace gf::remediate

namespace gf::remediate {
namespace {

TEST(PolicyFaultClass, DefaultsDrainFatalFaultsGoToTheUsualFixAndBudgetTenPercentOfAPool) {
  const Policy p;
  EXPECT_FALSE(p.wait_on_fatal);
  EXPECT_TRUE(p.usual_fix_first);
  EXPECT_EQ(p.suspect_faults, 3);
  EXPECT_EQ(p.suspect_window, days(30));
  EXPECT_EQ(p.disruption_budget(100), 10);
  EXPECT_EQ(p.disruption_budget(5), 1);  // at least one
  const Json j = p.to_json();
  EXPECT_EQ(j["WaitForIdle"]["FatalFaults"], "Drain");
  EXPECT_EQ(j["DisruptionBudget"], "10%");
  EXPECT_EQ(j["UsualFixFirst"], true);
  EXPECT_EQ(j["Suspect"]["Faults"], 3);
}

TEST(PolicyFaultClass, FieldsRoundTripAndBadValuesNameTheField) {
  auto p = Policy::from_json(Json::parse(
      R"({"WaitForIdle": {"MaxWait": "1h", "FatalFaults": "Wait"}, "DisruptionBudget": 3,
          "UsualFixFirst": false, "Suspect": {"Faults": 0, "Window": "7d"}})"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->wait_on_fatal);
  EXPECT_EQ(p->disruption_budget(1000), 3);
  EXPECT_FALSE(p->usual_fix_first);
  EXPECT_EQ(p->suspect_faults, 0);
  auto back = Policy::from_json(p->to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->to_json(), p->to_json());
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"WaitForIdle": {"FatalFaults": "Later"}})", "WaitForIdle.FatalFaults"},
           {R"({"DisruptionBudget": "0%"})", "DisruptionBudget"},
           {R"({"DisruptionBudget": -1})", "DisruptionBudget"},
           {R"({"Suspect": {"Faults": -2}})", "Suspect.Faults"},
           {R"({"Suspect": {"Often": 2}})", "Suspect.Often"},
           {R"({"UsualFixFirst": "yes"})", "UsualFixFirst"}}) {
    auto bad = Policy::from_json(Json::parse(text));
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_TRUE(bad.status().message().starts_with(field)) << bad.status().message();
  }
}

}  // namespace
}  // namespace gf::remediate
