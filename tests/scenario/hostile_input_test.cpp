// Regression tests for the hardening rules (docs/security.md), each named after the rule a
// reproduced defect broke. Every refusal is a 4xx whose JSON names the field, and the fleet model
// is unchanged (model hash before = after).
#include <gtest/gtest.h>

#include "remediation_support.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

uint64_t model(Fleet& f) { return f.runtime().loop().state().model_hash(); }
std::string status_of(Fleet& f, const std::string& id) {
  return testing::remediation(f, id).value("Status", "");
}

// Answers are JSON (never a body that breaks a JSON reader) with a __type and a message.
Json error_of(const HttpResponse& r) {
  auto j = parse_json(r.body);
  EXPECT_TRUE(j.ok()) << r.body;
  if (!j.ok()) return Json::object();
  EXPECT_TRUE(j->contains("__type")) << r.body;
  return *j;
}

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::heal_cluster(f, "training", {{"workers", 3}}, "ml.g5.xlarge");
    ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("quota-shares.json")).status, 200);
    HttpResponse r = f.call("POST", "/v1/service-jobs", shared_example("service-job.json"));
    ASSERT_EQ(r.status, 200) << r.body;
    job = Json::parse(r.body)["jobId"];
    f.run_for(seconds(1));
  }
  Fleet f;
  std::string job;
};

TEST_F(HostileInput, ServiceJobPayloadStringWithAnOutOfRangeNumberIs400NotACrash) {
  Json body = Json::parse(shared_example("service-job.json"));
  body["jobName"] = "overflow";
  body["serviceRequestPayload"] =
      "{\"ResourceConfig\": {\"InstanceType\": \"ml.g5.xlarge\", \"InstanceCount\": 1e400}}";
  const uint64_t before = model(f);
  HttpResponse r = f.call("POST", "/v1/service-jobs", body.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(error_of(r)["message"].get<std::string>().find("serviceRequestPayload"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(model(f), before);
  HttpResponse bare = f.call("POST", "/v1/service-jobs", "1e400");
  EXPECT_EQ(bare.status, 400) << bare.body;
  EXPECT_EQ(f.call("GET", "/healthz").status, 200);
}

TEST_F(HostileInput, TerminateWithANonStringReasonIs400AndChangesNothing) {
  const uint64_t before = model(f);
  HttpResponse r = f.call("POST", "/v1/service-jobs/" + job + "/terminate", R"({"reason": 5})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("reason: expected string"), std::string::npos) << r.body;
  EXPECT_EQ(model(f), before);
  EXPECT_EQ(f.json("GET", "/v1/service-jobs/" + job)["status"], "RUNNING");
}

TEST_F(HostileInput, DecisionBodiesThatAreNotTheDocumentedObjectAre400AndChangeNothing) {
  // A migrate proposal waiting for a person.
  const std::string node = testing::group_nodes(f, "training", "workers").at(0);
  ASSERT_EQ(testing::send_signal(
                f, "training", node,
                Json{{"dcgm", {{"field", "DCGM_FI_DEV_ROW_REMAP_FAILURE"}, {"value", 1}}}})
                .status,
            200);
  f.run_for(minutes(6));
  Json rems = testing::remediations(f, node);
  ASSERT_EQ(rems.size(), 1u);
  const std::string id = rems[0]["RemediationId"];
  const std::string garbage("\x00\x01\xfe\xff{", 5);
  for (const std::string verb : {"approve", "reject", "cancel"}) {
    for (const std::string& body :
         {std::string("[]"), std::string("\"x\""), std::string("12"), garbage,
          std::string(R"({"Reason": 7})"), std::string(R"({"Reason": "ok", "Extra": 1})")}) {
      const uint64_t before = model(f);
      HttpResponse r = f.call_as("bob", "POST", "/v1/remediations/" + id + "/" + verb, body);
      EXPECT_EQ(r.status, 400) << verb << " " << body << ": " << r.body;
      (void)error_of(r);
      EXPECT_EQ(model(f), before) << verb << " " << body;
    }
  }
  for (const std::string& body :
       {std::string("[]"), std::string("\"x\""), std::string("12"), garbage}) {
    const uint64_t before = model(f);
    EXPECT_EQ(f.call("POST", "/v1/service-jobs/" + job + "/terminate", body).status, 400) << body;
    EXPECT_EQ(model(f), before);
  }
  EXPECT_EQ(status_of(f, id), "Proposed");
}

TEST_F(HostileInput, ApplyNestedDeeperThanTheLimitIs400NamingTheLimit) {
  const uint64_t before = model(f);
  for (int depth : {100000, 60000, 300}) {
    std::string body =
        "{\"apiVersion\":\"kubeflow.org/"
        "v1\",\"kind\":\"PyTorchJob\",\"metadata\":{\"name\":\"deep\"},\"x\":" +
        std::string(depth, '[') + std::string(depth, ']') + "}";
    HttpResponse r = f.call("POST", "/v1/apply", body);
    EXPECT_EQ(r.status, 400) << depth;
    EXPECT_NE(r.body.find("deeper than the limit of 256 levels"), std::string::npos)
        << r.body.substr(0, 300);
  }
  EXPECT_EQ(model(f), before);
}

// What the server accepted it can read back: a PyTorchJob nested just under the request limit is
// stored inside a journal event a few levels deeper, and a restart replays it.
TEST_F(HostileInput, AcceptedNestingJustUnderTheLimitReplaysAfterARestart) {
  ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("propagationpolicy-gang.yaml")).status, 200);
  const int depth = 255;  // with the body object: 256 levels, the most a request may have
  std::string body =
      "{\"apiVersion\":\"kubeflow.org/"
      "v1\",\"kind\":\"PyTorchJob\",\"metadata\":{\"name\":\"deep\"}," +
      std::string(
          "\"spec\":{\"pytorchReplicaSpecs\":{\"Master\":{\"replicas\":1,\"template\":{\"spec\":"
          "{") +
      "\"containers\":[{\"name\":\"m\",\"image\":\"i\",\"resources\":{\"limits\":{\"nvidia.com/"
      "gpu\":1}}}]}}}}}," +
      "\"x\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
  HttpResponse r = f.call("POST", "/v1/apply", body);
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  const uint64_t before = f.runtime().loop().state().hash();
  f.restart();
  EXPECT_EQ(f.runtime().loop().state().hash(), before);
  EXPECT_NE(f.runtime().loop().state().view().find_workload("PyTorchJob", "default", "deep"),
            nullptr);
}

// U+FFFE/U+FFFF cannot be written as YAML (a reader refuses them, yaml-cpp's writer replaces
// them), so `get -o yaml` could never show such a value: input holding one is refused, as an
// escape in JSON or YAML, or raw in JSON.
TEST_F(HostileInput, UnicodeNoncharactersAreRefusedInJsonAndYaml) {
  const uint64_t before = model(f);
  for (const std::string& body :
       {std::string("{\"ClusterName\": \"x\\uFFFF\", \"InstanceGroups\": []}"),
        std::string("{\"ClusterName\": \"x\xEF\xBF\xBE\", \"InstanceGroups\": []}")}) {
    HttpResponse r = f.call("POST", "/v1/clusters", body);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(error_of(r).value("message", "").find("noncharacter"), std::string::npos) << r.body;
  }
  HttpResponse y = f.call("POST", "/v1/apply",
                          "apiVersion: v1\nkind: ClusterQueue\nmetadata: {name: \"q\\uFFFE\"}\n");
  EXPECT_EQ(y.status, 400) << y.body;
  EXPECT_NE(error_of(y).value("message", "").find("line 3"), std::string::npos) << y.body;
  // Raw in a header (it would be the audit record's identity) or the path.
  HttpResponse h =
      f.call_as("alice\xEF\xBF\xBF", "POST", "/v1/clusters", shared_example("create_cluster.json"));
  EXPECT_EQ(h.status, 400) << h.body;
  EXPECT_NE(error_of(h).value("message", "").find("X-Gpufleet-User: holds U+FFFE or U+FFFF"),
            std::string::npos)
      << h.body;
  HttpResponse p = f.call("DELETE", "/v1/clusters/x\xEF\xBF\xBE");
  EXPECT_EQ(p.status, 400) << p.body;
  EXPECT_NE(error_of(p).value("message", "").find("path: holds"), std::string::npos) << p.body;
  EXPECT_EQ(model(f), before);
}

TEST_F(HostileInput, ApplyYamlAliasBombIsRefusedWithinTheBudget) {
  std::string y =
      "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: lol}\na: &a "
      "[lol,lol,lol,lol,lol,lol,lol,lol,lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    y += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 9; ++k) y += std::string(k ? "," : "") + "*" + static_cast<char>(c - 1);
    y += "]\n";
  }
  const uint64_t before = model(f);
  HttpResponse r = f.call("POST", "/v1/apply", y);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("expands to more than"), std::string::npos) << r.body;
  EXPECT_EQ(model(f), before);
}

TEST_F(HostileInput, MalformedValuesAre400NotInternalFailures) {
  const std::string bad_utf8 = std::string("{\"ClusterName\": \"x\xff\xfe\"}");
  struct Case {
    std::string method, path, body;
  };
  const std::vector<Case> cases = {
      {"POST", "/v1/clusters", bad_utf8},
      {"POST", "/v1/apply", "apiVersion: \"v1\xff\"\nkind: ClusterQueue\n"},
      {"POST", "/v1/apply", "1e400"},
      {"POST", "/v1/apply", R"({"apiVersion": 5, "kind": "PyTorchJob"})"},
      {"POST", "/v1/apply", R"({"apiVersion": "kubeflow.org/v1", "kind": ["PyTorchJob"]})"},
      {"POST", "/v1/remediations",
       R"({"ClusterName": "training", "NodeId": "x", "Action": "reboot", "Reason": 5})"},
      {"POST", "/v1/remediations",
       R"({"ClusterName": "training", "NodeId": "x", "Action": "reboot", "Detector": {}})"},
      {"POST", "/v1/clusters/training/nodes/x/signals/clear", R"({"Detector": 5})"},
      {"POST", "/v1/clusters", R"({"ClusterName": 5})"},
      {"POST", "/v1/service-jobs", R"({"jobName": "j", "clientToken": 5})"},
      {"PUT", "/v1/clusters/training/remediation-policy", "1e400"},
  };
  const uint64_t before = model(f);
  for (const Case& c : cases) {
    HttpResponse r = f.call(c.method, c.path, c.body);
    EXPECT_GE(r.status, 400) << c.path << " " << printable(c.body);
    EXPECT_LT(r.status, 500) << c.path << " " << printable(c.body) << ": " << r.body;
    (void)error_of(r);
    EXPECT_EQ(find_invalid_utf8(r.body), std::string_view::npos) << "the answer echoes raw bytes";
  }
  EXPECT_EQ(model(f), before);
  // A path with invalid UTF-8 is a 400 too, and its message stays valid JSON.
  HttpResponse p = f.call("GET", std::string("/v1/clusters/\xff"));
  EXPECT_EQ(p.status, 400);
  EXPECT_EQ(find_invalid_utf8(p.body), std::string_view::npos);
}

TEST_F(HostileInput, IdempotencyKeyReusedWithADifferentBodyIs409AndCreatesNothing) {
  auto submit = [&](const std::string& name, const std::string& key) {
    Json body = Json::parse(shared_example("service-job.json"));
    body["jobName"] = name;
    HttpRequest req;
    req.method = "POST";
    req.path = "/v1/service-jobs";
    req.body = body.dump();
    req.headers["idempotency-key"] = key;
    return f.runtime().api().handle(req);
  };
  HttpResponse first = submit("idem-a", "k-1");
  ASSERT_EQ(first.status, 200) << first.body;
  HttpResponse again = submit("idem-a", "k-1");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(Json::parse(again.body)["jobId"], Json::parse(first.body)["jobId"]);
  const uint64_t before = model(f);
  HttpResponse other = submit("idem-b", "k-1");
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_EQ(error_of(other)["__type"], "ConflictException");
  EXPECT_NE(other.body.find("reused with a different request"), std::string::npos);
  EXPECT_EQ(model(f), before);
}

TEST_F(HostileInput, ClientTokenIsHonouredWithoutAnUnknownFieldWarning) {
  Json c = {
      {"ClusterName", "tokened"},
      {"ClientToken", "t-1"},
      {"InstanceGroups",
       {{{"InstanceGroupName", "g"}, {"InstanceType", "ml.g5.xlarge"}, {"InstanceCount", 1}}}}};
  HttpResponse r = f.call("POST", "/v1/clusters", c.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("ClientToken"), std::string::npos) << r.body;
  HttpResponse again = f.call("POST", "/v1/clusters", c.dump());
  EXPECT_EQ(again.status, 200) << again.body;
}

TEST_F(HostileInput, TrailingSlashOrEmptySegmentIs404AndDeletesNothing) {
  for (const std::string path :
       {"/v1/clusters/training/", "/v1/clusters//training", "//v1/clusters/training"}) {
    HttpResponse r = f.call("DELETE", path);
    EXPECT_EQ(r.status, 404) << path << ": " << r.body;
  }
  EXPECT_NE(f.cluster("training"), nullptr);
  EXPECT_EQ(f.describe("training")["ClusterStatus"], "InService");
}

TEST_F(HostileInput, LabelKeysFollowKubernetesLabelSyntax) {
  const std::string node = testing::group_nodes(f, "training", "workers").at(0);
  const std::string path = "/v1/clusters/training/nodes/" + node + "/labels";
  const uint64_t before = model(f);
  for (const std::string body :
       {R"({"Labels": {"": "x"}})", R"({"Labels": {"has space": "x"}})",
        R"({"Labels": {"Bad_Prefix/x": "y"}})", R"({"Labels": {"ok": "bad value!"}})"}) {
    HttpResponse r = f.call("PUT", path, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
    EXPECT_NE(r.body.find("Labels."), std::string::npos) << r.body;
  }
  EXPECT_EQ(model(f), before);
  EXPECT_EQ(f.call("PUT", path, R"({"Labels": {"team": "ml", "example.com/zone": "a-1"}})").status,
            200);
}

TEST_F(HostileInput, SignalOfTenThousandXidLinesIsBoundedAndEachEventCarriesOnlyItsLine) {
  const std::string node = testing::group_nodes(f, "training", "workers").at(1);
  std::string text;
  for (int i = 0; i < 10000; ++i) text += testing::kXid79 + "\n";
  ASSERT_GT(text.size(), 500000u);
  const Seq before = f.runtime().loop().state().applied_seq();
  HttpResponse r = testing::send_signal(f, "training", node, text);
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  EXPECT_NE(r.body.find("are kept"), std::string::npos) << r.body.substr(0, 300);
  const Seq after = f.runtime().loop().state().applied_seq();
  EXPECT_LE(after - before, 1 + 1 + static_cast<Seq>(remediate::kMaxRecentEvidence) + 4);
  // The journal holds each line once per kept event, never the whole text.
  size_t bytes = 0;
  ASSERT_TRUE(f.journal()
                  .replay(before,
                          [&](const EventRecord& e) {
                            bytes += e.payload.size();
                            EXPECT_LT(e.payload.size(), 8000u) << e.type;
                            return ok_status();
                          })
                  .ok());
  EXPECT_LT(bytes, 100000u);
  // Many different faults in one request are refused, and nothing is recorded.
  std::string many;
  for (int i = 0; i < 300; ++i) {
    char pci[32];
    std::snprintf(pci, sizeof(pci), "0000:%02x:%02x.0", i / 32, i % 32);
    many += "NVRM: Xid (PCI:" + std::string(pci) + "): 79, pid=1, GPU has fallen off the bus.\n";
  }
  const uint64_t m = model(f);
  HttpResponse refused = testing::send_signal(f, "training", node, many);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(model(f), m);
}

TEST_F(HostileInput, RequesterCannotApproveItsOwnMigrateUnderAnySpelling) {
  const std::string node = testing::group_nodes(f, "training", "workers").at(2);
  testing::put_policy(f, "training", Json{{"Rules", {{{"Fault", "xid:79"}, {"Action", "none"}}}}});
  ASSERT_EQ(testing::send_signal(f, "training", node, testing::kXid79).status, 200);
  f.run_for(minutes(6));
  HttpResponse req = f.call_as("alice", "POST", "/v1/remediations",
                               Json{{"ClusterName", "training"},
                                    {"NodeId", node},
                                    {"Action", "migrate"},
                                    {"RequestId", "spell"}}
                                   .dump());
  ASSERT_EQ(req.status, 201) << req.body;
  const std::string id = Json::parse(req.body)["RemediationId"];
  for (const std::string who : {"alice", "Alice", "ALICE", " alice "}) {
    HttpResponse own = f.call_as(who, "POST", "/v1/remediations/" + id + "/approve");
    EXPECT_EQ(own.status, 400) << "'" << who << "': " << own.body;
  }
  EXPECT_EQ(status_of(f, id), "Proposed");
  EXPECT_EQ(f.call_as("bob", "POST", "/v1/remediations/" + id + "/approve").status, 200);
}

TEST_F(HostileInput, EveryMutatingCallIsAuditedRefusedOnesIncludedWithoutBodies) {
  const size_t before = f.runtime().loop().state().view().audit.size();
  EXPECT_EQ(f.call_as("carol", "POST", "/v1/service-jobs/" + job + "/terminate", R"({"reason": 5})")
                .status,
            400);
  EXPECT_EQ(f.call_as("carol", "DELETE", "/v1/clusters/nope").status, 404);
  EXPECT_EQ(
      f.call_as("carol", "POST", "/v1/service-jobs/" + job + "/terminate", R"({"reason": "done"})")
          .status,
      200);
  EXPECT_EQ(f.call("GET", "/v1/clusters").status, 200);  // reads are not audited
  Json audit = f.json("GET", "/v1/audit");
  const Json& list = audit["AuditRecords"];
  ASSERT_EQ(list.size(), before + 3) << audit.dump(2);
  const Json &a = list[before], &b = list[before + 1], &c = list[before + 2];
  EXPECT_EQ(a["Identity"], "carol");
  EXPECT_EQ(a["Code"], 400);
  EXPECT_EQ(a["Error"], "ValidationException");
  EXPECT_EQ(a["Resource"], "service-jobs/" + job);
  EXPECT_EQ(b["Code"], 404);
  EXPECT_EQ(c["Code"], 200);
  EXPECT_FALSE(c.contains("Error"));
  EXPECT_EQ(c["Method"], "POST");
  EXPECT_TRUE(c["RequestId"].get<std::string>().rfind("req-", 0) == 0);
  EXPECT_EQ(audit.dump().find("done"), std::string::npos) << "bodies are never recorded";
  HttpResponse filtered =
      f.call("GET", "/v1/audit", "", {{"identity", "Carol"}, {"resource", "clusters"}});
  ASSERT_EQ(filtered.status, 200);
  EXPECT_EQ(Json::parse(filtered.body)["AuditRecords"].size(), 1u) << filtered.body;
}

// Found by the api_requests fuzz target: a refused path with ill-formed UTF-8 went into the
// audit record raw, and the next snapshot (or state hash) threw while serializing it.
TEST_F(HostileInput, RefusedPathWithIllFormedUtf8IsAuditedPrintablyAndSnapshotsStillWork) {
  HttpResponse r = f.call("DELETE", std::string("/v1/clust\x82"
                                                "ers/none"));
  EXPECT_EQ(r.status, 400);
  const auto& audit = f.runtime().loop().state().view().audit;
  ASSERT_GT(audit.size(), 0u);
  const AuditRecord& last = audit.at(audit.size() - 1);
  EXPECT_EQ(find_invalid_utf8(last.path), std::string_view::npos) << last.path;
  EXPECT_EQ(last.code, 400);
  EXPECT_NO_THROW((void)f.runtime().loop().state().hash());
  auto snapshot = FleetState::from_json(f.runtime().loop().state().to_json());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().to_string();
  const uint64_t before = f.runtime().loop().state().hash();
  f.restart();
  EXPECT_EQ(f.runtime().loop().state().hash(), before) << "replay rebuilds what memory held";
}

}  // namespace
}  // namespace gf
