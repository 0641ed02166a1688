// Output for people (tables) and machines (-o json|yaml|jsonpath=…|custom-columns=…), as kubectl
// prints them (docs/cli.md "Output").
#pragma once

#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/jsonpath.h"
#include "core/result.h"

namespace gf {

enum class OutputFormat {
  kTable,          // aligned columns
  kWide,           // -o wide: the table with its extra columns, no cell cut short
  kJson,           // the answer as the API gave it
  kYaml,           // the same in YAML
  kJsonPath,       // -o jsonpath=TEMPLATE over the answer
  kCustomColumns,  // -o custom-columns=H:PATH,… over the answer's items
};

struct OutputSpec {
  OutputFormat format = OutputFormat::kTable;
  std::shared_ptr<const jsonpath::Template> jsonpath;  // kJsonPath
  std::vector<jsonpath::Column> columns;               // kCustomColumns

  // json, yaml, jsonpath and custom-columns print the answer itself, not a table.
  bool structured() const {
    return format != OutputFormat::kTable && format != OutputFormat::kWide;
  }
};

// table, wide, json, yaml, jsonpath=TEMPLATE, custom-columns=SPEC; errors name -o.
Result<OutputSpec> parse_output(const std::string& text);

// How tables look in this process, set once by the CLI from -o and the terminal.
struct TableStyle {
  bool color = false;  // ANSI colours on status words (a terminal, and NO_COLOR unset)
  int width = 0;       // the terminal's columns: free-text cells are cut to fit; 0 = no limit
  bool wide = false;   // -o wide: the wide columns shown, nothing cut
};
void set_table_style(const TableStyle& style);
const TableStyle& table_style();

// A table column. `wide`: shown only with -o wide. `text`: free text (a message, a reason, an
// ARN) that is cut with "..." when the line would not fit the terminal.
struct Column {
  Column(const char* h) : header(h) {}             // NOLINT(google-explicit-constructor)
  Column(std::string h) : header(std::move(h)) {}  // NOLINT(google-explicit-constructor)
  Column(std::string h, bool wide_only, bool free_text)
      : header(std::move(h)), wide(wide_only), text(free_text) {}
  std::string header;
  bool wide = false;
  bool text = false;
};
inline Column wide_column(std::string header) { return Column(std::move(header), true, false); }
inline Column text_column(std::string header) { return Column(std::move(header), false, true); }

// Column widths fit the widest cell; no trailing spaces. Cells of the columns whose header says
// a status (STATUS, STATE, LEVEL, SEVERITY, HEALTH, RESULT) are coloured by what they say when
// the style has colour: failures red, warnings and what waits for a person yellow, healthy green.
// `text` as a terminal shows it faithfully: control characters (ESC, CR, …; newlines and tabs
// too unless `keep_lines`) and the Unicode direction controls (U+202E followed by "ecila" reads
// "alice") are written as visible escapes (`\x1b`, `\u202e`). Every table cell and described
// field goes through it: what a server holds comes from callers.
std::string terminal_safe(std::string_view text, bool keep_lines = false);

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  // One cell per column, wide columns included (they are dropped at print time).
  void add_row(std::vector<std::string> row) {
    for (std::string& cell : row) cell = terminal_safe(cell);
    rows_.push_back(std::move(row));
  }
  bool empty() const { return rows_.empty(); }
  // The header and the rows, in aligned columns. With no rows, kubectl's habit: "No resources
  // found." on `err` and nothing on `out`, so a pipe counts no lines.
  void print(std::ostream& out) const { print(out, std::cerr, table_style()); }
  void print(std::ostream& out, std::ostream& err) const { print(out, err, table_style()); }
  void print(std::ostream& out, std::ostream& err, const TableStyle& style) const;
  // The header then the rows as `style` shows them (wide columns dropped unless -o wide), not
  // padded: what --watch compares between polls.
  std::vector<std::vector<std::string>> visible(const TableStyle& style) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// The colour a status word gets ("" = none): "Failed", "Error", "critical", ... red; "Warn",
// "Degraded", "Proposed", ... yellow; "InService", "Running", "Succeeded", ... green. A cell of
// several words separated by commas ("Running,Cordoned") takes the most severe.
std::string_view status_color(std::string_view cell);

// One line of cells, each padded to at least its width in `widths` and two spaces apart (the
// last cell and cells beyond `widths` as they are): rows printed one at a time that line up, as
// --follow and --watch print them.
std::string aligned_row(const std::vector<std::string>& cells, const std::vector<size_t>& widths);

// json, yaml, jsonpath or custom-columns. custom-columns takes the answer's items: the one
// member of the answer that is an array of objects (items, ClusterSummaries, Events, ...), or the
// answer itself when it has none.
Status print_structured(std::ostream& out, const Json& value, const OutputSpec& spec);

}  // namespace gf
