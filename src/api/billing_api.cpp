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
};

// The query of GET /v1/billing: [from, to] (from is Time::min() when not given) and the grouping.
struct BillingQuery {
  std::string cluster;
  std::string group_by;
  Time from = Time::min();
  Time to{};
};

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
HttpResponse share_billing(const FleetView& v, const BillingQuery& q) {
  const std::string& cluster = q.cluster;
  const Time from = q.from, to = q.to;
  struct ShareLine {
    int64_t cost = 0;
    int64_t billed_us = 0;
    std::set<std::string> jobs;
  };
  std::map<std::pair<std::string, std::string>, ShareLine> shares;
  int64_t sum = 0;
  for (const auto& [id, j] : v.jobs) {
    for (const JobRun& run : j->runs) {
      if (!cluster.empty() && run.cluster != cluster) continue;
      const Duration billed = run.billed(from == Time::min() ? run.start : from, to);
      if (billed <= Duration::zero()) continue;
      ShareLine& l = shares[{j->job_queue, j->quota_share}];
      const int64_t cost = run.cost_micros(from == Time::min() ? run.start : from, to);
      l.cost += cost;
      l.billed_us += billed.count();
      l.jobs.insert(id);
      sum += cost;
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
  return json_response(200, out);
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
  return j;
}

// groupBy=instance, group or cluster: the instances' records clipped to [from, to].
HttpResponse instance_billing(const FleetView& v, const BillingQuery& q) {
  const std::string& cluster = q.cluster;
  const std::string& group_by = q.group_by;
  const Time from = q.from, to = q.to;
  std::vector<BillingRecord> records = billing_records(v);
  std::map<std::string, Line> lines;
  int64_t total = 0;
  for (BillingRecord b : records) {
    if (!cluster.empty() && b.cluster_name != cluster) continue;
    if (b.start < from) b.start = from;
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
    total += cost;
  }
  Json items = Json::array();
  for (auto& [k, l] : lines) items.push_back(line_json(l, group_by));
  Json out = {{"GroupBy", group_by}, {"To", format_iso8601(to)},     {"Currency", "USD"},
              {"Items", items},      {"Total", format_money(total)}, {"TotalMicros", total}};
  if (from != Time::min()) out["From"] = format_iso8601(from);
  return json_response(200, out);
}

// GET /v1/billing: metering summed by instance, group, cluster or quota share over [from, to].
HttpResponse get_billing(Api& api, const HttpRequest& req) {
  auto view = api.loop().view();
  const Time now = api.clock().now();
  Result<BillingQuery> q = parse_billing_query(*view, req, now);
  if (!q.ok()) return error_response(q.status());
  if (q->group_by == "share") return share_billing(*view, *q);
  return instance_billing(*view, *q);
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
