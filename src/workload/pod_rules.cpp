#include "workload/pod_rules.h"

#include <fmt/format.h>

namespace gf::workload {

std::vector<std::string> pod_names(const Job& job) {
  std::vector<std::string> out;
  for (const JobPodSet& ps : job.pod_sets) {
    for (int32_t i = 0; i < ps.count; ++i)
      out.push_back(fmt::format("{}-{}-{}", job.name, ps.role, i));
  }
  return out;
}

std::optional<std::string> slurm_gang_restart(const Job& job, const std::string& pod,
                                              const PodState& state, std::string_view where) {
  if (!job.dispatch || state.phase != "Failed") return std::nullopt;
  const Dispatch& d = *job.dispatch;
  std::string role;
  for (const JobPodSet& ps : job.pod_sets) {
    if (pod.rfind(fmt::format("{}-{}-", job.name, ps.role), 0) == 0) role = ps.role;
  }
  auto it = d.restart_policy.find(role);
  const std::string policy = it == d.restart_policy.end() ? "OnFailure" : it->second;
  const bool restart = policy == "Always" || policy == "OnFailure" ||
                       (policy == "ExitCode" && retryable_exit_code(state.exit_code));
  if (!restart) return std::nullopt;
  // Every restart so far: those that ran, those that failed before they ran, and the one in
  // progress (this failure is its end).
  const int32_t attempts = d.restarts + d.failed_starts + (d.restarting ? 1 : 0);
  if (d.backoff_limit && attempts >= *d.backoff_limit) return std::nullopt;
  return fmt::format(
      "pod {} failed {} with exit code {}{}; the {} replica's restartPolicy "
      "is {}: the gang is placed again",
      pod, where, state.exit_code, state.message.empty() ? "" : " (" + state.message + ")", role,
      policy);
}

std::optional<PodVerdict> pod_verdict(const Job& job) {
  if (job.pod_states.empty()) return std::nullopt;
  int64_t restarts = 0;
  for (const auto& [name, p] : job.pod_states) {
    restarts += p.restarts;
    if (p.phase == "Failed") {
      std::string why = fmt::format("pod {} failed with exit code {}", name, p.exit_code);
      if (!p.message.empty()) why += " (" + p.message + ")";
      return PodVerdict{JobStatus::kFailed, why};
    }
  }
  if (job.dispatch && job.dispatch->backoff_limit &&
      restarts > static_cast<int64_t>(*job.dispatch->backoff_limit)) {
    return PodVerdict{JobStatus::kFailed,
                      fmt::format("its pods restarted {} times; runPolicy.backoffLimit is {}",
                                  restarts, *job.dispatch->backoff_limit)};
  }
  auto succeeded = [&](const std::string& pod) {
    auto it = job.pod_states.find(pod);
    return it != job.pod_states.end() && it->second.phase == "Succeeded";
  };
  const std::vector<std::string> pods = pod_names(job);
  if (job.dispatch) {  // a PyTorchJob: the master decides, else every worker
    for (const JobPodSet& ps : job.pod_sets) {
      if (ps.role == "master") {
        const std::string master = fmt::format("{}-master-0", job.name);
        if (succeeded(master))
          return PodVerdict{JobStatus::kSucceeded, "pod " + master + " succeeded"};
        return std::nullopt;
      }
    }
  }
  for (const std::string& p : pods) {
    if (!succeeded(p)) return std::nullopt;
  }
  return PodVerdict{JobStatus::kSucceeded, pods.size() == 1
                                               ? "pod " + pods.front() + " succeeded"
                                               : fmt::format("all {} pods succeeded", pods.size())};
}

}  // namespace gf::workload
