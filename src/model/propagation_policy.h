// PropagationPolicy (policy.one.alibabacloud.com/v1alpha1, Karmada's policy.karmada.io/v1alpha1;
// docs/workloads.md, docs/dispatch.md; examples/propagationpolicy-gang*.yaml): which objects a
// policy selects, whether they wait for quota (suspension.scheduling), gang placement, the allowed
// member clusters, and the failover rule (tolerationSeconds, purgeMode, gracePeriodSeconds). Errors
// are ValidationExceptions whose message starts with the field path; unknown fields are kept in
// `doc` and reported as warnings. Accepted subset: docs/workloads.md. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace gf::workload {

inline constexpr std::string_view kPropagationPolicyKind = "PropagationPolicy";
inline constexpr std::string_view kPropagationPolicyApiVersion =
    "policy.one.alibabacloud.com/v1alpha1";
inline constexpr std::string_view kKarmadaPolicyApiVersion = "policy.karmada.io/v1alpha1";

// Failover purge modes (docs/dispatch.md). Immediately and Karmada's Directly purge at once;
// Gracefully (also spelled Graciously, Karmada's older name) after the new placement runs, at
// most gracePeriodSeconds; Never leaves the job where it is.
enum class PurgeMode : uint8_t { kImmediately, kDirectly, kGracefully, kNever };
std::string_view to_string(PurgeMode m);
std::optional<PurgeMode> parse_purge_mode(std::string_view s);

struct ResourceSelector {
  std::string api_version;
  std::string kind;
  std::string name;                                 // empty = any
  std::string ns;                                   // empty = the policy's namespace
  std::map<std::string, std::string> match_labels;  // labelSelector.matchLabels
  bool operator==(const ResourceSelector&) const = default;
};

struct PropagationPolicy {
  std::string name;
  std::string ns;  // "default" when absent
  std::vector<ResourceSelector> selectors;
  bool suspend_scheduling = false;                  // spec.suspension.scheduling
  bool propagate_deps = false;                      // spec.propagateDeps
  std::string replica_scheduling_type = "Divided";  // Divided | Duplicated
  bool gang = false;                       // placement.replicaScheduling.customSchedulingType: Gang
  std::vector<std::string> cluster_names;  // placement.clusterAffinity.clusterNames; empty = any
  // spec.failover.application.
  std::optional<int64_t> toleration_seconds;  // decisionConditions.tolerationSeconds
  PurgeMode purge_mode = PurgeMode::kImmediately;
  int64_t grace_period_seconds = 600;
  Json doc;                           // the document as given
  std::vector<std::string> warnings;  // "<path>: unknown field, ignored", ...

  // Whether this policy selects the object: some selector has the object's apiVersion and kind,
  // its name if it names one, and all its matchLabels in `labels`; the object lives in the
  // policy's own namespace (and in the selector's, if it names one).
  bool selects(std::string_view api_version, std::string_view kind, std::string_view name,
               std::string_view ns, const std::map<std::string, std::string>& labels) const;
  // How specifically the policy selects the object: 3 by name, 2 by labels, 1 by kind only, 0 not
  // at all (the best of its selectors that select it).
  int selection_rank(std::string_view api_version, std::string_view kind, std::string_view name,
                     std::string_view ns, const std::map<std::string, std::string>& labels) const;
};

// True for PropagationPolicy of policy.one.alibabacloud.com/v1alpha1 or policy.karmada.io/v1alpha1.
bool is_propagation_policy(std::string_view api_version, std::string_view kind);
Result<PropagationPolicy> parse_propagation_policy(const Json& doc);

// Among `policies` (any order), the one that selects the object: the most specific first (a
// selector naming the object beats one matching its labels, which beats one matching its kind
// only), ties broken by policy name; nullptr when none selects it.
const PropagationPolicy* match_policy(const std::vector<const PropagationPolicy*>& policies,
                                      std::string_view api_version, std::string_view kind,
                                      std::string_view name, std::string_view ns,
                                      const std::map<std::string, std::string>& labels);

}  // namespace gf::workload
