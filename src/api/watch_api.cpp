#include "api/watch_api.h"

#include <fmt/format.h>

#include <charconv>
#include <utility>

#include "api/api.h"
#include "api/auth.h"

namespace gf {

namespace {

Result<Seq> parse_seq(const std::string& name, const std::string& text) {
  Seq v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 0) {
    return validation_error(fmt::format("{}: expected a journal seq (an integer >= 0), got \"{}\"",
                                        name, printable(text, 80)));
  }
  return v;
}

class WatchStream final : public ResponseStream {
 public:
  WatchStream(std::shared_ptr<PublishFeed> feed, WatchQuery query, HttpRequest caller,
              size_t max_events)
      : feed_(std::move(feed)),
        query_(std::move(query)),
        caller_(std::move(caller)),
        max_events_(std::max<size_t>(1, max_events)),
        sent_id_(query_.since) {}
  ~WatchStream() override {
    if (wait_id_ != 0) feed_->cancel(wait_id_);
  }

  std::string next(bool& end) override {
    wait_id_ = 0;
    const std::shared_ptr<const FleetView> view = feed_->latest();
    if (!view) {  // the loop stopped (or is replaced): the client reconnects where it was
      end = true;
      return "";
    }
    seen_ = view->applied_seq;
    std::string out;
    if (!started_) {
      started_ = true;
      Json kinds = Json::array();
      for (const std::string& k : query_.kinds) kinds.push_back(k);
      out += "retry: 2000\nevent: watching\ndata: ";
      out += Json{{"appliedSeq", view->applied_seq}, {"sinceSeq", query_.since}, {"kinds", kinds}}
                 .dump();
      out += "\n\n";
      pos_ = view->events.lower_bound_seq(query_.since);
    }
    const EventLog& log = view->events;
    size_t sent = 0;
    Seq last = 0;
    for (; pos_ < log.size(); ++pos_) {
      const UserEvent& e = log.at(pos_);
      // Whole journal records only, so that resuming after the last id sent misses nothing.
      if (sent >= max_events_ && e.seq != last) break;
      last = e.seq;
      if (!query_.kinds.empty() && !query_.kinds.contains(e.resource_type)) continue;
      if (!may_see_event(caller_, *view, e)) continue;
      out += fmt::format("id: {}\nevent: {}\ndata: ", e.seq, e.resource_type);
      out += e.to_wire_text({{"Seq", e.seq}});
      out += "\n\n";
      sent_id_ = e.seq;
      ++sent;
    }
    if (pos_ == log.size() && sent_id_ < view->applied_seq) {
      sent_id_ = view->applied_seq;
      out += fmt::format("id: {}\n\n", sent_id_);
    }
    return out;
  }

  void when_ready(std::function<void()> wake) override {
    wait_id_ = feed_->wait_after(seen_, std::move(wake));
  }

 private:
  std::shared_ptr<PublishFeed> feed_;
  WatchQuery query_;
  HttpRequest caller_;  // who watches: caller and roles only
  size_t max_events_;
  bool started_ = false;
  size_t pos_ = 0;   // the next event of the log to look at
  Seq seen_ = 0;     // the applied seq of the view read last
  Seq sent_id_ = 0;  // the last id sent (the client's resume point)
  uint64_t wait_id_ = 0;
};

}  // namespace

Result<WatchQuery> parse_watch_query(const HttpRequest& request, Seq applied) {
  WatchQuery q;
  q.since = applied;
  if (auto it = request.query.find("kinds"); it != request.query.end()) {
    std::string_view rest = it->second;
    while (true) {
      const size_t comma = rest.find(',');
      const std::string_view one = rest.substr(0, comma);
      if (one.empty()) {
        return validation_error(
            "kinds: expected ResourceTypes separated by commas (such as Job,Alert), got \"" +
            printable(it->second, 120) + "\"");
      }
      GF_ASSIGN_OR_RETURN(std::string kind, parse_resource_type(one, "kinds"));
      q.kinds.insert(std::move(kind));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (auto it = request.query.find("sinceSeq"); it != request.query.end()) {
    GF_ASSIGN_OR_RETURN(q.since, parse_seq("sinceSeq", it->second));
  } else if (auto h = request.headers.find("last-event-id"); h != request.headers.end()) {
    GF_ASSIGN_OR_RETURN(q.since, parse_seq("Last-Event-ID", h->second));
  }
  return q;
}

std::shared_ptr<ResponseStream> make_watch_stream(std::shared_ptr<PublishFeed> feed,
                                                  WatchQuery query, const HttpRequest& caller,
                                                  size_t max_events) {
  return std::make_shared<WatchStream>(std::move(feed), std::move(query), caller_of(caller),
                                       max_events);
}

void register_watch_routes(Api& api) {
  api.router().add("GET", "/v1/watch", [&api](const HttpRequest& req) {
    auto q = parse_watch_query(req, api.loop().published_seq());
    if (!q.ok()) return error_response(q.status());
    // Events after sinceSeq that retention dropped cannot be sent: the client must re-read the
    // state and watch from now (docs/api.md "Watch"), as a Kubernetes watch answers 410.
    if (const auto view = api.loop().view(); view && q->since < view->events.dropped_through()) {
      HttpResponse gone = json_response(
          410, Json{{"__type", "ExpiredException"},
                    {"message", fmt::format("sinceSeq {}: the events through seq {} are no longer "
                                            "kept (retention); read the state again and watch "
                                            "from its appliedSeq",
                                            q->since, view->events.dropped_through())}});
      gone.error_type = "ExpiredException";
      return gone;
    }
    HttpResponse r;
    r.content_type = "text/event-stream";
    r.headers["Cache-Control"] = "no-cache";
    r.stream = make_watch_stream(api.loop().feed(), std::move(*q), req);
    return r;
  });
}

}  // namespace gf
