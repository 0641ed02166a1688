#include "core/label_selector.h"

#include <fmt/format.h>

#include <algorithm>

namespace gf {

namespace {

constexpr size_t kMaxSelectorBytes = 4096;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits at commas outside parentheses.
std::vector<std::string_view> split_requirements(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size()) {
      if (text[i] == '(') ++depth;
      if (text[i] == ')' && depth > 0) --depth;
      if (text[i] != ',' || depth > 0) continue;
    }
    out.push_back(trim(text.substr(start, i - start)));
    start = i + 1;
  }
  return out;
}

bool valid_word(std::string_view w) {
  return !w.empty() && std::none_of(w.begin(), w.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '=' || c == '!' || c == '(' || c == ')' || c == ',';
  });
}

}  // namespace

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  if (text.size() > kMaxSelectorBytes) {
    return validation_error(fmt::format("-l: the selector is over {} bytes", kMaxSelectorBytes));
  }
  LabelSelector sel;
  if (trim(text).empty()) return sel;
  for (std::string_view item : split_requirements(text)) {
    auto bad = [&](std::string_view why) {
      return validation_error(
          fmt::format("-l: \"{}\": {} (expected key=value, key!=value, key, !key, "
                      "key in (a,b) or key notin (a,b))",
                      printable(item, 80), why));
    };
    if (item.empty()) return bad("empty requirement");
    Requirement r;
    if (item.front() == '!') {
      r.key = std::string(trim(item.substr(1)));
      r.op = Op::kNotExists;
    } else if (size_t ne = item.find("!="); ne != std::string_view::npos) {
      r.key = std::string(trim(item.substr(0, ne)));
      r.op = Op::kNotEquals;
      r.values.emplace_back(trim(item.substr(ne + 2)));
    } else if (size_t eq = item.find('='); eq != std::string_view::npos) {
      r.key = std::string(trim(item.substr(0, eq)));
      r.op = Op::kEquals;
      const size_t skip = item.substr(eq).starts_with("==") ? 2 : 1;
      r.values.emplace_back(trim(item.substr(eq + skip)));
    } else if (size_t paren = item.find('('); paren != std::string_view::npos) {
      std::string_view head = trim(item.substr(0, paren));
      const size_t space = head.find_last_of(" \t");
      if (space == std::string_view::npos || item.back() != ')') return bad("malformed set");
      const std::string_view word = head.substr(space + 1);
      if (word == "in") {
        r.op = Op::kIn;
      } else if (word == "notin") {
        r.op = Op::kNotIn;
      } else {
        return bad("expected in or notin before (");
      }
      r.key = std::string(trim(head.substr(0, space)));
      std::string_view list = item.substr(paren + 1, item.size() - paren - 2);
      size_t start = 0;
      for (size_t i = 0; i <= list.size(); ++i) {
        if (i < list.size() && list[i] != ',') continue;
        std::string_view v = trim(list.substr(start, i - start));
        if (!valid_word(v)) return bad("a value of the set is empty or malformed");
        r.values.emplace_back(v);
        start = i + 1;
      }
    } else {
      r.key = std::string(item);
      r.op = Op::kExists;
    }
    if (!valid_word(r.key)) return bad("the key is empty or malformed");
    for (const std::string& v : r.values) {
      if (v.find_first_of(" \t=!(),") != std::string::npos) return bad("the value is malformed");
    }
    sel.requirements_.push_back(std::move(r));
  }
  return sel;
}

bool LabelSelector::matches(const std::map<std::string, std::string>& labels) const {
  for (const Requirement& r : requirements_) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    const bool in_values =
        has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    bool ok = false;
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        ok = in_values;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        ok = !in_values;
        break;
      case Op::kExists:
        ok = has;
        break;
      case Op::kNotExists:
        ok = !has;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

bool LabelSelector::matches(const Json& labels) const {
  std::map<std::string, std::string> m;
  if (labels.is_object()) {
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      if (it.value().is_string()) m[it.key()] = it.value().get<std::string>();
    }
  }
  return matches(m);
}

}  // namespace gf
