// Append-only logs (user events, the audit log), cheap to copy: full chunks are immutable and
// shared between copies, so publishing a read view after each batch copies O(chunks) pointers
// plus one partial chunk, never the whole history. T has a `Seq seq` member, in append order.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "state/user_event.h"

namespace gf {

template <typename T>
class AppendLog {
 public:
  static constexpr size_t kChunkSize = 256;

  AppendLog() = default;
  AppendLog(const AppendLog& other)
      : full_(other.full_), tail_(other.tail_ ? std::make_unique<Chunk>(*other.tail_) : nullptr) {}
  AppendLog& operator=(const AppendLog& other) {
    if (this != &other) {
      full_ = other.full_;
      tail_ = other.tail_ ? std::make_unique<Chunk>(*other.tail_) : nullptr;
    }
    return *this;
  }
  AppendLog(AppendLog&&) noexcept = default;
  AppendLog& operator=(AppendLog&&) noexcept = default;

  void append(T item) {
    if (!tail_) {
      tail_ = std::make_unique<Chunk>();
      tail_->reserve(kChunkSize);
    }
    tail_->push_back(std::move(item));
    if (tail_->size() == kChunkSize) {
      full_.push_back(std::shared_ptr<const Chunk>(std::move(tail_)));
      tail_.reset();
    }
  }
  size_t size() const { return full_.size() * kChunkSize + (tail_ ? tail_->size() : 0); }
  // Forgets the oldest full chunk (bounded logs keep their newest items); false when none.
  bool drop_oldest_chunk() {
    if (full_.empty()) return false;
    full_.erase(full_.begin());
    return true;
  }
  const T& at(size_t index) const {
    const size_t chunk = index / kChunkSize;
    if (chunk < full_.size()) return (*full_[chunk])[index % kChunkSize];
    return (*tail_)[index - full_.size() * kChunkSize];
  }
  // Visits items newest first; stops when fn returns false.
  void for_each_newest_first(const std::function<bool(size_t index, const T&)>& fn) const {
    for (size_t i = size(); i > 0; --i) {
      if (!fn(i - 1, at(i - 1))) return;
    }
  }
  // The index of the first item with seq > after (binary search; items are in seq order).
  size_t lower_bound_seq(Seq after) const {
    size_t lo = 0, hi = size();
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (at(mid).seq <= after) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

 private:
  using Chunk = std::vector<T>;
  std::vector<std::shared_ptr<const Chunk>> full_;
  std::unique_ptr<Chunk> tail_;
};

using EventLog = AppendLog<UserEvent>;

}  // namespace gf
