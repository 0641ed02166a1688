// Shared pieces of the libFuzzer targets (docs/fuzzing.md): the input as text, a bound on the
// work one input may cause, and the check that turns a broken invariant into a crash libFuzzer
// records (an abort, so the input is saved as crash-<sha1> and the run fails).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/result.h"

namespace gf::fuzz {

// Larger inputs are skipped: every parser here reads request bodies, files or log lines that
// are far smaller, and quadratic work on a multi-megabyte input would read as a timeout.
inline constexpr size_t kMaxInputBytes = 64 * 1024;

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

[[noreturn]] inline void fail(const char* file, int line, const char* what,
                              const std::string& detail) {
  std::fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n%s\n", file, line, what, detail.c_str());
  std::abort();
}

// FUZZ_CHECK(cond, detail): `detail` (a std::string expression) is only built on failure.
#define FUZZ_CHECK(cond, detail)                                        \
  do {                                                                  \
    if (!(cond)) ::gf::fuzz::fail(__FILE__, __LINE__, #cond, (detail)); \
  } while (0)

// Json::dump throws on strings that are not UTF-8; parsers keep user bytes verbatim, so the
// targets serialize with replacement instead (the harness must not be the thing that crashes).
inline std::string dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Splits "<head><sep><rest>" at the first `sep`; head is everything when sep is absent.
inline std::pair<std::string_view, std::string_view> split_once(std::string_view text,
                                                                std::string_view sep) {
  const size_t at = text.find(sep);
  if (at == std::string_view::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + sep.size())};
}

// The one document of a JSON or YAML text into `out`; false when the text is not exactly one
// document (json_yaml_fuzz covers those paths; here they are just uninteresting inputs).
inline bool parse_one(std::string_view text, Json& out) {
  Result<std::vector<Json>> docs = parse_documents(text);
  if (!docs.ok() || docs->size() != 1) return false;
  out = std::move(docs->front());
  return true;
}

// Called with the status of a failed Result: it must be an error with a message, since an empty
// one reaches the user as `ValidationException: ` and nothing else.
inline void check_error(const Status& status, const char* file, int line) {
  if (status.ok() || status.message().empty()) {
    fail(file, line, "error status with a message", status.to_string());
  }
}
#define FUZZ_CHECK_ERROR(status) ::gf::fuzz::check_error((status), __FILE__, __LINE__)

}  // namespace gf::fuzz
