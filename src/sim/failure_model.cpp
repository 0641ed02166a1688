#include "sim/failure_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/catalog.h"

namespace gf {

namespace {

// Llama 3 405B pre-training, Table 5 (419 unexpected interruptions in 54 days on 16,384 H100s),
// mapped onto the detector inputs below, with each cause's effect on a synchronous job and the
// shares of faults each repair fixes; docs/scenarios.md "Failures" has the table and its sources.
using E = health::JobEffect;
struct CauseRow {
  const char* name;
  double weight;
  E effect;
  double hang_share;
  double reboot, reprovision, replace, none;
  Duration clears_after;
};
constexpr CauseRow kLlama3Mix[] = {
    {"gpu", 148, E::kFatal, 0.5, 0.32, 0, 0.68, 0, {}},
    {"hbm", 72, E::kFatal, 0, 0.8, 0, 0.2, 0, {}},
    {"software", 54, E::kFatal, 0.1, 0, 0, 0, 1, minutes(10)},
    {"network", 35, E::kFatal, 0, 0.14, 0, 0.36, 0.5, hours(1)},
    {"host-maintenance", 32, E::kFatal, 0, 0, 0, 0, 1, hours(2)},
    {"sram", 19, E::kFatal, 0, 0.8, 0, 0.2, 0, {}},
    {"gsp", 17, E::kFatal, 0, 0.9, 0.05, 0.05, 0, {}},
    {"nic", 7, E::kFatal, 0, 0.28, 0, 0.72, 0, {}},
    {"nccl", 7, E::kHang, 1, 0, 0, 0, 1, minutes(10)},
    {"sdc", 6, E::kFatal, 0, 0, 0, 1, 0, {}},
    {"thermal", 6, E::kDegraded, 0, 0, 0, 1, 0, {}},
    {"host-hardware", 16, E::kFatal, 0, 0, 0, 1, 0, {}},
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

// causes: {NAME: {effect, hangShare, fix: {reboot, reprovision, replace, none}, clearsAfter}}:
// changes of a cause's defaults (a cause the mix dropped cannot be changed).
Status parse_cause(const Json& v, const std::string& path, FailureCause& c) {
  ObjectReader o(v, path);
  if (std::optional<std::string> e = o.optional_string("effect")) {
    std::optional<health::JobEffect> effect = health::parse_job_effect(*e);
    if (!effect) {
      return validation_error(o.field_path("effect") +
                              ": expected fatal, hang, degraded or none, got \"" +
                              printable(*e, 40) + "\"");
    }
    c.effect = *effect;
  }
  if (const Json* h = o.optional_value("hangShare")) {
    GF_ASSIGN_OR_RETURN(c.hang_share, read_weight(*h, o.field_path("hangShare"), true));
    if (c.hang_share > 1)
      return validation_error(o.field_path("hangShare") + ": must be at most 1");
  }
  if (const Json* f = o.optional_object("fix")) {
    ObjectReader fr(*f, o.field_path("fix"));
    for (const auto& [key, target] :
         {std::pair{"reboot", &c.fix_reboot}, std::pair{"reprovision", &c.fix_reprovision},
          std::pair{"replace", &c.fix_replace}, std::pair{"none", &c.fix_none}}) {
      if (const Json* w = fr.optional_value(key)) {
        GF_ASSIGN_OR_RETURN(*target, read_weight(*w, fr.field_path(key), true));
      }
    }
    GF_RETURN_IF_ERROR(fr.status());
    if (auto u = fr.unknown_fields(); !u.empty()) {
      return validation_error(fr.field_path(u.front()) +
                              ": unknown field; expected reboot, reprovision, replace or none");
    }
    if (c.fix_reboot + c.fix_reprovision + c.fix_replace + c.fix_none <= 0)
      return validation_error(o.field_path("fix") + ": the shares add up to 0");
  }
  if (const Json* d = o.optional_value("clearsAfter")) {
    auto dur = read_bounded_duration(*d, days(365));
    if (!dur.ok()) return dur.status().with_prefix(o.field_path("clearsAfter"));
    c.clears_after = *dur;
  }
  GF_RETURN_IF_ERROR(o.status());
  if (auto u = o.unknown_fields(); !u.empty()) {
    return validation_error(o.field_path(u.front()) +
                            ": unknown field; expected effect, hangShare, fix or clearsAfter");
  }
  return ok_status();
}

Status parse_causes(const Json& v, const std::string& path, FailureModelSpec& spec) {
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string where = path_join(path, it.key());
    auto c = std::find_if(spec.mix.begin(), spec.mix.end(),
                          [&](const FailureCause& x) { return x.name == it.key(); });
    if (c == spec.mix.end()) {
      std::string list;
      for (const auto& x : spec.mix) list += (list.empty() ? "" : ", ") + x.name;
      return validation_error(where + ": not a cause of the mix; expected one of " + list);
    }
    GF_RETURN_IF_ERROR(parse_cause(it.value(), where, *c));
  }
  return ok_status();
}

}  // namespace

std::vector<FailureCause> default_failure_mix() {
  std::vector<FailureCause> mix;
  for (const auto& r : kLlama3Mix) {
    mix.push_back(FailureCause{r.name, r.weight, r.effect, r.hang_share, r.reboot, r.reprovision,
                               r.replace, r.none, r.clears_after});
  }
  return mix;
}

std::string_view to_string(RemediationMode m) {
  switch (m) {
    case RemediationMode::kManual:
      return "manual";
    case RemediationMode::kNone:
      return "none";
    case RemediationMode::kAutomatic:
      break;
  }
  return "automatic";
}

Json FaultInjection::to_json() const {
  return Json{{"cluster", cluster},
              {"node", node},
              {"host", host},
              {"cause", cause},
              {"effect", health::to_string(effect)},
              {"fix", fix},
              {"injected", injected}};
}

std::vector<std::string> failure_cause_names() {
  std::vector<std::string> names;
  for (const auto& row : kLlama3Mix) names.emplace_back(row.name);
  return names;
}

namespace {

// A duration of at most `max` into `out`; errors carry `path`.
Status read_duration_into(const Json& v, const std::string& path, Duration max, Duration& out) {
  auto d = read_bounded_duration(v, max);
  if (!d.ok()) return d.status().with_prefix(path);
  out = *d;
  return ok_status();
}

// lemons: {share, factor}.
Status parse_lemons(const Json& v, const std::string& path, FailureModelSpec& spec) {
  ObjectReader l(v, path);
  if (const Json* s = l.optional_value("share")) {
    GF_ASSIGN_OR_RETURN(spec.lemon_share, read_weight(*s, l.field_path("share"), true));
    if (spec.lemon_share > 1)
      return validation_error(l.field_path("share") + ": must be at most 1");
  }
  if (const Json* f = l.optional_value("factor")) {
    GF_ASSIGN_OR_RETURN(spec.lemon_factor, read_weight(*f, l.field_path("factor"), false));
  }
  GF_RETURN_IF_ERROR(l.status());
  if (auto u = l.unknown_fields(); !u.empty())
    return validation_error(l.field_path(u.front()) + ": unknown field; expected share or factor");
  return ok_status();
}

// mix: {CAUSE: weight}; causes not listed keep no weight (the mix given is the whole mix), and
// the ones listed keep their default effects and fixes.
Status parse_mix(const Json& m, const std::string& path, FailureModelSpec& spec) {
  const std::vector<FailureCause> defaults = std::move(spec.mix);
  spec.mix.clear();
  for (const FailureCause& d : defaults) {
    if (!m.contains(d.name)) continue;
    GF_ASSIGN_OR_RETURN(double w, read_weight(m.at(d.name), path_join(path, d.name), true));
    spec.mix.push_back(d);
    spec.mix.back().weight = w;
  }
  const std::vector<std::string> known = failure_cause_names();
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return validation_error(path_join(path, it.key()) + ": unknown cause; expected one of " +
                              list);
    }
  }
  double total = 0;
  for (const auto& c : spec.mix) total += c.weight;
  if (total <= 0) return validation_error(path + ": the weights add up to 0");
  return ok_status();
}

// remediation: automatic | manual | none.
Status parse_remediation_mode(const std::string& m, const std::string& path,
                              FailureModelSpec& spec) {
  for (RemediationMode mode :
       {RemediationMode::kAutomatic, RemediationMode::kManual, RemediationMode::kNone}) {
    if (m != to_string(mode)) continue;
    spec.remediation = mode;
    return ok_status();
  }
  return validation_error(path + ": expected automatic, manual or none, got \"" + printable(m, 40) +
                          "\"");
}

// operator: {responseTime} or none.
Status parse_operator(const Json& v, const std::string& path, FailureModelSpec& spec) {
  if (v.is_string() && v.get<std::string>() == "none") {
    spec.operator_response.reset();
    return ok_status();
  }
  ObjectReader o(v, path);
  if (const Json* t = o.optional_value("responseTime")) {
    Duration d{};
    GF_RETURN_IF_ERROR(read_duration_into(*t, o.field_path("responseTime"), days(365), d));
    spec.operator_response = d;
  }
  GF_RETURN_IF_ERROR(o.status());
  if (auto u = o.unknown_fields(); !u.empty()) {
    return validation_error(o.field_path(u.front()) +
                            ": unknown field; expected responseTime (or operator: none)");
  }
  return ok_status();
}

}  // namespace

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
  if (const Json* v = r.optional_object("lemons"))
    GF_RETURN_IF_ERROR(parse_lemons(*v, r.field_path("lemons"), spec));
  if (const Json* m = r.optional_object("mix"))
    GF_RETURN_IF_ERROR(parse_mix(*m, r.field_path("mix"), spec));
  if (r.optional_value("repair") != nullptr) {
    return validation_error(r.field_path("repair") +
                            ": replaced by causes.<cause>.fix, which fixes each cause by its own "
                            "shares (docs/scenarios.md \"Failures\")");
  }
  if (const Json* v = r.optional_object("causes"))
    GF_RETURN_IF_ERROR(parse_causes(*v, r.field_path("causes"), spec));
  if (const Json* v = r.optional_value("hangDetection"))
    GF_RETURN_IF_ERROR(
        read_duration_into(*v, r.field_path("hangDetection"), days(1), spec.hang_detection));
  if (std::optional<std::string> m = r.optional_string("remediation"))
    GF_RETURN_IF_ERROR(parse_remediation_mode(*m, r.field_path("remediation"), spec));
  if (const Json* v = r.optional_value("operator"))
    GF_RETURN_IF_ERROR(parse_operator(*v, r.field_path("operator"), spec));
  if (auto groups = r.optional_string_list("instanceGroups")) spec.instance_groups = *groups;
  if (const Json* v = r.optional_value("sweep")) {
    GF_RETURN_IF_ERROR(read_duration_into(*v, r.field_path("sweep"), days(1), spec.sweep));
    if (spec.sweep < minutes(1))
      return validation_error(r.field_path("sweep") + ": must be at least 1m");
  }
  GF_RETURN_IF_ERROR(r.status());
  if (auto u = r.unknown_fields(); !u.empty()) {
    return validation_error(r.field_path(u.front()) +
                            ": unknown field; expected ratePer1000NodeDays, lemons, mix, causes, "
                            "hangDetection, remediation, operator, instanceGroups or sweep");
  }
  return spec;
}

FailureInjector::FailureInjector(FailureModelSpec spec, uint64_t seed)
    : spec_(std::move(spec)), seed_(seed ^ 0xfa1150eedull) {
  if (spec_.mix.empty()) spec_.mix = default_failure_mix();
  for (const auto& c : spec_.mix) total_weight_ += c.weight;
}

Time FailureInjector::next_due() const {
  Time t = next_sweep_;
  if (!queue_.empty()) t = std::min(t, queue_.begin()->first);
  if (!effects_.empty()) t = std::min(t, effects_.begin()->first);
  return t;
}

namespace {

// A stream's seed from the run's seed and a name (FNV-1a of the name, mixed with the seed).
uint64_t stream_seed(uint64_t seed, std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h ^ (seed * 0x9e3779b97f4a7c15ull);
}

// The gap to the next candidate fault at the rate of a lemon (the highest rate): candidates are
// thinned to the host's own rate when they come due, so a node's candidate times do not depend
// on which host it runs on (docs/scenarios.md "What-if": common random numbers).
Duration draw_candidate_gap(Random& rng, const FailureModelSpec& spec) {
  const double rate = spec.rate_per_1000_node_days / 1000.0 / 86400e6 *
                      std::max(1.0, spec.lemon_factor);  // per microsecond
  const double u = rng.uniform_unit();
  if (rate <= 0) return Duration::max() / 4;
  const double gap = -std::log1p(-u) / rate;
  return Duration(static_cast<int64_t>(std::min(gap, 1e17)));
}

}  // namespace

bool FailureInjector::is_lemon(const std::string& host) {
  auto [it, first] = host_lemon_.try_emplace(host, false);
  if (first) {
    Random rng(stream_seed(seed_, "host/" + host));
    it->second = rng.uniform_unit() < spec_.lemon_share;
    if (it->second) lemons_.insert(host);
  }
  return it->second;
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
  is_lemon(host);
  auto it = nodes_.find(id);
  if (it != nodes_.end()) {
    it->second.host = host;  // migrated: new hardware, the node's stream goes on
    return true;
  }
  Tracked t{cluster, host, Random(stream_seed(seed_, "node/" + id)), {}};
  t.next = now + draw_candidate_gap(t.rng, spec_);
  queue_.insert({t.next, id});
  nodes_.emplace(id, std::move(t));
  return true;
}

void FailureInjector::forget(const std::string& id) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  queue_.erase({it->second.next, id});
  nodes_.erase(it);
}

FaultInjection FailureInjector::make_fault(const std::string& node, Tracked& t, Time now) {
  // Every draw comes from the node's stream, in the same order whatever the fleet did.
  double pick = t.rng.uniform_unit() * total_weight_;
  const FailureCause* cause = &spec_.mix.back();
  for (const auto& c : spec_.mix) {
    if (pick < c.weight) {
      cause = &c;
      break;
    }
    pick -= c.weight;
  }
  const double hang = t.rng.uniform_unit();
  const double fix = t.rng.uniform_unit();
  FaultInjection f;
  f.at = now;
  f.cluster = t.cluster;
  f.node = node;
  f.host = t.host;
  f.cause = cause->name;
  f.signal = cause_signal(cause->name, t.rng);
  f.effect = cause->effect;
  if (f.effect == health::JobEffect::kFatal && hang < cause->hang_share)
    f.effect = health::JobEffect::kHang;
  if (f.effect == health::JobEffect::kFatal) f.stops_at = now;
  if (f.effect == health::JobEffect::kHang) f.stops_at = now + spec_.hang_detection;
  const double total =
      cause->fix_reboot + cause->fix_reprovision + cause->fix_replace + cause->fix_none;
  const double x = fix * (total > 0 ? total : 1);
  if (total <= 0 || x < cause->fix_reboot) {
    f.fix = "reboot";  // any remediation fixes it
  } else if (x < cause->fix_reboot + cause->fix_reprovision) {
    f.fix = "reprovision";
    f.cleared_by = {"reprovision", "migrate", "delete"};
  } else if (x < cause->fix_reboot + cause->fix_reprovision + cause->fix_replace) {
    f.fix = "replace";
    f.cleared_by = {"migrate", "delete"};
  } else {
    // No node action helps; other hardware sidesteps it, and it goes away by itself.
    f.fix = "none";
    f.cleared_by = {"migrate", "delete"};
    f.clears_at = now + cause->clears_after;
  }
  return f;
}

std::vector<FaultInjection> FailureInjector::due(const FleetState& state, Time now) {
  sync(state, now);
  const FleetView& view = state.view();
  std::vector<FaultInjection> out;
  const remediate::HealthState& health = view.health_state();
  const double keep_normal = 1.0 / std::max(1.0, spec_.lemon_factor);
  while (!queue_.empty() && queue_.begin()->first <= now) {
    const std::string id = queue_.begin()->second;
    queue_.erase(queue_.begin());
    auto it = nodes_.find(id);
    if (it == nodes_.end()) continue;
    Tracked& t = it->second;
    const double thin = t.rng.uniform_unit();
    const bool lemon = is_lemon(t.host);
    FaultInjection f = make_fault(id, t, now);  // drawn either way: the stream stays aligned
    t.next = now + draw_candidate_gap(t.rng, spec_);
    queue_.insert({t.next, id});
    if (!lemon && thin >= keep_normal) continue;  // thinned to a normal host's rate
    // A node already failing (an open alert or remediation) does not fail again until fixed.
    const auto alert = health.open_alerts.lower_bound(id + "|");
    f.injected = !((alert != health.open_alerts.end() && alert->first.starts_with(id + "|")) ||
                   health.open_by_node.contains(id));
    if (f.injected) {
      const int64_t gen = ++generation_[id];
      if (f.stops_at)
        effects_.emplace(*f.stops_at,
                         std::pair{FaultEffect{*f.stops_at, f.cluster, id, f.cause, true}, gen});
      if (f.clears_at)
        effects_.emplace(*f.clears_at,
                         std::pair{FaultEffect{*f.clears_at, f.cluster, id, f.cause, false}, gen});
      ++injected_;
      ++by_cause_[f.cause];
      ++by_fix_[f.fix];
      ++by_effect_[std::string(health::to_string(f.effect))];
      ++by_host_[f.host];
    } else {
      ++absorbed_;
    }
    history_.push_back(f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<FaultEffect> FailureInjector::due_effects(Time now) {
  std::vector<FaultEffect> out;
  while (!effects_.empty() && effects_.begin()->first <= now) {
    auto [effect, gen] = std::move(effects_.begin()->second);
    effects_.erase(effects_.begin());
    if (generation_[effect.node] == gen) out.push_back(std::move(effect));
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
