// FNV-1a, 64 bits: the one non-cryptographic hash of the project (state hashes, decision-log
// digests, derived names and ids). Fast, stable across platforms and releases, and not for
// anything an attacker chooses to collide (idempotency fingerprints use SHA-256).
#pragma once

#include <cstdint>
#include <string_view>

namespace gf {

inline constexpr uint64_t kFnv1aOffsetBasis = 14695981039346656037ull;
inline constexpr uint64_t kFnv1aPrime = 1099511628211ull;

// FNV-1a 64 of the bytes of `s`, continuing from `h`.
constexpr uint64_t fnv1a(std::string_view s, uint64_t h = kFnv1aOffsetBasis) {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnv1aPrime;
  }
  return h;
}

// FNV-1a 64 of the eight bytes of `value`, least significant first, continuing from `h`.
constexpr uint64_t fnv1a_u64(uint64_t value, uint64_t h = kFnv1aOffsetBasis) {
  for (int i = 0; i < 8; ++i) {
    h ^= (value >> (8 * i)) & 0xff;
    h *= kFnv1aPrime;
  }
  return h;
}

// A 64-bit finalizer (MurmurHash3's fmix64): spreads a counter or seed over every bit.
constexpr uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace gf
