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
#include "core/time.h"

namespace gf {

using Json = nlohmann::json;

// Bounds on what one input may decode to, so that no request can exhaust the stack or memory:
// nesting deeper than `max_depth` is refused before parsing (JSON) or while converting (YAML),
// and a YAML document whose aliases expand past `max_nodes` values or `max_scalar_bytes` of text
// is refused (a 557-byte "billion laughs" would otherwise decode to gigabytes). The defaults fit
// every real input by orders of magnitude (see docs/security.md).
struct ParseLimits {
  int max_depth = 256;
  size_t max_nodes = 250'000;
  size_t max_scalar_bytes = 16u << 20;
  // Text from outside may not hold U+FFFE/U+FFFF (YAML cannot carry them); what the server
  // journaled itself is read as it was written.
  bool allow_noncharacters = false;
  // Text from outside may not name a key twice in one object (`{"a":1,"a":2}`): which one wins
  // differs between parsers, so the request is refused rather than guessed.
  bool allow_duplicate_keys = false;
};
// For text the server wrote itself (journal payloads, snapshots): a request accepted just under
// the depth limit is stored a few levels deeper inside its event, and journals written before
// noncharacters were refused must still replay.
inline constexpr ParseLimits kStoredTextLimits{
    .max_depth = 1024, .allow_noncharacters = true, .allow_duplicate_keys = true};

// Errors are ValidationExceptions naming what is wrong (line/column, the limit hit); no
// exception escapes. Numbers outside double's range (`1e400`) are an error, not infinity.
Result<Json> parse_json(std::string_view text, const ParseLimits& limits = {});
// One YAML document. Plain scalars become numbers/booleans/null where YAML 1.2 core schema says
// so; quoted scalars stay strings.
Result<Json> parse_yaml(std::string_view text, const ParseLimits& limits = {});
// Every `---`-separated document (empty documents skipped).
Result<std::vector<Json>> parse_yaml_documents(std::string_view text,
                                               const ParseLimits& limits = {});
// JSON when the text starts with '{' or '[', YAML otherwise; all documents.
Result<std::vector<Json>> parse_documents(std::string_view text, const ParseLimits& limits = {});

// The depth of the deepest `[`/`{` nesting in a JSON text (strings skipped), stopping early once
// it passes `stop_above`.
int json_nesting_depth(std::string_view text, int stop_above);
// The offset of the first byte that is not part of well-formed UTF-8, or npos.
size_t find_invalid_utf8(std::string_view text);
// Whether `text` holds U+FFFE or U+FFFF (raw UTF-8), Unicode noncharacters that YAML cannot
// carry; text from outside may not (docs/api.md, "Text").
bool has_noncharacter(std::string_view text);
// `text` with every ill-formed UTF-8 sequence replaced by U+FFFD and control characters other
// than tab/newline shown as `\xNN`, cut to `max_bytes`: safe to put in an error message.
std::string printable(std::string_view text, size_t max_bytes = 200);
// A duration given as a number of seconds or as text ("30m", "3h"), between 0 and `max`: later
// arithmetic adds it to clock times, so an unbounded one would overflow. The error (no field
// path; the caller adds it) says "must not be negative", "must be at most <max>" or what a
// duration looks like. `max` is whole days.
Result<Duration> read_bounded_duration(const Json& value, Duration max);

// Json::dump that never throws: ill-formed UTF-8 in strings becomes U+FFFD.
std::string safe_dump(const Json& value, int indent = -1);

std::string to_yaml(const Json& value);

// A short description of a value for error messages: `"x"`, `12`, `an object`.
std::string describe_json_value(const Json& value);
std::string json_type_name(const Json& value);

// Path helpers: field("InstanceGroups", "x") -> "InstanceGroups.x"; index -> "InstanceGroups[2]".
std::string path_join(std::string_view base, std::string_view field);
std::string path_index(std::string_view base, size_t index);

// What a request's fields that the server does not know do (Kubernetes' fieldValidation):
// kStrict refuses the request naming the first one and the closest known field, kWarn accepts it
// with a warning per field, kIgnore accepts it silently.
enum class FieldValidation : uint8_t { kStrict, kWarn, kIgnore };
// "Strict", "Warn" or "Ignore" (any letter case); the error names `param`.
Result<FieldValidation> parse_field_validation(std::string_view text, std::string_view param);

// Of `names`, the one closest to `key` by edit distance (letter case ignored), if it is close
// enough to be a typo of it: at most a third of its length, and at least 1.
std::optional<std::string> closest_name(std::string_view key,
                                        const std::set<std::string, std::less<>>& names);

// Reads fields of one JSON object. The first error is kept and later reads become no-ops, so a
// parser reads every field then checks ok() once. Keys that were never read are reported by
// unknown_fields(); check_unknown() applies a FieldValidation to them.
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
  // The fields never read, by `mode`: kStrict fails the reader on the first ("X: unknown field;
  // did you mean Y?" when a read key is close to it), kWarn appends one warning per field to
  // `warnings`, kIgnore does nothing.
  void check_unknown(FieldValidation mode, std::vector<std::string>& warnings);

 private:
  const Json* lookup(std::string_view key);

  const Json& value_;
  std::string path_;
  Status status_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace gf
