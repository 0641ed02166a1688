// Output for people (tables) and machines (-o json|yaml).
#pragma once

#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace gf {

enum class OutputFormat { kTable, kJson, kYaml };
Result<OutputFormat> parse_output_format(const std::string& text);

// Column widths fit the widest cell; no trailing spaces.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // The header and the rows, in aligned columns. With no rows, kubectl's habit: "No resources
  // found." on `err` and nothing on `out`, so a pipe counts no lines.
  void print(std::ostream& out) const { print(out, std::cerr); }
  void print(std::ostream& out, std::ostream& err) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

void print_structured(std::ostream& out, const Json& value, OutputFormat format);

}  // namespace gf
