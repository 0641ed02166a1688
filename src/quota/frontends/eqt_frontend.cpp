// ElasticQuotaTree front end (docs/quota-frontends.md): one tree in kube-system; every tree node
// becomes a quota node (root and inner nodes cohorts, leaves queues). A node's `min` is the
// guarantee of its whole subtree, so a cohort's own nominal is its min minus what its children
// guarantee; `max` bounds the subtree including borrowing (borrowing limit = max - min).
// kube-queue/max-jobs is a job count (max_jobs), not a dimension.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "quota/frontends/frontend_internal.h"

namespace gf::frontend::detail {
namespace {

constexpr std::string_view kTreeNamespace = "kube-system";
constexpr std::string_view kQueueNamespace = "kube-queue";

struct EqtNode {
  std::string name;
  std::string field;  // "spec.root.children[0]"
  std::string path;   // node names joined by '-': "root-child-2"
  ResourceVector min;
  ResourceVector max;                   // = min where only min names the resource
  std::bitset<kMaxResources> declared;  // resources named in min or max (max-jobs excluded)
  std::optional<int64_t> max_jobs;      // kube-queue/max-jobs of max (or of min alone)
  std::vector<std::string> namespaces;
  std::vector<EqtNode> children;
};

struct EqtTree {
  std::string name;
  EqtNode root;
};

struct Quantities {
  ResourceVector values;
  std::bitset<kMaxResources> given;
  std::optional<int64_t> jobs;
};

Result<Quantities> read_quantities(const Json& obj, ResourceRegistry& registry,
                                   const std::string& path) {
  if (!obj.is_object()) {
    return validation_error(path + ": expected an object mapping resource names to quantities, " +
                            "e.g. {cpu: 4, memory: 16Gi}, got " + describe_json_value(obj));
  }
  Quantities q;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string field = path_join(path, it.key());
    Result<ResourceId> id = registry.intern(it.key());
    if (!id.ok()) return id.status().with_prefix(field);
    Result<int64_t> v = parse_quantity_json(it.value(), registry.scale(*id));
    if (!v.ok()) return v.status().with_prefix(field);
    if (*id == kMaxJobs) {
      q.jobs = *v;
    } else {
      q.values.set(*id, *v);
      q.given.set(*id);
    }
  }
  return q;
}

std::string amount(const ResourceRegistry& registry, ResourceId id, int64_t v) {
  return format_quantity(v, registry.scale(id));
}

// Reads min/max of one node and applies the per-node rules (max >= min, defaults).
Status read_limits(ObjectReader& r, EqtNode& n, ResourceRegistry& registry) {
  Quantities min, max;
  if (const Json* v = r.optional_value("min")) {
    GF_ASSIGN_OR_RETURN(min, read_quantities(*v, registry, r.field_path("min")));
  }
  if (const Json* v = r.optional_value("max")) {
    GF_ASSIGN_OR_RETURN(max, read_quantities(*v, registry, r.field_path("max")));
  }
  n.declared = min.given | max.given;
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto id = static_cast<ResourceId>(d);
    if (!n.declared.test(d)) continue;
    n.min.set(id, min.values.get(id));
    n.max.set(id, max.given.test(d) ? max.values.get(id) : min.values.get(id));
    if (n.max.get(id) < n.min.get(id)) {
      return validation_error(path_join(r.field_path("max"), registry.name(id)) + ": " +
                              amount(registry, id, n.max.get(id)) + " is less than min " +
                              amount(registry, id, n.min.get(id)));
    }
  }
  if (max.jobs && min.jobs && *max.jobs < *min.jobs) {
    return validation_error(fmt::format("{}.kube-queue/max-jobs: {} is less than min {}",
                                        r.field_path("max"), *max.jobs, *min.jobs));
  }
  n.max_jobs = max.jobs ? max.jobs : min.jobs;
  return ok_status();
}

class TreeReader {
 public:
  TreeReader(ResourceRegistry& registry, std::vector<std::string>& warnings)
      : registry_(registry), warnings_(warnings) {}

  Result<EqtNode> read(const Json& j, const std::string& field, const EqtNode* parent,
                       size_t depth) {
    ObjectReader r(j, field);
    EqtNode n;
    n.field = field;
    n.name = r.required_string("name");
    if (r.ok() && !valid_dns_label(n.name)) {
      r.fail("name", in_quotes(n.name) +
                         " is not a valid node name (lowercase letters, digits and "
                         "'-', starting and ending with a letter or digit, at most "
                         "63 characters)");
    }
    if (r.ok() && !names_.insert(n.name).second) {
      r.fail("name",
             "duplicate node name " + in_quotes(n.name) + " (names are unique in the tree)");
    }
    if (r.ok() && depth > quota::kMaxDepth) {
      r.fail("name", fmt::format("the tree is deeper than {} levels", quota::kMaxDepth));
    }
    if (!r.ok()) return r.status();
    n.path = parent ? parent->path + "-" + n.name : n.name;
    GF_RETURN_IF_ERROR(read_limits(r, n, registry_));
    if (parent) GF_RETURN_IF_ERROR(check_min_within_parent(n, *parent));
    auto namespaces = r.optional_string_list("namespaces");
    const Json* children = r.optional_array("children");
    r.optional_value("attributes");  // ACK resource flavors: accepted, not used
    if (!r.ok()) return r.status();
    if (children) {
      for (size_t i = 0; i < children->size(); ++i) {
        GF_ASSIGN_OR_RETURN(EqtNode c, read((*children)[i], path_index(r.field_path("children"), i),
                                            &n, depth + 1));
        n.children.push_back(std::move(c));
      }
    }
    if (namespaces && !namespaces->empty()) {
      if (!n.children.empty()) {
        return validation_error(r.field_path("namespaces") +
                                ": only leaves map namespaces; this node has children");
      }
      for (size_t i = 0; i < namespaces->size(); ++i) {
        const std::string& ns = (*namespaces)[i];
        const std::string f = path_index(r.field_path("namespaces"), i);
        if (!valid_dns_label(ns))
          return validation_error(f + ": " + in_quotes(ns) + " is not a valid namespace name");
        auto [it, fresh] = namespace_owner_.emplace(ns, n.name);
        if (!fresh) {
          return validation_error(f + ": namespace " + in_quotes(ns) +
                                  " is already mapped to leaf " + in_quotes(it->second) +
                                  " (a namespace belongs to one leaf)");
        }
        n.namespaces.push_back(ns);
      }
    }
    note_unknown(r, warnings_);
    check_children_sum(n);
    return n;
  }

 private:
  // A child's min may not exceed its parent's min in a resource the parent declares.
  Status check_min_within_parent(const EqtNode& n, const EqtNode& parent) const {
    for (size_t d = 0; d < kMaxResources; ++d) {
      const auto id = static_cast<ResourceId>(d);
      if (!n.declared.test(d) || !parent.declared.test(d)) continue;
      if (n.min.get(id) > parent.min.get(id)) {
        return validation_error(
            path_join(path_join(n.field, "min"), registry_.name(id)) + ": " +
            amount(registry_, id, n.min.get(id)) + " exceeds the parent's min " +
            amount(registry_, id, parent.min.get(id)) + " (node " + in_quotes(parent.name) + ")");
      }
    }
    return ok_status();
  }

  void check_children_sum(const EqtNode& n) {
    for (size_t d = 0; d < kMaxResources; ++d) {
      const auto id = static_cast<ResourceId>(d);
      if (!n.declared.test(d)) continue;
      int64_t sum = 0;
      for (const EqtNode& c : n.children) {
        if (c.declared.test(d) && __builtin_add_overflow(sum, c.min.get(id), &sum)) {
          sum = quota::kUnlimited;
        }
      }
      if (sum > n.min.get(id)) {
        warnings_.push_back(path_join(path_join(n.field, "min"), registry_.name(id)) +
                            ": the children's min add up to " + amount(registry_, id, sum) +
                            ", more than this node's " + amount(registry_, id, n.min.get(id)) +
                            "; the node guarantees their sum");
      }
    }
  }

  ResourceRegistry& registry_;
  std::vector<std::string>& warnings_;
  std::set<std::string, std::less<>> names_;
  std::map<std::string, std::string, std::less<>> namespace_owner_;
};

Result<EqtTree> decode_tree(const Json& doc, ResourceRegistry& registry,
                            std::vector<std::string>& warnings) {
  ObjectReader top(doc, "");
  GF_ASSIGN_OR_RETURN(K8sHeader h, read_k8s_header(top, warnings));
  if (h.ns != kTreeNamespace) {
    return validation_error(
        "metadata.namespace: an ElasticQuotaTree must be created in "
        "namespace \"kube-system\", got " +
        (h.ns.empty() ? std::string("none") : in_quotes(h.ns)));
  }
  const Json* spec = top.required_value("spec");
  if (!top.ok()) return top.status();
  ObjectReader s(*spec, "spec");
  const Json* root = s.required_value("root");
  if (!s.ok()) return s.status();
  note_unknown(s, warnings);
  note_unknown(top, warnings);
  TreeReader reader(registry, warnings);
  GF_ASSIGN_OR_RETURN(EqtNode r, reader.read(*root, "spec.root", nullptr, 1));
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto id = static_cast<ResourceId>(d);
    if (r.declared.test(d) && r.max.get(id) > r.min.get(id)) {
      warnings.push_back("spec.root.max." + std::string(registry.name(id)) + ": " +
                         amount(registry, id, r.max.get(id)) + " exceeds min " +
                         amount(registry, id, r.min.get(id)) +
                         "; the root has no one to borrow from, so min is its capacity");
    }
  }
  return EqtTree{h.name, std::move(r)};
}

// Dimensions declared anywhere in the subtree.
std::bitset<kMaxResources> subtree_dims(const EqtNode& n) {
  std::bitset<kMaxResources> out = n.declared;
  for (const EqtNode& c : n.children) out |= subtree_dims(c);
  return out;
}

// S of every dimension: max(min, sum of the children's S), children first.
ResourceVector subtree_min(const EqtNode& n) {
  ResourceVector children;
  for (const EqtNode& c : n.children) children += subtree_min(c);
  ResourceVector s = children;
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto id = static_cast<ResourceId>(d);
    if (n.declared.test(d)) s.set(id, std::max(n.min.get(id), children.get(id)));
  }
  return s;
}

class TreeCompiler {
 public:
  TreeCompiler(const EqtTree& tree, CompiledQuota& out) : tree_(tree), out_(out) {}

  Status add(const EqtNode& n, quota::NodeId parent) {
    const bool root = parent == quota::kNoNode;
    const ResourceVector s = subtree_min(n);
    ResourceVector children;
    for (const EqtNode& c : n.children) children += subtree_min(c);
    const std::bitset<kMaxResources> dims = root ? subtree_dims(n) : n.declared;
    quota::NodeSpec spec;
    spec.name = n.name;
    spec.kind = n.children.empty() ? quota::NodeKind::kQueue : quota::NodeKind::kCohort;
    spec.parent = parent;
    spec.max_jobs = n.max_jobs;
    for (size_t d = 0; d < kMaxResources; ++d) {
      if (!dims.test(d)) continue;
      const auto id = static_cast<ResourceId>(d);
      quota::ResourceQuota q;
      q.resource = id;
      if (!n.declared.test(d)) {
        q.nominal = quota::kUnlimited;  // the root does not limit what only its subtree names
      } else {
        q.nominal = s.get(id) - children.get(id);
        if (!root) q.borrowing_limit = std::max<int64_t>(0, n.max.get(id) - s.get(id));
      }
      spec.quotas.push_back(q);
    }
    Result<quota::NodeId> id = add_node(out_, std::move(spec), n.declared);
    if (!id.ok()) return id.status().with_prefix("ElasticQuotaTree " + tree_.name + ": " + n.field);
    const std::string path = n.path;
    out_.queues.push_back(QueueObject{path + "-" + base36(fnv1a(tree_.name + "/" + path), 5),
                                      std::string(kQueueNamespace), *id, n.name});
    for (const std::string& ns : n.namespaces) out_.namespace_leaf.emplace(ns, *id);
    for (const EqtNode& c : n.children) GF_RETURN_IF_ERROR(add(c, *id));
    return ok_status();
  }

 private:
  const EqtTree& tree_;
  CompiledQuota& out_;
};

}  // namespace

Result<QuotaObject> parse_elastic_quota_tree(const Json& doc) {
  ResourceRegistry scratch;  // validates names and units; the real ids come at compile time
  QuotaObject obj;
  GF_ASSIGN_OR_RETURN(EqtTree tree, decode_tree(doc, scratch, obj.warnings));
  obj.key = ObjectKey{Kind::kElasticQuotaTree, std::string(kTreeNamespace), tree.name};
  obj.doc = doc;
  return obj;
}

Status compile_elastic_quota_trees(const ObjectMap& objects, ResourceRegistry& registry,
                                   CompiledQuota& out) {
  const QuotaObject* found = nullptr;
  for (const auto& [key, obj] : objects) {
    if (key.kind != Kind::kElasticQuotaTree) continue;
    if (found) {
      return validation_error("ElasticQuotaTree " + key.name +
                              ": only one ElasticQuotaTree is supported and " +
                              in_quotes(found->key.name) + " exists");
    }
    found = &obj;
  }
  if (!found) return ok_status();
  std::vector<std::string> ignored;  // already reported when the object was parsed
  Result<EqtTree> tree = decode_tree(found->doc, registry, ignored);
  if (!tree.ok()) return tree.status().with_prefix("ElasticQuotaTree " + found->key.name);
  return TreeCompiler(*tree, out).add(tree->root, quota::kNoNode);
}

}  // namespace gf::frontend::detail
