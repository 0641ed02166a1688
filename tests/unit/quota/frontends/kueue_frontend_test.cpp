// Kueue front end: the kueue-setup.yaml set compiles to cohorts, queues and flavored dimensions
// with Kueue's lending/borrowing semantics; the supported subset is enforced field by field.
#include <gtest/gtest.h>

#include <string>

#include "frontend_test_util.h"
#include "quota/frontends/kueue_decode.h"
#include "quota/frontends/quota_objects.h"
#include "quota/quota_engine.h"

namespace gf::frontend {
namespace {

using testing::error_of;
using testing::quota_of;

constexpr int64_t kCpuUnit = 1000;
constexpr int64_t kGi = int64_t{1} << 30;

Result<QuotaObject> parse_one(const std::string& yaml) {
  Result<Json> doc = parse_yaml(yaml);
  if (!doc.ok()) return doc.status();
  return parse_k8s_object(*doc);
}

std::string cluster_queue(const std::string& spec_body, const std::string& name = "cq") {
  return "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: " + name +
         "\nspec:\n" + spec_body;
}

const char* kCpuGroup =
    "  resourceGroups:\n"
    "  - coveredResources: [cpu]\n"
    "    flavors:\n"
    "    - name: default-flavor\n"
    "      resources:\n"
    "      - name: cpu\n"
    "        nominalQuota: 4\n";

class KueueSetup : public ::testing::Test {
 protected:
  void SetUp() override {
    objects_ =
        testing::parse_k8s_text(testing::read_text(testing::testdata_path("kueue-setup.yaml")));
    ASSERT_EQ(objects_.size(), 10u);
    Result<CompiledQuota> c = compile(testing::to_map(objects_), reg_);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    c_ = std::move(*c);
    a100_ = *reg_.find("a100.flavor.gpufleet.io/nvidia.com.gpu");
    h100_ = *reg_.find("h100.flavor.gpufleet.io/nvidia.com.gpu");
    cpu_ = *reg_.find("default-flavor.flavor.gpufleet.io/cpu");
    mem_ = *reg_.find("default-flavor.flavor.gpufleet.io/memory");
    cohort_ = *c_.graph.find("cohort:research");
    team_a_ = *c_.graph.find("clusterqueue:team-a");
    team_b_ = *c_.graph.find("clusterqueue:team-b");
  }

  ResourceRegistry reg_;
  std::vector<QuotaObject> objects_;
  CompiledQuota c_;
  ResourceId a100_ = 0, h100_ = 0, cpu_ = 0, mem_ = 0;
  quota::NodeId cohort_ = 0, team_a_ = 0, team_b_ = 0;
};

TEST_F(KueueSetup, CompilesCohortAndQueuesOnFlavoredDimensions) {
  const quota::QuotaGraph& g = c_.graph;
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g.spec(cohort_).kind, quota::NodeKind::kCohort);
  EXPECT_EQ(g.parent(team_a_), cohort_);
  EXPECT_EQ(g.parent(team_b_), cohort_);
  EXPECT_EQ(quota_of(g, cohort_, a100_)->nominal, 8);
  EXPECT_EQ(quota_of(g, team_a_, cpu_)->nominal, 9 * kCpuUnit);  // flavored cpu in millicores
  EXPECT_EQ(quota_of(g, team_a_, mem_)->nominal, 36 * kGi);
  EXPECT_EQ(quota_of(g, team_a_, a100_)->nominal, 16);
  EXPECT_EQ(quota_of(g, team_a_, a100_)->borrowing_limit, 8);
  EXPECT_EQ(quota_of(g, team_a_, a100_)->lending_limit, 4);
  EXPECT_EQ(quota_of(g, team_a_, h100_)->nominal, 8);
  EXPECT_EQ(quota_of(g, team_b_, cpu_)->borrowing_limit, 0);
  EXPECT_FALSE(quota_of(g, team_a_, kGpu).has_value());  // never the plain dimension
  // Kueue: the cohort pools its own 8 plus what its queues lend (team-a keeps 16 - 4 = 12).
  EXPECT_EQ(g.local_quota(team_a_).get(a100_), 12);
  EXPECT_EQ(g.subtree_quota(cohort_).get(a100_), 8 + 4 + 8);
}

TEST_F(KueueSetup, BorrowingLimitBindsAboveNominalPlusLimit) {
  const quota::QuotaGraph& g = c_.graph;
  ResourceVector req;
  req.set(a100_, 24);  // 12 private + min(20 in the cohort, 4 lent + 8 borrowing limit)
  EXPECT_TRUE(g.fits(g.empty_ledger(), team_a_, req).fits);
  req.set(a100_, 25);
  const quota::FitResult fit = g.fits(g.empty_ledger(), team_a_, req);
  EXPECT_EQ(fit.limit, quota::LimitKind::kBorrowingLimit);
  EXPECT_EQ(fit.node, team_a_);
  ResourceVector cpus;
  cpus.set(cpu_, 13 * kCpuUnit);  // team-b may not borrow cpu
  EXPECT_EQ(g.fits(g.empty_ledger(), team_b_, cpus).limit, quota::LimitKind::kBorrowingLimit);
  cpus.set(cpu_, 21 * kCpuUnit);  // team-a may take all of team-b's idle cpu
  EXPECT_TRUE(g.fits(g.empty_ledger(), team_a_, cpus).fits);
}

TEST_F(KueueSetup, FlavorOptionsInResourceGroupOrderWithInstanceTypes) {
  const auto& opts = c_.flavors[team_a_];
  ASSERT_EQ(opts.size(), 3u);
  EXPECT_EQ(opts[0].flavor, "default-flavor");
  EXPECT_EQ(opts[0].instance_type, "");
  EXPECT_EQ(opts[0].dims, (std::map<ResourceId, ResourceId>{{kCpu, cpu_}, {kMemory, mem_}}));
  EXPECT_EQ(opts[1].flavor, "a100");
  EXPECT_EQ(opts[1].instance_type, "p4d.24xlarge");
  EXPECT_EQ(opts[1].dims, (std::map<ResourceId, ResourceId>{{kGpu, a100_}}));
  EXPECT_EQ(opts[2].instance_type, "p5.48xlarge");
  EXPECT_EQ(opts[2].dims, (std::map<ResourceId, ResourceId>{{kGpu, h100_}}));
  EXPECT_TRUE(c_.flavors[cohort_].empty());
  EXPECT_TRUE(c_.charged[team_a_].all());
}

TEST_F(KueueSetup, PoliciesQueueingWeightLocalQueuesAndPriorityClasses) {
  const quota::NodeSpec& a = c_.graph.spec(team_a_);
  EXPECT_EQ(a.preemption.within_queue, quota::WithinQueuePolicy::kLowerPriority);
  EXPECT_EQ(a.preemption.reclaim, quota::ReclaimPolicy::kAny);
  EXPECT_EQ(a.preemption.borrow_within_cohort, quota::BorrowWithinCohortPolicy::kLowerPriority);
  EXPECT_EQ(a.preemption.max_priority_threshold, 100);
  EXPECT_EQ(a.queueing, quota::QueueingStrategy::kBestEffortFifo);
  EXPECT_EQ(a.weight_milli, 2000);
  const quota::NodeSpec& b = c_.graph.spec(team_b_);
  EXPECT_EQ(b.queueing, quota::QueueingStrategy::kStrictFifo);
  EXPECT_EQ(b.preemption.reclaim, quota::ReclaimPolicy::kLowerPriority);
  EXPECT_EQ(b.preemption.within_queue, quota::WithinQueuePolicy::kNever);
  EXPECT_EQ(c_.local_queue_leaf.at("team-a/user-queue"), team_a_);
  EXPECT_EQ(c_.local_queue_cq.at("team-b/user-queue"), "team-b");
  EXPECT_EQ(c_.priority_classes.at("high-priority"), 1000);
  EXPECT_EQ(c_.priority_classes.at("low-priority"), 100);
  EXPECT_TRUE(c_.warnings.empty()) << c_.warnings.front();
  EXPECT_EQ(objects_[6].key, (ObjectKey{Kind::kLocalQueue, "team-a", "user-queue"}));
}

TEST(KueueFrontend, ResourceNotInCoveredResourcesRefusedNamingTheField) {
  Result<QuotaObject> r = parse_one(
      cluster_queue("  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
                    "      resources:\n      - {name: cpu, nominalQuota: 1}\n"
                    "      - {name: nvidia.com/gpu, nominalQuota: 1}\n"));
  EXPECT_EQ(error_of(r),
            "spec.resourceGroups[0].flavors[0].resources[1].name: \"nvidia.com/gpu\" "
            "is not in coveredResources");
}

TEST(KueueFrontend, FlavorMissingACoveredResourceRefused) {
  Result<QuotaObject> r = parse_one(cluster_queue(
      "  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n    - name: f\n"
      "      resources:\n      - {name: cpu, nominalQuota: 1}\n"));
  EXPECT_TRUE(error_of(r).starts_with(
      "spec.resourceGroups[0].flavors[0].resources: no quota for \"memory\""))
      << error_of(r);
}

TEST(KueueFrontend, LimitsWithoutCohortRefused) {
  Result<QuotaObject> r = parse_one(
      cluster_queue("  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
                    "      resources:\n      - {name: cpu, nominalQuota: 1, borrowingLimit: 1}\n"));
  EXPECT_EQ(error_of(r),
            "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: only "
            "allowed for a ClusterQueue in a cohort");
  r = parse_one(cluster_queue(
      "  cohort: c\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
      "      resources:\n      - {name: cpu, nominalQuota: 1, lendingLimit: 2}\n"));
  EXPECT_EQ(
      error_of(r),
      "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: 2 exceeds nominalQuota 1");
}

TEST(KueueFrontend, UnsupportedClusterQueueFieldsRefused) {
  EXPECT_TRUE(
      error_of(parse_one(cluster_queue("  namespaceSelector:\n    matchLabels: {team: a}\n")))
          .starts_with("spec.namespaceSelector.matchLabels: not supported"));
  EXPECT_TRUE(error_of(parse_one(cluster_queue("  stopPolicy: Hold\n")))
                  .starts_with("spec.stopPolicy: not supported"));
  EXPECT_TRUE(parse_one(cluster_queue("  stopPolicy: None\n")).ok());
  EXPECT_TRUE(error_of(parse_one(cluster_queue("  admissionChecks: [prov]\n")))
                  .starts_with("spec.admissionChecks: not supported"));
  EXPECT_TRUE(
      error_of(parse_one(cluster_queue("  flavorFungibility: {whenCanBorrow: TryNextFlavor}\n")))
          .starts_with("spec.flavorFungibility.whenCanBorrow: not supported"));
  EXPECT_TRUE(
      error_of(parse_one(cluster_queue("  queueingStrategy: LIFO\n")))
          .starts_with("spec.queueingStrategy: expected one of BestEffortFIFO, StrictFIFO"));
  EXPECT_TRUE(error_of(parse_one(cluster_queue("  preemption: {withinClusterQueue: Always}\n")))
                  .starts_with("spec.preemption.withinClusterQueue: expected one of"));
  EXPECT_TRUE(
      error_of(parse_one(cluster_queue(
                   "  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n")))
          .starts_with("spec.preemption.borrowWithinCohort.policy: needs reclaimWithinCohort"));
}

TEST(KueueFrontend, ResourceFlavorOnlySelectsByInstanceType) {
  const std::string head =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f}\nspec:\n";
  EXPECT_TRUE(error_of(parse_one(head + "  nodeLabels: {cloud.google.com/gke-nodepool: gpu}\n"))
                  .starts_with("spec.nodeLabels.cloud.google.com/gke-nodepool: not supported"));
  EXPECT_TRUE(error_of(parse_one(head + "  nodeTaints: [{key: k, value: v, effect: NoSchedule}]\n"))
                  .starts_with("spec.nodeTaints: not supported"));
  EXPECT_TRUE(error_of(parse_one(head + "  topologyName: default\n"))
                  .starts_with("spec.topologyName: not supported"));
  EXPECT_TRUE(
      parse_one(head + "  nodeLabels: {node.kubernetes.io/instance-type: ml.g5.xlarge}\n").ok());
}

TEST(KueueFrontend, UnknownFieldsAreKeptWithAWarning) {
  Result<QuotaObject> r = parse_one(cluster_queue(std::string(kCpuGroup) + "  colour: blue\n"));
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->warnings, std::vector<std::string>{"spec.colour: unknown field, ignored"});
  EXPECT_EQ(r->doc["spec"]["colour"], "blue");
}

TEST(KueueFrontend, UndeclaredCohortBecomesImplicitRootAndStandaloneQueueIsARoot) {
  ResourceRegistry reg;
  Result<QuotaObject> a =
      parse_one(cluster_queue("  cohort: shared\n" + std::string(kCpuGroup), "a"));
  Result<QuotaObject> b = parse_one(cluster_queue(kCpuGroup, "b"));
  ASSERT_TRUE(a.ok() && b.ok());
  Result<CompiledQuota> c = compile(testing::to_map({*a, *b}), reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  const quota::NodeId shared = *c->graph.find("cohort:shared");
  EXPECT_EQ(c->graph.spec(shared).kind, quota::NodeKind::kCohort);
  EXPECT_EQ(c->graph.parent(shared), quota::kNoNode);
  EXPECT_EQ(c->graph.parent(*c->graph.find("clusterqueue:a")), shared);
  EXPECT_EQ(c->graph.parent(*c->graph.find("clusterqueue:b")), quota::kNoNode);
  // ResourceFlavor default-flavor is missing: no flavor option, a warning, quota still declared.
  EXPECT_TRUE(c->flavors[*c->graph.find("clusterqueue:a")].empty());
  ASSERT_FALSE(c->warnings.empty());
  EXPECT_TRUE(
      c->warnings[0].starts_with("ClusterQueue a: spec.resourceGroups[0].flavors[0].name: "
                                 "ResourceFlavor \"default-flavor\" does not exist"))
      << c->warnings[0];
}

TEST(KueueFrontend, CohortCycleRefused) {
  const std::string head = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: ";
  Result<QuotaObject> a = parse_one(head + "a}\nspec: {parentName: b}\n");
  Result<QuotaObject> b = parse_one(head + "b}\nspec: {parentName: a}\n");
  ASSERT_TRUE(a.ok() && b.ok());
  ResourceRegistry reg;
  EXPECT_EQ(error_of(compile(testing::to_map({*a, *b}), reg)),
            "Cohort a: spec.parentName: cohorts form a cycle (a -> b -> a)");
  // Limits on a Cohort need a parent.
  Result<QuotaObject> c = parse_one(
      head +
      "c}\nspec:\n  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
      "      resources:\n      - {name: cpu, nominalQuota: 1, lendingLimit: 1}\n");
  EXPECT_EQ(error_of(c),
            "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: only allowed for a "
            "Cohort with spec.parentName");
}

TEST(KueueFrontend, HierarchicalCohortsNestUnderTheirParent) {
  const std::string head = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: ";
  Result<QuotaObject> child = parse_one(head + "child}\nspec: {parentName: org}\n");
  Result<QuotaObject> cq = parse_one(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
      "metadata: {name: q}\nspec:\n  cohortName: child\n" +
      std::string(kCpuGroup));
  ASSERT_TRUE(child.ok() && cq.ok()) << error_of(child) << error_of(cq);
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map({*child, *cq}), reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  const quota::NodeId org = *c->graph.find("cohort:org");
  const quota::NodeId ch = *c->graph.find("cohort:child");
  EXPECT_EQ(c->graph.parent(ch), org);
  EXPECT_EQ(c->graph.parent(*c->graph.find("clusterqueue:q")), ch);
}

TEST(KueueFrontend, LocalQueueDefaultsNamespaceAndToleratesMissingClusterQueue) {
  Result<QuotaObject> lq = parse_one(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
      "metadata: {name: lq}\nspec: {clusterQueue: later}\n");
  ASSERT_TRUE(lq.ok()) << error_of(lq);
  EXPECT_EQ(lq->key, (ObjectKey{Kind::kLocalQueue, "default", "lq"}));
  EXPECT_EQ(lq->doc["metadata"]["namespace"], "default");
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map({*lq}), reg);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->local_queue_cq.at("default/lq"), "later");
  EXPECT_FALSE(c->local_queue_leaf.contains("default/lq"));
  EXPECT_EQ(c->warnings.size(), 1u);
}

TEST(KueueFrontend, WorkloadPriorityClassValueMustFitInt32) {
  const std::string head =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: p}\n";
  EXPECT_EQ(error_of(parse_one(head + "value: 3000000000\n")),
            "value: must fit in a 32-bit integer, got 3000000000");
  EXPECT_EQ(error_of(parse_one(head + "description: x\n")), "value: is required");
}

TEST(KueueFrontend, ApiVersionsAndKindNames) {
  EXPECT_TRUE(is_k8s_quota_kind("kueue.x-k8s.io/v1beta1", "ClusterQueue"));
  EXPECT_TRUE(is_k8s_quota_kind("kueue.x-k8s.io/v1beta2", "LocalQueue"));
  EXPECT_TRUE(is_k8s_quota_kind("kueue.x-k8s.io/v1alpha1", "Cohort"));
  EXPECT_FALSE(is_k8s_quota_kind("kueue.x-k8s.io/v1alpha1", "ClusterQueue"));
  EXPECT_TRUE(is_k8s_quota_kind("scheduling.sigs.k8s.io/v1beta1", "ElasticQuotaTree"));
  EXPECT_FALSE(is_k8s_quota_kind("kubeflow.org/v1", "PyTorchJob"));
  EXPECT_EQ(kind_from_plural("clusterqueues"), Kind::kClusterQueue);
  EXPECT_EQ(kind_from_plural("clusterqueue"), Kind::kClusterQueue);
  EXPECT_EQ(kind_from_plural("quota-shares"), Kind::kQuotaShare);
  EXPECT_EQ(kind_from_plural("quota-share"), Kind::kQuotaShare);
  EXPECT_EQ(kind_from_plural("workloadpriorityclasses"), Kind::kWorkloadPriorityClass);
  EXPECT_FALSE(kind_from_plural("pods").has_value());
  EXPECT_EQ(kind_plural(Kind::kSchedulingPolicy), "scheduling-policies");
  EXPECT_EQ(kind_name(Kind::kServiceEnvironment), "ServiceEnvironment");
  EXPECT_TRUE(namespaced(Kind::kLocalQueue));
  EXPECT_TRUE(namespaced(Kind::kElasticQuotaTree));
  EXPECT_FALSE(namespaced(Kind::kClusterQueue));
  EXPECT_TRUE(error_of(parse_k8s_object(Json{{"apiVersion", "v1"}, {"kind", "Pod"}}))
                  .starts_with("kind: v1 Pod is not a quota kind"));
}

TEST(KueueFrontend, LongFlavorAndResourceNamesGetHashedWithinRegistryLimits) {
  const std::string flavor(240, 'f');
  const std::string dim = detail::flavored_dim_name(flavor, "example.com/" + std::string(70, 'r'));
  ResourceRegistry reg;
  EXPECT_TRUE(reg.intern(dim).ok()) << dim;
}

}  // namespace
}  // namespace gf::frontend
