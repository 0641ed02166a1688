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

const BitWords* Scheduler::fence_of(const Job& j, Time now) {
  FenceCache& c = fence_cache_;
  if (c.version != reservations_version_) {
    std::vector<const Reservation*> by_start;
    for (const auto& [key, r] : reservations_) by_start.push_back(&r);
    std::ranges::stable_sort(
        by_start, [](const Reservation* a, const Reservation* b) { return a->start < b->start; });
    c.starts.clear();
    c.prefix.clear();
    BitWords acc;
    for (const Reservation* r : by_start) {
      for (NodeIdx n : r->nodes) acc.set(n);
      c.starts.push_back(r->start);
      c.prefix.push_back(acc);
    }
    c.version = reservations_version_;
  }
  // A run that ends by a reservation's start leaves its nodes free in time.
  size_t k = c.starts.size();
  if (j.spec.time_limit) {
    k = static_cast<size_t>(std::ranges::lower_bound(c.starts, now + *j.spec.time_limit) -
                            c.starts.begin());
  }
  return k == 0 ? nullptr : &c.prefix[k - 1];
}

std::optional<Placement> Scheduler::choose_now(const Job& j, const Alternative& alt, Time now) {
  if (reservations_.empty()) return choose(j, alt);
  if (reservations_.contains(j.spec.key)) {  // a holder may use its own reserved nodes
    const Fence fence(index_, fenced_for(j, now, false));
    return choose(j, alt);
  }
  index_.set_excluded(fence_of(j, now));
  std::optional<Placement> p = choose(j, alt);
  index_.set_excluded(nullptr);
  return p;
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

void Scheduler::drop_reservation(const Job& j, const Placement* placed) {
  auto it = reservations_.find(j.spec.key);
  if (it == reservations_.end()) return;
  // Nodes it kept from others and does not take itself are free for them again: let jobs that
  // failed retry. (A gang placed on its reserved nodes frees nothing.)
  const bool frees =
      placed == nullptr || std::ranges::any_of(it->second.nodes, [&](NodeIdx n) {
        return std::ranges::none_of(placed->pods, [&](const PodBinding& b) { return b.node == n; });
      });
  reservations_.erase(it);
  ++reservations_version_;
  if (frees) node_gen_ = ++gen_counter_;
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
  if (auto it = reservations_.find(j.spec.key);
      it != reservations_.end() && now < it->second.planned_at + options_.backfill_interval) {
    return;  // planned recently: it stands until the next interval
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
  r->planned_at = now;
  if (behind) drop_reservation(jobs_.at(*behind));
  auto it = reservations_.find(j.spec.key);
  if (it != reservations_.end() && it->second.nodes == r->nodes && it->second.start == r->start) {
    it->second.planned_at = now;
    return;
  }
  if (it != reservations_.end()) node_gen_ = ++gen_counter_;  // its old nodes are free again
  reservations_[j.spec.key] = std::move(*r);
  ++reservations_version_;
  touch(j);
}

}  // namespace gf::sched
