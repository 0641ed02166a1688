// Quota objects as the state keeps them (docs/quota.md, docs/quota-frontends.md): the ten kinds of
// the three front ends (ElasticQuotaTree; Kueue's ResourceFlavor, Cohort, ClusterQueue, LocalQueue,
// WorkloadPriorityClass; AWS Batch's ServiceEnvironment, SchedulingPolicy, JobQueue, QuotaShare),
// their names and one validated object. Parsing and compiling them is the front ends' work
// (frontend/quota_objects.h).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"

namespace gf::frontend {

enum class Kind : uint8_t {
  kElasticQuotaTree,
  kResourceFlavor,
  kCohort,
  kClusterQueue,
  kLocalQueue,
  kWorkloadPriorityClass,
  kServiceEnvironment,
  kSchedulingPolicy,
  kJobQueue,
  kQuotaShare,
};

// "ElasticQuotaTree", "ClusterQueue", "QuotaShare", ...
std::string_view kind_name(Kind kind);
// "elasticquotatrees", "clusterqueues", "service-environments", "quota-shares", ...
std::string_view kind_plural(Kind kind);
// The plural, the lowercase singular ("clusterqueue", "quotashare") or, for the AWS kinds, the
// hyphenated singular ("quota-share").
std::optional<Kind> kind_from_plural(std::string_view plural);
// The kind of its name ("ClusterQueue"), as kind_name writes it.
std::optional<Kind> kind_from_name(std::string_view name);
// True for ElasticQuotaTree (always kube-system) and LocalQueue.
bool namespaced(Kind kind);

struct ObjectKey {
  Kind kind;
  std::string ns;  // empty for cluster-scoped kinds
  std::string name;
  auto operator<=>(const ObjectKey&) const = default;
};

// One validated object. `doc` is the canonical stored form: for Kubernetes kinds the whole
// document (apiVersion, kind, metadata{name,namespace,labels}, spec) as given (unknown fields
// kept; a LocalQueue's absent namespace is filled in); for AWS kinds the request body with
// defaults filled (e.g. inSharePreemption "DISABLED", idleResourceAssignmentStrategy "FIFO",
// jobQueue state "ENABLED").
struct QuotaObject {
  ObjectKey key;
  Json doc;
  std::vector<std::string> warnings;
};
using ObjectMap = std::map<ObjectKey, QuotaObject>;

}  // namespace gf::frontend
