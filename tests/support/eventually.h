// Waiting on real processes and daemons in integration tests: they run in real time, so a test
// polls until a condition holds, for a bounded time (a broken build fails, it does not hang).
// Unit and scenario tests never use this: they run on virtual time.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace gf::testing {

// Polls `pred` every 50 ms for at most `limit`; whether it held.
inline bool eventually(const std::function<bool()>& pred,
                       std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

}  // namespace gf::testing
