// The Kubernetes door's wire rules (src/api/k8s/, docs/kubernetes.md), through Api::handle as
// kubectl and the Python client reach it: discovery from the kind registry, the OpenAPI documents,
// Status errors, Tables, create/get/patch/delete onto gpufleet's own routes, and watch events.
#include <gtest/gtest.h>

#include "api/api.h"
#include "api/k8s/registry.h"
#include "api/k8s/table.h"
#include "journal/sqlite/sqlite_journal.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

constexpr const char* kTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
constexpr const char* kJobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
constexpr const char* kPolicies =
    "/apis/policy.one.alibabacloud.com/v1alpha1/namespaces/default/propagationpolicies";

Json policy() {
  return Json::parse(
      R"({"apiVersion":"policy.one.alibabacloud.com/v1alpha1","kind":"PropagationPolicy",
    "metadata":{"name":"gang","namespace":"default"},
    "spec":{"placement":{"replicaScheduling":{"replicaSchedulingType":"Divided","customSchedulingType":"Gang"}},
            "resourceSelectors":[{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob"}]}})");
}

Json job(const std::string& name) {
  Json j = Json::parse(R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
    "metadata":{"namespace":"default","labels":{"app":"pt"}},
    "spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"restartPolicy":"Never","template":{"spec":
      {"containers":[{"name":"pytorch","image":"x","resources":{"limits":{"nvidia.com/gpu":8}}}]}}}}}})");
  j["metadata"]["name"] = name;
  return j;
}

class K8sDoor : public ::testing::Test {
 protected:
  void SetUp() override {
    journal_ = std::move(SqliteJournal::open(dir_.file("journal.db"), {.fsync = false})).value();
    loop_ = std::make_unique<ControlLoop>(LoopOptions{}, clock_, *journal_, metrics_);
    ASSERT_TRUE(loop_->recover().ok());
    ApiOptions opts;
    opts.drive_loop_inline = true;
    api_ = std::make_unique<Api>(opts, *loop_, metrics_, clock_, ClusterSettings{});
  }

  HttpResponse call(const std::string& method, const std::string& path,
                    std::map<std::string, std::string> query = {}, std::string body = "",
                    std::map<std::string, std::string> headers = {}) {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.query = std::move(query);
    req.body = std::move(body);
    req.headers = std::move(headers);
    return api_->handle(req);
  }
  HttpResponse create(const std::string& path, const Json& doc,
                      std::map<std::string, std::string> query = {}) {
    return call("POST", path, std::move(query), doc.dump());
  }
  static Json body(const HttpResponse& r) { return Json::parse(r.body); }

  testing::TempDir dir_;
  VirtualClock clock_;
  Metrics metrics_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<ControlLoop> loop_;
  std::unique_ptr<Api> api_;
};

TEST_F(K8sDoor, DiscoveryListsEveryRegistryKindWithItsVerbsAndScope) {
  Json groups = body(call("GET", "/apis"));
  EXPECT_EQ(groups["kind"], "APIGroupList");
  std::set<std::string> names;
  for (const Json& g : groups["groups"]) names.insert(g["name"].get<std::string>());
  for (const k8s::KindInfo& k : k8s::kinds()) {
    if (!k.group.empty()) {
      EXPECT_TRUE(names.contains(k.group)) << k.group;
    }
    const std::string path = k.group.empty() ? "/api/v1" : "/apis/" + k.group + "/" + k.version;
    Json list = body(call("GET", path));
    ASSERT_EQ(list["kind"], "APIResourceList") << path;
    bool found = false;
    for (const Json& r : list["resources"]) {
      if (r["name"] != k.plural) continue;
      found = true;
      EXPECT_EQ(r["namespaced"], k.namespaced) << k.plural;
      EXPECT_EQ(r["kind"], k.kind);
      EXPECT_EQ(r["verbs"], Json(k.verbs())) << k.plural;
    }
    EXPECT_TRUE(found) << k.plural;
  }
  // Every listed kind answers a list (discovery never advertises a kind that 404s).
  for (const k8s::KindInfo& k : k8s::kinds()) {
    const std::string path = (k.group.empty() ? "/api/v1" : "/apis/" + k.group + "/" + k.version) +
                             (k.namespaced ? "/namespaces/default/" : "/") + k.plural;
    EXPECT_EQ(call("GET", path).status, 200) << path;
  }
}

TEST_F(K8sDoor, AggregatedDiscoveryAnswersWithTheExactContentTypeWhenAskedFor) {
  HttpResponse r = call(
      "GET", "/apis", {}, "",
      {{"accept",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"}});
  EXPECT_EQ(r.content_type, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  Json b = body(r);
  EXPECT_EQ(b["kind"], "APIGroupDiscoveryList");
  bool jobs = false;
  for (const Json& g : b["items"]) {
    for (const Json& res : g["versions"][0]["resources"]) {
      if (res["resource"] != "pytorchjobs") continue;
      jobs = true;
      EXPECT_EQ(res["scope"], "Namespaced");
      EXPECT_EQ(res["subresources"][0]["subresource"], "status");
    }
  }
  EXPECT_TRUE(jobs);
  // Without that Accept: the legacy shape kubectl 1.20 reads.
  EXPECT_EQ(body(call("GET", "/api"))["kind"], "APIVersions");
}

TEST_F(K8sDoor, VersionReportsTheKubernetesMinorItsWireMatches) {
  Json v = body(call("GET", "/version"));
  EXPECT_EQ(v["major"], "1");
  EXPECT_EQ(v["minor"], "32");
  EXPECT_EQ(v["gitVersion"].get<std::string>().rfind("v1.32.0+gpufleet.", 0), 0u);
}

TEST_F(K8sDoor, OpenApiV2IsAnEmptyProtobufWithAParsableContentType) {
  HttpResponse r = call("GET", "/openapi/v2");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.empty());
  // No '@' in the media type: client-go's MIME parser refuses the one kubectl asks with.
  EXPECT_EQ(r.content_type, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
}

TEST_F(K8sDoor, OpenApiV3PatchOperationNamesTheKindAndTakesFieldValidation) {
  Json root = body(call("GET", "/openapi/v3"));
  const std::string url = root["paths"]["apis/kubeflow.org/v1"]["serverRelativeURL"];
  EXPECT_EQ(url.rfind("/openapi/v3/apis/kubeflow.org/v1?hash=", 0), 0u);
  Json doc = body(call("GET", "/openapi/v3/apis/kubeflow.org/v1"));
  const Json& patch =
      doc["paths"]["/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "PyTorchJob");
  bool field_validation = false;
  for (const Json& p : patch["parameters"])
    field_validation = field_validation || (p["name"] == "fieldValidation" && p["in"] == "query");
  EXPECT_TRUE(field_validation);
  // No strategic merge patch for a custom kind: kubectl must keep sending merge patches.
  EXPECT_FALSE(patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
  EXPECT_TRUE(
      doc["components"]["schemas"]["org.kubeflow.v1.PyTorchJob"]["properties"]["spec"]["properties"]
          .contains("runPolicy"));
  // Core kinds are read only: no patch operation, so kubectl validates nothing of theirs itself.
  Json core = body(call("GET", "/openapi/v3/api/v1"));
  EXPECT_FALSE(core["paths"]["/api/v1/nodes/{name}"].contains("patch"));
}

TEST_F(K8sDoor, EveryFailureIsAStatusWithTheReasonKubectlPrints) {
  HttpResponse missing = call("GET", std::string(kJobs) + "/nope");
  EXPECT_EQ(missing.status, 404);
  Json b = body(missing);
  EXPECT_EQ(b["kind"], "Status");
  EXPECT_EQ(b["reason"], "NotFound");
  EXPECT_EQ(b["message"], "pytorchjobs.kubeflow.org \"nope\" not found");
  EXPECT_EQ(b["details"]["name"], "nope");
  EXPECT_EQ(body(call("GET", "/apis/kubeflow.org/v1/namespaces/default/widgets"))["reason"],
            "NotFound");
  // Read-only kinds refuse writes by name.
  Json refused = body(call("POST", "/api/v1/namespaces", {}, R"({"metadata":{"name":"x"}})"));
  EXPECT_EQ(refused["reason"], "MethodNotAllowed");
  // An early refusal (here: a token the server does not know) is a Status too.
  api_->set_tokens(std::make_shared<TokenStore>());
  HttpResponse who = call("GET", "/apis");
  EXPECT_EQ(who.status, 401);
  EXPECT_EQ(body(who)["reason"], "Unauthorized");
}

TEST_F(K8sDoor, CreateIsCreatedThenAlreadyExistsAndObjectsCarryKubernetesMetadata) {
  ASSERT_EQ(create(kPolicies, policy()).status, 201);
  HttpResponse first = create(kJobs, job("a"));
  ASSERT_EQ(first.status, 201) << first.body;
  Json a = body(first);
  EXPECT_EQ(a["apiVersion"], "kubeflow.org/v1");
  EXPECT_FALSE(a["metadata"]["uid"].get<std::string>().empty());
  EXPECT_FALSE(a["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(a["metadata"]["generation"], 1);
  for (const Json& c : a["status"]["conditions"]) EXPECT_EQ(c["observedGeneration"], 1);
  HttpResponse again = create(kJobs, job("a"));
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(body(again)["reason"], "AlreadyExists");
  // The URL's namespace and the body's must agree.
  Json other = job("b");
  other["metadata"]["namespace"] = "team-a";
  EXPECT_EQ(body(create(kJobs, other))["reason"], "BadRequest");
}

TEST_F(K8sDoor, StrictFieldValidationRefusesAnUnknownFieldAndWarnSendsAWarningHeader) {
  ASSERT_EQ(create(kPolicies, policy()).status, 201);
  Json typo = job("typo");
  typo["spec"]["bogusField"] = 1;
  HttpResponse strict = create(kJobs, typo, {{"fieldValidation", "Strict"}});
  EXPECT_EQ(strict.status, 400);
  EXPECT_NE(body(strict)["message"].get<std::string>().find("spec.bogusField"), std::string::npos);
  EXPECT_EQ(call("GET", std::string(kJobs) + "/typo").status, 404) << "nothing written";
  HttpResponse warn = create(kJobs, typo, {{"fieldValidation", "Warn"}});
  EXPECT_EQ(warn.status, 201);
  EXPECT_EQ(warn.headers["Warning"].rfind("299 - \"spec.bogusField", 0), 0u)
      << warn.headers["Warning"];
}

TEST_F(K8sDoor, MergeAndJsonPatchChangeWhatMayChangeAndRefuseTheRestAsInvalid) {
  ASSERT_EQ(create(kPolicies, policy()).status, 201);
  ASSERT_EQ(create(kJobs, job("p")).status, 201);
  const std::string url = std::string(kJobs) + "/p";
  HttpResponse merged =
      call("PATCH", url, {},
           R"({"metadata":{"annotations":{"k":"v"}},"spec":{"runPolicy":{"suspend":true}}})",
           {{"content-type", "application/merge-patch+json"}});
  ASSERT_EQ(merged.status, 200) << merged.body;
  EXPECT_EQ(body(merged)["metadata"]["annotations"]["k"], "v");
  EXPECT_EQ(body(merged)["spec"]["runPolicy"]["suspend"], true);
  HttpResponse json_patch =
      call("PATCH", url, {}, R"([{"op":"replace","path":"/spec/runPolicy/suspend","value":false}])",
           {{"content-type", "application/json-patch+json"}});
  ASSERT_EQ(json_patch.status, 200) << json_patch.body;
  EXPECT_EQ(body(json_patch)["spec"]["runPolicy"]["suspend"], false);
  HttpResponse spec = call("PATCH", url, {}, R"({"spec":{"runPolicy":{"backoffLimit":3}}})",
                           {{"content-type", "application/merge-patch+json"}});
  EXPECT_EQ(spec.status, 422);
  EXPECT_EQ(body(spec)["reason"], "Invalid");
  EXPECT_EQ(body(spec)["details"]["causes"][0]["field"], "spec");
  HttpResponse forced = call("PATCH", url, {{"force", "true"}}, "{}",
                             {{"content-type", "application/merge-patch+json"}});
  EXPECT_EQ(forced.status, 400) << "force is for apply patches only";
}

TEST_F(K8sDoor, ServerSideApplyCreatesThenConflictsOnAChangedFieldUntilForced) {
  auto apply = [&](const Json& doc, std::map<std::string, std::string> query) {
    return call("PATCH", std::string(kPolicies) + "/gang", std::move(query), doc.dump(),
                {{"content-type", "application/apply-patch+yaml"}});
  };
  Json first = policy();
  first["spec"]["failover"]["application"]["decisionConditions"]["tolerationSeconds"] = 30;
  EXPECT_EQ(body(apply(first, {}))["reason"], "Invalid") << "fieldManager is required";
  HttpResponse created = apply(first, {{"fieldManager", "kubectl"}, {"force", "false"}});
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(apply(first, {{"fieldManager", "kubectl"}}).status, 200) << "same values: no conflict";
  Json changed = first;
  changed["spec"]["failover"]["application"]["decisionConditions"]["tolerationSeconds"] = 60;
  HttpResponse conflict = apply(changed, {{"fieldManager", "alice"}, {"force", "false"}});
  ASSERT_EQ(conflict.status, 409) << conflict.body;
  Json c = body(conflict);
  EXPECT_EQ(c["reason"], "Conflict");
  EXPECT_EQ(c["message"].get<std::string>().rfind("Apply failed with 1 conflict:", 0), 0u);
  EXPECT_EQ(c["details"]["causes"][0]["field"],
            ".spec.failover.application.decisionConditions.tolerationSeconds");
  HttpResponse forced = apply(changed, {{"fieldManager", "alice"}, {"force", "true"}});
  ASSERT_EQ(forced.status, 200) << forced.body;
  EXPECT_EQ(
      body(forced)["spec"]["failover"]["application"]["decisionConditions"]["tolerationSeconds"],
      60);
}

TEST_F(K8sDoor, ListsFilterBySelectorsPageWithContinueAndPrintTables) {
  ASSERT_EQ(create(kPolicies, policy()).status, 201);
  for (const char* n : {"a", "b", "c"}) ASSERT_EQ(create(kJobs, job(n)).status, 201);
  Json page = body(call("GET", kJobs, {{"limit", "2"}}));
  EXPECT_EQ(page["kind"], "PyTorchJobList");
  ASSERT_EQ(page["items"].size(), 2u);
  Json rest =
      body(call("GET", kJobs, {{"limit", "2"}, {"continue", page["metadata"]["continue"]}}));
  ASSERT_EQ(rest["items"].size(), 1u);
  EXPECT_EQ(rest["items"][0]["metadata"]["name"], "c");
  EXPECT_EQ(body(call("GET", kJobs, {{"fieldSelector", "metadata.name=b"}}))["items"].size(), 1u);
  EXPECT_EQ(body(call("GET", kJobs, {{"labelSelector", "app!=pt"}}))["items"].size(), 0u);
  EXPECT_EQ(body(call("GET", kJobs, {{"fieldSelector", "spec.x=1"}}))["reason"], "BadRequest");
  HttpResponse table = call("GET", kJobs, {}, "", {{"accept", kTable}});
  EXPECT_EQ(table.content_type, "application/json;as=Table;v=v1;g=meta.k8s.io");
  Json t = body(table);
  EXPECT_EQ(t["kind"], "Table");
  EXPECT_EQ(t["columnDefinitions"][0]["name"], "Name");
  EXPECT_EQ(t["columnDefinitions"][1]["name"], "State");
  EXPECT_EQ(t["columnDefinitions"][3]["priority"], 1) << "wide columns only with -o wide";
  EXPECT_EQ(t["rows"][0]["cells"][0], "a");
  EXPECT_EQ(t["rows"][0]["cells"][5], 8) << "the gang's GPUs";
  EXPECT_EQ(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

TEST_F(K8sDoor, DeleteAnswersSuccessThenNotFound) {
  ASSERT_EQ(create(kPolicies, policy()).status, 201);
  ASSERT_EQ(create(kJobs, job("d")).status, 201);
  HttpResponse gone =
      call("DELETE", std::string(kJobs) + "/d", {}, R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(body(gone)["status"], "Success");
  EXPECT_EQ(call("DELETE", std::string(kJobs) + "/d").status, 404);
}

TEST_F(K8sDoor, DryRunAnswersTheObjectAndWritesNothing) {
  ASSERT_EQ(create(kPolicies, policy()).status, 201);
  HttpResponse dry = create(kJobs, job("dry"), {{"dryRun", "All"}});
  EXPECT_EQ(dry.status, 201) << dry.body;
  EXPECT_EQ(body(dry)["metadata"]["name"], "dry");
  EXPECT_EQ(call("GET", std::string(kJobs) + "/dry").status, 404);
}

// Reads the stream until it has nothing more now.
std::string drain(ResponseStream& s) {
  std::string out;
  bool end = false;
  for (std::string piece = s.next(end); !piece.empty() && !end; piece = s.next(end)) out += piece;
  return out;
}

TEST_F(K8sDoor, WatchSendsAddedThenWhatChangedThenDeleted) {
  ASSERT_EQ(create(kPolicies, policy()).status, 201);
  ASSERT_EQ(create(kJobs, job("w")).status, 201);
  HttpResponse r = call("GET", kJobs, {{"watch", "True"}, {"resourceVersion", "0"}});
  ASSERT_TRUE(r.stream) << r.body;
  const std::string added = drain(*r.stream);
  EXPECT_NE(added.find(R"("type":"ADDED")"), std::string::npos) << added;
  ASSERT_EQ(
      call("PATCH", std::string(kJobs) + "/w", {}, R"({"spec":{"runPolicy":{"suspend":true}}})",
           {{"content-type", "application/merge-patch+json"}})
          .status,
      200);
  const std::string modified = drain(*r.stream);
  EXPECT_NE(modified.find(R"("type":"MODIFIED")"), std::string::npos) << modified;
  ASSERT_EQ(call("DELETE", std::string(kJobs) + "/w").status, 200);
  const std::string deleted = drain(*r.stream);
  EXPECT_NE(deleted.find(R"("type":"DELETED")"), std::string::npos) << deleted;
  // One JSON event per line.
  for (const std::string& text : {added, modified, deleted}) {
    ASSERT_EQ(text.back(), '\n');
    EXPECT_TRUE(Json::accept(text.substr(0, text.find('\n'))));
  }
  EXPECT_EQ(r.stream->heartbeat(), "\n") << "NDJSON has no comments";
}

TEST(K8sAges, HumanAgesReadAsKubectlPrintsThem) {
  EXPECT_EQ(k8s::human_age(seconds(45)), "45s");
  EXPECT_EQ(k8s::human_age(seconds(330)), "5m30s");
  EXPECT_EQ(k8s::human_age(minutes(42)), "42m");
  EXPECT_EQ(k8s::human_age(hours(3)), "3h");
  EXPECT_EQ(k8s::human_age(hours(53)), "2d5h");
  EXPECT_EQ(k8s::human_age(hours(24 * 15)), "15d");
}

TEST(K8sBooleans, ParseAsGoDoesSoThePythonClientsCapitalTrueCounts) {
  bool v = false;
  EXPECT_TRUE(k8s::parse_go_bool("True", v) && v);
  EXPECT_TRUE(k8s::parse_go_bool("0", v) && !v);
  EXPECT_FALSE(k8s::parse_go_bool("yes", v));
}

}  // namespace
}  // namespace gf
