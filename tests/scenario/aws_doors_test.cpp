// The AWS SDKs' doors through the real handlers (docs/aws-compatibility.md): SageMaker's
// X-Amz-Target dispatch and AWS Batch's operation paths onto the REST routes, their answers and
// errors in each protocol's shape, pages, Signature V4 with and without an auth file, and what the
// audit log records.
#include <gtest/gtest.h>

#include "api/auth.h"
#include "api/sigv4.h"
#include "core/clock.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

constexpr const char* kSecret = "0123456789abcdefSECRET";

// A request an SDK would send: headers signed with `key`/`secret` at the wall clock's time.
HttpRequest signed_request(const std::string& path, const std::string& target,
                           const std::string& body, const std::string& key,
                           const std::string& secret) {
  HttpRequest r;
  r.method = "POST";
  r.path = path;
  r.body = body;
  r.headers["host"] = "127.0.0.1:8470";
  r.headers["content-type"] = target.empty() ? "application/json" : "application/x-amz-json-1.1";
  if (!target.empty()) r.headers["x-amz-target"] = target;
  const std::string iso =
      format_iso8601(std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now()));
  // 2026-12-06T20:24:58Z → 20261206T202458Z
  std::string amz;
  for (char c : iso.substr(0, 19))
    if (c != '-' && c != ':') amz += c;
  amz += "Z";
  r.headers["x-amz-date"] = amz;
  sigv4::Authorization a;
  a.access_key_id = key;
  a.date = amz.substr(0, 8);
  a.region = "us-east-1";
  a.service = target.empty() ? "batch" : "sagemaker";
  a.signed_headers = {"content-type", "host", "x-amz-date"};
  if (!target.empty()) a.signed_headers.push_back("x-amz-target");
  const std::string sig = sigv4::sign(
      secret, a,
      sigv4::string_to_sign(amz, a.scope(), sigv4::canonical_request(r, a.signed_headers)));
  std::string list;
  for (const std::string& h : a.signed_headers) list += (list.empty() ? "" : ";") + h;
  r.headers["authorization"] = "AWS4-HMAC-SHA256 Credential=" + key + "/" + a.scope() +
                               ", SignedHeaders=" + list + ", Signature=" + sig;
  return r;
}

HttpResponse sagemaker(Fleet& f, const std::string& op, const Json& in,
                       std::map<std::string, std::string> headers = {}) {
  headers["x-amz-target"] = "SageMaker." + op;
  headers["content-type"] = "application/x-amz-json-1.1";
  return f.call("POST", "/", in.dump(), {}, std::move(headers));
}

HttpResponse batch(Fleet& f, const std::string& op, const Json& in) {
  return f.call("POST", "/v1/" + op, in.dump(), {}, {{"content-type", "application/json"}});
}

Json g5_cluster(const std::string& name, int count) {
  return {{"ClusterName", name},
          {"NodeProvisioningMode", "Continuous"},
          {"InstanceGroups",
           {{{"InstanceGroupName", "g5"},
             {"InstanceType", "ml.g5.xlarge"},
             {"InstanceCount", count}}}}};
}

TEST(SageMakerDoor, TargetDispatchesToTheRestHandlersAndTimesAreEpochSeconds) {
  Fleet f;
  HttpResponse created = sagemaker(f, "CreateCluster", g5_cluster("c1", 2));
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(created.content_type, "application/x-amz-json-1.1");
  const std::string arn = Json::parse(created.body)["ClusterArn"];
  // The same cluster through the REST API.
  EXPECT_EQ(f.describe("c1")["ClusterArn"], arn);
  f.run_for(minutes(10));
  Json d = Json::parse(sagemaker(f, "DescribeCluster", {{"ClusterName", "c1"}}).body);
  EXPECT_TRUE(d["CreationTime"].is_number()) << d.dump();
  EXPECT_EQ(d["CreationTime"], to_micros(f.cluster("c1")->creation_time) / 1'000'000);
  // By ARN as well.
  EXPECT_EQ(
      Json::parse(sagemaker(f, "DescribeCluster", {{"ClusterName", arn}}).body)["ClusterName"],
      "c1");
  Json nodes = Json::parse(sagemaker(f, "ListClusterNodes", {{"ClusterName", "c1"}}).body);
  ASSERT_EQ(nodes["ClusterNodeSummaries"].size(), 2u);
  EXPECT_TRUE(nodes["ClusterNodeSummaries"][0]["LaunchTime"].is_number());
}

TEST(SageMakerDoor, UnknownOrMissingTargetsAndBadBodiesAreClearErrors) {
  Fleet f;
  HttpResponse none = f.call("POST", "/", "{}");
  EXPECT_EQ(none.status, 400);
  EXPECT_NE(none.body.find("X-Amz-Target"), std::string::npos) << none.body;
  HttpResponse other = sagemaker(f, "CreateTrainingJob", Json::object());
  EXPECT_EQ(other.status, 400);
  EXPECT_EQ(Json::parse(other.body)["__type"], "UnknownOperationException");
  EXPECT_EQ(other.headers["x-amzn-ErrorType"], "UnknownOperationException");
  HttpResponse foreign = f.call("POST", "/", "{}", {}, {{"x-amz-target", "AWSBatch.ListJobs"}});
  EXPECT_EQ(Json::parse(foreign.body)["__type"], "UnknownOperationException");
  HttpResponse list = f.call("POST", "/", "[1]", {}, {{"x-amz-target", "SageMaker.ListClusters"}});
  EXPECT_EQ(list.status, 400);
  EXPECT_NE(list.body.find("expected a JSON object"), std::string::npos) << list.body;
  HttpResponse missing = sagemaker(f, "DescribeCluster", Json::object());
  EXPECT_EQ(Json::parse(missing.body)["message"], "ClusterName: required");
  HttpResponse sneaky = sagemaker(f, "DescribeCluster", {{"ClusterName", "c1/nodes/i-1"}});
  EXPECT_EQ(sneaky.status, 400) << "a name is one path segment";
  HttpResponse gone = sagemaker(f, "DescribeCluster", {{"ClusterName", "nope"}});
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(Json::parse(gone.body)["__type"], "ResourceNotFound");
  // GET / is still the console, and other methods on / are not the door.
  EXPECT_EQ(f.call("PUT", "/", "{}").status, 405);
}

TEST(SageMakerDoor, ListsPageWithMaxResultsAndNextToken) {
  Fleet f;
  for (const char* n : {"a", "b", "c"})
    ASSERT_EQ(sagemaker(f, "CreateCluster", g5_cluster(n, 0)).status, 200);
  std::vector<std::string> seen;
  Json in = {{"MaxResults", 2}};
  for (int i = 0; i < 5; ++i) {
    Json page = Json::parse(sagemaker(f, "ListClusters", in).body);
    for (const Json& c : page["ClusterSummaries"]) seen.push_back(c["ClusterName"]);
    if (!page.contains("NextToken")) break;
    in["NextToken"] = page["NextToken"];
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
  HttpResponse bad = sagemaker(f, "ListClusters", {{"NextToken", "nonsense"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("NextToken"), std::string::npos);
  EXPECT_EQ(sagemaker(f, "ListClusters", {{"MaxResults", 0}}).status, 400);
  EXPECT_EQ(sagemaker(f, "ListClusters", {{"CreationTimeAfter", "soon"}}).status, 400);
}

TEST(SageMakerDoor, DescribeClusterEventFindsOneEventOfItsCluster) {
  Fleet f;
  ASSERT_EQ(sagemaker(f, "CreateCluster", g5_cluster("c1", 1)).status, 200);
  ASSERT_EQ(sagemaker(f, "CreateCluster", g5_cluster("c2", 1)).status, 200);
  f.run_for(minutes(10));
  Json events = Json::parse(
      sagemaker(f, "ListClusterEvents", {{"ClusterName", "c1"}, {"MaxResults", 2}}).body);
  ASSERT_EQ(events["Events"].size(), 2u);
  EXPECT_TRUE(events.contains("NextToken"));
  const std::string id = events["Events"][1]["EventId"];
  Json one = Json::parse(
      sagemaker(f, "DescribeClusterEvent", {{"ClusterName", "c1"}, {"EventId", id}}).body);
  EXPECT_EQ(one["EventDetails"]["EventId"], id);
  EXPECT_TRUE(one["EventDetails"]["EventTime"].is_number());
  EXPECT_EQ(sagemaker(f, "DescribeClusterEvent", {{"ClusterName", "c2"}, {"EventId", id}}).status,
            404)
      << "another cluster's event";
  EXPECT_EQ(
      sagemaker(f, "DescribeClusterEvent", {{"ClusterName", "c1"}, {"EventId", "ev-x"}}).status,
      404);
  EXPECT_EQ(
      sagemaker(f, "ListClusterEvents", {{"ClusterName", "c1"}, {"SortOrder", "Ascending"}}).status,
      400);
}

TEST(BatchDoor, ErrorsAreClientExceptionWithTheCodeInTheMessage) {
  Fleet f;
  HttpResponse r = batch(f, "describeservicejob", {{"jobId", "nope"}});
  EXPECT_EQ(r.status, 400);
  Json body = Json::parse(r.body);
  EXPECT_EQ(body["__type"], "ClientException");
  EXPECT_EQ(r.headers["x-amzn-ErrorType"], "ClientException");
  EXPECT_EQ(body["message"].get<std::string>().rfind("ResourceNotFound: ", 0), 0u) << r.body;
  HttpResponse missing = batch(f, "describeservicejob", Json::object());
  EXPECT_EQ(Json::parse(missing.body)["message"], "ValidationException: jobId: required");
  EXPECT_EQ(
      batch(f, "listservicejobs", {{"filters", {{{"name", "COLOR"}, {"values", {"x"}}}}}}).status,
      400);
}

TEST(BatchDoor, UpdatesChangeTheNamedFieldsAndKeepTheRest) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("quota-shares.json")).status, 200);
  HttpResponse u = batch(
      f, "updatequotashare",
      {{"quotaShareArn", "arn:gpufleet:local:000000000000:quota-shares/QS1"},
       {"resourceSharingConfiguration", {{"strategy", "LEND_AND_BORROW"}, {"borrowLimit", 50}}}});
  ASSERT_EQ(u.status, 200) << u.body;
  Json qs1 = Json::parse(batch(f, "describequotashare", {{"quotaShareArn", "QS1"}}).body);
  EXPECT_EQ(qs1["resourceSharingConfiguration"]["borrowLimit"], 50);
  EXPECT_EQ(qs1["preemptionConfiguration"]["inSharePreemption"], "ENABLED");
  EXPECT_EQ(qs1["capacityLimits"][0]["maxCapacity"], 1);
  // An update that would make the set invalid changes nothing.
  HttpResponse bad =
      batch(f, "updatequotashare",
            {{"quotaShareArn", "QS2"},
             {"resourceSharingConfiguration", {{"strategy", "LEND"}, {"borrowLimit", 10}}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("borrowLimit"), std::string::npos) << bad.body;
  EXPECT_EQ(Json::parse(batch(f, "describequotashare", {{"quotaShareArn", "QS2"}})
                            .body)["resourceSharingConfiguration"]
                .contains("borrowLimit"),
            false);
}

TEST(SigV4Door, WithoutAnAuthFileTheAccessKeyIdIsTheCallerAndItsWritesAreAudited) {
  Fleet f;
  HttpRequest r = signed_request("/", "SageMaker.CreateCluster", g5_cluster("c1", 0).dump(),
                                 "AKIAALICE", "whatever-the-sdk-had");
  HttpResponse created = f.runtime().api().handle(r);
  ASSERT_EQ(created.status, 200) << created.body;
  ASSERT_EQ(f.runtime()
                .api()
                .handle(signed_request("/", "SageMaker.ListClusters", "{}", "AKIAALICE", "x"))
                .status,
            200);
  Json audit = f.json("GET", "/v1/audit");
  int by_alice = 0;
  for (const Json& a : audit["AuditRecords"]) {
    if (a["Identity"] != "AKIAALICE") continue;
    ++by_alice;
    EXPECT_EQ(a["Path"], "/v1/clusters") << "the REST call the door made: " << a.dump();
  }
  EXPECT_EQ(by_alice, 1) << "a read through the door is no mutation to audit: " << audit.dump();
}

TEST(DoorAudit, EveryWriteACallMakesIsAuditedAsItselfAndARefusedWriteByItsOperation) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("quota-shares.json")).status, 200);
  Json job = Json::parse(shared_example("service-job.json"));
  std::vector<std::string> ids;
  for (const char* n : {"j1", "j2"}) {
    job["jobName"] = n;
    ids.push_back(Json::parse(batch(f, "submitservicejob", job).body)["jobId"]);
  }
  HttpResponse t =
      batch(f, "terminateservicejobs", {{"jobs", {ids[0], ids[1], "nope"}}, {"reason", "cleanup"}});
  ASSERT_EQ(t.status, 200) << t.body;
  Json out = Json::parse(t.body);
  EXPECT_EQ(out["successful"], Json(ids));
  ASSERT_EQ(out["errors"].size(), 1u);
  EXPECT_EQ(out["errors"][0]["job"], "nope");
  EXPECT_EQ(out["errors"][0]["code"], "ResourceNotFound");
  // A write the door refused before it made a REST call.
  EXPECT_EQ(sagemaker(f, "DeleteCluster", Json::object()).status, 400);
  // A read the door refused is no mutation.
  EXPECT_EQ(sagemaker(f, "DescribeCluster", Json::object()).status, 400);
  std::vector<std::string> paths;
  const Json audit = f.json("GET", "/v1/audit");
  for (const Json& a : audit["AuditRecords"]) paths.push_back(a["Path"]);
  const std::vector<std::string> want = {
      "/v1/service-jobs/" + ids[0] + "/terminate", "/v1/service-jobs/" + ids[1] + "/terminate",
      "/v1/service-jobs/nope/terminate", "/ SageMaker.DeleteCluster"};
  ASSERT_GE(paths.size(), want.size()) << audit.dump();
  EXPECT_EQ(std::vector<std::string>(paths.end() - want.size(), paths.end()), want);
}

TEST(DoorAudit, ADryRunThroughADoorChangesNothing) {
  Fleet f;
  HttpResponse r = f.call("POST", "/", g5_cluster("c1", 1).dump(), {{"dryRun", "All"}},
                          {{"x-amz-target", "SageMaker.CreateCluster"}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(f.cluster("c1"), nullptr);
}

class SigV4WithAuthFile : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tokens = TokenStore::parse(std::string("accessKeys:\n") +
                                    "  - {accessKeyId: AKIAADMIN, secretAccessKey: " + kSecret +
                                    ", subject: root, roles: [admin]}\n" +
                                    "  - {accessKeyId: AKIAVIEW, secretAccessKey: " + kSecret +
                                    ", subject: vera, roles: [viewer]}\n");
    ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
    f.runtime().api().set_tokens(std::make_shared<TokenStore>(*tokens));
  }
  HttpResponse send(const HttpRequest& r) { return f.runtime().api().handle(r); }
  Fleet f;
};

TEST_F(SigV4WithAuthFile, ASignatureMadeWithTheSecretVerifiesAndRunsWithTheKeysRoles) {
  HttpResponse ok = send(signed_request("/", "SageMaker.CreateCluster", g5_cluster("c1", 0).dump(),
                                        "AKIAADMIN", kSecret));
  EXPECT_EQ(ok.status, 200) << ok.body;
  HttpResponse read =
      send(signed_request("/", "SageMaker.ListClusters", "{}", "AKIAVIEW", kSecret));
  EXPECT_EQ(read.status, 200) << read.body;
  HttpResponse denied = send(signed_request("/", "SageMaker.CreateCluster",
                                            g5_cluster("c2", 0).dump(), "AKIAVIEW", kSecret));
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(Json::parse(denied.body)["__type"], "AccessDeniedException") << denied.body;
  HttpResponse batch_read =
      send(signed_request("/v1/listservicejobs", "", "{}", "AKIAVIEW", kSecret));
  EXPECT_EQ(batch_read.status, 200) << batch_read.body;
}

TEST_F(SigV4WithAuthFile, AWrongSecretAnUnknownKeyOrATamperedBodyChangeNothing) {
  HttpResponse forged =
      send(signed_request("/", "SageMaker.CreateCluster", g5_cluster("c1", 0).dump(), "AKIAADMIN",
                          "wrong-secret-0000000"));
  EXPECT_EQ(forged.status, 403);
  EXPECT_EQ(Json::parse(forged.body)["__type"], "InvalidSignatureException");
  HttpResponse stranger = send(signed_request("/", "SageMaker.CreateCluster",
                                              g5_cluster("c1", 0).dump(), "AKIANOBODY", kSecret));
  EXPECT_EQ(stranger.status, 403);
  EXPECT_EQ(Json::parse(stranger.body)["__type"], "UnrecognizedClientException");
  HttpRequest tampered = signed_request("/", "SageMaker.CreateCluster", g5_cluster("c1", 0).dump(),
                                        "AKIAADMIN", kSecret);
  tampered.body = g5_cluster("c1", 5).dump();
  EXPECT_EQ(send(tampered).status, 403);
  HttpRequest stale = signed_request("/", "SageMaker.ListClusters", "{}", "AKIAADMIN", kSecret);
  stale.headers["x-amz-date"] = "20200101T000000Z";
  EXPECT_EQ(send(stale).status, 403);
  EXPECT_EQ(f.cluster("c1"), nullptr);
  // A bearer token is no access key, and an unsigned AWS call is unauthenticated.
  EXPECT_EQ(sagemaker(f, "ListClusters", Json::object()).status, 401);
}

}  // namespace
}  // namespace gf
