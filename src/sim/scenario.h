// A scenario (docs/scenarios.md): the REST API on a timeline plus a cloud model. Parsed from YAML
// or JSON into plain values; every error names the field path (`steps[3].at: invalid duration "5x":
// …`).
// `{ $file: PATH }` values are read relative to the scenario file's directory (JSON or YAML).
// docs/scenarios.md documents the format field by field.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cloud/sim/sim_cloud.h"
#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "provision/provisioner.h"
#include "schedule/scheduler.h"
#include "sim/failure_model.h"
#include "sim/trace.h"

namespace gf {

enum class StepKind {
  kCall,
  kApply,
  kFault,
  kClear,
  kApprove,
  kReject,
  kCancel,
  kRequest,
  kPriority,
  kDelete
};

// The step's key in the file: "call", "apply", "fault", …
std::string_view step_kind_name(StepKind kind);

struct ScenarioStep {
  size_t index = 0;  // position in the file's `steps` list, for messages and calls.jsonl
  Duration at{};     // since the start of the simulation
  StepKind kind = StepKind::kCall;
  std::string as = "anonymous";  // sent as X-Gpufleet-User
  // kCall: "METHOD /path?query" split up; the body (absent = empty request body).
  std::string method;
  std::string path;
  std::map<std::string, std::string> query;  // percent-decoded
  std::optional<Json> body;
  // Every other kind: the step's value with `$file`s resolved (apply: one document, or an array
  // of them when the file holds several).
  Json value;

  // What calls.jsonl records as `call`: "POST /v1/clusters" or the kind's name.
  std::string label() const;
};

// `config:` — overrides of serve options. Absent fields keep the defaults.
struct ScenarioConfig {
  std::optional<Duration> min_count_timeout;  // minCountTimeout
  std::optional<Duration> retry_base;         // retryBase
  std::optional<Duration> retry_max;          // retryMax
  std::optional<std::string> region;          // region (ARNs)
  std::optional<std::string> account;         // account (ARNs)
  std::optional<bool> reservation;            // reservation (serve --reservation)
  std::optional<bool> backfill;               // backfill (serve --backfill)

  void apply_to(ProvisionOptions& options) const;
  void apply_to(sched::SchedulerOptions& options) const;
};

struct Scenario {
  std::string name;
  std::string file;  // where it was loaded from ("" when parsed from text)
  std::optional<uint64_t> seed;
  ScenarioConfig config;
  SimCloudConfig cloud;
  std::vector<ScenarioStep> steps;  // ordered by `at`; steps with equal `at` keep file order
  std::vector<TraceSpec> traces;    // `traces:` (and simulate --trace)
  // The traces' jobs in submission order (load_traces); at equal times, trace then row order.
  std::vector<TraceJob> trace_jobs;
  std::optional<FailureModelSpec> failures;  // `failures:`; none = no failure model

  // The latest instant the scenario itself names: its last step or its last capacity change.
  Duration last_scheduled() const;
};

// Reads every trace of `s.traces` into `s.trace_jobs` (sampling seeded by `seed`). Errors name
// the trace: `traces[1]: cluster04.csv: line 7: duration: expected an integer, got "x"`.
Status load_traces(Scenario& s, uint64_t seed);

// The scenario file as a document, before parsing (what --set edits).
Result<Json> read_scenario_document(const std::string& file);
// Applies one `KEY=VALUE` of `simulate --set` / `--compare` to a scenario document. KEY is a
// dotted path with list indexes (`config.reservation`, `steps[0].body.NodeRecovery`,
// `failures.operator`); maps on the way are created. VALUE is read as YAML (`false`, `3h`,
// `{responseTime: 1h}`); `KEY=` with nothing removes the key.
Status set_scenario_value(Json& doc, std::string_view assignment);
// Parses a document read by read_scenario_document; `$file`s resolve against `file`'s folder.
Result<Scenario> scenario_from_document(const Json& doc, const std::string& file);

// Reads and parses a scenario file. Errors carry the field path but not the file name.
Result<Scenario> load_scenario(const std::string& file);
// Parses scenario text (YAML or JSON, one document); `$file` paths resolve against `base_dir`.
Result<Scenario> parse_scenario(std::string_view text, const std::string& base_dir);
Result<Scenario> parse_scenario_json(const Json& doc, const std::string& base_dir);

}  // namespace gf
