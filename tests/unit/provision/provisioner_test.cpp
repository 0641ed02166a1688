// The provisioner's lost-intent rule (docs/provisioning.md): whatever the state shows in flight
// that this process has not handed out is asked for again, once; a process that keeps running
// looks again only at the nodes that changed (FleetState::nodes_changed_since).
#include "provision/provisioner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "state/cluster_events.h"
#include "state/fleet_state.h"

namespace gf {
namespace {

class LostIntents : public ::testing::Test {
 protected:
  void SetUp() override {
    GroupSpec g;
    g.name = "gpu";
    g.instance_type = "ml.p5.48xlarge";
    g.target = 3;
    g.execution_role = "arn:aws:iam::1:role/x";
    apply(to_event(cluster_events::Created{
        "c", "id", "arn:c", true, Orchestrator::kNative, nullptr, "None", hours(3), {g}}));
  }
  void apply(const Event& e) {
    ASSERT_TRUE(state_.apply(EventRecord{++seq_, e.type, e.payload.dump(), "", kSimEpoch}).ok())
        << e.type;
  }
  // One pass of `p`: its events applied; the (kind, instance id) of each intent, in order.
  std::vector<std::pair<std::string, std::string>> pass(Provisioner& p) {
    ControllerDecision d = p.decide(state_, kSimEpoch);
    for (const Event& e : d.events) apply(e);
    std::vector<std::pair<std::string, std::string>> out;
    for (const Intent& in : d.intents) {
      out.emplace_back(in.kind, in.payload.value("InstanceId", std::string()));
    }
    return out;
  }
  std::vector<std::string> node_ids() const {
    std::vector<std::string> ids;
    for (const auto& [id, n] : state_.view().find_cluster("c")->nodes) ids.push_back(id);
    return ids;
  }

  FleetState state_;
  Seq seq_ = 0;
  Random rng_{7};
  ProvisionOptions options_;
};

TEST_F(LostIntents, LostIntent_AKeptProcessAsksOnce_ARestartedOneAsksForEveryNodeInFlight) {
  Provisioner p(options_, Catalog::builtin(), rng_);
  const auto first = pass(p);
  ASSERT_EQ(first.size(), 3u) << "three launches";
  const std::vector<std::string> ids = node_ids();
  ASSERT_EQ(ids.size(), 3u);
  for (const auto& [kind, id] : first) EXPECT_EQ(kind, kLaunchIntent);
  EXPECT_TRUE(pass(p).empty()) << "handed out already: not asked for again";

  Provisioner restarted(options_, Catalog::builtin(), rng_);
  const auto again = pass(restarted);
  ASSERT_EQ(again.size(), 3u) << "a new process does not know what was handed out";
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(again[i], (std::pair<std::string, std::string>{kLaunchIntent, ids[i]}));
  }
  EXPECT_TRUE(pass(restarted).empty());
}

TEST_F(LostIntents, LostIntent_AKeptProcessLooksOnlyAtChangedNodes_AndAsksForTheirNewOperation) {
  Provisioner p(options_, Catalog::builtin(), rng_);
  ASSERT_EQ(pass(p).size(), 3u);
  const std::vector<std::string> ids = node_ids();
  apply(to_event(cluster_events::TerminateRequested{"c", ids[1], "test"}));
  const auto next = pass(p);
  // The node being shut down is asked to terminate (and replaced: one more launch).
  size_t terminates = 0;
  for (const auto& [kind, id] : next) {
    if (kind == kTerminateIntent) {
      EXPECT_EQ(id, ids[1]);
      ++terminates;
    } else {
      EXPECT_EQ(kind, kLaunchIntent);
      EXPECT_EQ(std::count(ids.begin(), ids.end(), id), 0) << "not one already launched: " << id;
    }
  }
  EXPECT_EQ(terminates, 1u);
  EXPECT_TRUE(pass(p).empty());
  apply(to_event(cluster_events::Terminated{"c", ids[1]}));
  EXPECT_TRUE(pass(p).empty()) << "a node that left asks for nothing";

  // A restarted process asks for everything still in flight: the pending launches, once each.
  Provisioner restarted(options_, Catalog::builtin(), rng_);
  const auto again = pass(restarted);
  EXPECT_EQ(again.size(), node_ids().size());
  for (const auto& [kind, id] : again) EXPECT_EQ(kind, kLaunchIntent);
}

}  // namespace
}  // namespace gf
