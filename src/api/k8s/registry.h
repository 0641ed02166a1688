// The kinds the Kubernetes door serves (docs/kubernetes.md): one table, read by discovery, by the
// OpenAPI documents, by the router of /api and /apis and by the Table printer, so a kind that
// discovery lists is always one the door answers, with the verbs it lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gf::k8s {

// A column of `kubectl get` (meta.k8s.io/v1 Table): priority 1 only with -o wide.
struct Column {
  std::string name;
  std::string type = "string";  // string | integer | date
  std::string description;
  int priority = 0;
  std::string format{};  // "name" for the first column
};

// Where the door finds a kind's objects.
enum class Source {
  kObjects,     // gpufleet's /v1/objects/{objects} (jobs, policies, quota objects, pods)
  kNodes,       // every cluster's nodes (/v1/clusters/{name}/nodes)
  kNamespaces,  // the namespaces objects and jobs name
  kEvents,      // the events of PyTorchJobs (/v1/objects/pytorchjobs/{ns}/{name}?describe=true)
};

struct KindInfo {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;
  std::string plural;
  std::string singular;
  bool namespaced = true;
  bool writable = false;  // create, update, patch, delete through POST /v1/apply
  bool status = false;    // a status subresource (read only)
  bool log = false;       // pods/log
  std::vector<std::string> short_names{};
  Source source = Source::kObjects;
  std::string objects{};  // the /v1/objects family (kObjects)
  std::vector<Column> columns{};

  std::string group_version() const { return group.empty() ? version : group + "/" + version; }
  // "pytorchjobs.kubeflow.org", "pods": how kubectl names the resource in messages.
  std::string qualified() const { return group.empty() ? plural : plural + "." + group; }
  std::vector<std::string> verbs() const;
};

const std::vector<KindInfo>& kinds();
// The kind served at group/version under `plural` (kubectl always asks by plural); null when
// none is.
const KindInfo* find_kind(std::string_view group, std::string_view version,
                          std::string_view plural);

// The groups of /apis, each with its one version, in the order discovery lists them.
struct GroupVersion {
  std::string group;
  std::string version;
};
std::vector<GroupVersion> api_groups();

// Go's strconv.ParseBool, which Kubernetes clients' booleans follow (`watch=True`): 1 t T TRUE
// true True and 0 f F FALSE false False; anything else is not a boolean.
bool parse_go_bool(std::string_view text, bool& out);

}  // namespace gf::k8s
