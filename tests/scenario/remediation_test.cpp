// Health alerts and automatic remediation through the real API on a virtual clock (issue 6,
// docs/remediation.md): one test per rule, named after it.
#include <gtest/gtest.h>

#include "scenario/remediation_support.h"

#include <set>

// Designated test structs name only the fields a test cares about.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace gf {
namespace {

using testing::Fleet;
using namespace gf::testing;

std::string status_of(Fleet& f, const std::string& id) {
  return remediation(f, id).value("Status", "");
}

// Acceptance 1: Xid 119 and Xid 95 on busy nodes. The reboot is auto-approved (default policy),
// waits for the job to finish or 2 h, then cordon → drain → reboot → rejoin; the gang that was
// evicted is placed again; the timeline is in the events.
TEST(Remediation,
     Xid119AndXid95OnBusyNodes_AutoApprovedRebootWaitsForIdleThenCordonDrainRebootRejoin) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 6}});
  put_policy(f, "heal", classic_policy());
  run_job(f, "short", 1, "1h");
  run_job(f, "long", 1, "10h");
  const std::vector<std::string> short_nodes = job_nodes(f, "short"),
                                 long_nodes = job_nodes(f, "long");
  ASSERT_EQ(short_nodes.size(), 2u);
  ASSERT_EQ(long_nodes.size(), 2u);
  const Time t0 = f.now();

  // Xid 119 on a node of the 1-hour job.
  HttpResponse r = send_signal(f, "heal", short_nodes[0], kXid119);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json::parse(r.body)["Detections"][0]["Fault"], "xid:119");
  Json a = alerts(f, short_nodes[0]);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["State"], "pending");
  EXPECT_EQ(a[0]["Severity"], "critical");
  EXPECT_EQ(a[0]["Evidence"][0]["Text"], kXid119);  // verbatim
  EXPECT_TRUE(remediations(f).empty()) << "no proposal before the alert fires";

  f.run_for(minutes(6));
  a = alerts(f, short_nodes[0]);
  EXPECT_EQ(a[0]["State"], "firing");
  Json rems = remediations(f, short_nodes[0]);
  ASSERT_EQ(rems.size(), 1u);
  const std::string id = rems[0]["RemediationId"];
  EXPECT_EQ(rems[0]["EffectiveAction"], "reboot");
  EXPECT_EQ(rems[0]["Requester"], "detector:xid");
  EXPECT_EQ(rems[0]["Approver"], "policy:default:xid:119");
  EXPECT_EQ(rems[0]["Status"], "WaitingForIdle");
  EXPECT_TRUE(node_of(f, "heal", short_nodes[0]).cordoned);
  EXPECT_EQ(job_state(f, "short"), "Running")
      << "the job is not interrupted while the node waits for idle";

  // The job ends at 1 h: drain, reboot, rejoin.
  f.run_until(t0 + minutes(61));
  EXPECT_EQ(job_state(f, "short"), "Succeeded");
  f.run_until(t0 + minutes(75));
  Json done = remediation(f, id);
  EXPECT_EQ(done["Status"], "Succeeded") << done.dump(2);
  EXPECT_FALSE(node_of(f, "heal", short_nodes[0]).cordoned);
  EXPECT_EQ(alerts(f, short_nodes[0])[0]["State"], "resolved");
  EXPECT_EQ(alerts(f, short_nodes[0])[0]["ResolvedBy"], "reboot");
  const std::string timeline = done["Timeline"].dump();
  for (const char* step :
       {"proposed", "WaitingForIdle", "Draining", "Executing", "Rejoining", "Succeeded"}) {
    EXPECT_NE(timeline.find(step), std::string::npos) << step << " missing from " << timeline;
  }
  EXPECT_FALSE(
      f.events_containing("instance rebooted (local scratch and temporary data kept)").empty());

  // Xid 95 on a node of the 10-hour job: the reboot waits at most 2 h, then evicts the gang, which
  // restarts on other nodes.
  const Time t1 = f.now();
  ASSERT_EQ(send_signal(f, "heal", long_nodes[0], kXid95).status, 200);
  f.run_until(t1 + minutes(6));
  rems = remediations(f, long_nodes[0]);
  ASSERT_EQ(rems.size(), 1u);
  const std::string id95 = rems[0]["RemediationId"];
  EXPECT_EQ(rems[0]["Status"], "WaitingForIdle");
  // Fired at t1 + 5 min (the persistence window), cordoned at once: evicted at t1 + 5 min + 2 h.
  f.run_until(t1 + minutes(5) + hours(2) - minutes(1));
  EXPECT_EQ(status_of(f, id95), "WaitingForIdle");
  EXPECT_EQ(job_nodes(f, "long"), long_nodes);
  f.run_until(t1 + minutes(5) + hours(2) + seconds(1));
  EXPECT_NE(status_of(f, id95), "WaitingForIdle");
  const std::vector<std::string> moved = job_nodes(f, "long");
  ASSERT_EQ(moved.size(), 2u) << "the evicted gang is placed again";
  EXPECT_EQ(std::count(moved.begin(), moved.end(), long_nodes[0]), 0);
  EXPECT_EQ(job_state(f, "long"), "Running");
  f.run_for(minutes(15));
  EXPECT_EQ(status_of(f, id95), "Succeeded");
  EXPECT_NE(remediation(f, id95)["Timeline"].dump().find("max wait reached"), std::string::npos);
}

// Acceptance 2: a migrate proposal waits for a person; approval by a second identity runs it; the
// requester cannot approve its own migrate.
TEST(Remediation, MigrateWaitsForApproval_SecondIdentityApproves_RequesterCannotApproveOwn) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 3}});
  const std::vector<std::string> n = group_nodes(f, "heal", "workers");
  // DCGM row-remap failure: migrate [critical], approval by a person (default policy).
  ASSERT_EQ(send_signal(f, "heal", n[0],
                        Json{{"dcgm", {{"field", "DCGM_FI_DEV_ROW_REMAP_FAILURE"}, {"value", 1}}}})
                .status,
            200);
  f.run_for(minutes(6));
  Json rems = remediations(f, n[0]);
  ASSERT_EQ(rems.size(), 1u);
  EXPECT_EQ(rems[0]["EffectiveAction"], "migrate");
  EXPECT_EQ(rems[0]["Status"], "Proposed");
  EXPECT_EQ(rems[0]["Requester"], "detector:dcgm-row-remap");
  f.run_for(hours(3));
  EXPECT_EQ(status_of(f, rems[0]["RemediationId"]), "Proposed") << "nothing runs without a person";
  HttpResponse ok =
      f.call_as("alice", "POST",
                "/v1/remediations/" + rems[0]["RemediationId"].get<std::string>() + "/approve");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(Json::parse(ok.body)["Approver"], "alice");
  const std::string old_host = node_of(f, "heal", n[0]).host();
  f.run_for(minutes(30));
  Json done = remediation(f, rems[0]["RemediationId"]);
  EXPECT_EQ(done["Status"], "Succeeded") << done.dump(2);
  EXPECT_EQ(done["Approver"], "alice");
  EXPECT_NE(node_of(f, "heal", n[0]).host(), old_host)
      << "migrate moves the node to other hardware";

  // A person's own migrate request: alice asks, alice may not approve, bob may.
  ASSERT_EQ(send_signal(f, "heal", n[1], kXid79).status, 200);
  put_policy(f, "heal",
             Json{{"Rules", {{{"Fault", "xid:79"}, {"Action", "none"}}}}});  // no detector proposal
  f.run_for(minutes(6));
  HttpResponse req = f.call_as("alice", "POST", "/v1/remediations",
                               Json{{"ClusterName", "heal"},
                                    {"NodeId", n[1]},
                                    {"Action", "migrate"},
                                    {"Detector", "ops"},
                                    {"RequestId", "r-1"},
                                    {"Reason", "flaky GPU"}}
                                   .dump());
  ASSERT_EQ(req.status, 201) << req.body;
  const std::string id = Json::parse(req.body)["RemediationId"];
  EXPECT_EQ(Json::parse(req.body)["Requester"], "alice");
  EXPECT_EQ(Json::parse(req.body)["Status"], "Proposed");
  HttpResponse own = f.call_as("alice", "POST", "/v1/remediations/" + id + "/approve");
  EXPECT_EQ(own.status, 400) << own.body;
  EXPECT_NE(own.body.find("cannot approve"), std::string::npos) << own.body;
  EXPECT_EQ(status_of(f, id), "Proposed") << "a refused approval changes nothing";
  HttpResponse bob = f.call_as("bob", "POST", "/v1/remediations/" + id + "/approve");
  ASSERT_EQ(bob.status, 200) << bob.body;
  f.run_for(minutes(30));
  EXPECT_EQ(status_of(f, id), "Succeeded");
  EXPECT_EQ(remediation(f, id)["Approver"], "bob");
}

// A job that runs `duration` on two nodes, and a reboot-worthy fault on one of them: the time its
// remediation left WaitingForIdle, counted from when the alert fired.
Duration wait_for_idle_with(const Json& policy, const std::string& duration,
                            std::string* how = nullptr) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 4}});
  put_policy(f, "heal", classic_policy(policy.is_null() ? Json::object() : policy));
  run_job(f, "train", 1, duration);
  const std::string node = job_nodes(f, "train").at(0);
  const Time t0 = f.now();
  EXPECT_EQ(send_signal(f, "heal", node, kXid119).status, 200);
  f.run_for(minutes(5));
  const Time fired = f.now();
  Json rems = remediations(f, node);
  EXPECT_EQ(rems.size(), 1u);
  if (rems.empty()) return Duration::zero();
  const std::string id = rems[0]["RemediationId"];
  while (status_of(f, id) == "WaitingForIdle" && f.now() - t0 < hours(60)) f.run_for(minutes(1));
  if (how) *how = remediation(f, id)["Timeline"].dump();
  return f.now() - fired;
}

// Acceptance 3: the default 2 h limit evicts a long job at 2 h; a 24 h policy waits 24 h; "never
// interrupt" waits until the job ends; a limit above 24 h is refused.
TEST(Remediation, WaitForIdle_DefaultTwoHoursEvictsLongJobAtTwoHours) {
  std::string how;
  const Duration waited = wait_for_idle_with(Json(nullptr), "30h", &how);
  EXPECT_GE(waited, hours(2));
  EXPECT_LE(waited, hours(2) + minutes(1));
  EXPECT_NE(how.find("max wait reached"), std::string::npos) << how;
}

TEST(Remediation, WaitForIdle_PolicyOf24hWaits24h) {
  const Duration waited = wait_for_idle_with(Json{{"WaitForIdle", {{"MaxWait", "24h"}}}}, "30h");
  EXPECT_GE(waited, hours(24));
  EXPECT_LE(waited, hours(24) + minutes(1));
}

TEST(Remediation, WaitForIdle_NeverInterruptWaitsUntilTheJobEndsHoweverLong) {
  std::string how;
  const Duration waited = wait_for_idle_with(Json{{"WaitForIdle", {{"Never", true}}}}, "40h", &how);
  EXPECT_GE(waited, hours(40) - minutes(6));
  EXPECT_LE(waited, hours(40));
  EXPECT_NE(how.find("node idle"), std::string::npos) << how;
}

TEST(Remediation, WaitForIdle_MaxWaitAbove24hIsRefusedAndChangesNothing) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 1}});
  HttpResponse r = f.call("PUT", "/v1/clusters/heal/remediation-policy",
                          Json{{"WaitForIdle", {{"MaxWait", "25h"}}}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("WaitForIdle.MaxWait"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("24h cap"), std::string::npos) << r.body;
  EXPECT_EQ(f.json("GET", "/v1/clusters/heal/remediation-policy")["WaitForIdle"]["MaxWait"], "2h");
}

// Runs the node through proposals until one is not auto-approved or `count` ran; returns the
// effective actions in order.
std::vector<std::string> ladder(Fleet& f, const std::string& node, size_t count) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (int step = 0; step < 24 * 60 && out.size() < count; ++step) {
    f.run_for(minutes(10));
    for (const Json& r : remediations(f, node)) {
      const std::string id = r["RemediationId"];
      if (seen.contains(id)) continue;
      seen.insert(id);
      out.push_back(r["EffectiveAction"]);
      if (r["Status"] == "Proposed") return out;
    }
  }
  return out;
}

// Acceptance 4: the same fault coming back after two reboots → the third proposal is reprovision;
// after two reprovisions → migrate (which waits for a person).
TEST(Remediation, Escalation_ThirdRebootBecomesReprovision_ThirdReprovisionBecomesMigrate) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  put_policy(f, "heal", classic_policy());
  const std::string node = group_nodes(f, "heal", "workers")[0];
  ASSERT_EQ(send_signal(f, "heal", node, kXid79, Json{{"Recurs", 4}}).status, 200);
  const std::vector<std::string> actions = ladder(f, node, 5);
  EXPECT_EQ(actions, (std::vector<std::string>{"reboot", "reboot", "reprovision", "reprovision",
                                               "migrate"}));
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 5u);
  EXPECT_EQ(rems[2]["Action"], "reboot");
  EXPECT_NE(rems[2]["EffectiveActionReason"].get<std::string>().find("after 2 reboots"),
            std::string::npos)
      << rems[2].dump();
  EXPECT_NE(rems[4]["EffectiveActionReason"].get<std::string>().find("after 2 reprovisions"),
            std::string::npos)
      << rems[4].dump();
  EXPECT_EQ(rems[4]["Status"], "Proposed") << "migrate needs a person";
  EXPECT_FALSE(
      f.events_containing("instance reprovisioned from a clean image (local data lost)").empty());
}

TEST(Remediation, Escalation_OldAttemptsCancelledProposalsAndSelfClearedFaultsDoNotCount) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  put_policy(f, "heal", classic_policy());
  const std::string node = group_nodes(f, "heal", "workers")[0];
  // Reboot #1 runs (fires at 5 min, reboot 5 min, checks 2 min).
  ASSERT_EQ(send_signal(f, "heal", node, kXid79).status, 200);
  f.run_for(minutes(15));
  ASSERT_EQ(remediations(f, node).size(), 1u);
  ASSERT_EQ(remediations(f, node)[0]["Status"], "Succeeded");
  // The fault comes back but clears by itself while its remediation waits for the cooldown.
  ASSERT_EQ(send_signal(f, "heal", node, kXid79).status, 200);
  f.run_for(minutes(6));
  Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 2u);
  EXPECT_EQ(rems[1]["Status"], "Approved");
  ASSERT_EQ(clear_signal(f, "heal", node).status, 200);
  f.run_for(minutes(1));
  EXPECT_EQ(status_of(f, rems[1]["RemediationId"]), "Cancelled");
  f.run_for(hours(1));
  // Reboot #2 runs: still a reboot (one counted attempt).
  ASSERT_EQ(send_signal(f, "heal", node, kXid79).status, 200);
  f.run_for(hours(1));
  rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 3u);
  EXPECT_EQ(rems[2]["EffectiveAction"], "reboot");
  EXPECT_EQ(rems[2]["Status"], "Succeeded");
  // Eight days later both reboots are older than the 7-day window: a reboot again.
  f.run_for(hours(24 * 8));
  ASSERT_EQ(send_signal(f, "heal", node, kXid79).status, 200);
  f.run_for(minutes(6));
  rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 4u);
  EXPECT_EQ(rems[3]["EffectiveAction"], "reboot") << rems[3].dump();
}

// Acceptance 5: migrate without a critical alert now or within 10 days → reprovision, reason
// recorded.
TEST(Remediation, MigrateWithoutCriticalEvidence_BecomesReprovisionWithTheReason) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  put_policy(f, "heal", classic_policy());
  const std::string node = group_nodes(f, "heal", "workers")[0];
  // Sustained thermal throttle: migrate [warning] — a warning is no evidence for migrate.
  ASSERT_EQ(send_signal(
                f, "heal", node,
                Json{{"dcgm", {{"field", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}, {"value", "0x40"}}}})
                .status,
            200);
  f.run_for(minutes(6));
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  EXPECT_EQ(rems[0]["Action"], "migrate");
  EXPECT_EQ(rems[0]["EffectiveAction"], "reprovision");
  EXPECT_NE(rems[0]["EffectiveActionReason"].get<std::string>().find("critical alert"),
            std::string::npos)
      << rems[0].dump();
  EXPECT_NE(rems[0]["EffectiveActionReason"].get<std::string>().find("10d"), std::string::npos)
      << rems[0].dump();
}

TEST(Remediation, MigrateWithACriticalAlertOnTheMachineWithin10Days_StaysMigrate) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  put_policy(f, "heal", Json{{"Rules", {{{"Fault", "xid:79"}, {"Action", "none"}}}}});
  ASSERT_EQ(send_signal(f, "heal", node, kXid79).status, 200);  // critical, recorded only
  f.run_for(minutes(6));
  ASSERT_EQ(clear_signal(f, "heal", node).status, 200);
  f.run_for(hours(24 * 9));  // nine days later: no critical alert firing now, one within 10 days
  ASSERT_EQ(send_signal(
                f, "heal", node,
                Json{{"dcgm", {{"field", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}, {"value", "0x40"}}}})
                .status,
            200);
  f.run_for(minutes(6));
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  EXPECT_EQ(rems[0]["EffectiveAction"], "migrate") << rems[0].dump();
}

// Acceptance 6: an alert shorter than its window never fires; a proposal whose alert clears before
// it starts is cancelled.
TEST(Remediation, AlertShorterThanItsPersistenceWindow_NeverFires) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  ASSERT_EQ(send_signal(f, "heal", node, kXid119).status, 200);
  f.run_for(minutes(3));
  ASSERT_EQ(clear_signal(f, "heal", node).status, 200);
  f.run_for(hours(2));
  const Json a = alerts(f, node);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["State"], "discarded");
  EXPECT_TRUE(a[0]["FiredAt"].is_null());
  EXPECT_TRUE(remediations(f).empty());
}

TEST(Remediation, ProposalWhoseAlertClearsBeforeItStarts_IsCancelledWithTheReason) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  put_policy(
      f, "heal",
      Json{{"Rules", {{{"Fault", "xid:119"}, {"Action", "reboot"}, {"Approval", "manual"}}}}});
  ASSERT_EQ(send_signal(f, "heal", node, kXid119).status, 200);
  f.run_for(minutes(6));
  Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  EXPECT_EQ(rems[0]["Status"], "Proposed");
  ASSERT_EQ(clear_signal(f, "heal", node).status, 200);
  f.run_for(seconds(1));
  const Json r = remediation(f, rems[0]["RemediationId"]);
  EXPECT_EQ(r["Status"], "Cancelled");
  EXPECT_NE(r["Reason"].get<std::string>().find("resolved before the remediation started"),
            std::string::npos)
      << r.dump();
  EXPECT_FALSE(node_of(f, "heal", node).cordoned);
}

// Acceptance 7: cooldown.
TEST(Remediation, Cooldown_SecondFaultWithin30MinOfARemediationWaitsForTheCooldown) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  ASSERT_EQ(send_signal(f, "heal", node, kXid119).status, 200);
  f.run_for(minutes(20));
  Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  ASSERT_EQ(rems[0]["Status"], "Succeeded");
  const Time completed = parse_iso8601(rems[0]["CompletedAt"].get<std::string>()).value();
  ASSERT_EQ(
      send_signal(f, "heal", node, "INFO: task python:4242 blocked for more than 120 seconds.")
          .status,
      200);
  f.run_for(minutes(6));
  rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 2u);
  EXPECT_EQ(rems[1]["Status"], "Approved");
  EXPECT_NE(rems[1]["Reason"].get<std::string>().find("cooldown"), std::string::npos)
      << rems[1].dump();
  f.run_for(hours(1));
  const Json second = remediation(f, rems[1]["RemediationId"]);
  ASSERT_FALSE(second["StartedAt"].is_null());
  EXPECT_GE(parse_iso8601(second["StartedAt"].get<std::string>()).value(), completed + minutes(30));
  EXPECT_EQ(second["Status"], "Succeeded");
}

// Acceptance 7: 20 nodes of one pool fail at once. At every instant at most the concurrency cap
// runs and at most one per pool; the circuit breaker trips on the surge and halts automatic
// remediation until a person resets it.
TEST(Remediation,
     SurgeOf20NodesInOnePool_CapAndOnePerPoolHoldAtEveryInstant_BreakerTripsUntilReset) {
  Fleet f;
  heal_cluster(f, "heal", {{"pool-a", 20}, {"pool-b", 20}});
  put_policy(f, "heal", classic_policy());
  const std::vector<std::string> a = group_nodes(f, "heal", "pool-a");
  ASSERT_EQ(a.size(), 20u);
  for (const std::string& n : a) ASSERT_EQ(send_signal(f, "heal", n, kXid119).status, 200);
  auto check_instant = [&](const std::string& when) {
    std::map<std::string, int> per_pool;
    int total = 0;
    for (const auto& [id, r] : f.runtime().loop().state().view().health_state().remediations) {
      if (!remediate::in_flight(r.status)) continue;
      ++total;
      ++per_pool[r.group];
    }
    EXPECT_LE(total, 2) << when;  // max(1, 5% of 40 nodes)
    for (const auto& [pool, n] : per_pool) EXPECT_LE(n, 1) << pool << " " << when;
  };
  for (int m = 0; m < 180; ++m) {
    f.run_for(minutes(1));
    check_instant("minute " + std::to_string(m));
  }
  const Json breaker = f.json("GET", "/v1/clusters/heal/circuit-breaker");
  EXPECT_EQ(breaker["State"], "Open") << breaker.dump();
  EXPECT_NE(breaker["Reason"].get<std::string>().find("limit 5"), std::string::npos)
      << breaker.dump();
  Json rems = remediations(f);
  ASSERT_EQ(rems.size(), 20u);
  int succeeded = 0, proposed = 0, approved = 0;
  for (const Json& r : rems) {
    succeeded += r["Status"] == "Succeeded";
    proposed += r["Status"] == "Proposed";
    approved += r["Status"] == "Approved";
  }
  EXPECT_EQ(proposed, 15)
      << "after the 5th auto-approval the breaker leaves everything to a person";
  // The surge trips the breaker in the same pass that proposed it: the 5 auto-approved ones have
  // not started, and wait.
  EXPECT_EQ(succeeded, 0) << "automatic remediation is halted";
  EXPECT_EQ(approved, 5);
  for (const Json& r : rems) {
    if (r["Status"] == "Approved") {
      EXPECT_NE(r["Reason"].get<std::string>().find("circuit breaker open"), std::string::npos)
          << r.dump();
    }
  }
  for (const Json& r : rems) {
    if (r["Status"] == "Proposed") {
      EXPECT_EQ(r["HeldByBreaker"], true) << r.dump();
    }
  }
  // A person resets the breaker: the auto-approved ones continue (one per pool at a time), and
  // the proposals held while it was open resume, since their alerts still fire, at the breaker's
  // rate (at most 5 automatic approvals per window), so they do not trip it again.
  HttpResponse reset = f.call_as("oncall", "POST", "/v1/clusters/heal/circuit-breaker/reset");
  ASSERT_EQ(reset.status, 200) << reset.body;
  const Time reset_at = f.now();
  for (int m = 0; m < 600; ++m) {
    f.run_for(minutes(1));
    check_instant("after reset, minute " + std::to_string(m));
    EXPECT_EQ(f.json("GET", "/v1/clusters/heal/circuit-breaker")["State"], "Closed")
        << "minute " << m;
  }
  succeeded = 0;
  std::vector<Time> resumed_at;
  for (const Json& r : remediations(f)) {
    succeeded += r["Status"] == "Succeeded";
    EXPECT_FALSE(r.contains("HeldByBreaker")) << r.dump();
    const Time approved = parse_iso8601(r["ApprovedAt"].get<std::string>()).value();
    if (approved < reset_at) continue;
    EXPECT_EQ(r["Approver"], "policy:" + r["Rule"].get<std::string>()) << r.dump();
    EXPECT_EQ(r["AutoApproved"], true) << r.dump();
    resumed_at.push_back(approved);
  }
  EXPECT_EQ(succeeded, 20) << "every alert still firing was healed";
  ASSERT_EQ(resumed_at.size(), 15u);
  std::sort(resumed_at.begin(), resumed_at.end());
  for (size_t i = 5; i < resumed_at.size(); ++i) {
    EXPECT_GE(resumed_at[i] - resumed_at[i - 5], hours(1))
        << "no more than 5 automatic approvals within the breaker's window";
  }
  EXPECT_FALSE(f.events_containing("reset by oncall").empty());
  EXPECT_FALSE(f.events_containing("automatic remediation resumes").empty());
}

// Acceptance 8: (detector, request id) creates at most one remediation, also across a restart of
// the control plane on the same journal (what a second replica sees).
TEST(Remediation, Idempotency_SameDetectorAndRequestIdTwice_AndAcrossControlPlanes_OneRemediation) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  put_policy(
      f, "heal",
      Json{{"AlertPersistence", "0s"}, {"Rules", {{{"Fault", "xid:*"}, {"Action", "none"}}}}});
  ASSERT_EQ(send_signal(f, "heal", node, kXid79).status, 200);
  const std::string body = Json{
      {"ClusterName", "heal"},
      {"NodeId", node},
      {"Action", "reboot"},
      {"Detector", "ops"},
      {"RequestId", "r-1"}}.dump();
  HttpResponse first = f.call_as("alice", "POST", "/v1/remediations", body);
  ASSERT_EQ(first.status, 201) << first.body;
  HttpResponse second = f.call_as("alice", "POST", "/v1/remediations", body);
  ASSERT_LT(second.status, 300) << second.body;
  EXPECT_EQ(Json::parse(first.body)["RemediationId"], Json::parse(second.body)["RemediationId"]);
  f.restart();  // another control plane on the same journal
  HttpResponse third = f.call_as("bob", "POST", "/v1/remediations", body);
  ASSERT_LT(third.status, 300) << third.body;
  EXPECT_EQ(Json::parse(first.body)["RemediationId"], Json::parse(third.body)["RemediationId"]);
  f.run_for(hours(1));
  EXPECT_EQ(remediations(f, node).size(), 1u);
}

TEST(Remediation, Idempotency_ADetectorProposalIsMadeOnceAcrossARestartOfTheControlPlane) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  put_policy(
      f, "heal",
      Json{{"Rules", {{{"Fault", "xid:119"}, {"Action", "reboot"}, {"Approval", "manual"}}}}});
  ASSERT_EQ(send_signal(f, "heal", node, kXid119).status, 200);
  f.run_for(minutes(6));
  ASSERT_EQ(remediations(f, node).size(), 1u);
  const uint64_t hash = f.runtime().loop().state().hash();
  f.restart();
  EXPECT_EQ(f.runtime().loop().state().hash(), hash) << "the rebuilt state is the same";
  f.run_for(hours(1));
  EXPECT_EQ(remediations(f, node).size(), 1u);
}

// Acceptance 9: burn-in of the host a migrate freed.
void migrate_one(Fleet& f, const std::string& node) {
  ASSERT_EQ(send_signal(f, "heal", node,
                        Json{{"dcgm", {{"field", "DCGM_FI_DEV_ROW_REMAP_FAILURE"}, {"value", 1}}}})
                .status,
            200);
  f.run_for(minutes(6));
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  ASSERT_EQ(
      f.call_as("alice", "POST",
                "/v1/remediations/" + rems[0]["RemediationId"].get<std::string>() + "/approve")
          .status,
      200);
  f.run_for(minutes(30));
  ASSERT_EQ(status_of(f, rems[0]["RemediationId"]), "Succeeded");
}

Json host(Fleet& f, const std::string& id) {
  const Json hosts = f.json("GET", "/v1/hosts");
  for (const Json& h : hosts["Hosts"]) {
    if (h["HostId"] == id) return h;
  }
  return Json();
}

TEST(Remediation, BurnIn_PassReturnsTheHostToThePoolWithoutATicket) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  const std::string old_host = node_of(f, "heal", node).host();
  migrate_one(f, node);
  EXPECT_EQ(host(f, old_host)["Status"], "BurnIn");
  f.run_for(hours(1));
  EXPECT_EQ(host(f, old_host)["Status"], "InService");
  EXPECT_TRUE(f.json("GET", "/v1/tickets")["Tickets"].empty());
}

TEST(Remediation, BurnIn_FailOpensATicketWithTheCheckResultsAndLogs) {
  SimCloudConfig cloud;
  cloud.burn_ins = {{"fail", "nccl"}};
  Fleet f(cloud);
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  const std::string old_host = node_of(f, "heal", node).host();
  migrate_one(f, node);
  f.run_for(hours(1));
  EXPECT_EQ(host(f, old_host)["Status"], "Repair");
  const Json tickets = f.json("GET", "/v1/tickets")["Tickets"];
  ASSERT_EQ(tickets.size(), 1u);
  EXPECT_EQ(tickets[0]["HostId"], old_host);
  bool nccl_failed = false;
  for (const Json& c : tickets[0]["Checks"]) {
    if (c["Name"] == "nccl") {
      nccl_failed = c["Result"] == "fail";
      EXPECT_NE(c["Log"].get<std::string>().find("all_reduce_perf"), std::string::npos) << c.dump();
    }
    if (c["Name"] == "gpu") {
      EXPECT_EQ(c["Result"], "pass");
    }
  }
  EXPECT_TRUE(nccl_failed) << tickets.dump(2);
}

TEST(Remediation, BurnIn_InterruptedRestoresTheHostToItsPreviousState) {
  SimCloudConfig cloud;
  cloud.burn_ins = {{"interrupted", "storage"}};
  Fleet f(cloud);
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  const std::string old_host = node_of(f, "heal", node).host();
  migrate_one(f, node);
  f.run_for(minutes(31));
  EXPECT_FALSE(f.events_containing("burn-in interrupted; restored to Inspecting").empty());
  EXPECT_TRUE(f.json("GET", "/v1/tickets")["Tickets"].empty());
  f.run_for(hours(1));
  EXPECT_EQ(host(f, old_host)["Status"], "InService") << "the burn-in ran again and passed";
}

// Acceptance 10 (the webhook half is tests/integration/remediation_cli_test.cpp).
TEST(Remediation, DiskPressureIsRecordedAndNeverRemediated_UnmappedAlertIsMarkedForSupport) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  ASSERT_EQ(send_signal(f, "heal", node, Json{{"diskPressure", true}}).status, 200);
  ASSERT_EQ(
      send_signal(f, "heal", node, "NVRM: Xid (PCI:0000:18:00): 200, pid=1, name=x, something new")
          .status,
      200);
  f.run_for(hours(3));
  const Json a = alerts(f, node);
  ASSERT_EQ(a.size(), 2u);
  for (const Json& x : a) {
    EXPECT_EQ(x["State"], "firing");
    if (x["Detector"] == "disk-pressure") {
      EXPECT_EQ(x["Severity"], "warning");
      EXPECT_EQ(x["Action"], "none");
      EXPECT_FALSE(x["Support"].get<bool>());
    } else {
      EXPECT_EQ(x["Fault"], "xid:200");
      EXPECT_TRUE(x["Support"].get<bool>());
    }
  }
  EXPECT_TRUE(remediations(f).empty());
  // No detector proposal, so the node is never cordoned.
  EXPECT_FALSE(node_of(f, "heal", node).cordoned);
}

TEST(Remediation, NodeRecoveryNone_ProposalsAreMadeButNothingIsAutoApproved) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}}, "ml.p5.48xlarge", "None");
  const std::string node = group_nodes(f, "heal", "workers")[0];
  ASSERT_EQ(send_signal(f, "heal", node, kXid119).status, 200);
  f.run_for(hours(1));
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  EXPECT_EQ(rems[0]["Status"], "Proposed");
  EXPECT_NE(rems[0]["Reason"].get<std::string>().find("NodeRecovery is None"), std::string::npos);
}

TEST(Remediation, RequestWithoutAFiringAlertIsRefusedNamingTheFieldAndChangesNothing) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  HttpResponse r =
      f.call_as("alice", "POST", "/v1/remediations",
                Json{{"ClusterName", "heal"}, {"NodeId", node}, {"Action", "reboot"}}.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("NodeId"), std::string::npos);
  EXPECT_NE(r.body.find("evidence"), std::string::npos) << r.body;
  // The error says what to type to see the node's alerts.
  EXPECT_NE(r.body.find("(see: gpufleet alert list --node " + node + ")"), std::string::npos)
      << r.body;
  HttpResponse bad =
      f.call_as("alice", "POST", "/v1/remediations",
                Json{{"ClusterName", "heal"}, {"NodeId", node}, {"Action", "format-disk"}}.dump());
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("Action"), std::string::npos) << bad.body;
  EXPECT_TRUE(remediations(f).empty());
}

TEST(Remediation, NodeLabelRequestsARemediation) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  put_policy(
      f, "heal",
      Json{{"AlertPersistence", "0s"}, {"Rules", {{{"Fault", "xid:*"}, {"Action", "none"}}}}});
  ASSERT_EQ(send_signal(f, "heal", node, kXid79).status, 200);
  HttpResponse r = f.call_as("ops-bot", "PUT", "/v1/clusters/heal/nodes/" + node + "/labels",
                             Json{{"Labels", {{"gpufleet.io/remediate", "reboot"}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const Json rems = remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  EXPECT_EQ(rems[0]["Detector"], "node-label");
  EXPECT_NE(rems[0]["Requester"].get<std::string>().find("label:gpufleet.io/remediate"),
            std::string::npos);
  // The policy maps this fault to no action, so the label's reboot waits for a person.
  EXPECT_EQ(rems[0]["Status"], "Proposed");
  ASSERT_EQ(
      f.call_as("alice", "POST",
                "/v1/remediations/" + rems[0]["RemediationId"].get<std::string>() + "/approve")
          .status,
      200);
  f.run_for(hours(1));
  EXPECT_EQ(status_of(f, rems[0]["RemediationId"]), "Succeeded");
}

// host-reachability (docs/health.md): an agent's heartbeats every 10 s; three missed in a row raise
// a critical alert (reboot); the next heartbeat clears it.
TEST(Remediation, HostReachability_ThreeMissedHeartbeatsRaiseAnAlert_TheNextBeatClearsIt) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 2}});
  const std::string node = group_nodes(f, "heal", "workers")[0];
  const std::string beat = "/v1/clusters/heal/nodes/" + node + "/heartbeat";
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(f.call("POST", beat).status, 200);
    f.run_for(seconds(10));
  }
  EXPECT_TRUE(alerts(f, node).empty());
  f.run_for(seconds(25));  // 35 s since the last beat: three missed
  Json a = alerts(f, node);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["Detector"], "host-reachability");
  EXPECT_EQ(a[0]["Severity"], "critical");
  EXPECT_EQ(a[0]["State"], "pending");
  ASSERT_EQ(f.call("POST", beat).status, 200);
  a = alerts(f, node);
  EXPECT_EQ(a[0]["State"], "discarded") << "back within the persistence window: it never fired";
  EXPECT_EQ(f.call("POST", "/v1/clusters/heal/nodes/i-nope/heartbeat").status, 404);
}
}  // namespace
}  // namespace gf
