// GET /v1/quota-tree: every quota node (cohorts and queues of the compiled quota objects) with,
// per resource, its nominal quota and limits and what its subtree uses, borrows and lends, and
// who borrows from whom (docs/api.md "Quota tree"; the console's Quotas page).
#include <map>

#include "api/api.h"
#include "quota/frontends/quota_objects.h"

namespace gf {

namespace {

// A number in the resource's unit; null for an unlimited quota (an ElasticQuotaTree root's
// resources that only its children name).
Json value(const QuotaAmount& a, int64_t v) {
  if (v >= quota::kUnlimited) return nullptr;
  return a.milli ? static_cast<double>(v) / 1000.0 : static_cast<double>(v);
}

// What a node holds of a resource: a queue its nominal, a cohort its subtree's quota.
int64_t held(const quota::QuotaGraph& g, quota::NodeId n, const QuotaAmount& a) {
  return g.is_queue(n) ? a.nominal : a.subtree;
}

// Borrowing and lending among the children of one parent, for one resource: a child above its
// nominal borrows the excess; a child below it can lend its unused nominal (up to its lending
// limit). What the borrowers take is attributed to the lenders in proportion to what each can
// lend; a borrower's excess the siblings cannot cover comes from further up the tree.
struct Flow {
  std::map<quota::NodeId, int64_t> lent;                                        // by lender
  std::map<quota::NodeId, std::vector<std::pair<quota::NodeId, double>>> from;  // borrower ->
};

void attribute(const quota::QuotaGraph& g, const std::vector<quota::NodeId>& children,
               const std::map<quota::NodeId, const QuotaAmount*>& amounts, Flow& flow) {
  int64_t borrowed = 0, lendable = 0;
  std::map<quota::NodeId, int64_t> can_lend;
  for (quota::NodeId c : children) {
    auto it = amounts.find(c);
    if (it == amounts.end()) continue;
    const QuotaAmount& a = *it->second;
    const int64_t quota = held(g, c, a);
    if (quota >= quota::kUnlimited) continue;  // an unlimited child neither borrows nor lends
    if (a.used > quota) borrowed += a.used - quota;
    int64_t spare = std::max<int64_t>(0, quota - a.used);
    if (a.lending_limit) spare = std::min(spare, *a.lending_limit);
    if (spare > 0) {
      can_lend[c] = spare;
      lendable += spare;
    }
  }
  if (borrowed == 0 || lendable == 0) return;
  const int64_t covered = std::min(borrowed, lendable);
  for (auto& [k, spare] : can_lend) {
    flow.lent[k] = static_cast<int64_t>(static_cast<__int128>(covered) * spare / lendable);
  }
  for (quota::NodeId c : children) {
    auto it = amounts.find(c);
    if (it == amounts.end() || it->second->used <= it->second->nominal) continue;
    const double share =
        static_cast<double>(it->second->used - it->second->nominal) / static_cast<double>(borrowed);
    for (auto& [k, lent] : flow.lent)
      flow.from[c].push_back({k, share * static_cast<double>(lent)});
  }
}

Result<Json> quota_tree(const FleetView& v) {
  Json nodes = Json::array();
  if (!v.quota || !v.quota_status) return Json{{"Nodes", nodes}};
  const quota::QuotaGraph& g = v.quota->graph;
  const auto& status = *v.quota_status;
  const size_t n_nodes = std::min(g.size(), status.size());
  // Children by parent, and per resource the flows among each parent's children.
  std::map<quota::NodeId, std::vector<quota::NodeId>> children;
  for (quota::NodeId n = 0; n < n_nodes; ++n) children[g.spec(n).parent].push_back(n);
  std::map<std::string, Flow> flows;  // by resource
  for (const auto& [parent, kids] : children) {
    if (parent == quota::kNoNode) continue;  // roots lend to no one
    std::map<std::string, std::map<quota::NodeId, const QuotaAmount*>> by_resource;
    for (quota::NodeId c : kids)
      for (const QuotaAmount& a : status[c].amounts) by_resource[a.resource][c] = &a;
    for (const auto& [resource, amounts] : by_resource)
      attribute(g, kids, amounts, flows[resource]);
  }
  for (quota::NodeId n = 0; n < n_nodes; ++n) {
    const quota::NodeSpec& spec = g.spec(n);
    Json resources = Json::array();
    Json borrows = Json::array();
    for (const QuotaAmount& a : status[n].amounts) {
      // A cohort borrows only beyond what its whole subtree holds.
      const int64_t quota = held(g, n, a);
      const int64_t borrowed =
          quota >= quota::kUnlimited ? 0 : std::max<int64_t>(0, a.used - quota);
      Json r = {{"Resource", a.resource},
                {"Nominal", value(a, a.nominal)},
                {"Used", value(a, a.used)},
                {"Borrowed", value(a, borrowed)},
                {"Lent", value(a, 0)}};
      if (!g.is_queue(n)) r["SubtreeNominal"] = value(a, quota);
      if (a.borrowing_limit) r["BorrowingLimit"] = value(a, *a.borrowing_limit);
      if (a.lending_limit) r["LendingLimit"] = value(a, *a.lending_limit);
      if (auto f = flows.find(a.resource); f != flows.end()) {
        if (auto l = f->second.lent.find(n); l != f->second.lent.end())
          r["Lent"] = value(a, l->second);
        if (auto b = f->second.from.find(n); b != f->second.from.end()) {
          for (const auto& [lender, amount] : b->second) {
            borrows.push_back({{"From", g.spec(lender).name},
                               {"Resource", a.resource},
                               {"Amount", a.milli ? amount / 1000.0 : amount}});
          }
        }
      }
      resources.push_back(std::move(r));
    }
    Json node = {{"Name", spec.name},
                 {"Kind", g.is_queue(n) ? "Queue" : "Cohort"},
                 {"AdmittedJobs", status[n].admitted},
                 {"PendingJobs", status[n].pending},
                 {"Resources", std::move(resources)},
                 {"BorrowsFrom", std::move(borrows)}};
    if (spec.parent != quota::kNoNode) node["Parent"] = g.spec(spec.parent).name;
    nodes.push_back(std::move(node));
  }
  return Json{{"Nodes", std::move(nodes)}};
}

}  // namespace

void register_quota_tree_routes(Api& api) {
  api.router().add("GET", "/v1/quota-tree", [&api](const HttpRequest&) {
    return read_view(api, [](const FleetView& v) { return quota_tree(v); });
  });
}

}  // namespace gf
