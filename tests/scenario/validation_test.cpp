// docs/provisioning.md: every validation rule answers a ValidationException whose message names the
// field, and leaves the state exactly as it was.
#include <gtest/gtest.h>

#include <functional>

#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

struct Case {
  const char* rule;
  std::function<void(Json&)> edit;
  const char* field;   // the message starts with this path
  const char* phrase;  // and says this
};

Json seed() { return Json::parse(shared_example("create_cluster.json")); }

// Every journal event after `seq` is an audit record (docs/security.md): a refused call is
// audited and changes nothing else.
void expect_only_audit_since(Fleet& f, Seq seq) {
  ASSERT_TRUE(f.journal()
                  .replay(seq,
                          [](const EventRecord& e) {
                            EXPECT_EQ(e.type, event_type::kAuditRecorded);
                            return ok_status();
                          })
                  .ok());
}

void expect_rejected(Fleet& f, const std::string& method, const std::string& path, const Json& body,
                     const Case& c, int status = 400, const char* type = "ValidationException") {
  const uint64_t before = f.runtime().loop().state().model_hash();
  const Seq seq_before = f.runtime().loop().state().applied_seq();
  HttpResponse r = f.call(method, path, body.dump());
  ASSERT_EQ(r.status, status) << c.rule << ": " << r.body;
  Json b = Json::parse(r.body);
  EXPECT_EQ(b["__type"], type) << c.rule;
  const std::string msg = b["message"];
  EXPECT_EQ(msg.rfind(c.field, 0), 0u)
      << c.rule << ": message should start with " << c.field << ": " << msg;
  EXPECT_NE(msg.find(c.phrase), std::string::npos) << c.rule << ": " << msg;
  EXPECT_EQ(f.runtime().loop().state().model_hash(), before) << c.rule << " changed the state";
  // The only thing journaled is the refusal's audit record.
  EXPECT_EQ(f.runtime().loop().state().applied_seq(), seq_before + 1) << c.rule;
  expect_only_audit_since(f, seq_before);
}

TEST(Validation, EveryCreateClusterRuleNamesTheFieldAndChangesNothing) {
  Fleet f;
  // An existing cluster for the uniqueness rule.
  ASSERT_EQ(f.call("POST", "/v1/clusters", seed().dump()).status, 200);
  const std::vector<Case> cases = {
      {"ClusterName unique", [](Json&) {}, "ClusterName", "already exists"},
      {"ClusterName pattern", [](Json& j) { j["ClusterName"] = "bad_name!"; }, "ClusterName",
       "not valid"},
      {"ClusterName length", [](Json& j) { j["ClusterName"] = std::string(64, 'a'); },
       "ClusterName", "not valid"},
      {"ClusterName required", [](Json& j) { j.erase("ClusterName"); }, "ClusterName",
       "is required"},
      {"InstanceCount type",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][2]["InstanceCount"] = "x";
       },
       "InstanceGroups[2].InstanceCount", "expected integer, got \"x\""},
      {"InstanceCount >= 0",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][2]["InstanceCount"] = -1;
       },
       "InstanceGroups[2].InstanceCount", "between 0 and"},
      {"MinInstanceCount <= InstanceCount",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][2]["MinInstanceCount"] = 17;
       },
       "InstanceGroups[2].MinInstanceCount", "must not exceed InstanceCount (16)"},
      {"MinInstanceCount >= 0",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][2]["MinInstanceCount"] = -1;
       },
       "InstanceGroups[2].MinInstanceCount", ">= 0"},
      {"MinInstanceCount only with Continuous",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j.erase("NodeProvisioningMode");
         j["InstanceGroups"][2]["MinInstanceCount"] = 1;
       },
       "InstanceGroups[2].MinInstanceCount", "only supported with NodeProvisioningMode Continuous"},
      {"SlurmConfigStrategy rejected with Continuous",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["Orchestrator"]["Slurm"]["SlurmConfigStrategy"] = "Merge";
       },
       "Orchestrator.Slurm.SlurmConfigStrategy",
       "not supported with NodeProvisioningMode Continuous"},
      {"SlurmConfig required on every group in Continuous",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][1].erase("SlurmConfig");
       },
       "InstanceGroups[1].SlurmConfig", "required on every group"},
      {"exactly one Controller for Slurm",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][0]["SlurmConfig"]["NodeType"] = "Login";
       },
       "InstanceGroups", "exactly one group with SlurmConfig.NodeType Controller"},
      {"at most one Controller",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][1]["SlurmConfig"]["NodeType"] = "Controller";
       },
       "InstanceGroups", "at most one group"},
      {"unknown instance type",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][2]["InstanceType"] = "ml.p9.huge";
       },
       "InstanceGroups[2].InstanceType", "unknown instance type \"ml.p9.huge\""},
      {"PartitionNames only on Compute",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][1]["SlurmConfig"]["PartitionNames"] = {"p"};
       },
       "InstanceGroups[1].SlurmConfig.PartitionNames", "only Compute groups"},
      {"DefaultPartition is one of the group's PartitionNames",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][2]["SlurmConfig"]["DefaultPartition"] = "gpu-trainig";
       },
       "InstanceGroups[2].SlurmConfig.DefaultPartition",
       "\"gpu-trainig\" is not one of this group's PartitionNames"},
      {"one DefaultPartition per cluster",
       [](Json& j) {
         j["ClusterName"] = "c2";
         Json second = j["InstanceGroups"][2];
         second["InstanceGroupName"] = "worker-gpu-b";
         second["SlurmConfig"]["PartitionNames"] = {"other"};
         second["SlurmConfig"]["DefaultPartition"] = "other";
         j["InstanceGroups"][2]["SlurmConfig"]["DefaultPartition"] = "gpu-training";
         j["InstanceGroups"].push_back(second);
       },
       "InstanceGroups[3].SlurmConfig.DefaultPartition",
       "InstanceGroups[2] already names the default partition"},
      {"NodeType enum",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][2]["SlurmConfig"]["NodeType"] = "Worker";
       },
       "InstanceGroups[2].SlurmConfig.NodeType", "expected Controller, Login or Compute"},
      {"NodeProvisioningMode enum",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["NodeProvisioningMode"] = "Eventually";
       },
       "NodeProvisioningMode", "expected \"Continuous\""},
      {"group names unique",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][1]["InstanceGroupName"] = "controller-group";
       },
       "InstanceGroups[1].InstanceGroupName", "used by another group"},
      {"InstanceGroups non-empty",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"] = Json::array();
       },
       "InstanceGroups", "expected 1 to 100"},
      {"ThreadsPerCore 1 or 2",
       [](Json& j) {
         j["ClusterName"] = "c2";
         j["InstanceGroups"][0]["ThreadsPerCore"] = 4;
       },
       "InstanceGroups[0].ThreadsPerCore", "must be 1 or 2"},
  };
  for (const Case& c : cases) {
    Json body = seed();
    c.edit(body);
    expect_rejected(f, "POST", "/v1/clusters", body, c);
  }
}

TEST(Validation, MalformedBodiesAreRejectedWithoutChangingState) {
  Fleet f;
  const uint64_t before = f.runtime().loop().state().model_hash();
  const Seq seq = f.runtime().loop().state().applied_seq();
  for (const std::string body : {"{not json", "[1, 2", "", "just: [yaml"}) {
    HttpResponse r = f.call("POST", "/v1/clusters", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(Json::parse(r.body)["__type"], "ValidationException") << body;
  }
  HttpResponse arr = f.call("POST", "/v1/clusters", "[]");
  EXPECT_EQ(arr.status, 400);
  EXPECT_NE(Json::parse(arr.body)["message"].get<std::string>().find("expected object"),
            std::string::npos);
  EXPECT_EQ(f.runtime().loop().state().model_hash(), before);
  // The first refusal is recorded at once, the other four counted into one record when the
  // minute ends (docs/security.md "What is audited").
  f.run_for(minutes(1));
  int64_t refused = 0;
  ASSERT_TRUE(f.journal()
                  .replay(seq,
                          [&](const EventRecord& e) {
                            const Json p = Json::parse(e.payload);
                            if (p.value("Code", 0) == 400) refused += p.value("Count", int64_t{1});
                            return ok_status();
                          })
                  .ok());
  EXPECT_EQ(refused, 5) << "every refused call is counted";
  expect_only_audit_since(f, seq);
}

TEST(Validation, UpdateRulesNameTheFieldAndChangeNothing) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/clusters", seed().dump()).status, 200);
  f.run_for(hours(1));
  auto group = [](int i) { return seed()["InstanceGroups"][i]; };
  struct UpdateCase {
    Case c;
    Json body;
    int status = 400;
    const char* type = "ValidationException";
  };
  Json type_change = group(2);
  type_change["InstanceType"] = "ml.p4d.24xlarge";
  Json min_over = group(2);
  min_over["MinInstanceCount"] = 20;
  std::vector<UpdateCase> cases = {
      {{"instance type of an existing group is fixed", nullptr, "InstanceGroups[0].InstanceType",
        "cannot change the instance type"},
       Json{{"InstanceGroups", {type_change}}}},
      {{"MinInstanceCount <= InstanceCount on update", nullptr,
        "InstanceGroups[0].MinInstanceCount", "must not exceed"},
       Json{{"InstanceGroups", {min_over}}}},
      {{"delete unknown group", nullptr, "InstanceGroupsToDelete[0]", "no group named \"nope\""},
       Json{{"InstanceGroupsToDelete", {"nope"}}}},
      {{"controller group cannot be deleted", nullptr, "InstanceGroupsToDelete[0]",
        "Controller group"},
       Json{{"InstanceGroupsToDelete", {"controller-group"}}}},
      {{"nothing to update", nullptr, "InstanceGroups", "nothing to update"}, Json::object()},
  };
  for (const auto& uc : cases) {
    expect_rejected(f, "PUT", "/v1/clusters/my-training-cluster", uc.body, uc.c, uc.status,
                    uc.type);
  }
  Case missing{"unknown cluster", nullptr, "cluster", "not found"};
  expect_rejected(f, "PUT", "/v1/clusters/nope", Json{{"InstanceGroups", {group(2)}}}, missing, 404,
                  "ResourceNotFound");
}

// Unknown fields are refused by default, naming the first (a typo must not change behaviour);
// fieldValidation=Warn keeps the old way, each ignored with a warning, and Ignore says nothing.
TEST(Validation, UnknownFieldsAreRefusedByDefaultAndWarnedOrIgnoredOnRequest) {
  Fleet f;
  Json body = seed();
  body["SomethingNew"] = 1;
  body["InstanceGroups"][2]["FutureKnob"] = true;
  HttpResponse strict = f.call("POST", "/v1/clusters", body.dump());
  ASSERT_EQ(strict.status, 400) << strict.body;
  EXPECT_EQ(Json::parse(strict.body)["message"], "InstanceGroups[2].FutureKnob: unknown field");
  EXPECT_EQ(f.call("GET", "/v1/clusters/" + body["ClusterName"].get<std::string>()).status, 404)
      << "nothing was created";
  HttpResponse bad = f.call("POST", "/v1/clusters", body.dump(), {{"fieldValidation", "Loose"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Json::parse(bad.body)["message"],
            "fieldValidation: expected Strict, Warn or Ignore, got \"Loose\"");

  HttpResponse r = f.call("POST", "/v1/clusters", body.dump(), {{"fieldValidation", "Warn"}});
  ASSERT_EQ(r.status, 200) << r.body;
  Json w = Json::parse(r.body)["Warnings"];
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w.dump().find("InstanceGroups[2].FutureKnob"), std::string::npos);
  EXPECT_NE(w.dump().find("SomethingNew"), std::string::npos);

  body["ClusterName"] = "ignored-fields";
  HttpResponse quiet = f.call("POST", "/v1/clusters", body.dump(), {{"fieldValidation", "Ignore"}});
  ASSERT_EQ(quiet.status, 200) << quiet.body;
  EXPECT_FALSE(Json::parse(quiet.body).contains("Warnings")) << quiet.body;
}

TEST(Validation, OrchestratorDefaultsToSlurmWithSlurmConfigAndNativeWithout) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/clusters", shared_example("create_cluster_mincount.json")).status,
            200);
  EXPECT_EQ(f.describe("my-mincount-cluster")["Orchestrator"], Json({{"Slurm", Json::object()}}));
  Json native = {{"ClusterName", "native-1"},
                 {"NodeProvisioningMode", "Continuous"},
                 {"InstanceGroups",
                  {{{"InstanceGroupName", "gpus"},
                    {"InstanceType", "ml.g5.xlarge"},
                    {"InstanceCount", 2},
                    {"MinInstanceCount", 2}}}}};
  HttpResponse r = f.call("POST", "/v1/clusters", native.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(f.describe("native-1")["Orchestrator"], Json({{"Native", Json::object()}}));
  f.run_for(hours(1));
  EXPECT_EQ(f.describe("native-1")["ClusterStatus"], "InService");
}

}  // namespace
}  // namespace gf
