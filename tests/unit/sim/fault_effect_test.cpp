// What the failure model's faults do to the gang on their node (docs/scenarios.md "Failures"):
// a fatal fault stops it at the fault, a hang after the watchdog (hangDetection), a degraded one
// never (the state slows the gang instead: tests/scenario/fault_effects_test.cpp), and the cause's
// fix decides which remediation clears it.
#include <gtest/gtest.h>

#include "scenario/remediation_support.h"
#include "sim/failure_model.h"

namespace gf {
namespace {

// The first fault the model draws on a 2-node fleet whose whole mix is `cause` (at a rate that
// makes one come within minutes), and the effects due at its time and 10 minutes later.
struct Drawn {
  FaultInjection fault;
  std::vector<FaultEffect> at_fault, at_watchdog;
};

Drawn first_fault(const std::string& cause) {
  testing::Fleet f;
  testing::heal_cluster(f, "c", {{"gpu", 2}});
  auto spec = parse_failure_model(
      Json::parse(R"({"ratePer1000NodeDays": 100000, "lemons": {"share": 0}, "mix": {")" + cause +
                  R"(": 1}})"),
      "failures");
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  FailureInjector model(*spec, 5);
  const FleetState& state = f.runtime().loop().state();
  Time now = f.now();
  for (int i = 0; i < 10000; ++i, now += seconds(30)) {
    std::vector<FaultInjection> faults = model.due(state, now);
    if (faults.empty()) continue;
    Drawn d{faults.front(), model.due_effects(now), {}};
    d.at_watchdog = model.due_effects(now + minutes(10));
    return d;
  }
  ADD_FAILURE() << "no fault drawn";
  return {};
}

TEST(FaultEffect, FatalStopsTheGangAtTheFault) {
  const Drawn d = first_fault("hbm");
  EXPECT_EQ(d.fault.effect, health::JobEffect::kFatal);
  ASSERT_TRUE(d.fault.stops_at.has_value());
  EXPECT_EQ(*d.fault.stops_at, d.fault.at);
  ASSERT_EQ(d.at_fault.size(), 1u);
  EXPECT_TRUE(d.at_fault[0].stop);
  EXPECT_EQ(d.at_fault[0].node, d.fault.node);
}

TEST(FaultEffect, HangStopsTheGangWhenTheWatchdogFires) {
  const Drawn d = first_fault("nccl");
  EXPECT_EQ(d.fault.effect, health::JobEffect::kHang);
  ASSERT_TRUE(d.fault.stops_at.has_value());
  EXPECT_EQ(*d.fault.stops_at, d.fault.at + minutes(10));
  EXPECT_TRUE(d.at_fault.empty());  // no progress, but no error yet
  // At the watchdog: the stop, and (no node action fixes a job's own hang) the fault goes away.
  ASSERT_EQ(d.at_watchdog.size(), 2u);
  EXPECT_TRUE(d.at_watchdog[0].stop);
  EXPECT_FALSE(d.at_watchdog[1].stop);
}

TEST(FaultEffect, DegradedNeverStopsTheGangAndOnlyNewHardwareFixesIt) {
  const Drawn d = first_fault("thermal");
  EXPECT_EQ(d.fault.effect, health::JobEffect::kDegraded);
  EXPECT_FALSE(d.fault.stops_at.has_value());
  EXPECT_TRUE(d.at_fault.empty());
  EXPECT_TRUE(d.at_watchdog.empty());
  EXPECT_EQ(d.fault.fix, "replace");
  EXPECT_EQ(d.fault.cleared_by, (std::vector<std::string>{"migrate", "delete"}));
}

TEST(FaultEffect, CauseToFixTable_SoftwareIsFixedByNoNodeActionAndClearsItself) {
  const Drawn d = first_fault("software");
  EXPECT_EQ(d.fault.fix, "none");
  ASSERT_TRUE(d.fault.clears_at.has_value());
  EXPECT_EQ(*d.fault.clears_at, d.fault.at + minutes(10));
  // Only other hardware sidesteps it: a reboot or reprovision leaves it for the job to clear.
  EXPECT_EQ(d.fault.cleared_by, (std::vector<std::string>{"migrate", "delete"}));
}

TEST(FaultEffect, CausesOverridesAreReadAndTheOldRepairKeyIsRefused) {
  auto spec = parse_failure_model(
      Json::parse(R"({"causes": {"gpu": {"effect": "degraded", "fix": {"reboot": 1, "replace": 0},
                      "hangShare": 0}}, "hangDetection": "5m", "remediation": "manual"})"),
      "failures");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->mix.front().name, "gpu");
  EXPECT_EQ(spec->mix.front().effect, health::JobEffect::kDegraded);
  EXPECT_EQ(spec->mix.front().fix_replace, 0);
  EXPECT_EQ(spec->hang_detection, minutes(5));
  EXPECT_EQ(spec->remediation, RemediationMode::kManual);
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"repair": {"reboot": 1}})", "failures.repair: replaced by causes"},
           {R"({"causes": {"gpus": {}}})", "failures.causes.gpus: not a cause"},
           {R"({"causes": {"gpu": {"effect": "crash"}}})", "failures.causes.gpu.effect"},
           {R"({"causes": {"gpu": {"fix": {"reboot": 0, "replace": 0}}}})",
            "failures.causes.gpu.fix: the shares add up to 0"},
           {R"({"remediation": "sometimes"})", "failures.remediation"}}) {
    auto bad = parse_failure_model(Json::parse(text), "failures");
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_TRUE(bad.status().message().starts_with(field)) << bad.status().message();
  }
}

}  // namespace
}  // namespace gf
