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
  OutputSpec output;
  Client client;
  // Set when -o jsonpath/custom-columns could not render an answer (the command then exits 1).
  mutable bool output_failed = false;

  // json, yaml, jsonpath or custom-columns: the answer is printed, not a table.
  bool structured() const { return output.structured(); }
};

// Whether standard output is a terminal, and its width in columns (80 when it cannot be told).
bool stdout_is_tty();
int terminal_width();
// How tables look: colour per --color (auto: on a terminal, unless $NO_COLOR is set), the
// terminal's width for cutting free text (none with -o wide or off a terminal).
TableStyle terminal_style(const GlobalOptions& global, const OutputSpec& output);

// When `cmd` is chosen, ctx.run checks -o (exit 2 on a bad value, before any request), builds a
// client from --server/--user and calls `body`. Unmatched options fall through to the parent, so
// global flags may follow the subcommand (`gpufleet cluster list -o json`).
void run_with_client(CLI::App* cmd, CommandContext& ctx, std::function<int(CommandEnv&)> body);

// Prints "error: <message>" on stderr. Returns 1.
int print_error(const Status& status);
// Prints "error: <message>" on stderr. Returns 2.
int usage_error(const std::string& message);

// With -o json|yaml|jsonpath=…|custom-columns=… prints `answer` so and returns true; for tables
// (-o table|wide) returns false.
bool print_if_structured(const CommandEnv& env, const Json& answer);

// The whole content of `path` ("-" reads stdin); the error names the path and the reason.
Result<std::string> read_input_file(const std::string& path);
// application/yaml for .yaml/.yml files, application/json otherwise.
std::string content_type_for(const std::string& path);

// Checks that a time flag is "1h" (that long before the server's now) or an ISO 8601 time; the
// error names `flag`. The text goes to the server as it is: the server resolves a duration
// against its own clock, which runs ahead of ours under --sim-speed (docs/cli.md "Time").
Status check_time_flag(const std::string& flag, const std::string& text);
// Wall-clock now of the client (--wait deadlines, elapsed time).
Time client_now();
// The server's now as its last answer gave it (the client's clock before any answer): what ages
// (the AGE column) are counted against.
Time server_now(const Client& client);
// kubectl's AGE: "45s", "12m", "5h", "3d" from `created` to `now` (never negative).
std::string format_age(Time created, Time now);

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

// HyperPod's list filters (list-clusters, list-cluster-nodes): --sort-by name|creation-time,
// --sort-order ascending|descending, --created-after / --created-before (a duration ago or a
// time). Checked on this side, resolved by the server (its clock).
struct ListFlags {
  std::string sort_by, sort_order, created_after, created_before;
  Status check() const;
  void add_to(QueryString& query) const;  // SortBy, SortOrder, CreationTimeAfter/Before
};
void add_list_flags(CLI::App* cmd, ListFlags& flags);

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

// A count for a table cell: as it is, except a large round one in scientific form
// ("10000000000" -> "1e10": a limit meant as "no limit" stays readable); "" stays "".
std::string compact_count(const std::string& digits);

// "$12.35": micro-dollars rounded to the cent.
std::string format_dollars(int64_t micros);
// Micro-dollars from the wire's decimal money ("98.320000"); 0 when it is not a number.
int64_t parse_micros(const std::string& money);

}  // namespace gf
