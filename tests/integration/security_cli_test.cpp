// The real binary with an auth file (docs/security.md): tokens made by `gpufleet token create`,
// roles enforced per route and per job, identities compared after normalisation, every call
// audited, the data directory private, TLS with a self-signed pair this test makes.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>

#include "core/time.h"
#include "support/gpufleet_server.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

using testing::CommandResult;
using testing::GpufleetServer;
using testing::run_command;
using testing::TempDir;

const std::string& kExamples = testing::kExamplesDir;

struct Token {
  std::string plain;
  std::string entry;  // the auth-file lines
};

// `gpufleet token create`: the token and the entry it prints.
Token make_token(const std::string& subject, const std::vector<std::string>& roles) {
  std::vector<std::string> args = {GPUFLEET_BINARY, "token", "create", "--subject", subject};
  for (const std::string& r : roles) args.insert(args.end(), {"--role", r});
  CommandResult r = run_command(args);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  Token t;
  std::smatch m;
  if (std::regex_search(r.out, m, std::regex(R"(\n  (gf_[A-Za-z0-9_-]+)\n)"))) t.plain = m[1].str();
  const size_t at = r.out.find("  - sha256:");
  if (at != std::string::npos) t.entry = r.out.substr(at);
  EXPECT_FALSE(t.plain.empty()) << r.out;
  EXPECT_EQ(r.out.find(t.plain, r.out.find("sha256")), std::string::npos)
      << "the entry never holds the plain token";
  return t;
}

using testing::parse_out;

class SecurityCli : public ::testing::Test {
 protected:
  void SetUp() override {
    admin = make_token("root", {"admin"});
    op = make_token("olga", {"operator"});
    op_again = make_token("OLGA", {"operator"});  // the same person, another spelling
    op2 = make_token("bob", {"operator"});
    viewer = make_token("vic", {"viewer"});
    qs1 = make_token("team-one", {"team:QS1"});
    qs2 = make_token("team-two", {"team:QS2"});
    agent = make_token("node-agent", {"agent"});
    std::ofstream out(dir_.file("auth.yaml"));
    out << "tokens:\n";
    for (const Token* t : {&admin, &op, &op_again, &op2, &viewer, &qs1, &qs2, &agent})
      out << t->entry;
    out.close();
    std::ofstream(dir_.file("cloud.json")) << R"({"launchLatency":"1m","lifecycleDuration":"1m"})";
    server_ = std::make_unique<GpufleetServer>(
        dir_.file("data"),
        std::vector<std::string>{"--auth-file", dir_.file("auth.yaml"), "--sim-speed", "600",
                                 "--sim-cloud", dir_.file("cloud.json"), "--rate-limit", "0"});
    ASSERT_FALSE(server_->url().empty()) << server_->process().output();
  }

  CommandResult as(const Token& t, std::vector<std::string> args) const {
    return server_->cli_as(t.plain, std::move(args));
  }

  TempDir dir_;
  Token admin, op, op_again, op2, viewer, qs1, qs2, agent;
  std::unique_ptr<GpufleetServer> server_;
};

TEST_F(SecurityCli, RolesTeamsApprovalsAndTheAuditLogThroughTheRealBinary) {
  int mutating_calls = 0;
  // No token: 401; a wrong one: 401; X-Gpufleet-User is no way in.
  CommandResult none = server_->cli({"cluster", "list"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.out.find("bearer token is required"), std::string::npos) << none.out;
  CommandResult bad = server_->cli_as("gf_not-a-token", {"--user", "root", "cluster", "list"});
  EXPECT_NE(bad.out.find("not valid"), std::string::npos) << bad.out;

  // The operator makes the cluster; a viewer may not (403 naming the role).
  std::ofstream(dir_.file("cluster.json"))
      << R"({"ClusterName":"training","NodeProvisioningMode":"Continuous","InstanceGroups":[)"
      << R"({"InstanceGroupName":"workers","InstanceType":"ml.g5.xlarge","InstanceCount":3}]})";
  CommandResult denied = as(viewer, {"cluster", "create", "-f", dir_.file("cluster.json")});
  ++mutating_calls;
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_NE(denied.out.find("needs the operator role"), std::string::npos) << denied.out;
  CommandResult created = as(op, {"cluster", "create", "-f", dir_.file("cluster.json")});
  ++mutating_calls;
  ASSERT_EQ(created.exit_code, 0) << created.out;
  ASSERT_EQ(as(op, {"cluster", "wait", "training", "--full", "--timeout", "2m"}).exit_code, 0);

  // Quota objects are the admin's; an operator is refused.
  CommandResult quota_denied = as(op, {"apply", "-f", kExamples + "quota-shares.json"});
  ++mutating_calls;
  EXPECT_NE(quota_denied.out.find("needs the"), std::string::npos) << quota_denied.out;
  ASSERT_EQ(as(admin, {"apply", "-f", kExamples + "quota-shares.json"}).exit_code, 0);
  ++mutating_calls;

  // Team QS1 submits into its share; team QS2 cannot see, change or cancel it, nor submit there.
  std::ifstream in(kExamples + "service-job.json");
  Json job = Json::parse(in);
  ASSERT_EQ(job["quotaShareName"], "QS1");
  std::ofstream(dir_.file("job.json")) << job.dump();
  CommandResult sub = as(qs1, {"-o", "json", "job", "submit", "-f", dir_.file("job.json")});
  ++mutating_calls;
  ASSERT_EQ(sub.exit_code, 0) << sub.out;
  const std::string id = parse_out(sub)["jobId"];
  CommandResult other_sub = as(qs2, {"job", "submit", "-f", dir_.file("job.json")});
  ++mutating_calls;
  EXPECT_NE(other_sub.exit_code, 0);
  EXPECT_NE(other_sub.out.find("team:QS1"), std::string::npos) << other_sub.out;
  CommandResult peek = as(qs2, {"describe", "job", id});
  EXPECT_NE(peek.exit_code, 0);
  EXPECT_NE(peek.out.find("not found"), std::string::npos) << "404, not 403: " << peek.out;
  // Nor its pods' logs (as if the pod did not exist); its own team is told where the pod stands.
  CommandResult logs2 = as(qs2, {"logs", "qs1-high-node-0"});
  EXPECT_NE(logs2.exit_code, 0);
  EXPECT_NE(logs2.out.find("not found in namespace"), std::string::npos) << logs2.out;
  CommandResult logs1 = as(qs1, {"logs", "qs1-high-node-0"});
  EXPECT_EQ(logs1.out.find("not found in namespace"), std::string::npos) << logs1.out;
  // A node's pod list carries every job's environment: its agent and operators only.
  const std::string node_pods = "/v1/clusters/training/nodes/i-none/pods";
  EXPECT_EQ(server_->get_status_as(viewer.plain, node_pods), 403);
  EXPECT_EQ(server_->get_status_as(qs1.plain, node_pods), 403);
  EXPECT_NE(server_->get_status_as(agent.plain, node_pods), 403);
  EXPECT_NE(server_->get_status_as(op.plain, node_pods), 403);
  CommandResult list2 = as(qs2, {"-o", "json", "get", "jobs"});
  EXPECT_EQ(list2.out.find(id), std::string::npos) << list2.out;
  EXPECT_NE(as(qs1, {"-o", "json", "get", "jobs"}).out.find(id), std::string::npos);
  EXPECT_NE(as(viewer, {"-o", "json", "get", "jobs"}).out.find(id), std::string::npos)
      << "a viewer reads everything";
  CommandResult cancel2 =
      as(qs2, {"job", "terminate", id});  // its GET of the job already finds nothing
  EXPECT_NE(cancel2.out.find("not found"), std::string::npos) << cancel2.out;
  // A team token cannot act on clusters either.
  CommandResult team_delete = as(qs1, {"cluster", "delete", "training"});
  ++mutating_calls;
  EXPECT_NE(team_delete.out.find("needs the operator role"), std::string::npos) << team_delete.out;

  // A node fault through the agent's token, then olga asks for a migrate: no spelling of olga
  // approves it; bob does.
  const Json nodes = parse_out(as(op, {"-o", "json", "node", "list", "training"}));
  const std::string node = nodes["ClusterNodeSummaries"][0]["InstanceId"];
  std::ofstream(dir_.file("policy.yaml")) << "Rules:\n  - Fault: \"xid:79\"\n    Action: none\n";
  ASSERT_EQ(as(op, {"policy", "set", "training", "-f", dir_.file("policy.yaml")}).exit_code, 0);
  ++mutating_calls;
  CommandResult sig =
      as(agent, {"node", "signal", "training", node, "--line",
                 "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."});
  ++mutating_calls;
  ASSERT_EQ(sig.exit_code, 0) << sig.out;
  EXPECT_NE(as(agent, {"cluster", "delete", "training"}).exit_code, 0);
  ++mutating_calls;
  server_->set_token(op.plain);
  server_->poll("/v1/alerts?node=" + node + "&state=firing",
                [](const Json& j) { return !j.value("Alerts", Json::array()).empty(); });
  CommandResult req = as(op, {"-o", "json", "remediation", "request", "--cluster", "training",
                              "--node", node, "--action", "migrate", "--request-id", "m-1"});
  ++mutating_calls;
  ASSERT_EQ(req.exit_code, 0) << req.out;
  const std::string rem = parse_out(req)["RemediationId"];
  for (const Token* same : {&op, &op_again}) {
    CommandResult own = as(*same, {"remediation", "approve", rem});
    ++mutating_calls;
    EXPECT_NE(own.exit_code, 0);
    EXPECT_NE(own.out.find("cannot approve"), std::string::npos) << own.out;
  }
  CommandResult viewer_approve = as(viewer, {"remediation", "approve", rem});
  ++mutating_calls;
  EXPECT_NE(viewer_approve.out.find("needs the operator role"), std::string::npos)
      << viewer_approve.out;
  CommandResult ok = as(op2, {"-o", "json", "remediation", "approve", rem});
  ++mutating_calls;
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(parse_out(ok)["Approver"], "bob");

  // The audit log: every mutating call above, with its identity and outcome; readable by a viewer,
  // not by a team.
  EXPECT_NE(as(qs1, {"audit"}).exit_code, 0);
  CommandResult audit = as(viewer, {"-o", "json", "audit", "--limit", "10000"});
  ASSERT_EQ(audit.exit_code, 0) << audit.out;
  const Json records = parse_out(audit)["AuditRecords"];
  // The CLI's cluster wait and node signal make only the calls counted; heartbeats are not audited.
  EXPECT_EQ(records.size(), static_cast<size_t>(mutating_calls)) << records.dump(1);
  std::map<std::string, int> by_identity;
  for (const Json& r : records)
    by_identity[r["Identity"].get<std::string>() + " " + std::to_string(r["Code"].get<int>())]++;
  EXPECT_EQ(by_identity["vic 403"], 2) << Json(by_identity).dump();
  EXPECT_EQ(by_identity["bob 200"], 1);
  EXPECT_EQ(by_identity["OLGA 400"], 1);
  EXPECT_EQ(by_identity["team-two 403"], 1);
  EXPECT_EQ(by_identity["team-one 200"], 1);
  EXPECT_EQ(by_identity["node-agent 403"], 1);
  CommandResult table = as(admin, {"audit", "--identity", "bob"});
  EXPECT_NE(table.out.find("/v1/remediations/" + rem + "/approve"), std::string::npos) << table.out;

  // The data directory is the serving user's only.
  struct stat st {};
  ASSERT_EQ(::stat(dir_.file("data").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(dir_.file("data/journal.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A team token reads nothing of another team's job through the real binary: not in lists, not in
// a node's details (docs/security.md "Who sees a job"; every route is walked by
// tests/scenario/team_visibility_test.cpp).
TEST_F(SecurityCli, ATeamSeesNoNameOfAnotherTeamsJobInListsOrNodeDetails) {
  std::ofstream(dir_.file("cluster.json"))
      << R"({"ClusterName":"training","NodeProvisioningMode":"Continuous","InstanceGroups":[)"
      << R"({"InstanceGroupName":"workers","InstanceType":"ml.g5.xlarge","InstanceCount":3}]})";
  ASSERT_EQ(as(op, {"cluster", "create", "-f", dir_.file("cluster.json")}).exit_code, 0);
  ASSERT_EQ(as(op, {"cluster", "wait", "training", "--full", "--timeout", "2m"}).exit_code, 0);
  ASSERT_EQ(as(admin, {"apply", "-f", kExamples + "quota-shares.json"}).exit_code, 0);
  std::ifstream in(kExamples + "service-job.json");
  Json job = Json::parse(in);
  job["jobName"] = "secret-of-team-one";
  std::ofstream(dir_.file("job.json")) << job.dump();
  CommandResult sub = as(qs1, {"-o", "json", "job", "submit", "-f", dir_.file("job.json")});
  ASSERT_EQ(sub.exit_code, 0) << sub.out;
  const std::string id = parse_out(sub)["jobId"];
  server_->set_token(op.plain);
  server_->poll("/v1/jobs/" + id, [](const Json& j) { return j.value("status", "") == "RUNNING"; });
  for (const Json& n : server_->get("/v1/clusters/training/nodes")["ClusterNodeSummaries"]) {
    const std::string path = "/v1/clusters/training/nodes/" + n.value("InstanceId", "");
    server_->set_token(qs2.plain);
    const std::string other = server_->get(path).dump();
    EXPECT_EQ(other.find("secret-of-team-one"), std::string::npos) << other;
    EXPECT_EQ(other.find(id), std::string::npos) << other;
    server_->set_token(op.plain);
    if (server_->get(path).dump().find(id) != std::string::npos) {
      server_->set_token(qs1.plain);
      EXPECT_NE(server_->get(path).dump().find(id), std::string::npos) << "its own team sees it";
    }
  }
  for (const char* list : {"/v1/service-jobs", "/v1/objects/pods", "/v1/objects/pytorchjobs",
                           "/v1/job-queues/shared-training-queue/snapshot"}) {
    server_->set_token(qs2.plain);
    EXPECT_EQ(server_->get(list).dump().find(id), std::string::npos) << list;
  }
}

// 2,000 token-less POSTs: each refused, all of them in the audit log by their count, in at most
// two records per server minute (docs/security.md "What is audited").
TEST_F(SecurityCli, TokenlessFloodIsAuditedByAggregateWithItsCount) {
  httplib::Client c(server_->url());
  const std::string start = c.Get("/healthz")->get_header_value("X-Gpufleet-Now");
  for (int i = 0; i < 2000; ++i) {
    auto r = c.Post("/v1/clusters", "{}", "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 401);
  }
  const std::string end = c.Get("/healthz")->get_header_value("X-Gpufleet-Now");
  server_->set_token(viewer.plain);
  Json records;
  int64_t counted = 0;
  server_->poll("/v1/audit?limit=10000", [&](const Json& j) {
    counted = 0;
    records = Json::array();
    for (const Json& r : j.value("AuditRecords", Json::array())) {
      if (r.value("Source", "") != "127.0.0.1") continue;
      records.push_back(r);
      counted += r.value("Count", int64_t{1});
    }
    return counted == 2000;
  });
  EXPECT_EQ(counted, 2000);
  auto minutes = parse_iso8601(end).value() - parse_iso8601(start).value();
  const int64_t windows = std::chrono::duration_cast<std::chrono::minutes>(minutes).count() + 2;
  EXPECT_LE(records.size(), static_cast<size_t>(2 * windows)) << records.dump();
  CommandResult table = as(viewer, {"audit"});
  EXPECT_NE(table.out.find("address 127.0.0.1"), std::string::npos) << table.out;
}

TEST(SecurityServe, NonLoopbackListenWithoutAuthIsRefusedUnlessInsecure) {
  TempDir dir;
  CommandResult r =
      run_command({GPUFLEET_BINARY, "serve", "--data-dir", dir.file("d"), "--listen", "0.0.0.0:0"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--auth-file"), std::string::npos) << r.out;
  CommandResult bad = run_command({GPUFLEET_BINARY, "serve", "--data-dir", dir.file("d"),
                                   "--auth-file", dir.file("none.yaml")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("cannot read"), std::string::npos) << bad.out;
  std::ofstream(dir.file("bad.yaml"))
      << "tokens:\n  - sha256: abc\n    subject: x\n    roles: [admin]\n";
  CommandResult short_hash = run_command(
      {GPUFLEET_BINARY, "serve", "--data-dir", dir.file("d"), "--auth-file", dir.file("bad.yaml")});
  EXPECT_EQ(short_hash.exit_code, 2);
  EXPECT_NE(short_hash.out.find("tokens[0].sha256"), std::string::npos) << short_hash.out;
}

TEST(SecurityServe, LoopbackWithoutAuthSaysSoAtStartup) {
  TempDir dir;
  GpufleetServer server(dir.file("data"));
  ASSERT_FALSE(server.url().empty());
  server.process().signal(SIGTERM);
  const std::string rest = server.process().read_rest();
  server.process().wait();
  EXPECT_NE(rest.find("authentication: none"), std::string::npos)
      << server.process().output() << rest;
}

TEST(SecurityServe, TlsWithASelfSignedPairServesHttpsOnly) {
  TempDir dir;
  CommandResult gen =
      run_command({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                   "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
                   dir.file("key.pem"), "-out", dir.file("cert.pem")});
  ASSERT_EQ(gen.exit_code, 0) << gen.out;
  GpufleetServer server(dir.file("data"),
                        {"--tls-cert", dir.file("cert.pem"), "--tls-key", dir.file("key.pem")});
  ASSERT_EQ(server.url().rfind("https://", 0), 0u) << server.process().output();
  server.set_ca_cert(dir.file("cert.pem"));
  CommandResult v = server.cli({"version"});
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("server"), std::string::npos) << v.out;
  // Plain HTTP to the TLS port gets no answer it could mistake for one.
  CommandResult plain =
      run_command({GPUFLEET_BINARY, "--server", "http://127.0.0.1:" + std::to_string(server.port()),
                   "version"});
  EXPECT_EQ(plain.out.find("\"Version\""), std::string::npos) << plain.out;
  // Without the CA the client refuses the certificate.
  CommandResult untrusted =
      run_command({GPUFLEET_BINARY, "--server", server.url(), "cluster", "list"});
  EXPECT_NE(untrusted.exit_code, 0) << untrusted.out;
}

}  // namespace
}  // namespace gf
