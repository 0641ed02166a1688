// ObjectReader: typed reads of a JSON object's fields with errors that name the field's path,
// and the unknown-field check (docs/api.md "Errors"); declared in core/json.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "core/json.h"

namespace gf {

std::string path_join(std::string_view base, std::string_view field) {
  if (base.empty()) return std::string(field);
  return std::string(base) + "." + std::string(field);
}

std::string path_index(std::string_view base, size_t index) {
  return fmt::format("{}[{}]", base, index);
}

ObjectReader::ObjectReader(const Json& value, std::string path)
    : value_(value), path_(std::move(path)) {
  if (!value_.is_object()) {
    status_ = validation_error((path_.empty() ? std::string("body") : path_) +
                               ": expected object, got " + describe_json_value(value_));
  }
}

bool ObjectReader::has(std::string_view key) const {
  if (!value_.is_object()) return false;
  auto it = value_.find(key);
  return it != value_.end() && !it->is_null();
}

const Json* ObjectReader::lookup(std::string_view key) {
  if (!ok()) return nullptr;
  read_.emplace(key);
  auto it = value_.find(key);
  if (it == value_.end() || it->is_null()) return nullptr;
  return &*it;
}

void ObjectReader::fail(std::string_view key, std::string message) {
  if (!ok()) return;
  status_ = validation_error(field_path(key) + ": " + message);
}

void ObjectReader::fail_status(const Status& status) {
  if (ok() && !status.ok()) status_ = status;
}

std::optional<std::string> ObjectReader::optional_string(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(key, "expected string, got " + describe_json_value(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::string ObjectReader::required_string(std::string_view key) {
  if (!ok()) return {};
  if (!has(key)) {
    fail(key, "is required");
    return {};
  }
  return optional_string(key).value_or("");
}

std::optional<int64_t> ObjectReader::optional_int(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(key, "integer " + v->dump() + " is too large");
      return std::nullopt;
    }
    return v->get<int64_t>();
  }
  if (v->is_number_float()) {
    // Casting a double outside int64's range is undefined, so the range is checked first:
    // -2^63 is exact as a double and 2^63 is the first double above the range.
    const double d = v->get<double>();
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
        d == static_cast<double>(static_cast<int64_t>(d))) {
      return static_cast<int64_t>(d);
    }
  }
  fail(key, "expected integer, got " + describe_json_value(*v));
  return std::nullopt;
}

int64_t ObjectReader::required_int(std::string_view key) {
  if (!ok()) return 0;
  if (!has(key)) {
    fail(key, "is required");
    return 0;
  }
  return optional_int(key).value_or(0);
}

std::optional<bool> ObjectReader::optional_bool(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    fail(key, "expected boolean, got " + describe_json_value(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

const Json* ObjectReader::optional_value(std::string_view key) { return lookup(key); }

const Json* ObjectReader::required_value(std::string_view key) {
  const Json* v = lookup(key);
  if (!v) fail(key, "is required");
  return v;
}

const Json* ObjectReader::optional_object(std::string_view key) {
  const Json* v = lookup(key);
  if (v && !v->is_object()) {
    fail(key, "expected object, got " + describe_json_value(*v));
    return nullptr;
  }
  return v;
}

const Json* ObjectReader::optional_array(std::string_view key) {
  const Json* v = lookup(key);
  if (v && !v->is_array()) {
    fail(key, "expected array, got " + describe_json_value(*v));
    return nullptr;
  }
  return v;
}

std::optional<std::vector<std::string>> ObjectReader::optional_string_list(std::string_view key) {
  const Json* v = optional_array(key);
  if (!v) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& item = (*v)[i];
    if (!item.is_string()) {
      fail_status(validation_error(path_index(field_path(key), i) + ": expected string, got " +
                                   describe_json_value(item)));
      return std::nullopt;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<FieldValidation> parse_field_validation(std::string_view text, std::string_view param) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "strict") return FieldValidation::kStrict;
  if (lower == "warn") return FieldValidation::kWarn;
  if (lower == "ignore") return FieldValidation::kIgnore;
  return validation_error(
      fmt::format("{}: expected Strict, Warn or Ignore, got \"{}\"", param, text));
}

std::optional<std::string> closest_name(std::string_view key,
                                        const std::set<std::string, std::less<>>& names) {
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(1, key.size() / 3) + 1;
  std::vector<size_t> prev, cur;
  for (const std::string& name : names) {
    // Levenshtein distance, one row at a time.
    prev.resize(name.size() + 1);
    cur.resize(name.size() + 1);
    for (size_t j = 0; j <= name.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= key.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= name.size(); ++j) {
        const size_t sub = prev[j - 1] + (lower(key[i - 1]) == lower(name[j - 1]) ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    if (prev[name.size()] < best_d) {
      best_d = prev[name.size()];
      best = name;
    }
  }
  return best;
}

void ObjectReader::check_unknown(FieldValidation mode, std::vector<std::string>& warnings) {
  if (mode == FieldValidation::kIgnore || !value_.is_object()) return;
  // Hints cost a distance per known name, quadratic in the key's length: only short keys get
  // one, and only the first few, so a body of many unknown keys costs no more than reading it.
  constexpr size_t kMaxHintedKeyBytes = 64;
  constexpr int kMaxHints = 16;
  int hints = 0;
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    if (read_.count(it.key())) continue;
    const bool hinted = it.key().size() <= kMaxHintedKeyBytes && hints++ < kMaxHints;
    const std::optional<std::string> near = hinted ? closest_name(it.key(), read_) : std::nullopt;
    const std::string hint = near ? fmt::format("; did you mean {}?", *near) : "";
    if (mode == FieldValidation::kStrict) {
      fail(it.key(), "unknown field" + hint);
      return;
    }
    warnings.push_back(fmt::format("{}: unknown field, ignored{}", field_path(it.key()), hint));
  }
}

std::vector<std::string> ObjectReader::unknown_fields() const {
  std::vector<std::string> out;
  if (!value_.is_object()) return out;
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    if (!read_.count(it.key())) out.push_back(field_path(it.key()));
  }
  return out;
}

}  // namespace gf
