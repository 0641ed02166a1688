// kubectl's JSONPath templates over a JSON document (`-o jsonpath=…` and `-o custom-columns=…`,
// docs/cli.md "Output"). The subset kubectl documents:
//
//   text outside braces is copied; {…} is an action:
//     {.a.b}  {$.a}  {.items[*].name}  {.items[0]}  {.items[-1:]}  {.items[1:3]}
//     {['key with dots']}  {..name} (recursive descent)  {.items[?(@.status=="Failed")].name}
//     {.items[?(@.spec.x)]} (has the field)  {.a.b,.c.d} (union)  {@}
//     {range .items[*]}…{end}  (the template between, once per result, @ = that result)
//     {"\n"} {'\t'} (literals with \n \t \\ \" \' escapes)
//
// A result that is a string prints as it is; other values print as compact JSON; the results of
// one action are joined by a space. A path that finds nothing prints nothing (kubectl's
// allowMissingKeys). Filters compare with == != < <= > >= against a string, number, true, false
// or null literal.
//
// Input is a person's command line, but the parser is bounded all the same: templates over
// kMaxTemplateBytes and nesting deeper than kMaxNesting are refused, and the output is cut off
// with an error past kMaxOutputBytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace gf::jsonpath {

inline constexpr size_t kMaxTemplateBytes = 4096;
inline constexpr int kMaxNesting = 16;
inline constexpr size_t kMaxOutputBytes = 64 << 20;

struct Template;  // a parsed template

// Parses a template; the error names the byte offset and what was expected.
Result<std::shared_ptr<const Template>> parse(std::string_view text);

// Renders a parsed template over `data`.
Result<std::string> render(const Template& t, const Json& data);

// parse + render.
Result<std::string> render(std::string_view text, const Json& data);

// The values one path finds ("{.a.b}" or ".a.b"; braces optional, as custom-columns takes them).
Result<std::vector<Json>> select(std::string_view path, const Json& data);

// kubectl's custom-columns: "NAME:.metadata.name,STATUS:.status.phase". Each column's path is
// evaluated per item; several results are joined by ","; none is "<none>".
struct Column {
  std::string header;
  std::string path;
};
Result<std::vector<Column>> parse_columns(std::string_view spec);
// The cells of one row.
Result<std::vector<std::string>> column_cells(const std::vector<Column>& columns, const Json& item);

}  // namespace gf::jsonpath
