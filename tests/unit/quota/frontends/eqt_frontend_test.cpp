// ElasticQuotaTree front end (docs/quota-frontends.md): the published example, min/max mapping,
// max-jobs, queue objects, namespace mapping, and every refusal naming its field.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "frontend_test_util.h"
#include "quota/frontends/quota_objects.h"
#include "quota/quota_engine.h"

namespace gf::frontend {
namespace {

using testing::error_of;
using testing::quota_of;

constexpr int64_t kCpuUnit = 1000;
constexpr int64_t kGi = int64_t{1} << 30;

Result<QuotaObject> parse_yaml_object(const std::string& yaml) {
  Result<Json> doc = parse_yaml(yaml);
  if (!doc.ok()) return doc.status();
  return parse_k8s_object(*doc);
}

Result<CompiledQuota> compile_yaml(const std::string& yaml, ResourceRegistry& registry) {
  Result<QuotaObject> obj = parse_yaml_object(yaml);
  if (!obj.ok()) return obj.status();
  return compile(testing::to_map({*obj}), registry);
}

std::string tree(const std::string& root_body) {
  return "apiVersion: scheduling.sigs.k8s.io/v1beta1\nkind: ElasticQuotaTree\n"
         "metadata:\n  name: tree\n  namespace: kube-system\nspec:\n  root:\n" +
         root_body;
}

TEST(ElasticQuotaTreeFrontend, PublishedExampleCompilesToRootCohortAndLeafWithMaxJobs) {
  const auto objects =
      testing::parse_k8s_text(testing::read_text(testing::example_path("elasticquotatree.yaml")));
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0].key,
            (ObjectKey{Kind::kElasticQuotaTree, "kube-system", "elasticquotatree"}));
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(objects), reg);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const quota::QuotaGraph& g = c->graph;
  ASSERT_EQ(g.size(), 2u);
  const quota::NodeId root = *g.find("root");
  const quota::NodeId child = *g.find("child-2");
  EXPECT_EQ(g.spec(root).kind, quota::NodeKind::kCohort);
  EXPECT_TRUE(g.is_queue(child));
  EXPECT_EQ(g.parent(child), root);
  // kube-queue/max-jobs is a job count, not a dimension; 10000000000 fits int64.
  EXPECT_EQ(g.spec(child).max_jobs, 1);
  EXPECT_EQ(g.spec(root).max_jobs, 10'000'000'000);
  EXPECT_FALSE(quota_of(g, child, kMaxJobs).has_value());
  EXPECT_EQ(c->namespace_leaf.at("default"), child);
  // Root: min = capacity. Child: min 0, so nominal 0 and borrowing limit = max - min.
  EXPECT_EQ(g.subtree_quota(root).get(kCpu), 999900 * kCpuUnit);
  EXPECT_EQ(g.subtree_quota(root).get(kMemory), 400000 * kGi);
  EXPECT_EQ(g.subtree_quota(root).get(kGpu), 100000);
  const auto cpu = quota_of(g, child, kCpu);
  const auto mem = quota_of(g, child, kMemory);
  const auto gpu = quota_of(g, child, kGpu);
  ASSERT_TRUE(cpu && mem && gpu);
  EXPECT_EQ(cpu->nominal, 0);
  EXPECT_EQ(cpu->borrowing_limit, 10000 * kCpuUnit);
  EXPECT_EQ(mem->borrowing_limit, 10000 * kGi);
  EXPECT_EQ(gpu->borrowing_limit, 10000);
  EXPECT_FALSE(cpu->lending_limit.has_value());  // unused min is lent
  // Charged: only what the leaf declares (pods, extended resources stay unlimited).
  EXPECT_TRUE(c->charged[child].test(kCpu) && c->charged[child].test(kGpu) &&
              c->charged[child].test(kMemory));
  EXPECT_FALSE(c->charged[child].test(kMaxJobs));
  EXPECT_FALSE(c->charged[child].test(kPods));
  // Leaf queues: BestEffortFIFO, no preemption.
  EXPECT_EQ(g.spec(child).queueing, quota::QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(g.spec(child).preemption.reclaim, quota::ReclaimPolicy::kNever);
  EXPECT_EQ(g.spec(child).preemption.within_queue, quota::WithinQueuePolicy::kNever);
}

TEST(ElasticQuotaTreeFrontend, OneQueueObjectPerTreeNodeWithDeterministicSuffix) {
  const auto objects =
      testing::parse_k8s_text(testing::read_text(testing::example_path("elasticquotatree.yaml")));
  ResourceRegistry reg1, reg2;
  Result<CompiledQuota> a = compile(testing::to_map(objects), reg1);
  Result<CompiledQuota> b = compile(testing::to_map(objects), reg2);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->queues.size(), 2u);
  EXPECT_TRUE(std::regex_match(a->queues[0].name, std::regex("root-[a-z0-9]{5}")));
  EXPECT_TRUE(std::regex_match(a->queues[1].name, std::regex("root-child-2-[a-z0-9]{5}")))
      << a->queues[1].name;
  EXPECT_EQ(a->queues[1].ns, "kube-queue");
  EXPECT_EQ(a->queues[1].tree_node, "child-2");
  EXPECT_EQ(a->queues[1].node, *a->graph.find("child-2"));
  EXPECT_EQ(a->queues[1].name, b->queues[1].name);
}

TEST(ElasticQuotaTreeFrontend, MaxJobsOneAdmitsOneJobAtATime) {
  const auto objects =
      testing::parse_k8s_text(testing::read_text(testing::example_path("elasticquotatree.yaml")));
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(objects), reg);
  ASSERT_TRUE(c.ok());
  const quota::NodeId leaf = c->namespace_leaf.at("default");
  quota::QuotaEngine engine(c->graph);
  for (quota::WorkloadId id : {1, 2}) {
    quota::Workload w;
    w.id = id;
    w.queue = leaf;
    w.creation_seq = id;
    w.request.set(kCpu, 4 * kCpuUnit);
    w.request.set(kGpu, 1);
    ASSERT_TRUE(engine.add_workload(w).ok());
  }
  EXPECT_TRUE(engine.fits(1).fits);
  ASSERT_TRUE(engine.admit(1, Time{}).ok());
  EXPECT_EQ(engine.fits(2).limit, quota::LimitKind::kMaxJobs);
  EXPECT_EQ(engine.admit(2, Time{}).code(), ErrorCode::kConflict) << "max jobs: one at a time";
  ASSERT_TRUE(engine.release(1).ok());
  EXPECT_TRUE(engine.admit(2, Time{}).ok());
}

TEST(ElasticQuotaTreeFrontend, InvalidQuantityNamesTheField) {
  Result<QuotaObject> r = parse_yaml_object(
      tree("    name: root\n    min: {cpu: 10}\n    max: {cpu: 10}\n    children:\n"
           "    - name: a\n      max: {cpu: 5Gb}\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  EXPECT_TRUE(error_of(r).starts_with("spec.root.children[0].max.cpu: invalid quantity \"5Gb\""))
      << error_of(r);
}

TEST(ElasticQuotaTreeFrontend, ChildMinAboveParentMinRefusedNamingTheField) {
  Result<QuotaObject> r = parse_yaml_object(
      tree("    name: root\n    min: {cpu: 10}\n    max: {cpu: 10}\n    children:\n"
           "    - name: a\n      min: {cpu: 4}\n      max: {cpu: 8}\n"
           "    - name: b\n      min: {cpu: 12}\n      max: {cpu: 12}\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(
      error_of(r).starts_with("spec.root.children[1].min.cpu: 12 exceeds the parent's min 10"))
      << error_of(r);
}

TEST(ElasticQuotaTreeFrontend, WrongNamespaceRefusedNamingMetadataNamespace) {
  Result<QuotaObject> r = parse_yaml_object(
      "apiVersion: scheduling.sigs.k8s.io/v1beta1\nkind: ElasticQuotaTree\n"
      "metadata: {name: t, namespace: default}\nspec:\n  root: {name: root}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(error_of(r).starts_with("metadata.namespace: ")) << error_of(r);
  EXPECT_NE(error_of(r).find("kube-system"), std::string::npos);
}

TEST(ElasticQuotaTreeFrontend, MaxBelowMinRefusedNamingMax) {
  Result<QuotaObject> r = parse_yaml_object(
      tree("    name: root\n    min: {cpu: 10}\n    max: {cpu: 10}\n    children:\n"
           "    - name: a\n      min: {memory: 4Gi}\n      max: {memory: 2Gi}\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(
      error_of(r).starts_with("spec.root.children[0].max.memory: 2147483648 is less than min"))
      << error_of(r);
}

TEST(ElasticQuotaTreeFrontend, NamespaceInTwoLeavesRefused) {
  Result<QuotaObject> r =
      parse_yaml_object(tree("    name: root\n    children:\n"
                             "    - name: a\n      namespaces: [team]\n"
                             "    - name: b\n      namespaces: [other, team]\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(error_of(r).starts_with(
      "spec.root.children[1].namespaces[1]: namespace \"team\" is already mapped to leaf \"a\""))
      << error_of(r);
}

TEST(ElasticQuotaTreeFrontend, NamespacesOnInnerNodeRefused) {
  Result<QuotaObject> r = parse_yaml_object(
      tree("    name: root\n    children:\n"
           "    - name: a\n      namespaces: [team]\n      children:\n      - name: a1\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(error_of(r).starts_with("spec.root.children[0].namespaces: only leaves"))
      << error_of(r);
}

TEST(ElasticQuotaTreeFrontend, RootMaxAboveMinIsAWarningNotAnError) {
  Result<QuotaObject> r = parse_yaml_object(
      tree("    name: root\n    min: {cpu: 10}\n    max: {cpu: 20}\n    extra: 1\n"));
  ASSERT_TRUE(r.ok()) << error_of(r);
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[0], "spec.root.extra: unknown field, ignored");
  EXPECT_TRUE(r->warnings[1].starts_with("spec.root.max.cpu: 20 exceeds min 10")) << r->warnings[1];
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map({*r}), reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  EXPECT_EQ(c->warnings.size(), 2u);
  EXPECT_TRUE(c->warnings[1].starts_with("ElasticQuotaTree tree: spec.root.max.cpu"));
}

TEST(ElasticQuotaTreeFrontend, ParentMinIsTheSubtreeGuaranteeNotAddedToChildren) {
  ResourceRegistry reg;
  Result<CompiledQuota> c =
      compile_yaml(tree("    name: root\n    min: {cpu: 20}\n    max: {cpu: 20}\n    children:\n"
                        "    - name: a\n      min: {cpu: 6}\n      max: {cpu: 10}\n"
                        "    - name: b\n      min: {cpu: 2}\n      max: {cpu: 3}\n"),
                   reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  const quota::QuotaGraph& g = c->graph;
  const quota::NodeId root = *g.find("root"), a = *g.find("a"), b = *g.find("b");
  EXPECT_EQ(g.subtree_quota(root).get(kCpu), 20 * kCpuUnit);   // not 20 + 6 + 2
  EXPECT_EQ(quota_of(g, root, kCpu)->nominal, 12 * kCpuUnit);  // what the children do not guarantee
  EXPECT_EQ(quota_of(g, a, kCpu)->nominal, 6 * kCpuUnit);
  EXPECT_EQ(quota_of(g, a, kCpu)->borrowing_limit, 4 * kCpuUnit);
  EXPECT_EQ(quota_of(g, b, kCpu)->borrowing_limit, 1 * kCpuUnit);
  quota::Ledger ledger = g.empty_ledger();
  ResourceVector req;
  req.set(kCpu, 10 * kCpuUnit);
  EXPECT_TRUE(g.fits(ledger, a, req).fits);  // max of a
  req.set(kCpu, 11 * kCpuUnit);
  EXPECT_EQ(g.fits(ledger, a, req).limit, quota::LimitKind::kBorrowingLimit);
}

TEST(ElasticQuotaTreeFrontend, ResourceTheRootDoesNotNameIsLimitedOnlyByTheLeaf) {
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile_yaml(tree("    name: root\n    min: {cpu: 10}\n    children:\n"
                                              "    - name: a\n      max: {cpu: 10, pods: 5}\n"),
                                         reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  const quota::NodeId a = *c->graph.find("a");
  ResourceVector req;
  req.set(kPods, 5);
  EXPECT_TRUE(c->graph.fits(c->graph.empty_ledger(), a, req).fits);
  req.set(kPods, 6);
  EXPECT_EQ(c->graph.fits(c->graph.empty_ledger(), a, req).limit,
            quota::LimitKind::kBorrowingLimit);
  EXPECT_TRUE(c->charged[a].test(kPods));
}

TEST(ElasticQuotaTreeFrontend, DuplicateNodeNameRefused) {
  Result<QuotaObject> r =
      parse_yaml_object(tree("    name: root\n    children:\n    - name: a\n    - name: a\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(error_of(r).starts_with("spec.root.children[1].name: duplicate node name \"a\""))
      << error_of(r);
}

TEST(ElasticQuotaTreeFrontend, OnlyOneTreeMayExist) {
  ResourceRegistry reg;
  Result<QuotaObject> first = parse_yaml_object(tree("    name: root\n"));
  ASSERT_TRUE(first.ok());
  std::string second_yaml = tree("    name: root\n");
  second_yaml.replace(second_yaml.find("name: tree"), 10, "name: other");
  Result<QuotaObject> second = parse_yaml_object(second_yaml);
  ASSERT_TRUE(second.ok());
  const Status st = check_apply(testing::to_map({*first}), {*second}, reg);
  EXPECT_TRUE(
      error_of(st).starts_with("ElasticQuotaTree other: metadata.name: only one ElasticQuotaTree"))
      << error_of(st);
  EXPECT_TRUE(check_apply(testing::to_map({*first}), {*first}, reg).ok());  // update in place
}

}  // namespace
}  // namespace gf::frontend
