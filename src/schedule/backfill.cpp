// Reservation with backfill (docs/scheduling.md "Reservation and backfill"), the rule of Slurm's
// backfill scheduler: a gang that quota admits but that no cluster holds now reserves the nodes
// that free soonest — found by releasing the running gangs in the order of their expected ends
// until it fits — and a later job may take reserved nodes only if it will end before the
// reservation starts. Reservations last while their job waits and are made again each time it
// is tried, so they follow the fleet; nothing here is journaled (the admissions it leads to are).
#include <fmt/format.h>

#include <algorithm>

#include "schedule/scheduler.h"

namespace gf::sched {

// Nodes taken out of the index for one decision, put back when it ends: only nodes that took
// pods before, so a node that left or was cordoned meanwhile stays as it is.
class Scheduler::Fence {
 public:
  Fence(PlacementIndex& index, const std::vector<NodeIdx>& nodes) : index_(index) {
    for (NodeIdx n : nodes) {
      if (!index_.schedulable(n)) continue;
      index_.set_schedulable(n, false);
      off_.push_back(n);
    }
  }
  Fence(const Fence&) = delete;
  Fence& operator=(const Fence&) = delete;
  ~Fence() {
    for (NodeIdx n : off_) index_.set_schedulable(n, true);
  }

 private:
  PlacementIndex& index_;
  std::vector<NodeIdx> off_;
};

const Reservation* Scheduler::reservation_of(JobKey job) const {
  auto it = reservations_.find(job);
  return it == reservations_.end() ? nullptr : &it->second;
}

std::vector<NodeIdx> Scheduler::fenced_for(const Job& j, Time now, bool everything) const {
  std::vector<NodeIdx> out;
  const std::optional<Time> end = j.spec.time_limit && !everything
                                      ? std::optional<Time>(now + *j.spec.time_limit)
                                      : std::nullopt;
  for (const auto& [key, r] : reservations_) {
    if (key == j.spec.key) continue;
    // A run that ends by the reservation's start leaves its nodes free in time.
    if (end && *end <= r.start) continue;
    out.insert(out.end(), r.nodes.begin(), r.nodes.end());
  }
  return out;
}

std::optional<Placement> Scheduler::choose_now(const Job& j, const Alternative& alt, Time now) {
  if (reservations_.empty()) return choose(j, alt);
  const Fence fence(index_, fenced_for(j, now, false));
  return choose(j, alt);
}

std::optional<Reservation> Scheduler::plan_reservation(const Job& j, const Alternative& alt,
                                                       Time now, bool with_quota) {
  // The placed gangs expected to end within the window, earliest first.
  std::vector<JobKey> ending;
  const Time horizon = now + options_.backfill_window;
  for (const auto& [end, key] : ends_) {
    if (end > horizon) break;
    if (key != j.spec.key) ending.push_back(key);
  }
  if (ending.empty()) return std::nullopt;
  // Earlier reservations keep their nodes whatever this one's start.
  const Fence fence(index_, fenced_for(j, now, true));
  size_t released = 0;
  auto release_to = [&](size_t count) {
    for (; released < count; ++released) {
      Job& r = jobs_.at(ending[released]);
      index_.release(r.spec.shape->alternatives[r.alternative].pods, *r.placement);
      if (with_quota) engine_evict(r);
    }
    for (; released > count; --released) {
      Job& r = jobs_.at(ending[released - 1]);
      index_.commit(r.spec.shape->alternatives[r.alternative].pods, *r.placement);
      if (with_quota) engine_admit(r, r.admitted_at);
    }
  };
  if (with_quota) GF_CHECK_OK(engine_->set_request(j.spec.key, alt.quota_request));
  auto fits = [&](size_t count) -> std::optional<Placement> {
    release_to(count);
    if (with_quota && !engine_->fits(j.spec.key).fits) return std::nullopt;
    return choose(j, alt);
  };
  // The fewest ends that make room: doubling, then halving the last step (room only grows as
  // more gangs end).
  size_t hi = 1;
  std::optional<Placement> found;
  for (;; hi *= 2) {
    hi = std::min(hi, ending.size());
    if ((found = fits(hi)) || hi == ending.size()) break;
  }
  size_t lo = hi / 2;  // known not to fit (0: nothing released, tried by the caller)
  while (found && lo + 1 < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (std::optional<Placement> p = fits(mid)) {
      hi = mid;
      found = std::move(p);
    } else {
      lo = mid;
    }
  }
  release_to(0);
  if (!found || found->pods.empty()) return std::nullopt;
  Reservation r;
  r.cluster = found->cluster;
  for (const PodBinding& b : found->pods) r.nodes.push_back(b.node);
  std::ranges::sort(r.nodes);
  r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
  r.start = std::max(now, jobs_.at(ending[hi - 1]).expected_end);
  return r;
}

void Scheduler::drop_reservation(const Job& j) {
  // Nodes it kept from others are free for them again: let jobs that failed retry.
  if (reservations_.erase(j.spec.key) > 0) node_gen_ = ++gen_counter_;
}

void Scheduler::update_reservation(Job& j, std::optional<uint16_t> blocked, bool with_quota,
                                   Time now) {
  if (!options_.backfill || !blocked || j.wait != Wait::kActive) {
    drop_reservation(j);
    return;
  }
  // One reservation per queue, for its first job that waits for nodes (Slurm's
  // bf_job_part_count_reserve=1): a job behind the holder does not get one.
  const uint32_t queue = queue_slot(j.spec);
  std::optional<JobKey> behind;  // a later job of the queue holding it, which `j` takes over
  for (const auto& [key, r] : reservations_) {
    if (r.queue != queue || key == j.spec.key) continue;
    if (key_of(jobs_.at(key)) < key_of(j)) return;
    behind = key;
  }
  const bool held = reservations_.contains(j.spec.key) || behind;
  if (!held && reservations_.size() >= options_.max_reservations) return;
  std::optional<Reservation> r =
      plan_reservation(j, j.spec.shape->alternatives[*blocked], now, with_quota);
  if (!r) {
    drop_reservation(j);
    return;
  }
  r->queue = queue;
  if (behind) drop_reservation(jobs_.at(*behind));
  auto it = reservations_.find(j.spec.key);
  if (it != reservations_.end() && it->second == *r) return;
  if (it != reservations_.end()) node_gen_ = ++gen_counter_;  // its old nodes are free again
  reservations_[j.spec.key] = std::move(*r);
  touch(j);
}

}  // namespace gf::sched
