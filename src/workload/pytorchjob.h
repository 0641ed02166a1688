// Kubeflow PyTorchJob (kubeflow.org/v1, docs/workloads.md, examples/pytorchjob.yaml): parsing and
// validation of the subset gpufleet runs, and the gang it becomes for the scheduler (one "master"
// pod set, one "worker" pod set) with the pod names, labels and environment Kubeflow's operator
// gives each pod. Errors are ValidationExceptions whose message starts with the field path
// (`spec.pytorchReplicaSpecs.Master.replicas: must be 1, got 2`); unknown fields are kept in
// `doc` and reported as warnings, except under a replica's `template`, which is a free-form pod
// template. Accepted subset and refusals: docs/workloads.md. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "model/job.h"

namespace gf::workload {

inline constexpr std::string_view kPyTorchJobApiVersion = "kubeflow.org/v1";
inline constexpr std::string_view kPyTorchJobKind = "PyTorchJob";
// Annotation: the simulated run time of the job's pods (docs/dispatch.md).
inline constexpr std::string_view kDurationAnnotation = "gpufleet.io/duration";
// Annotations of the lost-work model (docs/scenarios.md "Lost work"): how often the job
// checkpoints and what each restart costs before it makes progress again.
inline constexpr std::string_view kCheckpointAnnotation = "gpufleet.io/checkpoint-interval";
inline constexpr std::string_view kRestartOverheadAnnotation = "gpufleet.io/restart-overhead";
// Kueue's topology requests (docs/scheduling.md "Topology"): on a replica's pod template for
// that pod set, or on the PyTorchJob for the whole job; the value is a topology level's label.
inline constexpr std::string_view kRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr std::string_view kPreferredTopologyAnnotation =
    "kueue.x-k8s.io/podset-preferred-topology";
// Labels: the Kueue LocalQueue and WorkloadPriorityClass the job asks for.
inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr std::string_view kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
// The rendezvous port Kubeflow's operator gives MASTER_PORT when the template names none.
inline constexpr int32_t kMasterPort = 23456;

enum class RestartPolicy : uint8_t { kAlways, kOnFailure, kNever, kExitCode };
std::string_view to_string(RestartPolicy p);  // "Always", "OnFailure", "Never", "ExitCode"
std::optional<RestartPolicy> parse_restart_policy(std::string_view s);

struct ReplicaSpec {
  std::string type;  // "Master" | "Worker"
  int32_t replicas = 1;
  RestartPolicy restart = RestartPolicy::kOnFailure;
  // Effective requests of one pod, {resource: quantity}: per resource the sum over the template's
  // containers, a container's limit standing in for a request it lacks (Kubernetes defaulting).
  // A resource only one container names keeps that container's value as written ("10m", "2Gi");
  // a sum over several containers is written canonically (format_quantity).
  Json requests = Json::object();
  Json template_ = Json::object();          // the pod template as given
  std::optional<TopologyRequest> topology;  // from the template's annotations
  bool operator==(const ReplicaSpec&) const = default;
};

struct PyTorchJob {
  std::string name;
  std::string ns;  // "default" when absent
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  ReplicaSpec master;
  std::optional<ReplicaSpec> worker;
  // runPolicy (or the older top-level spec fields of the same names).
  std::optional<int32_t> backoff_limit;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int64_t> ttl_seconds_after_finished;
  bool suspend = false;
  // What happens to the pods once the job finishes: None keeps them, Running deletes those still
  // running, All deletes every pod (Kubeflow's default for PyTorchJob is None).
  std::string clean_pod_policy = "None";
  std::optional<Duration> duration;             // annotation gpufleet.io/duration (parse_duration)
  std::optional<Duration> checkpoint_interval;  // annotation gpufleet.io/checkpoint-interval
  std::optional<Duration> restart_overhead;     // annotation gpufleet.io/restart-overhead
  std::string local_queue;                      // label kueue.x-k8s.io/queue-name
  std::string priority_class;                   // label kueue.x-k8s.io/priority-class
  std::optional<TopologyRequest> topology;      // the job's own topology annotation
  Json doc;                                     // the document as given
  std::vector<std::string> warnings;            // "<path>: unknown field, ignored", ...

  int32_t worker_count() const { return worker ? worker->replicas : 0; }
  int32_t world_size() const { return 1 + worker_count(); }

  // The gang as the scheduler sees it: pod set "master" (count 1), then "worker" (count
  // replicas; left out when there are no workers), requests from the containers.
  std::vector<JobPodSet> pod_sets() const;

  // One pod of the job as Kubeflow's operator creates it: name "<job>-master-0" or
  // "<job>-worker-<i>"; labels are the template's labels plus training.kubeflow.org/replica-type
  // (master|worker), training.kubeflow.org/replica-index and pytorch-replica-index ("<i>"),
  // job-name and training.kubeflow.org/job-name; env MASTER_ADDR (<job>-master-0), MASTER_PORT
  // (23456), WORLD_SIZE (1 + workers), RANK (0 for the master, i + 1 for worker i).
  struct Pod {
    std::string name;
    std::string role;  // "master" | "worker"
    int32_t index = 0;
    std::map<std::string, std::string> labels;
    std::map<std::string, std::string> env;
    bool operator==(const Pod&) const = default;
  };
  // The master first, then the workers by index.
  std::vector<Pod> pods() const;
};

// True for kubeflow.org/v1 PyTorchJob.
bool is_pytorchjob(std::string_view api_version, std::string_view kind);
Result<PyTorchJob> parse_pytorchjob(const Json& doc);

}  // namespace gf::workload
