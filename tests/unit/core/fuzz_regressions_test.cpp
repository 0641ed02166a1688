// Inputs the fuzz targets found (tests/fuzz/, docs/fuzzing.md), one test per broken rule. Each
// input is also kept in tests/fuzz/corpus/<target>/ so every fuzz run replays it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/time.h"

namespace gf {
namespace {

// json_yaml: {"d": 1.5e300} read with optional_int cast the double to int64 before checking
// that it fits, which is undefined behaviour (UBSan: "outside the range of representable
// values"). It must be refused like any other non-integer.
TEST(ObjectReader, FloatOutsideInt64IsAValidationErrorNotUndefinedBehaviour) {
  for (double d : {1.5e300, -1.5e300, 9223372036854775808.0, -9223372036854777856.0}) {
    const Json j = {{"n", d}};
    ObjectReader r(j, "doc");
    EXPECT_FALSE(r.optional_int("n").has_value()) << d;
    EXPECT_FALSE(r.ok()) << d;
    EXPECT_NE(r.status().message().find("doc.n: expected integer"), std::string::npos)
        << r.status().message();
  }
}

TEST(ObjectReader, IntegralFloatsAtTheEdgesOfInt64AreRead) {
  const Json j = {{"min", -9223372036854775808.0}, {"big", 4611686018427387904.0}, {"two", 2.0}};
  ObjectReader r(j, "doc");
  EXPECT_EQ(r.optional_int("min"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(r.optional_int("big"), int64_t{1} << 62);
  EXPECT_EQ(r.optional_int("two"), 2);
  EXPECT_TRUE(r.ok()) << r.status().message();
}

Json yaml_round_trip(const Json& value) {
  const Result<std::vector<Json>> back = parse_yaml_documents(to_yaml(value));
  if (!back.ok() || back->size() != 1) return Json("<" + back.status().message() + ">");
  return back->front();
}

// json_yaml: yaml-cpp writes a string holding a CR as a plain scalar, and the reader takes the CR
// for a line break: {"k": "a\r"} came back as {"k": "a"} and {"k": "\r"} as {"k": null}.
TEST(ToYaml, StringsWithACarriageReturnReadBackUnchanged) {
  for (const Json& value : {Json{{"k", "a\r"}}, Json{{"k", "\r"}}, Json::array({"a\r", "\r\n"}),
                            Json("a\rb\r"), Json{{"a\r", 1}}}) {
    EXPECT_EQ(yaml_round_trip(value), value) << to_yaml(value);
  }
}

// json_yaml: a string "..." or "---" written plain as a whole document is a document marker, so
// to_yaml("...") read back as no document at all.
TEST(ToYaml, StringsThatLookLikeDocumentMarkersReadBackUnchanged) {
  for (const Json& value : {Json("..."), Json("---"), Json("--- x"), Json("...y"),
                            Json::array({"...", "---"}), Json{{"k", "..."}}}) {
    EXPECT_EQ(yaml_round_trip(value), value) << to_yaml(value);
  }
}

// json_yaml: yaml-cpp writes DEL (even inside double quotes) and the C1 controls raw, which are
// not printable YAML: the reader refused {"serviceJobType": "SAGEMAKER\x7fTRAINING"} as written by
// to_yaml ("control characters are not allowed"). They are written escaped.
TEST(ToYaml, DelAndC1ControlCharactersAreEscaped) {
  for (const Json& value :
       {Json{{"k", "SAGEMAKER\x7fTRAINING"}}, Json("\x7f"),
        Json{{"k",
              "a\xc2\x85"
              "b"}},
        Json{{"\x7f", 1}}, Json{{"k", "\xc3\xa9\x7f"}, {"plain", "\xc3\xa9t\xc3\xa9"}}}) {
    const std::string yaml = to_yaml(value);
    EXPECT_EQ(yaml.find('\x7f'), std::string::npos) << yaml;
    EXPECT_EQ(yaml_round_trip(value), value) << yaml;
  }
  // Only such scalars are escaped: other non-ASCII text stays readable.
  EXPECT_NE(to_yaml(Json{{"k", "\xc3\xa9t\xc3\xa9"}}).find("\xc3\xa9t\xc3\xa9"), std::string::npos);
}

// json_yaml: a YAML reader refuses an implicit key longer than 1024 characters, and escaping can
// make a key several times longer than its bytes (300 bytes of U+0001 are 1200 characters as
// \x01 escapes): to_yaml wrote YAML that parse_yaml refused.
TEST(ToYaml, KeysLongerThanAnImplicitYamlKeyReadBackUnchanged) {
  for (const std::string& key : {std::string(300, '\x01'), std::string(2000, 'k')}) {
    const Json value = {{key, {{"nested", 1}}}, {"short", "x"}};
    EXPECT_EQ(yaml_round_trip(value), value) << to_yaml(value).substr(0, 200);
  }
}

// json_yaml: the string "FALSE" was written plain, and a YAML reader takes FALSE for the boolean
// false (as it takes True, NULL, ~ and Null for booleans and null). Every spelling the reader
// turns into something else is written quoted.
TEST(ToYaml, StringsSpelledLikeBooleansOrNullInAnyCaseReadBackAsStrings) {
  for (const char* text : {"FALSE", "False", "false", "TRUE", "True", "true", "NULL", "Null",
                           "null", "~", "", "yes", "no", "1e400", "-0.5", "12"}) {
    const Json value = {{"k", text}, {"list", Json::array({text})}};
    EXPECT_EQ(yaml_round_trip(value), value) << to_yaml(value);
  }
}

// json_yaml: the key "... sel" was written plain at the start of the document, where "..." ends
// it: the text read back as no document. Keys are quoted by the same rule as values.
TEST(ToYaml, KeysThatLookLikeDocumentMarkersOrOtherTypesReadBackUnchanged) {
  for (const char* key : {"... sel", "...", "--- x", "---", "~", "null", "FALSE", "12", "a\rb"}) {
    const Json value = {{key, nullptr}};
    EXPECT_EQ(yaml_round_trip(value), value) << to_yaml(value);
    const Json nested = {{"outer", {{key, 1}}}};
    EXPECT_EQ(yaml_round_trip(nested), nested) << to_yaml(nested);
  }
}

// json_yaml: a key holding U+2029 (PARAGRAPH SEPARATOR, `\P` in a double-quoted YAML key) was
// written raw, and the reader took it for a line break: "mapping values are not allowed". The
// separators and the byte order mark are written escaped. (U+FFFE/U+FFFF, which no YAML writer
// here can carry, are refused on input:
// JsonText.NoncharactersAreRefusedFromOutsideAndReadFromTheJournal.)
TEST(ToYaml, UnicodeLineSeparatorsAndByteOrderMarksAreEscaped) {
  for (const char* text : {"a\xe2\x80\xa9"
                           "b",
                           "a\xe2\x80\xa8"
                           "b",
                           "\xef\xbb\xbf"
                           "x"}) {
    const Json value = {{text, text}, {"list", Json::array({text})}};
    EXPECT_EQ(yaml_round_trip(value), value) << to_yaml(value);
  }
  const Result<Json> fuzzed = parse_yaml("\"sjobQueuereilo\\Pude00y\": slin44tC!#");
  ASSERT_TRUE(fuzzed.ok()) << fuzzed.status().message();
  EXPECT_EQ(yaml_round_trip(*fuzzed), *fuzzed);
}

// json_yaml: to_yaml cannot write U+FFFE/U+FFFF (yaml-cpp replaces them by U+FFFD and a YAML
// reader refuses them raw), so text from outside holding one is refused, escaped or raw, in JSON
// and YAML; what the server journaled itself still reads (allow_noncharacters).
TEST(JsonText, NoncharactersAreRefusedFromOutsideAndReadFromTheJournal) {
  for (const std::string& text :
       {std::string("{\"k\": \"x\\uffff\"}"), std::string("[\"\\uFFFE\"]"),
        std::string("{\"\\uffff\": 1}"), std::string("\"x\xEF\xBF\xBF\"")}) {
    const Result<Json> j = parse_json(text);
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_NE(j.status().message().find("noncharacter"), std::string::npos) << j.status().message();
    EXPECT_TRUE(parse_json(text, {.allow_noncharacters = true}).ok()) << text;
  }
  EXPECT_TRUE(parse_json("{\"k\": \"\\u00e9\\\\uffff\"}").ok());  // an escaped backslash, then text
  for (const char* yaml : {"k: \"x\\uFFFF\"\n", "\"\\uFFFE\": 1\n"}) {
    const Result<Json> y = parse_yaml(yaml);
    ASSERT_FALSE(y.ok()) << yaml;
    EXPECT_NE(y.status().message().find("noncharacter"), std::string::npos) << y.status().message();
  }
}

// duration_time: "9999-12-31T23:59:60Z" (a leap second) parsed to 10000-01-01T00:00:00, which
// format_iso8601 writes with a five-digit year that parse_iso8601 then refuses, so the time did
// not read back. It is refused; the last second of 9999 itself still round-trips.
TEST(Iso8601, LeapSecondPastYear9999IsRefusedBecauseItCannotBeWrittenBack) {
  const Result<Time> leap = parse_iso8601("9999-12-31T23:59:60Z");
  ASSERT_FALSE(leap.ok());
  EXPECT_EQ(leap.status().code(), ErrorCode::kValidation);
  EXPECT_NE(leap.status().message().find("after 9999-12-31T23:59:59Z"), std::string::npos)
      << leap.status().message();

  const Result<Time> last = parse_iso8601("9999-12-31T23:59:59.999999Z");
  ASSERT_TRUE(last.ok()) << last.status().message();
  EXPECT_EQ(format_iso8601(*last), "9999-12-31T23:59:59Z");
  EXPECT_TRUE(parse_iso8601(format_iso8601(*last)).ok());
  // An ordinary leap second still rolls over into the next minute.
  EXPECT_EQ(format_iso8601(*parse_iso8601("2024-12-31T23:59:60Z")), "2025-01-01T00:00:00Z");
}

}  // namespace
}  // namespace gf
