// Runs a scenario (docs/scenarios.md): the real runtime (control loop, provisioner, simulated
// cloud, API) on a VirtualClock starting at kSimEpoch, with the steps sent through the API handlers
// at their virtual times, then writes calls.jsonl, events.jsonl, snapshots.jsonl, state.json and
// metrics.json. Nothing reads the wall clock: the same scenario and seed give byte-identical
// events.jsonl and state.json.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "sim/scenario.h"

namespace gf {

// With no --until the run goes on this long after the last thing the scenario schedules (its
// last step or capacity change), so retries, timeouts and rollbacks it sets off can play out.
inline constexpr Duration kDefaultSimTail = hours(6);

struct SimulationOptions {
  std::string out_dir = "sim-out";
  std::optional<uint64_t> seed;            // overrides the scenario's seed
  std::optional<Duration> until;           // since the start; default last_scheduled() + tail
  std::optional<Duration> snapshot_every;  // snapshots.jsonl at every multiple; none when unset
  bool keep_journal = false;               // DIR/journal.db; none on disk when false
  // How long a finished job stays in the run's state (then its figures are kept by the KPIs and,
  // with keep_journal, it is filed in the journal's history); none: the default (7 d).
  std::optional<Duration> job_retention;
  // The process exits right after this run: the simulated fleet is left for the OS to reclaim
  // instead of freed object by object (seconds at fleet scale; docs/performance.md). It stays
  // reachable, so leak checkers do not count it. Ignored with keep_journal (the journal is closed).
  bool leave_at_exit = false;
};

struct SimulationReport {
  std::string scenario;
  uint64_t seed = 1;
  Duration until{};
  size_t steps_run = 0;
  size_t steps_failed = 0;           // answered with a status >= 400 (501s included)
  size_t steps_not_implemented = 0;  // answered 501
  size_t steps_skipped = 0;          // scheduled after --until, not run
  size_t snapshots = 0;
  size_t trace_jobs_submitted = 0;  // trace rows applied (docs/scenarios.md "Traces")
  size_t trace_jobs_refused = 0;    // of them, answered with an error
  size_t trace_jobs_skipped = 0;    // submitted after --until, not run
  std::map<std::string, int64_t> operator_actions;  // the on-call's: approve, reset-breaker
  size_t events = 0;
  Json state;                      // what state.json holds
  Json metrics;                    // what metrics.json holds
  std::vector<std::string> files;  // every output written, under out_dir
};

// Runs the scenario and writes its outputs. Calls answered with errors are recorded, not fatal;
// an error here means the run itself could not happen (unwritable DIR, journal failure).
Result<SimulationReport> run_simulation(const Scenario& scenario, const SimulationOptions& options);

// `t` of the output records: seconds since the start, an integer when whole, else fractional
// (microsecond resolution).
Json seconds_since_start(Time t);

}  // namespace gf
