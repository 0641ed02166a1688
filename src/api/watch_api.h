// GET /v1/watch (docs/api.md "Watching"): the fleet's user events as server-sent events, from the
// published read view, live and resumable by journal seq. The console and the CLI's waits follow
// it instead of polling. The stream never holds a thread: it reads the newest view when the
// server asks and, when it has nothing, waits on the loop's publish feed.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "api/http.h"
#include "loop/publish_feed.h"

namespace gf {

struct WatchQuery {
  std::set<std::string> kinds;  // ResourceTypes to send; empty = every one
  Seq since = 0;                // send events with a greater journal seq
};

// kinds=Job,Alert (any letter case, comma-separated) and sinceSeq=N, else the Last-Event-ID
// header an EventSource sends when it reconnects, else `applied` (only what happens from now).
// Errors name the parameter.
Result<WatchQuery> parse_watch_query(const HttpRequest& request, Seq applied);

// The stream of one watcher: events the caller may see (a team-only caller, the jobs filed under
// its teams), a chunk at a time of at most `max_events` (whole journal records), each as
//   id: <seq>  event: <ResourceType>  data: <the event's wire JSON with "Seq">
// and, when a view has nothing for it, a bare "id: <applied seq>" so a reconnect resumes there.
// Ends when the feed closes (the loop stopped).
std::shared_ptr<ResponseStream> make_watch_stream(std::shared_ptr<PublishFeed> feed,
                                                  WatchQuery query, const HttpRequest& caller,
                                                  size_t max_events = 256);

}  // namespace gf
