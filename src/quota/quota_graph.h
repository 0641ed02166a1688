// The quota tree and its usage ledger (Kueue pkg/cache/scheduler/resource_node.go semantics).
//
// Per node n and dimension r (all int64, saturating):
//   S(n)     subtree quota   = nominal(n) + sum over children c of (S(c) - local(c))
//   local(n) local quota     = lending_limit set ? max(0, S(n) - lending_limit) : 0
//                              (capacity visible only inside n's subtree; never lent)
//   U(n)     usage           = leaf: sum of admitted requests;
//                              cohort: sum over children c of max(0, U(c) - local(c))
//   avail(n) what n may still take =
//            root: S(n) - U(n)
//            else: max(0, local(n) - U(n)) + min(avail(parent),
//                  S(n) - local(n) - max(0, U(n) - local(n)) + borrowing_limit(n))
// The graph (structure, quotas, S, local) is immutable once built; usage lives in a separate
// `Ledger` so preemption can simulate on a cheap copy. Every operation walks only the path from a
// leaf to its root (at most kMaxDepth nodes), over kMaxResources dimensions.
#pragma once

#include <bitset>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/resources.h"
#include "core/result.h"
#include "quota/quota_types.h"

namespace gf::quota {

// Mutable usage of every node. Invariant (checked by tests): equals the result of charging every
// admitted workload once, in any order; release/evict restore it exactly.
struct Ledger {
  std::vector<ResourceVector> usage;  // U(n)
  std::vector<int64_t> jobs;          // admitted workloads in n's subtree
};

class QuotaGraph {
 public:
  // Validates and appends a node; returns its id. Errors: empty or duplicate name, unknown
  // parent, parent that is a queue, tree deeper than kMaxDepth, negative quantities,
  // lending_limit > nominal, limits on a root (Kueue: limits need a cohort).
  Result<NodeId> add_node(NodeSpec spec);

  size_t size() const { return specs_.size(); }
  const NodeSpec& spec(NodeId id) const { return specs_[id]; }
  std::optional<NodeId> find(std::string_view name) const;
  bool is_queue(NodeId id) const { return id < size() && specs_[id].kind == NodeKind::kQueue; }
  NodeId parent(NodeId id) const { return specs_[id].parent; }
  NodeId root(NodeId id) const;

  const ResourceVector& nominal(NodeId id) const { return nominal_[id]; }
  const ResourceVector& subtree_quota(NodeId id) const { return subtree_[id]; }
  const ResourceVector& local_quota(NodeId id) const { return local_[id]; }

  Ledger empty_ledger() const;

  // Adds (sign = +1) or removes (sign = -1) `request` and one job at `leaf`, propagating to each
  // ancestor only the part of the change that overflows the child's local quota.
  void charge(Ledger& ledger, NodeId leaf, const ResourceVector& request, int sign) const;

  // Fit of `request` at queue `leaf` under `ledger`, naming the binding limit when it does not.
  FitResult fits(const Ledger& ledger, NodeId leaf, const ResourceVector& request) const;

  // What `leaf` may still take in every dimension.
  ResourceVector available(const Ledger& ledger, NodeId leaf) const;

  // True if U(leaf) + request > S(leaf) in some dimension the request uses.
  bool would_borrow(const Ledger& ledger, NodeId leaf, const ResourceVector& request) const;
  // True if U(leaf) > S(leaf) in some dimension of `dims`.
  bool borrowing_in(const Ledger& ledger, NodeId leaf,
                    const std::bitset<kMaxResources>& dims) const;

  // "node c1 borrowing limit on cpu: needs 4000, available 2000 (short by 2000)".
  std::string describe(const FitResult& fit, const ResourceRegistry* registry = nullptr) const;

 private:
  struct PathAvailability;
  void recompute_derived();
  // Only the dimensions in dims[0, ndims) are evaluated (the others stay 0): a request names a
  // few of the kMaxResources dimensions, and fits() looks at no others.
  PathAvailability walk_path(const Ledger& ledger, NodeId leaf, const ResourceId* dims,
                             size_t ndims) const;

  std::vector<NodeSpec> specs_;
  std::vector<ResourceVector> nominal_;
  std::vector<ResourceVector> borrowing_limit_;         // kUnlimited where absent
  std::vector<ResourceVector> lending_limit_;           // kUnlimited where absent
  std::vector<std::bitset<kMaxResources>> covered_;     // dimensions a node declares
  std::vector<ResourceVector> subtree_;                 // S(n), derived
  std::vector<ResourceVector> local_;                   // local(n), derived
  std::vector<uint32_t> depth_;                         // root = 1
  std::map<std::string, NodeId, std::less<>> by_name_;  // build-time and lookup only
};

}  // namespace gf::quota
