// Rules for decoding outside input (docs/security.md): no input can crash, recurse without bound
// or expand past a budget; every refusal is a ValidationException naming the limit.
#include <gtest/gtest.h>

#include "core/json.h"

namespace gf {
namespace {

TEST(JsonLimits, NumberOutOfDoubleRangeIsAValidationErrorNotAnException) {
  for (const char* text : {"1e400", "[1e400]", "{\"a\": -1e999}"}) {
    auto r = parse_json(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
    EXPECT_NE(r.status().message().find("out of range"), std::string::npos) << r.status().message();
  }
}

TEST(JsonLimits, NestingDeeperThanTheLimitIsRefusedBeforeParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto r = parse_json(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper than the limit of 256 levels"), std::string::npos);
  const std::string at_limit = std::string(256, '[') + std::string(256, ']');
  EXPECT_TRUE(parse_json(at_limit).ok());
  EXPECT_FALSE(parse_json("[" + at_limit + "]").ok());
}

TEST(JsonLimits, BracketsInsideStringsDoNotCountAsNesting) {
  const std::string text =
      "{\"a\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  auto r = parse_json(text);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(json_nesting_depth(text, 10), 1);
}

TEST(JsonLimits, YamlNestingDeeperThanTheLimitIsRefused) {
  std::string flow = std::string(300, '[') + std::string(300, ']');
  auto r = parse_yaml(flow);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper than the limit"), std::string::npos)
      << r.status().message();
  std::string block;
  for (int i = 0; i < 300; ++i) block += std::string(i * 2, ' ') + "k" + std::to_string(i) + ":\n";
  block += std::string(600, ' ') + "x: 1\n";
  auto b = parse_yaml(block);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("deeper than the limit"), std::string::npos)
      << b.status().message();
  // yaml-cpp's own guard (2000) answers for deeper input, still as a ValidationException.
  auto very = parse_yaml(std::string(100000, '[') + std::string(100000, ']'));
  ASSERT_FALSE(very.ok());
  EXPECT_EQ(very.status().code(), ErrorCode::kValidation);
}

// The 557-byte "billion laughs": nine levels of nine aliases, 9^9 leaves if expanded.
std::string alias_bomb() {
  std::string y =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char prev = static_cast<char>(c - 1);
    y += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 9; ++k) y += std::string(k ? "," : "") + "*" + prev;
    y += "]\n";
  }
  return y;
}

TEST(JsonLimits, YamlAliasBombIsRefusedByTheExpansionBudget) {
  const std::string bomb = alias_bomb();
  EXPECT_LT(bomb.size(), 600u);
  auto r = parse_yaml(bomb);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  EXPECT_NE(r.status().message().find("expands to more than"), std::string::npos)
      << r.status().message();
}

TEST(JsonLimits, YamlAliasesWithinTheBudgetExpand) {
  auto r = parse_yaml("base: &r {cpu: 4, memory: 16Gi}\nmaster: *r\nworker: *r\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["worker"]["cpu"], 4);
  EXPECT_EQ((*r)["master"]["memory"], "16Gi");
}

// A copy nests as deep as its anchor's node: an alias to a 200-level node inside 100 levels is
// 300 levels, which to_yaml would write and no reader would take back (found by fuzzing).
TEST(JsonLimits, YamlAliasThatNestsPastTheDepthLimitIsRefused) {
  const auto nested = [](int levels, const std::string& inner) {
    return std::string(levels, '[') + inner + std::string(levels, ']');
  };
  auto r = parse_yaml("a: &x " + nested(200, "") + "\nb: " + nested(100, "*x") + "\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  EXPECT_NE(r.status().message().find("deeper than the limit of 256 levels"), std::string::npos)
      << r.status().message();
  // At the limit exactly: the map, 55 levels around the alias and the anchored 200.
  auto at = parse_yaml("a: &x " + nested(200, "") + "\nb: " + nested(55, "*x") + "\n");
  ASSERT_TRUE(at.ok()) << at.status().message();
  EXPECT_TRUE(parse_yaml(to_yaml(*at)).ok());
  EXPECT_FALSE(parse_yaml("a: &x " + nested(200, "") + "\nb: " + nested(56, "*x") + "\n").ok());
  // A scalar's alias adds no nesting.
  EXPECT_TRUE(parse_yaml("a: &s 1\nb: " + nested(255, "*s") + "\n").ok());
}

TEST(JsonLimits, YamlScalarOutOfDoubleRangeStaysText) {
  auto r = parse_yaml("n: 1e400\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["n"], "1e400");
}

TEST(JsonLimits, YamlNonScalarMappingKeyIsRefused) {
  auto r = parse_yaml("? [a, b]\n: 1\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("mapping key"), std::string::npos) << r.status().message();
}

TEST(JsonLimits, InvalidUtf8IsFoundAtItsOffset) {
  EXPECT_EQ(find_invalid_utf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(find_invalid_utf8("gr\xC3\xBC\xC3\x9F"), std::string_view::npos);  // grüß
  EXPECT_EQ(find_invalid_utf8("ab\xFF"), 2u);
  EXPECT_EQ(find_invalid_utf8("ab\xC3"), 2u);                                // truncated
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);                              // overlong '/'
  EXPECT_EQ(find_invalid_utf8("\xED\xA0\x80"), 0u);                          // surrogate
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);                      // past U+10FFFF
  EXPECT_EQ(find_invalid_utf8("\xF0\x9F\x98\x80"), std::string_view::npos);  // emoji
}

TEST(JsonLimits, PrintableNeverBreaksJsonAndIsBounded) {
  const std::string raw = std::string("bad\xFF\x01 byte") + std::string(500, 'x');
  const std::string p = printable(raw, 40);
  EXPECT_EQ(find_invalid_utf8(p), std::string_view::npos);
  EXPECT_NE(p.find("\\x01"), std::string::npos);
  EXPECT_LE(p.size(), 50u);
  EXPECT_NO_THROW((void)Json(p).dump());
}

TEST(JsonLimits, SafeDumpReplacesIllFormedUtf8InsteadOfThrowing) {
  Json j = {{"k", std::string("\xFF")}};
  EXPECT_THROW((void)j.dump(), Json::type_error);
  EXPECT_EQ(safe_dump(j), "{\"k\":\"\xEF\xBF\xBD\"}");
}

}  // namespace
}  // namespace gf

namespace gf {
namespace {

// yaml-cpp 0.7 loops for ever (allocating) on a document that starts with `,`: a 2-byte body
// stalled a handler thread and grew without bound. libyaml checks the syntax first.
TEST(JsonLimits, MalformedYamlThatHangsYamlCppIsRefusedAtOnce) {
  for (const char* text : {",a", ",ef[\x07", ",[", "x: 1\n---\n,a\n"}) {
    auto r = parse_yaml_documents(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
    EXPECT_NE(r.status().message().find("malformed YAML at line"), std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace gf

namespace gf {
namespace {

// yaml-cpp 0.7 reports the same document for ever on these (libyaml accepts their syntax): the
// builder stops at the first document that starts where the previous one did.
TEST(JsonLimits, YamlThatKeepsYamlCppReportingTheSameDocumentIsRefused) {
  for (const std::string& text : {std::string("! a\n,n"), std::string("!84tZZ\rZZaxW\n? ")}) {
    auto r = parse_yaml_documents(text);
    ASSERT_FALSE(r.ok()) << printable(text);
    EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  }
}

TEST(JsonLimits, YamlEventsBuildTheSameValuesAsBefore) {
  auto r = parse_yaml_documents(
      "a: 1\nb: '1'\nc: [x, ~, true, 2.5]\nd: {e: null}\n---\n---\n- &k {z: 1}\n- *k\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0], Json::parse(R"({"a":1,"b":"1","c":["x",null,true,2.5],"d":{"e":null}})"));
  EXPECT_EQ((*r)[1], Json::parse(R"([{"z":1},{"z":1}])"));
  EXPECT_FALSE(parse_yaml("{[a]: 1}").ok());
}

TEST(JsonLimits, AKeyTwiceInOneJsonObjectIsRefusedNamingIt) {
  auto r = parse_json(R"({"ClusterName":"a","ClusterName":"b"})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kValidation);
  EXPECT_NE(r.status().message().find("the key \"ClusterName\" appears twice in one object"),
            std::string::npos)
      << r.status().message();
  // Deep inside too; the same key in two different objects is fine.
  EXPECT_FALSE(parse_json(R"({"a":{"b":[{"c":1,"c":2}]}})").ok());
  EXPECT_TRUE(parse_json(R"({"a":{"k":1},"b":{"k":2},"k":[{"k":3},{"k":4}]})").ok());
  // What the server wrote itself is read as written.
  EXPECT_TRUE(parse_json(R"({"a":1,"a":2})", kStoredTextLimits).ok());
}

TEST(JsonLimits, AKeyTwiceInOneYamlMappingIsRefusedNamingIt) {
  auto r = parse_yaml("ClusterName: a\nClusterName: b\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the key \"ClusterName\" appears twice"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(parse_yaml(R"({"ClusterName":"a","ClusterName":"b"})").ok()) << "JSON read as YAML";
}

}  // namespace
}  // namespace gf
