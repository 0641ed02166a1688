#include "cli/output.h"

#include <algorithm>

namespace gf {

Result<OutputFormat> parse_output_format(const std::string& text) {
  if (text == "table" || text.empty()) return OutputFormat::kTable;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  return validation_error("-o: expected table, json or yaml, got \"" + text + "\"");
}

void Table::print(std::ostream& out, std::ostream& err) const {
  if (rows_.empty()) {
    err << "No resources found.\n";
    return;
  }
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t i = 0; i < headers_.size(); ++i) width[i] = headers_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < headers_.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      line += cell;
      if (i + 1 < headers_.size()) line += std::string(width[i] - cell.size() + 3, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

void print_structured(std::ostream& out, const Json& value, OutputFormat format) {
  if (format == OutputFormat::kYaml) {
    out << to_yaml(value);
  } else {
    out << value.dump(2) << "\n";
  }
}

}  // namespace gf
