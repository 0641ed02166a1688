#include "core/random.h"

#include <random>

namespace gf {

namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t entropy_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

Random::Random(uint64_t seed) : seed_(seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

uint64_t Random::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Random::uniform(uint64_t bound) {
  if (bound <= 1) return 0;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t r;
  do {
    r = next_u64();
  } while (r >= limit);
  return r % bound;
}

int64_t Random::uniform_range(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  // In uint64 arithmetic (modulo 2^64) so that hi - lo and lo + offset cannot overflow; the
  // span hi - lo + 1 wraps to 0 only for the full int64 range, where every u64 is a valid offset.
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  const uint64_t offset = span == 0 ? next_u64() : uniform(span);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + offset);
}

double Random::uniform_unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

}  // namespace gf
