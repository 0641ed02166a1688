// A scheduler whose only constraint is quota: one member cluster with one node larger than any
// request, so every gang places and what a pass admits, in what order, is the quota order alone.
// The ordering tests drive the path production runs (Scheduler::schedule) through it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "schedule/scheduler.h"

namespace gf::sched::testing {

class QuotaPool {
 public:
  explicit QuotaPool(quota::QuotaGraph graph, SchedulerOptions options = {}) : s_(options) {
    s_.set_quota(std::move(graph), [](JobKey) { return quota::kNoNode; });
    ResourceVector huge;
    for (size_t d = 0; d < kMaxResources; ++d)
      huge.set(static_cast<ResourceId>(d), int64_t{1} << 40);
    s_.sync_cluster("pool", {{"pool-n0", "pool-node", huge, true, false}}, {}, {});
  }

  Scheduler& scheduler() { return s_; }
  const quota::QuotaEngine& engine() const { return s_.engine(); }

  // Submits a one-pod job charging `request` to queue `q`; `seq` = submission order (0 = next).
  void submit(JobKey key, quota::NodeId q, int32_t priority, const ResourceVector& request,
              uint64_t seq = 0) {
    JobSpec spec;
    spec.key = key;
    spec.queue = q;
    spec.priority = priority;
    spec.creation_seq = seq != 0 ? seq : ++seq_;
    auto shape = std::make_shared<JobShape>();
    shape->alternatives.push_back(Alternative{request, {PodSet{1, request, ""}}, ""});
    spec.shape = std::move(shape);
    const Status st = s_.submit(std::move(spec));
    EXPECT_TRUE(st.ok()) << st.to_string();
  }

  // One pass at `now`: the jobs it admitted, in decision order. last() holds all its actions.
  std::vector<JobKey> pass(Time now) {
    last_ = s_.schedule(now);
    std::vector<JobKey> admitted;
    for (const Action& a : last_.actions) {
      if (a.kind == ActionKind::kAdmit && !a.replaced) admitted.push_back(a.job);
    }
    return admitted;
  }
  const PassResult& last() const { return last_; }

 private:
  Scheduler s_;
  PassResult last_;
  uint64_t seq_ = 1000;  // above any explicit `seq` a test passes
};

}  // namespace gf::sched::testing
