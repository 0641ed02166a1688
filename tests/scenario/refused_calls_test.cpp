// Refused calls are audited by aggregate and unauthenticated callers get a much lower rate
// (docs/security.md "What is audited", "Connections"): a flood of token-less writes costs the
// journal two audit records a minute, with the count of what it refused.
#include <gtest/gtest.h>

#include "api/auth.h"
#include "support/fleet_harness.h"

namespace gf {
namespace {

using testing::Fleet;

HttpResponse post_from(Fleet& f, const std::string& peer, const std::string& token = "") {
  HttpRequest req;
  req.method = "POST";
  req.path = "/v1/clusters";
  req.body = "{}";
  req.peer = peer;
  if (!token.empty()) req.headers["authorization"] = "Bearer " + token;
  return f.runtime().api().handle(req);
}

int64_t audit_events(Fleet& f) {
  int64_t n = 0;
  Status st = f.journal().replay(0, [&](const EventRecord& e) {
    n += e.type == "audit.recorded";
    return ok_status();
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
  return n;
}

void with_tokens(Fleet& f) {
  auto tokens = TokenStore::parse("tokens: [{sha256: " + sha256_hex("gf_admin_token") +
                                  ", subject: root, roles: [admin]}]");
  ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
  f.runtime().api().set_tokens(std::make_shared<TokenStore>(*tokens));
}

TEST(RefusedCalls, TwentyThousandTokenlessWritesAreTwoAuditRecordsWithTheirCount) {
  Fleet f;
  with_tokens(f);
  const int64_t before = audit_events(f);
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(post_from(f, "10.0.0.7").status, 401);
  f.run_for(minutes(2));
  EXPECT_EQ(audit_events(f) - before, 2);
  const Json audit =
      Json::parse(f.call("GET", "/v1/audit", "", {}, {{"authorization", "Bearer gf_admin_token"}})
                      .body)["AuditRecords"];
  int64_t counted = 0;
  for (const Json& a : audit) {
    if (a.value("Code", 0) != 401) continue;
    EXPECT_EQ(a.value("Source", ""), "10.0.0.7") << a.dump();
    counted += a.value("Count", int64_t{1});
  }
  EXPECT_EQ(counted, 20000) << audit.dump();
}

TEST(RefusedCalls, EachSourceAndReasonHasItsOwnRecordEachMinute) {
  Fleet f;
  with_tokens(f);
  const int64_t before = audit_events(f);
  for (int minute = 0; minute < 3; ++minute) {
    for (int i = 0; i < 100; ++i) {
      post_from(f, "10.0.0.7");
      post_from(f, "10.0.0.8");
    }
    f.run_for(minutes(1));
  }
  f.run_for(minutes(1));
  // Two addresses, three minutes, a first record and a count record each.
  EXPECT_EQ(audit_events(f) - before, 2 * 3 * 2);
}

TEST(RefusedCalls, UnauthenticatedCallersGetAMuchLowerRateThanAuthenticatedOnes) {
  RuntimeOptions opts;
  opts.api.rate_limit_per_second = 1000;
  opts.api.rate_limit_burst = 2000;
  opts.api.unauthenticated_rate_per_second = 10;
  Fleet f({}, opts);
  with_tokens(f);
  int anonymous_throttled = 0, admin_throttled = 0;
  for (int i = 0; i < 200; ++i) {
    anonymous_throttled += post_from(f, "10.0.0.7").status == 429;
    admin_throttled += post_from(f, "10.0.0.9", "gf_admin_token").status == 429;
  }
  EXPECT_GE(anonymous_throttled, 200 - 2 * 10 - 5) << "burst of twice the rate, then 429";
  EXPECT_EQ(admin_throttled, 0);
}

}  // namespace
}  // namespace gf
