// The AWS protocol layer's rules (src/api/aws/protocol.h): SageMaker's timestamps, pages as AWS
// pages lists, and the auth file's access keys.
#include "api/aws/protocol.h"

#include <gtest/gtest.h>

#include "api/auth.h"
#include "core/ids.h"

namespace gf {
namespace {

Json names(int n) {
  Json items = Json::array();
  for (int i = 0; i < n; ++i) items.push_back({{"Name", "n" + std::to_string(i)}});
  return items;
}

std::string key(const Json& j) { return j.value("Name", ""); }

TEST(AwsTimes, IsoTimesUnderKeysEndingInTimeBecomeEpochSecondsAtAnyDepth) {
  Json body = {{"CreationTime", "2026-01-01T00:00:00Z"},
               {"Groups", {{{"LaunchTime", "2026-01-01T00:00:01.500Z"}, {"Name", "2026"}}}},
               {"Note", "2026-01-01T00:00:00Z"},
               {"OddTime", "not a time"}};
  aws::iso_times_to_epoch(body);
  EXPECT_EQ(body["CreationTime"], 1767225600);
  EXPECT_DOUBLE_EQ(body["Groups"][0]["LaunchTime"].get<double>(), 1767225601.5);
  EXPECT_EQ(body["Note"], "2026-01-01T00:00:00Z") << "only keys that end in Time";
  EXPECT_EQ(body["OddTime"], "not a time");
}

TEST(AwsTimes, EpochSecondsFromAnSdkBecomeIsoAndBadOnesNameTheField) {
  EXPECT_EQ(*aws::epoch_to_iso(Json(1767225600), "T"), "2026-01-01T00:00:00Z");
  // To the second, as the REST filters compare.
  EXPECT_EQ(*aws::epoch_to_iso(Json(1767225600.25), "T"), "2026-01-01T00:00:00Z");
  EXPECT_EQ(*aws::epoch_to_iso(Json("2026-01-01T00:00:00Z"), "T"), "2026-01-01T00:00:00Z");
  EXPECT_EQ(*aws::epoch_to_iso(Json("1767225600"), "T"), "2026-01-01T00:00:00Z");
  for (const Json& bad : {Json("yesterday"), Json(true), Json(1e300), Json::array()}) {
    auto r = aws::epoch_to_iso(bad, "CreationTimeAfter");
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
    EXPECT_EQ(r.status().message().rfind("CreationTimeAfter:", 0), 0u) << r.status().message();
  }
}

// A body of `n` items named n0, n1, ... under "Items", as a list call answers.
Json listed(int n) { return Json{{"Items", names(n)}}; }

Status page_of(Json& body, const Json& input, int64_t limit = 100) {
  return aws::page(body, "Items", input, "maxResults", "nextToken", limit, key);
}

TEST(AwsPages, PagesCoverEveryItemOnceAndTheLastHasNoToken) {
  std::vector<std::string> seen;
  Json input = {{"maxResults", 3}};
  for (int round = 0; round < 10; ++round) {
    Json body = listed(7);
    ASSERT_TRUE(page_of(body, input).ok());
    EXPECT_LE(body["Items"].size(), 3u);
    for (const Json& i : body["Items"]) seen.push_back(key(i));
    if (!body.contains("nextToken")) break;
    input["nextToken"] = body["nextToken"];
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"n0", "n1", "n2", "n3", "n4", "n5", "n6"}));
}

TEST(AwsPages, ATokenContinuesAfterItsItemWhenItemsBeforeItCameOrWent) {
  Json first = listed(6);
  ASSERT_TRUE(page_of(first, Json{{"maxResults", 2}}).ok());
  // n0 went away: the next page still starts after n1.
  Json rest = listed(6);
  rest["Items"].erase(rest["Items"].begin());
  ASSERT_TRUE(page_of(rest, Json{{"maxResults", 2}, {"nextToken", first["nextToken"]}}).ok());
  EXPECT_EQ(key(rest["Items"][0]), "n2");
}

TEST(AwsPages, WhenTheNamedItemWentThePageStartsWhereItStood) {
  // Pages of 2 over a, b, c, d; b goes between the calls: c still comes next.
  auto abcd = [](bool without_b) {
    Json items = Json::array();
    for (const char* n : {"a", "b", "c", "d"})
      if (!without_b || std::string(n) != "b") items.push_back({{"Name", n}});
    return Json{{"Items", items}};
  };
  Json first = abcd(false);
  ASSERT_TRUE(page_of(first, Json{{"maxResults", 2}}).ok());
  Json second = abcd(true);
  ASSERT_TRUE(page_of(second, Json{{"maxResults", 2}, {"nextToken", first["nextToken"]}}).ok());
  ASSERT_EQ(second["Items"].size(), 2u);
  EXPECT_EQ(key(second["Items"][0]), "c");
  EXPECT_EQ(key(second["Items"][1]), "d");
}

TEST(AwsPages, ATokenServesOnlyTheListAndFiltersThatIssuedIt) {
  Json first = listed(5);
  ASSERT_TRUE(page_of(first, Json{{"maxResults", 2}, {"jobQueue", "q1"}}).ok());
  const Json token = first["nextToken"];
  Json same = listed(5);
  EXPECT_TRUE(page_of(same, Json{{"maxResults", 3}, {"jobQueue", "q1"}, {"nextToken", token}}).ok())
      << "a new page size is fine";
  Json other = listed(5);
  const Status st =
      page_of(other, Json{{"maxResults", 2}, {"jobQueue", "q2"}, {"nextToken", token}});
  EXPECT_EQ(st.code(), ErrorCode::kValidation);
  EXPECT_NE(st.message().find("these filters"), std::string::npos) << st.message();
}

TEST(AwsPages, MaxResultsAndNextTokenAreCheckedByName) {
  for (const Json& max : {Json(0), Json(101), Json("5"), Json(2.5)}) {
    Json body = listed(3);
    const Status st = page_of(body, Json{{"maxResults", max}});
    ASSERT_FALSE(st.ok()) << max.dump();
    EXPECT_EQ(st.message().rfind("maxResults:", 0), 0u) << st.message();
  }
  for (const Json& token : {Json("zz"), Json("abc"), Json(7), Json("303a")}) {
    Json body = listed(3);
    const Status st = page_of(body, Json{{"nextToken", token}});
    ASSERT_FALSE(st.ok()) << token.dump();
    EXPECT_EQ(st.message().rfind("nextToken:", 0), 0u) << st.message();
  }
  Json body = listed(3);
  ASSERT_TRUE(page_of(body, Json::object()).ok());
  EXPECT_FALSE(body.contains("nextToken"));
  EXPECT_EQ(body["Items"].size(), 3u);
}

TEST(AwsNames, ArnsNameTheirLastSegmentAndPathSegmentsRefuseSlashes) {
  EXPECT_EQ(name_from_arn("arn:gpufleet:local:000000000000:job-queues/q1"), "q1");
  EXPECT_EQ(name_from_arn("q1"), "q1");
  EXPECT_TRUE(aws::check_segment("my-cluster", "ClusterName").ok());
  for (const char* bad : {"", "a/nodes/b", "..", "."}) {
    const Status st = aws::check_segment(bad, "ClusterName");
    EXPECT_EQ(st.code(), ErrorCode::kValidation) << bad;
    EXPECT_EQ(st.message().rfind("ClusterName:", 0), 0u) << st.message();
  }
  EXPECT_FALSE(aws::check_segment(std::string(257, 'a'), "ClusterName").ok());
}

TEST(AuthFileAccessKeys, EntriesMapAKeyIdToASubjectRolesAndSecret) {
  auto store = TokenStore::parse(
      "accessKeys:\n"
      "  - {accessKeyId: AKIAEXAMPLE1, secretAccessKey: 0123456789abcdefXYZ, subject: alice, "
      "roles: [operator]}\n");
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  const AccessKeyEntry* k = store->find_access_key("AKIAEXAMPLE1");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->subject, "alice");
  EXPECT_EQ(k->roles, std::vector<std::string>{"operator"});
  EXPECT_EQ(store->find_access_key("AKIAOTHER"), nullptr);
}

TEST(AuthFileAccessKeys, BadEntriesNameTheEntryAndField) {
  struct Case {
    const char* yaml;
    const char* names;
  };
  for (const Case& c : {
           Case{"accessKeys: [{accessKeyId: AK, secretAccessKey: 0123456789abcdef, subject: a, "
                "roles: [admin]}]",
                "accessKeys[0].accessKeyId"},
           Case{"accessKeys: [{accessKeyId: AKIA1, secretAccessKey: short, subject: a, roles: "
                "[admin]}]",
                "accessKeys[0].secretAccessKey"},
           Case{"accessKeys: [{accessKeyId: AKIA1, secretAccessKey: 0123456789abcdef, subject: a, "
                "roles: [root]}]",
                "accessKeys[0].roles[0]"},
           Case{"accessKeys: [{accessKeyId: AKIA1, secretAccessKey: 0123456789abcdef, subject: a, "
                "roles: [admin], extra: 1}]",
                "extra"},
           Case{"accessKeys: [{accessKeyId: AKIA1, secretAccessKey: 0123456789abcdef, subject: a, "
                "roles: [admin]}, {accessKeyId: AKIA1, secretAccessKey: 0123456789abcdef, "
                "subject: b, roles: [admin]}]",
                "accessKeys[1].accessKeyId"},
           Case{"accessKeys: []", "tokens"},
       }) {
    auto r = TokenStore::parse(c.yaml);
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_NE(r.status().message().find(c.names), std::string::npos)
        << c.yaml << " → " << r.status().message();
  }
}

}  // namespace
}  // namespace gf
