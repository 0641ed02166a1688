// Reading and validating Kueue's kinds (the supported subset, docs/quota-frontends.md). Fields of
// Kueue that gpufleet does not implement are refused with an error naming the field; fields Kueue
// does not have are kept with a warning.
#include "quota/frontends/kueue_decode.h"

#include <fmt/format.h>

#include <limits>
#include <set>

#include "quota/frontends/frontend_internal.h"

namespace gf::frontend::detail {
namespace {

constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
constexpr std::string_view kFlavorDomain = ".flavor.gpufleet.io";
constexpr size_t kMaxPrefix = 253;
constexpr size_t kMaxName = 63;

// Keeps `s` within `limit` characters: a longer value keeps its head and gets "-<8 hash chars>".
std::string shorten(std::string_view s, size_t limit) {
  if (s.size() <= limit) return std::string(s);
  return std::string(s.substr(0, limit - 9)) + "-" + base36(fnv1a(s), 8);
}

Status unsupported(const std::string& field, std::string_view what) {
  return validation_error(field + ": not supported by gpufleet (" + std::string(what) + ")");
}

// A value that is absent, null, or an empty object/array/string.
bool empty_value(const Json* v) {
  return v == nullptr || v->is_null() ||
         ((v->is_object() || v->is_array() || v->is_string()) && v->empty());
}

Result<int64_t> read_quantity(const Json& v, ResourceRegistry& registry, ResourceId id,
                              const std::string& field) {
  Result<int64_t> q = parse_quantity_json(v, registry.scale(id));
  if (!q.ok()) return q.status().with_prefix(field);
  return *q;
}

// One flavors[j].resources[k] entry.
Status read_resource(const Json& j, const std::string& field, const std::string& flavor,
                     const std::set<std::string, std::less<>>& covered, bool may_borrow,
                     std::string_view owner, ResourceRegistry& registry, ResourceGroups& out,
                     FlavorQuotas& fq, std::set<std::string, std::less<>>& seen,
                     std::vector<std::string>& warnings) {
  ObjectReader r(j, field);
  const std::string name = r.required_string("name");
  const Json* nominal = r.required_value("nominalQuota");
  const Json* borrowing = r.optional_value("borrowingLimit");
  const Json* lending = r.optional_value("lendingLimit");
  if (!r.ok()) return r.status();
  if (!covered.contains(name)) {
    return validation_error(r.field_path("name") + ": " + in_quotes(name) +
                            " is not in coveredResources");
  }
  if (!seen.insert(name).second) {
    return validation_error(r.field_path("name") + ": resource " + in_quotes(name) +
                            " is listed twice for this flavor");
  }
  Result<ResourceId> plain = registry.intern(name);
  if (!plain.ok()) return plain.status().with_prefix(r.field_path("name"));
  Result<ResourceId> dim = registry.intern(flavored_dim_name(flavor, name));
  if (!dim.ok()) {
    return dim.status().with_prefix(r.field_path("name") +
                                    ": cannot make the quota dimension of flavor " +
                                    in_quotes(flavor) + " and resource " + in_quotes(name));
  }
  quota::ResourceQuota q;
  q.resource = *dim;
  GF_ASSIGN_OR_RETURN(q.nominal,
                      read_quantity(*nominal, registry, *plain, r.field_path("nominalQuota")));
  for (auto [value, key] :
       {std::pair{borrowing, "borrowingLimit"}, std::pair{lending, "lendingLimit"}}) {
    if (!value) continue;
    if (!may_borrow) {
      return validation_error(r.field_path(key) + ": only allowed " + std::string(owner));
    }
    GF_ASSIGN_OR_RETURN(int64_t v, read_quantity(*value, registry, *plain, r.field_path(key)));
    (std::string_view(key) == "borrowingLimit" ? q.borrowing_limit : q.lending_limit) = v;
  }
  if (q.lending_limit && *q.lending_limit > q.nominal) {
    return validation_error(r.field_path("lendingLimit") + ": " +
                            format_quantity(*q.lending_limit, registry.scale(*plain)) +
                            " exceeds nominalQuota " +
                            format_quantity(q.nominal, registry.scale(*plain)));
  }
  note_unknown(r, warnings);
  out.quotas.push_back(q);
  fq.dims.emplace_back(*plain, *dim);
  return ok_status();
}

// spec.resourceGroups of a ClusterQueue or Cohort. `may_borrow`: limits are allowed (the object
// has a parent); `owner` completes "only allowed ..." otherwise.
Result<ResourceGroups> read_resource_groups(const Json* groups, const std::string& field,
                                            bool may_borrow, std::string_view owner,
                                            ResourceRegistry& registry,
                                            std::vector<std::string>& warnings) {
  ResourceGroups out;
  if (!groups) return out;
  if (!groups->is_array()) {
    return validation_error(field + ": expected array, got " + describe_json_value(*groups));
  }
  std::set<std::string, std::less<>> all_flavors, all_resources;
  for (size_t g = 0; g < groups->size(); ++g) {
    ObjectReader r((*groups)[g], path_index(field, g));
    auto covered_list = r.optional_string_list("coveredResources");
    const Json* flavors = r.optional_array("flavors");
    if (r.ok() && (!covered_list || covered_list->empty()))
      r.fail("coveredResources", "must list at least one resource");
    if (r.ok() && (!flavors || flavors->empty()))
      r.fail("flavors", "must list at least one flavor");
    if (!r.ok()) return r.status();
    std::set<std::string, std::less<>> covered;
    for (size_t i = 0; i < covered_list->size(); ++i) {
      const std::string& res = (*covered_list)[i];
      if (!covered.insert(res).second || !all_resources.insert(res).second) {
        return validation_error(path_index(r.field_path("coveredResources"), i) + ": resource " +
                                in_quotes(res) +
                                " is covered twice (a resource belongs to one "
                                "resource group)");
      }
    }
    for (size_t f = 0; f < flavors->size(); ++f) {
      ObjectReader fr((*flavors)[f], path_index(r.field_path("flavors"), f));
      FlavorQuotas fq;
      fq.field = fr.path();
      fq.name = fr.required_string("name");
      const Json* resources = fr.optional_array("resources");
      if (fr.ok() && !valid_dns_subdomain(fq.name))
        fr.fail("name", in_quotes(fq.name) + " is not a valid ResourceFlavor name");
      if (fr.ok() && !all_flavors.insert(fq.name).second) {
        fr.fail("name", "flavor " + in_quotes(fq.name) +
                            " is listed twice (a flavor belongs to one "
                            "resource group)");
      }
      if (fr.ok() && !resources) fr.fail("resources", "is required");
      if (!fr.ok()) return fr.status();
      std::set<std::string, std::less<>> seen;
      for (size_t k = 0; k < resources->size(); ++k) {
        GF_RETURN_IF_ERROR(read_resource((*resources)[k], path_index(fr.field_path("resources"), k),
                                         fq.name, covered, may_borrow, owner, registry, out, fq,
                                         seen, warnings));
      }
      for (const std::string& res : covered) {
        if (!seen.contains(res)) {
          return validation_error(
              fr.field_path("resources") + ": no quota for " + in_quotes(res) +
              " of coveredResources (every flavor lists every covered resource)");
        }
      }
      note_unknown(fr, warnings);
      out.flavors.push_back(std::move(fq));
    }
    note_unknown(r, warnings);
  }
  return out;
}

Result<int64_t> read_weight(ObjectReader& spec, std::vector<std::string>& warnings) {
  const Json* fs = spec.optional_object("fairSharing");
  if (!spec.ok()) return spec.status();
  if (!fs) return int64_t{1000};
  ObjectReader r(*fs, spec.field_path("fairSharing"));
  const Json* weight = r.optional_value("weight");
  if (!r.ok()) return r.status();
  note_unknown(r, warnings);
  if (!weight) return int64_t{1000};
  Result<int64_t> w = parse_quantity_json(*weight, QuantityScale::kMilli);
  if (!w.ok()) return w.status().with_prefix(r.field_path("weight"));
  return *w;
}

template <typename T>
Result<T> parse_enum(ObjectReader& r, std::string_view key,
                     std::initializer_list<std::pair<std::string_view, T>> values, T fallback) {
  auto v = r.optional_string(key);
  if (!v) return fallback;
  std::string allowed;
  for (const auto& [name, value] : values) {
    if (*v == name) return value;
    allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  }
  r.fail(key, "expected one of " + allowed + ", got " + in_quotes(*v));
  return r.status();
}

Result<quota::PreemptionPolicy> read_preemption(const Json& j, const std::string& field,
                                                std::vector<std::string>& warnings) {
  using namespace quota;
  ObjectReader r(j, field);
  PreemptionPolicy p;
  GF_ASSIGN_OR_RETURN(
      p.within_queue,
      parse_enum<WithinQueuePolicy>(
          r, "withinClusterQueue",
          {{"Never", WithinQueuePolicy::kNever},
           {"LowerPriority", WithinQueuePolicy::kLowerPriority},
           {"LowerOrNewerEqualPriority", WithinQueuePolicy::kLowerOrNewerEqualPriority}},
          WithinQueuePolicy::kNever));
  GF_ASSIGN_OR_RETURN(p.reclaim,
                      parse_enum<ReclaimPolicy>(r, "reclaimWithinCohort",
                                                {{"Never", ReclaimPolicy::kNever},
                                                 {"LowerPriority", ReclaimPolicy::kLowerPriority},
                                                 {"Any", ReclaimPolicy::kAny}},
                                                ReclaimPolicy::kNever));
  if (const Json* bwc = r.optional_object("borrowWithinCohort")) {
    ObjectReader b(*bwc, r.field_path("borrowWithinCohort"));
    GF_ASSIGN_OR_RETURN(p.borrow_within_cohort,
                        parse_enum<BorrowWithinCohortPolicy>(
                            b, "policy",
                            {{"Never", BorrowWithinCohortPolicy::kNever},
                             {"LowerPriority", BorrowWithinCohortPolicy::kLowerPriority}},
                            BorrowWithinCohortPolicy::kNever));
    if (auto t = b.optional_int("maxPriorityThreshold")) {
      if (*t < std::numeric_limits<int32_t>::min() || *t > std::numeric_limits<int32_t>::max()) {
        b.fail("maxPriorityThreshold", "must fit in a 32-bit integer");
      }
      p.max_priority_threshold = static_cast<int32_t>(*t);
    }
    if (!b.ok()) return b.status();
    if (p.borrow_within_cohort != BorrowWithinCohortPolicy::kNever &&
        p.reclaim == ReclaimPolicy::kNever) {
      return validation_error(b.field_path("policy") +
                              ": needs reclaimWithinCohort other than Never (as in Kueue)");
    }
    note_unknown(b, warnings);
  }
  if (!r.ok()) return r.status();
  note_unknown(r, warnings);
  return p;
}

// `namespaceSelector`: absent or an empty selector (all namespaces) only.
Status check_namespace_selector(const Json* sel, const std::string& field) {
  if (sel == nullptr || sel->is_null()) return ok_status();
  if (!sel->is_object())
    return validation_error(field + ": expected object, got " + describe_json_value(*sel));
  for (auto it = sel->begin(); it != sel->end(); ++it) {
    if ((it.key() == "matchLabels" || it.key() == "matchExpressions") && empty_value(&it.value()))
      continue;
    return unsupported(path_join(field, it.key()),
                       "only an empty namespaceSelector {}, matching every namespace, is accepted");
  }
  return ok_status();
}

Status check_flavor_fungibility(const Json* ff, const std::string& field) {
  if (empty_value(ff)) return ok_status();
  if (!ff->is_object())
    return validation_error(field + ": expected object, got " + describe_json_value(*ff));
  for (auto it = ff->begin(); it != ff->end(); ++it) {
    const std::string v = it.value().is_string() ? it.value().get<std::string>() : "";
    const bool dflt = (it.key() == "whenCanBorrow" && (v == "Borrow" || v == "MayStopSearch")) ||
                      (it.key() == "whenCanPreempt" && v == "TryNextFlavor");
    if (!dflt) {
      return unsupported(path_join(field, it.key()),
                         "only the defaults whenCanBorrow: Borrow and whenCanPreempt: "
                         "TryNextFlavor are supported");
    }
  }
  return ok_status();
}

}  // namespace

std::string flavored_dim_name(std::string_view flavor, std::string_view resource) {
  std::string prefix =
      shorten(flavor, kMaxPrefix - kFlavorDomain.size()) + std::string(kFlavorDomain);
  std::string name(resource);
  for (char& c : name) {
    if (c == '/') c = '.';
  }
  return prefix + "/" + shorten(name, kMaxName);
}

Result<ResourceFlavorSpec> decode_resource_flavor(const Json& doc, std::vector<std::string>& w) {
  ObjectReader top(doc, "");
  GF_ASSIGN_OR_RETURN(K8sHeader h, read_k8s_header(top, w));
  ResourceFlavorSpec out;
  out.name = h.name;
  const Json* spec = top.optional_object("spec");
  if (!top.ok()) return top.status();
  note_unknown(top, w);
  if (!spec) return out;
  ObjectReader s(*spec, "spec");
  if (const Json* labels = s.optional_object("nodeLabels")) {
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      const std::string field = path_join("spec.nodeLabels", it.key());
      if (it.key() != kInstanceTypeLabel) {
        return unsupported(field,
                           "the only supported node label is " + std::string(kInstanceTypeLabel));
      }
      if (!it.value().is_string() || it.value().get<std::string>().empty()) {
        return validation_error(field + ": expected an instance type name, got " +
                                describe_json_value(it.value()));
      }
      out.instance_type = it.value().get<std::string>();
    }
  }
  for (const char* key : {"nodeTaints", "tolerations", "topologyName"}) {
    if (!empty_value(s.optional_value(key))) {
      return unsupported(s.field_path(key), "flavors select nodes by instance type only");
    }
  }
  if (!s.ok()) return s.status();
  note_unknown(s, w);
  return out;
}

Result<CohortSpec> decode_cohort(const Json& doc, ResourceRegistry& registry,
                                 std::vector<std::string>& w) {
  ObjectReader top(doc, "");
  GF_ASSIGN_OR_RETURN(K8sHeader h, read_k8s_header(top, w));
  CohortSpec out;
  out.name = h.name;
  const Json* spec = top.optional_object("spec");
  if (!top.ok()) return top.status();
  note_unknown(top, w);
  if (!spec) return out;
  ObjectReader s(*spec, "spec");
  out.parent = s.optional_string("parentName").value_or("");
  if (s.ok() && !out.parent.empty() && !valid_dns_subdomain(out.parent)) {
    s.fail("parentName", in_quotes(out.parent) + " is not a valid Cohort name");
  }
  if (s.ok() && out.parent == out.name) s.fail("parentName", "a Cohort cannot be its own parent");
  const Json* groups = s.optional_value("resourceGroups");
  GF_ASSIGN_OR_RETURN(out.weight_milli, read_weight(s, w));
  if (!s.ok()) return s.status();
  GF_ASSIGN_OR_RETURN(out.groups,
                      read_resource_groups(groups, "spec.resourceGroups", !out.parent.empty(),
                                           "for a Cohort with spec.parentName", registry, w));
  note_unknown(s, w);
  return out;
}

Result<ClusterQueueSpec> decode_cluster_queue(const Json& doc, ResourceRegistry& registry,
                                              std::vector<std::string>& w) {
  ObjectReader top(doc, "");
  GF_ASSIGN_OR_RETURN(K8sHeader h, read_k8s_header(top, w));
  ClusterQueueSpec out;
  out.name = h.name;
  const Json* spec = top.required_value("spec");
  if (!top.ok()) return top.status();
  note_unknown(top, w);
  ObjectReader s(*spec, "spec");
  const auto cohort = s.optional_string("cohort");
  const auto cohort_name = s.optional_string("cohortName");
  if (cohort && cohort_name && *cohort != *cohort_name) {
    s.fail("cohortName", "differs from spec.cohort (" + in_quotes(*cohort) + "); give one of them");
  }
  out.cohort = cohort_name.value_or(cohort.value_or(""));
  if (s.ok() && !out.cohort.empty() && !valid_dns_subdomain(out.cohort)) {
    s.fail(cohort_name ? "cohortName" : "cohort",
           in_quotes(out.cohort) + " is not a valid Cohort name");
  }
  s.fail_status(
      check_namespace_selector(s.optional_value("namespaceSelector"), "spec.namespaceSelector"));
  s.fail_status(
      check_flavor_fungibility(s.optional_value("flavorFungibility"), "spec.flavorFungibility"));
  if (auto stop = s.optional_string("stopPolicy"); stop && *stop != "None") {
    s.fail_status(
        unsupported("spec.stopPolicy", "delete the ClusterQueue or lower its quota instead"));
  }
  for (const char* key : {"admissionChecks", "admissionChecksStrategy", "admissionScope"}) {
    if (!empty_value(s.optional_value(key))) {
      s.fail_status(unsupported(s.field_path(key), "admission checks are not implemented"));
    }
  }
  GF_ASSIGN_OR_RETURN(out.queueing,
                      parse_enum<quota::QueueingStrategy>(
                          s, "queueingStrategy",
                          {{"BestEffortFIFO", quota::QueueingStrategy::kBestEffortFifo},
                           {"StrictFIFO", quota::QueueingStrategy::kStrictFifo}},
                          quota::QueueingStrategy::kBestEffortFifo));
  const Json* preemption = s.optional_object("preemption");
  const Json* groups = s.optional_value("resourceGroups");
  GF_ASSIGN_OR_RETURN(out.weight_milli, read_weight(s, w));
  if (!s.ok()) return s.status();
  if (preemption) {
    GF_ASSIGN_OR_RETURN(out.preemption, read_preemption(*preemption, "spec.preemption", w));
  }
  GF_ASSIGN_OR_RETURN(out.groups,
                      read_resource_groups(groups, "spec.resourceGroups", !out.cohort.empty(),
                                           "for a ClusterQueue in a cohort", registry, w));
  note_unknown(s, w);
  return out;
}

Result<LocalQueueSpec> decode_local_queue(const Json& doc, std::vector<std::string>& w) {
  ObjectReader top(doc, "");
  GF_ASSIGN_OR_RETURN(K8sHeader h, read_k8s_header(top, w));
  LocalQueueSpec out;
  out.name = h.name;
  out.ns = h.ns.empty() ? "default" : h.ns;
  const Json* spec = top.required_value("spec");
  if (!top.ok()) return top.status();
  note_unknown(top, w);
  ObjectReader s(*spec, "spec");
  out.cluster_queue = s.required_string("clusterQueue");
  if (s.ok() && !valid_dns_subdomain(out.cluster_queue)) {
    s.fail("clusterQueue", in_quotes(out.cluster_queue) + " is not a valid ClusterQueue name");
  }
  if (auto stop = s.optional_string("stopPolicy"); stop && *stop != "None") {
    s.fail_status(unsupported("spec.stopPolicy", "delete the LocalQueue instead"));
  }
  if (!s.ok()) return s.status();
  note_unknown(s, w);
  return out;
}

Result<PriorityClassSpec> decode_priority_class(const Json& doc, std::vector<std::string>& w) {
  ObjectReader top(doc, "");
  GF_ASSIGN_OR_RETURN(K8sHeader h, read_k8s_header(top, w));
  PriorityClassSpec out;
  out.name = h.name;
  const int64_t value = top.required_int("value");
  top.optional_string("description");
  if (top.ok() && (value < std::numeric_limits<int32_t>::min() ||
                   value > std::numeric_limits<int32_t>::max())) {
    top.fail("value", fmt::format("must fit in a 32-bit integer, got {}", value));
  }
  if (!top.ok()) return top.status();
  note_unknown(top, w);
  out.value = static_cast<int32_t>(value);
  return out;
}

}  // namespace gf::frontend::detail
