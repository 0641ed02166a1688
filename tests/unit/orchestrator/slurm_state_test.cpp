// What slurmctld says, parsed (src/orchestrator/slurm/slurm_state.h): the JSON of `sinfo --json`
// and `squeue --json` as Slurm 22.05 (data_parser v0.0.38) prints it, the shapes later releases
// print, and what is refused.
#include "orchestrator/slurm/slurm_state.h"

#include <gtest/gtest.h>

namespace gf::slurm {
namespace {

// Trimmed from a real `sinfo --json` of Slurm 22.05.8: node3 drained by gpufleet, node1 listed
// once per partition.
constexpr const char* kSinfo2205 = R"({
  "meta": {"plugin": {"type": "openapi/v0.0.38"}, "Slurm": {"release": "22.05.8"}},
  "errors": [],
  "nodes": [
    {"name": "node1", "state": "allocated", "state_flags": [], "reason": "", "reason_set_by_user": null,
     "partitions": ["main"], "cpus": 1, "alloc_cpus": 1, "port": 17001},
    {"name": "node3", "state": "idle", "state_flags": ["DRAIN"], "reason": "gpufleet:rem-1 xid:79",
     "reason_set_by_user": "root", "partitions": ["main"], "cpus": 1, "alloc_cpus": 0},
    {"name": "node1", "state": "allocated", "state_flags": [], "partitions": ["gpu"], "cpus": 1}
  ]
})";

TEST(SlurmState, Sinfo2205_OneRecordPerNodeWithStateFlagsReasonAndEveryPartition) {
  auto nodes = parse_sinfo_json(kSinfo2205);
  ASSERT_TRUE(nodes.ok()) << nodes.status().to_string();
  ASSERT_EQ(nodes->size(), 2u);
  const NodeState& n1 = (*nodes)[0];
  EXPECT_EQ(n1.name, "node1");
  EXPECT_EQ(n1.state, "ALLOCATED");
  EXPECT_TRUE(n1.allocated());
  EXPECT_EQ(n1.partitions, (std::vector<std::string>{"main", "gpu"}));
  const NodeState& n3 = (*nodes)[1];
  EXPECT_EQ(n3.state, "IDLE");
  EXPECT_TRUE(n3.drained());
  EXPECT_FALSE(n3.allocated());
  EXPECT_EQ(n3.reason, "gpufleet:rem-1 xid:79");
  EXPECT_EQ(n3.reason_set_by, "root");
}

TEST(SlurmState, SinfoOfLaterReleases_StateListAndNumberObjectsAreRead) {
  auto nodes = parse_sinfo_json(R"({"errors": [], "nodes": [
    {"name": "n1", "state": ["DOWN", "DRAIN", "NOT_RESPONDING"], "reason": "Not responding",
     "partitions": ["p"], "cpus": 8, "alloc_cpus": {"set": true, "infinite": false, "number": 0}}]})");
  ASSERT_TRUE(nodes.ok()) << nodes.status().to_string();
  EXPECT_EQ((*nodes)[0].state, "DOWN");
  EXPECT_TRUE((*nodes)[0].down());
  EXPECT_TRUE((*nodes)[0].drained());
  EXPECT_TRUE((*nodes)[0].has_flag("NOT_RESPONDING"));
  EXPECT_EQ((*nodes)[0].cpus, 8);
}

TEST(SlurmState, Squeue2205_HostlistExpandedAndRawExitStatusDecoded) {
  auto jobs = parse_squeue_json(R"({"errors": [], "jobs": [
    {"job_id": 7, "name": "gang", "job_state": "RUNNING", "state_reason": "None",
     "partition": "gpu-training", "nodes": "node[1-3]", "node_count": 3, "restart_cnt": 0,
     "exit_code": 0},
    {"job_id": 8, "name": "short", "job_state": "FAILED", "nodes": "node2", "exit_code": 768},
    {"job_id": 9, "name": "killed", "job_state": "CANCELLED", "nodes": "", "exit_code": 9},
    {"job_id": 10, "job_state": "PENDING", "state_reason": "Resources", "nodes": "", "restart_cnt": 2}]})");
  ASSERT_TRUE(jobs.ok()) << jobs.status().to_string();
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_EQ((*jobs)[0].nodes, (std::vector<std::string>{"node1", "node2", "node3"}));
  EXPECT_EQ((*jobs)[0].node_count, 3);
  EXPECT_FALSE((*jobs)[0].finished());
  EXPECT_EQ((*jobs)[1].exit_code, 3) << "768 is exit status 3 << 8";
  EXPECT_TRUE((*jobs)[1].finished());
  EXPECT_EQ((*jobs)[2].exit_code, 128 + 9) << "killed by signal 9";
  EXPECT_EQ((*jobs)[3].reason, "Resources");
  EXPECT_EQ((*jobs)[3].restarts, 2);
  EXPECT_FALSE((*jobs)[3].finished());
}

TEST(SlurmState, SqueueOfLaterReleases_StateListAndReturnCodeObject) {
  auto jobs = parse_squeue_json(R"({"jobs": [
    {"job_id": {"set": true, "number": 12}, "job_state": ["COMPLETED"], "nodes": "a[01-02]",
     "exit_code": {"status": ["SUCCESS"], "return_code": {"set": true, "number": 0}}}]})");
  ASSERT_TRUE(jobs.ok()) << jobs.status().to_string();
  EXPECT_EQ((*jobs)[0].id, 12);
  EXPECT_EQ((*jobs)[0].state, "COMPLETED");
  EXPECT_EQ((*jobs)[0].nodes, (std::vector<std::string>{"a01", "a02"}));
  EXPECT_EQ((*jobs)[0].exit_code, 0);
}

TEST(SlurmState, ErrorsAndWrongShapesAreRefusedNamingTheField) {
  auto r = parse_sinfo_json(
      R"({"errors": [{"error": "Unable to contact slurm controller"}], "nodes": []})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Unable to contact slurm controller"), std::string::npos);
  r = parse_sinfo_json(R"({"nodes": [{"name": "n1", "state": 3}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nodes[0].state"), std::string::npos) << r.status().message();
  r = parse_sinfo_json(R"({"nodes": [{"state": "idle"}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("name"), std::string::npos) << r.status().message();
  EXPECT_FALSE(parse_sinfo_json("not json").ok());
  EXPECT_FALSE(parse_sinfo_json("[]").ok());
  auto j = parse_squeue_json(R"({"jobs": [{"job_id": -1}]})");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("jobs[0].job_id"), std::string::npos);
  EXPECT_FALSE(parse_sinfo_json(R"({"errors": [{"error": 1}], "nodes": []})").ok())
      << "an error that is not text is still an error, not an exception";
  j = parse_squeue_json(R"({"jobs": [{"job_id": 1, "exit_code": "x"}]})");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("jobs[0].exit_code"), std::string::npos);
}

// Hostlists expand: a small answer must not grow without bound.
TEST(SlurmState, NodeNamesOfAllJobsTogetherAreBounded) {
  std::string text = R"({"jobs": [)";
  for (int i = 1; i <= 16; ++i) {
    text += (i > 1 ? "," : "") + std::string(R"({"job_id": )") + std::to_string(i) +
            R"(, "nodes": "n[0-65535]"})";
  }
  text += "]}";
  auto jobs = parse_squeue_json(text);
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("jobs[15].nodes"), std::string::npos)
      << jobs.status().message();
}

}  // namespace
}  // namespace gf::slurm

namespace gf::slurm {
namespace {

// squeue prints the state description when Slurm set one: a failed launch says so, not only
// JobHeldUser.
TEST(SlurmState, JobReasonIsTheStateDescriptionWhenSlurmSetOne) {
  auto jobs = parse_squeue_json(R"({"jobs": [
    {"job_id": 4, "name": "gf-a-1", "job_state": "PENDING", "state_reason": "JobHeldUser",
     "state_description": "launch failed requeued held", "partition": "p", "nodes": ""},
    {"job_id": 5, "name": "x", "job_state": "PENDING", "state_reason": "Resources",
     "state_description": "", "partition": "p", "nodes": ""}]})");
  ASSERT_TRUE(jobs.ok()) << jobs.status().to_string();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].reason, "launch failed requeued held");
  EXPECT_EQ((*jobs)[1].reason, "Resources");
}

}  // namespace
}  // namespace gf::slurm
