// The events of the journal crash test, shared by the writer (journal_crash_child.cpp) and the
// checker (tests/unit/journal/journal_crash_test.cpp): every field of an event is a pure function
// of (batch, index, size), so the checker can recompute each journaled event byte for byte.
#pragma once

#include <cstdio>
#include <string>

#include "core/time.h"
#include "journal/journal.h"

namespace gf::crash_test {

// batch: the seq of the batch's first event; index: 0..size-1; size: 1..50.
inline NewEvent crash_event(Seq batch, int index, int size) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  const uint64_t mix =
      static_cast<uint64_t>(batch) * 7919u + static_cast<uint64_t>(index) * 104729u;
  std::string pad(mix % 120, ' ');
  uint64_t x = mix | 1;
  for (char& c : pad) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = kAlphabet[x % (sizeof(kAlphabet) - 1)];
  }
  NewEvent event;
  event.type = "crash.batch";
  event.payload = "{\"b\":" + std::to_string(batch) + ",\"i\":" + std::to_string(index) +
                  ",\"n\":" + std::to_string(size) + ",\"pad\":\"" + pad + "\"}";
  if (index % 4 == 1) {
    event.idempotency_key = "crash-" + std::to_string(batch) + "-" + std::to_string(index);
  }
  event.time = from_micros(batch * 1000 + index);
  return event;
}

// Reads (batch, index, size) back from a crash_event payload; false if it is not one.
inline bool parse_crash_payload(const std::string& payload, Seq& batch, int& index, int& size) {
  long long b = 0;
  if (std::sscanf(payload.c_str(), "{\"b\":%lld,\"i\":%d,\"n\":%d", &b, &index, &size) != 3) {
    return false;
  }
  batch = b;
  return true;
}

}  // namespace gf::crash_test
