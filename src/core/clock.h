// The one source of time. Everything outside core/clock.* and loop/ asks a Clock; nothing else
// reads the system clock or sleeps (tests/unit/core/determinism_test.cpp enforces this).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "core/time.h"

namespace gf {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time now() const = 0;
  // The wall-clock instant at which now() will read `t` (the loop waits until then).
  virtual std::chrono::system_clock::time_point wall_time_of(Time t) const {
    return std::chrono::time_point_cast<std::chrono::system_clock::duration>(t);
  }
};

// Wall-clock UTC time.
class RealClock final : public Clock {
 public:
  Time now() const override;
};

// Wall-clock time sped up `factor` times from the moment of construction (demos: a simulated
// cloud's minutes pass in seconds). now() starts at the real time of construction.
class ScaledClock final : public Clock {
 public:
  explicit ScaledClock(int64_t factor);
  Time now() const override;
  std::chrono::system_clock::time_point wall_time_of(Time t) const override;
  // Continues from `t` (e.g. the last journaled time after a restart) if that is ahead of now,
  // so sped-up time never runs backwards across restarts.
  void resume_from(Time t);

 private:
  int64_t factor_;
  Time real_start_;
  Time virtual_start_;
};

// Monotonic nanoseconds for measuring latencies and bounding a wait on an outside process
// (os::run's timeout); never for a controller's decisions.
int64_t monotonic_nanos();
// The machine's wall clock, for edge checks against another machine's clock (a Signature V4's
// X-Amz-Date); never for a controller's decisions, which read the Clock they are given.
Time wall_now();

// Blocks the calling thread for a wall-clock duration. For client-side polling (the CLI's
// --wait) only: controllers and the loop never sleep.
void wall_sleep(Duration d);

using TimerId = uint64_t;

// Timers ordered by (due time, creation order): two timers due at the same instant fire in the
// order they were scheduled, so a run is the same every time.
class TimerQueue {
 public:
  TimerId schedule(Time at, std::function<void()> fn);
  bool cancel(TimerId id);
  std::optional<Time> next_due() const;
  // Removes and returns the earliest timer if it is due at or before `now`.
  std::optional<std::function<void()>> pop_due(Time now);
  size_t size() const { return timers_.size(); }

 private:
  std::map<std::pair<Time, TimerId>, std::function<void()>> timers_;
  std::map<TimerId, Time> due_by_id_;
  TimerId next_id_ = 1;
};

// Time that moves only when told to. advance()/advance_to() fire every timer due on the way, in
// deterministic order, with now() equal to each timer's due time while it runs; timers scheduled
// by a firing timer are honoured if they fall inside the window.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(Time start = kSimEpoch) : now_(start) {}

  Time now() const override { return now_; }
  TimerId schedule_at(Time at, std::function<void()> fn) {
    return timers_.schedule(at, std::move(fn));
  }
  TimerId schedule_in(Duration d, std::function<void()> fn) {
    return schedule_at(now_ + d, std::move(fn));
  }
  bool cancel(TimerId id) { return timers_.cancel(id); }
  std::optional<Time> next_due() const { return timers_.next_due(); }

  void advance(Duration d) { advance_to(now_ + d); }
  void advance_to(Time target);
  // Moves time to `t` (never backwards) without firing anything.
  void set(Time t) {
    if (t > now_) now_ = t;
  }

 private:
  Time now_;
  TimerQueue timers_;
};

}  // namespace gf
