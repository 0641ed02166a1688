#include "api/k8s/registry.h"

namespace gf::k8s {
namespace {

Column name_column() {
  return Column{"Name", "string",
                "Name must be unique within a namespace. More info: "
                "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
                0, "name"};
}
Column age_column() {
  return Column{"Age", "date", "The time since the object was created (the server's clock).", 0};
}

// Core v1: read views of the fleet.
void core_kinds(std::vector<KindInfo>& out) {
  out.push_back(KindInfo{
      .group = "",
      .version = "v1",
      .kind = "Namespace",
      .plural = "namespaces",
      .singular = "namespace",
      .namespaced = false,
      .short_names = {"ns"},
      .source = Source::kNamespaces,
      .columns = {name_column(),
                  {"Status", "string", "The phase of the namespace (always Active here).", 0},
                  age_column()}});
  out.push_back(KindInfo{
      .group = "",
      .version = "v1",
      .kind = "Node",
      .plural = "nodes",
      .singular = "node",
      .namespaced = false,
      .short_names = {"no"},
      .source = Source::kNodes,
      .columns = {
          name_column(),
          {"Status", "string", "Ready, NotReady or Unknown; SchedulingDisabled when cordoned.", 0},
          {"Roles", "string", "The node's role in its cluster (controller, worker).", 0},
          age_column(),
          {"Version", "string", "The gpufleet version that serves the node.", 0},
          {"Internal-IP", "string", "The node's address.", 1},
          {"Instance-Type", "string", "The instance type.", 1},
          {"Cluster", "string", "The gpufleet cluster the node belongs to.", 1},
          {"GPUs", "integer", "The node's GPUs.", 1}}});
  out.push_back(
      KindInfo{.group = "",
               .version = "v1",
               .kind = "Pod",
               .plural = "pods",
               .singular = "pod",
               .log = true,
               .short_names = {"po"},
               .objects = "pods",
               .columns = {name_column(),
                           {"Ready", "string", "Ready containers of the pod's containers.", 0},
                           {"Status", "string", "The pod's phase.", 0},
                           {"Restarts", "string", "How often the pod's containers restarted.", 0},
                           age_column(),
                           {"IP", "string", "The pod's address (none here).", 1},
                           {"Node", "string", "The node the pod runs on.", 1},
                           {"Cluster", "string", "The member cluster of the pod's copy.", 1}}});
}

// The workloads and their events.
void workload_kinds(std::vector<KindInfo>& out) {
  out.push_back(KindInfo{.group = "",
                         .version = "v1",
                         .kind = "Event",
                         .plural = "events",
                         .singular = "event",
                         .short_names = {"ev"},
                         .source = Source::kEvents,
                         .columns = {{"Last Seen", "string", "When the event last happened.", 0},
                                     {"Type", "string", "Normal or Warning.", 0},
                                     {"Reason", "string", "Why.", 0},
                                     {"Object", "string", "What it is about.", 0},
                                     {"Message", "string", "What happened.", 0}}});
  out.push_back(KindInfo{
      .group = "kubeflow.org",
      .version = "v1",
      .kind = "PyTorchJob",
      .plural = "pytorchjobs",
      .singular = "pytorchjob",
      .writable = true,
      .status = true,
      .objects = "pytorchjobs",
      .columns = {
          name_column(),
          {"State", "string", "The job's last condition (Created, Running, Succeeded…).", 0},
          age_column(),
          {"Queue", "string", "The LocalQueue or quota node the job waits in.", 1},
          {"Cluster", "string", "The member cluster its gang runs on.", 1},
          {"GPUs", "integer", "The GPUs of the whole gang.", 1}}});
  for (const char* group : {"policy.one.alibabacloud.com", "policy.karmada.io"}) {
    out.push_back(KindInfo{.group = group,
                           .version = "v1alpha1",
                           .kind = "PropagationPolicy",
                           .plural = "propagationpolicies",
                           .singular = "propagationpolicy",
                           .writable = true,
                           .objects = "propagationpolicies",
                           .columns = {name_column(), age_column()}});
  }
}

// The quota front ends: ElasticQuotaTree with Kube Queue's queues, and Kueue's kinds.
void quota_kinds(std::vector<KindInfo>& out) {
  out.push_back(KindInfo{.group = "scheduling.sigs.k8s.io",
                         .version = "v1beta1",
                         .kind = "ElasticQuotaTree",
                         .plural = "elasticquotatrees",
                         .singular = "elasticquotatree",
                         .writable = true,
                         .objects = "elasticquotatrees",
                         .columns = {name_column(), age_column()}});
  out.push_back(KindInfo{
      .group = "scheduling.x-k8s.io",
      .version = "v1alpha1",
      .kind = "Queue",
      .plural = "queues",
      .singular = "queue",
      .objects = "queues",
      .columns = {name_column(),
                  age_column(),
                  {"Quota-Node", "string", "The ElasticQuotaTree node the queue stands for.", 1},
                  {"Admitted", "integer", "Jobs admitted from the queue.", 1},
                  {"Pending", "integer", "Jobs waiting in the queue.", 1}}});
}

void kueue_kinds(std::vector<KindInfo>& out) {
  struct Kueue {
    const char* kind;
    const char* plural;
    const char* singular;
    bool namespaced;
    std::vector<std::string> short_names;
  };
  for (const Kueue& k : std::vector<Kueue>{
           {"ResourceFlavor",
            "resourceflavors",
            "resourceflavor",
            false,
            {"flavor", "flavors", "rf"}},
           {"Cohort", "cohorts", "cohort", false, {}},
           {"ClusterQueue", "clusterqueues", "clusterqueue", false, {"cq"}},
           {"LocalQueue", "localqueues", "localqueue", true, {"queue", "queues", "lq"}},
           {"WorkloadPriorityClass",
            "workloadpriorityclasses",
            "workloadpriorityclass",
            false,
            {}}}) {
    KindInfo info{.group = "kueue.x-k8s.io",
                  .version = "v1beta1",
                  .kind = k.kind,
                  .plural = k.plural,
                  .singular = k.singular,
                  .namespaced = k.namespaced,
                  .writable = true,
                  .short_names = k.short_names,
                  .objects = k.plural,
                  .columns = {name_column(), age_column()}};
    if (std::string_view(k.kind) == "ClusterQueue") {
      info.columns = {name_column(),
                      {"Cohort", "string", "The cohort the ClusterQueue borrows in.", 0},
                      {"Pending Workloads", "integer", "Jobs waiting.", 0},
                      {"Admitted Workloads", "integer", "Jobs admitted.", 0},
                      age_column()};
    } else if (std::string_view(k.kind) == "LocalQueue") {
      info.columns = {name_column(),
                      {"ClusterQueue", "string", "The ClusterQueue it feeds.", 0},
                      {"Pending Workloads", "integer", "Jobs waiting.", 0},
                      {"Admitted Workloads", "integer", "Jobs admitted.", 0},
                      age_column()};
    }
    out.push_back(std::move(info));
  }
}

std::vector<KindInfo> build() {
  std::vector<KindInfo> out;
  core_kinds(out);
  workload_kinds(out);
  quota_kinds(out);
  kueue_kinds(out);
  return out;
}

}  // namespace

std::vector<std::string> KindInfo::verbs() const {
  if (writable) return {"create", "delete", "get", "list", "patch", "update", "watch"};
  return {"get", "list", "watch"};
}

const std::vector<KindInfo>& kinds() {
  static const std::vector<KindInfo> all = build();
  return all;
}

const KindInfo* find_kind(std::string_view group, std::string_view version,
                          std::string_view plural) {
  for (const KindInfo& k : kinds()) {
    if (k.group != group || k.version != version) continue;
    if (k.plural == plural) return &k;
  }
  return nullptr;
}

std::vector<GroupVersion> api_groups() {
  std::vector<GroupVersion> out;
  for (const KindInfo& k : kinds()) {
    if (k.group.empty()) continue;
    bool seen = false;
    for (const GroupVersion& g : out) seen = seen || (g.group == k.group && g.version == k.version);
    if (!seen) out.push_back({k.group, k.version});
  }
  return out;
}

bool parse_go_bool(std::string_view text, bool& out) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == t) return out = true, true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == f) return out = false, true;
  }
  return false;
}

}  // namespace gf::k8s
