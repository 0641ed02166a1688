#include "sim/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gf {

namespace {

namespace fs = std::filesystem;

// A trace file is read whole: these bound what one can cost (docs/scenarios.md "Traces").
constexpr uintmax_t kMaxTraceBytes = 512ull << 20;
constexpr size_t kMaxTraceLine = 64 * 1024;
constexpr size_t kMaxTraceRows = 10'000'000;
// A trace time or duration: at most 10 years in seconds.
constexpr int64_t kMaxTraceSeconds = 10ll * 366 * 86400;
constexpr int64_t kMaxTraceGpus = 65536;

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view f = line.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!f.empty() && (f.back() == ' ' || f.back() == '\r')) f.remove_suffix(1);
    while (!f.empty() && f.front() == ' ') f.remove_prefix(1);
    out.push_back(f);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// splitmix64 over FNV-1a of the text and the seed: the per-row sampling draw.
double row_draw(uint64_t seed, std::string_view id) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// A DNS-1123 label from free text: lowercase letters, digits and '-', starting with a letter.
std::string dns_label(std::string_view text, size_t max) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() >= max) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty() || std::isalpha(static_cast<unsigned char>(out.front())) == 0) out = "t" + out;
  return out.substr(0, max);
}

struct Columns {
  std::map<std::string, size_t, std::less<>> index;
  Result<size_t> need(std::string_view name, std::string_view label) const {
    auto it = index.find(name);
    if (it == index.end()) {
      return validation_error(fmt::format("{}: line 1: the header has no column {}", label, name));
    }
    return it->second;
  }
  std::optional<size_t> find(std::string_view name) const {
    auto it = index.find(name);
    if (it == index.end()) return std::nullopt;
    return it->second;
  }
};

class RowReader {
 public:
  RowReader(std::string_view label, size_t line, const std::vector<std::string_view>& fields)
      : label_(label), line_(line), fields_(fields) {}

  // An integer field in [lo, hi]; `optional` empty fields give nullopt.
  Result<std::optional<int64_t>> integer(size_t col, std::string_view name, int64_t lo, int64_t hi,
                                         bool optional = false) const {
    if (col >= fields_.size()) return error(name, "missing (the row has too few columns)");
    std::string_view f = fields_[col];
    if (f.empty()) {
      if (optional) return std::optional<int64_t>();
      return error(name, "empty; expected an integer");
    }
    int64_t v = 0;
    // Some exports write whole numbers as "12.0".
    std::string_view digits = f;
    if (const size_t dot = f.find('.');
        dot != std::string_view::npos &&
        f.find_first_not_of('0', dot + 1) == std::string_view::npos) {
      digits = f.substr(0, dot);
    }
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      return error(name, fmt::format("expected an integer, got \"{}\"", printable(f, 40)));
    }
    if (v < lo || v > hi) {
      return error(name, fmt::format("{} is outside [{}, {}]", v, lo, hi));
    }
    return std::optional<int64_t>(v);
  }

  std::string_view text(size_t col) const {
    return col < fields_.size() ? fields_[col] : std::string_view();
  }

 private:
  Status error(std::string_view name, const std::string& what) const {
    return validation_error(fmt::format("{}: line {}: {}: {}", label_, line_, name, what));
  }
  std::string_view label_;
  size_t line_;
  const std::vector<std::string_view>& fields_;
};

Result<Duration> spec_duration(ObjectReader& r, std::string_view key, Duration max) {
  const Json* v = r.optional_value(key);
  if (v == nullptr) return Duration(0);
  auto d = read_bounded_duration(*v, max);
  if (!d.ok()) return d.status().with_prefix(r.field_path(key));
  return *d;
}

Result<double> spec_fraction(ObjectReader& r, std::string_view key, double lo, double hi,
                             double dflt) {
  const Json* v = r.optional_value(key);
  if (v == nullptr) return dflt;
  if (!v->is_number()) {
    return validation_error(r.field_path(key) + ": expected a number, got " +
                            describe_json_value(*v));
  }
  const double x = v->get<double>();
  if (!(x > lo && x <= hi)) {
    return validation_error(
        fmt::format("{}: must be above {} and at most {}, got {}", r.field_path(key), lo, hi, x));
  }
  return x;
}

}  // namespace

std::string_view to_string(TraceFormat f) { return f == TraceFormat::kItp ? "itp" : "alibaba"; }

// `topology: {level, mode, minGpus}` of a trace entry.
Status read_trace_topology(ObjectReader& r, TraceSpec& spec) {
  const Json* t = r.optional_object("topology");
  if (!r.ok() || t == nullptr) return r.status();
  ObjectReader tr(*t, r.field_path("topology"));
  TopologyRequest req;
  req.level = tr.required_string("level");
  req.whole_job = true;
  const std::string mode = tr.optional_string("mode").value_or("required");
  const int64_t min_gpus = tr.optional_int("minGpus").value_or(0);
  GF_RETURN_IF_ERROR(tr.status());
  if (!topology_level(req.level)) {
    return validation_error(tr.field_path("level") + ": \"" + printable(req.level, 80) +
                            "\" is not a topology level (e.g. " + std::string(kTopologyLayer3) +
                            ")");
  }
  if (mode != "required" && mode != "preferred") {
    return validation_error(tr.field_path("mode") + ": expected required or preferred, got \"" +
                            printable(mode, 40) + "\"");
  }
  if (min_gpus < 0 || min_gpus > 1'000'000) {
    return validation_error(tr.field_path("minGpus") + ": must be between 0 and 1000000");
  }
  if (std::vector<std::string> unknown = tr.unknown_fields(); !unknown.empty()) {
    return validation_error(path_join(tr.path(), unknown.front()) +
                            ": unknown field; expected one of level, mode, minGpus");
  }
  req.required = mode == "required";
  spec.topology = std::move(req);
  spec.topology_min_gpus = static_cast<int32_t>(min_gpus);
  return ok_status();
}

Result<TraceSpec> parse_trace_spec(const Json& value, const std::string& path,
                                   const std::string& base_dir) {
  TraceSpec spec;
  if (value.is_string()) {  // a bare file name: every default
    spec.file = value.get<std::string>();
  } else {
    ObjectReader r(value, path);
    spec.file = r.required_string("file");
    if (auto f = r.optional_string("format")) {
      if (*f == "itp") {
        spec.format = TraceFormat::kItp;
      } else if (*f == "alibaba") {
        spec.format = TraceFormat::kAlibaba;
      } else {
        r.fail("format", "expected itp or alibaba, got \"" + printable(*f, 40) + "\"");
      }
    }
    if (auto ns = r.optional_string("namespace")) spec.ns = *ns;
    if (auto col = r.optional_string("namespaceColumn")) spec.ns_column = *col;
    if (auto lim = r.optional_int("limit")) {
      if (*lim < 1) r.fail("limit", "must be at least 1");
      spec.limit = static_cast<size_t>(std::max<int64_t>(*lim, 1));
    }
    if (auto g = r.optional_int("gpusPerPod")) {
      if (*g < 1 || *g > 64) r.fail("gpusPerPod", "must be between 1 and 64");
      spec.gpus_per_pod = static_cast<int32_t>(std::clamp<int64_t>(*g, 1, 64));
    }
    if (auto pc = r.optional_string("priorityClass")) spec.priority_class = *pc;
    GF_RETURN_IF_ERROR(r.status());
    GF_ASSIGN_OR_RETURN(spec.sample, spec_fraction(r, "sample", 0, 1, 1.0));
    GF_ASSIGN_OR_RETURN(spec.time_scale, spec_fraction(r, "timeScale", 0, 1000, 1.0));
    GF_ASSIGN_OR_RETURN(spec.start, spec_duration(r, "start", days(3650)));
    if (r.has("checkpointInterval")) {
      GF_ASSIGN_OR_RETURN(Duration c, spec_duration(r, "checkpointInterval", days(365)));
      if (c <= Duration(0))
        return validation_error(r.field_path("checkpointInterval") + ": must be greater than 0");
      spec.checkpoint_interval = c;
    }
    if (r.has("restartOverhead")) {
      GF_ASSIGN_OR_RETURN(Duration o, spec_duration(r, "restartOverhead", days(1)));
      spec.restart_overhead = o;
    }
    GF_RETURN_IF_ERROR(read_trace_topology(r, spec));
    if (std::vector<std::string> unknown = r.unknown_fields(); !unknown.empty()) {
      return validation_error(path_join(path, unknown.front()) +
                              ": unknown field; expected one of file, format, namespace, "
                              "namespaceColumn, sample, timeScale, start, limit, gpusPerPod, "
                              "checkpointInterval, restartOverhead, priorityClass, topology");
    }
  }
  if (spec.file.empty()) return validation_error(path_join(path, "file") + ": must not be empty");
  if (spec.ns.empty() || spec.ns.size() > 63 || dns_label(spec.ns, 63) != spec.ns) {
    return validation_error(path_join(path, "namespace") +
                            ": expected a DNS-1123 label (lowercase letters, digits, '-'), got \"" +
                            printable(spec.ns, 80) + "\"");
  }
  fs::path p(spec.file);
  spec.path = p.is_absolute() ? p.string() : (fs::path(base_dir) / p).lexically_normal().string();
  return spec;
}

Result<std::vector<TraceJob>> parse_trace(std::string_view text, const TraceSpec& spec,
                                          uint32_t index, uint64_t seed, std::string_view label) {
  std::vector<TraceJob> jobs;
  size_t pos = 0;
  size_t line_no = 0;
  auto next_line = [&](std::string_view& line) -> Result<bool> {
    if (pos >= text.size()) return false;
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.size() > kMaxTraceLine) {
      return validation_error(
          fmt::format("{}: line {}: longer than {} bytes", label, line_no, kMaxTraceLine));
    }
    if (line.find('"') != std::string_view::npos) {
      return validation_error(
          fmt::format("{}: line {}: quoted fields are not supported in traces", label, line_no));
    }
    return true;
  };
  std::string_view line;
  GF_ASSIGN_OR_RETURN(bool has_header, next_line(line));
  if (!has_header || line.empty())
    return validation_error(std::string(label) + ": empty file (no header)");
  if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
  Columns cols;
  {
    const auto header = split_csv(line);
    for (size_t i = 0; i < header.size(); ++i) cols.index.emplace(std::string(header[i]), i);
  }
  TraceFormat format;
  if (spec.format) {
    format = *spec.format;
  } else if (cols.find("submission_time") && cols.find("num_gpu")) {
    format = TraceFormat::kItp;
  } else if (cols.find("creation_time") && cols.find("num_gpu")) {
    format = TraceFormat::kAlibaba;
  } else {
    return validation_error(std::string(label) +
                            ": line 1: not a known trace header (itp: job_id, submission_time, "
                            "duration, num_gpu; alibaba: name, cpu_milli, memory_mib, num_gpu, "
                            "gpu_milli, creation_time, deletion_time, scheduled_time)");
  }
  const bool itp = format == TraceFormat::kItp;
  GF_ASSIGN_OR_RETURN(size_t c_id, cols.need(itp ? "job_id" : "name", label));
  GF_ASSIGN_OR_RETURN(size_t c_gpu, cols.need("num_gpu", label));
  size_t c_submit = 0, c_dur = 0, c_cpu = 0, c_mem = 0, c_milli = 0, c_create = 0, c_delete = 0,
         c_sched = 0;
  if (itp) {
    GF_ASSIGN_OR_RETURN(c_submit, cols.need("submission_time", label));
    GF_ASSIGN_OR_RETURN(c_dur, cols.need("duration", label));
  } else {
    GF_ASSIGN_OR_RETURN(c_cpu, cols.need("cpu_milli", label));
    GF_ASSIGN_OR_RETURN(c_mem, cols.need("memory_mib", label));
    GF_ASSIGN_OR_RETURN(c_milli, cols.need("gpu_milli", label));
    GF_ASSIGN_OR_RETURN(c_create, cols.need("creation_time", label));
    GF_ASSIGN_OR_RETURN(c_delete, cols.need("deletion_time", label));
    GF_ASSIGN_OR_RETURN(c_sched, cols.need("scheduled_time", label));
  }
  std::optional<size_t> c_ns;
  if (!spec.ns_column.empty()) {
    GF_ASSIGN_OR_RETURN(size_t c, cols.need(spec.ns_column, label));
    c_ns = c;
  }
  const std::string prefix = dns_label(fs::path(std::string(label)).stem().string(), 20);
  std::set<std::string> names;
  size_t rows = 0;
  while (true) {
    GF_ASSIGN_OR_RETURN(bool more, next_line(line));
    if (!more) break;
    if (line.empty() || line == "\r") continue;
    if (++rows > kMaxTraceRows) {
      return validation_error(fmt::format("{}: more than {} rows", label, kMaxTraceRows));
    }
    const auto fields = split_csv(line);
    RowReader row(label, line_no, fields);
    const std::string_view id = row.text(c_id);
    if (id.empty()) {
      return validation_error(
          fmt::format("{}: line {}: {}: empty", label, line_no, itp ? "job_id" : "name"));
    }
    TraceJob job;
    job.trace = index;
    job.row = static_cast<uint32_t>(line_no - 1);
    GF_ASSIGN_OR_RETURN(auto gpus, row.integer(c_gpu, "num_gpu", 0, kMaxTraceGpus));
    job.gpus = static_cast<int32_t>(*gpus);
    int64_t submit = 0, run = 0;
    if (itp) {
      GF_ASSIGN_OR_RETURN(auto s, row.integer(c_submit, "submission_time", 0, kMaxTraceSeconds));
      GF_ASSIGN_OR_RETURN(auto d, row.integer(c_dur, "duration", 0, kMaxTraceSeconds));
      submit = *s;
      run = *d;
      if (job.gpus > spec.gpus_per_pod) {
        job.pods = (job.gpus + spec.gpus_per_pod - 1) / spec.gpus_per_pod;
        if (job.gpus % job.pods != 0) job.gpus = job.pods * spec.gpus_per_pod;  // full pods
      }
    } else {
      GF_ASSIGN_OR_RETURN(auto cpu, row.integer(c_cpu, "cpu_milli", 0, 10'000'000));
      GF_ASSIGN_OR_RETURN(auto mem, row.integer(c_mem, "memory_mib", 0, 100'000'000));
      GF_ASSIGN_OR_RETURN(auto milli, row.integer(c_milli, "gpu_milli", 0, 1000, true));
      GF_ASSIGN_OR_RETURN(auto created,
                          row.integer(c_create, "creation_time", 0, kMaxTraceSeconds));
      GF_ASSIGN_OR_RETURN(auto deleted,
                          row.integer(c_delete, "deletion_time", 0, kMaxTraceSeconds, true));
      GF_ASSIGN_OR_RETURN(auto sched,
                          row.integer(c_sched, "scheduled_time", 0, kMaxTraceSeconds, true));
      if (!sched || !deleted) continue;  // never ran (Pending) or no end: nothing to replay
      job.cpu_milli = *cpu;
      job.memory_mib = *mem;
      if (job.gpus == 0 && milli.value_or(0) > 0) job.gpus = 1;  // a GPU share: one whole GPU
      submit = *created;
      run = std::max<int64_t>(0, *deleted - std::max(*sched, *created));
    }
    if (spec.sample < 1.0 && row_draw(seed, id) >= spec.sample) continue;
    job.at = spec.start + Duration(static_cast<int64_t>(
                              std::llround(static_cast<double>(submit) * spec.time_scale * 1e6)));
    job.run = seconds(std::max<int64_t>(run, 1));
    job.ns = spec.ns;
    if (c_ns) {
      const std::string_view v = row.text(*c_ns);
      if (v.empty()) {
        return validation_error(
            fmt::format("{}: line {}: {}: empty namespace", label, line_no, spec.ns_column));
      }
      job.ns = dns_label(v, 63);
    }
    job.name = prefix + "-" + dns_label(id, 62 - prefix.size());
    if (!names.insert(job.ns + "/" + job.name).second) {
      job.name = fmt::format("{}-r{}", job.name.substr(0, 50), job.row);
      if (!names.insert(job.ns + "/" + job.name).second) {
        return validation_error(
            fmt::format("{}: line {}: duplicate job id \"{}\"", label, line_no, printable(id, 60)));
      }
    }
    jobs.push_back(std::move(job));
    if (spec.limit && jobs.size() >= *spec.limit) break;
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.at < b.at; });
  return jobs;
}

Result<std::vector<TraceJob>> read_trace(const TraceSpec& spec, uint32_t index, uint64_t seed) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(spec.path, ec);
  if (ec) return validation_error("cannot read " + spec.path + ": " + ec.message());
  if (size > kMaxTraceBytes) {
    return validation_error(fmt::format("{}: {} bytes is above the {} MiB a trace may have",
                                        spec.path, size, kMaxTraceBytes >> 20));
  }
  std::ifstream in(spec.path, std::ios::binary);
  if (!in) return validation_error("cannot read " + spec.path);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (!in) return validation_error("cannot read " + spec.path);
  return parse_trace(text, spec, index, seed, spec.file);
}

Json trace_job_manifest(const TraceJob& job, const TraceSpec& spec) {
  const int32_t per_pod = job.pods > 0 ? job.gpus / job.pods : job.gpus;
  auto replica = [&](int32_t replicas) {
    Json requests = Json::object();
    if (per_pod > 0) requests["nvidia.com/gpu"] = per_pod;
    if (job.cpu_milli > 0) requests["cpu"] = std::to_string(job.cpu_milli) + "m";
    if (job.memory_mib > 0) requests["memory"] = std::to_string(job.memory_mib) + "Mi";
    if (requests.empty()) requests["cpu"] = "100m";
    Json container = {
        {"name", "pytorch"}, {"image", "trace"}, {"resources", {{"requests", requests}}}};
    return Json{{"replicas", replicas},
                {"restartPolicy", "OnFailure"},
                {"template", {{"spec", {{"containers", Json::array({container})}}}}}};
  };
  Json specs = {{"Master", replica(1)}};
  if (job.pods > 1) specs["Worker"] = replica(job.pods - 1);
  Json annotations = {{"gpufleet.io/duration", std::to_string(job.run.count() / 1'000'000) + "s"}};
  if (spec.checkpoint_interval) {
    annotations["gpufleet.io/checkpoint-interval"] = format_duration(*spec.checkpoint_interval);
  }
  if (spec.restart_overhead) {
    annotations["gpufleet.io/restart-overhead"] = format_duration(*spec.restart_overhead);
  }
  if (spec.topology && job.gpus >= spec.topology_min_gpus) {
    annotations[spec.topology->required ? "kueue.x-k8s.io/podset-required-topology"
                                        : "kueue.x-k8s.io/podset-preferred-topology"] =
        spec.topology->level;
  }
  Json metadata = {{"name", job.name}, {"namespace", job.ns}, {"annotations", annotations}};
  if (!spec.priority_class.empty()) {
    metadata["labels"] = {{"kueue.x-k8s.io/priority-class", spec.priority_class}};
  }
  return Json{{"apiVersion", "kubeflow.org/v1"},
              {"kind", "PyTorchJob"},
              {"metadata", std::move(metadata)},
              {"spec", {{"pytorchReplicaSpecs", std::move(specs)}}}};
}

double trace_gpu_hours(const std::vector<TraceJob>& jobs) {
  double total = 0;
  for (const auto& j : jobs)
    total += static_cast<double>(j.gpus) * static_cast<double>(j.run.count()) / 3.6e9;
  return total;
}

}  // namespace gf
