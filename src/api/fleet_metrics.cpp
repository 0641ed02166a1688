// The fleet's gauges on /metrics (docs/api.md "Metrics"): what an operator graphs and alerts on,
// computed from the published view at each scrape. They are not kept in the metrics registry: a
// cluster, queue or status that goes away must leave the exposition with it.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "api/api.h"
#include "core/metrics.h"
#include "quota/frontends/quota_objects.h"

namespace gf {

namespace {

// One gauge family: HELP, TYPE and one line per label set.
class Family {
 public:
  Family(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}
  void add(const std::string& labels, double value) { values_[labels] += value; }
  void render(std::string& out) const {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name_, help_, name_);
    for (const auto& [labels, v] : values_) {
      out += labels.empty() ? fmt::format("{} {}\n", name_, v)
                            : fmt::format("{}{{{}}} {}\n", name_, labels, v);
    }
  }

 private:
  std::string name_, help_;
  std::map<std::string, double> values_;
};

std::string labels(std::initializer_list<std::pair<const char*, std::string_view>> kv) {
  std::string out;
  for (const auto& [k, v] : kv) {
    if (!out.empty()) out += ',';
    out += prometheus_label(k, std::string(v));
  }
  return out;
}

void instance_metrics(const FleetView& v, std::string& out) {
  Family instances("gpufleet_instances",
                   "Instances by cluster, instance group and InstanceStatus (cordoned ones "
                   "counted again under cordoned=\"true\").");
  Family target("gpufleet_instance_group_target",
                "TargetCount per instance group (the desired instances).");
  for (const auto& [name, c] : v.clusters) {
    for (const InstanceGroup& g : c->groups) {
      target.add(labels({{"cluster", name}, {"group", g.spec.name}}),
                 static_cast<double>(g.spec.target));
    }
    for (const auto& [id, n] : c->nodes) {
      instances.add(labels({{"cluster", name},
                            {"group", n.group},
                            {"status", to_string(n.status)},
                            {"cordoned", n.cordoned ? "true" : "false"}}),
                    1);
    }
  }
  instances.render(out);
  target.render(out);
}

void cost_metrics(const FleetView& v, Time now, std::string& out) {
  Family cost("gpufleet_cost_dollars",
              "Billed cost so far per cluster, in US dollars (instance-level metering).");
  Family burn("gpufleet_cost_burn_rate_dollars_per_hour",
              "What the instances billed now cost per hour, per cluster.");
  for (const BillingRecord& b : billing_records(v)) {
    const std::string l = labels({{"cluster", b.cluster_name}});
    cost.add(l, static_cast<double>(b.cost_micros(b.end.value_or(now))) / 1e6);
    if (!b.end) burn.add(l, static_cast<double>(b.price_micros_per_hour) / 1e6);
  }
  for (const auto& [name, c] : v.clusters) burn.add(labels({{"cluster", name}}), 0);
  cost.render(out);
  burn.render(out);
}

void health_metrics(const FleetView& v, std::string& out) {
  const remediate::HealthState& h = v.health_state();
  Family alerts("gpufleet_alerts", "Open alerts by cluster, state (pending, firing) and severity.");
  for (const auto& [id, a] : h.alerts) {
    if (!a.active()) continue;
    alerts.add(
        labels({{"cluster", a.cluster}, {"state", a.state}, {"severity", to_string(a.severity)}}),
        1);
  }
  Family rems("gpufleet_remediations",
              "Remediations by cluster and status (Proposed ones wait for a person).");
  for (const auto& [id, r] : h.remediations) {
    rems.add(labels({{"cluster", r.cluster}, {"status", remediate::to_string(r.status)}}), 1);
  }
  alerts.render(out);
  rems.render(out);
}

void queue_metrics(const FleetView& v, std::string& out) {
  Family admitted("gpufleet_queue_admitted_jobs",
                  "Jobs admitted per quota node (a queue counts its own; a parent its subtree).");
  Family pending("gpufleet_queue_pending_jobs", "Jobs waiting for admission per quota node.");
  if (v.quota && v.quota_status) {
    const quota::QuotaGraph& g = v.quota->graph;
    for (quota::NodeId n = 0; n < g.size() && n < v.quota_status->size(); ++n) {
      const std::string l =
          labels({{"quota_node", g.spec(n).name}, {"leaf", g.is_queue(n) ? "true" : "false"}});
      admitted.add(l, static_cast<double>((*v.quota_status)[n].admitted));
      pending.add(l, static_cast<double>((*v.quota_status)[n].pending));
    }
  }
  Family jobs("gpufleet_jobs", "Jobs by status (finished ones are kept until deleted).");
  for (const auto& [id, j] : v.jobs) jobs.add(labels({{"status", to_string(j->status)}}), 1);
  admitted.render(out);
  pending.render(out);
  jobs.render(out);
}

}  // namespace

std::string render_fleet_metrics(const FleetView& v, Time now) {
  std::string out;
  instance_metrics(v, out);
  cost_metrics(v, now, out);
  health_metrics(v, out);
  queue_metrics(v, out);
  return out;
}

}  // namespace gf
