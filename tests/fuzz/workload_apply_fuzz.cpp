// Workload documents of POST /v1/apply (workload/pytorchjob.h, propagation_policy.h): Kubeflow
// PyTorchJobs and PropagationPolicies, one or more `---`-separated YAML documents (or one JSON
// document) per input, each given to the parser its apiVersion/kind names.
//
// Invariants checked:
//  - neither parser throws, and a refusal says why;
//  - a PyTorchJob's gang is consistent: pod sets count world_size pods, pods() lists
//    world_size pods with distinct names and ranks 0..world_size-1, every pod set has requests
//    with quantities the quantity parser reads back;
//  - the stored document (`doc`, what the state journals and re-parses on replay and for
//    views) is accepted again and gives the same job;
//  - deadlines, TTLs, the duration annotation and failover windows can be added to a time a
//    century from now without overflow;
//  - a PropagationPolicy selects each object its own selectors describe (in its namespace),
//    match_policy picks it, and its stored document parses back to the same policy.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/quantity.h"
#include "core/time.h"
#include "fuzz_support.h"
#include "model/propagation_policy.h"
#include "workload/pytorchjob.h"

namespace gf::workload {
namespace {

void check_requests(const Json& requests, const std::string& where) {
  FUZZ_CHECK(requests.is_object(), where + ": " + fuzz::dump(requests));
  for (auto it = requests.begin(); it != requests.end(); ++it) {
    const QuantityScale scale = it.key() == "cpu" ? QuantityScale::kMilli : QuantityScale::kUnit;
    const Result<int64_t> q = parse_quantity_json(it.value(), scale);
    FUZZ_CHECK(q.ok(), where + "." + it.key() + ": " + q.status().to_string());
  }
}

void check_job(const PyTorchJob& job) {
  FUZZ_CHECK(!job.name.empty() && !job.ns.empty(), job.name + "/" + job.ns);
  FUZZ_CHECK(job.world_size() >= 1, std::to_string(job.world_size()));
  int64_t pods_in_sets = 0;
  for (const JobPodSet& set : job.pod_sets()) {
    FUZZ_CHECK(set.count >= 1, set.role);
    pods_in_sets += set.count;
    check_requests(set.requests, set.role);
  }
  FUZZ_CHECK(pods_in_sets == job.world_size(), std::to_string(pods_in_sets));
  // pods() builds every pod of the gang; bound the work for absurd replica counts.
  if (job.world_size() <= 4096) {
    const std::vector<PyTorchJob::Pod> pods = job.pods();
    FUZZ_CHECK(static_cast<int64_t>(pods.size()) == job.world_size(), std::to_string(pods.size()));
    std::set<std::string> names;
    std::set<std::string> ranks;
    for (const PyTorchJob::Pod& pod : pods) {
      FUZZ_CHECK(names.insert(pod.name).second, "duplicate pod " + pod.name);
      auto rank = pod.env.find("RANK");
      FUZZ_CHECK(rank != pod.env.end() && ranks.insert(rank->second).second, pod.name);
      auto world = pod.env.find("WORLD_SIZE");
      FUZZ_CHECK(world != pod.env.end() && world->second == std::to_string(job.world_size()),
                 pod.name);
    }
  }

  // The workload controller adds these to the job's times (start + activeDeadlineSeconds, stop +
  // ttlSecondsAfterFinished, start + duration): for a job started a century from now the sums
  // must stay representable (UBSan reports an overflow).
  const Time started = kSimEpoch + days(36500);
  if (job.active_deadline_seconds) (void)(started + seconds(*job.active_deadline_seconds));
  if (job.ttl_seconds_after_finished) (void)(started + seconds(*job.ttl_seconds_after_finished));
  if (job.duration) (void)(started + *job.duration);

  const Result<PyTorchJob> again = parse_pytorchjob(job.doc);
  FUZZ_CHECK(again.ok(), "stored document refused: " + again.status().to_string());
  FUZZ_CHECK(again->name == job.name && again->ns == job.ns && again->labels == job.labels &&
                 again->master == job.master && again->worker == job.worker &&
                 again->backoff_limit == job.backoff_limit && again->suspend == job.suspend &&
                 again->duration == job.duration && again->local_queue == job.local_queue &&
                 again->pod_sets() == job.pod_sets(),
             fuzz::dump(job.doc));
}

void check_policy(const PropagationPolicy& p) {
  FUZZ_CHECK(!p.name.empty() && !p.ns.empty(), p.name + "/" + p.ns);
  FUZZ_CHECK(p.grace_period_seconds >= 0, std::to_string(p.grace_period_seconds));
  FUZZ_CHECK(!p.toleration_seconds || *p.toleration_seconds >= 0, p.name);
  // Failover adds these to the time a job stopped running; see check_job.
  const Time stopped = kSimEpoch + days(36500);
  if (p.toleration_seconds) (void)(stopped + seconds(*p.toleration_seconds));
  (void)(stopped + seconds(p.grace_period_seconds));
  const std::vector<const PropagationPolicy*> candidates = {&p};
  for (const ResourceSelector& s : p.selectors) {
    if (!s.ns.empty() && s.ns != p.ns) continue;  // selects nothing outside the policy's namespace
    const std::string name = s.name.empty() ? "any-object" : s.name;
    const std::map<std::string, std::string>& labels = s.match_labels;
    FUZZ_CHECK(p.selects(s.api_version, s.kind, name, p.ns, labels),
               s.api_version + " " + s.kind + " " + name);
    FUZZ_CHECK(p.selection_rank(s.api_version, s.kind, name, p.ns, labels) > 0, name);
    FUZZ_CHECK(match_policy(candidates, s.api_version, s.kind, name, p.ns, labels) == &p, name);
  }
  const Result<PropagationPolicy> again = parse_propagation_policy(p.doc);
  FUZZ_CHECK(again.ok(), "stored document refused: " + again.status().to_string());
  FUZZ_CHECK(again->name == p.name && again->ns == p.ns && again->selectors == p.selectors &&
                 again->suspend_scheduling == p.suspend_scheduling && again->gang == p.gang &&
                 again->cluster_names == p.cluster_names &&
                 again->toleration_seconds == p.toleration_seconds &&
                 again->purge_mode == p.purge_mode &&
                 again->grace_period_seconds == p.grace_period_seconds,
             fuzz::dump(p.doc));
}

void check_document(const Json& doc) {
  const bool typed = doc.is_object() && doc.contains("apiVersion") && doc.contains("kind") &&
                     doc["apiVersion"].is_string() && doc["kind"].is_string();
  const std::string api_version = typed ? doc["apiVersion"].get<std::string>() : "";
  const std::string kind = typed ? doc["kind"].get<std::string>() : "";
  // Untyped documents go to both parsers: their refusals are paths worth covering too.
  if (!typed || is_pytorchjob(api_version, kind)) {
    const Result<PyTorchJob> job = parse_pytorchjob(doc);
    if (job.ok()) {
      check_job(*job);
    } else {
      FUZZ_CHECK_ERROR(job.status());
    }
  }
  if (!typed || is_propagation_policy(api_version, kind)) {
    const Result<PropagationPolicy> policy = parse_propagation_policy(doc);
    if (policy.ok()) {
      check_policy(*policy);
    } else {
      FUZZ_CHECK_ERROR(policy.status());
    }
  }
}

}  // namespace
}  // namespace gf::workload

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > gf::fuzz::kMaxInputBytes) return -1;
  const gf::Result<std::vector<gf::Json>> docs = gf::parse_documents(gf::fuzz::as_text(data, size));
  if (!docs.ok()) return 0;
  for (const gf::Json& doc : *docs) gf::workload::check_document(doc);
  return 0;
}
