// The local cloud's settings (docs/local-cloud.md): capacity per type, s3:// lifecycle roots, and
// where a group's LifeCycleConfig points on this machine. The driver itself runs real processes:
// tests/integration/local_cloud_test.cpp.
#include <gtest/gtest.h>

#include "cloud/local/local_cloud.h"

namespace gf {
namespace {

TEST(LocalCloudConfig, CapacityParsesTypeCountPairs) {
  auto c = LocalCloudConfig::parse_capacity("ml.p5.48xlarge=10,ml.m5.xlarge=0");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->at("ml.p5.48xlarge"), 10);
  EXPECT_EQ(c->at("ml.m5.xlarge"), 0);
  EXPECT_TRUE(LocalCloudConfig::parse_capacity("")->empty());
}

TEST(LocalCloudConfig, BadCapacityNamesTheItem) {
  for (const char* bad :
       {"ml.p5.48xlarge", "=3", "ml.p5.48xlarge=-1", "ml.p5.48xlarge=ten", "a=1,ml.g5=2x"}) {
    auto c = LocalCloudConfig::parse_capacity(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find("--local-capacity"), std::string::npos) << bad;
    EXPECT_NE(c.status().message().find("TYPE=COUNT"), std::string::npos) << bad;
  }
}

TEST(LocalCloudConfig, TopologyIsNodesPerBlockAndBlocksPerSpine) {
  auto t = LocalCloudConfig::parse_topology("16x4");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->nodes_per_block, 16);
  EXPECT_EQ(t->blocks_per_spine, 4);
  EXPECT_EQ(LocalCloudConfig::parse_topology("8")->blocks_per_spine, 1);
  for (const char* bad : {"", "x4", "16x", "sixteen", "16x4x2", "0", "-3"}) {
    auto r = LocalCloudConfig::parse_topology(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--local-topology"), std::string::npos)
        << r.status().message();
  }
}

TEST(LocalCloudConfig, LifecycleRootMapsAnS3PrefixToADirectory) {
  auto r = LocalCloudConfig::parse_lifecycle_root("s3://amzn-s3-demo-bucket/=/srv/lc");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first, "s3://amzn-s3-demo-bucket");  // a trailing slash does not matter
  EXPECT_EQ(r->second, "/srv/lc");
  for (const char* bad : {"/srv/lc", "s3://=/x", "s3://b=", "https://b=/x"}) {
    auto e = LocalCloudConfig::parse_lifecycle_root(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("--lifecycle-root"), std::string::npos) << bad;
  }
}

Json lifecycle(const std::string& uri, const std::string& on_create = "on_create.sh") {
  return Json{{"SourceS3Uri", uri}, {"OnCreate", on_create}};
}

TEST(ResolveLifecycleScript, S3UriGoesThroughTheLongestMatchingRoot) {
  const std::vector<std::pair<std::string, std::string>> roots = {
      {"s3://amzn-s3-demo-bucket", "/srv/bucket"},
      {"s3://amzn-s3-demo-bucket/lifecycle-scripts", "/srv/scripts"}};
  // The seed's URI, with its trailing slash.
  auto p =
      resolve_lifecycle_script(lifecycle("s3://amzn-s3-demo-bucket/lifecycle-scripts/src/"), roots);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(**p, "/srv/scripts/src/on_create.sh");
  auto other =
      resolve_lifecycle_script(lifecycle("s3://amzn-s3-demo-bucket/other", "go.sh"), roots);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(**other, "/srv/bucket/other/go.sh");
}

TEST(ResolveLifecycleScript, RootMatchesWholePathComponentsOnly) {
  const std::vector<std::pair<std::string, std::string>> roots = {{"s3://bucket", "/srv/b"}};
  auto p = resolve_lifecycle_script(lifecycle("s3://bucket-two/x"), roots);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--lifecycle-root s3://bucket-two=DIR"), std::string::npos)
      << p.status().message();
}

TEST(ResolveLifecycleScript, FileUriIsUsedAsItIs) {
  auto p = resolve_lifecycle_script(lifecycle("file:///opt/lc/", "setup.sh"), {});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(**p, "/opt/lc/setup.sh");
}

TEST(ResolveLifecycleScript, NoLifeCycleConfigMeansNoScript) {
  auto p = resolve_lifecycle_script(Json(), {});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
}

TEST(ResolveLifecycleScript, OtherSchemesAreRefusedNamingTheUri) {
  auto p = resolve_lifecycle_script(lifecycle("https://example.com/lc"), {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("https://example.com/lc"), std::string::npos);
}

}  // namespace
}  // namespace gf
