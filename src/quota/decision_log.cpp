#include "quota/decision_log.h"

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gf::quota {
namespace {

void mix(uint64_t& h, uint64_t value) { h = fnv1a_u64(value, h); }

std::string_view kind_name(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::kAdmit:
      return "admit";
    case DecisionKind::kRelease:
      return "release";
    case DecisionKind::kEvict:
      return "evict";
    case DecisionKind::kWait:
      return "wait";
    case DecisionKind::kVictim:
      return "victim";
    case DecisionKind::kProtected:
      return "protected";
    case DecisionKind::kNoPreemption:
      return "no-preemption";
    case DecisionKind::kPriorityChange:
      return "priority";
  }
  return "?";
}

}  // namespace

void DecisionLog::append(const Decision& d) {
  mix(hash_, static_cast<uint64_t>(d.kind));
  mix(hash_, d.workload);
  mix(hash_, d.other);
  mix(hash_, d.node);
  mix(hash_, d.resource);
  mix(hash_, static_cast<uint64_t>(d.amount));
  mix(hash_, d.code);
  appended_ += 1;
  if (capacity_ != 0 && entries_.size() >= capacity_) {
    // Drop the older half at once: amortized O(1) per append.
    entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(capacity_ / 2));
  }
  entries_.push_back(d);
}

std::string DecisionLog::to_string(const Decision& d, const QuotaGraph& graph) const {
  std::string out = fmt::format("{} w={}", kind_name(d.kind), d.workload);
  const std::string node = d.node < graph.size() ? graph.spec(d.node).name : "-";
  switch (d.kind) {
    case DecisionKind::kAdmit:
      return out + " queue=" + node + ((d.code & 1) ? " (borrowing)" : "") +
             ((d.code & 2) ? " (placed again)" : "") +
             ((d.code & 4) ? " (dispatched, pods pending)" : "");
    case DecisionKind::kRelease:
      return out + " queue=" + node;
    case DecisionKind::kEvict:
      return out + " queue=" + node + (d.code == 2 ? " (interrupted)" : "") +
             (d.code == 3 ? fmt::format(" (failover from cluster {})", d.amount) : "");
    case DecisionKind::kWait:
    case DecisionKind::kNoPreemption:
      return fmt::format("{} node={} limit={} resource={} short={}", out, node,
                         limit_kind_name(static_cast<LimitKind>(d.code)),
                         static_cast<int>(d.resource), d.amount);
    case DecisionKind::kVictim:
      return fmt::format("victim w={} of w={} reason={}", d.other, d.workload,
                         preemption_reason_name(static_cast<PreemptionReason>(d.code)));
    case DecisionKind::kProtected:
      return fmt::format("protected w={} from w={}", d.other, d.workload);
    case DecisionKind::kPriorityChange:
      return fmt::format("{} priority={}", out, d.amount);
  }
  return out;
}

}  // namespace gf::quota
