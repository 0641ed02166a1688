// Health alerts and automatic remediation through the real API on a virtual clock (issue 6,
// SPEC §5): one test per rule, named after it.
#include <gtest/gtest.h>

#include "scenario/remediation_support.h"

namespace gf {
namespace {

using testing::Fleet;
using namespace gf::testing;

std::string status_of(Fleet& f, const std::string& id) { return remediation(f, id).value("Status", ""); }

// Acceptance 1: Xid 119 and Xid 95 on busy nodes. The reboot is auto-approved (default policy),
// waits for the job to finish or 2 h, then cordon → drain → reboot → rejoin; the gang that was
// evicted is placed again; the timeline is in the events.
TEST(Remediation, Xid119AndXid95OnBusyNodes_AutoApprovedRebootWaitsForIdleThenCordonDrainRebootRejoin) {
  Fleet f;
  heal_cluster(f, "heal", {{"workers", 6}});
  run_job(f, "short", 1, "1h");
  run_job(f, "long", 1, "10h");
  const std::vector<std::string> short_nodes = job_nodes(f, "short"), long_nodes = job_nodes(f, "long");
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
  EXPECT_EQ(job_state(f, "short"), "Running") << "the job is not interrupted while the node waits for idle";

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
  for (const char* step : {"proposed", "WaitingForIdle", "Draining", "Executing", "Rejoining", "Succeeded"}) {
    EXPECT_NE(timeline.find(step), std::string::npos) << step << " missing from " << timeline;
  }
  EXPECT_FALSE(f.events_containing("instance rebooted (local scratch and temporary data kept)").empty());

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

}  // namespace
}  // namespace gf
