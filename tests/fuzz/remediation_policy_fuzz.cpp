// The remediation policy (remediate/policy.h): the body of PUT
// /v1/clusters/{name}/remediation-policy and `gpufleet policy set -f`. The input is one JSON or
// YAML document.
//
// Invariants checked:
//  - Policy::from_json never throws, and a refusal says why;
//  - an accepted policy's wire form (to_json, what GET answers) is accepted again and is a fixed
//    point: reading it back and writing it again gives the same document;
//  - its windows and limits are usable: no negative duration, each can be added to a time a
//    century from now, MaxConcurrent is at least 1 for any cluster size, escalation and
//    migration-evidence checks answer for an attempt of any age;
//  - every rule is reachable: a fault equal to the rule's own pattern matches that rule or a
//    more specific one.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/remediation_policy.h"

namespace gf::remediate {
namespace {

void check_policy(const Policy& p) {
  for (const auto& [detector, d] : p.persistence) {
    FUZZ_CHECK(d >= Duration::zero(), detector + ": " + std::to_string(d.count()));
  }
  FUZZ_CHECK(!p.max_wait || *p.max_wait >= Duration::zero(), format_duration(*p.max_wait));
  FUZZ_CHECK(p.cooldown >= Duration::zero(), format_duration(p.cooldown));
  FUZZ_CHECK(p.breaker_window > Duration::zero(), format_duration(p.breaker_window));
  FUZZ_CHECK(p.escalation_window >= Duration::zero(), format_duration(p.escalation_window));
  FUZZ_CHECK(p.migration_evidence_window >= Duration::zero(),
             format_duration(p.migration_evidence_window));
  for (int64_t nodes : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{100000}}) {
    FUZZ_CHECK(p.max_concurrent(nodes) >= 1, std::to_string(nodes));
  }

  // The windows are compared with the age of past events and added to times (completion +
  // Cooldown, now + MaxWait): an attempt from the simulation's start, seen a century later,
  // must be judged without overflow (UBSan reports one).
  const Time now = kSimEpoch + days(36500);
  for (Duration d : {p.cooldown, p.breaker_window, p.escalation_window, p.migration_evidence_window,
                     p.max_wait.value_or(Duration::zero())}) {
    FUZZ_CHECK(now + d > now || d == Duration::zero(), format_duration(d));
  }
  for (const auto& [detector, d] : p.persistence) FUZZ_CHECK(now + d >= now, detector);
  const std::vector<Attempt> history = {{Action::kReboot, "xid:79", kSimEpoch, true},
                                        {Action::kReboot, "xid:79", now, true}};
  const Effective e = escalate(Action::kReboot, "xid:79", history, now, p.escalation_window);
  FUZZ_CHECK(e.action == Action::kReboot || e.action == Action::kReprovision, e.reason);
  const Effective m = require_migration_evidence(Action::kMigrate, false, kSimEpoch, now,
                                                 p.migration_evidence_window);
  FUZZ_CHECK(m.action == Action::kMigrate || !m.reason.empty(), m.reason);

  for (const Rule& rule : p.rules) {
    const RuleMatch got = match(p, rule.fault, rule.fault, rule.node_pool);
    FUZZ_CHECK(!got.rule.empty() && !got.support, rule.fault + " -> " + got.rule);
  }
}

}  // namespace
}  // namespace gf::remediate

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gf::remediate::Policy;
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  gf::Json doc;
  if (!gf::fuzz::parse_one(gf::fuzz::as_text(data, size), doc)) return 0;

  const gf::Result<Policy> policy = Policy::from_json(doc);
  if (!policy.ok()) {
    FUZZ_CHECK_ERROR(policy.status());
    return 0;
  }
  gf::remediate::check_policy(*policy);

  const gf::Json wire = policy->to_json();
  const gf::Result<Policy> again = Policy::from_json(wire);
  FUZZ_CHECK(again.ok(), gf::fuzz::dump(wire) + "\n" + again.status().to_string());
  FUZZ_CHECK(again->to_json() == wire,
             gf::fuzz::dump(wire) + "\nbecame\n" + gf::fuzz::dump(again->to_json()));
  // What the wire form cannot tell apart ("*" persistence written out with its default) aside,
  // reading it back gives the same policy.
  Policy expected = *policy;
  expected.persistence.try_emplace("*", again->persistence.at("*"));
  FUZZ_CHECK(*again == expected, gf::fuzz::dump(wire));
  return 0;
}
