// JSON/YAML loading for wire input. YAML is converted to the same nlohmann::json tree so one
// reader validates both. ObjectReader reads typed fields and names the failing field path in its
// error: `InstanceGroups[2].InstanceCount: expected integer, got "x"`.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace gf {

using Json = nlohmann::json;

Result<Json> parse_json(std::string_view text);
// One YAML document. Plain scalars become numbers/booleans/null where YAML 1.2 core schema says
// so; quoted scalars stay strings.
Result<Json> parse_yaml(std::string_view text);
// Every `---`-separated document (empty documents skipped).
Result<std::vector<Json>> parse_yaml_documents(std::string_view text);
// JSON when the text starts with '{' or '[', YAML otherwise; all documents.
Result<std::vector<Json>> parse_documents(std::string_view text);

std::string to_yaml(const Json& value);

// A short description of a value for error messages: `"x"`, `12`, `an object`.
std::string describe_json_value(const Json& value);
std::string json_type_name(const Json& value);

// Path helpers: field("InstanceGroups", "x") -> "InstanceGroups.x"; index -> "InstanceGroups[2]".
std::string path_join(std::string_view base, std::string_view field);
std::string path_index(std::string_view base, size_t index);

// Reads fields of one JSON object. The first error is kept and later reads become no-ops, so a
// parser reads every field then checks ok() once. Keys that were never read are reported by
// unknown_fields() (kept and ignored with a warning, never an error: DESIGN.md).
class ObjectReader {
 public:
  // `value` must outlive the reader. A non-object value sets an error naming `path`.
  ObjectReader(const Json& value, std::string path);

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const std::string& path() const { return path_; }
  std::string field_path(std::string_view key) const { return path_join(path_, key); }
  bool has(std::string_view key) const;

  std::string required_string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  int64_t required_int(std::string_view key);
  std::optional<int64_t> optional_int(std::string_view key);
  std::optional<bool> optional_bool(std::string_view key);
  // The raw sub-value (object, array, anything), or nullptr when absent.
  const Json* optional_value(std::string_view key);
  const Json* required_value(std::string_view key);
  // Like optional_value but the value must be an object / array.
  const Json* optional_object(std::string_view key);
  const Json* optional_array(std::string_view key);
  std::optional<std::vector<std::string>> optional_string_list(std::string_view key);

  // Records an error for `key` (e.g. a value outside its allowed range).
  void fail(std::string_view key, std::string message);
  void fail_status(const Status& status);

  std::vector<std::string> unknown_fields() const;

 private:
  const Json* lookup(std::string_view key);

  const Json& value_;
  std::string path_;
  Status status_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace gf
