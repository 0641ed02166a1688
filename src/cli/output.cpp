#include "cli/output.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <string_view>

namespace gf {

namespace {

constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kReset = "\x1b[0m";
constexpr size_t kSeparator = 3;      // spaces between columns
constexpr size_t kMinTextWidth = 12;  // a free-text column is never cut below this

TableStyle& style_storage() {
  static TableStyle style;
  return style;
}

bool is_status_header(std::string_view h) {
  static constexpr std::array<std::string_view, 6> kHeaders = {"STATUS",   "STATE",  "LEVEL",
                                                               "SEVERITY", "HEALTH", "RESULT"};
  return std::find(kHeaders.begin(), kHeaders.end(), h) != kHeaders.end();
}

int severity_of(std::string_view word) {
  static const std::set<std::string_view> kRedWords = {
      "Failed",    "Failure",  "Error",   "FAILED", "critical", "Critical", "Down",   "down",
      "Unhealthy", "Rejected", "INVALID", "Repair", "firing",   "DISABLED", "Broken", "Open"};
  static const std::set<std::string_view> kYellowWords = {
      "Warn",      "Warning",  "warning",        "Degraded",  "Proposed",  "Pending",
      "Creating",  "Updating", "WaitingForIdle", "Draining",  "Cordoned",  "RollingBack",
      "Deleting",  "pending",  "Inspecting",     "BurnIn",    "drain",     "drng",
      "PENDING",   "RUNNABLE", "SystemUpdating", "Executing", "Rejoining", "Approved",
      "Suspended", "Queued",   "ShuttingDown",   "mix"};
  static const std::set<std::string_view> kGreenWords = {
      "InService", "Running",   "Succeeded", "SUCCEEDED", "RUNNING", "Healthy", "ENABLED",
      "VALID",     "Completed", "resolved",  "passed",    "Closed",  "idle",    "alloc"};
  if (kRedWords.contains(word)) return 3;
  if (kYellowWords.contains(word)) return 2;
  if (kGreenWords.contains(word)) return 1;
  return 0;
}

std::string cut(const std::string& cell, size_t width) {
  if (cell.size() <= width) return cell;
  if (width <= 3) return cell.substr(0, width);
  return cell.substr(0, width - 3) + "...";
}

// Narrows free-text columns (widest first) until the line fits `limit`, none below its minimum.
void fit_text_columns(std::vector<size_t>& width, const std::vector<const Column*>& cols,
                      size_t limit) {
  auto total = [&] {
    size_t t = 0;
    for (size_t w : width) t += w;
    return t + kSeparator * (width.empty() ? 0 : width.size() - 1);
  };
  while (total() > limit) {
    size_t widest = width.size();
    for (size_t i = 0; i < width.size(); ++i) {
      const size_t floor = std::max(kMinTextWidth, cols[i]->header.size());
      if (!cols[i]->text || width[i] <= floor) continue;
      if (widest == width.size() || width[i] > width[widest]) widest = i;
    }
    if (widest == width.size()) return;  // nothing left to narrow
    const size_t floor = std::max(kMinTextWidth, cols[widest]->header.size());
    width[widest] = std::max(floor, width[widest] - std::min(width[widest], total() - limit));
  }
}

const Json* item_array(const Json& value) {
  if (!value.is_object()) return nullptr;
  const Json* found = nullptr;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!it.value().is_array()) continue;
    const bool objects = std::all_of(it.value().begin(), it.value().end(),
                                     [](const Json& e) { return e.is_object(); });
    if (!objects) continue;
    if (found) return nullptr;  // two candidates: none is "the" items
    found = &it.value();
  }
  return found;
}

}  // namespace

Result<OutputSpec> parse_output(const std::string& text) {
  OutputSpec spec;
  if (text == "table" || text.empty()) return spec;
  if (text == "wide") {
    spec.format = OutputFormat::kWide;
  } else if (text == "json") {
    spec.format = OutputFormat::kJson;
  } else if (text == "yaml") {
    spec.format = OutputFormat::kYaml;
  } else if (text.starts_with("jsonpath=")) {
    spec.format = OutputFormat::kJsonPath;
    auto t = jsonpath::parse(std::string_view(text).substr(9));
    if (!t.ok()) return t.status().with_prefix("-o");
    spec.jsonpath = *t;
  } else if (text.starts_with("custom-columns=")) {
    spec.format = OutputFormat::kCustomColumns;
    auto c = jsonpath::parse_columns(std::string_view(text).substr(15));
    if (!c.ok()) return c.status().with_prefix("-o");
    spec.columns = std::move(*c);
  } else {
    return validation_error(
        "-o: expected table, wide, json, yaml, jsonpath=TEMPLATE or custom-columns=SPEC, got \"" +
        text + "\"");
  }
  return spec;
}

void set_table_style(const TableStyle& style) { style_storage() = style; }
const TableStyle& table_style() { return style_storage(); }

std::string_view status_color(std::string_view cell) {
  int worst = 0;
  size_t start = 0;
  while (start <= cell.size()) {
    size_t end = cell.find(',', start);
    if (end == std::string_view::npos) end = cell.size();
    worst = std::max(worst, severity_of(cell.substr(start, end - start)));
    start = end + 1;
  }
  switch (worst) {
    case 3:
      return kRed;
    case 2:
      return kYellow;
    case 1:
      return kGreen;
    default:
      return "";
  }
}

void Table::print(std::ostream& out, std::ostream& err, const TableStyle& style) const {
  if (rows_.empty()) {
    err << "No resources found.\n";
    return;
  }
  std::vector<size_t> shown;  // indexes of the columns printed
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (!columns_[i].wide || style.wide) shown.push_back(i);
  }
  std::vector<const Column*> cols;
  std::vector<size_t> width;
  for (size_t i : shown) {
    cols.push_back(&columns_[i]);
    width.push_back(columns_[i].header.size());
  }
  for (const auto& row : rows_) {
    for (size_t c = 0; c < shown.size(); ++c) {
      if (shown[c] < row.size()) width[c] = std::max(width[c], row[shown[c]].size());
    }
  }
  if (style.width > 0 && !style.wide) fit_text_columns(width, cols, style.width);
  auto print_row = [&](const std::vector<std::string>& row, bool header) {
    std::string line;
    size_t pending_spaces = 0;
    for (size_t c = 0; c < shown.size(); ++c) {
      std::string cell = header ? cols[c]->header : (shown[c] < row.size() ? row[shown[c]] : "");
      cell = cut(cell, width[c]);
      const size_t pad = width[c] - cell.size() + kSeparator;
      if (cell.empty()) {
        pending_spaces += pad;
        continue;
      }
      line.append(pending_spaces, ' ');
      const std::string_view color =
          !header && style.color && is_status_header(cols[c]->header) ? status_color(cell) : "";
      if (color.empty()) {
        line += cell;
      } else {
        line.append(color).append(cell).append(kReset);
      }
      pending_spaces = pad;
    }
    out << line << "\n";
  };
  print_row({}, true);
  for (const auto& row : rows_) print_row(row, false);
}

std::vector<std::vector<std::string>> Table::visible(const TableStyle& style) const {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> header;
  for (const Column& c : columns_) {
    if (!c.wide || style.wide) header.push_back(c.header);
  }
  out.push_back(std::move(header));
  for (const auto& row : rows_) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (!columns_[i].wide || style.wide) cells.push_back(i < row.size() ? row[i] : "");
    }
    out.push_back(std::move(cells));
  }
  return out;
}

std::string terminal_safe(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&out](const char* format, unsigned value) {
    char buf[16];
    std::snprintf(buf, sizeof buf, format, value);
    out += buf;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = [&](size_t k) {
      return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
    };
    if (c < 0x20 || c == 0x7f) {
      if (keep_lines && (c == '\n' || c == '\t')) {
        out += static_cast<char>(c);
      } else {
        escape("\\x%02x", c);
      }
    } else if (c == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {  // C1 controls
      escape("\\u%04x", next(1));
      ++i;
    } else if (c == 0xd8 && next(1) == 0x9c) {  // U+061C arabic letter mark
      escape("\\u%04x", 0x061c);
      ++i;
    } else if (c == 0xe2 && ((next(1) == 0x80 && (next(2) == 0x8e || next(2) == 0x8f ||
                                                  (next(2) >= 0xaa && next(2) <= 0xae))) ||
                             (next(1) == 0x81 && next(2) >= 0xa6 && next(2) <= 0xa9))) {
      // U+200E/F marks, U+202A-E embeddings and overrides, U+2066-9 isolates
      escape("\\u%04x", 0x2000 + ((next(1) & 0x3f) << 6) + (next(2) & 0x3f));
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string aligned_row(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    line += cells[i];
    if (i + 1 < cells.size()) {
      const size_t w = i < widths.size() ? widths[i] : 0;
      line.append(w > cells[i].size() ? w - cells[i].size() + 2 : 2, ' ');
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

Status print_structured(std::ostream& out, const Json& value, const OutputSpec& spec) {
  switch (spec.format) {
    case OutputFormat::kYaml:
      out << to_yaml(value);
      return ok_status();
    case OutputFormat::kJsonPath: {
      GF_ASSIGN_OR_RETURN(std::string text, jsonpath::render(*spec.jsonpath, value));
      out << text;
      if (!text.empty() && text.back() != '\n') out << "\n";
      return ok_status();
    }
    case OutputFormat::kCustomColumns: {
      std::vector<Column> headers;
      for (const auto& c : spec.columns) headers.emplace_back(c.header);
      Table t(std::move(headers));
      const Json* items = item_array(value);
      const Json single = Json::array({value});
      for (const Json& item : items ? *items : single) {
        GF_ASSIGN_OR_RETURN(std::vector<std::string> cells,
                            jsonpath::column_cells(spec.columns, item));
        t.add_row(std::move(cells));
      }
      TableStyle plain;  // the person chose the columns: nothing hidden, cut or coloured
      plain.wide = true;
      t.print(out, std::cerr, plain);
      return ok_status();
    }
    default:
      out << safe_dump(value, 2) << "\n";
      return ok_status();
  }
}

}  // namespace gf
