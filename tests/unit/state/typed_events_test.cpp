// Typed journal events (state/event_codec.h) of every family but jobs (job_events_test.cpp): each
// type round-trips through its payload with its version, and the codec refuses a missing,
// mistyped or unknown value naming the type and the field — never a default.
#include <gtest/gtest.h>

#include "state/audit.h"
#include "state/cluster_events.h"
#include "state/health_events.h"
#include "state/object_events.h"
#include "state/plane_events.h"

namespace gf {
namespace {

// Encodes, decodes and encodes again: the two payloads are equal, carry the version, and the
// event has the type's wire name.
template <typename E>
E round_trip(const E& e) {
  const Json j = event_codec::to_json(e);
  EXPECT_EQ(j.at("v"), event_codec::version_of<E>()) << E::kType;
  Result<E> back = event_codec::decode<E>(j);
  EXPECT_TRUE(back.ok()) << E::kType << ": " << back.status().to_string();
  if (!back.ok()) return e;
  EXPECT_EQ(event_codec::to_json(*back), j) << E::kType;
  EXPECT_EQ(event_codec::to_event(e).type, E::kType);
  return *back;
}

GroupSpec group(const std::string& name) {
  GroupSpec g;
  g.name = name;
  g.instance_type = "ml.p5.48xlarge";
  g.target = 4;
  g.min = 2;
  g.execution_role = "arn:aws:iam::1:role/x";
  return g;
}

TEST(TypedEvents, EveryClusterGroupAndNodeTypeRoundTrips) {
  using namespace cluster_events;
  const Created c = round_trip(Created{"c",
                                       "id1",
                                       "arn:c",
                                       false,
                                       Orchestrator::kNative,
                                       Json{{"Subnets", {"s-1"}}},
                                       "None",
                                       hours(2),
                                       {group("a"), group("b")}});
  EXPECT_EQ(c.orchestrator, Orchestrator::kNative);
  EXPECT_EQ(c.min_count_timeout, hours(2));
  EXPECT_EQ(c.groups, (std::vector<GroupSpec>{group("a"), group("b")}));
  EXPECT_EQ(c.vpc_config.at("Subnets").at(0), "s-1");
  EXPECT_FALSE(c.continuous);
  const Updated u = round_trip(Updated{"c", {group("a")}, {"b"}, std::nullopt});
  EXPECT_FALSE(u.node_recovery.has_value());
  EXPECT_EQ(round_trip(Updated{"c", {}, {}, "Automatic"}).node_recovery, "Automatic");
  EXPECT_EQ(round_trip(DeleteRequested{"c"}).cluster, "c");
  const StatusChanged st =
      round_trip(StatusChanged{"c", ClusterStatus::kFailed, "no capacity", "no capacity"});
  EXPECT_EQ(st.status, ClusterStatus::kFailed);
  EXPECT_EQ(st.failure_message, "no capacity");
  EXPECT_EQ(round_trip(RolledBack{"c", "why"}).reason, "why");
  EXPECT_EQ(round_trip(Removed{"c"}).cluster, "c");
  EXPECT_EQ(round_trip(GroupStatusChanged{"c", "a", GroupStatus::kInService, ""}).status,
            GroupStatus::kInService);
  const GroupRolledBack rb = round_trip(GroupRolledBack{"c", "a", 3, 1, "MinCount timeout"});
  EXPECT_EQ(rb.target, 3);
  EXPECT_EQ(rb.min, 1);
  const GroupBackoff bo =
      round_trip(GroupBackoff{"c", "a", 2, 7, kSimEpoch + minutes(5), "capacity"});
  EXPECT_EQ(bo.next_attempt, kSimEpoch + minutes(5));
  EXPECT_EQ(bo.attempt, 7);
  EXPECT_EQ(round_trip(GroupTargetSet{"c", "a", 9, "BatchAddClusterNodes"}).target, 9);
  EXPECT_EQ(round_trip(GroupRemoved{"c", "a"}).group, "a");
  const LaunchRequested lr = round_trip(LaunchRequested{"c", "a", "i-1", "ml.g5", 3, 1234567});
  EXPECT_EQ(lr.price_micros_per_hour, 1234567);
  EXPECT_EQ(round_trip(LaunchFailed{"c", "i-1", "InsufficientCapacity", "none left"}).reason,
            "InsufficientCapacity");
  EXPECT_EQ(round_trip(Launched{"c", "i-1"}).instance_id, "i-1");
  // A real instance's own times and address (docs/local-cloud.md).
  const Launched real = round_trip(Launched{"c", "i-1", from_micros(77), "127.0.0.1"});
  EXPECT_EQ(real.at, from_micros(77));
  EXPECT_EQ(real.address, "127.0.0.1");
  EXPECT_EQ(round_trip(NodeRunning{"c", "i-1"}).instance_id, "i-1");
  EXPECT_EQ(round_trip(NodeRunning{"c", "i-1", from_micros(88)}).at, from_micros(88));
  EXPECT_EQ(round_trip(LifecycleFailed{"c", "i-1", "exit 1"}).message, "exit 1");
  EXPECT_EQ(round_trip(LifecycleFailed{"c", "i-1", "exit 1", from_micros(99)}).at, from_micros(99));
  EXPECT_EQ(round_trip(NodeUnhealthy{"c", "i-1", "Xid 79"}).message, "Xid 79");
  EXPECT_EQ(round_trip(TerminateRequested{"c", "i-1", "scale-down"}).reason, "scale-down");
  EXPECT_EQ(round_trip(Terminated{"c", "i-1"}).cluster, "c");
  EXPECT_FALSE(round_trip(NodeHealth{"c", "i-1", false, "ECC"}).healthy);
  const SoftwareUpdateStarted su = round_trip(
      SoftwareUpdateStarted{"c", "ami-2", 3, {"a", "b"}, "CAPACITY_PERCENTAGE", 25, minutes(5)});
  EXPECT_EQ(su.groups, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(su.wait_interval, minutes(5));
  EXPECT_EQ(su.generation, 3);
  EXPECT_EQ(round_trip(NodeUpdateStarted{"c", "i-1", 2}).batch, 2);
  EXPECT_EQ(round_trip(NodeUpdated{"c", "i-1", "ami-2", 3}).image, "ami-2");
  EXPECT_EQ(round_trip(SoftwareUpdateFinished{"c", 8}).updated, 8);
}

remediate::Remediation remediation() {
  remediate::Remediation r;
  r.id = "rem-0001";
  r.cluster = "c";
  r.node = "i-1";
  r.group = "workers";
  r.host = "host-1";
  r.fault = "xid-79";
  r.detector = "xid";
  r.action = remediate::Action::kReboot;
  r.effective = remediate::Action::kReprovision;
  r.effective_reason = "escalated";
  r.status = remediate::Status::kApproved;
  r.requester = "detector:xid";
  r.approver = "policy:default";
  r.rule = "default:xid";
  r.evidence = {"alert-0001"};
  r.auto_approved = true;
  r.created_at = kSimEpoch;
  r.approved_at = kSimEpoch + seconds(1);
  return r;
}

TEST(TypedEvents, EveryHealthAndRemediationTypeRoundTrips) {
  using namespace health_events;
  AlertSignal raised;
  raised.cluster = "c";
  raised.node = "i-1";
  raised.detector = "xid";
  raised.subject = "GPU-0";
  raised.fault = "xid-79";
  raised.present = true;
  raised.evidence = "NVRM: Xid 79";
  raised.group = "workers";
  raised.host = "host-1";
  raised.severity = health::Severity::kCritical;
  raised.summary = "GPU fell off the bus";
  raised.persistence = minutes(5);
  raised.action = "reboot";
  raised.support = false;
  raised.cleared_by = std::vector<std::string>{"reboot"};
  raised.recurs = 1;
  raised.signal = Json{{"xid", 79}};
  const AlertSignal r = round_trip(raised);
  EXPECT_EQ(r.severity, health::Severity::kCritical);
  EXPECT_EQ(r.persistence, minutes(5));
  EXPECT_EQ(r.cleared_by, std::vector<std::string>{"reboot"});
  AlertSignal cleared;
  cleared.cluster = "c";
  cleared.node = "i-1";
  cleared.detector = "xid";
  cleared.subject = "GPU-0";
  cleared.fault = "xid-79";
  cleared.evidence = "fixed by reboot";
  cleared.resolved_by = "reboot";
  cleared.fixed = true;
  const AlertSignal c = round_trip(cleared);
  EXPECT_FALSE(c.severity.has_value());
  EXPECT_EQ(c.fixed, true);
  EXPECT_EQ(round_trip(AlertFired{"alert-1"}).alert_id, "alert-1");
  EXPECT_EQ(round_trip(AlertRecurred{"alert-1"}).alert_id, "alert-1");
  EXPECT_EQ(round_trip(AlertDelivered{"alert-1", "webhook", "firing"}).state, "firing");
  const RemediationProposed p = round_trip(RemediationProposed{remediation()});
  EXPECT_EQ(p.remediation.effective, remediate::Action::kReprovision);
  EXPECT_TRUE(p.remediation.auto_approved);
  RemediationUpdated u{"rem-0001",           remediate::Status::kWaitingForIdle,
                       "cordoned",           std::nullopt,
                       kSimEpoch + hours(2), std::nullopt};
  EXPECT_EQ(round_trip(u).idle_deadline, kSimEpoch + hours(2));
  u = RemediationUpdated{"rem-0001", remediate::Status::kRejoining, "moved", "alice", std::nullopt,
                         "host-9"};
  EXPECT_EQ(round_trip(u).new_host, "host-9");
  remediate::Policy pol;
  pol.cooldown = minutes(45);
  pol.max_wait = std::nullopt;
  const PolicySet ps = round_trip(PolicySet{"c", pol});  // read back with the defaults filled in
  EXPECT_EQ(ps.policy.cooldown, minutes(45));
  EXPECT_FALSE(ps.policy.max_wait.has_value()) << "WaitForIdle.MaxWait Never";
  EXPECT_EQ(round_trip(HostStatus{"host-1", "Repair", "NCCL failed", Json::array({"nccl"})})
                .checks->at(0),
            "nccl");
  EXPECT_FALSE(
      round_trip(HostStatus{"host-1", "BurnIn", "after migrate", std::nullopt}).checks.has_value());
  EXPECT_EQ(round_trip(BreakerTripped{"c", "6 within 1h"}).reason, "6 within 1h");
  EXPECT_EQ(round_trip(BreakerReset{"c", "alice"}).by, "alice");
  EXPECT_EQ(round_trip(NodeLabels{"c", "i-1", {{"gpufleet.io/remediate", "false"}}})
                .labels.at("gpufleet.io/remediate"),
            "false");
}

TEST(TypedEvents, EveryObjectAndControlPlaneTypeRoundTrips) {
  using namespace object_events;
  const QuotaApplied qa = round_trip(QuotaApplied{
      {QuotaObjectDoc{frontend::Kind::kClusterQueue, "", "cq", Json{{"spec", Json::object()}}},
       QuotaObjectDoc{frontend::Kind::kLocalQueue, "team-a", "lq", Json::object()}}});
  ASSERT_EQ(qa.objects.size(), 2u);
  EXPECT_EQ(qa.objects[1].kind, frontend::Kind::kLocalQueue);
  EXPECT_EQ(qa.objects[1].ns, "team-a");
  EXPECT_EQ(round_trip(QuotaDeleted{frontend::Kind::kQuotaShare, "", "QS1"}).kind,
            frontend::Kind::kQuotaShare);
  EXPECT_EQ(round_trip(PolicyApplied{{PolicyDoc{"ns", "p", Json{{"spec", 1}}}}}).objects[0].name,
            "p");
  EXPECT_EQ(round_trip(PolicyDeleted{"ns", "p"}).ns, "ns");
  EXPECT_EQ(round_trip(plane_events::Started{"0.1.0", "sqlite:/d"}).store, "sqlite:/d");
  EXPECT_FALSE(round_trip(plane_events::Started{"0.1.0", std::nullopt}).store.has_value());
  EXPECT_EQ(round_trip(plane_events::Stopped{"SIGTERM"}).reason, "SIGTERM");
  plane_events::Recorded rec;
  rec.resource_type = "Cluster";
  rec.level = EventLevel::kWarn;
  rec.description = "d";
  rec.details = Json{{"k", 1}};
  rec.cluster_name = "c";
  EXPECT_EQ(round_trip(rec).level, EventLevel::kWarn);
  EXPECT_EQ(round_trip(rec).user_event().cluster_name, "c");
  const AuditRecorded a = round_trip(AuditRecorded{"alice",
                                                   {"admin"},
                                                   "POST",
                                                   "/v1/clusters",
                                                   "clusters",
                                                   200,
                                                   "req-1",
                                                   std::nullopt,
                                                   "k1",
                                                   std::nullopt,
                                                   std::nullopt,
                                                   std::nullopt});
  EXPECT_EQ(a.code, 200);
  EXPECT_EQ(a.idempotency_key, "k1");
  EXPECT_FALSE(a.error.has_value());
  EXPECT_FALSE(a.count.has_value());
  const AuditRecorded counted = round_trip(AuditRecorded{"",
                                                         {},
                                                         "POST",
                                                         "/v1/clusters",
                                                         "clusters",
                                                         401,
                                                         "req-2",
                                                         "UnauthorizedException",
                                                         std::nullopt,
                                                         3728,
                                                         "10.0.0.7",
                                                         "2026-01-01T00:00:00Z"});
  EXPECT_EQ(counted.count, 3728);
  EXPECT_EQ(counted.source, "10.0.0.7");
}

TEST(TypedEvents, AMissingFieldIsAnErrorNamingTheTypeAndTheField) {
  Json j = event_codec::to_json(cluster_events::LaunchRequested{"c", "a", "i-1", "t", 1, 0});
  j.erase("Attempt");
  Result<cluster_events::LaunchRequested> r =
      event_codec::decode<cluster_events::LaunchRequested>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "node.launch_requested: missing field Attempt");
}

TEST(TypedEvents, AMistypedFieldIsAnErrorNotAConversion) {
  Json j = event_codec::to_json(cluster_events::NodeHealth{"c", "i-1", true, ""});
  j["Healthy"] = 1;
  Result<cluster_events::NodeHealth> r = event_codec::decode<cluster_events::NodeHealth>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node.health: field Healthy: expected a boolean"),
            std::string::npos)
      << r.status().message();
  j = event_codec::to_json(cluster_events::GroupTargetSet{"c", "a", 3, ""});
  j["Target"] = "3";
  EXPECT_FALSE(event_codec::decode<cluster_events::GroupTargetSet>(j).ok());
  j["Target"] = 3.5;
  EXPECT_FALSE(event_codec::decode<cluster_events::GroupTargetSet>(j).ok());
}

TEST(TypedEvents, AnUnknownEnumValueIsAnErrorNamingIt) {
  Json j = event_codec::to_json(
      cluster_events::StatusChanged{"c", ClusterStatus::kInService, "", std::nullopt});
  j["Status"] = "Exploded";
  Result<cluster_events::StatusChanged> r = event_codec::decode<cluster_events::StatusChanged>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("field Status: unknown value \"Exploded\""),
            std::string::npos)
      << r.status().message();
  j = event_codec::to_json(object_events::QuotaDeleted{frontend::Kind::kCohort, "", "x"});
  j["kind"] = "Pod";
  EXPECT_FALSE(event_codec::decode<object_events::QuotaDeleted>(j).ok());
}

TEST(TypedEvents, ANestedRecordReportsItsOwnField) {
  Json j = event_codec::to_json(object_events::QuotaApplied{
      {object_events::QuotaObjectDoc{frontend::Kind::kCohort, "", "x", Json::object()}}});
  j["objects"][0].erase("name");
  Result<object_events::QuotaApplied> r = event_codec::decode<object_events::QuotaApplied>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "quota.applied: field objects: missing field name");
  j = event_codec::to_json(cluster_events::Created{
      "c", "i", "a", true, Orchestrator::kSlurm, nullptr, "Automatic", hours(3), {group("a")}});
  j["Groups"][0] = "not a group";
  EXPECT_FALSE(event_codec::decode<cluster_events::Created>(j).ok());
}

TEST(TypedEvents, AnAbsentOrNullOptionalIsEmptyButARequiredNullIsNot) {
  Json j = event_codec::to_json(health_events::HostStatus{"h", "BurnIn", "r", std::nullopt});
  EXPECT_FALSE(j.contains("Checks")) << "an empty optional is not written";
  j["Checks"] = nullptr;
  ASSERT_TRUE(event_codec::decode<health_events::HostStatus>(j).ok());
  j["Reason"] = nullptr;
  EXPECT_FALSE(event_codec::decode<health_events::HostStatus>(j).ok());
}

TEST(TypedEvents, APresentAlertSignalCarriesTheVerdictAndAClearItsResolution) {
  health_events::AlertSignal s;
  s.cluster = s.node = s.detector = s.subject = s.fault = "x";
  s.present = true;
  s.severity = health::Severity::kWarning;
  s.action = "none";
  Result<health_events::AlertSignal> r =
      event_codec::decode<health_events::AlertSignal>(event_codec::to_json(s));
  ASSERT_FALSE(r.ok()) << "no PersistenceUs";
  EXPECT_EQ(r.status().message(), "alert.signal: missing field PersistenceUs");
  s.present = false;
  EXPECT_FALSE(event_codec::decode<health_events::AlertSignal>(event_codec::to_json(s)).ok())
      << "a clear names what resolved it";
  s.resolved_by = "signal cleared";
  s.fixed = false;
  EXPECT_TRUE(event_codec::decode<health_events::AlertSignal>(event_codec::to_json(s)).ok());
}

TEST(TypedEvents, VersionsUpToThisReleaseAreReadAndNewerOnesRefused) {
  Json j = event_codec::to_json(cluster_events::Removed{"c"});
  j.erase("v");
  EXPECT_TRUE(event_codec::decode<cluster_events::Removed>(j).ok()) << "no v: version 1";
  j["v"] = event_codec::kVersion + 1;
  Result<cluster_events::Removed> r = event_codec::decode<cluster_events::Removed>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cluster.removed: event version 2"), std::string::npos);
  j["v"] = "1";
  EXPECT_FALSE(event_codec::decode<cluster_events::Removed>(j).ok());
  j["v"] = 0;
  EXPECT_FALSE(event_codec::decode<cluster_events::Removed>(j).ok());
  EXPECT_FALSE(event_codec::decode<cluster_events::Removed>(Json::array()).ok());
}

}  // namespace
}  // namespace gf
