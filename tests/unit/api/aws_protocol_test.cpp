// The AWS protocol layer's rules (src/api/aws/protocol.h): SageMaker's timestamps, pages as AWS
// pages lists, and the auth file's access keys.
#include "api/aws/protocol.h"

#include <gtest/gtest.h>

#include "api/auth.h"

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

TEST(AwsPages, PagesCoverEveryItemOnceAndTheLastHasNoToken) {
  Json all = names(7);
  std::vector<std::string> seen;
  Json input = {{"MaxResults", 3}};
  for (int round = 0; round < 10; ++round) {
    Json items = all;
    auto next = aws::page(items, input, "MaxResults", "NextToken", 100, key);
    ASSERT_TRUE(next.ok()) << next.status().to_string();
    EXPECT_LE(items.size(), 3u);
    for (const Json& i : items) seen.push_back(key(i));
    if (next->empty()) break;
    input["NextToken"] = *next;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"n0", "n1", "n2", "n3", "n4", "n5", "n6"}));
}

TEST(AwsPages, ATokenContinuesAfterItsItemWhenItemsBeforeItCameOrWent) {
  Json items = names(6);
  auto next = aws::page(items, Json{{"MaxResults", 2}}, "MaxResults", "NextToken", 100, key);
  ASSERT_TRUE(next.ok());
  // n0 went away: the next page still starts after n1.
  Json rest = names(6);
  rest.erase(rest.begin());
  Json input = {{"MaxResults", 2}, {"NextToken", *next}};
  ASSERT_TRUE(aws::page(rest, input, "MaxResults", "NextToken", 100, key).ok());
  EXPECT_EQ(key(rest[0]), "n2");
}

TEST(AwsPages, MaxResultsAndNextTokenAreCheckedByName) {
  for (const Json& max : {Json(0), Json(101), Json("5"), Json(2.5)}) {
    Json items = names(3);
    auto r = aws::page(items, Json{{"maxResults", max}}, "maxResults", "nextToken", 100, key);
    ASSERT_FALSE(r.ok()) << max.dump();
    EXPECT_EQ(r.status().message().rfind("maxResults:", 0), 0u) << r.status().message();
  }
  for (const Json& token : {Json("zz"), Json("abc"), Json(7), Json("303a")}) {
    Json items = names(3);
    auto r = aws::page(items, Json{{"nextToken", token}}, "maxResults", "nextToken", 100, key);
    ASSERT_FALSE(r.ok()) << token.dump();
    EXPECT_EQ(r.status().message().rfind("nextToken:", 0), 0u) << r.status().message();
  }
  Json items = names(3);
  auto all = aws::page(items, Json::object(), "maxResults", "nextToken", 100, key);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  EXPECT_EQ(items.size(), 3u);
}

TEST(AwsNames, ArnsNameTheirLastSegmentAndPathSegmentsRefuseSlashes) {
  EXPECT_EQ(aws::name_of("arn:gpufleet:local:000000000000:job-queues/q1"), "q1");
  EXPECT_EQ(aws::name_of("q1"), "q1");
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
