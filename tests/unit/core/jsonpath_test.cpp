#include "core/jsonpath.h"

#include <gtest/gtest.h>

namespace gf::jsonpath {
namespace {

const Json& pods() {
  static const Json j = Json::parse(R"({
    "kind": "List",
    "items": [
      {"metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x"}},
       "status": {"phase": "Running", "restarts": 0}},
      {"metadata": {"name": "b"}, "status": {"phase": "Failed", "restarts": 3}},
      {"metadata": {"name": "c"}, "status": {"phase": "Running", "restarts": 7}}
    ]})");
  return j;
}

std::string run(std::string_view t, const Json& data = pods()) {
  auto r = render(t, data);
  EXPECT_TRUE(r.ok()) << t << ": " << r.status().message();
  return r.ok() ? *r : "";
}

TEST(JsonPath, FieldsWildcardsAndIndexesAsKubectlPrintsThem) {
  EXPECT_EQ(run("{.kind}"), "List");
  EXPECT_EQ(run("{$.kind}"), "List");
  EXPECT_EQ(run("{.items[*].metadata.name}"), "a b c");
  EXPECT_EQ(run("{.items[0].metadata.name}"), "a");
  EXPECT_EQ(run("{.items[-1].metadata.name}"), "c");
  EXPECT_EQ(run("{.items[1:].metadata.name}"), "b c");
  EXPECT_EQ(run("{.items[0:3:2].metadata.name}"), "a c");
  EXPECT_EQ(run("{.items[0].status}"), R"({"phase":"Running","restarts":0})");
  EXPECT_EQ(run("{.items[0].status.restarts}"), "0");
  EXPECT_EQ(run("{.items[0].metadata.labels['app.kubernetes.io/name']}"), "x");
  EXPECT_EQ(run("name={.items[1].metadata.name}!"), "name=b!");
}

TEST(JsonPath, RecursiveDescentFiltersAndUnions) {
  EXPECT_EQ(run("{..name}"), "a b c");
  EXPECT_EQ(run(R"({.items[?(@.status.phase=="Running")].metadata.name})"), "a c");
  EXPECT_EQ(run(R"({.items[?(@.status.phase!="Running")].metadata.name})"), "b");
  EXPECT_EQ(run("{.items[?(@.status.restarts>2)].metadata.name}"), "b c");
  EXPECT_EQ(run("{.items[?(@.status.restarts<=3)].metadata.name}"), "a b");
  EXPECT_EQ(run("{.items[?(@.metadata.labels)].metadata.name}"), "a");
  EXPECT_EQ(run("{.items[0].metadata.name,.items[2].metadata.name}"), "a c");
}

TEST(JsonPath, RangeRepeatsTheTemplateWithAtAsEachResult) {
  EXPECT_EQ(run(R"({range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end})"),
            "a\tRunning\nb\tFailed\nc\tRunning\n");
  EXPECT_EQ(run(R"({range .items[*]}[{range .metadata}{.name}{end}]{end})"), "[a][b][c]");
}

TEST(JsonPath, AMissingPathPrintsNothing) {
  EXPECT_EQ(run("{.nope}"), "");
  EXPECT_EQ(run("{.items[9].metadata.name}"), "");
  EXPECT_EQ(run("{.kind.deeper}"), "");
}

TEST(JsonPath, MalformedTemplatesAreRefusedNamingTheOffset) {
  for (const char* bad : {"{.items[}", "{.items", "{range .items[*]}{.a}", "{end}", "{.a[?(x)]}",
                          "{.a[1:2:0]}", "{'unterminated}", "{.a b}"}) {
    auto r = parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("jsonpath:"), std::string::npos) << bad;
    }
  }
  const std::string huge(kMaxTemplateBytes + 1, 'x');
  EXPECT_FALSE(parse(huge).ok());
  std::string deep;
  for (int i = 0; i <= kMaxNesting + 1; ++i) deep += "{range .a}";
  EXPECT_FALSE(parse(deep).ok());
}

TEST(CustomColumns, EachColumnIsAPathPerItemAndNothingFoundIsNone) {
  auto cols = parse_columns("NAME:.metadata.name,PHASE:{.status.phase},APP:.metadata.labels");
  ASSERT_TRUE(cols.ok()) << cols.status().message();
  ASSERT_EQ(cols->size(), 3u);
  EXPECT_EQ((*cols)[1].header, "PHASE");
  auto cells = column_cells(*cols, pods()["items"][1]);
  ASSERT_TRUE(cells.ok());
  EXPECT_EQ(*cells, (std::vector<std::string>{"b", "Failed", "<none>"}));
  EXPECT_FALSE(parse_columns("NAME").ok());
  EXPECT_FALSE(parse_columns("NAME:").ok());
  EXPECT_FALSE(parse_columns(":.a").ok());
  EXPECT_FALSE(parse_columns("NAME:.a[").ok());
}

}  // namespace
}  // namespace gf::jsonpath
