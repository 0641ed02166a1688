// Cluster API write bodies (provision/cluster_request.h): CreateCluster, UpdateCluster,
// BatchAddClusterNodes and BatchDeleteClusterNodes, validated against a fleet that already holds
// two in-service clusters built from examples/create_cluster.json (one continuous, one
// all-or-nothing) and the built-in catalog. The input is one JSON or YAML body, tried as all four.
//
// Invariants checked:
//  - no parser throws, and a refusal says why;
//  - an accepted CreateCluster has a name no cluster uses, 1 or more uniquely named groups of
//    catalog instance types with 0 <= MinInstanceCount <= InstanceCount;
//  - every accepted group survives its canonical form (GroupSpec::to_json / from_json), the
//    form cluster.created and cluster.updated events journal;
//  - an accepted UpdateCluster only deletes groups the cluster has, never one it also updates;
//  - BatchAdd increments are 1..50 (50 in total), BatchDelete lists 1..99 ids.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/catalog.h"
#include "provision/cluster_request.h"
#include "state/fleet_state.h"

namespace gf {
namespace {

// examples/create_cluster.json, the shape users start from.
constexpr std::string_view kExampleCreate = R"({
  "ClusterName": "my-training-cluster",
  "NodeProvisioningMode": "Continuous",
  "Orchestrator": { "Slurm": {} },
  "InstanceGroups": [
    {"InstanceGroupName": "controller-group", "InstanceType": "ml.m5.xlarge", "InstanceCount": 1,
     "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/src/", "OnCreate": "on_create.sh"},
     "SlurmConfig": {"NodeType": "Controller"}},
    {"InstanceGroupName": "login-group", "InstanceType": "ml.m5.xlarge", "InstanceCount": 1,
     "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/src/", "OnCreate": "on_create.sh"},
     "SlurmConfig": {"NodeType": "Login"}},
    {"InstanceGroupName": "worker-gpu-a", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 16,
     "LifeCycleConfig": {"SourceS3Uri": "s3://bucket/src/", "OnCreate": "on_create.sh"},
     "SlurmConfig": {"NodeType": "Compute", "PartitionNames": ["gpu-training"]}}
  ]
})";

ClusterPtr make_cluster(const std::string& name, bool continuous,
                        const CreateClusterRequest& request) {
  auto c = std::make_shared<Cluster>();
  c->name = name;
  c->id = "fuzz" + name;
  c->arn = "arn:aws:sagemaker:us-west-2:111122223333:cluster/" + c->id;
  c->status = ClusterStatus::kInService;
  c->continuous = continuous;
  c->orchestrator = request.orchestrator;
  c->ever_in_service = true;
  for (const GroupSpec& spec : request.groups) {
    InstanceGroup g;
    g.spec = spec;
    g.status = GroupStatus::kInService;
    g.ever_in_service = true;
    c->groups.push_back(std::move(g));
  }
  return c;
}

const FleetView& fleet() {
  static const FleetView view = [] {
    const Result<Json> body = parse_json(kExampleCreate);
    FUZZ_CHECK(body.ok(), body.status().to_string());
    const Result<CreateClusterRequest> example =
        parse_create_cluster(*body, FleetView{}, Catalog::builtin());
    FUZZ_CHECK(example.ok(), example.status().to_string());
    FleetView v;
    v.clusters["continuous"] = make_cluster("continuous", true, *example);
    v.clusters["legacy"] = make_cluster("legacy", false, *example);
    return v;
  }();
  return view;
}

void check_group(const GroupSpec& g) {
  FUZZ_CHECK(!g.name.empty() && g.name.size() <= 63, g.name);
  FUZZ_CHECK(Catalog::builtin().find(g.instance_type) != nullptr, g.instance_type);
  FUZZ_CHECK(g.min >= 0 && g.min <= g.target,
             g.name + ": min " + std::to_string(g.min) + " target " + std::to_string(g.target));
  const Json wire = g.to_json();
  const Result<GroupSpec> back = GroupSpec::from_json(wire);
  FUZZ_CHECK(back.ok(), fuzz::dump(wire) + "\n" + back.status().to_string());
  FUZZ_CHECK(*back == g, fuzz::dump(wire) + "\nread back as\n" + fuzz::dump(back->to_json()));
}

void check_create(const Json& body) {
  const Result<CreateClusterRequest> r = parse_create_cluster(body, fleet(), Catalog::builtin());
  if (!r.ok()) {
    FUZZ_CHECK_ERROR(r.status());
    return;
  }
  FUZZ_CHECK(fleet().find_cluster(r->name) == nullptr, r->name);
  FUZZ_CHECK(!r->groups.empty(), r->name);
  std::set<std::string> names;
  for (const GroupSpec& g : r->groups) {
    check_group(g);
    FUZZ_CHECK(names.insert(g.name).second, "duplicate group " + g.name);
  }
}

void check_update(const std::string& cluster, const Json& body) {
  const Result<UpdateClusterRequest> r =
      parse_update_cluster(cluster, body, fleet(), Catalog::builtin());
  if (!r.ok()) {
    FUZZ_CHECK_ERROR(r.status());
    return;
  }
  const Cluster* c = fleet().find_cluster(cluster);
  FUZZ_CHECK(c != nullptr, "update accepted for unknown cluster " + cluster);
  std::set<std::string> updated;
  for (const GroupSpec& g : r->groups) {
    check_group(g);
    FUZZ_CHECK(updated.insert(g.name).second, "duplicate group " + g.name);
    if (const InstanceGroup* existing = c->find_group(g.name)) {
      FUZZ_CHECK(existing->spec.instance_type == g.instance_type, g.name);
    }
  }
  for (const std::string& del : r->groups_to_delete) {
    FUZZ_CHECK(c->find_group(del) != nullptr, del);
    FUZZ_CHECK(!updated.contains(del), del);
  }
}

void check_batch(const Json& body) {
  if (const Result<std::vector<NodesToAdd>> add = parse_batch_add(body); add.ok()) {
    int64_t total = 0;
    FUZZ_CHECK(!add->empty() && add->size() <= 5, std::to_string(add->size()));
    for (const NodesToAdd& a : *add) {
      FUZZ_CHECK(a.increment >= 1 && a.increment <= 50, std::to_string(a.increment));
      total += a.increment;
    }
    FUZZ_CHECK(total <= 50, std::to_string(total));
  } else {
    FUZZ_CHECK_ERROR(add.status());
  }
  if (const Result<std::vector<std::string>> del = parse_batch_delete(body); del.ok()) {
    FUZZ_CHECK(!del->empty() && del->size() <= 99, std::to_string(del->size()));
  } else {
    FUZZ_CHECK_ERROR(del.status());
  }
}

}  // namespace
}  // namespace gf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  gf::Json body;
  if (!gf::fuzz::parse_one(gf::fuzz::as_text(data, size), body)) return 0;
  gf::check_create(body);
  gf::check_update("continuous", body);
  gf::check_update("legacy", body);
  gf::check_update("missing", body);
  gf::check_batch(body);
  return 0;
}
