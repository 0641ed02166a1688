#include "sim/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gf {

namespace {

namespace fs = std::filesystem;

constexpr std::pair<std::string_view, StepKind> kStepKinds[] = {
    {"call", StepKind::kCall},         {"apply", StepKind::kApply},
    {"fault", StepKind::kFault},       {"clear", StepKind::kClear},
    {"approve", StepKind::kApprove},   {"reject", StepKind::kReject},
    {"cancel", StepKind::kCancel},     {"request", StepKind::kRequest},
    {"priority", StepKind::kPriority}, {"delete", StepKind::kDelete},
};

constexpr std::string_view kFileKey = "$file";

std::string step_kind_list() {
  std::string out;
  for (const auto& [name, kind] : kStepKinds) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// Refuses keys outside `known`: a misspelt key in a scenario would otherwise silently change
// what runs (a `bdy:` would send an empty body).
Status check_known_keys(const Json& object, const std::string& path,
                        const std::vector<std::string>& known) {
  if (!object.is_object()) return ok_status();
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      return validation_error(path_join(path, it.key()) + ": unknown field; expected one of " +
                              join(known, ", "));
    }
  }
  return ok_status();
}

Result<std::string> read_text(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    return validation_error("cannot read " + file.string() + ": no such file");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return validation_error("cannot read " + file.string() + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Step times and options are added to the simulation's clock (epoch + at, now + timeout);
// beyond this bound the sum could leave the int64 microsecond range.
constexpr Duration kMaxScenarioDuration = days(36500);

Result<Duration> read_duration(const Json& v, const std::string& path) {
  Result<Duration> d = read_bounded_duration(v, kMaxScenarioDuration);
  if (!d.ok()) return d.status().with_prefix(path);
  return d;
}

// Replaces every `{ $file: PATH }` inside `v` (the scenario's own values; files are not searched
// further) by the file's content. `several`: a file of several documents becomes an array of them.
Result<Json> resolve_files(const Json& v, const std::string& path, const fs::path& base_dir,
                           bool several) {
  if (v.is_object() && v.contains(kFileKey)) {
    const std::string fpath = path_join(path, kFileKey);
    if (v.size() != 1) {
      return validation_error(path + ": a { $file: PATH } value takes no other keys");
    }
    const Json& name = v[std::string(kFileKey)];
    if (!name.is_string() || name.get<std::string>().empty()) {
      return validation_error(fpath + ": expected a file path, got " + describe_json_value(name));
    }
    const fs::path file = base_dir / name.get<std::string>();
    auto text = read_text(file);
    if (!text.ok()) return text.status().with_prefix(fpath);
    auto docs = parse_documents(*text);
    if (!docs.ok()) return docs.status().with_prefix(fpath + " (" + file.string() + ")");
    if (docs->size() == 1) return std::move(docs->front());
    if (docs->empty()) return validation_error(fpath + ": " + file.string() + " is empty");
    if (!several) {
      return validation_error(fmt::format("{}: {} holds {} documents; expected one", fpath,
                                          file.string(), docs->size()));
    }
    return Json(std::move(*docs));
  }
  if (v.is_object()) {
    Json out = Json::object();
    for (auto it = v.begin(); it != v.end(); ++it) {
      GF_ASSIGN_OR_RETURN(out[it.key()],
                          resolve_files(it.value(), path_join(path, it.key()), base_dir, false));
    }
    return out;
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (size_t i = 0; i < v.size(); ++i) {
      GF_ASSIGN_OR_RETURN(Json item, resolve_files(v[i], path_index(path, i), base_dir, false));
      out.push_back(std::move(item));
    }
    return out;
  }
  return v;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> percent_decode(std::string_view s, const std::string& path) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size() || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0) {
        return validation_error(path + ": bad percent escape in \"" + std::string(s) + "\"");
      }
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// "POST /v1/clusters?x=1" → method, path and decoded query.
Status parse_call(const Json& v, const std::string& path, ScenarioStep& step) {
  if (!v.is_string()) {
    return validation_error(path + ": expected \"METHOD /path\", got " + describe_json_value(v));
  }
  const std::string text = v.get<std::string>();
  std::istringstream in(text);
  std::string method, target, extra;
  in >> method >> target >> extra;
  static const std::set<std::string> kMethods = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  if (method.empty() || target.empty() || !extra.empty()) {
    return validation_error(
        path + ": expected \"METHOD /path\" such as \"POST /v1/clusters\", got \"" + text + "\"");
  }
  if (!kMethods.count(method)) {
    return validation_error(path + ": unknown method \"" + method +
                            "\"; expected GET, POST, PUT, PATCH or DELETE");
  }
  if (target[0] != '/') {
    return validation_error(path + ": the path must start with /, got \"" + target + "\"");
  }
  step.method = method;
  const size_t q = target.find('?');
  step.path = target.substr(0, q);
  if (q == std::string::npos) return ok_status();
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    GF_ASSIGN_OR_RETURN(std::string key, percent_decode(pair.substr(0, eq), path));
    std::string value;
    if (eq != std::string_view::npos) {
      GF_ASSIGN_OR_RETURN(value, percent_decode(pair.substr(eq + 1), path));
    }
    step.query[key] = value;
  }
  return ok_status();
}

// `node: GROUP/INDEX` or `node: i-…` (docs/scenarios.md).
Status check_node_ref(ObjectReader& r) {
  const std::string node = r.required_string("node");
  if (!r.ok()) return r.status();
  if (node.rfind("i-", 0) == 0 && node.size() > 2) return ok_status();
  const size_t slash = node.rfind('/');
  const bool index_ok = slash != std::string::npos && slash > 0 && slash + 1 < node.size() &&
                        std::all_of(node.begin() + slash + 1, node.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
  if (!index_ok) {
    return validation_error(r.field_path("node") + ": expected GROUP/INDEX (workers/2) or an " +
                            "instance id (i-…), got \"" + node + "\"");
  }
  return ok_status();
}

// The argument of a step that is not a `call`: shape checks only (executing them is for the
// components that own them).
Status check_action(StepKind kind, const Json& v, const std::string& path) {
  if (kind == StepKind::kApply) {
    if (v.is_object()) return ok_status();
    if (v.is_array() && !v.empty() &&
        std::all_of(v.begin(), v.end(), [](const Json& d) { return d.is_object(); })) {
      return ok_status();
    }
    return validation_error(path + ": expected a manifest object (or { $file: PATH }), got " +
                            describe_json_value(v));
  }
  ObjectReader r(v, path);
  if (!r.ok()) return r.status();
  std::vector<std::string> known;
  switch (kind) {
    case StepKind::kFault: {
      GF_RETURN_IF_ERROR(check_node_ref(r));
      const Json* signal = r.required_value("signal");
      if (signal && !signal->is_string() && !signal->is_object()) {
        r.fail("signal", "expected a log line or a probe reading object, got " +
                             describe_json_value(*signal));
      }
      r.optional_string_list("clearedBy");
      if (auto recurs = r.optional_int("recurs"); recurs && *recurs < 0) {
        r.fail("recurs", "must be >= 0");
      }
      known = {"node", "signal", "clearedBy", "recurs"};
      break;
    }
    case StepKind::kClear:
    case StepKind::kApprove:
    case StepKind::kReject:
    case StepKind::kCancel:
      GF_RETURN_IF_ERROR(check_node_ref(r));
      r.optional_string("reason");
      known = {"node", "reason"};
      break;
    case StepKind::kRequest:
      GF_RETURN_IF_ERROR(check_node_ref(r));
      r.required_string("action");
      r.optional_string("detector");
      r.optional_string("requestId");
      known = {"node", "action", "detector", "requestId"};
      break;
    case StepKind::kPriority:
      r.required_string("serviceJob");
      r.required_int("value");
      known = {"serviceJob", "value"};
      break;
    case StepKind::kDelete:
      r.required_string("kind");
      r.required_string("name");
      r.optional_string("namespace");
      known = {"kind", "name", "namespace"};
      break;
    default:
      break;
  }
  if (!r.ok()) return r.status();
  return check_known_keys(v, path, known);
}

Result<ScenarioStep> parse_step(const Json& v, size_t index, const fs::path& base_dir) {
  const std::string path = path_index("steps", index);
  if (!v.is_object()) {
    return validation_error(path + ": expected a step object, got " + describe_json_value(v));
  }
  ScenarioStep step;
  step.index = index;
  std::vector<std::string> present;
  for (const auto& [name, kind] : kStepKinds) {
    if (v.contains(name)) {
      present.emplace_back(name);
      step.kind = kind;
    }
  }
  if (present.size() != 1) {
    return validation_error(path + ": expected exactly one of " + step_kind_list() + ", got " +
                            (present.empty() ? std::string("none") : join(present, " and ")));
  }
  std::vector<std::string> known = {"at", "as", present.front()};
  if (step.kind == StepKind::kCall) known.push_back("body");
  if (v.contains("body") && step.kind != StepKind::kCall) {
    return validation_error(path + ".body: only a call step takes a body (this step is " +
                            present.front() + ")");
  }
  GF_RETURN_IF_ERROR(check_known_keys(v, path, known));

  if (!v.contains("at")) return validation_error(path + ".at: is required");
  GF_ASSIGN_OR_RETURN(step.at, read_duration(v["at"], path + ".at"));
  if (v.contains("as")) {
    const Json& as = v["as"];
    if (!as.is_string() || as.get<std::string>().empty()) {
      return validation_error(path + ".as: expected an identity string, got " +
                              describe_json_value(as));
    }
    step.as = as.get<std::string>();
  }
  const std::string kpath = path_join(path, present.front());
  const Json& arg = v[present.front()];
  if (step.kind == StepKind::kCall) {
    GF_RETURN_IF_ERROR(parse_call(arg, kpath, step));
    if (v.contains("body") && !v["body"].is_null()) {
      GF_ASSIGN_OR_RETURN(step.body, resolve_files(v["body"], path + ".body", base_dir, false));
    }
    return step;
  }
  GF_ASSIGN_OR_RETURN(step.value,
                      resolve_files(arg, kpath, base_dir, step.kind == StepKind::kApply));
  GF_RETURN_IF_ERROR(check_action(step.kind, step.value, kpath));
  return step;
}

Result<ScenarioConfig> parse_config(const Json& v) {
  ScenarioConfig c;
  if (v.is_null()) return c;
  if (!v.is_object()) {
    return validation_error("config: expected a map of options, got " + describe_json_value(v));
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string path = path_join("config", it.key());
    const std::string& key = it.key();
    if (key == "minCountTimeout" || key == "retryBase" || key == "retryMax") {
      GF_ASSIGN_OR_RETURN(Duration d, read_duration(it.value(), path));
      if (d <= Duration(0)) return validation_error(path + ": must be greater than 0");
      (key == "minCountTimeout" ? c.min_count_timeout
       : key == "retryBase"     ? c.retry_base
                                : c.retry_max) = d;
    } else if (key == "region" || key == "account") {
      if (!it.value().is_string() || it.value().get<std::string>().empty()) {
        return validation_error(path + ": expected a string, got " +
                                describe_json_value(it.value()));
      }
      (key == "region" ? c.region : c.account) = it.value().get<std::string>();
    } else if (key == "reservation" || key == "backfill") {
      if (!it.value().is_boolean())
        return validation_error(path + ": expected true or false, got " +
                                describe_json_value(it.value()));
      (key == "reservation" ? c.reservation : c.backfill) = it.value().get<bool>();
    } else {
      return validation_error(path +
                              ": unknown option; supported: minCountTimeout, retryBase, "
                              "retryMax, region, account, reservation, backfill");
    }
  }
  const Duration base = c.retry_base.value_or(ProvisionOptions{}.retry_base);
  const Duration max = c.retry_max.value_or(ProvisionOptions{}.retry_max);
  if (max < base) {
    return validation_error(std::string(c.retry_max ? "config.retryMax" : "config.retryBase") +
                            ": retryMax (" + format_duration(max) +
                            ") must not be below retryBase (" + format_duration(base) + ")");
  }
  return c;
}

// SimCloudConfig::from_json reads the known fields; misspelt ones are refused here.
Status check_cloud_keys(const Json& cloud) {
  if (!cloud.is_object()) return ok_status();
  GF_RETURN_IF_ERROR(check_known_keys(
      cloud, "cloud",
      {"launchLatency", "lifecycleDuration", "failureLatency", "terminateLatency", "capacity",
       "changes", "launchFaults", "rebootDuration", "reprovisionDuration", "migrateDuration",
       "deleteDuration", "burnInDuration", "softwareUpdateDuration", "burnIn", "topology"}));
  for (const auto& [key, fields] :
       {std::pair<std::string, std::vector<std::string>>{"changes", {"at", "capacity"}},
        {"launchFaults", {"group", "attempt", "outcome"}},
        {"burnIn", {"outcome", "check"}}}) {
    if (!cloud.contains(key) || !cloud[key].is_array()) continue;
    for (size_t i = 0; i < cloud[key].size(); ++i) {
      GF_RETURN_IF_ERROR(check_known_keys(cloud[key][i], path_index("cloud." + key, i), fields));
    }
  }
  return ok_status();
}

}  // namespace

std::string_view step_kind_name(StepKind kind) {
  for (const auto& [name, k] : kStepKinds) {
    if (k == kind) return name;
  }
  return "call";
}

std::string ScenarioStep::label() const {
  if (kind == StepKind::kCall) {
    std::string out = method + " " + path;
    char sep = '?';
    for (const auto& [k, v] : query) {
      out += sep + k + "=" + v;
      sep = '&';
    }
    return out;
  }
  return std::string(step_kind_name(kind));
}

void ScenarioConfig::apply_to(sched::SchedulerOptions& options) const {
  if (reservation) options.reservation = *reservation;
  if (backfill) options.backfill = *backfill;
}

void ScenarioConfig::apply_to(ProvisionOptions& options) const {
  if (min_count_timeout) options.min_count_timeout = *min_count_timeout;
  if (retry_base) options.retry_base = *retry_base;
  if (retry_max) options.retry_max = *retry_max;
  if (region) options.arn.region = *region;
  if (account) options.arn.account = *account;
}

Duration Scenario::last_scheduled() const {
  Duration last{0};
  for (const auto& s : steps) last = std::max(last, s.at);
  // A trace names its jobs' ends too: by default the run lasts until the last would end.
  for (const auto& j : trace_jobs) last = std::max(last, j.at + j.run);
  for (const auto& c : cloud.changes) last = std::max(last, c.at);
  return last;
}

namespace {

// The scenario's `steps` (in time order) and `traces`, into `s`.
Status parse_steps_and_traces(const Json& doc, const std::string& base_dir, Scenario& s) {
  if (doc.contains("steps") && !doc["steps"].is_null()) {
    const Json& steps = doc["steps"];
    if (!steps.is_array()) {
      return validation_error("steps: expected a list of steps, got " + describe_json_value(steps));
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      GF_ASSIGN_OR_RETURN(ScenarioStep step, parse_step(steps[i], i, base_dir));
      s.steps.push_back(std::move(step));
    }
    std::stable_sort(s.steps.begin(), s.steps.end(),
                     [](const ScenarioStep& a, const ScenarioStep& b) { return a.at < b.at; });
  }
  if (doc.contains("traces") && !doc["traces"].is_null()) {
    const Json& traces = doc["traces"];
    if (!traces.is_array()) {
      return validation_error("traces: expected a list of traces, got " +
                              describe_json_value(traces));
    }
    if (traces.size() > 64) return validation_error("traces: at most 64 traces");
    for (size_t i = 0; i < traces.size(); ++i) {
      GF_ASSIGN_OR_RETURN(TraceSpec t,
                          parse_trace_spec(traces[i], path_index("traces", i), base_dir));
      s.traces.push_back(std::move(t));
    }
  }
  return ok_status();
}

}  // namespace

Result<Scenario> parse_scenario_json(const Json& doc, const std::string& base_dir) {
  if (!doc.is_object()) {
    return validation_error(
        "scenario: expected a map with name, seed, config, cloud and steps, "
        "got " +
        describe_json_value(doc));
  }
  GF_RETURN_IF_ERROR(check_known_keys(
      doc, "", {"name", "seed", "config", "cloud", "steps", "traces", "failures"}));
  Scenario s;
  if (doc.contains("name") && !doc["name"].is_null()) {
    if (!doc["name"].is_string()) {
      return validation_error("name: expected a string, got " + describe_json_value(doc["name"]));
    }
    s.name = doc["name"].get<std::string>();
  }
  if (doc.contains("seed") && !doc["seed"].is_null()) {
    const Json& seed = doc["seed"];
    if (seed.is_number_unsigned()) {
      s.seed = seed.get<uint64_t>();
    } else if (seed.is_number_integer() && seed.get<int64_t>() >= 0) {
      s.seed = static_cast<uint64_t>(seed.get<int64_t>());
    } else {
      return validation_error("seed: expected an integer >= 0, got " + describe_json_value(seed));
    }
  }
  if (doc.contains("config")) {
    GF_ASSIGN_OR_RETURN(s.config, parse_config(doc["config"]));
  }
  if (doc.contains("cloud") && !doc["cloud"].is_null()) {
    GF_ASSIGN_OR_RETURN(s.cloud, SimCloudConfig::from_json(doc["cloud"], "cloud"));
    GF_RETURN_IF_ERROR(check_cloud_keys(doc["cloud"]));
  }
  s.cloud.epoch = kSimEpoch;
  GF_RETURN_IF_ERROR(parse_steps_and_traces(doc, base_dir, s));
  if (doc.contains("failures") && !doc["failures"].is_null() &&
      !(doc["failures"].is_boolean() && !doc["failures"].get<bool>())) {
    GF_ASSIGN_OR_RETURN(FailureModelSpec f, parse_failure_model(doc["failures"], "failures"));
    s.failures = std::move(f);
  }
  return s;
}

Status load_traces(Scenario& s, uint64_t seed) {
  s.trace_jobs.clear();
  // A file replayed again into the same namespace (a longer run from one trace: docs/scenarios.md
  // "Traces") names its jobs apart: "-2" for the second reading, and so on.
  std::map<std::pair<std::string, std::string>, int> readings;
  for (size_t i = 0; i < s.traces.size(); ++i) {
    auto jobs = read_trace(s.traces[i], static_cast<uint32_t>(i), seed);
    if (!jobs.ok()) return jobs.status().with_prefix(path_index("traces", i));
    const int reading =
        ++readings[{s.traces[i].path, s.traces[i].ns + "/" + s.traces[i].ns_column}];
    for (auto& j : *jobs) {
      if (reading > 1) {
        const std::string suffix = "-" + std::to_string(reading);
        j.name = j.name.substr(0, 63 - suffix.size()) + suffix;
      }
      s.trace_jobs.push_back(std::move(j));
    }
  }
  std::stable_sort(s.trace_jobs.begin(), s.trace_jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.at < b.at; });
  return ok_status();
}

Result<Scenario> parse_scenario(std::string_view text, const std::string& base_dir) {
  auto docs = parse_documents(text);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return validation_error(fmt::format("scenario: expected one document, got {}", docs->size()));
  }
  return parse_scenario_json(docs->front(), base_dir);
}

Result<Json> read_scenario_document(const std::string& file) {
  GF_ASSIGN_OR_RETURN(std::string text, read_text(file));
  auto docs = parse_documents(text);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return validation_error(fmt::format("scenario: expected one document, got {}", docs->size()));
  }
  return std::move(docs->front());
}

Status set_scenario_value(Json& doc, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return validation_error("--set: expected KEY=VALUE, got \"" + printable(assignment, 80) + "\"");
  }
  const std::string key(assignment.substr(0, eq));
  const std::string text(assignment.substr(eq + 1));
  if (key.size() > 256) return validation_error("--set: the key is longer than 256 characters");
  // Segments: names separated by '.', each optionally followed by [index].
  Json* cur = &doc;
  Json* parent = nullptr;
  std::string last_name;
  size_t pos = 0;
  while (pos < key.size()) {
    size_t end = key.find_first_of(".[", pos);
    const std::string name =
        key.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (name.empty()) return validation_error("--set " + key + ": an empty name in the key");
    if (!cur->is_object()) {
      if (!cur->is_null()) {
        return validation_error("--set " + key + ": " + name +
                                " is inside a value that is not a map");
      }
      *cur = Json::object();
    }
    parent = cur;
    last_name = name;
    cur = &(*cur)[name];
    pos = end == std::string::npos ? key.size() : end;
    while (pos < key.size() && key[pos] == '[') {
      const size_t close = key.find(']', pos);
      if (close == std::string::npos) return validation_error("--set " + key + ": unclosed [");
      const std::string idx = key.substr(pos + 1, close - pos - 1);
      if (idx.empty() || idx.size() > 6 ||
          idx.find_first_not_of("0123456789") != std::string::npos) {
        return validation_error("--set " + key + ": [" + idx + "] is not a list index");
      }
      const size_t i = std::stoul(idx);
      if (!cur->is_array() || i >= cur->size()) {
        return validation_error(fmt::format("--set {}: there is no item {} there", key, i));
      }
      parent = nullptr;
      cur = &(*cur)[i];
      pos = close + 1;
    }
    if (pos < key.size() && key[pos] == '.') ++pos;
  }
  if (text.empty()) {
    if (parent != nullptr) parent->erase(last_name);
    return ok_status();
  }
  auto value = parse_yaml(text);
  *cur = value.ok() ? std::move(*value) : Json(text);
  return ok_status();
}

Result<Scenario> scenario_from_document(const Json& doc, const std::string& file) {
  const fs::path path(file);
  const std::string base = path.has_parent_path() ? path.parent_path().string() : ".";
  GF_ASSIGN_OR_RETURN(Scenario s, parse_scenario_json(doc, base));
  s.file = file;
  if (s.name.empty()) s.name = path.stem().string();
  return s;
}

Result<Scenario> load_scenario(const std::string& file) {
  GF_ASSIGN_OR_RETURN(Json doc, read_scenario_document(file));
  return scenario_from_document(doc, file);
}

}  // namespace gf
