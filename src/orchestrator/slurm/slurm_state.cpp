#include "orchestrator/slurm/slurm_state.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "core/json.h"
#include "orchestrator/slurm/slurm_conf.h"

namespace gf::slurm {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A number as the data parsers print it: a plain integer (v0.0.38), or {"set": bool, "number": N}
// (v0.0.40 and later); nullopt when absent, unset or infinite.
Result<std::optional<int64_t>> number(const Json* v, const std::string& path) {
  if (v == nullptr || v->is_null()) return std::optional<int64_t>();
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_object()) {
    const Json* set = v->contains("set") ? &v->at("set") : nullptr;
    const Json* n = v->contains("number") ? &v->at("number") : nullptr;
    if (set != nullptr && set->is_boolean() && !set->get<bool>()) return std::optional<int64_t>();
    if (n != nullptr && n->is_number_integer()) return std::optional<int64_t>(n->get<int64_t>());
  }
  return validation_error(path + ": expected an integer or {\"set\", \"number\"}");
}

// A state as the data parsers print it: "idle" (v0.0.38), or ["IDLE", "DRAIN"] (later: the base
// state first, then its flags). Upper case.
Result<std::vector<std::string>> states(const Json* v, const std::string& path) {
  std::vector<std::string> out;
  if (v == nullptr || v->is_null()) return out;
  if (v->is_string()) {
    out.push_back(upper(v->get<std::string>()));
    return out;
  }
  if (!v->is_array()) return validation_error(path + ": expected a string or a list of strings");
  for (const Json& s : *v) {
    if (!s.is_string()) return validation_error(path + ": expected a list of strings");
    out.push_back(upper(s.get<std::string>()));
  }
  return out;
}

Result<std::vector<std::string>> strings(const Json* v, const std::string& path) {
  std::vector<std::string> out;
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) return validation_error(path + ": expected a list of strings");
  for (const Json& s : *v) {
    if (!s.is_string()) return validation_error(path + ": expected a list of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// The document's list `key`, after its `errors` (a non-empty list is the command's failure).
Result<const Json*> records(const Json& doc, const std::string& key) {
  if (!doc.is_object()) return validation_error("expected a JSON object");
  if (auto e = doc.find("errors"); e != doc.end() && e->is_array() && !e->empty()) {
    const Json& first = e->front();
    std::string what = first.dump();
    for (const char* k : {"error", "description"}) {
      if (first.is_object() && first.contains(k) && first[k].is_string()) {
        what = first[k].get<std::string>();
        break;
      }
    }
    return validation_error("slurm reported an error: " + what.substr(0, 500));
  }
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) return validation_error(key + ": expected a list");
  if (it->size() > kMaxRecords) {
    return validation_error(key + ": more than " + std::to_string(kMaxRecords) + " records");
  }
  return &*it;
}

Result<Json> parse_text(std::string_view text) {
  if (text.size() > kMaxTextBytes) return validation_error("answer larger than 256 MiB");
  return parse_json(text);
}

Result<NodeState> parse_node(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  NodeState n;
  n.name = r.required_string("name");
  GF_ASSIGN_OR_RETURN(std::vector<std::string> st,
                      states(r.optional_value("state"), path + ".state"));
  GF_ASSIGN_OR_RETURN(n.flags, states(r.optional_value("state_flags"), path + ".state_flags"));
  if (!st.empty()) {
    n.state = st.front();
    n.flags.insert(n.flags.end(), st.begin() + 1, st.end());
  }
  n.reason = r.optional_string("reason").value_or("");
  const Json* by = r.optional_value("reason_set_by_user");
  if (by != nullptr && by->is_string()) n.reason_set_by = by->get<std::string>();
  GF_ASSIGN_OR_RETURN(n.partitions, strings(r.optional_value("partitions"), path + ".partitions"));
  GF_ASSIGN_OR_RETURN(auto cpus, number(r.optional_value("cpus"), path + ".cpus"));
  GF_ASSIGN_OR_RETURN(auto alloc, number(r.optional_value("alloc_cpus"), path + ".alloc_cpus"));
  n.cpus = cpus.value_or(0);
  n.alloc_cpus = alloc.value_or(0);
  GF_RETURN_IF_ERROR(r.status());
  if (n.name.empty()) return validation_error(path + ".name: empty");
  return n;
}

// `budget`: how many more node names the whole answer may expand to.
Result<JobState> parse_job(const Json& j, const std::string& path, size_t& budget) {
  ObjectReader r(j, path);
  JobState job;
  GF_ASSIGN_OR_RETURN(auto id, number(r.required_value("job_id"), path + ".job_id"));
  if (!id || *id <= 0) return validation_error(path + ".job_id: expected a positive integer");
  job.id = *id;
  job.name = r.optional_string("name").value_or("");
  GF_ASSIGN_OR_RETURN(std::vector<std::string> st,
                      states(r.optional_value("job_state"), path + ".job_state"));
  job.state = st.empty() ? "UNKNOWN" : st.front();
  job.reason = r.optional_string("state_reason").value_or("");
  // squeue's REASON prints the description when Slurm set one ("launch failed requeued held"
  // beside the state reason JobHeldUser): the words an operator sees.
  if (const Json* d = r.optional_value("state_description");
      d != nullptr && d->is_string() && !d->get<std::string>().empty())
    job.reason = d->get<std::string>();
  job.partition = r.optional_string("partition").value_or("");
  const std::string nodes = r.optional_string("nodes").value_or("");
  if (!nodes.empty()) job.nodes = expand_hostlist(nodes);
  if (job.nodes.size() > budget) {
    return validation_error(path + ".nodes: more than " + std::to_string(kMaxNodeNames) +
                            " node names in all jobs");
  }
  budget -= job.nodes.size();
  GF_ASSIGN_OR_RETURN(auto count, number(r.optional_value("node_count"), path + ".node_count"));
  job.node_count = count.value_or(static_cast<int64_t>(job.nodes.size()));
  GF_ASSIGN_OR_RETURN(auto restarts,
                      number(r.optional_value("restart_cnt"), path + ".restart_cnt"));
  job.restarts = restarts.value_or(0);
  if (const Json* ec = r.optional_value("exit_code"); ec != nullptr && ec->is_object()) {
    // {"status": [...], "return_code": N or {"set", "number"}, "signal": {...}} (v0.0.39+).
    const Json* rc = ec->contains("return_code") ? &ec->at("return_code") : nullptr;
    GF_ASSIGN_OR_RETURN(job.exit_code, number(rc, path + ".exit_code.return_code"));
  } else if (ec != nullptr) {
    // The raw wait status (v0.0.38): the exit code in bits 8-15, a signal in the low 7 bits
    // (reported as a shell does, 128 + the signal).
    GF_ASSIGN_OR_RETURN(auto raw, number(ec, path + ".exit_code"));
    if (raw) {
      const int64_t sig = *raw & 0x7f;
      job.exit_code = sig != 0 ? 128 + sig : (*raw >> 8) & 0xff;
    }
  }
  GF_RETURN_IF_ERROR(r.status());
  return job;
}

}  // namespace

bool NodeState::has_flag(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

bool NodeState::allocated() const {
  return state == "ALLOCATED" || state == "MIXED" || alloc_cpus > 0;
}

bool JobState::finished() const {
  return state != "PENDING" && state != "RUNNING" && state != "CONFIGURING" &&
         state != "COMPLETING" && state != "SUSPENDED" && state != "REQUEUED" &&
         state != "REQUEUE_HOLD" && state != "RESIZING" && state != "STAGE_OUT" &&
         state != "SIGNALING" && state != "UNKNOWN";
}

Result<std::vector<NodeState>> parse_sinfo_json(std::string_view text) {
  GF_ASSIGN_OR_RETURN(Json doc, parse_text(text));
  GF_ASSIGN_OR_RETURN(const Json* list, records(doc, "nodes"));
  std::vector<NodeState> out;
  std::unordered_map<std::string, size_t> index;
  std::vector<std::unordered_set<std::string>> partitions_seen;  // by record
  out.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    GF_ASSIGN_OR_RETURN(NodeState n, parse_node((*list)[i], "nodes[" + std::to_string(i) + "]"));
    // `sinfo` lists a node once per partition: one record per node, its partitions merged.
    auto [at, fresh] = index.emplace(n.name, out.size());
    if (fresh) {
      partitions_seen.emplace_back();
      out.push_back(std::move(n));
      NodeState& added = out.back();
      std::vector<std::string> parts = std::move(added.partitions);
      added.partitions.clear();
      for (std::string& p : parts) {
        if (partitions_seen.back().insert(p).second) added.partitions.push_back(std::move(p));
      }
      continue;
    }
    NodeState& same = out[at->second];
    for (std::string& p : n.partitions) {
      if (partitions_seen[at->second].insert(p).second) same.partitions.push_back(std::move(p));
    }
  }
  return out;
}

Result<std::vector<JobState>> parse_squeue_json(std::string_view text) {
  GF_ASSIGN_OR_RETURN(Json doc, parse_text(text));
  GF_ASSIGN_OR_RETURN(const Json* list, records(doc, "jobs"));
  std::vector<JobState> out;
  out.reserve(list->size());
  size_t budget = kMaxNodeNames;
  for (size_t i = 0; i < list->size(); ++i) {
    GF_ASSIGN_OR_RETURN(JobState j,
                        parse_job((*list)[i], "jobs[" + std::to_string(i) + "]", budget));
    out.push_back(std::move(j));
  }
  return out;
}

namespace {

// Slurm held the job after its launch failed ("launch failed requeued held", squeue's REASON
// for it): it will not start by itself. A hold set by a person (JobHeldAdmin, JobHeldUser
// without that description) is not this.
bool launch_failed(const JobState& j) {
  std::string r = j.reason;
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r.rfind("launch failed", 0) == 0;
}

}  // namespace

PodPhase slurm_pod_phase(const AllocationView& a) {
  if (!a.submitted) return {"Pending", 0, "waiting for its allocation to be submitted", false};
  if (!a.answered) return {"Unknown", 0, "slurmctld does not answer: " + a.error, false};
  if (!a.launch_failed.empty() && (!a.job || a.job->finished() || launch_failed(*a.job)))
    return {"Failed", kLaunchFailedExitCode, a.launch_failed, false};
  if (!a.job) return {"Unknown", 0, "its allocation is not known to slurmctld", false};
  const JobState& j = *a.job;
  const std::string id = "Slurm job " + std::to_string(j.id) + " ";
  const bool has_reason = !j.reason.empty() && j.reason != "None";
  if (j.state == "COMPLETED") return {"Succeeded", 0, id + "COMPLETED", false};
  if (j.finished()) {
    int code = static_cast<int>(j.exit_code.value_or(1));
    if (code == 0) code = 1;
    return {"Failed", code, id + j.state + (has_reason ? " (" + j.reason + ")" : ""), false};
  }
  if (launch_failed(j)) {
    return {"Failed", kLaunchFailedExitCode,
            id + j.state + " (" + (j.reason.empty() ? "held" : j.reason) + ")", true};
  }
  if (j.state == "RUNNING" || j.state == "COMPLETING") {
    if (a.step_started) return {"Running", 0, id + j.state, false};
    return {"Pending", 0, id + j.state + "; its step has not started on this node yet", false};
  }
  // PENDING, CONFIGURING, REQUEUED, SUSPENDED, …: not running, with Slurm's reason.
  return {"Pending", 0, id + j.state + (has_reason ? " (" + j.reason + ")" : ""), false};
}

}  // namespace gf::slurm
