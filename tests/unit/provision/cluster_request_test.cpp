// CreateCluster / UpdateCluster parsing: what a field the request format does not have does
// (docs/api.md "Unknown fields"): refused by default, naming it and the closest known field.
#include "provision/cluster_request.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "model/catalog.h"

namespace gf {
namespace {

Json example_create() {
  std::ifstream in(GPUFLEET_EXAMPLES_DIR "/create_cluster.json");
  std::stringstream ss;
  ss << in.rdbuf();
  Result<Json> j = parse_json(ss.str());
  EXPECT_TRUE(j.ok()) << j.status().message();
  return j.ok() ? *j : Json::object();
}

Result<CreateClusterRequest> create(const Json& body, FieldValidation mode) {
  return parse_create_cluster(body, FleetView{}, Catalog::builtin(), mode);
}

TEST(UnknownFields, StrictByDefaultRefusesATypoNamingTheClosestKnownField) {
  Json body = example_create();
  ASSERT_TRUE(create(body, FieldValidation::kStrict).ok()) << "the example has no unknown field";
  body.erase("NodeProvisioningMode");
  body["NodeProvisioningMod"] = "Continuous";
  Result<CreateClusterRequest> r = parse_create_cluster(body, FleetView{}, Catalog::builtin());
  ASSERT_FALSE(r.ok()) << "a typo must not silently create an all-or-nothing cluster";
  EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  EXPECT_EQ(r.status().message(),
            "NodeProvisioningMod: unknown field; did you mean NodeProvisioningMode?");
}

TEST(UnknownFields, AGroupFieldTypoNamesItsPathAndAFarNameGetsNoHint) {
  Json body = example_create();
  body["InstanceGroups"][1]["InstanceCont"] = 3;
  Result<CreateClusterRequest> r = create(body, FieldValidation::kStrict);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "InstanceGroups[1].InstanceCont: unknown field; did you mean InstanceCount?");
  body = example_create();
  body["Colour"] = "blue";
  r = create(body, FieldValidation::kStrict);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "Colour: unknown field");
}

TEST(UnknownFields, WarnAcceptsWithAWarningAndIgnoreSilently) {
  Json body = example_create();
  body["NodeProvisioningMod"] = "Continuous";
  Result<CreateClusterRequest> warned = create(body, FieldValidation::kWarn);
  ASSERT_TRUE(warned.ok()) << warned.status().message();
  EXPECT_EQ(warned->warnings,
            std::vector<std::string>{
                "NodeProvisioningMod: unknown field, ignored; did you mean NodeProvisioningMode?"});
  Result<CreateClusterRequest> ignored = create(body, FieldValidation::kIgnore);
  ASSERT_TRUE(ignored.ok()) << ignored.status().message();
  EXPECT_TRUE(ignored->warnings.empty());
}

// Hostile input: many unknown keys are all reported, but only the first 16 get a hint (each hint
// is a distance per known name), so the work stays proportional to the body.
TEST(UnknownFields, OnlyTheFirstSixteenUnknownKeysGetAHint) {
  Json body = example_create();
  for (int i = 0; i < 2000; ++i) body[fmt::format("ClusterNam{:04}", i)] = i;
  Result<CreateClusterRequest> r = create(body, FieldValidation::kWarn);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->warnings.size(), 2000u);
  size_t hinted = 0;
  for (const std::string& w : r->warnings) hinted += w.find("did you mean") != std::string::npos;
  EXPECT_EQ(hinted, 16u);
}

TEST(UnknownFields, FieldValidationParsesKubernetesNamesAndNamesTheParameter) {
  EXPECT_EQ(*parse_field_validation("Strict", "fieldValidation"), FieldValidation::kStrict);
  EXPECT_EQ(*parse_field_validation("warn", "fieldValidation"), FieldValidation::kWarn);
  EXPECT_EQ(*parse_field_validation("IGNORE", "fieldValidation"), FieldValidation::kIgnore);
  Result<FieldValidation> bad = parse_field_validation("loose", "fieldValidation");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "fieldValidation: expected Strict, Warn or Ignore, got \"loose\"");
}

TEST(UnknownFields, ClosestNameIsATypoDistanceAwayOrNone) {
  const std::set<std::string, std::less<>> names = {"InstanceCount", "InstanceType",
                                                    "MinInstanceCount"};
  EXPECT_EQ(closest_name("InstanceCont", names), "InstanceCount");
  EXPECT_EQ(closest_name("instancetype", names), "InstanceType") << "letter case is ignored";
  EXPECT_EQ(closest_name("Colour", names), std::nullopt);
  EXPECT_EQ(closest_name("", names), std::nullopt);
}

}  // namespace
}  // namespace gf
