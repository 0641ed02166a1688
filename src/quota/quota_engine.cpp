#include "quota/quota_engine.h"

#include <bitset>
#include <string>

#include <fmt/format.h>
#include <utility>

namespace gf::quota {

QuotaEngine::QuotaEngine(QuotaGraph graph, DecisionLog* log)
    : graph_(std::move(graph)),
      ledger_(graph_.empty_ledger()),
      log_(log),
      pending_(graph_.size(), 0),
      borrowing_(graph_.size()),
      admitted_(graph_.size()) {}

Status QuotaEngine::add_workload(Workload w) {
  if (workloads_.contains(w.id)) {
    return conflict_error(fmt::format("workload {} already exists", w.id));
  }
  if (!graph_.is_queue(w.queue)) {
    return validation_error(fmt::format("workload {}: queue is not a leaf queue", w.id));
  }
  if (w.request.any_negative()) {
    return validation_error(fmt::format("workload {}: negative request", w.id));
  }
  w.admitted = false;
  pending_[w.queue] += 1;
  workloads_.emplace(w.id, std::move(w));
  return ok_status();
}

int64_t QuotaEngine::pending_count(NodeId node) const {
  int64_t n = 0;
  for (NodeId leaf = 0; leaf < graph_.size(); ++leaf) {
    if (!graph_.is_queue(leaf) || pending_[leaf] == 0) continue;
    for (NodeId a = leaf; a != kNoNode; a = graph_.parent(a)) {
      if (a == node) {
        n += pending_[leaf];
        break;
      }
    }
  }
  return n;
}

const Workload* QuotaEngine::find(WorkloadId id) const {
  auto it = workloads_.find(id);
  return it == workloads_.end() ? nullptr : &it->second;
}

Status QuotaEngine::set_priority(WorkloadId id, int32_t priority) {
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return not_found_error(fmt::format("workload {}", id));
  Workload& w = it->second;
  if (w.admitted) admitted_[w.queue].erase(&w);  // its place in victim order moves
  w.priority = priority;
  if (w.admitted) admitted_[w.queue].insert(&w);
  log({DecisionKind::kPriorityChange, id, 0, w.queue, 0, priority, 0});
  return ok_status();
}

FitResult QuotaEngine::fits(NodeId leaf, const ResourceVector& request) const {
  return graph_.fits(ledger_, leaf, request);
}

FitResult QuotaEngine::fits(WorkloadId id) const {
  const Workload* w = find(id);
  if (w == nullptr) return FitResult{false, false, LimitKind::kUnknownQueue, kNoNode, 0, 0, 0, 0};
  return fits(w->queue, w->request);
}

Status QuotaEngine::admit(WorkloadId id, Time now) {
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return not_found_error(fmt::format("workload {}", id));
  Workload& w = it->second;
  if (w.admitted) return conflict_error(fmt::format("workload {} already admitted", id));
  const FitResult fit = fits(w.queue, w.request);
  if (!fit.fits) {
    log_wait(w, fit);
    return conflict_error(fmt::format("workload {} does not fit: {}", id, graph_.describe(fit)));
  }
  charge_ledger(w, +1);
  pending_[w.queue] -= 1;
  w.admitted = true;
  w.start_time = now;
  admitted_[w.queue].insert(&w);
  log({DecisionKind::kAdmit, id, 0, w.queue, 0, 0, static_cast<uint8_t>(fit.borrows)});
  return ok_status();
}

void QuotaEngine::charge_ledger(const Workload& w, int sign) {
  graph_.charge(ledger_, w.queue, w.request, sign);
  ++ledger_version_;
  borrowing_.assign(w.queue,
                    graph_.borrowing_in(ledger_, w.queue, std::bitset<kMaxResources>().set()));
}

Status QuotaEngine::restore_admitted(WorkloadId id, Time start_time) {
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return not_found_error(fmt::format("workload {}", id));
  Workload& w = it->second;
  if (w.admitted) return conflict_error(fmt::format("workload {} already admitted", id));
  charge_ledger(w, +1);
  pending_[w.queue] -= 1;
  w.admitted = true;
  w.start_time = start_time;
  admitted_[w.queue].insert(&w);
  return ok_status();
}

Status QuotaEngine::set_request(WorkloadId id, const ResourceVector& request) {
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return not_found_error(fmt::format("workload {}", id));
  Workload& w = it->second;
  if (w.admitted) return conflict_error(fmt::format("workload {} is admitted", id));
  if (request.any_negative())
    return validation_error(fmt::format("workload {}: negative request", id));
  w.request = request;
  return ok_status();
}

Status QuotaEngine::release(WorkloadId id) {
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return not_found_error(fmt::format("workload {}", id));
  Workload& w = it->second;
  if (w.admitted) {
    charge_ledger(w, -1);
    admitted_[w.queue].erase(&w);
  } else {
    pending_[w.queue] -= 1;
  }
  log({DecisionKind::kRelease, id, 0, w.queue, 0, 0, 0});
  workloads_.erase(it);
  return ok_status();
}

Status QuotaEngine::evict(WorkloadId id) {
  auto it = workloads_.find(id);
  if (it == workloads_.end()) return not_found_error(fmt::format("workload {}", id));
  Workload& w = it->second;
  if (!w.admitted) return conflict_error(fmt::format("workload {} is not admitted", id));
  charge_ledger(w, -1);
  admitted_[w.queue].erase(&w);
  w.admitted = false;
  pending_[w.queue] += 1;
  log({DecisionKind::kEvict, id, 0, w.queue, 0, 0, 0});
  return ok_status();
}

void QuotaEngine::log_wait(const Workload& w, const FitResult& fit) const {
  log({DecisionKind::kWait, w.id, 0, fit.node, fit.resource, fit.shortfall,
       static_cast<uint8_t>(fit.limit)});
}

}  // namespace gf::quota
