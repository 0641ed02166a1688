// One visibility rule for every read that names a job (docs/security.md "Who sees a job"): a
// team-only caller sees a job, its pods and the objects that select it only if the job is filed
// under one of its teams. The test walks every GET route the API has (the router's own list, so a
// route added later is walked too) with two team tokens, each parameter filled with every real
// value the fleet has, and asserts that no answer carries the other team's names or job ids.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "api/auth.h"
#include "model/quota_objects.h"
#include "remediation_support.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

constexpr const char* kAdmin = "Bearer gf_admin_token";
constexpr const char* kAlpha = "Bearer gf_alpha_token";
constexpr const char* kBravo = "Bearer gf_bravo_token";

HttpResponse call(Fleet& f, const char* token, const std::string& method, const std::string& path,
                  const std::string& body = "", std::map<std::string, std::string> query = {}) {
  return f.call(method, path, body, std::move(query), {{"authorization", token}});
}

// A team's PyTorchJob of one 8-GPU master and one 8-GPU worker in namespace `ns`, with the
// PropagationPolicy that sends it to cluster `gpu`.
std::string team_job(const std::string& prefix, const std::string& ns) {
  return "apiVersion: policy.one.alibabacloud.com/v1alpha1\nkind: PropagationPolicy\nmetadata: "
         "{name: " +
         prefix + "-policy, namespace: " + ns +
         "}\nspec:\n  placement:\n    clusterAffinity: {clusterNames: [gpu]}\n"
         "    replicaScheduling: {replicaSchedulingType: Divided, customSchedulingType: Gang}\n"
         "  resourceSelectors:\n  - {apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: " +
         prefix +
         "-job}\n---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: " + prefix +
         "-job, namespace: " + ns +
         "}\nspec:\n  pytorchReplicaSpecs:\n"
         "    Master:\n      replicas: 1\n      restartPolicy: OnFailure\n      template:\n"
         "        spec:\n          containers:\n          - name: pytorch\n            image: " +
         prefix + "-image\n            env: [{name: SECRET, value: " + prefix + "-env}]\n" +
         "            resources: {requests: {nvidia.com/gpu: 8}}\n"
         "    Worker:\n      replicas: 1\n      restartPolicy: OnFailure\n      template:\n"
         "        spec:\n          containers:\n          - name: pytorch\n            image: " +
         prefix + "-image\n            resources: {requests: {nvidia.com/gpu: 8}}\n";
}

std::string submit_service_job(Fleet& f, const char* token, const std::string& name,
                               const std::string& share) {
  Json job = Json::parse(shared_example("service-job.json"));
  job["jobName"] = name;
  job["quotaShareName"] = share;
  HttpResponse r = call(f, token, "POST", "/v1/service-jobs", job.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  return Json::parse(r.body).value("jobId", "");
}

void add_cluster(Fleet& f, const std::string& name, const std::string& type, int count) {
  const Json c = {
      {"ClusterName", name},
      {"NodeProvisioningMode", "Continuous"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "workers"}, {"InstanceType", type}, {"InstanceCount", count}}}}};
  HttpResponse r = call(f, kAdmin, "POST", "/v1/clusters", c.dump());
  ASSERT_EQ(r.status, 200) << r.body;
}

// The whole body of an answer, a stream's as far as it has come.
std::string body_of(const HttpResponse& r) {
  if (!r.stream) return r.body;
  std::string out;
  bool end = false;
  for (int i = 0; i < 10000 && !end; ++i) {
    std::string more = r.stream->next(end);
    if (more.empty()) break;
    out += more;
  }
  return out;
}

class TeamVisibility : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto entry = [](const std::string& secret, const std::string& subject,
                          const std::string& roles) {
      return "{sha256: " + sha256_hex(secret) + ", subject: " + subject + ", roles: [" + roles +
             "]}";
    };
    auto tokens = TokenStore::parse(
        "tokens: [" + entry("gf_admin_token", "root", "admin") + ", " +
        entry("gf_alpha_token", "zalpha-person", "\"team:team-a\", \"team:QS1\"") + ", " +
        entry("gf_bravo_token", "zbravo-person", "\"team:team-b\", \"team:QS2\"") + "]");
    ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
    f.runtime().api().set_tokens(std::make_shared<TokenStore>(*tokens));

    // The seed's Slurm cluster, so that Slurm's views (squeue) are walked with jobs on it.
    Json seed = Json::parse(shared_example("create_cluster.json"));
    seed["ClusterName"] = "gpu";
    ASSERT_EQ(call(f, kAdmin, "POST", "/v1/clusters", seed.dump()).status, 200);
    add_cluster(f, "training", "ml.g5.xlarge", 3);
    f.run_for(hours(1));
    ASSERT_EQ(call(f, kAdmin, "POST", "/v1/apply", shared_example("quota-shares.json")).status,
              200);
    for (const auto& [token, prefix, ns] :
         {std::tuple{kAlpha, "zalpha", "team-a"}, std::tuple{kBravo, "zbravo", "team-b"}}) {
      HttpResponse r = call(f, token, "POST", "/v1/apply", team_job(prefix, ns));
      ASSERT_EQ(r.status, 200) << r.body;
    }
    ids["zalpha"].insert(submit_service_job(f, kAlpha, "zalpha-svc", "QS1"));
    ids["zbravo"].insert(submit_service_job(f, kBravo, "zbravo-svc", "QS2"));
    ids["zbravo"].insert(submit_service_job(f, kBravo, "zbravo-waiting-svc", "QS2"));
    f.run_for(minutes(10));
    // A fault on the node of bravo's master: an alert, a remediation that drains its pods.
    const FleetView& v = f.runtime().loop().state().view();
    for (const auto& [id, j] : v.jobs) {
      ids[j->name.substr(0, 5)].insert(id);
      if (j->name == "zbravo-job" && j->admitted && !j->pods().empty())
        bravo_node = j->pods()[0].node;
    }
    ASSERT_FALSE(bravo_node.empty()) << "zbravo-job was not placed";
    Json signal = {{"Signal", testing::kXid79}};
    ASSERT_EQ(
        call(f, kAdmin, "POST", "/v1/clusters/gpu/nodes/" + bravo_node + "/signals", signal.dump())
            .status,
        200);
    f.run_for(minutes(30));
  }

  // Every value each route parameter may take in this fleet.
  std::map<std::string, std::vector<std::string>> parameter_values() {
    std::map<std::string, std::vector<std::string>> out;
    const FleetView& v = f.runtime().loop().state().view();
    out["name"] = {"gpu",
                   "training",
                   "zalpha-job",
                   "zbravo-job",
                   "zalpha-policy",
                   "zbravo-policy",
                   "shared-training-queue",
                   "QS1",
                   "QS2",
                   "training-env",
                   "quota-policy"};
    out["namespace"] = {"team-a", "team-b", "default"};
    out["pod"] = {"zalpha-job-master-0", "zbravo-job-master-0", "zbravo-job-worker-0"};
    out["file"] = {"app.js"};
    out["kind"] = {"pytorchjobs", "propagationpolicies", "pods", "queues"};
    for (int k = 0; k <= static_cast<int>(frontend::Kind::kQuotaShare); ++k)
      out["kind"].emplace_back(frontend::kind_plural(static_cast<frontend::Kind>(k)));
    for (const auto& [name, c] : v.clusters) {
      for (const auto& [id, n] : c->nodes) out["id"].push_back(id);
    }
    for (const auto& [team, set] : ids) out["id"].insert(out["id"].end(), set.begin(), set.end());
    for (const auto& [id, a] : v.health_state().alerts) out["id"].push_back(id);
    for (const auto& [id, r] : v.health_state().remediations) out["id"].push_back(id);
    return out;
  }

  // Every concrete path of `pattern` with its parameters filled from `values`.
  static std::vector<std::string> expand(
      const std::string& pattern, const std::map<std::string, std::vector<std::string>>& values) {
    const size_t open = pattern.find('{');
    if (open == std::string::npos) return {pattern};
    const size_t close = pattern.find('}', open);
    const std::string param = pattern.substr(open + 1, close - open - 1);
    std::vector<std::string> out;
    auto it = values.find(param);
    const std::vector<std::string> fill =
        it == values.end() ? std::vector<std::string>{"x"} : it->second;
    for (const std::string& v : fill) {
      for (std::string rest : expand(pattern.substr(close + 1), values))
        out.push_back(pattern.substr(0, open) + v + rest);
    }
    return out;
  }

  // Walks every GET route as `token`; each answer that names the other team or one of its job
  // ids, unless the question itself did (a 404 may repeat the name asked for), is a failure.
  // Returns how many calls answered 200 (so a walk that reached nothing is noticed).
  int walk(const char* token, const std::string& other_team) {
    const auto values = parameter_values();
    std::vector<std::string> forbidden = {other_team};
    forbidden.insert(forbidden.end(), ids[other_team].begin(), ids[other_team].end());
    const std::vector<std::map<std::string, std::string>> queries = {
        {},
        {{"namespace", "team-a"}},
        {{"namespace", "team-b"}},
        {{"describe", "true"}},
        {{"cluster", "gpu"}},
        {{"since", "1970-01-01T00:00:00Z"}}};
    int answered = 0;
    for (const auto& [method, pattern] : f.runtime().api().router().patterns()) {
      if (method != "GET") continue;
      for (const std::string& path : expand(pattern, values)) {
        for (const auto& query : queries) {
          const HttpResponse r = call(f, token, "GET", path, "", query);
          answered += r.status == 200;
          const std::string body = body_of(r);
          std::string asked = path;
          for (const auto& [k, v] : query) asked += " " + v;
          for (const std::string& name : forbidden) {
            if (asked.find(name) != std::string::npos) continue;  // an echo of the question
            EXPECT_EQ(body.find(name), std::string::npos)
                << "GET " << path << " (" << query.size() << " query parameters) answered "
                << r.status << " naming " << name << ": " << body.substr(0, 600);
          }
        }
      }
    }
    return answered;
  }

  Fleet f;
  std::map<std::string, std::set<std::string>> ids;  // "zalpha"/"zbravo" → job ids
  std::string bravo_node;
};

TEST_F(TeamVisibility, NoRouteShowsATeamAnotherTeamsJobsPodsOrPolicies) {
  // Each team sees its own job, pods and policy (the walk reaches real data).
  const Json own = Json::parse(call(f, kAlpha, "GET", "/v1/objects/pytorchjobs").body);
  EXPECT_EQ(own["items"].size(), 1u) << own.dump();
  EXPECT_EQ(own["items"][0]["metadata"]["name"], "zalpha-job");
  EXPECT_GT(walk(kAlpha, "zbravo"), 100);
  EXPECT_GT(walk(kBravo, "zalpha"), 100);
}

TEST_F(TeamVisibility, ViewersAndOperatorsStillSeeEveryTeamsJobs) {
  const Json all = Json::parse(call(f, kAdmin, "GET", "/v1/objects/pytorchjobs").body);
  EXPECT_EQ(all["items"].size(), 2u) << all.dump();
  // The node bravo's master runs on now (the fault's remediation moved the gang off the first).
  std::string now_on;
  for (const auto& [id, j] : f.runtime().loop().state().view().jobs) {
    if (j->name == "zbravo-job" && !j->pods().empty()) now_on = j->pods()[0].node;
  }
  ASSERT_FALSE(now_on.empty());
  const Json node = Json::parse(call(f, kAdmin, "GET", "/v1/clusters/gpu/nodes/" + now_on).body);
  EXPECT_NE(node.dump().find("zbravo-job"), std::string::npos) << node.dump();
}

}  // namespace
}  // namespace gf
