// Quota accounting of the tree: nominal, borrowing and lending limits, hierarchy, max_jobs,
// exact release, and fit explanations (Kueue resource_node semantics; docs/quota.md).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quota/quota_engine.h"

namespace gf::quota {
namespace {

constexpr int64_t kCpuUnit = 1000;
const Time kT0 = from_micros(1'700'000'000'000'000);

ResourceQuota cpu(int64_t nominal, std::optional<int64_t> borrow = std::nullopt,
                  std::optional<int64_t> lend = std::nullopt) {
  auto scaled = [](std::optional<int64_t> v) {
    return v ? std::optional<int64_t>(*v * kCpuUnit) : std::nullopt;
  };
  return ResourceQuota{kCpu, nominal * kCpuUnit, scaled(borrow), scaled(lend)};
}
NodeSpec node(std::string name, NodeKind kind, NodeId parent, std::vector<ResourceQuota> quotas,
              std::optional<int64_t> max_jobs = std::nullopt) {
  NodeSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.parent = parent;
  s.quotas = std::move(quotas);
  s.max_jobs = max_jobs;
  return s;
}
ResourceVector cpus(int64_t n) {
  ResourceVector v;
  v.set(kCpu, n * kCpuUnit);
  return v;
}

class Engine {
 public:
  explicit Engine(QuotaGraph g) : e_(std::move(g)) {}
  QuotaEngine* operator->() { return &e_; }
  Status submit(WorkloadId id, NodeId q, int64_t n) {
    Workload w;
    w.id = id;
    w.queue = q;
    w.creation_seq = id;
    w.request = cpus(n);
    GF_RETURN_IF_ERROR(e_.add_workload(w));
    return e_.admit(id, kT0);
  }

 private:
  QuotaEngine e_;
};

struct Pair {
  NodeId root, a, b;
};
QuotaGraph pair_graph(Pair* p, ResourceQuota a, ResourceQuota b) {
  QuotaGraph g;
  p->root = *g.add_node(node("root", NodeKind::kCohort, kNoNode, {}));
  p->a = *g.add_node(node("a", NodeKind::kQueue, p->root, {a}));
  p->b = *g.add_node(node("b", NodeKind::kQueue, p->root, {b}));
  return g;
}

TEST(QuotaAccounting, BorrowingUpToBorrowingLimitAndNotBeyond) {
  Pair p;
  Engine e(pair_graph(&p, cpu(4, 2), cpu(10)));
  ASSERT_TRUE(e.submit(1, p.a, 4).ok());
  EXPECT_TRUE(e->fits(p.a, cpus(2)).borrows);
  ASSERT_TRUE(e.submit(2, p.a, 2).ok());
  const FitResult fit = e->fits(p.a, cpus(1));
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.limit, LimitKind::kBorrowingLimit);
  EXPECT_EQ(fit.node, p.a);
  EXPECT_EQ(fit.resource, kCpu);
  EXPECT_EQ(fit.shortfall, 1 * kCpuUnit);
  EXPECT_FALSE(e.submit(3, p.a, 1).ok());
  EXPECT_TRUE(e->fits(p.b, cpus(8)).fits) << "b still has its 10 minus the 2 a borrowed";
}

TEST(QuotaAccounting, LendingLimitZeroKeepsCapacityPrivate) {
  Pair p;
  Engine e(pair_graph(&p, cpu(4, std::nullopt, 0), cpu(2)));
  EXPECT_TRUE(e->fits(p.b, cpus(2)).fits);
  const FitResult fit = e->fits(p.b, cpus(3));
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.limit, LimitKind::kCohortCapacity);
  EXPECT_EQ(fit.node, p.root);
  EXPECT_EQ(fit.available, 2 * kCpuUnit);
  EXPECT_EQ(fit.shortfall, 1 * kCpuUnit);
  EXPECT_TRUE(e->fits(p.a, cpus(4)).fits);
  EXPECT_TRUE(e->fits(p.a, cpus(6)).fits) << "a may still borrow b's unused quota";
}

TEST(QuotaAccounting, LendingLimitAbsentLendsAllUnusedAndPartialLimitLendsThatMuch) {
  Pair p;
  Engine all(pair_graph(&p, cpu(4), cpu(2)));
  EXPECT_TRUE(all->fits(p.b, cpus(6)).fits);
  EXPECT_FALSE(all->fits(p.b, cpus(7)).fits);
  Engine one(pair_graph(&p, cpu(4, std::nullopt, 1), cpu(2)));  // Kueue doc: lendingLimit 1
  EXPECT_TRUE(one->fits(p.b, cpus(3)).fits);
  EXPECT_FALSE(one->fits(p.b, cpus(4)).fits);
  ASSERT_TRUE(one.submit(1, p.b, 3).ok());
  EXPECT_TRUE(one->fits(p.a, cpus(3)).fits) << "a's reserved 3 stay available to a";
  EXPECT_FALSE(one->fits(p.a, cpus(4)).fits);
}

struct Tree {
  NodeId root, x, x1, x2, y1;
};
QuotaGraph three_levels(Tree* t, std::optional<int64_t> x1_lend = std::nullopt) {
  QuotaGraph g;
  t->root = *g.add_node(node("root", NodeKind::kCohort, kNoNode, {}));
  t->x = *g.add_node(node("x", NodeKind::kCohort, t->root, {}));
  t->x1 = *g.add_node(node("x1", NodeKind::kQueue, t->x, {cpu(4, std::nullopt, x1_lend)}));
  t->x2 = *g.add_node(node("x2", NodeKind::kQueue, t->x, {cpu(4)}));
  t->y1 = *g.add_node(node("y1", NodeKind::kQueue, t->root, {cpu(4)}));
  return g;
}

TEST(QuotaAccounting, HierarchicalJobChargesLeafAndEveryAncestor) {
  Tree t;
  Engine e(three_levels(&t));
  EXPECT_EQ(e->graph().subtree_quota(t.x).get(kCpu), 8 * kCpuUnit);
  EXPECT_EQ(e->graph().subtree_quota(t.root).get(kCpu), 12 * kCpuUnit);
  ASSERT_TRUE(e.submit(1, t.x1, 6).ok());  // borrows 2 of x2's inside x
  for (NodeId n : {t.x1, t.x, t.root}) EXPECT_EQ(e->usage(n).get(kCpu), 6 * kCpuUnit);
  for (NodeId n : {t.x1, t.x, t.root}) EXPECT_EQ(e->admitted_jobs(n), 1);
  EXPECT_EQ(e->usage(t.y1).get(kCpu), 0);
  EXPECT_TRUE(e->fits(t.y1, cpus(6)).fits);
  EXPECT_FALSE(e->fits(t.y1, cpus(7)).fits);
  EXPECT_TRUE(e->fits(t.x2, cpus(6)).fits) << "x2 can borrow y1's idle quota via root";
}

TEST(QuotaAccounting, HierarchicalUsageBubblesUpOnlyPastLocalQuota) {
  Tree t;
  Engine e(three_levels(&t, 1));  // x1 keeps 3 private
  ASSERT_TRUE(e.submit(1, t.x1, 2).ok());
  EXPECT_EQ(e->usage(t.x).get(kCpu), 0);
  ASSERT_TRUE(e.submit(2, t.x1, 2).ok());
  EXPECT_EQ(e->usage(t.x1).get(kCpu), 4 * kCpuUnit);
  EXPECT_EQ(e->usage(t.x).get(kCpu), 1 * kCpuUnit);
  EXPECT_EQ(e->usage(t.root).get(kCpu), 1 * kCpuUnit);
}

TEST(QuotaAccounting, ReleaseRestoresUsageExactly) {
  Tree t;
  Engine e(three_levels(&t, 1));
  Engine expected(three_levels(&t, 1));
  ASSERT_TRUE(e.submit(1, t.x1, 5).ok());
  ASSERT_TRUE(e.submit(2, t.x2, 3).ok());
  ASSERT_TRUE(e.submit(3, t.y1, 2).ok());
  ASSERT_TRUE(expected.submit(1, t.x1, 5).ok());
  ASSERT_TRUE(expected.submit(3, t.y1, 2).ok());
  ASSERT_TRUE(e->release(2).ok());
  for (NodeId n = 0; n < e->graph().size(); ++n) {
    EXPECT_EQ(e->usage(n), expected->usage(n)) << e->graph().spec(n).name;
    EXPECT_EQ(e->admitted_jobs(n), expected->admitted_jobs(n));
  }
  ASSERT_TRUE(e->evict(1).ok());
  ASSERT_TRUE(e->release(3).ok());
  for (NodeId n = 0; n < e->graph().size(); ++n) {
    EXPECT_TRUE(e->usage(n).is_zero()) << e->graph().spec(n).name;
    EXPECT_EQ(e->admitted_jobs(n), 0);
  }
}

TEST(QuotaAccounting, MaxJobsBoundsAdmittedJobsPerNode) {
  QuotaGraph g;
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, kNoNode, {}, 2));
  const NodeId a = *g.add_node(node("a", NodeKind::kQueue, root, {cpu(10)}, 1));
  const NodeId b = *g.add_node(node("b", NodeKind::kQueue, root, {cpu(10)}));
  Engine e(std::move(g));
  ASSERT_TRUE(e.submit(1, a, 1).ok());
  FitResult fit = e->fits(a, cpus(1));
  EXPECT_EQ(fit.limit, LimitKind::kMaxJobs);
  EXPECT_EQ(fit.node, a);
  EXPECT_EQ(fit.shortfall, 1);
  ASSERT_TRUE(e.submit(2, b, 1).ok());
  fit = e->fits(b, cpus(1));
  EXPECT_EQ(fit.limit, LimitKind::kMaxJobs);
  EXPECT_EQ(fit.node, root);
  ASSERT_TRUE(e->release(1).ok());
  EXPECT_TRUE(e->fits(b, cpus(1)).fits);
}

TEST(QuotaAccounting, FitResultNamesNodeDimensionAndShortfall) {
  ResourceRegistry registry;
  const ResourceId p5 = *registry.intern("ml.p5.48xlarge");
  Pair p;
  Engine e(pair_graph(&p, cpu(4, 1), cpu(2)));
  ASSERT_TRUE(e.submit(1, p.a, 4).ok());
  const FitResult fit = e->fits(p.a, cpus(3));
  EXPECT_EQ(e->graph().describe(fit, &registry),
            "node a borrowing limit on cpu: needs 3000, available 1000 (short by 2000)");
  ResourceVector gpu_box;
  gpu_box.set(p5, 1);
  const FitResult uncovered = e->fits(p.a, gpu_box);
  EXPECT_EQ(uncovered.limit, LimitKind::kNotCovered);
  EXPECT_EQ(uncovered.resource, p5);
  EXPECT_FALSE(e->admit(99, kT0).ok());
}

TEST(QuotaAccounting, GraphValidationRejectsInconsistentSpecs) {
  QuotaGraph g;
  EXPECT_FALSE(g.add_node(node("r", NodeKind::kQueue, kNoNode, {cpu(1, 1)})).ok())
      << "limits need a cohort";
  const NodeId root = *g.add_node(node("root", NodeKind::kCohort, kNoNode, {}));
  EXPECT_FALSE(g.add_node(node("q", NodeKind::kQueue, root, {cpu(1, std::nullopt, 2)})).ok())
      << "lending_limit > nominal";
  const NodeId q = *g.add_node(node("q", NodeKind::kQueue, root, {cpu(1)}));
  EXPECT_FALSE(g.add_node(node("q", NodeKind::kQueue, root, {})).ok()) << "duplicate name";
  EXPECT_FALSE(g.add_node(node("child", NodeKind::kQueue, q, {})).ok()) << "queue as parent";
  EXPECT_FALSE(g.add_node(node("neg", NodeKind::kQueue, root, {cpu(-1)})).ok());
  EXPECT_EQ(g.find("q"), q);
}

}  // namespace
}  // namespace gf::quota
