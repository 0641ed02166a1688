#include "api/api.h"

#include <gtest/gtest.h>

#include "journal/sqlite/sqlite_journal.h"
#include "loop/virtual_runner.h"
#include "support/temp_dir.h"

namespace gf {
namespace {

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal_ = std::move(SqliteJournal::open(dir_.file("journal.db"), {.fsync = false})).value();
    loop_ = std::make_unique<ControlLoop>(LoopOptions{}, clock_, *journal_, metrics_);
    ASSERT_TRUE(loop_->recover().ok());
    ApiOptions opts;
    opts.max_body_bytes = 1024;
    opts.drive_loop_inline = true;  // nothing else runs the loop here: the Api drains it per write
    api_ = std::make_unique<Api>(opts, *loop_, metrics_, clock_);
  }

  // Records n events, one per virtual minute, with alternating resource types.
  void record(int n) {
    VirtualRunner runner(*loop_, clock_);
    for (int i = 0; i < n; ++i) {
      runner.run_for(minutes(1));
      Request r;
      r.handle = [i](const FleetState&, Time) -> Result<Decision> {
        Decision d;
        d.events.push_back(record_event(i % 2 ? "Cluster" : "Job", EventLevel::kInfo,
                                        "event " + std::to_string(i)));
        return d;
      };
      loop_->submit(std::move(r));
    }
    runner.settle();
  }

  HttpResponse call(const std::string& method, const std::string& path,
                    std::map<std::string, std::string> query = {}, std::string body = "") {
    HttpRequest req;
    req.method = method;
    req.path = path;
    req.query = std::move(query);
    req.body = std::move(body);
    return api_->handle(req);
  }

  static Json body(const HttpResponse& r) { return Json::parse(r.body); }

  testing::TempDir dir_;
  VirtualClock clock_;
  Metrics metrics_;
  std::unique_ptr<SqliteJournal> journal_;
  std::unique_ptr<ControlLoop> loop_;
  std::unique_ptr<Api> api_;
};

TEST_F(ApiTest, UnknownRouteIs404ResourceNotFoundInTheErrorShape) {
  HttpResponse r = call("GET", "/v1/nothing-here");
  EXPECT_EQ(r.status, 404);
  Json b = body(r);
  EXPECT_EQ(b["__type"], "ResourceNotFound");
  EXPECT_NE(b["message"].get<std::string>().find("/v1/nothing-here"), std::string::npos);
  EXPECT_EQ(b.size(), 2u);
}

TEST_F(ApiTest, WrongMethodIs405NamingTheAllowedMethods) {
  HttpResponse r = call("DELETE", "/v1/events");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(body(r)["__type"], "MethodNotAllowedException");
  EXPECT_NE(body(r)["message"].get<std::string>().find("allowed: GET"), std::string::npos);
  // A refused mutating call is audited, without its body.
  const auto& log = loop_->state().view().audit;
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log.at(0).method, "DELETE");
  EXPECT_EQ(log.at(0).code, 405);
}

TEST_F(ApiTest, BodyOverTheLimitIs413InTheSameShape) {
  HttpResponse r = call("POST", "/v1/events", {}, std::string(2048, 'x'));
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(body(r)["__type"], "PayloadTooLargeException");
  EXPECT_NE(body(r)["message"].get<std::string>().find("1024"), std::string::npos);
  const auto& log = loop_->state().view().audit;
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log.at(0).code, 413);
  EXPECT_EQ(log.at(0).error, "PayloadTooLargeException");
}

TEST_F(ApiTest, EventsAreListedNewestFirstInTheEnvelopeWithPagination) {
  record(250);
  HttpResponse first = call("GET", "/v1/events", {{"MaxResults", "100"}});
  ASSERT_EQ(first.status, 200) << first.body;
  Json p1 = body(first);
  ASSERT_EQ(p1["Events"].size(), 100u);
  const Json& newest = p1["Events"][0];
  EXPECT_EQ(newest["Description"], "event 249");
  for (const char* field :
       {"EventId", "ResourceType", "EventTime", "Description", "EventDetails"}) {
    EXPECT_TRUE(newest.contains(field)) << field;
  }
  EXPECT_EQ(newest["EventTime"], format_iso8601(kSimEpoch + minutes(250)));
  ASSERT_TRUE(p1.contains("NextToken"));

  Json p2 =
      body(call("GET", "/v1/events", {{"MaxResults", "100"}, {"NextToken", p1["NextToken"]}}));
  EXPECT_EQ(p2["Events"][0]["Description"], "event 149");
  Json p3 =
      body(call("GET", "/v1/events", {{"MaxResults", "100"}, {"NextToken", p2["NextToken"]}}));
  EXPECT_EQ(p3["Events"].size(), 50u);
  EXPECT_EQ(p3["Events"][49]["Description"], "event 0");
  EXPECT_FALSE(p3.contains("NextToken"));
}

TEST_F(ApiTest, EventsFilterByResourceTypeAndTime) {
  record(20);
  Json clusters = body(call("GET", "/v1/events", {{"ResourceType", "Cluster"}}));
  EXPECT_EQ(clusters["Events"].size(), 10u);
  for (const auto& e : clusters["Events"]) EXPECT_EQ(e["ResourceType"], "Cluster");
  Json recent = body(
      call("GET", "/v1/events", {{"EventTimeAfter", format_iso8601(kSimEpoch + minutes(15))}}));
  EXPECT_EQ(recent["Events"].size(), 5u);
  Json window = body(call("GET", "/v1/events",
                          {{"EventTimeAfter", format_iso8601(kSimEpoch + minutes(5))},
                           {"EventTimeBefore", format_iso8601(kSimEpoch + minutes(8))}}));
  EXPECT_EQ(window["Events"].size(), 2u);
}

// The filters take every type the TYPE column shows, in any letter case, and the level.
TEST_F(ApiTest, EventsFilterTakesEveryShownResourceTypeAnyCaseAndTheLevel) {
  record(6);
  Json jobs = body(call("GET", "/v1/events", {{"ResourceType", "job"}}));
  ASSERT_EQ(jobs["Events"].size(), 3u) << jobs.dump();
  for (const auto& e : jobs["Events"]) EXPECT_EQ(e["ResourceType"], "Job");
  for (std::string_view t : kUserEventResourceTypes) {
    EXPECT_EQ(call("GET", "/v1/events", {{"ResourceType", std::string(t)}}).status, 200) << t;
  }
  EXPECT_EQ(body(call("GET", "/v1/events", {{"EventLevel", "Info"}}))["Events"].size(), 6u);
  EXPECT_TRUE(body(call("GET", "/v1/events", {{"EventLevel", "Error"}}))["Events"].empty());
  HttpResponse typo = call("GET", "/v1/events", {{"ResourceType", "Alerts"}});
  EXPECT_EQ(typo.status, 400);
  EXPECT_EQ(body(typo)["message"],
            "ResourceType: expected one of Cluster, InstanceGroup, Instance, Job, Alert, "
            "Remediation, Host, ControlPlane, got \"Alerts\"");
  HttpResponse level = call("GET", "/v1/events", {{"EventLevel", "loud"}});
  EXPECT_EQ(level.status, 400);
  EXPECT_EQ(body(level)["message"].get<std::string>().rfind("EventLevel", 0), 0u);
}

TEST_F(ApiTest, BadQueryParametersAreNamedInTheError) {
  struct Case {
    std::map<std::string, std::string> query;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{{{{"MaxResults", "0"}}, "MaxResults"},
                                         {{{"MaxResults", "ten"}}, "MaxResults"},
                                         {{{"NextToken", "zzz"}}, "NextToken"},
                                         {{{"NextToken", "p99999"}}, "NextToken"},
                                         {{{"EventTimeAfter", "yesterday"}}, "EventTimeAfter"}}) {
    HttpResponse r = call("GET", "/v1/events", c.query);
    EXPECT_EQ(r.status, 400) << c.field;
    EXPECT_EQ(body(r)["__type"], "ValidationException");
    EXPECT_EQ(body(r)["message"].get<std::string>().rfind(c.field, 0), 0u) << body(r)["message"];
  }
}

// Issue regression: relative times used the client's clock while a --sim-speed server ran ahead
// of it. A duration in a time filter counts back from the server's own clock, and every answer
// says what the server's now is (X-Gpufleet-Now).
TEST_F(ApiTest, RelativeTimesInFiltersCountBackFromTheServersClock) {
  record(20);  // one event a virtual minute: the server's clock is at epoch + 20m
  HttpResponse r = call("GET", "/v1/events", {{"EventTimeAfter", "5m"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["Events"].size(), 5u) << r.body;  // minutes 16..20 (after 15m)
  EXPECT_EQ(r.headers.at("X-Gpufleet-Now"), format_iso8601(clock_.now()));
  Json window =
      body(call("GET", "/v1/events", {{"EventTimeAfter", "10m"}, {"EventTimeBefore", "5m"}}));
  EXPECT_EQ(window["Events"].size(), 4u) << window.dump();  // minutes 11..14 (before 15m)
  HttpResponse bad = call("GET", "/v1/events", {{"EventTimeAfter", "an hour ago"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body(bad)["message"].get<std::string>().rfind(
                "EventTimeAfter: expected an ISO 8601 time such as 2026-01-01T00:00:00Z or a "
                "duration back from now such as 1h",
                0),
            0u)
      << bad.body;
}

TEST_F(ApiTest, MetricsExposeLoopJournalAndHttpSeries) {
  record(3);
  call("GET", "/v1/events");
  call("GET", "/v1/missing");
  HttpResponse r = call("GET", "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type.rfind("text/plain", 0), 0u);
  for (const char* needle :
       {"gpufleet_loop_batches_total", "gpufleet_journal_events_appended_total 3",
        "gpufleet_journal_append_seconds_bucket{le=\"+Inf\"} 3",
        "gpufleet_http_requests_total{route=\"GET /v1/events\",code=\"200\"} 1",
        "gpufleet_http_requests_total{route=\"unmatched\",code=\"404\"} 1",
        "# TYPE gpufleet_journal_append_seconds histogram"}) {
    EXPECT_NE(r.body.find(needle), std::string::npos) << needle << "\n" << r.body;
  }
}

TEST_F(ApiTest, HealthzIsOk) {
  HttpResponse r = call("GET", "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
}

}  // namespace
}  // namespace gf
