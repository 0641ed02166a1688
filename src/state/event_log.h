// Append-only logs (user events, the audit log), cheap to copy: a copy costs two shared pointers
// and two sizes, whatever the history's length, so publishing a read view after each batch never
// copies events (docs/performance.md "Fleet-scale simulation"). T has a `Seq seq` member, in
// append order.
//
// Items live in fixed chunks of kChunkSize slots. Full chunks are immutable and shared; the list
// of full chunks is itself shared and replaced (not changed) when a chunk fills. The open chunk is
// shared too: each copy sees only its own first `tail_size_` slots, and a slot is written once,
// by the copy that claims it (an atomic count of claimed slots), before any copy that sees it
// exists. A copy that appends after another copy has claimed its next slot copies the open chunk
// first, so copies never see each other's appends.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "state/user_event.h"

namespace gf {

template <typename T>
class AppendLog {
 public:
  static constexpr size_t kChunkSize = 256;

  AppendLog() = default;
  AppendLog(const AppendLog&) = default;
  AppendLog& operator=(const AppendLog&) = default;
  // A moved-from log is empty.
  AppendLog(AppendLog&& other) noexcept
      : full_(std::move(other.full_)),
        tail_(std::move(other.tail_)),
        tail_size_(std::exchange(other.tail_size_, 0)),
        dropped_through_(std::exchange(other.dropped_through_, 0)) {}
  AppendLog& operator=(AppendLog&& other) noexcept {
    full_ = std::move(other.full_);
    tail_ = std::move(other.tail_);
    tail_size_ = std::exchange(other.tail_size_, 0);
    dropped_through_ = std::exchange(other.dropped_through_, 0);
    return *this;
  }

  void append(T item) {
    if (!tail_) {
      tail_ = std::make_shared<Chunk>();
      tail_size_ = 0;
    }
    size_t expected = tail_size_;
    if (!tail_->claimed.compare_exchange_strong(expected, tail_size_ + 1,
                                                std::memory_order_acq_rel)) {
      // Another copy of this log appended to the shared open chunk: continue on a private copy.
      auto own = std::make_shared<Chunk>();
      for (size_t i = 0; i < tail_size_; ++i) own->items[i] = tail_->items[i];
      own->claimed.store(tail_size_ + 1, std::memory_order_relaxed);
      tail_ = std::move(own);
    }
    tail_->items[tail_size_].emplace(std::move(item));
    if (++tail_size_ == kChunkSize) {
      auto chunks = full_ ? std::make_shared<Chunks>(*full_) : std::make_shared<Chunks>();
      chunks->push_back(std::move(tail_));
      full_ = std::move(chunks);
      tail_.reset();
      tail_size_ = 0;
    }
  }
  size_t size() const { return full_count() * kChunkSize + tail_size_; }
  // Forgets the oldest full chunk (bounded logs keep their newest items); false when none.
  bool drop_oldest_chunk() {
    if (full_count() == 0) return false;
    dropped_through_ = (*full_)[0]->items[kChunkSize - 1]->seq;
    full_ = std::make_shared<Chunks>(full_->begin() + 1, full_->end());
    return true;
  }
  // The seq of the newest item dropped (0: none): a reader resuming after an older seq has missed
  // items (a watch answers 410 Expired, docs/api.md).
  Seq dropped_through() const { return dropped_through_; }
  void set_dropped_through(Seq seq) { dropped_through_ = seq; }
  // The newest item of the oldest full chunk (what drop_oldest_chunk would drop last); null when
  // no chunk is full.
  const T* oldest_chunk_newest() const {
    if (full_count() == 0) return nullptr;
    return &*(*full_)[0]->items[kChunkSize - 1];
  }
  const T& at(size_t index) const {
    const size_t chunk = index / kChunkSize;
    if (chunk < full_count()) return *(*full_)[chunk]->items[index % kChunkSize];
    return *tail_->items[index - full_count() * kChunkSize];
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
  struct Chunk {
    std::array<std::optional<T>, kChunkSize> items;
    std::atomic<size_t> claimed{0};  // slots some copy has written or is writing
  };
  using Chunks = std::vector<std::shared_ptr<const Chunk>>;

  size_t full_count() const { return full_ ? full_->size() : 0; }

  std::shared_ptr<const Chunks> full_;  // null while no chunk is full
  std::shared_ptr<Chunk> tail_;         // the open chunk, shared with copies; null when none
  size_t tail_size_ = 0;                // slots of tail_ this copy holds
  Seq dropped_through_ = 0;
};

using EventLog = AppendLog<UserEvent>;

}  // namespace gf
