// PropagationPolicy parsing and selection (docs/dispatch.md). Selection follows Karmada's
// precedence: a selector that names the object beats one that matches its labels, which beats
// one that matches its kind only; equally specific policies are ordered by name.
#include "model/propagation_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "core/k8s_names.h"

namespace gf::workload {
namespace {

// Failover adds these to the time a job stopped running (+ tolerationSeconds, + the grace
// period) in int64 microseconds; a century keeps every sum representable.
constexpr int64_t kMaxSeconds = 3'153'600'000;

constexpr std::array<std::pair<PurgeMode, std::string_view>, 4> kPurgeModes{{
    {PurgeMode::kImmediately, "Immediately"},
    {PurgeMode::kDirectly, "Directly"},
    {PurgeMode::kGracefully, "Gracefully"},
    {PurgeMode::kNever, "Never"},
}};

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

void note_unknown(const ObjectReader& reader, std::vector<std::string>& warnings) {
  for (const std::string& f : reader.unknown_fields()) {
    warnings.push_back(f + ": unknown field, ignored");
  }
}

Status read_metadata(ObjectReader& top, PropagationPolicy& p) {
  const Json* meta = top.required_value("metadata");
  if (!top.ok()) return top.status();
  ObjectReader m(*meta, "metadata");
  p.name = m.required_string("name");
  if (m.ok() && !valid_dns_subdomain(p.name)) {
    m.fail("name", in_quotes(p.name) +
                       " is not a valid name (lowercase letters, digits, '-' and '.', starting "
                       "and ending with a letter or digit, at most 253 characters)");
  }
  p.ns = m.optional_string("namespace").value_or("default");
  if (m.ok() && !valid_dns_label(p.ns)) {
    m.fail("namespace", in_quotes(p.ns) + " is not a valid namespace name");
  }
  for (const char* known :
       {"labels", "annotations", "uid", "resourceVersion", "generation", "creationTimestamp",
        "deletionTimestamp", "managedFields", "finalizers", "ownerReferences", "generateName"}) {
    m.optional_value(known);
  }
  if (!m.ok()) return m.status();
  note_unknown(m, p.warnings);
  return ok_status();
}

Result<ResourceSelector> read_selector(const Json& value, const std::string& path,
                                       PropagationPolicy& p) {
  ObjectReader r(value, path);
  ResourceSelector s;
  s.api_version = r.required_string("apiVersion");
  s.kind = r.required_string("kind");
  s.name = r.optional_string("name").value_or("");
  s.ns = r.optional_string("namespace").value_or("");
  const Json* label_selector = r.optional_object("labelSelector");
  if (r.ok() && s.api_version.empty()) r.fail("apiVersion", "must not be empty");
  if (r.ok() && s.kind.empty()) r.fail("kind", "must not be empty");
  if (!r.ok()) return r.status();
  if (!s.ns.empty() && s.ns != p.ns) {
    p.warnings.push_back(r.field_path("namespace") + ": " + in_quotes(s.ns) +
                         " is not the policy's namespace " + in_quotes(p.ns) +
                         "; a PropagationPolicy selects only objects of its own namespace, so "
                         "this selector selects nothing");
  }
  if (label_selector) {
    ObjectReader ls(*label_selector, r.field_path("labelSelector"));
    const Json* match_labels = ls.optional_object("matchLabels");
    const Json* match_expressions = ls.optional_array("matchExpressions");
    if (ls.ok() && match_expressions && !match_expressions->empty()) {
      ls.fail("matchExpressions", "is not supported; select by name or matchLabels");
    }
    if (!ls.ok()) return ls.status();
    if (match_labels) {
      for (auto it = match_labels->begin(); it != match_labels->end(); ++it) {
        if (!it.value().is_string()) {
          return validation_error(path_join(ls.field_path("matchLabels"), it.key()) +
                                  ": expected string, got " + describe_json_value(it.value()));
        }
        s.match_labels.emplace(it.key(), it.value().get<std::string>());
      }
    }
    note_unknown(ls, p.warnings);
  }
  note_unknown(r, p.warnings);
  return s;
}

Status read_placement(ObjectReader& spec, PropagationPolicy& p) {
  const Json* placement = spec.optional_object("placement");
  if (!spec.ok()) return spec.status();
  if (!placement) return ok_status();
  ObjectReader pl(*placement, spec.field_path("placement"));
  if (const Json* affinity = pl.optional_object("clusterAffinity")) {
    ObjectReader a(*affinity, pl.field_path("clusterAffinity"));
    p.cluster_names = a.optional_string_list("clusterNames").value_or(std::vector<std::string>{});
    for (size_t i = 0; a.ok() && i < p.cluster_names.size(); ++i) {
      if (p.cluster_names[i].empty()) {
        a.fail_status(
            validation_error(path_index(a.field_path("clusterNames"), i) + ": must not be empty"));
      }
    }
    if (!a.ok()) return a.status();
    note_unknown(a, p.warnings);
  }
  if (const Json* rs = pl.optional_object("replicaScheduling")) {
    ObjectReader r(*rs, pl.field_path("replicaScheduling"));
    if (auto type = r.optional_string("replicaSchedulingType")) {
      if (*type != "Divided" && *type != "Duplicated") {
        r.fail("replicaSchedulingType",
               in_quotes(*type) +
                   " is not a replica scheduling type (expected Divided or "
                   "Duplicated)");
      }
      p.replica_scheduling_type = *type;
    }
    if (auto custom = r.optional_string("customSchedulingType")) {
      if (*custom != "Gang") {
        r.fail("customSchedulingType",
               in_quotes(*custom) + " is not supported (the only custom scheduling type is Gang)");
      }
      p.gang = true;
    }
    if (!r.ok()) return r.status();
    note_unknown(r, p.warnings);
  }
  if (!pl.ok()) return pl.status();
  note_unknown(pl, p.warnings);
  return ok_status();
}

Status read_failover(ObjectReader& spec, PropagationPolicy& p) {
  const Json* failover = spec.optional_object("failover");
  if (!spec.ok()) return spec.status();
  if (!failover) return ok_status();
  ObjectReader f(*failover, spec.field_path("failover"));
  const Json* application = f.optional_object("application");
  if (!f.ok()) return f.status();
  if (application) {
    ObjectReader a(*application, f.field_path("application"));
    if (const Json* dc = a.optional_object("decisionConditions")) {
      ObjectReader d(*dc, a.field_path("decisionConditions"));
      p.toleration_seconds = d.optional_int("tolerationSeconds");
      if (d.ok() && p.toleration_seconds &&
          (*p.toleration_seconds < 0 || *p.toleration_seconds > kMaxSeconds)) {
        d.fail("tolerationSeconds", fmt::format("must be between 0 and {} (100 years), got {}",
                                                kMaxSeconds, *p.toleration_seconds));
      }
      if (!d.ok()) return d.status();
      note_unknown(d, p.warnings);
    }
    if (auto mode = a.optional_string("purgeMode")) {
      if (auto m = parse_purge_mode(*mode)) {
        p.purge_mode = *m;
      } else {
        a.fail("purgeMode", in_quotes(*mode) +
                                " is not a purge mode (expected Immediately, Directly, Gracefully "
                                "or Never)");
      }
    }
    if (auto grace = a.optional_int("gracePeriodSeconds")) {
      if (*grace <= 0 || *grace > kMaxSeconds) {
        a.fail("gracePeriodSeconds",
               fmt::format("must be > 0 and at most {} (100 years), got {}", kMaxSeconds, *grace));
      }
      p.grace_period_seconds = *grace;
    }
    if (!a.ok()) return a.status();
    note_unknown(a, p.warnings);
  }
  note_unknown(f, p.warnings);
  return ok_status();
}

bool labels_match(const std::map<std::string, std::string>& want,
                  const std::map<std::string, std::string>& have) {
  return std::all_of(want.begin(), want.end(), [&](const auto& kv) {
    auto it = have.find(kv.first);
    return it != have.end() && it->second == kv.second;
  });
}

}  // namespace

std::string_view to_string(PurgeMode m) {
  for (const auto& [v, name] : kPurgeModes) {
    if (v == m) return name;
  }
  return "Immediately";
}

std::optional<PurgeMode> parse_purge_mode(std::string_view s) {
  if (s == "Graciously") return PurgeMode::kGracefully;  // Karmada before v1.12
  for (const auto& [v, name] : kPurgeModes) {
    if (name == s) return v;
  }
  return std::nullopt;
}

bool is_propagation_policy(std::string_view api_version, std::string_view kind) {
  return kind == kPropagationPolicyKind &&
         (api_version == kPropagationPolicyApiVersion || api_version == kKarmadaPolicyApiVersion);
}

Result<PropagationPolicy> parse_propagation_policy(const Json& doc) {
  if (!doc.is_object()) {
    return validation_error("document: expected a Kubernetes object, got " +
                            describe_json_value(doc));
  }
  PropagationPolicy p;
  p.doc = doc;
  ObjectReader top(doc, "");
  const std::string api_version = top.required_string("apiVersion");
  const std::string kind = top.required_string("kind");
  if (top.ok() && !is_propagation_policy(api_version, kind)) {
    top.fail("kind", api_version + " " + kind + " is not a PropagationPolicy (expected " +
                         std::string(kPropagationPolicyApiVersion) + " or " +
                         std::string(kKarmadaPolicyApiVersion) + " " +
                         std::string(kPropagationPolicyKind) + ")");
  }
  if (!top.ok()) return top.status();
  GF_RETURN_IF_ERROR(read_metadata(top, p));
  top.optional_value("status");  // server-owned; accepted and ignored

  const Json* spec_json = top.required_value("spec");
  if (!top.ok()) return top.status();
  ObjectReader spec(*spec_json, "spec");
  const Json* selectors = spec.optional_array("resourceSelectors");
  if (spec.ok() && (!selectors || selectors->empty())) {
    spec.fail("resourceSelectors", "is required: at least one selector (apiVersion and kind)");
  }
  if (!spec.ok()) return spec.status();
  for (size_t i = 0; i < selectors->size(); ++i) {
    GF_ASSIGN_OR_RETURN(
        ResourceSelector s,
        read_selector((*selectors)[i], path_index(spec.field_path("resourceSelectors"), i), p));
    p.selectors.push_back(std::move(s));
  }
  if (const Json* suspension = spec.optional_object("suspension")) {
    ObjectReader s(*suspension, spec.field_path("suspension"));
    p.suspend_scheduling = s.optional_bool("scheduling").value_or(false);
    if (!s.ok()) return s.status();
    note_unknown(s, p.warnings);
  }
  p.propagate_deps = spec.optional_bool("propagateDeps").value_or(false);
  if (!spec.ok()) return spec.status();
  GF_RETURN_IF_ERROR(read_placement(spec, p));
  GF_RETURN_IF_ERROR(read_failover(spec, p));
  note_unknown(spec, p.warnings);
  note_unknown(top, p.warnings);
  return p;
}

int PropagationPolicy::selection_rank(std::string_view api_version, std::string_view kind,
                                      std::string_view name, std::string_view object_ns,
                                      const std::map<std::string, std::string>& labels) const {
  if (object_ns != ns) return 0;
  int best = 0;
  for (const ResourceSelector& s : selectors) {
    if (s.api_version != api_version || s.kind != kind) continue;
    if (!s.ns.empty() && s.ns != object_ns) continue;
    if (!s.name.empty() && s.name != name) continue;
    if (!labels_match(s.match_labels, labels)) continue;
    const int rank = !s.name.empty() ? 3 : !s.match_labels.empty() ? 2 : 1;
    best = std::max(best, rank);
  }
  return best;
}

bool PropagationPolicy::selects(std::string_view api_version, std::string_view kind,
                                std::string_view name, std::string_view object_ns,
                                const std::map<std::string, std::string>& labels) const {
  return selection_rank(api_version, kind, name, object_ns, labels) > 0;
}

const PropagationPolicy* match_policy(const std::vector<const PropagationPolicy*>& policies,
                                      std::string_view api_version, std::string_view kind,
                                      std::string_view name, std::string_view ns,
                                      const std::map<std::string, std::string>& labels) {
  const PropagationPolicy* best = nullptr;
  int best_rank = 0;
  for (const PropagationPolicy* p : policies) {
    if (!p) continue;
    const int rank = p->selection_rank(api_version, kind, name, ns, labels);
    if (rank == 0) continue;
    if (!best || rank > best_rank || (rank == best_rank && p->name < best->name)) {
      best = p;
      best_rank = rank;
    }
  }
  return best;
}

}  // namespace gf::workload
