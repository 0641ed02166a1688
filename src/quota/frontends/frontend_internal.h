// Shared helpers of the quota front ends (not part of the public interface): Kubernetes metadata
// reading, name rules, unknown-field warnings, and adding a node to a CompiledQuota so the
// per-node tables stay the graph's size. One entry point per front end.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/hash.h"
#include "core/ids.h"
#include "core/json.h"
#include "core/k8s_names.h"
#include "core/resources.h"
#include "core/result.h"
#include "quota/frontends/quota_objects.h"
#include "quota/quota_types.h"

namespace gf::frontend::detail {

// Appends "<path>: unknown field, ignored" for every key `reader` never read.
void note_unknown(const ObjectReader& reader, std::vector<std::string>& warnings);

std::string in_quotes(std::string_view s);  // "\"s\""

// Kubernetes object names: core/k8s_names.h (valid_dns_label, valid_dns_subdomain).
// AWS Batch names: 1-128 letters, digits, '-' and '_'.
bool valid_aws_name(std::string_view s);

// `n` characters of [a-z0-9] derived from `h`.
std::string base36(uint64_t h, size_t n);

// The common part of every Kubernetes document: apiVersion, kind, metadata. Reads `top`'s
// apiVersion/kind/metadata fields (so they count as known); metadata's unknown fields become
// warnings. `ns` is the given namespace ("" when absent).
struct K8sHeader {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string ns;
};
Result<K8sHeader> read_k8s_header(ObjectReader& top, std::vector<std::string>& warnings);

// Appends a node and grows the per-node tables (charged, flavors, idle) to match.
Result<quota::NodeId> add_node(CompiledQuota& out, quota::NodeSpec spec,
                               const std::bitset<kMaxResources>& charged);
std::bitset<kMaxResources> all_dims();

// "<Kind> <name>" for messages; a LocalQueue as "LocalQueue <ns>/<name>".
std::string object_label(const ObjectKey& key);

// ElasticQuotaTree (eqt_frontend.cpp).
Result<QuotaObject> parse_elastic_quota_tree(const Json& doc);
Status compile_elastic_quota_trees(const ObjectMap& objects, ResourceRegistry& registry,
                                   CompiledQuota& out);

// Kueue kinds (kueue_frontend.cpp); `kind` is one of the five Kueue kinds.
Result<QuotaObject> parse_kueue_object(const Json& doc, Kind kind);
Status compile_kueue(const ObjectMap& objects, ResourceRegistry& registry, CompiledQuota& out);

// AWS quota shares (quota_share_frontend.cpp). `path` prefixes field paths ("quotaShares[2]").
Result<QuotaObject> parse_service_environment_at(const Json& body, const std::string& path);
Result<QuotaObject> parse_scheduling_policy_at(const Json& body, const std::string& path);
Result<QuotaObject> parse_job_queue_at(const Json& body, const std::string& path);
Result<QuotaObject> parse_quota_share_at(const Json& body, const std::string& path);
Status compile_quota_shares(const ObjectMap& objects, ResourceRegistry& registry,
                            CompiledQuota& out);
// Apply-time AWS rules for `incoming` against the merged set (current + incoming).
Status check_quota_share_apply(const ObjectMap& merged, const std::vector<QuotaObject>& incoming);

}  // namespace gf::frontend::detail
