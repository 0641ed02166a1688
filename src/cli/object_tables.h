// What `gpufleet get` knows of each kind and how it shows it (docs/cli.md): the kinds kubectl's
// way (singular, plural, short names) with their API paths, and one table per kind, as kubectl,
// Kueue and AWS Batch users expect. Used by the object verbs (object_commands.cpp).
#pragma once

#include <optional>
#include <string>

#include "cli/command_support.h"
#include "core/json.h"
#include "core/label_selector.h"
#include "core/time.h"

namespace gf::object_tables {

struct KindInfo {
  std::string plural;     // path segment
  std::string list_path;  // GET path for the list
  std::string list_field;
  bool aws = false;  // /v1/<plural>/{name} instead of /v1/objects/<plural>/...
};

struct GetArgs {
  std::string kind;
  std::string name;
  std::string ns;
  bool members = false;         // -M: one row per member-cluster copy
  std::string member_cluster;   // -m CLUSTER: the copy on that member cluster
  std::string selector;         // -l: label selector
  bool all_namespaces = false;  // -A
  bool watch = false;           // -w
};

// Singular, plural and short names as kubectl accepts them.
std::optional<KindInfo> kind_info(std::string k);
// AGE from a creation time (epoch milliseconds or ISO 8601) to the server's now.
std::string age(const Json& created_ms_or_iso, Time now);
std::string object_path(const KindInfo& k, const std::string& name, const std::string& ns);
bool is_workload(const KindInfo& k);
// An object's metadata.
const Json& meta(const Json& o);
// The items whose labels (metadata.labels, or a service job's tags) match `selector`.
Json select_items(const Json& items, const LabelSelector& selector);
// The table `get` prints for `items` of kind `k`.
Table kind_table(const KindInfo& k, const Json& items, const GetArgs& a, Time now);

}  // namespace gf::object_tables
