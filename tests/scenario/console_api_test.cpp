// What the web console reads besides the resources' own routes (docs/console.md): its files
// (public, with security headers and ETags), whoami, the quota tree with borrowing and lending,
// queue depth over time, and billing as a series.
#include <gtest/gtest.h>

#include "api/auth.h"
#include "remediation_support.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;
using testing::shared_example;

HttpResponse get(Fleet& f, const std::string& path, std::map<std::string, std::string> query = {},
                 std::map<std::string, std::string> headers = {}) {
  return f.call("GET", path, "", std::move(query), std::move(headers));
}

TEST(ConsoleFiles, IndexAndAssetsArePublicWithCspAndAnEtagThatRevalidates) {
  Fleet f;
  HttpResponse index = get(f, "/");
  ASSERT_EQ(index.status, 200) << index.body;
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("/console/app.js"), std::string::npos);
  EXPECT_NE(index.headers["Content-Security-Policy"].find("frame-ancestors 'none'"),
            std::string::npos);
  EXPECT_EQ(index.headers["X-Frame-Options"], "DENY");
  const std::string etag = index.headers["ETag"];
  ASSERT_FALSE(etag.empty());
  HttpResponse again = get(f, "/", {}, {{"if-none-match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());

  HttpResponse js = get(f, "/console/app.js");
  ASSERT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_GT(js.body.size(), 10'000u);
  EXPECT_EQ(js.headers["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(get(f, "/console/app.css").status, 200);

  HttpResponse missing = get(f, "/console/secrets.txt");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("secrets.txt"), std::string::npos) << missing.body;
  EXPECT_EQ(get(f, "/console/../journal.db").status, 404);
}

TEST(ConsoleFiles, TheConsoleRoutesAndWhoamiNeedNoRole) {
  EXPECT_EQ(required_permission("GET", "GET /"), Permission::kPublic);
  EXPECT_EQ(required_permission("GET", "GET /console/{file}"), Permission::kPublic);
  EXPECT_EQ(required_permission("GET", "GET /v1/whoami"), Permission::kPublic);
  EXPECT_EQ(required_permission("GET", "GET /v1/quota-tree"), Permission::kRead);
}

TEST(Metrics, AreReadWithoutATokenAsTheDocsSay_NotRefused403) {
  EXPECT_EQ(required_permission("GET", "GET /metrics"), Permission::kPublic);
  Fleet f;
  auto tokens = TokenStore::parse("tokens: [{sha256: " + sha256_hex("gf_viewer_token") +
                                  ", subject: vera, roles: [viewer]}]");
  ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
  f.runtime().api().set_tokens(std::make_shared<TokenStore>(*tokens));
  const HttpResponse r = get(f, "/metrics");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("gpufleet_state_applied_seq"), std::string::npos);
  // Every other route still answers 401 without one.
  EXPECT_EQ(get(f, "/v1/clusters").status, 401);
}

TEST(ConsoleFiles, WithTokensOnlyGetsOfTheConsoleAndWhoamiPassWithoutOne) {
  Fleet f;
  auto tokens = TokenStore::parse("tokens: [{sha256: " + sha256_hex("gf_viewer_token") +
                                  ", subject: vera, roles: [viewer]}]");
  ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
  f.runtime().api().set_tokens(std::make_shared<TokenStore>(*tokens));
  EXPECT_EQ(get(f, "/").status, 200);
  EXPECT_EQ(get(f, "/console/app.js").status, 200);
  Json anonymous = Json::parse(get(f, "/v1/whoami").body);
  EXPECT_EQ(anonymous["SignedIn"], false);
  EXPECT_EQ(anonymous["Subject"], "");
  EXPECT_EQ(anonymous["AuthRequired"], true);
  Json vera =
      Json::parse(get(f, "/v1/whoami", {}, {{"authorization", "Bearer gf_viewer_token"}}).body);
  EXPECT_EQ(vera["Subject"], "vera");
  EXPECT_EQ(vera["Roles"], Json::array({"viewer"}));
  EXPECT_EQ(vera["SignedIn"], true);
  // Everything else still needs a token, and so does any other method on the public paths.
  EXPECT_EQ(get(f, "/v1/quota-tree").status, 401);
  EXPECT_EQ(get(f, "/v1/history/queues").status, 401);
  EXPECT_EQ(f.call("POST", "/v1/whoami", "{}").status, 401);
  EXPECT_EQ(f.call("POST", "/console/app.js", "{}").status, 401);
}

TEST(Whoami, WithoutAnAuthFileTheCallerIsWhoItSaysWithEveryRole) {
  Fleet f;
  Json me = Json::parse(f.call_as("Alice", "GET", "/v1/whoami").body);
  EXPECT_EQ(me["Subject"], "Alice");
  EXPECT_EQ(me["Roles"], Json::array({"admin"}));
  EXPECT_EQ(me["SignedIn"], true);
  EXPECT_EQ(me["AuthRequired"], false);
}

// Three g5 instances shared by QS1 (lends and borrows), QS2 (lends) and QS3 (reserves).
class SharedFleet : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::heal_cluster(f, "training", {{"workers", 3}}, "ml.g5.xlarge");
    ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("quota-shares.json")).status, 200);
  }
  void submit(const std::string& name, const std::string& share) {
    Json body = Json::parse(shared_example("service-job.json"));
    body["jobName"] = name;
    body["quotaShareName"] = share;
    HttpResponse r = f.call("POST", "/v1/service-jobs", body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
  }
  static const Json& node(const Json& tree, const std::string& name) {
    for (const Json& n : tree["Nodes"])
      if (n["Name"] == name) return n;
    static const Json none;
    ADD_FAILURE() << "no quota node " << name << " in " << tree.dump();
    return none;
  }
  Fleet f;
};

TEST_F(SharedFleet, QuotaTree_ABorrowerTakesWhatItsSiblingLendsAndTheCohortBorrowsNothing) {
  submit("a", "QS1");
  submit("b", "QS1");  // borrows QS2's instance
  submit("c", "QS1");  // waits: QS3's instance is never lent
  f.run_for(seconds(1));
  Json tree = Json::parse(get(f, "/v1/quota-tree").body);
  const Json& qs1 = node(tree, "share:shared-training-queue/QS1");
  EXPECT_EQ(qs1["Kind"], "Queue");
  EXPECT_EQ(qs1["Parent"], "jobqueue:shared-training-queue");
  EXPECT_EQ(qs1["AdmittedJobs"], 2);
  EXPECT_EQ(qs1["PendingJobs"], 1);
  ASSERT_EQ(qs1["Resources"].size(), 1u) << qs1.dump();
  EXPECT_EQ(qs1["Resources"][0]["Resource"], "ml.g5.xlarge");
  EXPECT_EQ(qs1["Resources"][0]["Nominal"], 1.0);
  EXPECT_EQ(qs1["Resources"][0]["Used"], 2.0);
  EXPECT_EQ(qs1["Resources"][0]["Borrowed"], 1.0);
  ASSERT_EQ(qs1["BorrowsFrom"].size(), 1u) << qs1.dump();
  EXPECT_EQ(qs1["BorrowsFrom"][0]["From"], "share:shared-training-queue/QS2");
  EXPECT_EQ(qs1["BorrowsFrom"][0]["Amount"], 1.0);

  const Json& qs2 = node(tree, "share:shared-training-queue/QS2");
  EXPECT_EQ(qs2["Resources"][0]["Lent"], 1.0);
  EXPECT_EQ(qs2["Resources"][0]["Used"], 0.0);
  // QS3 reserves its instance (lendingLimit 0): it lends nothing though it uses nothing.
  const Json& qs3 = node(tree, "share:shared-training-queue/QS3");
  EXPECT_EQ(qs3["Resources"][0]["Lent"], 0.0);
  // The cohort holds what its shares can share, QS1's and QS2's instances (QS3's is reserved,
  // visible only to QS3), and uses both: it borrows nothing.
  const Json& cohort = node(tree, "jobqueue:shared-training-queue");
  EXPECT_EQ(cohort["Kind"], "Cohort");
  EXPECT_EQ(cohort["Resources"][0]["SubtreeNominal"], 2.0);
  EXPECT_EQ(cohort["Resources"][0]["Used"], 2.0);
  EXPECT_EQ(cohort["Resources"][0]["Borrowed"], 0.0);
}

TEST(QuotaTree, AnElasticQuotaTreeRootsUnlimitedResourcesAreNullNeverOverflowed) {
  Fleet f;
  ASSERT_EQ(f.call("POST", "/v1/apply", shared_example("elasticquotatree.yaml")).status, 200);
  Json tree = Json::parse(get(f, "/v1/quota-tree").body);
  ASSERT_FALSE(tree["Nodes"].empty()) << tree.dump();
  for (const Json& n : tree["Nodes"]) {
    for (const Json& r : n["Resources"]) {
      for (const char* k : {"Nominal", "SubtreeNominal", "Used", "Borrowed", "Lent"}) {
        if (!r.contains(k) || r[k].is_null()) continue;
        EXPECT_GE(r[k].get<double>(), 0) << n["Name"] << " " << r.dump();
        EXPECT_LT(r[k].get<double>(), 1e18) << n["Name"] << " " << r.dump();
      }
    }
  }
}

TEST_F(SharedFleet, QueueHistory_SamplesAtMostOncePerMinuteOfModelTime) {
  submit("a", "QS1");
  submit("b", "QS3");
  submit("c", "QS3");  // waits: QS3 holds one instance and borrows none
  f.run_for(seconds(1));
  Json first = Json::parse(get(f, "/v1/history/queues").body);
  EXPECT_EQ(first["IntervalSeconds"], 60);
  ASSERT_FALSE(first["Samples"].empty());
  const Json& last = first["Samples"].back();
  EXPECT_EQ(last["Queues"]["share:shared-training-queue/QS3"]["Pending"], 1) << last.dump();
  EXPECT_EQ(last["Queues"]["share:shared-training-queue/QS3"]["Admitted"], 1);
  const size_t n = first["Samples"].size();

  f.run_for(seconds(20));  // within the minute: no new sample
  submit("d", "QS3");
  EXPECT_EQ(Json::parse(get(f, "/v1/history/queues").body)["Samples"].size(), n);
  f.run_for(minutes(2));
  submit("e", "QS3");
  Json later = Json::parse(get(f, "/v1/history/queues").body);
  ASSERT_EQ(later["Samples"].size(), n + 1);
  EXPECT_EQ(later["Samples"].back()["Queues"]["share:shared-training-queue/QS3"]["Pending"], 3);

  Json recent = Json::parse(get(f, "/v1/history/queues", {{"since", "1m"}}).body);
  EXPECT_EQ(recent["Samples"].size(), 1u);
  HttpResponse bad = get(f, "/v1/history/queues", {{"since", "yesterday-ish"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("since"), std::string::npos);
}

TEST(BillingSeries, BucketsCoverTheWindowAndSumToItsTotalWithTheBurnRateOfRunningInstances) {
  Fleet f;
  testing::heal_cluster(f, "bill", {{"g", 2}}, "ml.g5.xlarge");
  f.run_for(hours(3));
  Json b = Json::parse(
      get(f, "/v1/billing", {{"groupBy", "cluster"}, {"from", "2h"}, {"step", "30m"}}).body);
  ASSERT_EQ(b["Series"].size(), 4u) << b.dump();
  EXPECT_EQ(b["Step"], "30m");
  int64_t sum = 0;
  for (const Json& bucket : b["Series"]) sum += bucket["TotalMicros"].get<int64_t>();
  // Each bucket rounds its own micro-dollars down: at most one micro-dollar per record.
  EXPECT_LE(b["TotalMicros"].get<int64_t>() - sum, 4 * 2);
  EXPECT_GE(b["TotalMicros"].get<int64_t>(), sum);
  EXPECT_EQ(b["Series"][0]["From"], b["From"]);
  EXPECT_EQ(b["Series"][3]["To"], b["To"]);
  const int64_t price = Catalog::builtin().find("ml.g5.xlarge")->price_micros_per_hour;
  EXPECT_EQ(b["Items"][0]["BurnRateMicrosPerHour"], 2 * price);
}

TEST(BillingSeries, AStepMustBePositiveNeedsFromAndMakesAtMostAThousandBuckets) {
  Fleet f;
  f.run_for(hours(1));
  for (auto [query, says] : std::vector<std::pair<std::map<std::string, std::string>, std::string>>{
           {{{"from", "1h"}, {"step", "0s"}}, "step: expected a positive duration"},
           {{{"from", "1h"}, {"step", "soon"}}, "step: expected a positive duration"},
           {{{"step", "1h"}}, "step: needs from"},
           {{{"from", "1h"}, {"step", "1s"}}, "more than 1000 buckets"},
           {{{"from", "1h"}, {"step", "1m"}, {"groupBy", "instance"}}, "with groupBy=instance"},
           // Far apart: the bucket count is reckoned without overflow, not wrapped to a few.
           {{{"from", "9223372036854775807us"}, {"to", "2100-01-01T00:00:00Z"}, {"step", "1h"}},
            "from: a series starts no earlier than 1970"},
           {{{"from", "2026-01-01T00:00:00Z"}, {"to", "2100-01-01T00:00:00Z"}, {"step", "1h"}},
            "more than 1000 buckets"}}) {
    HttpResponse r = get(f, "/v1/billing", query);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_NE(r.body.find(says), std::string::npos) << r.body;
  }
}

}  // namespace
}  // namespace gf
