// Alerts as journaled state (docs/health.md): the pending → firing → resolved rules, applied by
// state/health_apply.cpp from `alert.signal` (an observation or a clear) and `alert.fired` (the
// health controller's: the persistence window passed while the signal was present). Each test is
// named after the rule of docs/health.md it checks. Times are event times: nothing sleeps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/ids.h"
#include "model/health_records.h"
#include "state/fleet_state.h"
#include "state/health_events.h"

namespace gf {
namespace {

using remediate::AlertRecord;
using remediate::HealthState;

const Time t0 = kSimEpoch;

std::string alert_id(int64_t n) { return numbered_id("alert", n); }

struct Sig {
  std::string node = "node-1";
  std::string detector = "xid";
  std::string subject = "0000:18:00.0";
  std::string fault = "xid:79";
  std::string severity = "critical";
  std::string host = "host-1";
  Duration persistence = minutes(5);
};

// An `alert.signal` payload as remediate/engine.cpp signal_events builds it.
Json present(const Sig& s, std::string evidence = "ev") {
  return Json{{"Cluster", "c1"},
              {"Group", "gpu"},
              {"Node", s.node},
              {"Host", s.host},
              {"Detector", s.detector},
              {"Subject", s.subject},
              {"Fault", s.fault},
              {"Severity", s.severity},
              {"Summary", "GPU fell off the bus"},
              {"Evidence", std::move(evidence)},
              {"Present", true},
              {"PersistenceUs", s.persistence.count()},
              {"Action", "reboot"},
              {"Support", false},
              {"ClearedBy", std::vector<std::string>{}},
              {"Recurs", 0},
              {"Signal", "raw signal"}};
}

// A clear, as remediate/engine.cpp clear_events builds it (a plain clear: "signal cleared").
Json cleared(const Sig& s, std::string resolved_by = "", bool fixed = false,
             std::string evidence = "signal cleared") {
  Json p{{"Cluster", "c1"},
         {"Node", s.node},
         {"Detector", s.detector},
         {"Subject", s.subject},
         {"Fault", s.fault},
         {"Present", false},
         {"Evidence", std::move(evidence)},
         {"Fixed", fixed}};
  p["ResolvedBy"] = resolved_by.empty() ? "signal cleared" : std::move(resolved_by);
  return p;
}

struct Fleet {
  FleetState s;
  Seq seq = 0;

  void apply(std::string_view type, Json payload, Time at) {
    EventRecord r{++seq, std::string(type), payload.dump(), "", at};
    const Status st = s.apply(r);
    ASSERT_TRUE(st.ok()) << type << ": " << st.to_string();
  }
  void signal(Json p, Time at) { apply(event_type::kAlertSignal, std::move(p), at); }
  void fired(const std::string& id, Time at) {
    apply(event_type::kAlertFired, Json{{"AlertId", id}}, at);
  }

  const HealthState& h() const { return s.view().health_state(); }
  const AlertRecord& alert(const std::string& id) const { return h().alerts.at(id); }
};

// ---- persistence window ----

TEST(AlertState, ShorterThanThePersistenceWindowIsDiscardedAndNeverFires) {
  Fleet f;
  Sig s;
  f.signal(present(s), t0);
  EXPECT_EQ(f.alert(alert_id(1)).state, "pending");
  EXPECT_FALSE(f.alert(alert_id(1)).fired_at.has_value());
  EXPECT_EQ(f.h().open_alerts.size(), 1u);

  f.signal(cleared(s), t0 + minutes(2));
  const AlertRecord& a = f.alert(alert_id(1));
  EXPECT_EQ(a.state, "discarded");
  EXPECT_FALSE(a.fired_at.has_value());
  EXPECT_EQ(a.resolved_at, t0 + minutes(2));
  EXPECT_EQ(a.resolved_by, "signal cleared");
  EXPECT_FALSE(a.active());
  EXPECT_TRUE(f.h().open_alerts.empty());
  EXPECT_FALSE(f.h().host_last_critical.contains("host-1"));  // a critical that never fired

  // A late alert.fired for it (the controller raced the clear) changes nothing.
  f.fired(alert_id(1), t0 + minutes(5));
  EXPECT_EQ(f.alert(alert_id(1)).state, "discarded");
  EXPECT_FALSE(f.alert(alert_id(1)).fired_at.has_value());
  ASSERT_GT(f.s.view().events.size(), 0u);
  EXPECT_NE(f.s.view().events.at(f.s.view().events.size() - 1).description.find("discarded"),
            std::string::npos);
}

TEST(AlertState, FiresAtFirstSeenPlusThePersistenceWindow) {
  Fleet f;
  Sig s;
  f.signal(present(s), t0);
  // The controller may notice late; the alert fired when the window ended.
  f.fired(alert_id(1), t0 + minutes(7));
  const AlertRecord& a = f.alert(alert_id(1));
  EXPECT_EQ(a.state, "firing");
  EXPECT_EQ(a.fired_at, t0 + minutes(5));
  EXPECT_EQ(a.persistence, minutes(5));
  EXPECT_TRUE(a.active());
  EXPECT_EQ(f.h().open_alerts.size(), 1u);
}

TEST(AlertState, ConfiguredWindowIsTheOneTheSignalCarries) {
  Fleet f;
  Sig s;
  s.persistence = minutes(1);  // a policy's AlertPersistence for this detector
  f.signal(present(s), t0 + seconds(30));
  f.fired(alert_id(1), t0 + minutes(2));
  EXPECT_EQ(f.alert(alert_id(1)).persistence, minutes(1));
  EXPECT_EQ(f.alert(alert_id(1)).fired_at, t0 + seconds(90));
}

TEST(AlertState, ZeroWindowFiresAtOnce) {
  Fleet f;
  Sig s;
  s.persistence = Duration::zero();
  f.signal(present(s), t0 + minutes(3));
  const AlertRecord& a = f.alert(alert_id(1));
  EXPECT_EQ(a.state, "firing");
  EXPECT_EQ(a.fired_at, t0 + minutes(3));
  // An alert.fired for an alert already firing changes nothing.
  f.fired(alert_id(1), t0 + minutes(9));
  EXPECT_EQ(f.alert(alert_id(1)).fired_at, t0 + minutes(3));
}

// ---- one alert per (node, detector, subject, fault) ----

TEST(AlertState, RepeatedObservationUpdatesTheAlertNotANewOne) {
  Fleet f;
  Sig s;
  f.signal(present(s, "first"), t0);
  f.signal(present(s, "second"), t0 + minutes(1));
  f.fired(alert_id(1), t0 + minutes(5));
  f.signal(present(s, "third"), t0 + minutes(6));
  ASSERT_EQ(f.h().alerts.size(), 1u);
  EXPECT_EQ(f.h().alert_counter, 1);
  const AlertRecord& a = f.alert(alert_id(1));
  EXPECT_EQ(a.state, "firing");
  EXPECT_EQ(a.first_seen, t0);
  EXPECT_EQ(a.last_seen, t0 + minutes(6));
  EXPECT_EQ(a.observations, 3u);
  EXPECT_EQ(a.fired_at, t0 + minutes(5));
}

TEST(AlertState, ClearAfterFiringResolvesWithWhatResolvedIt) {
  Fleet f;
  Sig s;
  f.signal(present(s), t0);
  f.fired(alert_id(1), t0 + minutes(5));
  f.signal(cleared(s, "reboot", /*fixed=*/true, "fixed by reboot"), t0 + minutes(20));
  const AlertRecord& a = f.alert(alert_id(1));
  EXPECT_EQ(a.state, "resolved");
  EXPECT_EQ(a.resolved_by, "reboot");
  EXPECT_EQ(a.resolved_at, t0 + minutes(20));
  EXPECT_EQ(a.fired_at, t0 + minutes(5));
  EXPECT_EQ(a.last_seen, t0 + minutes(20));
  EXPECT_TRUE(f.h().open_alerts.empty());
  // No ResolvedBy: the signal cleared on its own.
  Sig other = s;
  other.subject = "0000:19:00.0";
  other.persistence = Duration::zero();
  f.signal(present(other), t0 + minutes(21));
  f.signal(cleared(other), t0 + minutes(22));
  EXPECT_EQ(f.alert(alert_id(2)).state, "resolved");
  EXPECT_EQ(f.alert(alert_id(2)).resolved_by, "signal cleared");
}

TEST(AlertState, ClearOfAnUnknownAlertChangesNothing) {
  Fleet f;
  Sig s;
  f.signal(cleared(s), t0);
  EXPECT_TRUE(f.h().alerts.empty());
  EXPECT_TRUE(f.h().open_alerts.empty());
  EXPECT_EQ(f.h().alert_counter, 0);
}

TEST(AlertState, ReRaiseAfterResolveIsANewAlert) {
  Fleet f;
  Sig s;
  f.signal(present(s), t0);
  f.fired(alert_id(1), t0 + minutes(5));
  f.signal(cleared(s), t0 + minutes(6));
  f.signal(present(s, "again"), t0 + minutes(10));
  ASSERT_EQ(f.h().alerts.size(), 2u);
  EXPECT_EQ(f.alert(alert_id(1)).state, "resolved");
  const AlertRecord& b = f.alert(alert_id(2));
  EXPECT_EQ(b.state, "pending");
  EXPECT_EQ(b.first_seen, t0 + minutes(10));
  EXPECT_EQ(b.observations, 1u);
  EXPECT_FALSE(b.fired_at.has_value());
  EXPECT_EQ(f.h().open_alerts.at(HealthState::alert_key(s.node, s.detector, s.subject, s.fault)),
            alert_id(2));
}

TEST(AlertState, TwoSubjectsOnOneNodeAreTwoAlerts) {
  Fleet f;
  Sig gpu0, gpu1;
  gpu1.subject = "0000:19:00.0";
  f.signal(present(gpu0), t0);
  f.signal(present(gpu1), t0 + seconds(1));
  ASSERT_EQ(f.h().alerts.size(), 2u);
  EXPECT_EQ(f.alert(alert_id(1)).subject, gpu0.subject);
  EXPECT_EQ(f.alert(alert_id(2)).subject, gpu1.subject);
  // Clearing one leaves the other.
  f.signal(cleared(gpu0), t0 + minutes(1));
  EXPECT_EQ(f.alert(alert_id(1)).state, "discarded");
  EXPECT_EQ(f.alert(alert_id(2)).state, "pending");
  EXPECT_EQ(f.alert(alert_id(2)).observations, 1u);
}

TEST(AlertState, NodeDetectorAndFaultArePartOfTheKey) {
  Fleet f;
  Sig base, other_node = base, other_detector = base, other_fault = base;
  other_node.node = "node-2";
  other_detector.detector = "pcie-bus";
  other_fault.fault = "xid:48";
  for (const Sig* s : {&base, &other_node, &other_detector, &other_fault})
    f.signal(present(*s), t0);
  EXPECT_EQ(f.h().alerts.size(), 4u);
  EXPECT_EQ(f.h().open_alerts.size(), 4u);
}

// ---- evidence ----

TEST(AlertState, EvidenceIsKeptVerbatim) {
  Fleet f;
  Sig s;
  const std::string line =
      "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.\n\t\"x\"";
  f.signal(present(s, line), t0);
  f.signal(present(s, "counters {\"dbe\": 3}"), t0 + seconds(10));
  f.signal(cleared(s, "", false, "gone"), t0 + seconds(20));
  const AlertRecord& a = f.alert(alert_id(1));
  ASSERT_EQ(a.evidence.size(), 3u);
  EXPECT_EQ(a.evidence[0], (health::Evidence{t0, true, line}));
  EXPECT_EQ(a.evidence[1], (health::Evidence{t0 + seconds(10), true, "counters {\"dbe\": 3}"}));
  EXPECT_EQ(a.evidence[2],
            (health::Evidence{t0 + seconds(20), false, "gone"}));  // the clear is kept too
  EXPECT_EQ(a.observations, 3u);
}

TEST(AlertState, EvidenceIsBoundedToTheFirstAndTheLast16) {
  static_assert(remediate::kMaxRecentEvidence == 16);
  Fleet f;
  Sig s;
  const size_t n = remediate::kMaxRecentEvidence;
  const size_t total = 1 + n + 5;
  for (size_t i = 0; i < total; ++i)
    f.signal(present(s, "obs-" + std::to_string(i)), t0 + seconds(i));
  const AlertRecord& a = f.alert(alert_id(1));
  EXPECT_EQ(a.observations, total);
  ASSERT_EQ(a.evidence.size(), 1 + n);
  EXPECT_EQ(a.evidence.front().text, "obs-0");
  for (size_t k = 0; k < n; ++k)
    EXPECT_EQ(a.evidence[1 + k].text, "obs-" + std::to_string(total - n + k)) << k;
  // A clear stays bounded and is the newest entry.
  f.signal(cleared(s, "", false, "clear"), t0 + minutes(1));
  const AlertRecord& b = f.alert(alert_id(1));
  ASSERT_EQ(b.evidence.size(), 1 + n);
  EXPECT_EQ(b.evidence.front().text, "obs-0");
  EXPECT_EQ(b.evidence.back().text, "clear");
  EXPECT_FALSE(b.evidence.back().present);
  EXPECT_EQ(b.observations, total + 1);
}

// ---- what firing and resolving leave behind ----

TEST(AlertState, CriticalFiringRecordsTheHostsLastCritical) {
  Fleet f;
  Sig crit, warn, now;
  warn.detector = "dcgm-thermal";
  warn.fault = "dcgm:thermal";
  warn.severity = "warning";
  warn.host = "host-2";
  now.subject = "0000:20:00.0";
  now.persistence = Duration::zero();
  now.host = "host-3";
  f.signal(present(crit), t0);
  f.signal(present(warn), t0);
  EXPECT_FALSE(f.h().host_last_critical.contains("host-1"));  // pending: not yet
  f.fired(alert_id(1), t0 + minutes(6));
  f.fired(alert_id(2), t0 + minutes(6));
  EXPECT_EQ(f.h().host_last_critical.at("host-1"), t0 + minutes(5));  // when the window ended
  EXPECT_FALSE(f.h().host_last_critical.contains("host-2"));          // warning: not critical
  f.signal(present(now), t0 + minutes(8));                            // zero window: at once
  EXPECT_EQ(f.h().host_last_critical.at("host-3"), t0 + minutes(8));
  EXPECT_EQ(f.alert(alert_id(1)).severity, health::Severity::kCritical);
  EXPECT_EQ(f.alert(alert_id(2)).severity, health::Severity::kWarning);
}

TEST(AlertState, FixedClearOfARecurringFaultSchedulesItsRecurrence) {
  Fleet f;
  Sig s;
  s.persistence = Duration::zero();
  Json p = present(s);
  p["Recurs"] = 2;
  f.signal(p, t0);
  f.signal(cleared(s, "reboot", /*fixed=*/true), t0 + minutes(30));
  ASSERT_EQ(f.h().recurrences.size(), 1u);
  EXPECT_EQ(*f.h().recurrences.begin(),
            std::make_pair(t0 + minutes(40), alert_id(1)));  // default 10 min

  // RecurAfterUs sets the delay; a clear that did not fix it (Fixed=false) schedules nothing.
  Sig s2 = s, s3 = s;
  s2.subject = "gpu-2";
  s3.subject = "gpu-3";
  Json p2 = present(s2), p3 = present(s3);
  p2["Recurs"] = 1;
  p3["Recurs"] = 1;
  f.signal(p2, t0 + minutes(31));
  f.signal(p3, t0 + minutes(31));
  Json c2 = cleared(s2, "reboot", true);
  c2["RecurAfterUs"] = minutes(3).count();
  f.signal(c2, t0 + minutes(32));
  f.signal(cleared(s3), t0 + minutes(32));
  EXPECT_EQ(f.h().recurrences.size(), 2u);
  EXPECT_TRUE(f.h().recurrences.contains({t0 + minutes(35), alert_id(2)}));

  // A pending alert that clears is discarded: nothing recurs.
  Sig s4 = s;
  s4.subject = "gpu-4";
  s4.persistence = minutes(5);
  Json p4 = present(s4);
  p4["Recurs"] = 1;
  f.signal(p4, t0 + minutes(33));
  f.signal(cleared(s4, "reboot", true), t0 + minutes(34));
  EXPECT_EQ(f.h().recurrences.size(), 2u);

  // alert.recurred takes it off the schedule and stops further recurrences of that alert.
  f.apply(event_type::kAlertRecurred, Json{{"AlertId", alert_id(1)}}, t0 + minutes(40));
  EXPECT_EQ(f.h().recurrences.size(), 1u);
  EXPECT_EQ(f.alert(alert_id(1)).recurs, 0);
}

TEST(AlertState, AppliesWithoutTheClusterExisting) {
  Fleet f;
  Sig s;
  f.signal(present(s), t0);
  ASSERT_EQ(f.s.view().events.size(), 1u);
  const UserEvent& e = f.s.view().events.at(0);
  EXPECT_EQ(e.resource_type, "Alert");
  EXPECT_EQ(e.cluster_name, "");  // no such cluster: the event carries none
  EXPECT_NE(e.description.find(alert_id(1)), std::string::npos);
}

// ---- snapshots ----

TEST(AlertState, HealthStateSnapshotRoundTripGivesAnEqualHash) {
  Fleet f;
  Sig pending, firing, resolved, discarded;
  firing.subject = "gpu-1";
  resolved.subject = "gpu-2";
  discarded.subject = "gpu-3";
  f.signal(present(pending, "p"), t0);
  f.signal(present(firing, "f"), t0);
  f.signal(present(resolved, "r"), t0);
  f.signal(present(discarded, "d"), t0 + minutes(3));
  f.fired(alert_id(2), t0 + minutes(5));
  f.fired(alert_id(3), t0 + minutes(5));
  f.signal(cleared(resolved, "reboot", true), t0 + minutes(6));
  f.signal(cleared(discarded), t0 + minutes(6));
  f.apply(event_type::kAlertDelivered,
          Json{{"AlertId", alert_id(2)}, {"Target", "webhook"}, {"State", "firing"}},
          t0 + minutes(6));

  remediate::Policy pol;
  pol.cooldown = minutes(10);
  pol.persistence["xid"] = minutes(1);
  f.apply(event_type::kRemediationPolicySet, Json{{"Cluster", "c1"}, {"Policy", pol.to_json()}},
          t0 + minutes(7));

  remediate::Remediation r;
  r.id = numbered_id("rem", 1);
  r.cluster = "c1";
  r.node = "node-1";
  r.group = "gpu";
  r.host = "host-1";
  r.fault = "xid:79";
  r.detector = "xid";
  r.request_id = "req-1";
  r.action = remediate::Action::kReboot;
  r.effective = remediate::Action::kMigrate;
  r.effective_reason = "third reboot in 7 days";
  r.requester = "detector";
  r.rule = "default:xid";
  r.evidence = {alert_id(2)};
  r.created_at = t0 + minutes(8);
  f.apply(event_type::kRemediationProposed, Json{{"Remediation", r.to_canonical()}},
          t0 + minutes(8));
  auto update = [&](const std::string& status, Json extra, Time at) {
    Json p{{"RemediationId", r.id}, {"Status", status}, {"Reason", status + " now"}};
    for (auto it = extra.begin(); it != extra.end(); ++it) p[it.key()] = it.value();
    f.apply(event_type::kRemediationUpdated, std::move(p), at);
  };
  update("Approved", Json{{"By", "alice"}}, t0 + minutes(9));
  update("WaitingForIdle", Json{{"IdleDeadlineUs", to_micros(t0 + hours(2))}}, t0 + minutes(10));
  update("Draining", Json::object(), t0 + minutes(11));
  update("Executing", Json::object(), t0 + minutes(12));
  update("Rejoining", Json::object(), t0 + minutes(13));  // migrate: host-1 goes to inspection
  update("Succeeded", Json::object(), t0 + minutes(14));
  f.apply(event_type::kHostStatus,
          Json{{"HostId", "host-1"}, {"Status", "BurnIn"}, {"Reason", "burn-in"}},
          t0 + minutes(15));
  // The inspection index follows the host's status, and a snapshot rebuilds it.
  EXPECT_EQ(f.h().hosts_in_inspection, (std::set<std::string, std::less<>>{"host-1"}));
  EXPECT_EQ(HealthState::from_json(f.h().to_json())->hosts_in_inspection,
            f.h().hosts_in_inspection);
  f.apply(
      event_type::kHostStatus,
      Json{{"HostId", "host-1"},
           {"Status", "Repair"},
           {"Reason", "NCCL all-reduce below threshold"},
           {"Checks",
            Json::array({Json{{"Name", "nccl"}, {"Result", "Fail"}, {"Log", "busbw 12 GB/s"}}})}},
      t0 + minutes(16));
  f.apply(event_type::kBreakerTripped,
          Json{{"Cluster", "c1"}, {"Reason", "6 auto-approvals in 1h"}}, t0 + minutes(17));

  const HealthState& h = f.h();
  ASSERT_EQ(h.alerts.size(), 4u);
  ASSERT_EQ(h.remediations.size(), 1u);
  ASSERT_EQ(h.hosts.size(), 1u);
  ASSERT_EQ(h.tickets.size(), 1u);
  ASSERT_EQ(h.policies.size(), 1u);
  ASSERT_EQ(h.breakers.size(), 1u);
  ASSERT_EQ(h.recurrences.size(), 0u);
  EXPECT_EQ(h.hosts.at("host-1").status, "Repair");
  EXPECT_TRUE(h.hosts_in_inspection.empty());
  EXPECT_EQ(h.hosts.at("host-1").last_critical, t0 + minutes(5));

  auto restored = FleetState::from_json(f.s.to_json());
  ASSERT_TRUE(restored.ok()) << restored.status().to_string();
  EXPECT_EQ(restored->hash(), f.s.hash());
  EXPECT_EQ(restored->to_json(), f.s.to_json());
  EXPECT_EQ(HealthState::from_json(h.to_json())->to_json(), h.to_json());

  // What the snapshot does not store is rebuilt: the open-alert, request and per-node indexes.
  const HealthState& g = restored->view().health_state();
  EXPECT_EQ(g.open_alerts, h.open_alerts);
  EXPECT_EQ(g.requests, h.requests);
  EXPECT_EQ(h.by_node.at("node-1"), std::vector<std::string>{r.id});
  EXPECT_EQ(g.by_node, h.by_node);
  EXPECT_TRUE(g.open_by_node.empty());
  // Cooldown rule: the node rests for c1's cooldown after its remediation acted and ended.
  EXPECT_EQ(h.cooldown_until("node-1"), t0 + minutes(14) + minutes(10));
  EXPECT_EQ(g.cooldown_until("node-1"), h.cooldown_until("node-1"));
  EXPECT_EQ(h.cooldown_until("node-2"), std::nullopt);
  EXPECT_EQ(g.host_last_critical, h.host_last_critical);
  EXPECT_EQ(g.policies.at("c1"), h.policies.at("c1"));
  EXPECT_EQ(g.policies.at("c1").persistence_for("xid"), minutes(1));
  EXPECT_EQ(g.policies.at("c1").cooldown, minutes(10));
  EXPECT_EQ(g.breakers.at("c1"), h.breakers.at("c1"));
  EXPECT_EQ(g.alerts.at(alert_id(2)).delivered, h.alerts.at(alert_id(2)).delivered);
  EXPECT_EQ(g.alerts.at(alert_id(1)).evidence, h.alerts.at(alert_id(1)).evidence);
  EXPECT_EQ(g.tickets.at(0).checks, h.tickets.at(0).checks);

  // And both go on the same way: the restored state clears and re-raises like the original.
  Fleet g2{std::move(*restored), f.seq};
  for (Fleet* x : {&f, &g2}) {
    x->signal(cleared(pending, "reprovision", true), t0 + minutes(20));
    x->signal(present(pending, "again"), t0 + minutes(21));
  }
  EXPECT_EQ(g2.alert(alert_id(1)).state, "discarded");
  EXPECT_EQ(g2.alert(alert_id(5)).state, "pending");
  EXPECT_EQ(g2.s.hash(), f.s.hash());
}

TEST(AlertState, SnapshotWithRecurrencesRoundTrips) {
  Fleet f;
  Sig s;
  s.persistence = Duration::zero();
  Json p = present(s);
  p["Recurs"] = 3;
  p["ClearedBy"] = std::vector<std::string>{"reprovision"};
  f.signal(p, t0);
  f.signal(cleared(s, "reprovision", true), t0 + minutes(1));
  ASSERT_EQ(f.h().recurrences.size(), 1u);
  auto restored = FleetState::from_json(f.s.to_json());
  ASSERT_TRUE(restored.ok()) << restored.status().to_string();
  EXPECT_EQ(restored->hash(), f.s.hash());
  EXPECT_EQ(restored->view().health_state().recurrences, f.h().recurrences);
  EXPECT_EQ(restored->view().health_state().alerts.at(alert_id(1)).cleared_by,
            std::vector<std::string>{"reprovision"});
  EXPECT_EQ(restored->view().health_state().alerts.at(alert_id(1)).signal, Json("raw signal"));
}

}  // namespace
}  // namespace gf
