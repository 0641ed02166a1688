#include "sim/failure_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/catalog.h"

namespace gf {

namespace {

// Llama 3 405B pre-training, Table 5 (419 unexpected interruptions in 54 days on 16,384 H100s),
// mapped onto the detector inputs below; docs/scenarios.md "Failures" has the table.
struct CauseRow {
  const char* name;
  double weight;
};
constexpr CauseRow kLlama3Mix[] = {
    {"gpu", 148},
    {"hbm", 72},
    {"software", 54},
    {"network", 35},
    {"host-maintenance", 32},
    {"sram", 19},
    {"gsp", 17},
    {"nic", 7},
    {"nccl", 7},
    {"sdc", 6},
    {"thermal", 6},
    {"host-hardware", 16},
};

// The detector input a fault of `cause` produces: what a node agent would report.
Json cause_signal(const std::string& cause, Random& rng) {
  const int pid = static_cast<int>(1000 + rng.uniform(60000));
  const std::string pci = fmt::format("PCI:0000:{:02x}:00", 0x18 + 0x10 * rng.uniform(8));
  if (cause == "gpu") {
    return fmt::format("NVRM: Xid ({}): 79, pid={}, GPU has fallen off the bus.", pci, pid);
  }
  if (cause == "hbm") {
    return fmt::format(
        "NVRM: Xid ({}): 48, pid={}, An uncorrectable double bit error (DBE) has been detected "
        "on GPU in the framebuffer at partition 6, subpartition 0.",
        pci, pid);
  }
  if (cause == "sram") {
    return fmt::format(
        "NVRM: Xid ({}): 95, pid={}, Uncontained: SRAM ECC error. RST: Yes, D-RST: No", pci, pid);
  }
  if (cause == "gsp") {
    return fmt::format(
        "NVRM: Xid ({}): 119, pid={}, name=python, Timeout after 6s of waiting for RPC response "
        "from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL).",
        pci, pid);
  }
  if (cause == "software" || cause == "nccl") {
    return fmt::format("INFO: task pt_main_thread:{} blocked for more than 120 seconds.", pid);
  }
  if (cause == "network") return Json{{"ib", {{"port", 1}, {"state", "Down"}}}};
  if (cause == "nic") return Json{{"ib", {{"port", 2}, {"state", "Down"}}}};
  if (cause == "sdc") {
    return Json{{"dcgm", {{"field", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"}, {"value", 1}}}};
  }
  if (cause == "thermal") {
    // NVML's HW thermal slowdown bit (0x40), held across two readings.
    return Json{{"dcgm", {{"field", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}, {"value", 64}}}};
  }
  return Json{{"unreachable", true}};  // host-maintenance, host-hardware
}

Result<double> read_weight(const Json& v, const std::string& path, bool allow_zero) {
  if (!v.is_number()) {
    return validation_error(path + ": expected a number, got " + describe_json_value(v));
  }
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0 || (!allow_zero && x == 0) || x > 1e9) {
    return validation_error(fmt::format("{}: must be {} and at most 1e9, got {}", path,
                                        allow_zero ? ">= 0" : "> 0", x));
  }
  return x;
}

}  // namespace

std::vector<FailureCause> default_failure_mix() {
  std::vector<FailureCause> mix;
  for (const auto& row : kLlama3Mix) mix.push_back(FailureCause{row.name, row.weight});
  return mix;
}

std::vector<std::string> failure_cause_names() {
  std::vector<std::string> names;
  for (const auto& row : kLlama3Mix) names.emplace_back(row.name);
  return names;
}

Result<FailureModelSpec> parse_failure_model(const Json& value, const std::string& path) {
  FailureModelSpec spec;
  spec.mix = default_failure_mix();
  if (value.is_boolean() && value.get<bool>()) return spec;
  if (!value.is_object()) {
    return validation_error(path + ": expected a map (or true for the defaults), got " +
                            describe_json_value(value));
  }
  ObjectReader r(value, path);
  if (const Json* v = r.optional_value("ratePer1000NodeDays")) {
    GF_ASSIGN_OR_RETURN(spec.rate_per_1000_node_days,
                        read_weight(*v, r.field_path("ratePer1000NodeDays"), true));
  }
  if (const Json* v = r.optional_object("lemons")) {
    ObjectReader l(*v, r.field_path("lemons"));
    if (const Json* s = l.optional_value("share")) {
      GF_ASSIGN_OR_RETURN(spec.lemon_share, read_weight(*s, l.field_path("share"), true));
      if (spec.lemon_share > 1)
        return validation_error(l.field_path("share") + ": must be at most 1");
    }
    if (const Json* f = l.optional_value("factor")) {
      GF_ASSIGN_OR_RETURN(spec.lemon_factor, read_weight(*f, l.field_path("factor"), false));
    }
    GF_RETURN_IF_ERROR(l.status());
    if (auto u = l.unknown_fields(); !u.empty()) {
      return validation_error(l.field_path(u.front()) +
                              ": unknown field; expected share or factor");
    }
  }
  if (const Json* m = r.optional_object("mix")) {
    const std::vector<std::string> known = failure_cause_names();
    // Causes not listed keep no weight: the mix given is the whole mix.
    spec.mix.clear();
    for (const auto& name : known) {
      if (!m->contains(name)) continue;
      GF_ASSIGN_OR_RETURN(double w,
                          read_weight(m->at(name), path_join(r.field_path("mix"), name), true));
      spec.mix.push_back(FailureCause{name, w});
    }
    for (auto it = m->begin(); it != m->end(); ++it) {
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        return validation_error(path_join(r.field_path("mix"), it.key()) +
                                ": unknown cause; expected one of " + list);
      }
    }
    double total = 0;
    for (const auto& c : spec.mix) total += c.weight;
    if (total <= 0) return validation_error(r.field_path("mix") + ": the weights add up to 0");
  }
  if (const Json* v = r.optional_object("repair")) {
    ObjectReader rr(*v, r.field_path("repair"));
    for (const auto& [key, target] : {std::pair{"reboot", &spec.repair_reboot},
                                      std::pair{"reprovision", &spec.repair_reprovision},
                                      std::pair{"migrate", &spec.repair_migrate}}) {
      if (const Json* w = rr.optional_value(key)) {
        GF_ASSIGN_OR_RETURN(*target, read_weight(*w, rr.field_path(key), true));
      }
    }
    GF_RETURN_IF_ERROR(rr.status());
    if (auto u = rr.unknown_fields(); !u.empty()) {
      return validation_error(rr.field_path(u.front()) +
                              ": unknown field; expected reboot, reprovision or migrate");
    }
    if (spec.repair_reboot + spec.repair_reprovision + spec.repair_migrate <= 0) {
      return validation_error(r.field_path("repair") + ": the shares add up to 0");
    }
  }
  if (const Json* v = r.optional_value("operator")) {
    if (v->is_string() && v->get<std::string>() == "none") {
      spec.operator_response.reset();
    } else {
      ObjectReader o(*v, r.field_path("operator"));
      if (const Json* t = o.optional_value("responseTime")) {
        auto d = read_bounded_duration(*t, days(365));
        if (!d.ok()) return d.status().with_prefix(o.field_path("responseTime"));
        spec.operator_response = *d;
      }
      GF_RETURN_IF_ERROR(o.status());
      if (auto u = o.unknown_fields(); !u.empty()) {
        return validation_error(o.field_path(u.front()) +
                                ": unknown field; expected responseTime (or operator: none)");
      }
    }
  }
  if (auto groups = r.optional_string_list("instanceGroups")) spec.instance_groups = *groups;
  if (const Json* v = r.optional_value("sweep")) {
    auto d = read_bounded_duration(*v, days(1));
    if (!d.ok()) return d.status().with_prefix(r.field_path("sweep"));
    if (*d < minutes(1)) return validation_error(r.field_path("sweep") + ": must be at least 1m");
    spec.sweep = *d;
  }
  GF_RETURN_IF_ERROR(r.status());
  if (auto u = r.unknown_fields(); !u.empty()) {
    return validation_error(r.field_path(u.front()) +
                            ": unknown field; expected ratePer1000NodeDays, lemons, mix, repair, "
                            "operator, instanceGroups or sweep");
  }
  return spec;
}

FailureInjector::FailureInjector(FailureModelSpec spec, uint64_t seed)
    : spec_(std::move(spec)), rng_(seed ^ 0xfa1150eedull) {
  if (spec_.mix.empty()) spec_.mix = default_failure_mix();
  for (const auto& c : spec_.mix) total_weight_ += c.weight;
}

Time FailureInjector::next_due() const {
  Time t = next_sweep_;
  if (!queue_.empty()) t = std::min(t, queue_.begin()->first);
  return t;
}

Duration FailureInjector::draw_gap(const std::string& host) {
  double rate = spec_.rate_per_1000_node_days / 1000.0 / 86400e6;  // per microsecond
  if (host_lemon_[host]) rate *= spec_.lemon_factor;
  if (rate <= 0) return Duration::max() / 4;
  const double u = rng_.uniform_unit();
  const double gap = -std::log1p(-u) / rate;
  return Duration(static_cast<int64_t>(std::min(gap, 1e17)));
}

void FailureInjector::sync(const FleetState& state, Time now) {
  if (!started_) {
    started_ = true;
    last_sweep_ = now;
  }
  if (now < next_sweep_) return;
  // Exposure: the nodes watched since the last sweep (piecewise constant between sweeps).
  exposure_us_ += static_cast<int64_t>(nodes_.size()) * (now - last_sweep_).count();
  last_sweep_ = now;
  next_sweep_ = now + spec_.sweep;
  // Only clusters whose revision moved since the last sweep are looked at, and in them only the
  // nodes the state's node log names, when it can (docs/performance.md "Fleet-scale simulation").
  const FleetView& view = state.view();
  std::set<std::string, std::less<>> present;
  for (const auto& [cname, c] : view.clusters) {
    present.insert(cname);
    SeenCluster& seen = clusters_[cname];
    const uint64_t revision = state.cluster_revisions().at(cname);
    if (seen.revision == revision) continue;
    const std::optional<std::vector<std::string>> changed =
        seen.revision == 0 ? std::nullopt : state.nodes_changed_since(cname, seen.revision);
    seen.revision = revision;
    if (changed) {
      for (const std::string& id : *changed) {
        auto it = c->nodes.find(id);
        if (it != c->nodes.end() && watch(cname, id, it->second, now)) {
          seen.ids.insert(id);
        } else if (seen.ids.erase(id) > 0) {
          forget(id);
        }
      }
      continue;
    }
    std::set<std::string> ids;
    for (const auto& [id, n] : c->nodes) {
      if (watch(cname, id, n, now)) ids.insert(id);
    }
    for (const std::string& id : seen.ids) {
      if (!ids.contains(id)) forget(id);
    }
    seen.ids = std::move(ids);
  }
  for (auto it = clusters_.begin(); it != clusters_.end();) {
    if (present.contains(it->first)) {
      ++it;
      continue;
    }
    for (const std::string& id : it->second.ids) forget(id);
    it = clusters_.erase(it);
  }
}

bool FailureInjector::watch(const std::string& cluster, const std::string& id, const Node& n,
                            Time now) {
  if (!n.is_current()) return false;
  if (!spec_.instance_groups.empty()) {
    if (std::find(spec_.instance_groups.begin(), spec_.instance_groups.end(), n.group) ==
        spec_.instance_groups.end())
      return false;
  } else {
    const InstanceTypeInfo* info = Catalog::builtin().find(n.instance_type);
    if (info == nullptr || info->gpus == 0) return false;
  }
  const std::string host = n.host();
  auto it = nodes_.find(id);
  if (it != nodes_.end() && it->second.host == host) return true;
  if (it != nodes_.end()) queue_.erase({it->second.next, id});  // migrated: new hardware
  if (!host_lemon_.contains(host)) {
    const bool lemon = rng_.uniform_unit() < spec_.lemon_share;
    host_lemon_[host] = lemon;
    if (lemon) lemons_.insert(host);
  }
  Tracked t{cluster, host, now + draw_gap(host)};
  queue_.insert({t.next, id});
  nodes_[id] = std::move(t);
  return true;
}

void FailureInjector::forget(const std::string& id) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  queue_.erase({it->second.next, id});
  nodes_.erase(it);
}

FaultInjection FailureInjector::make_fault(const std::string& node, const Tracked& t) {
  double pick = rng_.uniform_unit() * total_weight_;
  std::string cause = spec_.mix.back().name;
  for (const auto& c : spec_.mix) {
    if (pick < c.weight) {
      cause = c.name;
      break;
    }
    pick -= c.weight;
  }
  FaultInjection f;
  f.cluster = t.cluster;
  f.node = node;
  f.host = t.host;
  f.cause = cause;
  f.signal = cause_signal(cause, rng_);
  const double total = spec_.repair_reboot + spec_.repair_reprovision + spec_.repair_migrate;
  const double r = rng_.uniform_unit() * total;
  if (r < spec_.repair_reboot) {
    f.repair = "reboot";  // any remediation fixes it
  } else if (r < spec_.repair_reboot + spec_.repair_reprovision) {
    f.repair = "reprovision";
    f.cleared_by = {"reprovision", "migrate", "delete"};
  } else {
    f.repair = "migrate";
    f.cleared_by = {"migrate", "delete"};
  }
  return f;
}

std::vector<FaultInjection> FailureInjector::due(const FleetState& state, Time now) {
  sync(state, now);
  const FleetView& view = state.view();
  std::vector<FaultInjection> out;
  const remediate::HealthState& health = view.health_state();
  while (!queue_.empty() && queue_.begin()->first <= now) {
    const std::string id = queue_.begin()->second;
    queue_.erase(queue_.begin());
    auto it = nodes_.find(id);
    if (it == nodes_.end()) continue;
    Tracked& t = it->second;
    // A node already failing (an open alert or remediation) does not fail again until fixed.
    const auto alert = health.open_alerts.lower_bound(id + "|");
    const bool failing =
        (alert != health.open_alerts.end() && alert->first.starts_with(id + "|")) ||
        health.open_by_node.contains(id);
    if (!failing) {
      FaultInjection f = make_fault(id, t);
      ++injected_;
      ++by_cause_[f.cause];
      ++by_repair_[f.repair];
      ++by_host_[f.host];
      out.push_back(std::move(f));
    }
    t.next = now + draw_gap(t.host);
    queue_.insert({t.next, id});
  }
  return out;
}

std::vector<OperatorAction> FailureInjector::operator_actions(const FleetView& view, Time now) {
  std::vector<OperatorAction> out;
  if (!spec_.operator_response) return out;
  const Duration wait = *spec_.operator_response;
  const remediate::HealthState& health = view.health_state();
  for (const auto& [cluster, b] : health.breakers) {
    if (b.open && b.tripped_at && *b.tripped_at + wait <= now) {
      out.push_back({"/v1/clusters/" + cluster + "/circuit-breaker/reset", "reset-breaker"});
    }
  }
  for (const auto& [node, rem_id] : health.open_by_node) {
    const remediate::Remediation* r = health.find_remediation(rem_id);
    if (r == nullptr || r->status != remediate::Status::kProposed) continue;
    if (r->held_by_breaker) continue;  // the reset above resumes it
    if (r->created_at + wait > now) continue;
    const std::string path = "/v1/remediations/" + r->id;
    if (r->requester == "oncall") {
      // The on-call's own request (a replacement): a second person approves it.
      out.push_back({path + "/approve", "approve", Json::object(), "oncall-2"});
      continue;
    }
    if (const remediate::Remediation* failed = failed_before(health, *r)) {
      // The same action already failed here for the same alert: approving it again would only
      // repeat it (a reprovision cannot fix what needs new hardware, and migrate needs a critical
      // alert). A person rejects it and replaces the node instead.
      const std::string why =
          fmt::format("{} already failed on {} for this alert ({}); replacing the node",
                      to_string(r->effective), r->node, failed->id);
      out.push_back({path + "/reject", "reject", Json{{"Reason", why}}});
      out.push_back({"/v1/remediations", "replace",
                     Json{{"ClusterName", r->cluster},
                          {"NodeId", r->node},
                          {"Action", "delete"},
                          {"Reason", why}}});
      continue;
    }
    out.push_back({path + "/approve", "approve"});
  }
  return out;
}

const remediate::Remediation* FailureInjector::failed_before(const remediate::HealthState& health,
                                                             const remediate::Remediation& r) {
  auto ids = health.by_node.find(r.node);
  if (ids == health.by_node.end()) return nullptr;
  for (const std::string& id : ids->second) {
    const remediate::Remediation* q = health.find_remediation(id);
    if (q == nullptr || q->id == r.id || q->status != remediate::Status::kFailed ||
        q->effective != r.effective)
      continue;
    for (const std::string& a : q->evidence) {
      if (std::find(r.evidence.begin(), r.evidence.end(), a) != r.evidence.end()) return q;
    }
  }
  return nullptr;
}

}  // namespace gf
