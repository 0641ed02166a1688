#include "state/event_log.h"

namespace gf {

EventLog::EventLog(const EventLog& other)
    : full_(other.full_), tail_(other.tail_ ? std::make_unique<Chunk>(*other.tail_) : nullptr) {}

EventLog& EventLog::operator=(const EventLog& other) {
  if (this != &other) {
    full_ = other.full_;
    tail_ = other.tail_ ? std::make_unique<Chunk>(*other.tail_) : nullptr;
  }
  return *this;
}

void EventLog::append(UserEvent event) {
  if (!tail_) {
    tail_ = std::make_unique<Chunk>();
    tail_->reserve(kChunkSize);
  }
  tail_->push_back(std::move(event));
  if (tail_->size() == kChunkSize) {
    full_.push_back(std::shared_ptr<const Chunk>(std::move(tail_)));
    tail_.reset();
  }
}

const UserEvent& EventLog::at(size_t index) const {
  size_t chunk = index / kChunkSize;
  if (chunk < full_.size()) return (*full_[chunk])[index % kChunkSize];
  return (*tail_)[index - full_.size() * kChunkSize];
}

void EventLog::for_each_newest_first(
    const std::function<bool(size_t, const UserEvent&)>& fn) const {
  for (size_t i = size(); i > 0; --i) {
    if (!fn(i - 1, at(i - 1))) return;
  }
}

size_t EventLog::lower_bound_seq(Seq after) const {
  size_t lo = 0, hi = size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (at(mid).seq <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace gf
