// What left the hot state, read from the journal's history table (docs/operations.md "What is
// kept where"): GET /v1/history/jobs, as Slurm's sacct reads its accounting database, and the
// lookup that lets a job's own routes answer for a job retention took out of memory.
#include <fmt/format.h>

#include <charconv>

#include "api/api.h"
#include "api/history_api.h"
#include "api/job_views.h"
#include "state/job_history.h"

namespace gf {

namespace {

constexpr size_t kDefaultLimit = 100;

// ?limit= (1..1000) and ?nextToken= (a row, as a previous page's nextToken said).
Status read_paging(const HttpRequest& req, HistoryQuery& q) {
  if (std::string l = req.query_or("limit", ""); !l.empty()) {
    size_t v = 0;
    auto [ptr, ec] = std::from_chars(l.data(), l.data() + l.size(), v);
    if (ec != std::errc() || ptr != l.data() + l.size() || v < 1 || v > HistoryQuery::kMaxLimit)
      return validation_error(
          fmt::format("limit: must be an integer from 1 to {}", HistoryQuery::kMaxLimit));
    q.limit = v;
  }
  if (std::string t = req.query_or("nextToken", ""); !t.empty()) {
    int64_t row = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), row);
    if (ec != std::errc() || ptr != t.data() + t.size() || row < 0)
      return validation_error("nextToken: not a token this server gave (\"" + printable(t, 40) +
                              "\")");
    q.after_row = row;
  }
  return ok_status();
}

Result<HistoryQuery> read_query(Api& api, const HttpRequest& req) {
  HistoryQuery q;
  const Time now = api.clock().now();
  if (std::string s = req.query_or("since", ""); !s.empty()) {
    GF_ASSIGN_OR_RETURN(Time t, query_time("since", s, now));
    q.since = t;
  }
  if (std::string s = req.query_or("until", ""); !s.empty()) {
    GF_ASSIGN_OR_RETURN(Time t, query_time("until", s, now));
    q.until = t;
  }
  if (std::string s = req.query_or("state", ""); !s.empty()) {
    if (s != "DELETED" && !(parse_job_status(s) && is_terminal(*parse_job_status(s))))
      return validation_error("state: \"" + printable(s, 40) +
                              "\" is not a state history holds (SUCCEEDED, FAILED, DELETED)");
    q.state = s;
  }
  for (const char* key : {"tenant", "name", "id"}) {
    if (std::string s = req.query_or(key, ""); !s.empty()) {
      if (s.size() > 256) return validation_error(fmt::format("{}: at most 256 characters", key));
      (std::string_view(key) == "tenant" ? q.tenant
       : std::string_view(key) == "name" ? q.name
                                         : q.id) = s;
    }
  }
  GF_RETURN_IF_ERROR(read_paging(req, q));
  if (q.limit == 0) q.limit = kDefaultLimit;
  return q;
}

HttpResponse list_history_jobs(Api& api, const HttpRequest& req) {
  HistoryReader* history = api.history();
  if (history == nullptr)
    return error_response(not_found_error(
        "this control plane keeps no history (it runs without a journal that keeps one)"));
  auto q = read_query(api, req);
  if (!q.ok()) return error_response(q.status());
  auto page = history->query(*q);
  if (!page.ok()) return error_response(page.status());
  auto view = api.loop().view();
  Json jobs = Json::array();
  for (const HistoryRecord& r : page->records) {
    auto job = job_from_history(r);
    if (!job.ok()) return error_response(job.status());
    if (!may_see_job(req, *view, *job)) continue;
    Json item = describe_service_job(*job);
    item.erase("serviceRequestPayload");
    item["kind"] = job->kind;
    item["tenant"] = r.tenant;
    item["historyState"] = r.state;
    item["endedAt"] = to_micros(r.ended) / 1000;
    jobs.push_back(std::move(item));
  }
  Json out{{"jobs", std::move(jobs)}};
  if (page->next_row) out["nextToken"] = std::to_string(*page->next_row);
  return json_response(200, out);
}

}  // namespace

Result<std::optional<Job>> find_history_job(Api& api, const std::string& id_or_name) {
  HistoryReader* history = api.history();
  if (history == nullptr) return std::optional<Job>();
  HistoryQuery q;
  q.id = id_or_name;
  q.limit = 1;
  GF_ASSIGN_OR_RETURN(HistoryPage page, history->query(q));
  if (page.records.empty()) {
    // By name: the newest job of that name, as a live lookup by name answers.
    HistoryQuery by_name;
    by_name.name = id_or_name;
    by_name.limit = HistoryQuery::kMaxLimit;
    std::optional<HistoryRecord> newest;
    for (;;) {
      GF_ASSIGN_OR_RETURN(HistoryPage p, history->query(by_name));
      if (!p.records.empty()) newest = p.records.back();
      if (!p.next_row) break;
      by_name.after_row = *p.next_row;
    }
    if (!newest) return std::optional<Job>();
    page.records.push_back(std::move(*newest));
  }
  GF_ASSIGN_OR_RETURN(Job job, job_from_history(page.records.front()));
  return std::optional<Job>(std::move(job));
}

void register_history_routes(Api& api) {
  api.router().add("GET", "/v1/history/jobs",
                   [&api](const HttpRequest& req) { return list_history_jobs(api, req); });
}

}  // namespace gf
