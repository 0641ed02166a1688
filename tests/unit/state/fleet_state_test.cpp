#include "state/fleet_state.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "state/cluster_events.h"

namespace gf {
namespace {

EventRecord rec(Seq seq, const Event& e, Time t = kSimEpoch, std::string key = "") {
  return EventRecord{seq, e.type, e.payload.dump(), std::move(key), t};
}

Event started(const std::string& version) {
  return Event{std::string(event_type::kControlPlaneStarted),
               Json{{"version", version}, {"store", "sqlite:x"}}, ""};
}

TEST(FleetState, ApplyRequiresTheNextSequenceNumber) {
  FleetState s;
  EXPECT_FALSE(s.apply(rec(2, started("1"))).ok());
  EXPECT_EQ(s.applied_seq(), 0);
  ASSERT_TRUE(s.apply(rec(1, started("1"))).ok());
  EXPECT_EQ(s.applied_seq(), 1);
  EXPECT_FALSE(s.apply(rec(1, started("1"))).ok());
}

TEST(FleetState, ControlPlaneStartedCountsStartsAndRecordsAUserEvent) {
  FleetState s;
  ASSERT_TRUE(s.apply(rec(1, started("0.1.0"), kSimEpoch + minutes(1))).ok());
  ASSERT_TRUE(s.apply(rec(2, started("0.1.1"), kSimEpoch + minutes(2))).ok());
  EXPECT_EQ(s.view().control_plane.starts, 2);
  EXPECT_EQ(s.view().control_plane.version, "0.1.1");
  ASSERT_EQ(s.view().events.size(), 2u);
  const UserEvent& e = s.view().events.at(1);
  EXPECT_EQ(e.event_id, "ev-000000000002-0");
  EXPECT_EQ(e.resource_type, "ControlPlane");
  EXPECT_EQ(e.time, kSimEpoch + minutes(2));
  EXPECT_NE(e.description.find("0.1.1"), std::string::npos);
}

TEST(FleetState, EventRecordedCarriesTheEnvelope) {
  FleetState s;
  Event e = record_event("Cluster", EventLevel::kWarn, "capacity short", Json{{"missing", 6}});
  e.payload["ClusterName"] = "c1";
  ASSERT_TRUE(s.apply(rec(1, e)).ok());
  Json wire = s.view().events.at(0).to_wire();
  EXPECT_EQ(wire["ResourceType"], "Cluster");
  EXPECT_EQ(wire["EventLevel"], "Warn");
  EXPECT_EQ(wire["Description"], "capacity short");
  EXPECT_EQ(wire["EventDetails"]["missing"], 6);
  EXPECT_EQ(wire["ClusterName"], "c1");
  EXPECT_EQ(wire["EventTime"], "2026-01-01T00:00:00Z");
}

// Rule: to_wire_text is to_wire() with the extra members, byte for byte as dump() writes it.
TEST(FleetState, WireTextIsTheWireDocumentsDumpWithTheExtraMembers) {
  UserEvent e;
  e.event_id = "ev-1";
  e.resource_type = "Instance";
  e.time = kSimEpoch + minutes(3);
  e.level = EventLevel::kWarn;
  e.description = "node \"i-1\" \u00e9\n unreachable";
  e.details = Json{{"b", Json::array({1, 2.5, nullptr})}, {"a", {{"z", true}}}};
  EXPECT_EQ(e.to_wire_text(), e.to_wire().dump());
  e.cluster_name = "c1";
  e.cluster_arn = "arn:c1";
  e.instance_group = "gpu";
  e.instance_id = "i-1";
  Json wire = e.to_wire();
  wire["t"] = 180.5;
  wire["Aaa"] = "first";
  EXPECT_EQ(e.to_wire_text({{"t", 180.5}, {"Aaa", "first"}}), wire.dump());
  // An extra member of a wire name replaces it, as assigning it to the document does.
  wire["EventLevel"] = "Error";
  EXPECT_EQ(e.to_wire_text({{"t", 180.5}, {"Aaa", "first"}, {"EventLevel", "Error"}}), wire.dump());
  // Plain printable ASCII is written as it is; the bytes at its edges as dump() writes them.
  for (const std::string& text :
       std::vector<std::string>{"plain ~ text", "back\\slash", std::string("del\x7f"), "tab\there",
                                std::string("nul\0byte", 8), "\x1f"}) {
    e.description = text;
    e.instance_id = text;
    EXPECT_EQ(e.to_wire_text(), e.to_wire().dump()) << text;
  }
}

TEST(FleetState, MalformedPayloadIsAnErrorAndChangesNothing) {
  FleetState s;
  EventRecord bad{1, std::string(event_type::kEventRecorded), "{\"ResourceType\": 3}", "",
                  kSimEpoch};
  Status st = s.apply(bad);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ResourceType"), std::string::npos) << st.message();
  EXPECT_EQ(s.applied_seq(), 0);
  EXPECT_EQ(s.view().events.size(), 0u);
  EXPECT_FALSE(s.apply(EventRecord{1, "no.such.type", "{}", "", kSimEpoch}).ok());
  EXPECT_FALSE(
      s.apply(EventRecord{1, std::string(event_type::kEventRecorded), "{not json", "", kSimEpoch})
          .ok());
}

TEST(FleetState, IdempotencyKeysAreIndexedBySeq) {
  FleetState s;
  ASSERT_TRUE(s.apply(rec(1, started("1"), kSimEpoch, "k-1")).ok());
  ASSERT_TRUE(s.apply(rec(2, started("1"))).ok());
  EXPECT_EQ(s.find_key("k-1"), std::optional<Seq>(1));
  EXPECT_EQ(s.find_key("k-2"), std::nullopt);
  EXPECT_EQ(s.key_count(), 1u);
}

TEST(FleetState, SnapshotRoundTripGivesAnIdenticalHash) {
  FleetState s;
  ASSERT_TRUE(s.apply(rec(1, started("1"), kSimEpoch, "k")).ok());
  for (Seq i = 2; i < 700; ++i) {
    ASSERT_TRUE(s.apply(rec(i, record_event("Job", EventLevel::kInfo, "e" + std::to_string(i)),
                            kSimEpoch + seconds(i)))
                    .ok());
  }
  auto restored = FleetState::from_json(s.to_json());
  ASSERT_TRUE(restored.ok()) << restored.status().to_string();
  EXPECT_EQ(restored->hash(), s.hash());
  EXPECT_EQ(restored->applied_seq(), 699);
  EXPECT_EQ(restored->find_key("k"), std::optional<Seq>(1));
  EXPECT_EQ(restored->view().events.at(500).description, "e501");
}

TEST(FleetState, DifferentStatesHaveDifferentHashes) {
  FleetState a, b;
  ASSERT_TRUE(a.apply(rec(1, started("1"))).ok());
  ASSERT_TRUE(b.apply(rec(1, started("2"))).ok());
  EXPECT_NE(a.hash(), b.hash());
}

// A state with cluster "c" of one group "gpu" created; `apply` appends the next event.
struct NodeLogFixture {
  FleetState s;
  Seq seq = 0;
  explicit NodeLogFixture(int64_t target) {
    GroupSpec g;
    g.name = "gpu";
    g.instance_type = "ml.p5.48xlarge";
    g.target = target;
    g.execution_role = "arn:aws:iam::1:role/x";
    apply(to_event(cluster_events::Created{
        "c", "id", "arn:c", true, Orchestrator::kNative, nullptr, "None", hours(3), {g}}));
  }
  void apply(const Event& e) { ASSERT_TRUE(s.apply(rec(++seq, e)).ok()) << e.type; }
};

// The node log (FleetState::nodes_changed_since): a node event names its node; a change to the
// cluster as a whole, or one older than the log keeps, asks mirrors to look at every node.
TEST(FleetState, NodeLog_ANodeEventNamesOnlyItsNode_AWholeClusterChangeNamesNone) {
  using namespace cluster_events;
  NodeLogFixture f(3);
  FleetState& s = f.s;
  auto apply = [&](const Event& e) { f.apply(e); };
  const uint64_t created = s.cluster_revision();
  EXPECT_EQ(s.nodes_changed_since("c", 0), std::nullopt) << "created after 0: look at all";
  EXPECT_EQ(s.nodes_changed_since("absent", 0), std::nullopt);
  for (const char* id : {"i-3", "i-1", "i-2"}) {
    apply(to_event(LaunchRequested{"c", "gpu", id, "ml.p5.48xlarge", 1, 0}));
  }
  EXPECT_EQ(s.nodes_changed_since("c", created),
            (std::optional<std::vector<std::string>>{{"i-1", "i-2", "i-3"}}));
  const uint64_t launched = s.cluster_revision();
  apply(to_event(Launched{"c", "i-2"}));
  apply(to_event(NodeRunning{"c", "i-2"}));
  apply(to_event(Launched{"c", "i-1"}));
  EXPECT_EQ(s.nodes_changed_since("c", launched),
            (std::optional<std::vector<std::string>>{{"i-1", "i-2"}}))
      << "each once, in id order";
  EXPECT_EQ(s.nodes_changed_since("c", s.cluster_revision()),
            (std::optional<std::vector<std::string>>{std::vector<std::string>{}}));
  const uint64_t before_terminate = s.cluster_revision();
  apply(to_event(Terminated{"c", "i-3"}));
  EXPECT_EQ(s.nodes_changed_since("c", before_terminate),
            (std::optional<std::vector<std::string>>{{"i-3"}}))
      << "a node that left is named too";
  const uint64_t before_status = s.cluster_revision();
  apply(to_event(StatusChanged{"c", ClusterStatus::kInService, "up", std::nullopt}));
  EXPECT_EQ(s.nodes_changed_since("c", before_status), std::nullopt);
  EXPECT_EQ(s.nodes_changed_since("c", launched), std::nullopt);
  apply(to_event(Launched{"c", "i-1"}));
  EXPECT_EQ(s.nodes_changed_since("c", s.cluster_revision() - 1),
            (std::optional<std::vector<std::string>>{{"i-1"}}))
      << "after a whole change, node changes are named again";
}

TEST(FleetState, NodeLog_ChangesOlderThanTheLogKeepsNameNone) {
  using namespace cluster_events;
  NodeLogFixture f(1);
  FleetState& s = f.s;
  auto apply = [&](const Event& e) { f.apply(e); };
  const uint64_t start = s.cluster_revision();
  apply(to_event(LaunchRequested{"c", "gpu", "i-0", "ml.p5.48xlarge", 1, 0}));
  const uint64_t first = s.cluster_revision();
  for (size_t i = 0; i < FleetState::kNodeLogKept; ++i) {
    apply(to_event(NodeSlurmState{"c", "i-0", i % 2 == 0 ? "idle" : "alloc", "", {}}));
  }
  EXPECT_EQ(s.nodes_changed_since("c", start), std::nullopt) << "its first entry was dropped";
  EXPECT_EQ(s.nodes_changed_since("c", first), (std::optional<std::vector<std::string>>{{"i-0"}}));
}

TEST(EventLog, CopiesShareHistoryAndStayIndependent) {
  EventLog log;
  for (int i = 0; i < 600; ++i) {
    UserEvent e;
    e.seq = i + 1;
    e.description = std::to_string(i);
    log.append(e);
  }
  EventLog copy = log;
  UserEvent extra;
  extra.seq = 601;
  log.append(extra);
  EXPECT_EQ(copy.size(), 600u);
  EXPECT_EQ(log.size(), 601u);
  EXPECT_EQ(copy.at(599).description, "599");
  EXPECT_EQ(log.lower_bound_seq(300), 300u);
  std::vector<Seq> newest;
  log.for_each_newest_first([&](size_t, const UserEvent& e) {
    newest.push_back(e.seq);
    return newest.size() < 3;
  });
  EXPECT_EQ(newest, (std::vector<Seq>{601, 600, 599}));
}

UserEvent numbered(Seq seq, std::string text) {
  UserEvent e;
  e.seq = seq;
  e.description = std::move(text);
  return e;
}

TEST(EventLog, ACopyThatAppendsAfterTheOriginalDidNeverSeesTheOriginalsItems) {
  EventLog log;
  for (int i = 0; i < 300; ++i) log.append(numbered(i + 1, std::to_string(i)));
  EventLog copy = log;  // shares the open chunk (44 of its slots)
  log.append(numbered(301, "original"));
  copy.append(numbered(301, "copy"));  // its slot was claimed by the original: copies the chunk
  copy.append(numbered(302, "copy 2"));
  log.append(numbered(302, "original 2"));
  EXPECT_EQ(log.at(300).description, "original");
  EXPECT_EQ(log.at(301).description, "original 2");
  EXPECT_EQ(copy.at(300).description, "copy");
  EXPECT_EQ(copy.at(301).description, "copy 2");
  EXPECT_EQ(copy.at(299).description, "299");
  // Both fill their open chunk independently.
  for (int i = 302; i < 600; ++i) {
    log.append(numbered(i + 1, "o" + std::to_string(i)));
    copy.append(numbered(i + 1, "c" + std::to_string(i)));
  }
  EXPECT_EQ(log.size(), 600u);
  EXPECT_EQ(copy.size(), 600u);
  EXPECT_EQ(log.at(599).description, "o599");
  EXPECT_EQ(copy.at(599).description, "c599");
  EXPECT_EQ(log.at(255).description, "255");
}

TEST(EventLog, DroppingTheOldestChunkKeepsTheNewestItemsAndLeavesCopiesWhole) {
  EventLog log;
  for (int i = 0; i < 700; ++i) log.append(numbered(i + 1, std::to_string(i)));
  EventLog copy = log;
  EXPECT_TRUE(log.drop_oldest_chunk());
  EXPECT_EQ(log.size(), 700u - EventLog::kChunkSize);
  EXPECT_EQ(log.at(0).description, "256");
  EXPECT_EQ(log.lower_bound_seq(600), 600u - EventLog::kChunkSize);
  EXPECT_TRUE(log.drop_oldest_chunk());
  EXPECT_FALSE(log.drop_oldest_chunk());  // only the open chunk is left
  EXPECT_EQ(log.size(), 700u - 2 * EventLog::kChunkSize);
  EXPECT_EQ(copy.size(), 700u);
  EXPECT_EQ(copy.at(0).description, "0");
}

TEST(EventLog, AMovedFromLogIsEmpty) {
  EventLog log;
  for (int i = 0; i < 300; ++i) log.append(numbered(i + 1, std::to_string(i)));
  EventLog moved = std::move(log);
  EXPECT_EQ(moved.size(), 300u);
  EXPECT_EQ(log.size(), 0u);  // NOLINT(bugprone-use-after-move): the rule under test
  log.append(numbered(1, "again"));
  EXPECT_EQ(log.size(), 1u);
  EXPECT_EQ(log.at(0).description, "again");
  EventLog assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.size(), 300u);
  EXPECT_EQ(moved.size(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(assigned.at(299).description, "299");
}

TEST(EventLog, CopiesReadOnAnotherThreadWhileTheOriginalAppends) {
  EventLog log;
  std::vector<EventLog> published;
  for (int i = 0; i < 50; ++i) {
    log.append(numbered(i + 1, std::to_string(i)));
    published.push_back(log);
  }
  std::thread reader([&] {
    for (const EventLog& view : published) {
      for (size_t i = 0; i < view.size(); ++i) {
        ASSERT_EQ(view.at(i).description, std::to_string(i));
      }
    }
  });
  for (int i = 50; i < 2000; ++i) log.append(numbered(i + 1, std::to_string(i)));
  reader.join();
  EXPECT_EQ(log.size(), 2000u);
  EXPECT_EQ(published[49].size(), 50u);
}

}  // namespace
}  // namespace gf
