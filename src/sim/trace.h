// Job traces as simulation input (docs/scenarios.md "Traces"): the rows of a public GPU-cluster
// trace turned into training jobs submitted at their trace times. Two formats:
//   itp      Microsoft ITP (job_id, submission_time, duration, num_gpu): one job per row; above
//            `gpusPerPod` GPUs the job is a gang of full pods (master + workers).
//   alibaba  Alibaba openb_pod_list (name, cpu_milli, memory_mib, num_gpu, gpu_milli, …,
//            creation_time, deletion_time, scheduled_time): one single-pod job per row that ran
//            (rows never scheduled are skipped); a GPU fraction takes one whole GPU.
// Each job is a PyTorchJob applied in the trace's namespace (its quota leaf), through the same API
// handler `apply` steps use. Parsing never trusts the file: every error names the file, line and
// column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "model/topology.h"

namespace gf {

enum class TraceFormat : uint8_t { kItp, kAlibaba };
std::string_view to_string(TraceFormat f);

// One `traces:` entry of a scenario (or one `simulate --trace FILE`).
struct TraceSpec {
  std::string file;                   // as written (for messages and metrics)
  std::string path;                   // resolved against the scenario's directory
  std::optional<TraceFormat> format;  // none: told by the header
  std::string ns = "default";         // namespace of the jobs: their quota leaf
  std::string ns_column;              // or: the namespace is this column's value (lowercased)
  double sample = 1.0;                // share of rows kept (seeded, per row)
  double time_scale = 1.0;            // submission times are multiplied by this
  Duration start{};                   // added to every submission time
  std::optional<size_t> limit;        // at most this many jobs (after sampling)
  int32_t gpus_per_pod = 8;           // itp: pod size of a gang
  std::optional<Duration> checkpoint_interval;  // per job; none: work is kept only when it ends
  std::optional<Duration> restart_overhead;     // added to every restart's run
  std::string priority_class;                   // kueue.x-k8s.io/priority-class label, if any
  // `topology: {level, mode, minGpus}`: jobs of at least `topology_min_gpus` GPUs ask for
  // `topology` for the whole job (docs/scheduling.md "Topology").
  std::optional<TopologyRequest> topology;
  int32_t topology_min_gpus = 0;
};

// One job from a trace row. Compact: a whole trace is held in memory.
struct TraceJob {
  Duration at{};   // submission, since the start of the simulation
  Duration run{};  // run time
  int32_t gpus = 0;
  int32_t pods = 1;  // pods of the gang (gpus split evenly; itp above gpusPerPod)
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  uint32_t trace = 0;  // index in the scenario's traces
  uint32_t row = 0;    // data line in its file (1 = first after the header)
  std::string name;    // PyTorchJob name (DNS-1123)
  std::string ns;
};

// Parses a `traces[i]` entry. `base_dir` resolves `file`.
Result<TraceSpec> parse_trace_spec(const Json& value, const std::string& path,
                                   const std::string& base_dir);

// Reads the rows of `spec` (the file at spec.path) into jobs for trace number `index`, in file
// order. Sampling is seeded per row by `seed` and the row's id, so a row is kept or not whatever
// the other rows are.
Result<std::vector<TraceJob>> read_trace(const TraceSpec& spec, uint32_t index, uint64_t seed);
// The same from text (fuzzing, tests); `label` names it in errors.
Result<std::vector<TraceJob>> parse_trace(std::string_view text, const TraceSpec& spec,
                                          uint32_t index, uint64_t seed, std::string_view label);

// The PyTorchJob a trace job is submitted as (apply body).
Json trace_job_manifest(const TraceJob& job, const TraceSpec& spec);

// GPU-hours of a list of jobs (gpus × run), the trace's demand.
double trace_gpu_hours(const std::vector<TraceJob>& jobs);

}  // namespace gf
