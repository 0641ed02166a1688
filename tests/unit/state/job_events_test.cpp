// Typed job events (state/job_events.h): every type round-trips through its payload, carries its
// version, and a malformed or too-new payload is an error naming the type, never a default.
#include <gtest/gtest.h>

#include "state/job_events.h"

namespace gf {
namespace {

using namespace job_events;

template <typename E>
E round_trip(const E& e) {
  const Json j = to_json(e);
  EXPECT_EQ(j.at("v"), event_codec::version_of<E>()) << E::kType;
  Result<E> back = decode<E>(j);
  EXPECT_TRUE(back.ok()) << E::kType << ": " << back.status().to_string();
  EXPECT_EQ(to_json(*back), j) << E::kType;
  EXPECT_EQ(to_event(e).type, E::kType);
  return *back;
}

Job sample_job() {
  Job j;
  j.id = "j-1";
  j.key = 7;
  j.name = "train";
  j.job_queue = "q";
  j.quota_share = "QS1";
  j.pod_sets.push_back(JobPodSet{"node", 2, Json::object(), "ml.g5.xlarge", true});
  return j;
}

TEST(JobEvents, EveryTypeRoundTripsThroughItsPayload) {
  EXPECT_EQ(round_trip(Submitted{sample_job()}).job, sample_job());
  const Admitted a = round_trip(Admitted{"j-1", 1, "c", {"i-1", "i-2"}, true, false});
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"i-1", "i-2"}));
  EXPECT_TRUE(a.borrowing);
  EXPECT_EQ(round_trip(Running{"j-1"}).id, "j-1");
  const Preempted p =
      round_trip(Preempted{"j-1", "j-2", "Reclaim", "why", from_micros(123456789), true});
  EXPECT_EQ(p.until, from_micros(123456789));
  EXPECT_TRUE(p.terminated);
  EXPECT_EQ(round_trip(Interrupted{"j-1", "i-3", "node left"}).node, "i-3");
  EXPECT_EQ(round_trip(Finished{"j-1", JobStatus::kSucceeded, "done"}).status,
            JobStatus::kSucceeded);
  EXPECT_EQ(round_trip(PriorityChanged{"j-1", 42}).priority, 42);
  JobWait w;
  w.kind = "Quota";
  w.reason = "QuotaExceeded";
  w.message = "waiting for quota";
  w.node = "QS1";
  w.shortfall = 1;
  w.since = from_micros(5);
  EXPECT_EQ(round_trip(Waiting{"j-1", w}).waiting, w);
  EXPECT_EQ(round_trip(Failover{"j-1", "c1", "Gracefully", "pods pending"}).purge_mode,
            "Gracefully");
  EXPECT_EQ(round_trip(CopyPurged{"j-1", "c1", "grace over"}).cluster, "c1");
  EXPECT_FALSE(round_trip(Suspend{"j-1", false}).suspend);
  EXPECT_EQ(round_trip(Deleted{"j-1", "ttl"}).reason, "ttl");
  PodState ps;
  ps.phase = "Failed";
  ps.exit_code = 3;
  ps.restarts = 2;
  ps.message = "container pytorch exited with code 3";
  ps.node = "i-2";
  const PodStatus pod = round_trip(PodStatus{"j-1", "train-worker-1", 2, ps});
  EXPECT_EQ(pod.state, ps);
  EXPECT_EQ(pod.placement, 2);
}

TEST(JobEvents, APayloadWithoutAVersionIsVersionOne) {
  Json j = to_json(Admitted{"j-1", 0, "c", {}, false, true});
  j.erase("v");
  Result<Admitted> a = decode<Admitted>(j);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_TRUE(a->replaced);
}

TEST(JobEvents, ANewerVersionIsRefusedNamingIt) {
  Json j = to_json(Running{"j-1"});
  j["v"] = kVersion + 1;
  Result<Running> r = decode<Running>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job.running: event version 2"), std::string::npos)
      << r.status().message();
}

TEST(JobEvents, AMissingOrMistypedFieldIsAnErrorNotADefault) {
  Json j = to_json(Preempted{"j-1", "j-2", "InQueue", "m", from_micros(1), false});
  j.erase("terminated");
  Result<Preempted> missing = decode<Preempted>(j);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("job.preempted"), std::string::npos);
  j = to_json(PriorityChanged{"j-1", 3});
  j["priority"] = "high";
  EXPECT_FALSE(decode<PriorityChanged>(j).ok());
  j = to_json(Finished{"j-1", JobStatus::kFailed, "x"});
  j["status"] = "RUNNING";
  EXPECT_FALSE(decode<Finished>(j).ok()) << "a finished job ends SUCCEEDED or FAILED";
  EXPECT_FALSE(decode<Deleted>(Json::array()).ok());
}

TEST(JobEvents, Compact_ASubmittedJobCarriesOnlyWhatDiffersFromANewJob) {
  Job job = sample_job();
  job.dispatch.emplace();
  job.dispatch->policy = "training";
  job.request = Json{{"kind", "PyTorchJob"}};
  const Json j = to_json(Submitted{job});
  const Json& carried = j.at("job");
  EXPECT_EQ(carried.at("id"), "j-1");
  EXPECT_EQ(carried.at("dispatch"), (Json{{"policy", "training"}})) << carried.dump();
  for (const char* unchanged : {"admitted", "history", "runs", "status", "started_us", "priority"})
    EXPECT_FALSE(carried.contains(unchanged)) << unchanged << " in " << carried.dump();
  EXPECT_LT(carried.dump().size(), job.to_json().dump().size() / 2) << carried.dump();
  Result<Submitted> back = decode<Submitted>(j);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->job, job);
}

TEST(JobEvents, Compact_AJobWithoutDispatchSaysSoAndReadsBackWithout) {
  const Json j = to_json(Submitted{sample_job()});
  EXPECT_TRUE(j.at("job").at("dispatch").is_null()) << j.dump();
  Result<Submitted> back = decode<Submitted>(j);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_FALSE(back->job.dispatch.has_value());
}

TEST(JobEvents, Compact_AVersionOnePayloadWithTheWholeJobReadsTheSame) {
  Job job = sample_job();
  job.dispatch.emplace();
  job.dispatch->restarts = 2;
  const Json v1 = {{"job", job.to_json()}, {"v", 1}};
  Result<Submitted> back = decode<Submitted>(v1);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->job, job);
  Result<Submitted> unversioned = decode<Submitted>(Json{{"job", job.to_json()}});
  ASSERT_TRUE(unversioned.ok()) << unversioned.status().to_string();
  EXPECT_EQ(unversioned->job, job);
}

TEST(JobEvents, Compact_AMistypedMemberOfASubmittedJobIsAnErrorNamingIt) {
  Json j = to_json(Submitted{sample_job()});
  j["job"]["priority"] = "high";
  Result<Submitted> r = decode<Submitted>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job.submitted: field job"), std::string::npos)
      << r.status().message();
  j["job"] = Json::array();
  EXPECT_FALSE(decode<Submitted>(j).ok());
  j = to_json(Submitted{sample_job()});
  j["v"] = 3;
  r = decode<Submitted>(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job.submitted: event version 3"), std::string::npos)
      << r.status().message();
}

// What an old job.submitted payload means depends on this base: a change here (a new default of
// Job or Dispatch) needs a new version of job.submitted that reads the old payloads over the old
// base (state/job_events.h, Codec<Job>).
TEST(JobEvents, Compact_TheBaseOfASubmittedJobIsPinned) {
  const Json pinned = Json::parse(R"({
"admitted":false,"admitted_us":null,"alternative":0,"cluster":"","clusters":[],
"created_us":0,
"dispatch":{
  "active_deadline_seconds":null,"backoff_limit":null,"bound_us":null,"cluster":"",
  "excluded":[],"failovers":0,"first_started_us":null,"grace_period_seconds":600,
  "left":[],"not_running_us":null,"policy":"","purge_mode":"Immediately","queued":false,
  "restart_policy":{},"restarting":false,"restarts":0,"suspended":false,
  "toleration_seconds":null,"ttl_seconds_after_finished":null},
"duration_us":null,"history":[],"history_count":0,"id":"","job_queue":"","key":0,
"kind":"ServiceJob","local_queue":"","max_preemptions":null,"name":"","namespace":"",
"pod_nodes":[],"pod_sets":[],"preempted_count":0,"priority":0,"quota_share":"",
"recent_preemptions":[],"request":{},"requeue_us":null,"runs":[],"started_us":null,
"status":"SUBMITTED","status_reason":"","stopped_us":null,"submit_seq":0
})");
  EXPECT_EQ(submitted_job_base(), pinned) << submitted_job_base().dump();
}

TEST(JobEvents, TheJobIdOfAnEvent) {
  EXPECT_EQ(job_id_of(Submitted::kType, to_json(Submitted{sample_job()})), "j-1");
  EXPECT_EQ(job_id_of(Deleted::kType, to_json(Deleted{"j-9", "x"})), "j-9");
  EXPECT_EQ(job_id_of(Deleted::kType, Json::array()), "");
}

}  // namespace
}  // namespace gf
