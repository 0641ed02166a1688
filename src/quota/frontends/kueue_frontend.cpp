// Kueue front end: ResourceFlavor, Cohort, ClusterQueue, LocalQueue, WorkloadPriorityClass
// compiled into cohort and queue nodes. Every (flavor, resource) pair is its own quota dimension
// (flavored_dim_name); a ClusterQueue lists the flavors it may assign as FlavorOptions. A cohort
// name that no Cohort object declares becomes an implicit root cohort, as in Kueue.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "quota/frontends/frontend_internal.h"
#include "quota/frontends/kueue_decode.h"

namespace gf::frontend::detail {
namespace {

std::string cohort_node_name(std::string_view name) { return "cohort:" + std::string(name); }
std::string queue_node_name(std::string_view name) { return "clusterqueue:" + std::string(name); }

struct CohortEntry {
  CohortSpec spec;
  bool declared = false;  // false: implicit (named by a ClusterQueue or a parentName only)
};

class KueueCompiler {
 public:
  KueueCompiler(ResourceRegistry& registry, CompiledQuota& out) : registry_(registry), out_(out) {}

  Status run(const ObjectMap& objects) {
    GF_RETURN_IF_ERROR(decode_all(objects));
    GF_RETURN_IF_ERROR(check_cycles());
    std::map<std::string, std::vector<std::string>> children;
    for (const auto& [name, c] : cohorts_) {
      if (!c.spec.parent.empty()) children[c.spec.parent].push_back(name);
    }
    for (const auto& [name, c] : cohorts_) {
      if (c.spec.parent.empty()) GF_RETURN_IF_ERROR(add_cohort(name, quota::kNoNode, children));
    }
    for (const ClusterQueueSpec& cq : queues_) GF_RETURN_IF_ERROR(add_queue(cq));
    for (const LocalQueueSpec& lq : local_queues_) {
      const std::string key = lq.ns + "/" + lq.name;
      out_.local_queue_cq.emplace(key, lq.cluster_queue);
      if (auto node = out_.graph.find(queue_node_name(lq.cluster_queue))) {
        out_.local_queue_leaf.emplace(key, *node);
      } else {
        out_.warnings.push_back("LocalQueue " + key + ": spec.clusterQueue: ClusterQueue " +
                                in_quotes(lq.cluster_queue) +
                                " does not exist; its workloads wait until it does");
      }
    }
    return ok_status();
  }

 private:
  Status decode_all(const ObjectMap& objects) {
    std::vector<std::string> ignored;  // reported when each object was parsed
    for (const auto& [key, obj] : objects) {
      const std::string label = object_label(key);
      switch (key.kind) {
        case Kind::kResourceFlavor: {
          Result<ResourceFlavorSpec> rf = decode_resource_flavor(obj.doc, ignored);
          if (!rf.ok()) return rf.status().with_prefix(label);
          flavors_.emplace(rf->name, rf->instance_type);
          break;
        }
        case Kind::kCohort: {
          Result<CohortSpec> c = decode_cohort(obj.doc, registry_, ignored);
          if (!c.ok()) return c.status().with_prefix(label);
          const std::string name = c->name;
          cohorts_[name] = CohortEntry{std::move(*c), true};
          break;
        }
        case Kind::kClusterQueue: {
          Result<ClusterQueueSpec> cq = decode_cluster_queue(obj.doc, registry_, ignored);
          if (!cq.ok()) return cq.status().with_prefix(label);
          queues_.push_back(std::move(*cq));
          break;
        }
        case Kind::kLocalQueue: {
          Result<LocalQueueSpec> lq = decode_local_queue(obj.doc, ignored);
          if (!lq.ok()) return lq.status().with_prefix(label);
          local_queues_.push_back(std::move(*lq));
          break;
        }
        case Kind::kWorkloadPriorityClass: {
          Result<PriorityClassSpec> pc = decode_priority_class(obj.doc, ignored);
          if (!pc.ok()) return pc.status().with_prefix(label);
          out_.priority_classes.emplace(pc->name, pc->value);
          break;
        }
        default:
          break;
      }
    }
    // Implicit cohorts: named as a parent or by a ClusterQueue but not declared.
    std::vector<std::string> implicit;
    for (const auto& [name, c] : cohorts_) {
      if (!c.spec.parent.empty() && !cohorts_.contains(c.spec.parent)) {
        implicit.push_back(c.spec.parent);
      }
    }
    for (const ClusterQueueSpec& cq : queues_) {
      if (!cq.cohort.empty() && !cohorts_.contains(cq.cohort)) implicit.push_back(cq.cohort);
    }
    for (const std::string& name : implicit) {
      CohortEntry e;
      e.spec.name = name;
      cohorts_.emplace(name, std::move(e));
    }
    return ok_status();
  }

  Status check_cycles() const {
    for (const auto& [name, c] : cohorts_) {
      std::vector<std::string> chain{name};
      std::string at = c.spec.parent;
      while (!at.empty()) {
        chain.push_back(at);
        if (at == name) {
          std::string text;
          for (const std::string& n : chain) text += (text.empty() ? "" : " -> ") + n;
          return validation_error("Cohort " + name + ": spec.parentName: cohorts form a cycle (" +
                                  text + ")");
        }
        if (chain.size() > cohorts_.size() + 1) break;  // a cycle not through `name`
        at = cohorts_.at(at).spec.parent;
      }
    }
    return ok_status();
  }

  Status add_cohort(const std::string& name, quota::NodeId parent,
                    const std::map<std::string, std::vector<std::string>>& children) {
    const CohortEntry& c = cohorts_.at(name);
    quota::NodeSpec spec;
    spec.name = cohort_node_name(name);
    spec.kind = quota::NodeKind::kCohort;
    spec.parent = parent;
    spec.quotas = c.spec.groups.quotas;
    spec.weight_milli = c.spec.weight_milli;
    Result<quota::NodeId> id = add_node(out_, std::move(spec), all_dims());
    if (!id.ok()) return id.status().with_prefix("Cohort " + name);
    if (auto it = children.find(name); it != children.end()) {
      for (const std::string& child : it->second)
        GF_RETURN_IF_ERROR(add_cohort(child, *id, children));
    }
    return ok_status();
  }

  Status add_queue(const ClusterQueueSpec& cq) {
    quota::NodeSpec spec;
    spec.name = queue_node_name(cq.name);
    spec.kind = quota::NodeKind::kQueue;
    if (!cq.cohort.empty()) spec.parent = *out_.graph.find(cohort_node_name(cq.cohort));
    spec.quotas = cq.groups.quotas;
    spec.weight_milli = cq.weight_milli;
    spec.preemption = cq.preemption;
    spec.queueing = cq.queueing;
    Result<quota::NodeId> id = add_node(out_, std::move(spec), all_dims());
    if (!id.ok()) return id.status().with_prefix("ClusterQueue " + cq.name);
    for (const FlavorQuotas& fq : cq.groups.flavors) {
      auto rf = flavors_.find(fq.name);
      if (rf == flavors_.end()) {
        out_.warnings.push_back("ClusterQueue " + cq.name + ": " + fq.field +
                                ".name: ResourceFlavor " + in_quotes(fq.name) +
                                " does not exist; the flavor is not assigned until it does");
        continue;
      }
      FlavorOption option;
      option.flavor = fq.name;
      option.instance_type = rf->second;
      option.dims.insert(fq.dims.begin(), fq.dims.end());
      out_.flavors[*id].push_back(std::move(option));
    }
    return ok_status();
  }

  ResourceRegistry& registry_;
  CompiledQuota& out_;
  std::map<std::string, std::string, std::less<>> flavors_;  // name -> instance type
  std::map<std::string, CohortEntry, std::less<>> cohorts_;
  std::vector<ClusterQueueSpec> queues_;
  std::vector<LocalQueueSpec> local_queues_;
};

}  // namespace

Result<QuotaObject> parse_kueue_object(const Json& doc, Kind kind) {
  ResourceRegistry scratch;  // validates names and units; the real ids come at compile time
  QuotaObject obj;
  obj.doc = doc;
  obj.key.kind = kind;
  switch (kind) {
    case Kind::kResourceFlavor: {
      GF_ASSIGN_OR_RETURN(ResourceFlavorSpec s, decode_resource_flavor(doc, obj.warnings));
      obj.key.name = s.name;
      break;
    }
    case Kind::kCohort: {
      GF_ASSIGN_OR_RETURN(CohortSpec s, decode_cohort(doc, scratch, obj.warnings));
      obj.key.name = s.name;
      break;
    }
    case Kind::kClusterQueue: {
      GF_ASSIGN_OR_RETURN(ClusterQueueSpec s, decode_cluster_queue(doc, scratch, obj.warnings));
      obj.key.name = s.name;
      break;
    }
    case Kind::kLocalQueue: {
      GF_ASSIGN_OR_RETURN(LocalQueueSpec s, decode_local_queue(doc, obj.warnings));
      obj.key.name = s.name;
      obj.key.ns = s.ns;
      obj.doc["metadata"]["namespace"] = s.ns;
      break;
    }
    case Kind::kWorkloadPriorityClass: {
      GF_ASSIGN_OR_RETURN(PriorityClassSpec s, decode_priority_class(doc, obj.warnings));
      obj.key.name = s.name;
      break;
    }
    default:
      return internal_error("parse_kueue_object: not a Kueue kind");
  }
  return obj;
}

Status compile_kueue(const ObjectMap& objects, ResourceRegistry& registry, CompiledQuota& out) {
  return KueueCompiler(registry, out).run(objects);
}

}  // namespace gf::frontend::detail
