// Append-only log of user events, cheap to copy: full chunks are immutable and shared between
// copies, so publishing a read view after each batch copies O(chunks) pointers plus one partial
// chunk, never the whole history.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "state/user_event.h"

namespace gf {

class EventLog {
 public:
  static constexpr size_t kChunkSize = 256;

  EventLog() = default;
  EventLog(const EventLog& other);
  EventLog& operator=(const EventLog& other);
  EventLog(EventLog&&) noexcept = default;
  EventLog& operator=(EventLog&&) noexcept = default;

  void append(UserEvent event);
  size_t size() const { return full_.size() * kChunkSize + (tail_ ? tail_->size() : 0); }
  const UserEvent& at(size_t index) const;
  // Visits events newest first; stops when fn returns false.
  void for_each_newest_first(const std::function<bool(size_t index, const UserEvent&)>& fn) const;
  // The index of the first event with seq > after (binary search; events are in seq order).
  size_t lower_bound_seq(Seq after) const;

 private:
  using Chunk = std::vector<UserEvent>;
  std::vector<std::shared_ptr<const Chunk>> full_;
  std::unique_ptr<Chunk> tail_;
};

}  // namespace gf
