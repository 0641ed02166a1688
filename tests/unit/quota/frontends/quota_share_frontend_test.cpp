// AWS Batch quota shares front end (docs/quota-frontends.md): the published bundle, the strategy
// mapping, job queue status, the AWS validation rules (each refused naming its field), and the
// published example's first step run end to end on the quota engine.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend_test_util.h"
#include "quota/frontends/quota_objects.h"
#include "quota/quota_engine.h"

namespace gf::frontend {
namespace {

using testing::error_of;
using testing::quota_of;

Json example_bundle() {
  Result<Json> j = parse_json(testing::read_text(testing::example_path("quota-shares.json")));
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  return j.ok() ? *j : Json::object();
}

std::vector<QuotaObject> parse_bundle(const Json& doc) {
  Result<std::vector<QuotaObject>> r = parse_quota_share_bundle(doc);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<QuotaObject>{};
}

Json share(const std::string& name, const std::string& strategy = "LEND") {
  return Json{
      {"quotaShareName", name},
      {"jobQueue", "shared-training-queue"},
      {"capacityLimits", Json::array({{{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 1}}})},
      {"resourceSharingConfiguration", {{"strategy", strategy}}}};
}

TEST(QuotaShareFrontend, BundleParsesInOrderEnvironmentPolicyQueueShares) {
  const Json doc = example_bundle();
  EXPECT_TRUE(is_quota_share_bundle(doc));
  const auto objects = parse_bundle(doc);
  ASSERT_EQ(objects.size(), 6u);
  EXPECT_EQ(objects[0].key, (ObjectKey{Kind::kServiceEnvironment, "", "training-env"}));
  EXPECT_EQ(objects[1].key, (ObjectKey{Kind::kSchedulingPolicy, "", "quota-policy"}));
  EXPECT_EQ(objects[2].key, (ObjectKey{Kind::kJobQueue, "", "shared-training-queue"}));
  EXPECT_EQ(objects[3].key, (ObjectKey{Kind::kQuotaShare, "", "QS1"}));
  EXPECT_EQ(objects[5].key.name, "QS3");
  for (const QuotaObject& o : objects) EXPECT_TRUE(o.warnings.empty()) << o.warnings.front();
  // Defaults are filled into the stored bodies.
  EXPECT_EQ(objects[0].doc["state"], "ENABLED");
  EXPECT_EQ(objects[2].doc["state"], "ENABLED");
  EXPECT_EQ(objects[3].doc["state"], "ENABLED");
  EXPECT_FALSE(is_quota_share_bundle(share("QS1")));  // a single share body is not a bundle
}

TEST(QuotaShareFrontend, DefaultsFilledForPolicyAndShare) {
  Result<QuotaObject> p = parse_scheduling_policy(Json{{"name", "p"}});
  ASSERT_TRUE(p.ok()) << error_of(p);
  EXPECT_EQ(p->doc["quotaSharePolicy"]["idleResourceAssignmentStrategy"], "FIFO");
  Result<QuotaObject> s = parse_quota_share(share("QS9", "LEND_AND_BORROW"));
  ASSERT_TRUE(s.ok()) << error_of(s);
  EXPECT_EQ(s->doc["preemptionConfiguration"]["inSharePreemption"], "DISABLED");
  EXPECT_EQ(s->doc["resourceSharingConfiguration"]["borrowLimit"], -1);
}

TEST(QuotaShareFrontend, BundleCompilesToOneCohortPerQueueAndOneLeafPerShare) {
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(parse_bundle(example_bundle())), reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  const quota::QuotaGraph& g = c->graph;
  const ResourceId g5 = *reg.find("ml.g5.xlarge");
  const quota::NodeId root = *g.find("jobqueue:shared-training-queue");
  const quota::NodeId qs1 = c->share_leaf.at({"shared-training-queue", "QS1"});
  const quota::NodeId qs2 = c->share_leaf.at({"shared-training-queue", "QS2"});
  const quota::NodeId qs3 = c->share_leaf.at({"shared-training-queue", "QS3"});
  EXPECT_EQ(g.spec(qs1).name, "share:shared-training-queue/QS1");
  for (quota::NodeId n : {qs1, qs2, qs3}) {
    EXPECT_EQ(g.parent(n), root);
    EXPECT_EQ(quota_of(g, n, g5)->nominal, 1);
    EXPECT_EQ(g.spec(n).preemption.reclaim, quota::ReclaimPolicy::kAny);
    EXPECT_TRUE(c->charged[n].all());
  }
  EXPECT_EQ(quota_of(g, qs1, g5)->borrowing_limit, 2);  // 200% of 1
  EXPECT_FALSE(quota_of(g, qs1, g5)->lending_limit.has_value());
  EXPECT_EQ(quota_of(g, qs2, g5)->borrowing_limit, 0);  // LEND
  EXPECT_FALSE(quota_of(g, qs2, g5)->lending_limit.has_value());
  EXPECT_EQ(quota_of(g, qs3, g5)->borrowing_limit, 0);  // RESERVE
  EXPECT_EQ(quota_of(g, qs3, g5)->lending_limit, 0);
  EXPECT_EQ(g.spec(qs1).preemption.within_queue, quota::WithinQueuePolicy::kLowerPriority);
  EXPECT_EQ(g.spec(qs2).preemption.within_queue, quota::WithinQueuePolicy::kNever);
  EXPECT_EQ(g.spec(qs3).preemption.within_queue, quota::WithinQueuePolicy::kNever);
  EXPECT_EQ(c->root_ceiling.at(root).get(g5), 3);
  EXPECT_EQ(c->idle[root], IdleStrategy::kFifo);
  const JobQueueStatus& st = c->job_queue_status.at("shared-training-queue");
  EXPECT_EQ(st.state, "ENABLED");
  EXPECT_EQ(st.status, "VALID");
  EXPECT_EQ(st.status_reason, "JobQueue Healthy");
  EXPECT_TRUE(c->environment_clusters.at("shared-training-queue").empty());
  EXPECT_TRUE(c->flavors[qs1].empty());
}

TEST(QuotaShareFrontend, ReserveMeansLendingZeroAndBorrowingZero) {
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(parse_bundle(example_bundle())), reg);
  ASSERT_TRUE(c.ok());
  const ResourceId g5 = *reg.find("ml.g5.xlarge");
  const quota::NodeId root = *c->graph.find("jobqueue:shared-training-queue");
  const quota::NodeId qs3 = c->share_leaf.at({"shared-training-queue", "QS3"});
  EXPECT_EQ(c->graph.local_quota(qs3).get(g5), 1);     // never lent
  EXPECT_EQ(c->graph.subtree_quota(root).get(g5), 2);  // only QS1 and QS2 pool
}

TEST(QuotaShareFrontend, LendAndBorrowUnlimitedAndFloorOfPercentage) {
  Json doc = example_bundle();
  doc["quotaShares"][0]["resourceSharingConfiguration"]["borrowLimit"] = -1;
  doc["quotaShares"][1]["resourceSharingConfiguration"] = {{"strategy", "LEND_AND_BORROW"},
                                                           {"borrowLimit", 150}};
  doc["quotaShares"][1]["capacityLimits"][0]["maxCapacity"] = 3;
  doc["serviceEnvironment"]["capacityLimits"][0]["maxCapacity"] = 5;
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(parse_bundle(doc)), reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  const ResourceId g5 = *reg.find("ml.g5.xlarge");
  EXPECT_FALSE(quota_of(c->graph, c->share_leaf.at({"shared-training-queue", "QS1"}), g5)
                   ->borrowing_limit.has_value());
  EXPECT_EQ(
      quota_of(c->graph, c->share_leaf.at({"shared-training-queue", "QS2"}), g5)->borrowing_limit,
      4);  // floor(150% x 3)
}

TEST(QuotaShareFrontend, FairShareIdleStrategyAtTheRoot) {
  Json doc = example_bundle();
  doc["schedulingPolicy"]["quotaSharePolicy"]["idleResourceAssignmentStrategy"] = "FAIR_SHARE";
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(parse_bundle(doc)), reg);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->idle[*c->graph.find("jobqueue:shared-training-queue")], IdleStrategy::kFairShare);
}

TEST(QuotaShareFrontend, ArnReferencesResolveToNamesAndClustersAreKept) {
  Json doc = example_bundle();
  doc["jobQueue"]["schedulingPolicyArn"] =
      "arn:aws:batch:us-west-2:123456789012:scheduling-policy/quota-policy";
  doc["jobQueue"]["serviceEnvironmentOrder"][0]["serviceEnvironment"] =
      "arn:aws:batch:us-west-2:123456789012:service-environment/training-env";
  doc["serviceEnvironment"]["clusters"] = {"east", "west"};
  doc["quotaShares"][0]["jobQueue"] =
      "arn:aws:batch:us-west-2:123456789012:job-queue/shared-training-queue";
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(parse_bundle(doc)), reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  EXPECT_EQ(c->job_queue_status.at("shared-training-queue").status, "VALID");
  EXPECT_EQ(c->environment_clusters.at("shared-training-queue"),
            (std::vector<std::string>{"east", "west"}));
  EXPECT_TRUE(c->share_leaf.contains({"shared-training-queue", "QS1"}));
}

TEST(QuotaShareFrontend, QueueWithoutItsPolicyIsInvalidWithReason) {
  auto objects = parse_bundle(example_bundle());
  ObjectMap map = testing::to_map(objects);
  map.erase(ObjectKey{Kind::kSchedulingPolicy, "", "quota-policy"});
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(map, reg);
  ASSERT_TRUE(c.ok()) << error_of(c);
  const JobQueueStatus& st = c->job_queue_status.at("shared-training-queue");
  EXPECT_EQ(st.status, "INVALID");
  EXPECT_EQ(st.status_reason, "scheduling policy quota-policy not found");
  // A new share on an INVALID queue is refused at apply time.
  map.erase(ObjectKey{Kind::kQuotaShare, "", "QS3"});
  Result<QuotaObject> qs3 = parse_quota_share(share("QS3", "RESERVE"));
  ASSERT_TRUE(qs3.ok());
  const Status s = check_apply(map, {*qs3}, reg);
  EXPECT_TRUE(error_of(s).starts_with(
      "QuotaShare QS3: jobQueue: job queue \"shared-training-queue\" is INVALID"))
      << error_of(s);
}

TEST(QuotaShareFrontend, TwentyFirstShareOfAQueueRefused) {
  ObjectMap current = testing::to_map(parse_bundle(example_bundle()));
  for (int i = 4; i <= 20; ++i) {
    Result<QuotaObject> s = parse_quota_share(share("QS" + std::to_string(i)));
    ASSERT_TRUE(s.ok());
    current.emplace(s->key, *s);
  }
  ResourceRegistry reg;
  ASSERT_TRUE(compile(current, reg).ok());  // 20 shares are fine
  Result<QuotaObject> extra = parse_quota_share(share("QS21"));
  ASSERT_TRUE(extra.ok());
  const Status st = check_apply(current, {*extra}, reg);
  EXPECT_TRUE(error_of(st).starts_with(
      "QuotaShare QS21: jobQueue: job queue \"shared-training-queue\" would have 21 quota shares"))
      << error_of(st);
  current.emplace(extra->key, *extra);
  EXPECT_NE(error_of(compile(current, reg)).find("more than 20 quota shares"), std::string::npos);
}

TEST(QuotaShareFrontend, ZeroOrSixCapacityLimitsRefused) {
  Json s = share("QS1");
  s["capacityLimits"] = Json::array();
  EXPECT_EQ(error_of(parse_quota_share(s)),
            "capacityLimits: must list 1 to 5 capacity limits, got 0");
  s["capacityLimits"] = Json::array();
  for (const char* t : {"ml.g5.xlarge", "ml.g5.2xlarge", "ml.g5.4xlarge", "ml.p4d.24xlarge",
                        "ml.p5.48xlarge", "ml.m5.large"}) {
    s["capacityLimits"].push_back({{"capacityUnit", t}, {"maxCapacity", 1}});
  }
  EXPECT_EQ(error_of(parse_quota_share(s)),
            "capacityLimits: must list 1 to 5 capacity limits, got 6");
}

TEST(QuotaShareFrontend, NumInstancesAndNonInstanceTypeUnitsRefused) {
  Json s = share("QS1");
  s["capacityLimits"][0]["capacityUnit"] = "NUM_INSTANCES";
  EXPECT_TRUE(error_of(parse_quota_share(s))
                  .starts_with("capacityLimits[0].capacityUnit: NUM_INSTANCES is not supported"));
  s["capacityLimits"][0]["capacityUnit"] = "g5.xlarge";
  EXPECT_TRUE(
      error_of(parse_quota_share(s))
          .starts_with("capacityLimits[0].capacityUnit: \"g5.xlarge\" is not an instance type"));
  Json env = example_bundle()["serviceEnvironment"];
  env["capacityLimits"][0]["capacityUnit"] = "NUM_INSTANCES";
  EXPECT_TRUE(error_of(parse_service_environment(env))
                  .starts_with("capacityLimits[0].capacityUnit: NUM_INSTANCES"));
  s["capacityLimits"][0] = {{"capacityUnit", "ml.g5.xlarge"}, {"maxCapacity", 0}};
  EXPECT_EQ(error_of(parse_quota_share(s)), "capacityLimits[0].maxCapacity: must be >= 1, got 0");
}

TEST(QuotaShareFrontend, BorrowLimitOnlyWithLendAndBorrow) {
  Json s = share("QS2", "LEND");
  s["resourceSharingConfiguration"]["borrowLimit"] = 100;
  EXPECT_EQ(error_of(parse_quota_share(s)),
            "resourceSharingConfiguration.borrowLimit: only allowed with strategy LEND_AND_BORROW, "
            "got LEND");
  s["resourceSharingConfiguration"] = {{"strategy", "LEND_AND_BORROW"}, {"borrowLimit", -2}};
  EXPECT_TRUE(error_of(parse_quota_share(s))
                  .starts_with("resourceSharingConfiguration.borrowLimit: must be -1"));
  s["resourceSharingConfiguration"] = {{"strategy", "SHARE"}};
  EXPECT_TRUE(error_of(parse_quota_share(s))
                  .starts_with("resourceSharingConfiguration.strategy: expected one of"));
}

TEST(QuotaShareFrontend, EnvironmentInTwoQuotaManagedQueuesRefused) {
  ObjectMap current = testing::to_map(parse_bundle(example_bundle()));
  Json q = example_bundle()["jobQueue"];
  q["jobQueueName"] = "second-queue";
  Result<QuotaObject> second = parse_job_queue(q);
  ASSERT_TRUE(second.ok()) << error_of(second);
  ResourceRegistry reg;
  const Status st = check_apply(current, {*second}, reg);
  EXPECT_TRUE(error_of(st).starts_with(
      "JobQueue second-queue: serviceEnvironmentOrder[0].serviceEnvironment: service environment "
      "\"training-env\" already belongs to quota-managed job queue \"shared-training-queue\""))
      << error_of(st);
  current.emplace(second->key, *second);
  EXPECT_NE(error_of(compile(current, reg)).find("already belongs to quota-managed job queue"),
            std::string::npos);
}

TEST(QuotaShareFrontend, ShareOfUnknownJobQueueRefusedNamingTheShare) {
  ObjectMap current = testing::to_map(parse_bundle(example_bundle()));
  Json s = share("QS4");
  s["jobQueue"] = "x";
  Result<QuotaObject> qs4 = parse_quota_share(s);
  ASSERT_TRUE(qs4.ok());
  ResourceRegistry reg;
  EXPECT_EQ(error_of(check_apply(current, {*qs4}, reg)),
            "QuotaShare QS4: jobQueue: job queue \"x\" does not exist");
  current.emplace(qs4->key, *qs4);
  EXPECT_EQ(error_of(compile(current, reg)),
            "QuotaShare QS4: jobQueue: job queue \"x\" does not exist");
}

TEST(QuotaShareFrontend, ShareCapacityUnitOutsideItsEnvironmentRefused) {
  Json doc = example_bundle();
  doc["quotaShares"][2]["capacityLimits"][0]["capacityUnit"] = "ml.p5.48xlarge";
  ResourceRegistry reg;
  const Status st = check_apply({}, parse_bundle(doc), reg);
  EXPECT_EQ(error_of(st),
            "QuotaShare QS3: capacityLimits[0].capacityUnit: \"ml.p5.48xlarge\" is not "
            "in the capacityLimits of service environment \"training-env\"");
}

TEST(QuotaShareFrontend, OtherAwsShapeRulesRefusedNamingTheField) {
  Json env = example_bundle()["serviceEnvironment"];
  env["serviceEnvironmentType"] = "EKS";
  EXPECT_TRUE(error_of(parse_service_environment(env))
                  .starts_with("serviceEnvironmentType: only SAGEMAKER_TRAINING"));
  Json policy = {{"name", "fs"}, {"fairsharePolicy", {{"shareDecaySeconds", 3600}}}};
  EXPECT_TRUE(
      error_of(parse_scheduling_policy(policy)).starts_with("fairsharePolicy: not supported"));
  Json q = example_bundle()["jobQueue"];
  q["serviceEnvironmentOrder"].push_back({{"order", 2}, {"serviceEnvironment", "other"}});
  EXPECT_TRUE(
      error_of(parse_job_queue(q))
          .starts_with("serviceEnvironmentOrder: a quota-managed job queue has exactly one"));
  q = example_bundle()["jobQueue"];
  q["state"] = "PAUSED";
  EXPECT_TRUE(error_of(parse_job_queue(q)).starts_with("state: expected one of ENABLED, DISABLED"));
  Json s = share("QS1");
  s["preemptionConfiguration"] = {{"inSharePreemption", "YES"}};
  EXPECT_TRUE(error_of(parse_quota_share(s))
                  .starts_with("preemptionConfiguration.inSharePreemption: expected one of"));
  s = share("bad name!");
  EXPECT_TRUE(error_of(parse_quota_share(s))
                  .starts_with("quotaShareName: \"bad name!\" is not a valid name"));
}

TEST(QuotaShareFrontend, BundleErrorsNameTheBundlePathAndUnknownFieldsWarn) {
  Json doc = example_bundle();
  doc["quotaShares"][1]["capacityLimits"] = Json::array();
  EXPECT_EQ(error_of(parse_quota_share_bundle(doc)),
            "quotaShares[1].capacityLimits: must list 1 to 5 capacity limits, got 0");
  doc = example_bundle();
  doc["quotaShares"][2]["quotaShareName"] = "QS1";
  EXPECT_EQ(error_of(parse_quota_share_bundle(doc)),
            "quotaShares[2].quotaShareName: duplicate quota share \"QS1\"");
  doc = example_bundle();
  doc["quotaShares"][0]["colour"] = "blue";
  const auto objects = parse_bundle(doc);
  ASSERT_EQ(objects.size(), 6u);
  EXPECT_EQ(objects[3].warnings,
            std::vector<std::string>{"quotaShares[0].colour: unknown field, ignored"});
}

// docs/quota-frontends.md, first step of the published example: QS1 submits three one-instance
// jobs; the first runs on QS1's own instance, the second borrows QS2's idle one, the third waits
// because QS3's instance is reserved.
TEST(QuotaShareFrontend, EngineAdmitsTwoQs1JobsSecondBorrowingAndRefusesTheThird) {
  ResourceRegistry reg;
  Result<CompiledQuota> c = compile(testing::to_map(parse_bundle(example_bundle())), reg);
  ASSERT_TRUE(c.ok());
  const ResourceId g5 = *reg.find("ml.g5.xlarge");
  const quota::NodeId qs1 = c->share_leaf.at({"shared-training-queue", "QS1"});
  const quota::NodeId qs3 = c->share_leaf.at({"shared-training-queue", "QS3"});
  quota::QuotaEngine engine(c->graph);
  ResourceVector one;
  one.set(g5, 1);
  int32_t priority = 3;
  for (quota::WorkloadId id : {1, 2, 3}) {
    quota::Workload w;
    w.id = id;
    w.queue = qs1;
    w.priority = priority--;
    w.creation_seq = id;
    w.request = one;
    ASSERT_TRUE(engine.add_workload(w).ok());
  }
  const quota::FitResult first = engine.fits(1);
  EXPECT_TRUE(first.fits && !first.borrows);
  ASSERT_TRUE(engine.admit(1, Time{}).ok());
  const quota::FitResult second = engine.fits(2);
  EXPECT_TRUE(second.fits && second.borrows);
  ASSERT_TRUE(engine.admit(2, Time{}).ok());
  const quota::FitResult third = engine.fits(3);
  EXPECT_FALSE(third.fits);
  EXPECT_EQ(third.limit, quota::LimitKind::kCohortCapacity);
  EXPECT_FALSE(engine.admit(3, Time{}).ok());
  // QS3's own instance is still there for QS3.
  EXPECT_TRUE(engine.fits(qs3, one).fits);
  EXPECT_LE(engine.usage(*c->graph.find("jobqueue:shared-training-queue")).get(g5),
            c->root_ceiling.at(*c->graph.find("jobqueue:shared-training-queue")).get(g5));
}

}  // namespace
}  // namespace gf::frontend
