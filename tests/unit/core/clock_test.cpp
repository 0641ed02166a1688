#include "core/clock.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gf {
namespace {

TEST(VirtualClock, StartsAtTheSimulationEpochOrTheGivenTime) {
  EXPECT_EQ(VirtualClock().now(), kSimEpoch);
  EXPECT_EQ(VirtualClock(kSimEpoch + hours(1)).now(), kSimEpoch + hours(1));
}

TEST(VirtualClock, TimersFireInDueTimeOrderNotSchedulingOrder) {
  VirtualClock clock;
  std::vector<std::string> fired;
  clock.schedule_in(seconds(30), [&] { fired.push_back("30s"); });
  clock.schedule_in(seconds(10), [&] { fired.push_back("10s"); });
  clock.schedule_in(seconds(20), [&] { fired.push_back("20s"); });
  clock.advance(minutes(1));
  EXPECT_EQ(fired, (std::vector<std::string>{"10s", "20s", "30s"}));
}

TEST(VirtualClock, SameTimeTimersFireInSchedulingOrder) {
  VirtualClock clock;
  std::vector<int> fired;
  for (int i = 0; i < 10; ++i) clock.schedule_in(seconds(5), [&fired, i] { fired.push_back(i); });
  clock.advance(seconds(5));
  EXPECT_EQ(fired, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(VirtualClock, OnlyTimersDueWithinTheWindowFire) {
  VirtualClock clock;
  int fired = 0;
  clock.schedule_in(seconds(10), [&] { ++fired; });
  clock.schedule_in(seconds(11), [&] { ++fired; });
  clock.advance(seconds(9));
  EXPECT_EQ(fired, 0);
  clock.advance(seconds(1));
  EXPECT_EQ(fired, 1) << "a timer due exactly at the target fires";
  EXPECT_EQ(clock.next_due(), kSimEpoch + seconds(11));
  clock.advance(seconds(1));
  EXPECT_EQ(fired, 2);
  EXPECT_EQ(clock.next_due(), std::nullopt);
}

TEST(VirtualClock, NowIsTheDueTimeWhileATimerRuns) {
  VirtualClock clock;
  std::vector<Time> seen;
  clock.schedule_in(seconds(7), [&] { seen.push_back(clock.now()); });
  clock.schedule_in(minutes(2), [&] { seen.push_back(clock.now()); });
  clock.advance(hours(1));
  EXPECT_EQ(seen, (std::vector<Time>{kSimEpoch + seconds(7), kSimEpoch + minutes(2)}));
  EXPECT_EQ(clock.now(), kSimEpoch + hours(1));
}

TEST(VirtualClock, TimerScheduledWhileFiringInsideTheWindowFiresInTheSameAdvance) {
  VirtualClock clock;
  std::vector<std::string> fired;
  clock.schedule_in(seconds(10), [&] {
    fired.push_back("first");
    clock.schedule_in(seconds(5),
                      [&] { fired.push_back("chained@" + format_iso8601(clock.now())); });
    clock.schedule_in(Duration(0), [&] { fired.push_back("now"); });
    clock.schedule_in(minutes(5), [&] { fired.push_back("outside"); });
  });
  clock.schedule_in(seconds(12), [&] { fired.push_back("12s"); });
  clock.advance(minutes(1));
  EXPECT_EQ(fired,
            (std::vector<std::string>{"first", "now", "12s", "chained@2026-01-01T00:00:15Z"}));
  clock.advance(minutes(5));
  EXPECT_EQ(fired.back(), "outside");
}

TEST(VirtualClock, SelfReschedulingTimerFiresOncePerPeriod) {
  VirtualClock clock;
  int ticks = 0;
  std::function<void()> tick = [&] {
    ++ticks;
    clock.schedule_in(seconds(10), tick);
  };
  clock.schedule_in(seconds(10), tick);
  clock.advance(minutes(1));
  EXPECT_EQ(ticks, 6);
  EXPECT_EQ(clock.next_due(), kSimEpoch + seconds(70));
}

TEST(VirtualClock, CancelledTimerNeverFires) {
  VirtualClock clock;
  int fired = 0;
  TimerId a = clock.schedule_in(seconds(1), [&] { fired += 1; });
  clock.schedule_in(seconds(2), [&] { fired += 10; });
  EXPECT_TRUE(clock.cancel(a));
  EXPECT_FALSE(clock.cancel(a)) << "second cancel finds nothing";
  EXPECT_FALSE(clock.cancel(TimerId{12345}));
  clock.advance(seconds(5));
  EXPECT_EQ(fired, 10);
}

TEST(VirtualClock, TimerCanCancelALaterTimerDueAtTheSameTime) {
  VirtualClock clock;
  std::vector<int> fired;
  TimerId second = 0;
  clock.schedule_in(seconds(1), [&] {
    fired.push_back(1);
    EXPECT_TRUE(clock.cancel(second));
  });
  second = clock.schedule_in(seconds(1), [&] { fired.push_back(2); });
  clock.advance(seconds(1));
  EXPECT_EQ(fired, (std::vector<int>{1}));
}

TEST(VirtualClock, FiredTimerCannotBeCancelled) {
  VirtualClock clock;
  TimerId id = clock.schedule_in(seconds(1), [] {});
  clock.advance(seconds(1));
  EXPECT_FALSE(clock.cancel(id));
}

TEST(VirtualClock, AdvanceToNeverGoesBackwards) {
  VirtualClock clock;
  clock.advance(hours(1));
  clock.advance_to(kSimEpoch);
  EXPECT_EQ(clock.now(), kSimEpoch + hours(1));
  clock.set(kSimEpoch + minutes(5));
  EXPECT_EQ(clock.now(), kSimEpoch + hours(1));
  clock.set(kSimEpoch + hours(2));
  EXPECT_EQ(clock.now(), kSimEpoch + hours(2));
}

TEST(VirtualClock, TimerScheduledInThePastFiresAtTheCurrentTime) {
  VirtualClock clock(kSimEpoch + hours(1));
  std::vector<Time> seen;
  clock.schedule_at(kSimEpoch, [&] { seen.push_back(clock.now()); });
  clock.advance(Duration(0));
  EXPECT_EQ(seen, (std::vector<Time>{kSimEpoch + hours(1)}));
}

TEST(VirtualClock, SetMovesTimeWithoutFiringTimers) {
  VirtualClock clock;
  int fired = 0;
  clock.schedule_in(seconds(1), [&] { ++fired; });
  clock.set(kSimEpoch + minutes(1));
  EXPECT_EQ(fired, 0);
  clock.advance(Duration(0));
  EXPECT_EQ(fired, 1);
}

TEST(TimerQueue, PopDueReturnsOnlyTimersDueAtOrBeforeNow) {
  TimerQueue q;
  int fired = 0;
  q.schedule(kSimEpoch + seconds(2), [&] { fired = 2; });
  q.schedule(kSimEpoch + seconds(1), [&] { fired = 1; });
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.next_due(), kSimEpoch + seconds(1));
  EXPECT_FALSE(q.pop_due(kSimEpoch).has_value());
  auto fn = q.pop_due(kSimEpoch + seconds(5));
  ASSERT_TRUE(fn.has_value());
  (*fn)();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(q.size(), 1u);
}

TEST(RealClock, IsNearTheSystemClock) {
  RealClock clock;
  Time t = clock.now();
  EXPECT_GT(t, Time(std::chrono::sys_days(std::chrono::year(2020) / 1 / 1)));
  const int64_t first = monotonic_nanos();
  const int64_t second = monotonic_nanos();
  EXPECT_LE(first, second) << "monotonic time never decreases";
}

}  // namespace
}  // namespace gf
