#include "core/resources.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace gf {
namespace {

using nlohmann::json;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

ResourceVector vec(std::initializer_list<std::pair<ResourceId, int64_t>> dims) {
  ResourceVector v;
  for (const auto& [id, value] : dims) v.set(id, value);
  return v;
}

TEST(ResourceRegistry, WellKnownNamesHaveFixedIds) {
  ResourceRegistry r;
  EXPECT_EQ(r.size(), 5u);
  EXPECT_EQ(r.name(kCpu), "cpu");
  EXPECT_EQ(r.name(kMemory), "memory");
  EXPECT_EQ(r.name(kGpu), "nvidia.com/gpu");
  EXPECT_EQ(r.name(kMaxJobs), "kube-queue/max-jobs");
  EXPECT_EQ(r.name(kPods), "pods");
  EXPECT_EQ(r.find("cpu"), kCpu);
  EXPECT_EQ(r.find("nvidia.com/gpu"), kGpu);
  EXPECT_EQ(*r.intern("memory"), kMemory);
  EXPECT_EQ(r.size(), 5u) << "interning a known name adds nothing";
}

TEST(ResourceRegistry, OnlyCpuIsMilliScaled) {
  ResourceRegistry r;
  EXPECT_EQ(r.scale(kCpu), QuantityScale::kMilli);
  for (ResourceId id : {kMemory, kGpu, kMaxJobs, kPods, *r.intern("ml.g5.xlarge")}) {
    EXPECT_EQ(r.scale(id), QuantityScale::kUnit) << r.name(id);
  }
}

TEST(ResourceRegistry, NewNamesGetDenseIdsInRegistrationOrderAndLookUpBothWays) {
  ResourceRegistry r;
  ResourceId g5 = *r.intern("ml.g5.xlarge");
  ResourceId p5 = *r.intern("ml.p5.48xlarge");
  EXPECT_EQ(g5, 5);
  EXPECT_EQ(p5, 6);
  EXPECT_EQ(*r.intern("ml.g5.xlarge"), g5);
  EXPECT_EQ(r.name(p5), "ml.p5.48xlarge");
  EXPECT_EQ(r.find("ml.p5.48xlarge"), p5);
  EXPECT_EQ(r.find("ml.unknown"), std::nullopt);
  EXPECT_EQ(r.size(), 7u);
}

TEST(ResourceRegistry, InvalidNamesAreRejected) {
  ResourceRegistry r;
  for (const char* name :
       {"", "-cpu", "cpu-", "a b", "a/b/c", "/gpu", "nvidia.com/", "cpu!", "\xc3\xa9"}) {
    Result<ResourceId> id = r.intern(name);
    ASSERT_FALSE(id.ok()) << name;
    EXPECT_EQ(id.status().code(), ErrorCode::kValidation);
    EXPECT_NE(id.status().message().find("invalid resource name"), std::string::npos);
  }
  EXPECT_FALSE(r.intern(std::string(64, 'a')).ok()) << "name part over 63 characters";
  EXPECT_TRUE(r.intern(std::string(63, 'a')).ok());
  EXPECT_TRUE(r.intern("hugepages-2Mi").ok());
  EXPECT_TRUE(r.intern("vpc.amazonaws.com/efa").ok());
  EXPECT_EQ(r.size(), 8u);
}

TEST(ResourceRegistry, RegisteringBeyondCapacityIsAnError) {
  ResourceRegistry r;
  for (size_t i = r.size(); i < kMaxResources; ++i) {
    ASSERT_TRUE(r.intern("res-" + std::to_string(i)).ok()) << i;
  }
  EXPECT_EQ(r.size(), kMaxResources);
  Result<ResourceId> extra = r.intern("one-too-many");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("at most 32"), std::string::npos)
      << extra.status().message();
  EXPECT_TRUE(r.intern("res-10").ok()) << "known names still resolve when full";
  EXPECT_EQ(r.size(), kMaxResources);
}

TEST(ResourceRegistry, ConcurrentInternOfTheSameNamesAgreesOnIds) {
  ResourceRegistry r;
  constexpr int kThreads = 8;
  std::vector<std::vector<ResourceId>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&r, &seen, t] {
      for (int i = 0; i < 20; ++i) {
        Result<ResourceId> id = r.intern("ext-" + std::to_string(i));
        seen[t].push_back(id.ok() ? *id : ResourceId{999});
        (void)r.name(kGpu);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(r.size(), 25u);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(r.name(seen[t][i]), "ext-" + std::to_string(i));
    }
  }
}

TEST(ResourceVector, DefaultIsZeroAndSetGetRoundTrip) {
  ResourceVector v;
  EXPECT_TRUE(v.is_zero());
  v.set(kMemory, 2 * kGi);
  EXPECT_EQ(v.get(kMemory), 2 * kGi);
  EXPECT_EQ(v.get(kCpu), 0);
  EXPECT_FALSE(v.is_zero());
  v.set(ResourceId{kMaxResources - 1}, 7);
  EXPECT_EQ(v.get(ResourceId{kMaxResources - 1}), 7);
}

TEST(ResourceVector, AddAndSubtractAreElementwise) {
  ResourceVector a = vec({{kCpu, 500}, {kGpu, 8}});
  ResourceVector b = vec({{kCpu, 250}, {kMemory, kGi}});
  EXPECT_EQ(a + b, vec({{kCpu, 750}, {kGpu, 8}, {kMemory, kGi}}));
  EXPECT_EQ(a - b, vec({{kCpu, 250}, {kGpu, 8}, {kMemory, -kGi}}));
  a += b;
  a -= b;
  EXPECT_EQ(a, vec({{kCpu, 500}, {kGpu, 8}}));
}

TEST(ResourceVector, ArithmeticSaturatesInsteadOfWrapping) {
  ResourceVector big = vec({{kMaxJobs, kInt64Max}, {kMemory, kInt64Min}});
  ResourceVector one = vec({{kMaxJobs, 1}, {kMemory, 1}});
  EXPECT_EQ((big + one).get(kMaxJobs), kInt64Max);
  EXPECT_EQ((big - one).get(kMemory), kInt64Min);
  EXPECT_EQ((one - big).get(kMemory), kInt64Max);
  EXPECT_EQ((one - big).get(kMaxJobs), 1 - kInt64Max);
}

TEST(ResourceVector, FitsWithinRequiresEveryDimensionAtMostTheLimit) {
  ResourceVector limit = vec({{kCpu, 1000}, {kGpu, 8}});
  EXPECT_TRUE(vec({{kCpu, 1000}, {kGpu, 8}}).fits_within(limit)) << "equal fits";
  EXPECT_TRUE(vec({{kCpu, 10}}).fits_within(limit));
  EXPECT_TRUE(ResourceVector().fits_within(limit));
  EXPECT_FALSE(vec({{kCpu, 1001}}).fits_within(limit));
  EXPECT_FALSE(vec({{kMemory, 1}}).fits_within(limit)) << "an absent dimension is a zero limit";
  EXPECT_TRUE(vec({{kCpu, -5}}).fits_within(ResourceVector()));
}

TEST(ResourceVector, AnyNegativeDetectsASingleNegativeDimension) {
  EXPECT_FALSE(ResourceVector().any_negative());
  EXPECT_FALSE(vec({{kCpu, 1}}).any_negative());
  EXPECT_TRUE(vec({{kCpu, 1}, {ResourceId{kMaxResources - 1}, -1}}).any_negative());
}

TEST(ResourceVector, EqualityComparesEveryDimension) {
  EXPECT_EQ(vec({{kCpu, 1}}), vec({{kCpu, 1}}));
  EXPECT_NE(vec({{kCpu, 1}}), vec({{kCpu, 2}}));
  EXPECT_NE(vec({{kCpu, 1}}), vec({{kCpu, 1}, {kPods, 1}}));
}

TEST(ResourceVector, ToStringListsNonzeroDimensionsByNameWithUnits) {
  ResourceRegistry r;
  ResourceId g5 = *r.intern("ml.g5.xlarge");
  ResourceVector v = vec({{kGpu, 8}, {kCpu, 500}, {kMemory, 2 * kGi}, {g5, 3}});
  EXPECT_EQ(v.to_string(r), "{cpu: 500m, memory: 2147483648, ml.g5.xlarge: 3, nvidia.com/gpu: 8}");
  EXPECT_EQ(vec({{kCpu, 2000}}).to_string(r), "{cpu: 2}");
  EXPECT_EQ(ResourceVector().to_string(r), "{}");
}

TEST(ResourceVector, ToJsonUsesCpuQuantityStringsAndIntegersElsewhere) {
  ResourceRegistry r;
  ResourceVector v = vec({{kCpu, 1500}, {kMemory, 2 * kGi}, {kGpu, 8}, {kMaxJobs, 10'000'000'000}});
  EXPECT_EQ(v.to_json(r).dump(),
            R"({"cpu":"1500m","kube-queue/max-jobs":10000000000,"memory":2147483648,)"
            R"("nvidia.com/gpu":8})");
  EXPECT_EQ(vec({{kCpu, 3000}}).to_json(r), json::parse(R"({"cpu":"3"})"));
  EXPECT_EQ(ResourceVector().to_json(r), json::object());
}

TEST(ResourceVector, FromJsonReadsKubernetesQuantitiesPerResourceScale) {
  ResourceRegistry r;
  json spec = json::parse(R"({"cpu": "10m", "memory": "2Gi", "nvidia.com/gpu": 8,
                              "kube-queue/max-jobs": 10000000000, "ml.g5.xlarge": "3"})");
  Result<ResourceVector> v = ResourceVector::from_json(spec, r, "spec");
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(v->get(kCpu), 10);
  EXPECT_EQ(v->get(kMemory), 2 * kGi);
  EXPECT_EQ(v->get(kGpu), 8);
  EXPECT_EQ(v->get(kMaxJobs), 10'000'000'000);
  ASSERT_TRUE(r.find("ml.g5.xlarge").has_value());
  EXPECT_EQ(v->get(*r.find("ml.g5.xlarge")), 3);
}

TEST(ResourceVector, FromJsonReadsTheElasticQuotaTreeExample) {
  ResourceRegistry r;
  json max = json::parse(R"({"cpu": 999900, "memory": "400000Gi",
                            "kube-queue/max-jobs": 10000000000, "nvidia.com/gpu": 100000})");
  Result<ResourceVector> v = ResourceVector::from_json(max, r, "spec.root.max");
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(*v, vec({{kCpu, 999'900'000},
                     {kMemory, 400000 * kGi},
                     {kMaxJobs, 10'000'000'000},
                     {kGpu, 100000}}));
}

TEST(ResourceVector, FromJsonOfToJsonIsIdentity) {
  ResourceRegistry r;
  ResourceId efa = *r.intern("vpc.amazonaws.com/efa");
  ResourceVector v = vec({{kCpu, 1}, {kMemory, kInt64Max}, {kPods, 110}, {efa, 4}});
  Result<ResourceVector> back = ResourceVector::from_json(v.to_json(r), r, "x");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, v);
}

TEST(ResourceVector, FromJsonErrorNamesTheFieldPath) {
  ResourceRegistry r;
  Result<ResourceVector> bad =
      ResourceVector::from_json(json::parse(R"({"cpu": 1, "memory": "5Gb"})"), r, "spec.root.max");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kValidation);
  EXPECT_EQ(bad.status().message().rfind(
                "spec.root.max.memory: invalid quantity \"5Gb\": unknown suffix 'Gb'", 0),
            0u)
      << bad.status().message();

  Result<ResourceVector> neg =
      ResourceVector::from_json(json::parse(R"({"nvidia.com/gpu": -1})"), r, "spec.min");
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.status().message().rfind("spec.min.nvidia.com/gpu: invalid quantity -1", 0), 0u)
      << neg.status().message();

  Result<ResourceVector> name =
      ResourceVector::from_json(json::parse(R"({"bad name": 1})"), r, "spec.min");
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.status().message().rfind("spec.min.bad name: invalid resource name", 0), 0u)
      << name.status().message();
}

TEST(ResourceVector, FromJsonRejectsNonObjects) {
  ResourceRegistry r;
  for (const json& v : {json(nullptr), json(5), json("2Gi"), json::array()}) {
    Result<ResourceVector> res = ResourceVector::from_json(v, r, "spec.root.min");
    ASSERT_FALSE(res.ok()) << v.dump();
    EXPECT_EQ(res.status().message().rfind("spec.root.min: expected an object", 0), 0u)
        << res.status().message();
  }
  EXPECT_TRUE(ResourceVector::from_json(json::object(), r, "x")->is_zero());
}

}  // namespace
}  // namespace gf
