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
