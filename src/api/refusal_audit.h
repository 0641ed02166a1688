// Refused calls are audited by aggregate (docs/security.md "What is audited"): per source (the
// caller's identity, or its address when no identity vouches for it) and reason (status and
// error type), per minute of the server's clock. The first refusal of a source and reason in a
// minute is recorded at once, as itself; the others of that minute are counted and recorded as
// one record with their count when the minute ends. A flood of refused calls so costs the journal
// at most two records per source and reason a minute, however fast it comes.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/json.h"
#include "core/time.h"

namespace gf {

class RefusalAudit {
 public:
  // Sources counted apart in one minute; the refusals of any more are counted under "*".
  static constexpr size_t kMaxSources = 4096;

  enum class Verdict {
    kRecordNow,   // the first of its minute: journal `payload` now
    kCounted,     // counted; the minute's end is already due to be recorded
    kCountedDue,  // counted, the first so: record the minute's count at `window_end(now)`
  };
  // One refused call whose audit payload is `payload`.
  Verdict refused(const std::string& source, int code, const std::string& error,
                  const Json& payload, Time now);
  // The count records of every minute that ended by `now`, taken out (the payload of the first
  // call counted, with Count and Since).
  std::vector<Json> take_ended(Time now);
  static Time window_end(Time now);

 private:
  struct Count {
    Json payload;  // the first call counted
    int64_t count = 0;
    Time since{};
  };
  using Key = std::tuple<int64_t, std::string, int, std::string>;  // minute, source, code, error
  std::mutex mu_;
  std::map<Key, Count> counts_;
  std::map<int64_t, size_t> sources_;  // minute → keys it holds
  std::set<int64_t> scheduled_;        // minutes whose end is due to be recorded
};

}  // namespace gf
