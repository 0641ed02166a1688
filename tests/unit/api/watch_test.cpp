// GET /v1/watch's stream (api/watch_api.h) over a publish feed (loop/publish_feed.h): what it
// sends, where it resumes, who sees what, and how it waits — without sockets.
#include "api/watch_api.h"

#include "api/events_api.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "state/fleet_state.h"

namespace gf {
namespace {

UserEvent event(Seq seq, int index, std::string type, std::string job_id = "") {
  UserEvent e;
  e.seq = seq;
  e.event_id = "ev-" + std::to_string(seq) + "-" + std::to_string(index);
  e.resource_type = std::move(type);
  e.description = "event " + e.event_id;
  if (!job_id.empty()) e.details["JobId"] = job_id;
  return e;
}

// A view at `applied` whose log holds `events`, and jobs j-a (filed under team a) and j-b.
std::shared_ptr<const FleetView> view_with(Seq applied, const std::vector<UserEvent>& events) {
  auto v = std::make_shared<FleetView>();
  v->applied_seq = applied;
  for (const UserEvent& e : events) v->events.append(e);
  for (const std::string team : {"a", "b"}) {
    auto job = std::make_shared<Job>();
    job->id = "j-" + team;
    job->quota_share = team;
    v->jobs.emplace(job->id, job);
  }
  return v;
}

HttpRequest caller(std::vector<std::string> roles) {
  HttpRequest r;
  r.caller = "someone";
  r.roles = std::move(roles);
  return r;
}

// The ids of the events (not the bare resume ids) in a piece of the stream, in order.
std::vector<std::string> event_ids(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = text.find("\"EventId\":\""); at != std::string::npos;
       at = text.find("\"EventId\":\"", at + 1)) {
    const size_t start = at + 11;
    out.push_back(text.substr(start, text.find('"', start) - start));
  }
  return out;
}

std::string drain(ResponseStream& s) {
  std::string all;
  bool end = false;
  for (std::string piece = s.next(end); !piece.empty(); piece = s.next(end)) all += piece;
  return all;
}

TEST(WatchStream, SendsTheEventsAfterSinceSeqOfTheKindsAsked) {
  auto feed = std::make_shared<PublishFeed>();
  feed->publish(view_with(9, {event(3, 0, "Cluster"), event(5, 0, "Job", "j-a"),
                              event(7, 0, "Alert"), event(9, 0, "Cluster")}));
  auto s = make_watch_stream(feed, WatchQuery{{"Cluster", "Alert"}, 3}, caller({"viewer"}));
  const std::string text = drain(*s);
  EXPECT_NE(text.find("event: watching"), std::string::npos);
  EXPECT_EQ(event_ids(text), (std::vector<std::string>{"ev-7-0", "ev-9-0"}));
  EXPECT_NE(text.find("id: 7\nevent: Alert\ndata: {"), std::string::npos) << text;
  EXPECT_NE(text.find("\"Seq\":9"), std::string::npos);
}

TEST(WatchStream, ChunksEndOnWholeJournalRecordsSoResumingAfterTheLastIdLosesNothing) {
  auto feed = std::make_shared<PublishFeed>();
  // Record 4 recorded two events: a chunk of one event still sends both.
  feed->publish(view_with(
      6, {event(2, 0, "Job"), event(4, 0, "Job"), event(4, 1, "Job"), event(6, 0, "Job")}));
  auto s = make_watch_stream(feed, WatchQuery{{}, 0}, caller({"viewer"}), /*max_events=*/1);
  bool end = false;
  EXPECT_EQ(event_ids(s->next(end)), (std::vector<std::string>{"ev-2-0"}));
  EXPECT_EQ(event_ids(s->next(end)), (std::vector<std::string>{"ev-4-0", "ev-4-1"}));
  EXPECT_EQ(event_ids(s->next(end)), (std::vector<std::string>{"ev-6-0"}));
  EXPECT_EQ(s->next(end), "");
  EXPECT_FALSE(end);
  // A new watcher resuming after id 4 (its Last-Event-ID) starts at the next record.
  auto again = make_watch_stream(feed, WatchQuery{{}, 4}, caller({"viewer"}));
  EXPECT_EQ(event_ids(drain(*again)), (std::vector<std::string>{"ev-6-0"}));
}

TEST(WatchStream, ANewerViewWithNothingForTheWatcherSendsABareResumeId) {
  auto feed = std::make_shared<PublishFeed>();
  feed->publish(view_with(2, {event(2, 0, "Cluster")}));
  auto s = make_watch_stream(feed, WatchQuery{{"Alert"}, 2}, caller({"viewer"}));
  (void)drain(*s);
  feed->publish(view_with(8, {event(2, 0, "Cluster"), event(8, 0, "Cluster")}));
  bool end = false;
  EXPECT_EQ(s->next(end), "id: 8\n\n");
}

TEST(WatchStream, ATeamCallerSeesTheEventsOfItsOwnJobsOnly) {
  auto feed = std::make_shared<PublishFeed>();
  feed->publish(view_with(4, {event(1, 0, "Job", "j-a"), event(2, 0, "Job", "j-b"),
                              event(3, 0, "Cluster"), event(4, 0, "Job", "j-a")}));
  auto team = make_watch_stream(feed, WatchQuery{{}, 0}, caller({"team:a"}));
  EXPECT_EQ(event_ids(drain(*team)), (std::vector<std::string>{"ev-1-0", "ev-3-0", "ev-4-0"}));
  auto viewer = make_watch_stream(feed, WatchQuery{{}, 0}, caller({"viewer"}));
  EXPECT_EQ(event_ids(drain(*viewer)).size(), 4u);
}

TEST(WatchStream, WaitsOnTheFeedAndIsWokenOnlyByANewerView) {
  auto feed = std::make_shared<PublishFeed>();
  feed->publish(view_with(3, {event(3, 0, "Cluster")}));
  auto s = make_watch_stream(feed, WatchQuery{{}, 0}, caller({"viewer"}));
  (void)drain(*s);
  int woken = 0;
  s->when_ready([&] { ++woken; });
  EXPECT_EQ(feed->waiting(), 1u);
  feed->publish(view_with(3, {event(3, 0, "Cluster")}));  // the same seq: not newer
  EXPECT_EQ(woken, 0);
  feed->publish(view_with(4, {event(3, 0, "Cluster"), event(4, 0, "Cluster")}));
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(feed->waiting(), 0u);
  EXPECT_EQ(event_ids(drain(*s)), (std::vector<std::string>{"ev-4-0"}));
  // A view newer than the one read already out: woken at once.
  feed->publish(view_with(5, {event(3, 0, "Cluster"), event(4, 0, "Cluster")}));
  s->when_ready([&] { ++woken; });
  EXPECT_EQ(woken, 2);
}

TEST(WatchStream, EndsWhenTheFeedClosesAndAGoneWatcherLeavesNoWaiter) {
  auto feed = std::make_shared<PublishFeed>();
  feed->publish(view_with(1, {}));
  auto s = make_watch_stream(feed, WatchQuery{{}, 1}, caller({"viewer"}));
  (void)drain(*s);
  bool woken = false;
  s->when_ready([&] { woken = true; });
  s.reset();  // the connection closed: its wait is cancelled
  EXPECT_EQ(feed->waiting(), 0u);
  auto t = make_watch_stream(feed, WatchQuery{{}, 1}, caller({"viewer"}));
  (void)drain(*t);
  t->when_ready([&] { woken = true; });
  feed->close();
  EXPECT_TRUE(woken);
  bool end = false;
  EXPECT_EQ(t->next(end), "");
  EXPECT_TRUE(end);
}

// GET /v1/events and ListClusterEvents answer a team-only caller as the watch does.
TEST(EventsList, ATeamCallerListsTheEventsOfItsOwnJobsOnly) {
  auto v =
      view_with(3, {event(1, 0, "Job", "j-a"), event(2, 0, "Job", "j-b"), event(3, 0, "Cluster")});
  const HttpRequest team = caller({"team:a"});
  auto listed = list_events(*v, EventQuery{}, &team);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(event_ids(listed->dump()), (std::vector<std::string>{"ev-3-0", "ev-1-0"}));
  const HttpRequest viewer = caller({"viewer"});
  EXPECT_EQ(event_ids(list_events(*v, EventQuery{}, &viewer)->dump()).size(), 3u);
}

TEST(WatchQueryParse, KindsAndSeqAreCheckedAndNamedInTheError) {
  HttpRequest r;
  auto q = parse_watch_query(r, 42);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->since, 42);
  EXPECT_TRUE(q->kinds.empty());
  r.query["kinds"] = "job,ALERT";
  r.headers["last-event-id"] = "7";
  q = parse_watch_query(r, 42);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->kinds, (std::set<std::string>{"Alert", "Job"}));
  EXPECT_EQ(q->since, 7);
  r.query["sinceSeq"] = "9";  // the parameter wins over the header
  EXPECT_EQ(parse_watch_query(r, 42)->since, 9);
  for (const auto& [key, value, named] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"kinds", "Job,,Alert", "kinds"},
           {"kinds", "Pods", "kinds"},
           {"sinceSeq", "-1", "sinceSeq"},
           {"sinceSeq", "12abc", "sinceSeq"},
           {"sinceSeq", "", "sinceSeq"}}) {
    HttpRequest bad;
    bad.query[key] = value;
    auto res = parse_watch_query(bad, 0);
    ASSERT_FALSE(res.ok()) << key << "=" << value;
    EXPECT_EQ(res.status().code(), ErrorCode::kValidation);
    EXPECT_NE(res.status().message().find(named), std::string::npos) << res.status().message();
  }
  HttpRequest header;
  header.headers["last-event-id"] = "x";
  EXPECT_NE(parse_watch_query(header, 0).status().message().find("Last-Event-ID"),
            std::string::npos);
}

}  // namespace
}  // namespace gf
