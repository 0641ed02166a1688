#include "model/quota_objects.h"

#include <array>

namespace gf::frontend {
namespace {

struct KindInfo {
  Kind kind;
  std::string_view name;
  std::string_view plural;
  std::string_view singular;  // lowercase singular accepted by kind_from_plural
  std::string_view alias;     // extra spelling (hyphenated AWS singular), may be empty
};

constexpr std::array<KindInfo, 10> kKinds = {{
    {Kind::kElasticQuotaTree, "ElasticQuotaTree", "elasticquotatrees", "elasticquotatree", ""},
    {Kind::kResourceFlavor, "ResourceFlavor", "resourceflavors", "resourceflavor", ""},
    {Kind::kCohort, "Cohort", "cohorts", "cohort", ""},
    {Kind::kClusterQueue, "ClusterQueue", "clusterqueues", "clusterqueue", ""},
    {Kind::kLocalQueue, "LocalQueue", "localqueues", "localqueue", ""},
    {Kind::kWorkloadPriorityClass, "WorkloadPriorityClass", "workloadpriorityclasses",
     "workloadpriorityclass", ""},
    {Kind::kServiceEnvironment, "ServiceEnvironment", "service-environments", "serviceenvironment",
     "service-environment"},
    {Kind::kSchedulingPolicy, "SchedulingPolicy", "scheduling-policies", "schedulingpolicy",
     "scheduling-policy"},
    {Kind::kJobQueue, "JobQueue", "job-queues", "jobqueue", "job-queue"},
    {Kind::kQuotaShare, "QuotaShare", "quota-shares", "quotashare", "quota-share"},
}};

const KindInfo& info(Kind kind) { return kKinds[static_cast<size_t>(kind)]; }

}  // namespace

std::string_view kind_name(Kind kind) { return info(kind).name; }
std::string_view kind_plural(Kind kind) { return info(kind).plural; }

std::optional<Kind> kind_from_name(std::string_view name) {
  for (const KindInfo& k : kKinds) {
    if (name == k.name) return k.kind;
  }
  return std::nullopt;
}

std::optional<Kind> kind_from_plural(std::string_view plural) {
  for (const KindInfo& k : kKinds) {
    if (plural == k.plural || plural == k.singular || (!k.alias.empty() && plural == k.alias)) {
      return k.kind;
    }
  }
  return std::nullopt;
}

bool namespaced(Kind kind) { return kind == Kind::kElasticQuotaTree || kind == Kind::kLocalQueue; }

}  // namespace gf::frontend
