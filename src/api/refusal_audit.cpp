#include "api/refusal_audit.h"

namespace gf {

namespace {

int64_t minute_of(Time t) { return to_micros(t) / (60 * int64_t{1'000'000}); }

}  // namespace

Time RefusalAudit::window_end(Time now) { return from_micros((minute_of(now) + 1) * 60'000'000); }

RefusalAudit::Verdict RefusalAudit::refused(const std::string& source, int code,
                                            const std::string& error, const Json& payload,
                                            Time now) {
  const int64_t minute = minute_of(now);
  std::lock_guard lock(mu_);
  Key key{minute, source, code, error};
  auto it = counts_.find(key);
  if (it == counts_.end()) {
    if (sources_[minute] >= kMaxSources) {
      key = Key{minute, "*", code, error};
      it = counts_.find(key);
    }
    if (it == counts_.end()) {
      ++sources_[minute];
      it = counts_.emplace(key, Count{}).first;
      // The first refusal of its source and reason this minute is recorded as itself (an
      // overflow key has no first: every refusal under "*" is counted).
      if (std::get<1>(key) != "*") return Verdict::kRecordNow;
    }
  }
  Count& c = it->second;
  if (++c.count == 1) {
    c.payload = payload;
    c.since = now;
    if (std::get<1>(key) == "*") c.payload["Source"] = "*";
  }
  // The minute's end is scheduled once, by its first count of any key.
  const bool first_count_of_minute =
      sources_[minute] > 0 && c.count == 1 && !scheduled_.contains(minute);
  if (first_count_of_minute) scheduled_.insert(minute);
  return first_count_of_minute ? Verdict::kCountedDue : Verdict::kCounted;
}

std::vector<Json> RefusalAudit::take_ended(Time now) {
  const int64_t current = minute_of(now);
  std::vector<Json> out;
  std::lock_guard lock(mu_);
  for (auto it = counts_.begin(); it != counts_.end() && std::get<0>(it->first) < current;) {
    if (it->second.count > 0) {
      Json p = std::move(it->second.payload);
      p["Count"] = it->second.count;
      p["Since"] = format_iso8601(it->second.since);
      out.push_back(std::move(p));
    }
    it = counts_.erase(it);
  }
  sources_.erase(sources_.begin(), sources_.lower_bound(current));
  scheduled_.erase(scheduled_.begin(), scheduled_.lower_bound(current));
  return out;
}

}  // namespace gf
