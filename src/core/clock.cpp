#include "core/clock.h"

#include <chrono>
#include <thread>

namespace gf {

Time RealClock::now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

ScaledClock::ScaledClock(int64_t factor)
    : factor_(factor < 1 ? 1 : factor),
      real_start_(RealClock().now()),
      virtual_start_(real_start_) {}

Time ScaledClock::now() const {
  return virtual_start_ + (RealClock().now() - real_start_) * factor_;
}

std::chrono::system_clock::time_point ScaledClock::wall_time_of(Time t) const {
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      real_start_ + (t - virtual_start_) / factor_);
}

void ScaledClock::resume_from(Time t) {
  if (t <= now()) return;
  real_start_ = RealClock().now();
  virtual_start_ = t;
}

void wall_sleep(Duration d) { std::this_thread::sleep_for(d); }

Time wall_now() { return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now()); }

int64_t monotonic_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TimerId TimerQueue::schedule(Time at, std::function<void()> fn) {
  TimerId id = next_id_++;
  timers_.emplace(std::make_pair(at, id), std::move(fn));
  due_by_id_.emplace(id, at);
  return id;
}

bool TimerQueue::cancel(TimerId id) {
  auto it = due_by_id_.find(id);
  if (it == due_by_id_.end()) return false;
  timers_.erase({it->second, id});
  due_by_id_.erase(it);
  return true;
}

std::optional<Time> TimerQueue::next_due() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.begin()->first.first;
}

std::optional<std::function<void()>> TimerQueue::pop_due(Time now) {
  if (timers_.empty() || timers_.begin()->first.first > now) return std::nullopt;
  auto node = timers_.extract(timers_.begin());
  due_by_id_.erase(node.key().second);
  return std::move(node.mapped());
}

void VirtualClock::advance_to(Time target) {
  while (true) {
    auto due = timers_.next_due();
    if (!due || *due > target) break;
    if (*due > now_) now_ = *due;
    auto fn = timers_.pop_due(now_);
    if (fn) (*fn)();
  }
  if (target > now_) now_ = target;
}

}  // namespace gf
