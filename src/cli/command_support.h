// What the client subcommands share: the run wrapper (output format, HTTP client, exit codes),
// reading -f files, time flags, query strings, tolerant field access and key/value blocks.
//
// Exit codes: 0 success, 1 the server (or the operation) said no, 2 bad usage on this side (and
// a --wait that timed out).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/app.h"
#include "cli/output.h"
#include "client/client.h"
#include "core/json.h"
#include "core/result.h"
#include "core/time.h"

namespace gf {

struct CommandEnv {
  OutputFormat format = OutputFormat::kTable;
  Client client;

  bool structured() const { return format != OutputFormat::kTable; }
};

// When `cmd` is chosen, ctx.run checks -o (exit 2 on a bad value, before any request), builds a
// client from --server/--user and calls `body`. Unmatched options fall through to the parent, so
// global flags may follow the subcommand (`gpufleet cluster list -o json`).
void run_with_client(CLI::App* cmd, CommandContext& ctx, std::function<int(CommandEnv&)> body);

// Prints "error: <message>" on stderr. Returns 1.
int print_error(const Status& status);
// Prints "error: <message>" on stderr. Returns 2.
int usage_error(const std::string& message);

// In json/yaml mode prints `answer` unchanged and returns true; in table mode returns false.
bool print_if_structured(const CommandEnv& env, const Json& answer);

// The whole content of `path` ("-" reads stdin); the error names the path and the reason.
Result<std::string> read_input_file(const std::string& path);
// application/yaml for .yaml/.yml files, application/json otherwise.
std::string content_type_for(const std::string& path);

// "1h" (that long before `now`) or an ISO 8601 time; the error names `flag`.
Result<Time> parse_time_flag(const std::string& flag, const std::string& text, Time now);
// Wall-clock now of the client (relative time flags, --wait deadlines).
Time client_now();

// "/v1/clusters/NAME" with NAME percent-encoded.
std::string cluster_path(const std::string& cluster);

// Builds "?a=1&b=2"; empty values are left out, values are percent-encoded.
class QueryString {
 public:
  QueryString& add(std::string_view key, const std::string& value);
  std::string str() const { return text_; }

 private:
  std::string text_;
};

// Tolerant access to answers: a missing key (or a non-object) reads as null, and text_of prints
// strings as they are, numbers and booleans in JSON form, null as "".
const Json& field(const Json& object, std::string_view key);
// An array member, or an empty array when it is missing or not an array.
const Json& array_field(const Json& object, std::string_view key);
std::string text_of(const Json& value);
std::string text_field(const Json& object, std::string_view key);
int64_t int_field(const Json& object, std::string_view key);

using Fields = std::vector<std::pair<std::string, std::string>>;
// "Key:   value" lines aligned on the longest key; fields with an empty value are left out.
void print_fields(std::ostream& out, const Fields& fields);

// "$12.35": micro-dollars rounded to the cent.
std::string format_dollars(int64_t micros);
// Micro-dollars from the wire's decimal money ("98.320000"); 0 when it is not a number.
int64_t parse_micros(const std::string& money);

}  // namespace gf
