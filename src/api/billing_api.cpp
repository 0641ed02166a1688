// GET /v1/billing (docs/provisioning.md): per-instance metering summed by instance, group or
// cluster over a window. A projection of node lifecycle events: records open at lifecycle start
// (launch) and close at ShuttingDown.
#include <map>
#include <set>

#include "api/api.h"

namespace gf {

namespace {

struct Line {
  Json key;
  std::string instance_type;
  int64_t price = 0;
  int64_t billed_us = 0;
  int64_t cost = 0;
  int64_t instances = 0;
  int64_t burn_per_hour = 0;  // the prices of the instances still billing at the window's end
};

// The query of GET /v1/billing: [from, to] (from is Time::min() when not given) and the grouping.
struct BillingQuery {
  std::string cluster;
  std::string group_by;
  Time from = Time::min();
  Time to{};
  Duration step{};  // zero: no Series
};

// At most this many buckets in a Series (a year by the hour is 8,760: ask for days).
constexpr int64_t kMaxSeriesBuckets = 1000;

Result<BillingQuery> parse_billing_query(const FleetView& v, const HttpRequest& req, Time now) {
  BillingQuery q;
  q.cluster = req.query_or("cluster", "");
  q.group_by = req.query_or("groupBy", "cluster");
  const std::string& cluster = q.cluster;
  const std::string& group_by = q.group_by;
  if (group_by != "instance" && group_by != "group" && group_by != "cluster" &&
      group_by != "share") {
    return validation_error("groupBy: expected instance, group, cluster or share, got \"" +
                            group_by + "\"");
  }
  q.to = now;
  for (auto [key, out] : {std::pair<const char*, Time*>{"from", &q.from}, {"to", &q.to}}) {
    auto it = req.query.find(key);
    if (it == req.query.end()) continue;
    GF_ASSIGN_OR_RETURN(*out, query_time(key, it->second, now));
  }
  if (q.from > q.to) return validation_error("from: must not be after to");
  if (auto it = req.query.find("step"); it != req.query.end()) {
    Result<Duration> step = parse_duration(it->second);
    if (!step.ok() || *step <= Duration::zero()) {
      return validation_error("step: expected a positive duration such as 1h or 15m, got \"" +
                              printable(it->second, 40) + "\"");
    }
    if (q.from == Time::min())
      return validation_error("step: needs from (the first bucket's start)");
    if (q.group_by == "instance") {
      return validation_error(
          "step: a series is per cluster, group or share; with groupBy=instance ask for one "
          "window at a time");
    }
    if (q.from < Time{}) return validation_error("from: a series starts no earlier than 1970");
    // In 128 bits: `from` and `to` may be any times query_time accepts, far apart.
    const __int128 span =
        static_cast<__int128>(q.to.time_since_epoch().count()) - q.from.time_since_epoch().count();
    const __int128 buckets = (span + step->count() - 1) / step->count();
    if (buckets > kMaxSeriesBuckets) {
      return validation_error("step: " + printable(it->second, 40) + " makes more than " +
                              std::to_string(kMaxSeriesBuckets) +
                              " buckets between from and to; ask for a longer step");
    }
    q.step = *step;
  }
  if (!cluster.empty() && !v.find_cluster(cluster)) {
    bool retired = v.retired_billing &&
                   std::any_of(v.retired_billing->begin(), v.retired_billing->end(),
                               [&](const BillingRecord& b) { return b.cluster_name == cluster; });
    if (!retired) return not_found_error("cluster \"" + cluster + "\" not found");
  }
  return q;
}

// groupBy=share: what the jobs of each quota share ran on, the price of the node capacity their
// pods held while they ran (idle instances are in groupBy=cluster, not here).
Result<Json> share_billing(const FleetView& v, const BillingQuery& q, HistoryReader* history) {
  const std::string& cluster = q.cluster;
  const Time from = q.from, to = q.to;
  struct ShareLine {
    int64_t cost = 0;
    int64_t billed_us = 0;
    std::set<std::string> jobs;
  };
  std::map<std::pair<std::string, std::string>, ShareLine> shares;
  int64_t sum = 0;
  auto add = [&](const JobRun& run, const std::string& id, const std::string& queue,
                 const std::string& share) {
    if (!cluster.empty() && run.cluster != cluster) return;
    const Duration billed = run.billed(from == Time::min() ? run.start : from, to);
    if (billed <= Duration::zero()) return;
    ShareLine& l = shares[{queue, share}];
    const int64_t cost = run.cost_micros(from == Time::min() ? run.start : from, to);
    l.cost += cost;
    l.billed_us += billed.count();
    l.jobs.insert(id);
    sum += cost;
  };
  for (const auto& [id, j] : v.jobs) {
    for (const JobRun& run : j->runs) add(run, id, j->job_queue, j->quota_share);
  }
  // The jobs retention took out of memory bill from their runs in history, as they did before.
  if (history != nullptr) {
    GF_ASSIGN_OR_RETURN(std::vector<HistoryRun> runs, history->runs_between(from, to, cluster));
    for (const HistoryRun& h : runs) {
      JobRun run;
      run.start = h.start;
      run.end = h.end;
      run.cluster = h.cluster;
      run.micros_per_hour = h.micros_per_hour;
      add(run, h.job_id, h.job_queue, h.quota_share);
    }
  }
  Json items = Json::array();
  for (const auto& [key, l] : shares) {
    items.push_back({{"JobQueue", key.first},
                     {"QuotaShareName", key.second},
                     {"Jobs", l.jobs.size()},
                     {"BilledSeconds", l.billed_us / 1'000'000},
                     {"Cost", format_money(l.cost)},
                     {"CostMicros", l.cost}});
  }
  Json out = {{"GroupBy", "share"}, {"To", format_iso8601(to)},   {"Currency", "USD"},
              {"Items", items},     {"Total", format_money(sum)}, {"TotalMicros", sum}};
  if (from != Time::min()) out["From"] = format_iso8601(from);
  return out;
}

Json line_json(const Line& l, const std::string& group_by) {
  Json j = l.key;
  if (!l.instance_type.empty()) {
    j["InstanceType"] = l.instance_type;
    j["PricePerHour"] = format_money(l.price);
  }
  if (group_by != "instance") j["Instances"] = l.instances;
  j["BilledSeconds"] = l.billed_us / 1'000'000;
  j["Cost"] = format_money(l.cost);
  j["CostMicros"] = l.cost;
  if (group_by != "instance") {
    j["BurnRatePerHour"] = format_money(l.burn_per_hour);
    j["BurnRateMicrosPerHour"] = l.burn_per_hour;
  }
  return j;
}

// groupBy=instance, group or cluster: the instances' records clipped to [from, to].
Json instance_billing(const std::vector<BillingRecord>& records, const BillingQuery& q) {
  const std::string& cluster = q.cluster;
  const std::string& group_by = q.group_by;
  const Time from = q.from, to = q.to;
  std::map<std::string, Line> lines;
  int64_t total = 0;
  for (BillingRecord b : records) {
    if (!cluster.empty() && b.cluster_name != cluster) continue;
    if (b.start < from) b.start = from;
    const bool open = !b.end || *b.end > to;  // still billing at `to`
    Time end = b.end && *b.end < to ? *b.end : to;
    if (end <= b.start) continue;
    b.end = end;
    std::string key = b.cluster_arn;
    Json kj = {{"ClusterName", b.cluster_name}, {"ClusterArn", b.cluster_arn}};
    if (group_by != "cluster") {
      key += "/" + b.group;
      kj["InstanceGroupName"] = b.group;
    }
    if (group_by == "instance") {
      key += "/" + b.instance_id;
      kj["InstanceId"] = b.instance_id;
    }
    Line& l = lines[key];
    l.key = kj;
    if (group_by != "cluster") {
      l.instance_type = b.instance_type;
      l.price = b.price_micros_per_hour;
    }
    l.billed_us += b.billed(end).count();
    const int64_t cost = b.cost_micros(end);
    l.cost += cost;
    l.instances += 1;
    if (open) l.burn_per_hour += b.price_micros_per_hour;
    total += cost;
  }
  Json items = Json::array();
  for (auto& [k, l] : lines) items.push_back(line_json(l, group_by));
  Json out = {{"GroupBy", group_by}, {"To", format_iso8601(to)},     {"Currency", "USD"},
              {"Items", items},      {"Total", format_money(total)}, {"TotalMicros", total}};
  if (from != Time::min()) out["From"] = format_iso8601(from);
  return out;
}

// GET /v1/billing: metering summed by instance, group, cluster or quota share over [from, to].
HttpResponse get_billing(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Time now = api.clock().now();
  Result<BillingQuery> q = parse_billing_query(*view, req, now);
  if (!q.ok()) return error_response(q.status());
  std::vector<BillingRecord> records;
  if (q->group_by != "share") records = billing_records(*view);
  HistoryReader* history = api.history();
  auto window = [&](const BillingQuery& w) -> Result<Json> {
    if (w.group_by == "share") return share_billing(*view, w, history);
    return instance_billing(records, w);
  };
  Result<Json> first = window(*q);
  if (!first.ok()) return error_response(first.status());
  Json out = std::move(first).value();
  if (q->step > Duration::zero()) {
    // The same answer per bucket [from + k·step, from + (k+1)·step), the last one cut at `to`:
    // cost over time (the console's billing chart).
    Json series = Json::array();
    // At most kMaxSeriesBuckets (checked), so from + k·step stays between from and to + step.
    for (int64_t k = 0; k < kMaxSeriesBuckets; ++k) {
      const Time start = q->from + k * q->step;
      if (start >= q->to) break;
      BillingQuery b = *q;
      b.from = start;
      b.to = q->to - start <= q->step ? q->to : start + q->step;
      Result<Json> got = window(b);
      if (!got.ok()) return error_response(got.status());
      Json& bucket = *got;
      series.push_back({{"From", bucket["From"]},
                        {"To", bucket["To"]},
                        {"Items", std::move(bucket["Items"])},
                        {"TotalMicros", bucket["TotalMicros"]}});
    }
    out["Step"] = format_duration(q->step);
    out["Series"] = std::move(series);
  }
  return json_response(200, out);
}

}  // namespace

// Every billing record: the retired clusters', the closed ones, and one still open per launched
// instance not yet shutting down.
std::vector<BillingRecord> billing_records(const FleetView& v) {
  std::vector<BillingRecord> records;
  if (v.retired_billing) records = *v.retired_billing;
  for (const auto& [name, c] : v.clusters) {
    records.insert(records.end(), c->billing.begin(), c->billing.end());
    for (const auto& [id, n] : c->nodes) {
      if (!n.launch_time || n.shutting_down_at) continue;
      records.push_back(BillingRecord{id, c->name, c->arn, n.group, n.instance_type,
                                      n.price_micros_per_hour, *n.launch_time, std::nullopt});
    }
  }
  return records;
}

void register_billing_routes(Api& api) {
  api.router().add("GET", "/v1/billing",
                   [&api](const HttpRequest& req) { return get_billing(api, req); });
}

}  // namespace gf
