// A growable bitset over small dense indices, stored as 64-bit words, that visits its set bits
// in ascending order. Used where an ordered set of indices would cost a tree node per member:
// the placement index's node buckets and the quota engine's borrowing queues.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gf {

class BitWords {
 public:
  BitWords() = default;
  explicit BitWords(size_t bits) : words_((bits + 63) / 64, 0) {}

  // Sets bit i, growing the words as needed.
  void set(size_t i) {
    if (i / 64 >= words_.size()) words_.resize(i / 64 + 1, 0);
    words_[i / 64] |= uint64_t{1} << (i % 64);
  }
  void clear(size_t i) {
    if (i / 64 < words_.size()) words_[i / 64] &= ~(uint64_t{1} << (i % 64));
  }
  void assign(size_t i, bool on) { on ? set(i) : clear(i); }
  bool test(size_t i) const {
    return i / 64 < words_.size() && (words_[i / 64] >> (i % 64) & 1) != 0;
  }

  // Calls f(i) for each set bit in ascending order; f returns false to stop early. Returns
  // false when f stopped it.
  template <typename F>
  bool each(F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      for (uint64_t word = words_[w]; word != 0; word &= word - 1) {
        if (!f(w * 64 + static_cast<size_t>(std::countr_zero(word)))) return false;
      }
    }
    return true;
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace gf
