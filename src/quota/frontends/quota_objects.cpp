// Kinds, shared helpers, dispatch of Kubernetes documents, and the whole-set compile/check_apply.
#include "quota/frontends/quota_objects.h"

#include <algorithm>
#include <array>
#include <utility>

#include "quota/frontends/frontend_internal.h"

namespace gf::frontend {

namespace {

constexpr std::string_view kEqtApiVersion = "scheduling.sigs.k8s.io/v1beta1";
constexpr std::string_view kKueueGroup = "kueue.x-k8s.io/";

std::optional<Kind> kueue_kind(std::string_view kind) {
  for (Kind k : {Kind::kResourceFlavor, Kind::kCohort, Kind::kClusterQueue, Kind::kLocalQueue,
                 Kind::kWorkloadPriorityClass}) {
    if (kind_name(k) == kind) return k;
  }
  return std::nullopt;
}

}  // namespace

bool is_k8s_quota_kind(std::string_view api_version, std::string_view kind) {
  if (kind == "ElasticQuotaTree") return api_version == kEqtApiVersion;
  if (!kueue_kind(kind) || !api_version.starts_with(kKueueGroup)) return false;
  const std::string_view version = api_version.substr(kKueueGroup.size());
  return version == "v1beta1" || version == "v1beta2" ||
         (kind == "Cohort" && version == "v1alpha1");
}

Result<QuotaObject> parse_k8s_object(const Json& doc) {
  if (!doc.is_object()) {
    return validation_error("document: expected a Kubernetes object, got " +
                            describe_json_value(doc));
  }
  const auto av = doc.find("apiVersion");
  const auto k = doc.find("kind");
  if (av == doc.end() || !av->is_string()) return validation_error("apiVersion: is required");
  if (k == doc.end() || !k->is_string()) return validation_error("kind: is required");
  const std::string api_version = av->get<std::string>();
  const std::string kind = k->get<std::string>();
  if (!is_k8s_quota_kind(api_version, kind)) {
    return validation_error("kind: " + api_version + " " + kind +
                            " is not a quota kind (expected " + std::string(kEqtApiVersion) +
                            " ElasticQuotaTree or kueue.x-k8s.io/v1beta1 ResourceFlavor, Cohort, "
                            "ClusterQueue, LocalQueue, WorkloadPriorityClass)");
  }
  if (kind == "ElasticQuotaTree") return detail::parse_elastic_quota_tree(doc);
  return detail::parse_kueue_object(doc, *kueue_kind(kind));
}

Result<QuotaObject> parse_service_environment(const Json& body) {
  return detail::parse_service_environment_at(body, "");
}
Result<QuotaObject> parse_scheduling_policy(const Json& body) {
  return detail::parse_scheduling_policy_at(body, "");
}
Result<QuotaObject> parse_job_queue(const Json& body) {
  return detail::parse_job_queue_at(body, "");
}
Result<QuotaObject> parse_quota_share(const Json& body) {
  return detail::parse_quota_share_at(body, "");
}

Result<CompiledQuota> compile(const ObjectMap& objects, ResourceRegistry& registry) {
  CompiledQuota out;
  for (const auto& [key, obj] : objects) {
    for (const std::string& w : obj.warnings) {
      out.warnings.push_back(detail::object_label(key) + ": " + w);
    }
  }
  GF_RETURN_IF_ERROR(detail::compile_elastic_quota_trees(objects, registry, out));
  GF_RETURN_IF_ERROR(detail::compile_kueue(objects, registry, out));
  GF_RETURN_IF_ERROR(detail::compile_quota_shares(objects, registry, out));
  return out;
}

Status check_apply(const ObjectMap& current, const std::vector<QuotaObject>& incoming,
                   ResourceRegistry& registry) {
  ObjectMap merged = current;
  for (const QuotaObject& obj : incoming) merged.insert_or_assign(obj.key, obj);
  for (const QuotaObject& obj : incoming) {
    if (obj.key.kind != Kind::kElasticQuotaTree) continue;
    for (const auto& [key, existing] : current) {
      if (key.kind == Kind::kElasticQuotaTree && key != obj.key) {
        return validation_error("ElasticQuotaTree " + obj.key.name +
                                ": metadata.name: only one ElasticQuotaTree is supported and " +
                                detail::in_quotes(key.name) +
                                " already exists; update that one or delete it first");
      }
    }
  }
  GF_RETURN_IF_ERROR(detail::check_quota_share_apply(merged, incoming));
  Result<CompiledQuota> compiled = compile(merged, registry);
  return compiled.status();
}

namespace detail {

void note_unknown(const ObjectReader& reader, std::vector<std::string>& warnings) {
  for (const std::string& f : reader.unknown_fields()) {
    warnings.push_back(f + ": unknown field, ignored");
  }
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

bool valid_aws_name(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

std::string base36(uint64_t h, size_t n) {
  static constexpr std::string_view kDigits = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[h % 36];
    h /= 36;
  }
  return out;
}

Result<K8sHeader> read_k8s_header(ObjectReader& top, std::vector<std::string>& warnings) {
  K8sHeader h;
  h.api_version = top.required_string("apiVersion");
  h.kind = top.required_string("kind");
  const Json* meta = top.required_value("metadata");
  if (!top.ok()) return top.status();
  ObjectReader m(*meta, "metadata");
  h.name = m.required_string("name");
  if (m.ok() && !valid_dns_subdomain(h.name)) {
    m.fail("name", in_quotes(h.name) +
                       " is not a valid name (lowercase letters, digits, '-' and '.', starting "
                       "and ending with a letter or digit, at most 253 characters)");
  }
  h.ns = m.optional_string("namespace").value_or("");
  if (m.ok() && !h.ns.empty() && !valid_dns_label(h.ns)) {
    m.fail("namespace", in_quotes(h.ns) + " is not a valid namespace name");
  }
  // Server-set and bookkeeping fields that objects read back from a cluster carry.
  for (const char* known :
       {"labels", "annotations", "uid", "resourceVersion", "generation", "creationTimestamp",
        "deletionTimestamp", "managedFields", "finalizers", "ownerReferences", "generateName"}) {
    m.optional_value(known);
  }
  if (!m.ok()) return m.status();
  note_unknown(m, warnings);
  top.optional_value("status");  // server-owned; accepted and ignored
  return h;
}

std::bitset<kMaxResources> all_dims() { return std::bitset<kMaxResources>().set(); }

Result<quota::NodeId> add_node(CompiledQuota& out, quota::NodeSpec spec,
                               const std::bitset<kMaxResources>& charged) {
  GF_ASSIGN_OR_RETURN(quota::NodeId id, out.graph.add_node(std::move(spec)));
  out.charged.resize(out.graph.size());
  out.flavors.resize(out.graph.size());
  out.idle.resize(out.graph.size(), IdleStrategy::kFifo);
  out.charged[id] = charged;
  return id;
}

std::string object_label(const ObjectKey& key) {
  std::string out = std::string(kind_name(key.kind)) + " ";
  if (key.kind == Kind::kLocalQueue) out += key.ns + "/";
  return out + key.name;
}

}  // namespace detail
}  // namespace gf::frontend
