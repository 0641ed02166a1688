#include "cli/output.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gf {
namespace {

std::string print(const Table& t, TableStyle style) {
  std::ostringstream out, err;
  t.print(out, err, style);
  return out.str();
}

TEST(Output, FormatsAreParsedAndATypoNamesTheChoices) {
  EXPECT_EQ(parse_output("")->format, OutputFormat::kTable);
  EXPECT_EQ(parse_output("wide")->format, OutputFormat::kWide);
  EXPECT_FALSE(parse_output("wide")->structured());
  EXPECT_TRUE(parse_output("yaml")->structured());
  auto jp = parse_output("jsonpath={.items[*].name}");
  ASSERT_TRUE(jp.ok());
  EXPECT_EQ(jp->format, OutputFormat::kJsonPath);
  EXPECT_EQ(parse_output("custom-columns=N:.name")->columns.size(), 1u);
  auto bad = parse_output("jsn");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("expected table, wide, json, yaml, jsonpath"),
            std::string::npos);
  auto bad_path = parse_output("jsonpath={.items[}");
  ASSERT_FALSE(bad_path.ok());
  EXPECT_EQ(bad_path.status().message().rfind("-o: jsonpath:", 0), 0u)
      << bad_path.status().message();
}

TEST(Table, WideColumnsShowOnlyWithDashOWide) {
  Table t({"NAME", "STATUS", wide_column("ARN")});
  t.add_row({"c1", "InService", "arn:gpufleet:local:000000000000:cluster/abc"});
  EXPECT_EQ(print(t, {}), "NAME   STATUS\nc1     InService\n");
  TableStyle wide;
  wide.wide = true;
  EXPECT_EQ(
      print(t, wide),
      "NAME   STATUS      ARN\nc1     InService   arn:gpufleet:local:000000000000:cluster/abc\n");
}

TEST(Table, FreeTextIsCutToTheTerminalWidthButNeverBelowItsMinimum) {
  Table t({"ID", text_column("MESSAGE")});
  t.add_row({"i-1", std::string(100, 'm')});
  TableStyle term;
  term.width = 40;
  const std::string out = print(t, term);
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 40u) << line;
  EXPECT_NE(out.find("..."), std::string::npos);
  term.width = 5;  // narrower than possible: the text keeps its minimum
  EXPECT_NE(print(t, term).find(std::string(9, 'm') + "..."), std::string::npos);
  TableStyle wide;
  wide.wide = true;
  wide.width = 40;
  EXPECT_NE(print(t, wide).find(std::string(100, 'm')), std::string::npos);  // -o wide: whole
}

TEST(Table, StatusWordsAreColouredOnlyWhenTheStyleSaysSo) {
  Table t({"NAME", "STATUS", "NOTE"});
  t.add_row({"a", "Failed", "Failed"});
  t.add_row({"b", "Running,Cordoned", ""});
  t.add_row({"c", "InService", ""});
  EXPECT_EQ(print(t, {}).find('\x1b'), std::string::npos);
  TableStyle color;
  color.color = true;
  const std::string out = print(t, color);
  EXPECT_NE(out.find("\x1b[31mFailed\x1b[0m"), std::string::npos) << out;
  EXPECT_EQ(out.find("\x1b[31m"), out.rfind("\x1b[31m")) << "NOTE is no status column: " << out;
  EXPECT_NE(out.find("\x1b[33mRunning,Cordoned\x1b[0m"), std::string::npos) << out;
  EXPECT_NE(out.find("\x1b[32mInService\x1b[0m"), std::string::npos) << out;
  EXPECT_EQ(status_color("critical"), "\x1b[31m");
  EXPECT_EQ(status_color("Warn"), "\x1b[33m");
  EXPECT_EQ(status_color("my-cluster"), "");
}

TEST(Output, CustomColumnsTakeTheAnswersItemsAndJsonPathTheWholeAnswer) {
  const Json answer = {
      {"ClusterSummaries", Json::array({{{"ClusterName", "a"}, {"ClusterStatus", "InService"}},
                                        {{"ClusterName", "b"}, {"ClusterStatus", "Failed"}}})}};
  std::ostringstream out;
  ASSERT_TRUE(print_structured(out, answer,
                               *parse_output("custom-columns=NAME:.ClusterName,S:.ClusterStatus"))
                  .ok());
  EXPECT_EQ(out.str(), "NAME   S\na      InService\nb      Failed\n");
  std::ostringstream jp;
  ASSERT_TRUE(
      print_structured(jp, answer, *parse_output("jsonpath={.ClusterSummaries[*].ClusterName}"))
          .ok());
  EXPECT_EQ(jp.str(), "a b\n");
  // An answer with no list: the answer itself is the one row.
  std::ostringstream one;
  ASSERT_TRUE(print_structured(one, Json{{"ClusterName", "c"}},
                               *parse_output("custom-columns=NAME:.ClusterName"))
                  .ok());
  EXPECT_EQ(one.str(), "NAME\nc\n");
}

TEST(Output, AlignedRowsLineUpOnFixedWidths) {
  EXPECT_EQ(aligned_row({"a", "bb", "rest of it"}, {3, 4}), "a    bb    rest of it");
  EXPECT_EQ(aligned_row({"toolong", "x"}, {3}), "toolong  x");
}

TEST(TerminalSafe, ADirectionOverrideIsShownAsAnEscapeNotObeyed) {
  // "\u202e" + "ecila" reads "alice" on a terminal that obeys it.
  EXPECT_EQ(terminal_safe("\u202eecila"), "\\u202eecila");
  EXPECT_EQ(terminal_safe("a\u2066b\u2069c\u200fd\u061ce"), "a\\u2066b\\u2069c\\u200fd\\u061ce");
}

TEST(TerminalSafe, ControlCharactersAreEscapedNewlinesOnlyWhereLinesAreKept) {
  EXPECT_EQ(terminal_safe("red\x1b[31m"), "red\\x1b[31m");
  EXPECT_EQ(terminal_safe("a\rb\nc"), "a\\x0db\\x0ac");
  EXPECT_EQ(terminal_safe("a\nb\tc", /*keep_lines=*/true), "a\nb\tc");
  EXPECT_EQ(terminal_safe("\u0085next"), "\\u0085next");
  // Other text, however foreign, is left alone.
  EXPECT_EQ(terminal_safe("Grüße 東京 — ok"), "Grüße 東京 — ok");
}

TEST(TerminalSafe, EveryTableCellGoesThroughIt) {
  Table t({"NAME", "NOTE"});
  t.add_row({"\u202eecila", "x"});
  std::ostringstream out, err;
  t.print(out, err, TableStyle{});
  EXPECT_NE(out.str().find("\\u202eecila"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace gf
