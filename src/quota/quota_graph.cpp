#include "quota/quota_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <string>

namespace gf::quota {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

int64_t sat_add(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return b > 0 ? kMax : kMin;
  return out;
}

int64_t sat_sub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) return b < 0 ? kMax : kMin;
  return out;
}

ResourceVector filled(int64_t value) {
  ResourceVector v;
  for (size_t d = 0; d < kMaxResources; ++d) v.set(static_cast<ResourceId>(d), value);
  return v;
}

Status validate_quota(const NodeSpec& spec, const ResourceQuota& q) {
  const std::string where = fmt::format("node {}: resource {}", spec.name, q.resource);
  if (q.resource >= kMaxResources) return validation_error(where + ": resource id out of range");
  if (q.nominal < 0) return validation_error(where + ": nominal must be >= 0");
  if (q.borrowing_limit && *q.borrowing_limit < 0) {
    return validation_error(where + ": borrowing_limit must be >= 0");
  }
  if (q.lending_limit && (*q.lending_limit < 0 || *q.lending_limit > q.nominal)) {
    return validation_error(where + ": lending_limit must be between 0 and nominal");
  }
  if (spec.parent == kNoNode && (q.borrowing_limit || q.lending_limit)) {
    return validation_error(where + ": borrowing_limit and lending_limit need a parent cohort");
  }
  return ok_status();
}

}  // namespace

std::string_view limit_kind_name(LimitKind kind) {
  switch (kind) {
    case LimitKind::kNone:
      return "none";
    case LimitKind::kUnknownQueue:
      return "unknown queue";
    case LimitKind::kNotCovered:
      return "no quota declared";
    case LimitKind::kNominal:
      return "nominal quota";
    case LimitKind::kBorrowingLimit:
      return "borrowing limit";
    case LimitKind::kCohortCapacity:
      return "cohort capacity";
    case LimitKind::kMaxJobs:
      return "max jobs";
  }
  return "?";
}

std::string_view preemption_reason_name(PreemptionReason reason) {
  switch (reason) {
    case PreemptionReason::kInQueue:
      return "InQueue";
    case PreemptionReason::kReclaim:
      return "Reclaim";
    case PreemptionReason::kBorrowWithinCohort:
      return "BorrowWithinCohort";
  }
  return "?";
}

Result<NodeId> QuotaGraph::add_node(NodeSpec spec) {
  if (spec.name.empty()) return validation_error("node name must not be empty");
  if (by_name_.contains(spec.name)) return validation_error("duplicate node name " + spec.name);
  uint32_t depth = 1;
  if (spec.parent != kNoNode) {
    if (spec.parent >= size()) return validation_error("node " + spec.name + ": unknown parent");
    if (specs_[spec.parent].kind != NodeKind::kCohort) {
      return validation_error("node " + spec.name + ": parent must be a cohort, not a queue");
    }
    depth = depth_[spec.parent] + 1;
    if (depth > kMaxDepth) return validation_error("node " + spec.name + ": tree too deep");
  }
  if (spec.max_jobs && *spec.max_jobs < 0) {
    return validation_error("node " + spec.name + ": max_jobs must be >= 0");
  }
  if (spec.weight_milli < 0) return validation_error("node " + spec.name + ": weight < 0");
  ResourceVector nominal;
  ResourceVector borrowing = filled(kUnlimited);
  ResourceVector lending = filled(kUnlimited);
  std::bitset<kMaxResources> covered;
  for (const ResourceQuota& q : spec.quotas) {
    GF_RETURN_IF_ERROR(validate_quota(spec, q));
    if (covered.test(q.resource)) {
      return validation_error("node " + spec.name + ": resource listed twice");
    }
    covered.set(q.resource);
    nominal.set(q.resource, q.nominal);
    if (q.borrowing_limit) borrowing.set(q.resource, *q.borrowing_limit);
    if (q.lending_limit) lending.set(q.resource, *q.lending_limit);
  }
  const auto id = static_cast<NodeId>(specs_.size());
  by_name_.emplace(spec.name, id);
  specs_.push_back(std::move(spec));
  nominal_.push_back(nominal);
  borrowing_limit_.push_back(borrowing);
  lending_limit_.push_back(lending);
  covered_.push_back(covered);
  depth_.push_back(depth);
  recompute_derived();
  return id;
}

// Children have larger ids than their parents, so one descending sweep folds every subtree.
void QuotaGraph::recompute_derived() {
  subtree_ = nominal_;
  local_.assign(size(), ResourceVector());
  for (size_t i = size(); i-- > 0;) {
    for (size_t d = 0; d < kMaxResources; ++d) {
      const auto r = static_cast<ResourceId>(d);
      local_[i].set(r, std::max<int64_t>(0, sat_sub(subtree_[i].get(r), lending_limit_[i].get(r))));
      const NodeId p = specs_[i].parent;
      if (p == kNoNode) continue;
      subtree_[p].set(r,
                      sat_add(subtree_[p].get(r), sat_sub(subtree_[i].get(r), local_[i].get(r))));
    }
  }
}

std::optional<NodeId> QuotaGraph::find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

NodeId QuotaGraph::root(NodeId id) const {
  while (specs_[id].parent != kNoNode) id = specs_[id].parent;
  return id;
}

Ledger QuotaGraph::empty_ledger() const {
  Ledger ledger;
  ledger.usage.assign(size(), ResourceVector());
  ledger.jobs.assign(size(), 0);
  return ledger;
}

void QuotaGraph::charge(Ledger& ledger, NodeId leaf, const ResourceVector& request,
                        int sign) const {
  assert(sign == 1 || sign == -1);
  // Only the request's nonzero dimensions change anywhere on the path.
  std::array<ResourceId, kMaxResources> dims{};
  std::array<int64_t, kMaxResources> delta{};
  size_t ndims = 0;
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    if (request.get(r) == 0) continue;
    dims[ndims] = r;
    delta[ndims++] = sign > 0 ? request.get(r) : -request.get(r);
  }
  for (NodeId n = leaf; n != kNoNode; n = specs_[n].parent) {
    ResourceVector& usage = ledger.usage[n];
    for (size_t i = 0; i < ndims; ++i) {
      const ResourceId r = dims[i];
      if (delta[i] == 0) continue;
      const int64_t local = local_[n].get(r);
      const int64_t before = usage.get(r);
      const int64_t after = sat_add(before, delta[i]);
      usage.set(r, after);
      // What spills over this node's local quota is charged to its parent.
      delta[i] = std::max<int64_t>(0, sat_sub(after, local)) -
                 std::max<int64_t>(0, sat_sub(before, local));
    }
    ledger.jobs[n] += sign;
  }
}

struct QuotaGraph::PathAvailability {
  ResourceVector avail;
  std::array<NodeId, kMaxResources> blame{};
  std::array<LimitKind, kMaxResources> kind{};
};

// Evaluates avail() from the root down the leaf's path, remembering per dimension which node's
// limit is the binding minimum.
QuotaGraph::PathAvailability QuotaGraph::walk_path(const Ledger& ledger, NodeId leaf,
                                                   const ResourceId* dims, size_t ndims) const {
  std::array<NodeId, kMaxDepth> path{};
  size_t len = 0;
  for (NodeId n = leaf; n != kNoNode; n = specs_[n].parent) path[len++] = n;
  PathAvailability pa;
  const NodeId top = path[len - 1];
  for (size_t i = 0; i < ndims; ++i) {
    const ResourceId r = dims[i];
    pa.avail.set(r, sat_sub(subtree_[top].get(r), ledger.usage[top].get(r)));
    pa.blame[r] = top;
    pa.kind[r] = top == leaf ? LimitKind::kNominal : LimitKind::kCohortCapacity;
  }
  for (size_t p = len - 1; p-- > 0;) {
    const NodeId n = path[p];
    for (size_t i = 0; i < ndims; ++i) {
      const ResourceId r = dims[i];
      const int64_t local = local_[n].get(r);
      const int64_t used = ledger.usage[n].get(r);
      const int64_t local_avail = std::max<int64_t>(0, sat_sub(local, used));
      const int64_t stored_in_parent = sat_sub(subtree_[n].get(r), local);
      const int64_t used_in_parent = std::max<int64_t>(0, sat_sub(used, local));
      const int64_t cap =
          sat_add(sat_sub(stored_in_parent, used_in_parent), borrowing_limit_[n].get(r));
      int64_t from_parent = pa.avail.get(r);
      if (cap < from_parent) {
        from_parent = cap;
        pa.blame[r] = n;
        pa.kind[r] = LimitKind::kBorrowingLimit;
      }
      pa.avail.set(r, sat_add(local_avail, from_parent));
    }
  }
  return pa;
}

ResourceVector QuotaGraph::available(const Ledger& ledger, NodeId leaf) const {
  static constexpr auto kAll = [] {
    std::array<ResourceId, kMaxResources> all{};
    for (size_t d = 0; d < kMaxResources; ++d) all[d] = static_cast<ResourceId>(d);
    return all;
  }();
  return walk_path(ledger, leaf, kAll.data(), kAll.size()).avail;
}

FitResult QuotaGraph::fits(const Ledger& ledger, NodeId leaf, const ResourceVector& request) const {
  FitResult fit;
  auto fail = [&fit](LimitKind kind, NodeId node, ResourceId r, int64_t req, int64_t avail) {
    fit = FitResult{false, false, kind, node, r, req, avail, sat_sub(req, avail)};
    return fit;
  };
  if (!is_queue(leaf)) return fail(LimitKind::kUnknownQueue, leaf, 0, 0, 0);
  std::array<ResourceId, kMaxResources> dims{};
  size_t ndims = 0;
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    if (request.get(r) <= 0) continue;
    if (!covered_[leaf].test(d)) return fail(LimitKind::kNotCovered, leaf, r, request.get(r), 0);
    dims[ndims++] = r;
  }
  const PathAvailability pa = walk_path(ledger, leaf, dims.data(), ndims);
  for (size_t i = 0; i < ndims; ++i) {
    const ResourceId r = dims[i];
    if (request.get(r) > pa.avail.get(r)) {
      return fail(pa.kind[r], pa.blame[r], r, request.get(r), pa.avail.get(r));
    }
  }
  for (NodeId n = leaf; n != kNoNode; n = specs_[n].parent) {
    const auto& max_jobs = specs_[n].max_jobs;
    if (max_jobs && ledger.jobs[n] + 1 > *max_jobs) {
      return fail(LimitKind::kMaxJobs, n, kMaxJobs, 1,
                  std::max<int64_t>(0, *max_jobs - ledger.jobs[n]));
    }
  }
  fit.borrows = would_borrow(ledger, leaf, request);
  return fit;
}

bool QuotaGraph::would_borrow(const Ledger& ledger, NodeId leaf,
                              const ResourceVector& request) const {
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    if (request.get(r) > 0 &&
        sat_add(ledger.usage[leaf].get(r), request.get(r)) > subtree_[leaf].get(r)) {
      return true;
    }
  }
  return false;
}

bool QuotaGraph::borrowing_in(const Ledger& ledger, NodeId leaf,
                              const std::bitset<kMaxResources>& dims) const {
  for (size_t d = 0; d < kMaxResources; ++d) {
    const auto r = static_cast<ResourceId>(d);
    if (dims.test(d) && ledger.usage[leaf].get(r) > subtree_[leaf].get(r)) return true;
  }
  return false;
}

std::string QuotaGraph::describe(const FitResult& fit, const ResourceRegistry* registry) const {
  if (fit.fits) return fit.borrows ? "fits (borrowing)" : "fits";
  std::string node = fit.node < size() ? specs_[fit.node].name : "?";
  std::string resource = registry && fit.resource < registry->size()
                             ? std::string(registry->name(fit.resource))
                             : fmt::format("resource#{}", fit.resource);
  if (fit.limit == LimitKind::kMaxJobs) resource = "kube-queue/max-jobs";
  return fmt::format("node {} {} on {}: needs {}, available {} (short by {})", node,
                     limit_kind_name(fit.limit), resource, fit.requested, fit.available,
                     fit.shortfall);
}

}  // namespace gf::quota
